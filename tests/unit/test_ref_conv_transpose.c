/*
 * test_ref_conv_transpose.c - reference ConvTranspose and its shape inference.
 * Random cases (1-D to 3-D, groups, strides, dilations, asymmetric pads,
 * output_padding, output_shape, auto_pad, batch, bias) against a naive gather
 * formula written here (each output sums the taps whose input index
 * (o + pad - k * dilation) / stride is whole and in range; pads and sizes worked
 * out by the test, not by the library); hand-computed small cases; attribute
 * errors; symbolic shapes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dense_test_util.h"

/* A case with up to 3 spatial dims; unused dims have size 1. */
typedef struct cgeom {
    int nsp;
    int64_t n, c, m, group; /* m: output channels (W's dim 1 is m / group) */
    int64_t in[3], k[3], s[3], d[3], op[3];
    int64_t pads[6];        /* begins then ends (explicit pads) */
    int64_t out_shape[3];   /* > 0: pass output_shape */
    const char *auto_pad;   /* NULL: none */
} cgeom;

static int64_t gv(const int64_t *v, const cgeom *g, int i, int64_t dflt) { return i < g->nsp ? v[i] : dflt; }
static int64_t full(const cgeom *g, int i) {
    return gv(g->s, g, i, 1) * (gv(g->in, g, i, 1) - 1) + gv(g->op, g, i, 0) + (gv(g->k, g, i, 1) - 1) * gv(g->d, g, i, 1) + 1;
}

/* The test's own reading of the ONNX rules: output size and begin padding along dim i. */
static void expect_dim(const cgeom *g, int i, int64_t *out, int64_t *pad_begin) {
    if (i >= g->nsp) {
        *out = 1;
        *pad_begin = 0;
        return;
    }
    bool upper = g->auto_pad && strcmp(g->auto_pad, "SAME_UPPER") == 0;
    bool same = upper || (g->auto_pad && strcmp(g->auto_pad, "SAME_LOWER") == 0);
    bool valid = g->auto_pad && strcmp(g->auto_pad, "VALID") == 0;
    if (g->out_shape[0] > 0 || same) {
        *out = g->out_shape[0] > 0 ? g->out_shape[i] : g->in[i] * g->s[i];
        int64_t total = full(g, i) - *out;
        *pad_begin = total <= 0 ? 0 : upper ? total / 2 : total - total / 2;
    } else if (valid) {
        *out = full(g, i);
        *pad_begin = 0;
    } else {
        *out = full(g, i) - g->pads[i] - g->pads[g->nsp + i];
        *pad_begin = g->pads[i];
    }
}

/* Gathers every output from the inputs that reach it. */
static double *naive_convt(const cgeom *g, const tc__tensor *x, const tc__tensor *w, const tc__tensor *b, int64_t *numel,
                           int64_t *osz) {
    int64_t in[3], k[3], s[3], d[3], pb[3];
    for (int i = 0; i < 3; i++) {
        in[i] = gv(g->in, g, i, 1);
        k[i] = gv(g->k, g, i, 1);
        s[i] = gv(g->s, g, i, 1);
        d[i] = gv(g->d, g, i, 1);
        expect_dim(g, i, &osz[i], &pb[i]);
    }
    const int64_t cg = g->c / g->group, mg = g->m / g->group;
    *numel = g->n * g->m * osz[0] * osz[1] * osz[2];
    double *y = calloc((size_t)*numel, sizeof(double));
    int64_t at = 0, o[3];
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t m = 0; m < g->m; m++)
            for (o[0] = 0; o[0] < osz[0]; o[0]++)
                for (o[1] = 0; o[1] < osz[1]; o[1]++)
                    for (o[2] = 0; o[2] < osz[2]; o[2]++) {
                        double sum = b ? dtu_get(b, m) : 0.0;
                        const int64_t grp = m / mg, ml = m % mg;
                        for (int64_t c = grp * cg; c < (grp + 1) * cg; c++)
                            for (int64_t k0 = 0; k0 < k[0]; k0++)
                                for (int64_t k1 = 0; k1 < k[1]; k1++)
                                    for (int64_t k2 = 0; k2 < k[2]; k2++) {
                                        int64_t kk[3] = {k0, k1, k2}, ii[3];
                                        bool ok = true;
                                        for (int a = 0; a < 3 && ok; a++) {
                                            int64_t num = o[a] + pb[a] - kk[a] * d[a];
                                            ok = num >= 0 && num % s[a] == 0 && num / s[a] < in[a];
                                            ii[a] = ok ? num / s[a] : 0;
                                        }
                                        if (!ok) continue;
                                        int64_t xi = (((n * g->c + c) * in[0] + ii[0]) * in[1] + ii[1]) * in[2] + ii[2];
                                        int64_t wi = (((c * mg + ml) * k[0] + k0) * k[1] + k1) * k[2] + k2;
                                        sum += dtu_get(x, xi) * dtu_get(w, wi);
                                    }
                        y[at++] = sum;
                    }
    return y;
}

/* Runs ConvTranspose on random data with the attributes of g and compares with naive_convt. */
static void check_convt(uint64_t seed, const cgeom *g, bool bias, tc_dtype dt, double tol) {
    dtu_rng r = {seed};
    int64_t xd[5] = {g->n, g->c}, wd[5] = {g->c, g->m / g->group}, bd[1] = {g->m};
    for (int i = 0; i < g->nsp; i++) {
        xd[2 + i] = g->in[i];
        wd[2 + i] = g->k[i];
    }
    tc__tensor x = dtu_random(&r, dt, g->nsp + 2, xd), w = dtu_random(&r, dt, g->nsp + 2, wd);
    tc__tensor b = dtu_random(&r, dt, 1, bd);
    tc__attr at[8];
    int na = 0;
    at[na++] = dtu_attr_ints("strides", g->s, (size_t)g->nsp);
    at[na++] = dtu_attr_ints("dilations", g->d, (size_t)g->nsp);
    at[na++] = dtu_attr_ints("output_padding", g->op, (size_t)g->nsp);
    at[na++] = dtu_attr_int("group", g->group);
    if (g->auto_pad) at[na++] = dtu_attr_string("auto_pad", g->auto_pad);
    else at[na++] = dtu_attr_ints("pads", g->pads, (size_t)(2 * g->nsp));
    if (g->out_shape[0] > 0) at[na++] = dtu_attr_ints("output_shape", g->out_shape, (size_t)g->nsp);
    if (seed % 2) at[na++] = dtu_attr_ints("kernel_shape", g->k, (size_t)g->nsp);
    const tc__tensor *in[3] = {&x, &w, &b};
    tc__tensor y;
    dtu_run_ok(DTU_OP(ConvTranspose), 22, at, na, bias ? 3 : 2, in, 1, &y);
    int64_t numel, osz[3];
    double *want = naive_convt(g, &x, &w, bias ? &b : NULL, &numel, osz);
    assert_int_equal(tc__tensor_numel(&y), numel);
    assert_int_equal(y.rank, g->nsp + 2);
    assert_int_equal(y.dims[0], g->n);
    assert_int_equal(y.dims[1], g->m);
    for (int i = 0; i < g->nsp; i++) assert_int_equal(y.dims[2 + i], osz[i]);
    double mx = 0;
    for (int64_t i = 0; i < numel; i++) mx = fmax(mx, fabs(want[i]));
    assert_true(mx > 0.1); /* the data are not all zero */
    dtu_assert_values(&y, want, tol, "ConvTranspose");
    free(want);
    tc__tensor_free(&x);
    tc__tensor_free(&w);
    tc__tensor_free(&b);
    tc__tensor_free(&y);
}

static void test_convt_2d(void **state) {
    (void)state;
    cgeom g = {.nsp = 2, .n = 2, .c = 3, .m = 5, .group = 1, .in = {4, 5}, .k = {3, 3}, .s = {1, 1}, .d = {1, 1}};
    check_convt(1, &g, true, TC_DTYPE_FLOAT32, 1e-5);
    check_convt(2, &g, false, TC_DTYPE_FLOAT32, 1e-5);
    cgeom g2 = {.nsp = 2, .n = 1, .c = 4, .m = 3, .group = 1, .in = {5, 3}, .k = {4, 2}, .s = {2, 3}, .d = {1, 1}};
    check_convt(3, &g2, true, TC_DTYPE_FLOAT32, 1e-5);
    /* the DBNet shape: stride 2, kernel 2, no padding */
    cgeom g3 = {.nsp = 2, .n = 1, .c = 6, .m = 6, .group = 1, .in = {7, 9}, .k = {2, 2}, .s = {2, 2}, .d = {1, 1}};
    check_convt(4, &g3, true, TC_DTYPE_FLOAT32, 1e-5);
}

static void test_convt_groups_dilations_padding(void **state) {
    (void)state;
    /* group 2 with 3 output channels per group, asymmetric pads, output_padding, dilation */
    cgeom g = {.nsp = 2, .n = 2, .c = 4, .m = 6, .group = 2, .in = {5, 6}, .k = {3, 2}, .s = {2, 3}, .d = {2, 1},
               .op = {1, 2}, .pads = {1, 0, 2, 1}};
    check_convt(5, &g, true, TC_DTYPE_FLOAT32, 1e-5);
    check_convt(6, &g, false, TC_DTYPE_FLOAT32, 1e-5);
    /* depthwise-like: group = channels, one output channel each; dilation 3 */
    cgeom dw = {.nsp = 2, .n = 1, .c = 5, .m = 5, .group = 5, .in = {4, 4}, .k = {3, 3}, .s = {1, 2}, .d = {3, 1},
                .pads = {2, 1, 0, 3}};
    check_convt(7, &dw, true, TC_DTYPE_FLOAT32, 1e-5);
    /* group 3, two input and two output channels per group, output_padding below the dilation (stride 1) */
    cgeom g3 = {.nsp = 2, .n = 1, .c = 6, .m = 6, .group = 3, .in = {3, 7}, .k = {2, 3}, .s = {1, 2}, .d = {2, 2},
                .op = {1, 1}, .pads = {0, 2, 1, 0}};
    check_convt(8, &g3, true, TC_DTYPE_FLOAT32, 1e-5);
    /* pads larger than the kernel cut into the image */
    cgeom p = {.nsp = 2, .n = 1, .c = 2, .m = 3, .group = 1, .in = {6, 6}, .k = {2, 3}, .s = {3, 1}, .d = {1, 1},
               .pads = {4, 3, 5, 2}};
    check_convt(9, &p, true, TC_DTYPE_FLOAT32, 1e-5);
}

static void test_convt_1d_3d_and_float64(void **state) {
    (void)state;
    cgeom g1 = {.nsp = 1, .n = 3, .c = 2, .m = 4, .group = 2, .in = {7}, .k = {3}, .s = {3}, .d = {2}, .op = {2},
                .pads = {1, 2}};
    check_convt(10, &g1, true, TC_DTYPE_FLOAT32, 1e-5);
    cgeom g3 = {.nsp = 3, .n = 1, .c = 2, .m = 3, .group = 1, .in = {3, 4, 2}, .k = {2, 3, 2}, .s = {2, 1, 3},
                .d = {1, 2, 1}, .op = {1, 0, 2}, .pads = {0, 1, 1, 1, 0, 2}};
    check_convt(11, &g3, true, TC_DTYPE_FLOAT32, 1e-5);
    cgeom g2 = {.nsp = 2, .n = 1, .c = 3, .m = 2, .group = 1, .in = {4, 3}, .k = {3, 3}, .s = {2, 2}, .d = {1, 1},
                .op = {1, 0}, .pads = {1, 1, 0, 1}};
    check_convt(12, &g2, true, TC_DTYPE_FLOAT64, 1e-12);
}

static void test_convt_output_shape_and_auto_pad(void **state) {
    (void)state;
    /* output_shape below the full size (odd total padding), equal to it, above it (extends at the end) */
    cgeom g = {.nsp = 2, .n = 1, .c = 2, .m = 3, .group = 1, .in = {4, 5}, .k = {3, 4}, .s = {2, 3}, .d = {1, 1},
               .out_shape = {8, 15}};
    check_convt(13, &g, true, TC_DTYPE_FLOAT32, 1e-5); /* full 9 x 16: total 1 each */
    g.out_shape[0] = 9;
    g.out_shape[1] = 18;
    check_convt(14, &g, true, TC_DTYPE_FLOAT32, 1e-5);
    g.out_shape[0] = 6;
    g.out_shape[1] = 11;
    g.auto_pad = "SAME_UPPER"; /* with output_shape: the larger half of the padding at the end */
    check_convt(15, &g, true, TC_DTYPE_FLOAT32, 1e-5);
    g.auto_pad = "SAME_LOWER";
    check_convt(16, &g, true, TC_DTYPE_FLOAT32, 1e-5);
    /* SAME_* without output_shape: out = in * stride */
    cgeom s = {.nsp = 2, .n = 2, .c = 3, .m = 2, .group = 1, .in = {3, 4}, .k = {4, 3}, .s = {2, 3}, .d = {1, 2},
               .op = {1, 0}, .auto_pad = "SAME_UPPER"};
    check_convt(17, &s, true, TC_DTYPE_FLOAT32, 1e-5);
    s.auto_pad = "SAME_LOWER";
    check_convt(18, &s, true, TC_DTYPE_FLOAT32, 1e-5);
    s.auto_pad = "VALID";
    check_convt(19, &s, false, TC_DTYPE_FLOAT32, 1e-5);
}

/* Small cases worked out by hand. */
static void test_convt_hand_checked(void **state) {
    (void)state;
    /* 1-D: x = [1 2 3], w = [1 10], stride 2 -> [1 10 2 20 3 30]; pads 1 0 drop the first; output_padding 1 adds a 0 */
    int64_t xd[3] = {1, 1, 3}, wd[3] = {1, 1, 2}, s2[1] = {2};
    tc__tensor x = dtu_from_f64(TC_DTYPE_FLOAT32, 3, xd, (const double[]){1, 2, 3});
    tc__tensor w = dtu_from_f64(TC_DTYPE_FLOAT32, 3, wd, (const double[]){1, 10});
    tc__tensor b = dtu_from_f64(TC_DTYPE_FLOAT32, 1, (int64_t[]){1}, (const double[]){0.5});
    const tc__tensor *in[3] = {&x, &w, &b};
    tc__tensor y;
    tc__attr a1[1] = {dtu_attr_ints("strides", s2, 1)};
    dtu_run_ok(DTU_OP(ConvTranspose), 11, a1, 1, 2, in, 1, &y);
    dtu_assert_values(&y, (const double[]){1, 10, 2, 20, 3, 30}, 0, "1-D stride 2");
    tc__tensor_free(&y);
    int64_t p10[2] = {1, 0}, op1[1] = {1};
    tc__attr a2[3] = {dtu_attr_ints("strides", s2, 1), dtu_attr_ints("pads", p10, 2), dtu_attr_ints("output_padding", op1, 1)};
    dtu_run_ok(DTU_OP(ConvTranspose), 11, a2, 3, 3, in, 1, &y);
    dtu_assert_values(&y, (const double[]){10.5, 2.5, 20.5, 3.5, 30.5, 0.5}, 0, "1-D pads, output_padding, bias");
    tc__tensor_free(&y);
    /* dilation 2, stride 1: y[i + 2k] += x[i] w[k] -> [1, 2, 3+10, 20, 30] */
    int64_t d2[1] = {2};
    tc__attr a3[1] = {dtu_attr_ints("dilations", d2, 1)};
    dtu_run_ok(DTU_OP(ConvTranspose), 11, a3, 1, 2, in, 1, &y);
    dtu_assert_values(&y, (const double[]){1, 2, 13, 20, 30}, 0, "1-D dilation 2");
    tc__tensor_free(&y);
    tc__tensor_free(&x);
    tc__tensor_free(&w);
    tc__tensor_free(&b);
    /* The ONNX operator example: 3x3 input 0..8, a 1x2x3x3 weight of ones. */
    double xv[9], wv[18];
    for (int i = 0; i < 9; i++) xv[i] = i;
    for (int i = 0; i < 18; i++) wv[i] = 1;
    x = dtu_from_f64(TC_DTYPE_FLOAT32, 4, (int64_t[]){1, 1, 3, 3}, xv);
    w = dtu_from_f64(TC_DTYPE_FLOAT32, 4, (int64_t[]){1, 2, 3, 3}, wv);
    const tc__tensor *in2[2] = {&x, &w};
    dtu_run_ok(DTU_OP(ConvTranspose), 11, NULL, 0, 2, in2, 1, &y);
    const double plane[25] = {0, 1, 3, 3, 2, 3, 8, 15, 12, 7, 9, 21, 36, 27, 15, 9, 20, 33, 24, 13, 6, 13, 21, 15, 8};
    double want[50];
    for (int i = 0; i < 50; i++) want[i] = plane[i % 25];
    dtu_assert_shape(&y, 4, (int64_t[]){1, 2, 5, 5});
    dtu_assert_values(&y, want, 0, "ONNX example");
    tc__tensor_free(&y);
    tc__tensor_free(&x);
    tc__tensor_free(&w);
}

static void test_convt_errors(void **state) {
    (void)state;
    dtu_rng r = {20};
    tc__tensor x = dtu_random(&r, TC_DTYPE_FLOAT32, 4, (int64_t[]){1, 4, 5, 5});
    tc__tensor w = dtu_random(&r, TC_DTYPE_FLOAT32, 4, (int64_t[]){4, 3, 3, 3});
    tc__tensor w5 = dtu_random(&r, TC_DTYPE_FLOAT32, 4, (int64_t[]){5, 3, 3, 3});
    tc__tensor b2 = dtu_random(&r, TC_DTYPE_FLOAT32, 1, (int64_t[]){2});
    const tc__tensor *in[3] = {&x, &w, &b2}, *bad_w[2] = {&x, &w5};
    const dtu_op op = DTU_OP(ConvTranspose);
    dtu_run_fails(op, 13, NULL, 0, 2, bad_w, 1, TC_STATUS_INVALID_ARGUMENT, "channels");
    dtu_run_fails(op, 13, NULL, 0, 3, in, 1, TC_STATUS_INVALID_ARGUMENT, "bias");
    tc__attr g3 = dtu_attr_int("group", 3), g0 = dtu_attr_int("group", 0);
    dtu_run_fails(op, 13, &g3, 1, 2, in, 1, TC_STATUS_INVALID_ARGUMENT, "group");
    dtu_run_fails(op, 13, &g0, 1, 2, in, 1, TC_STATUS_INVALID_ARGUMENT, "group");
    tc__attr ap = dtu_attr_string("auto_pad", "SAME");
    dtu_run_fails(op, 13, &ap, 1, 2, in, 1, TC_STATUS_INVALID_ARGUMENT, "auto_pad");
    int64_t op2[2] = {1, 0};
    tc__attr outpad = dtu_attr_ints("output_padding", op2, 2); /* stride and dilation 1 */
    dtu_run_fails(op, 13, &outpad, 1, 2, in, 1, TC_STATUS_INVALID_ARGUMENT, "output_padding[0]");
    int64_t three[3] = {1, 1, 1}, neg[2] = {1, -1}, big[4] = {4, 4, 3, 1}, zero[2] = {0, 8}, huge[2] = {1, (int64_t)1 << 62};
    tc__attr s3 = dtu_attr_ints("strides", three, 3), sn = dtu_attr_ints("strides", neg, 2);
    dtu_run_fails(op, 13, &s3, 1, 2, in, 1, TC_STATUS_INVALID_ARGUMENT, "strides has 3 values");
    dtu_run_fails(op, 13, &sn, 1, 2, in, 1, TC_STATUS_INVALID_ARGUMENT, "strides[1]");
    tc__attr pb = dtu_attr_ints("pads", big, 4); /* full 7: 7 - 4 - 3 = 0 */
    dtu_run_fails(op, 13, &pb, 1, 2, in, 1, TC_STATUS_INVALID_ARGUMENT, "leave no output");
    tc__attr os0 = dtu_attr_ints("output_shape", zero, 2), os3 = dtu_attr_ints("output_shape", three, 3);
    dtu_run_fails(op, 13, &os0, 1, 2, in, 1, TC_STATUS_INVALID_ARGUMENT, "output_shape[0]");
    dtu_run_fails(op, 13, &os3, 1, 2, in, 1, TC_STATUS_INVALID_ARGUMENT, "output_shape has 3 values");
    tc__attr dh = dtu_attr_ints("dilations", huge, 2);
    dtu_run_fails(op, 13, &dh, 1, 2, in, 1, TC_STATUS_INVALID_ARGUMENT, "dilations[1]");
    int64_t ks[2] = {3, 2};
    tc__attr kbad = dtu_attr_ints("kernel_shape", ks, 2);
    dtu_run_fails(op, 13, &kbad, 1, 2, in, 1, TC_STATUS_INVALID_ARGUMENT, "kernel_shape[1]");
    tc__tensor xi = dtu_random(&r, TC_DTYPE_INT32, 4, (int64_t[]){1, 4, 5, 5});
    tc__tensor wi = dtu_random(&r, TC_DTYPE_INT32, 4, (int64_t[]){4, 3, 3, 3});
    const tc__tensor *in_i[2] = {&xi, &wi};
    dtu_run_fails(op, 13, NULL, 0, 2, in_i, 1, TC_STATUS_UNSUPPORTED, "int32");
    tc__tensor_free(&x);
    tc__tensor_free(&w);
    tc__tensor_free(&w5);
    tc__tensor_free(&b2);
    tc__tensor_free(&xi);
    tc__tensor_free(&wi);
}

/* Shape inference with symbolic and unknown dims. */
static void test_convt_infer_symbolic(void **state) {
    (void)state;
    tc__vinfo x, w, out;
    tc__vinfo_init(&x);
    tc__vinfo_init(&w);
    x.dtype = w.dtype = TC_DTYPE_FLOAT32;
    x.shape.rank = w.shape.rank = 4;
    x.shape.dims[0] = (tc__dim){-1, 0}; /* symbol 0 */
    x.shape.dims[1] = tc__dim_known(6);
    x.shape.dims[2] = tc__dim_unknown();
    x.shape.dims[3] = tc__dim_known(10);
    const int64_t wdims[4] = {6, 2, 2, 2};
    for (int i = 0; i < 4; i++) w.shape.dims[i] = tc__dim_known(wdims[i]);
    const tc__vinfo *in[2] = {&x, &w};
    int64_t s2[2] = {2, 2};
    tc__attr at[2] = {dtu_attr_ints("strides", s2, 2), dtu_attr_int("group", 3)};
    tc__attrs as = {2, at};
    tc__err err = {0};
    tc__vinfo_init(&out);
    tc__infer_ctx ctx = {"up", "ConvTranspose", 13, &as, 2, in, 1, &out, &err};
    if (tc__infer_ConvTranspose(&ctx) != TC_STATUS_OK) fail_msg("%s", err.msg);
    assert_int_equal(out.shape.rank, 4);
    assert_true(out.shape.dims[0].value < 0 && out.shape.dims[0].sym == 0);
    assert_int_equal(out.shape.dims[1].value, 6); /* 2 per group times 3 groups */
    assert_false(tc__dim_is_known(out.shape.dims[2]));
    assert_int_equal(out.shape.dims[3].value, 20);
    /* output_shape fixes spatial dims even when the input's are unknown */
    int64_t os[2] = {33, 21};
    tc__attr at2[2] = {dtu_attr_ints("strides", s2, 2), dtu_attr_ints("output_shape", os, 2)};
    tc__attrs as2 = {2, at2};
    x.shape.dims[1] = tc__dim_unknown();
    tc__vinfo_init(&out);
    ctx.attrs = &as2;
    if (tc__infer_ConvTranspose(&ctx) != TC_STATUS_OK) fail_msg("%s", err.msg);
    assert_int_equal(out.shape.dims[1].value, 2);
    assert_int_equal(out.shape.dims[2].value, 33);
    assert_int_equal(out.shape.dims[3].value, 21);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_convt_2d),
        cmocka_unit_test(test_convt_groups_dilations_padding),
        cmocka_unit_test(test_convt_1d_3d_and_float64),
        cmocka_unit_test(test_convt_output_shape_and_auto_pad),
        cmocka_unit_test(test_convt_hand_checked),
        cmocka_unit_test(test_convt_errors),
        cmocka_unit_test(test_convt_infer_symbolic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
