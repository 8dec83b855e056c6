/*
 * test_ref_conv_pool.c - reference Conv, MaxPool, AveragePool and global pools
 * against naive direct formulas (bounds-checked loops over every output and
 * kernel tap) on odd and prime shapes with groups, strides, dilations and
 * padding, plus small hand-checked cases.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dense_test_util.h"

/* Geometry of a case with up to 3 spatial dims; unused dims have size 1. */
typedef struct geom {
    int nsp;
    int64_t n, c, m, group;
    int64_t in[3], k[3], s[3], d[3];
    int64_t pads[6]; /* begins (nsp values) then ends */
} geom;

static int64_t pad_b(const geom *g, int i) { return i < g->nsp ? g->pads[i] : 0; }
static int64_t pad_e(const geom *g, int i) { return i < g->nsp ? g->pads[g->nsp + i] : 0; }
static int64_t gv(const int64_t *v, const geom *g, int i, int64_t dflt) { return i < g->nsp ? v[i] : dflt; }

/* Floor-mode output size along spatial dim i. */
static int64_t out_size(const geom *g, int i) {
    int64_t dk = (gv(g->k, g, i, 1) - 1) * gv(g->d, g, i, 1) + 1;
    return (gv(g->in, g, i, 1) + pad_b(g, i) + pad_e(g, i) - dk) / gv(g->s, g, i, 1) + 1;
}

/* Direct convolution over the geometry embedded in 3 spatial dims. */
static double *naive_conv(const geom *g, const tc__tensor *x, const tc__tensor *w, const tc__tensor *b, int64_t *osz) {
    int64_t in[3], k[3], s[3], d[3], o[3];
    for (int i = 0; i < 3; i++) {
        in[i] = gv(g->in, g, i, 1);
        k[i] = gv(g->k, g, i, 1);
        s[i] = gv(g->s, g, i, 1);
        d[i] = gv(g->d, g, i, 1);
        o[i] = out_size(g, i);
    }
    int64_t cg = g->c / g->group, mg = g->m / g->group;
    *osz = g->n * g->m * o[0] * o[1] * o[2];
    double *y = calloc((size_t)*osz, sizeof(double));
    int64_t at = 0;
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t m = 0; m < g->m; m++)
            for (int64_t a = 0; a < o[0]; a++)
                for (int64_t bb = 0; bb < o[1]; bb++)
                    for (int64_t cc = 0; cc < o[2]; cc++) {
                        double sum = b ? dtu_get(b, m) : 0.0;
                        int64_t grp = m / mg;
                        for (int64_t c = 0; c < cg; c++)
                            for (int64_t k0 = 0; k0 < k[0]; k0++)
                                for (int64_t k1 = 0; k1 < k[1]; k1++)
                                    for (int64_t k2 = 0; k2 < k[2]; k2++) {
                                        int64_t i0 = a * s[0] - pad_b(g, 0) + k0 * d[0];
                                        int64_t i1 = bb * s[1] - pad_b(g, 1) + k1 * d[1];
                                        int64_t i2 = cc * s[2] - pad_b(g, 2) + k2 * d[2];
                                        if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2])
                                            continue;
                                        int64_t xi = (((n * g->c + grp * cg + c) * in[0] + i0) * in[1] + i1) * in[2] + i2;
                                        int64_t wi = (((m * cg + c) * k[0] + k0) * k[1] + k1) * k[2] + k2;
                                        sum += dtu_get(x, xi) * dtu_get(w, wi);
                                    }
                        y[at++] = sum;
                    }
    return y;
}

/* Runs Conv on random data with explicit pads and compares with naive_conv. */
static void check_conv(uint64_t seed, const geom *g, bool bias, tc_dtype dt, double tol) {
    dtu_rng r = {seed};
    int64_t xd[5] = {g->n, g->c}, wd[5] = {g->m, g->c / g->group}, bd[1] = {g->m};
    for (int i = 0; i < g->nsp; i++) {
        xd[2 + i] = g->in[i];
        wd[2 + i] = g->k[i];
    }
    tc__tensor x = dtu_random(&r, dt, g->nsp + 2, xd), w = dtu_random(&r, dt, g->nsp + 2, wd);
    tc__tensor b = dtu_random(&r, dt, 1, bd);
    tc__attr at[5];
    int na = 0;
    at[na++] = dtu_attr_ints("strides", g->s, (size_t)g->nsp);
    at[na++] = dtu_attr_ints("dilations", g->d, (size_t)g->nsp);
    at[na++] = dtu_attr_ints("pads", g->pads, (size_t)(2 * g->nsp));
    at[na++] = dtu_attr_int("group", g->group);
    const tc__tensor *in[3] = {&x, &w, &b};
    tc__tensor y;
    dtu_run_ok(DTU_OP(Conv), 17, at, na, bias ? 3 : 2, in, 1, &y);
    int64_t n;
    double *want = naive_conv(g, &x, &w, bias ? &b : NULL, &n);
    assert_int_equal(tc__tensor_numel(&y), n);
    assert_int_equal(y.dims[1], g->m);
    for (int i = 0; i < g->nsp; i++) assert_int_equal(y.dims[2 + i], out_size(g, i));
    dtu_assert_values(&y, want, tol, "Conv");
    free(want);
    tc__tensor_free(&x);
    tc__tensor_free(&w);
    tc__tensor_free(&b);
    tc__tensor_free(&y);
}

static void test_conv_2d_padded(void **state) {
    (void)state;
    geom g = {.nsp = 2, .n = 2, .c = 3, .m = 5, .group = 1, .in = {7, 11}, .k = {3, 3}, .s = {1, 1}, .d = {1, 1},
              .pads = {1, 1, 1, 1}};
    check_conv(1, &g, true, TC_DTYPE_FLOAT32, 1e-5);
    check_conv(2, &g, false, TC_DTYPE_FLOAT32, 1e-5);
}

static void test_conv_groups_strides_dilations(void **state) {
    (void)state;
    geom g = {.nsp = 2, .n = 1, .c = 6, .m = 9, .group = 3, .in = {13, 5}, .k = {3, 2}, .s = {2, 3}, .d = {2, 1},
              .pads = {1, 0, 2, 1}};
    check_conv(3, &g, true, TC_DTYPE_FLOAT32, 1e-5);
}

static void test_conv_depthwise(void **state) {
    (void)state;
    geom g = {.nsp = 2, .n = 2, .c = 7, .m = 7, .group = 7, .in = {9, 9}, .k = {5, 5}, .s = {2, 2}, .d = {1, 1},
              .pads = {2, 2, 2, 2}};
    check_conv(4, &g, true, TC_DTYPE_FLOAT32, 1e-5);
    geom g2 = g; /* channel multiplier 2 */
    g2.m = 14;
    check_conv(5, &g2, false, TC_DTYPE_FLOAT32, 1e-5);
}

static void test_conv_1d_and_3d(void **state) {
    (void)state;
    geom g1 = {.nsp = 1, .n = 1, .c = 2, .m = 3, .group = 1, .in = {17}, .k = {4}, .s = {3}, .d = {2}, .pads = {3, 1}};
    check_conv(6, &g1, true, TC_DTYPE_FLOAT32, 1e-5);
    geom g3 = {.nsp = 3, .n = 1, .c = 2, .m = 2, .group = 1, .in = {5, 6, 7}, .k = {3, 2, 3}, .s = {1, 2, 1},
               .d = {1, 1, 2}, .pads = {1, 0, 2, 0, 1, 1}};
    check_conv(7, &g3, true, TC_DTYPE_FLOAT32, 1e-5);
}

static void test_conv_pointwise_and_tiny(void **state) {
    (void)state;
    geom g = {.nsp = 2, .n = 2, .c = 4, .m = 3, .group = 1, .in = {7, 5}, .k = {1, 1}, .s = {1, 1}, .d = {1, 1}};
    check_conv(8, &g, true, TC_DTYPE_FLOAT32, 1e-5);
    g.s[0] = g.s[1] = 2; /* strided 1x1 */
    check_conv(9, &g, false, TC_DTYPE_FLOAT32, 1e-5);
    geom t = {.nsp = 2, .n = 1, .c = 1, .m = 1, .group = 1, .in = {1, 1}, .k = {1, 1}, .s = {1, 1}, .d = {1, 1}};
    check_conv(10, &t, true, TC_DTYPE_FLOAT32, 1e-6);
    geom big_kernel = {.nsp = 2, .n = 1, .c = 2, .m = 2, .group = 1, .in = {3, 2}, .k = {3, 3}, .s = {1, 1},
                       .d = {1, 1}, .pads = {0, 2, 0, 2}}; /* kernel wider than the input */
    check_conv(11, &big_kernel, true, TC_DTYPE_FLOAT32, 1e-5);
}

static void test_conv_other_float_types(void **state) {
    (void)state;
    geom g = {.nsp = 2, .n = 1, .c = 3, .m = 2, .group = 1, .in = {5, 7}, .k = {3, 3}, .s = {1, 2}, .d = {1, 1},
              .pads = {1, 1, 1, 1}};
    check_conv(12, &g, true, TC_DTYPE_FLOAT64, 1e-12);
    check_conv(13, &g, true, TC_DTYPE_FLOAT16, 4e-3); /* the naive sum reads the same fp16 inputs */
    check_conv(14, &g, true, TC_DTYPE_BFLOAT16, 2e-2);
}

/* The example from the ONNX Conv documentation: 5x5 ramp, 3x3 ones, pads 1. */
static void test_conv_hand_checked(void **state) {
    (void)state;
    double xv[25], wv[9];
    for (int i = 0; i < 25; i++) xv[i] = i;
    for (int i = 0; i < 9; i++) wv[i] = 1;
    int64_t xd[4] = {1, 1, 5, 5}, wd[4] = {1, 1, 3, 3};
    tc__tensor x = dtu_from_f64(TC_DTYPE_FLOAT32, 4, xd, xv), w = dtu_from_f64(TC_DTYPE_FLOAT32, 4, wd, wv);
    const tc__tensor *in[2] = {&x, &w};
    int64_t pads[4] = {1, 1, 1, 1};
    tc__attr at[1] = {dtu_attr_ints("pads", pads, 4)};
    tc__tensor y;
    dtu_run_ok(DTU_OP(Conv), 11, at, 1, 2, in, 1, &y);
    const double want[25] = {12, 21, 27, 33, 24, 33, 54, 63, 72, 51, 63, 99, 108, 117, 81,
                             93, 144, 153, 162, 111, 72, 111, 117, 123, 84};
    dtu_assert_values(&y, want, 0, "Conv example");
    tc__tensor_free(&y);
    /* strides 2, pads 1 0 (top/bottom only): 3x2 output */
    int64_t pads2[4] = {1, 0, 1, 0}, strides[2] = {2, 2};
    tc__attr at2[2] = {dtu_attr_ints("pads", pads2, 4), dtu_attr_ints("strides", strides, 2)};
    dtu_run_ok(DTU_OP(Conv), 11, at2, 2, 2, in, 1, &y);
    const double want2[6] = {21, 33, 99, 117, 111, 123};
    int64_t yd[4] = {1, 1, 3, 2};
    dtu_assert_shape(&y, 4, yd);
    dtu_assert_values(&y, want2, 0, "Conv strided example");
    tc__tensor_free(&y);
    tc__tensor_free(&x);
    tc__tensor_free(&w);
}

/* auto_pad SAME_UPPER / SAME_LOWER / VALID equal explicit pads computed by hand. */
static void test_conv_auto_pad(void **state) {
    (void)state;
    dtu_rng r = {15};
    int64_t xd[4] = {1, 2, 7, 8}, wd[4] = {3, 2, 4, 3};
    tc__tensor x = dtu_random(&r, TC_DTYPE_FLOAT32, 4, xd), w = dtu_random(&r, TC_DTYPE_FLOAT32, 4, wd);
    const tc__tensor *in[2] = {&x, &w};
    int64_t strides[2] = {2, 3};
    /* H: in 7, k 4, s 2 -> out 4, pad 3*2+4-7 = 3; W: in 8, k 3, s 3 -> out 3, pad 2*3+3-8 = 1. */
    const struct {
        const char *mode;
        int64_t pads[4];
    } cases[] = {{"SAME_UPPER", {1, 0, 2, 1}}, {"SAME_LOWER", {2, 1, 1, 0}}, {"VALID", {0, 0, 0, 0}}};
    for (size_t i = 0; i < 3; i++) {
        tc__attr a1[2] = {dtu_attr_string("auto_pad", cases[i].mode), dtu_attr_ints("strides", strides, 2)};
        tc__attr a2[2] = {dtu_attr_ints("pads", cases[i].pads, 4), dtu_attr_ints("strides", strides, 2)};
        tc__tensor y1, y2;
        dtu_run_ok(DTU_OP(Conv), 13, a1, 2, 2, in, 1, &y1);
        dtu_run_ok(DTU_OP(Conv), 13, a2, 2, 2, in, 1, &y2);
        if (i < 2) {
            int64_t want[4] = {1, 3, 4, 3};
            dtu_assert_shape(&y1, 4, want);
        } else {
            int64_t want[4] = {1, 3, 2, 2};
            dtu_assert_shape(&y1, 4, want);
        }
        dtu_assert_close(&y1, &y2, 0, cases[i].mode);
        tc__tensor_free(&y1);
        tc__tensor_free(&y2);
    }
    tc__tensor_free(&x);
    tc__tensor_free(&w);
    /* stride 5 > kernel 1 on 8 inputs: 2 outputs, the needed padding (-2) is clamped to 0 (as ONNX Runtime) */
    double v8[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    x = dtu_from_f64(TC_DTYPE_FLOAT32, 3, (int64_t[]){1, 1, 8}, v8);
    w = dtu_from_f64(TC_DTYPE_FLOAT32, 3, (int64_t[]){1, 1, 1}, (const double[]){2});
    int64_t s5[1] = {5};
    const tc__tensor *in1[2] = {&x, &w};
    for (int lower = 0; lower <= 1; lower++) {
        tc__attr a[2] = {dtu_attr_string("auto_pad", lower ? "SAME_LOWER" : "SAME_UPPER"), dtu_attr_ints("strides", s5, 1)};
        tc__tensor y;
        dtu_run_ok(DTU_OP(Conv), 13, a, 2, 2, in1, 1, &y);
        dtu_assert_values(&y, (const double[]){2, 12}, 0, "Conv SAME stride > kernel");
        tc__tensor_free(&y);
    }
    tc__tensor_free(&x);
    tc__tensor_free(&w);
}

static void test_conv_errors(void **state) {
    (void)state;
    dtu_rng r = {16};
    int64_t xd[4] = {1, 4, 5, 5}, wd[4] = {2, 3, 3, 3};
    tc__tensor x = dtu_random(&r, TC_DTYPE_FLOAT32, 4, xd), w = dtu_random(&r, TC_DTYPE_FLOAT32, 4, wd);
    const tc__tensor *in[2] = {&x, &w};
    dtu_run_fails(DTU_OP(Conv), 13, NULL, 0, 2, in, 1, TC_STATUS_INVALID_ARGUMENT, "channels");
    tc__tensor xi = dtu_random(&r, TC_DTYPE_INT32, 4, (int64_t[]){1, 3, 5, 5});
    tc__tensor wi = dtu_random(&r, TC_DTYPE_INT32, 4, wd);
    const tc__tensor *in2[2] = {&xi, &wi};
    dtu_run_fails(DTU_OP(Conv), 13, NULL, 0, 2, in2, 1, TC_STATUS_UNSUPPORTED, "int32");
    tc__attr bad = dtu_attr_string("auto_pad", "SAME");
    tc__tensor x3 = dtu_random(&r, TC_DTYPE_FLOAT32, 4, (int64_t[]){1, 3, 5, 5});
    const tc__tensor *in3[2] = {&x3, &w};
    dtu_run_fails(DTU_OP(Conv), 13, &bad, 1, 2, in3, 1, TC_STATUS_INVALID_ARGUMENT, "auto_pad");
    tc__tensor_free(&x3);
    tc__tensor_free(&x);
    tc__tensor_free(&w);
    tc__tensor_free(&xi);
    tc__tensor_free(&wi);
}

/* ---- pooling ------------------------------------------------------------------------------ */

/*
 * Direct max (first maximum and its flattened index, row- or column-major within the
 * plane) or average pooling with output sizes os[] given.
 */
static void naive_pool(const geom *g, const tc__tensor *x, const int64_t *os, bool is_max, bool include_pad,
                       bool column_major, double *y, int64_t *idx) {
    int64_t in[3], k[3], s[3], d[3], o[3];
    for (int i = 0; i < 3; i++) {
        in[i] = gv(g->in, g, i, 1);
        k[i] = gv(g->k, g, i, 1);
        s[i] = gv(g->s, g, i, 1);
        d[i] = gv(g->d, g, i, 1);
        o[i] = i < g->nsp ? os[i] : 1;
    }
    int64_t at = 0, plane = in[0] * in[1] * in[2];
    for (int64_t p = 0; p < g->n * g->c; p++)
        for (int64_t a = 0; a < o[0]; a++)
            for (int64_t b = 0; b < o[1]; b++)
                for (int64_t c = 0; c < o[2]; c++) {
                    double best = -INFINITY, sum = 0;
                    int64_t besti = -1, count = 0;
                    for (int64_t k0 = 0; k0 < k[0]; k0++)
                        for (int64_t k1 = 0; k1 < k[1]; k1++)
                            for (int64_t k2 = 0; k2 < k[2]; k2++) {
                                int64_t i0 = a * s[0] - pad_b(g, 0) + k0 * d[0];
                                int64_t i1 = b * s[1] - pad_b(g, 1) + k1 * d[1];
                                int64_t i2 = c * s[2] - pad_b(g, 2) + k2 * d[2];
                                bool inside = i0 >= 0 && i0 < in[0] && i1 >= 0 && i1 < in[1] && i2 >= 0 && i2 < in[2];
                                bool in_padded = i0 >= -pad_b(g, 0) && i0 < in[0] + pad_e(g, 0) &&
                                                 i1 >= -pad_b(g, 1) && i1 < in[1] + pad_e(g, 1) &&
                                                 i2 >= -pad_b(g, 2) && i2 < in[2] + pad_e(g, 2);
                                if (include_pad ? in_padded : inside) count++;
                                if (!inside) continue;
                                double v = dtu_get(x, p * plane + (i0 * in[1] + i1) * in[2] + i2);
                                sum += v;
                                if (v > best) {
                                    best = v;
                                    /* the real spatial dims come first, then size-1 padding dims */
                                    int64_t ii[3] = {i0, i1, i2}, lin = 0, mul = 1;
                                    if (column_major)
                                        for (int q = 0; q < g->nsp; q++) {
                                            lin += ii[q] * mul;
                                            mul *= in[q];
                                        }
                                    else
                                        lin = (i0 * in[1] + i1) * in[2] + i2;
                                    besti = p * plane + lin;
                                }
                            }
                    y[at] = is_max ? best : sum / (double)count;
                    if (idx) idx[at] = besti;
                    at++;
                }
}

/* Pool attributes of a geometry. */
static int pool_attrs(const geom *g, tc__attr *at) {
    int na = 0;
    at[na++] = dtu_attr_ints("kernel_shape", g->k, (size_t)g->nsp);
    at[na++] = dtu_attr_ints("strides", g->s, (size_t)g->nsp);
    at[na++] = dtu_attr_ints("dilations", g->d, (size_t)g->nsp);
    at[na++] = dtu_attr_ints("pads", g->pads, (size_t)(2 * g->nsp));
    return na;
}

static void check_pool(uint64_t seed, const geom *g, tc_dtype dt, bool is_max, bool include_pad, bool column_major,
                       bool with_indices) {
    dtu_rng r = {seed};
    int64_t xd[5] = {g->n, g->c}, os[3];
    for (int i = 0; i < g->nsp; i++) {
        xd[2 + i] = g->in[i];
        os[i] = out_size(g, i);
    }
    tc__tensor x = dtu_random(&r, dt, g->nsp + 2, xd);
    tc__attr at[8];
    int na = pool_attrs(g, at);
    if (!is_max) at[na++] = dtu_attr_int("count_include_pad", include_pad);
    if (column_major) at[na++] = dtu_attr_int("storage_order", 1);
    const tc__tensor *in[1] = {&x};
    tc__tensor y[2];
    if (is_max) dtu_run_ok(DTU_OP(MaxPool), 12, at, na, 1, in, with_indices ? 2 : 1, y);
    else dtu_run_ok(DTU_OP(AveragePool), 19, at, na, 1, in, 1, y);
    int64_t n = tc__tensor_numel(&y[0]);
    for (int i = 0; i < g->nsp; i++) assert_int_equal(y[0].dims[2 + i], os[i]);
    double *want = calloc((size_t)n, sizeof(double));
    int64_t *widx = calloc((size_t)n, sizeof(int64_t));
    naive_pool(g, &x, os, is_max, include_pad, column_major, want, widx);
    dtu_assert_values(&y[0], want, dt == TC_DTYPE_FLOAT32 ? 1e-6 : 1e-3, is_max ? "MaxPool" : "AveragePool");
    if (with_indices) {
        assert_int_equal(y[1].dtype, TC_DTYPE_INT64);
        for (int64_t i = 0; i < n; i++) assert_int_equal(((int64_t *)y[1].data)[i], widx[i]);
        tc__tensor_free(&y[1]);
    }
    free(want);
    free(widx);
    tc__tensor_free(&x);
    tc__tensor_free(&y[0]);
}

static void test_maxpool_random(void **state) {
    (void)state;
    geom g = {.nsp = 2, .n = 2, .c = 3, .in = {9, 10}, .k = {3, 2}, .s = {2, 3}, .d = {1, 2}, .pads = {1, 0, 1, 1}};
    check_pool(20, &g, TC_DTYPE_FLOAT32, true, false, false, true);
    check_pool(21, &g, TC_DTYPE_FLOAT32, true, false, true, true); /* storage_order = 1 */
    check_pool(22, &g, TC_DTYPE_FLOAT16, true, false, false, false);
    check_pool(23, &g, TC_DTYPE_INT8, true, false, false, true);
    check_pool(24, &g, TC_DTYPE_UINT8, true, false, false, false);
    geom g1 = {.nsp = 1, .n = 1, .c = 2, .in = {13}, .k = {4}, .s = {3}, .d = {1}, .pads = {2, 1}};
    check_pool(25, &g1, TC_DTYPE_FLOAT64, true, false, false, true);
    geom g3 = {.nsp = 3, .n = 1, .c = 1, .in = {5, 4, 7}, .k = {2, 3, 2}, .s = {1, 1, 2}, .d = {2, 1, 1},
               .pads = {0, 1, 1, 1, 1, 0}};
    check_pool(26, &g3, TC_DTYPE_FLOAT32, true, false, true, true);
    geom t = {.nsp = 2, .n = 1, .c = 1, .in = {1, 1}, .k = {1, 1}, .s = {1, 1}, .d = {1, 1}};
    check_pool(27, &t, TC_DTYPE_FLOAT32, true, false, false, true);
}

static void test_avgpool_random(void **state) {
    (void)state;
    geom g = {.nsp = 2, .n = 2, .c = 3, .in = {11, 7}, .k = {3, 4}, .s = {2, 1}, .d = {1, 1}, .pads = {1, 2, 2, 1}};
    check_pool(30, &g, TC_DTYPE_FLOAT32, false, false, false, false);
    check_pool(31, &g, TC_DTYPE_FLOAT32, false, true, false, false);
    geom gd = {.nsp = 2, .n = 1, .c = 2, .in = {10, 9}, .k = {2, 3}, .s = {1, 2}, .d = {3, 2}, .pads = {2, 1, 1, 2}};
    check_pool(32, &gd, TC_DTYPE_FLOAT32, false, false, false, false);
    check_pool(33, &gd, TC_DTYPE_FLOAT32, false, true, false, false);
    geom g3 = {.nsp = 3, .n = 1, .c = 2, .in = {3, 5, 4}, .k = {2, 2, 3}, .s = {1, 2, 1}, .d = {1, 1, 1},
               .pads = {1, 0, 1, 0, 1, 1}};
    check_pool(34, &g3, TC_DTYPE_FLOAT64, false, true, false, false);
}

/* ceil_mode on a 4x4 ramp: k 3, s 2 gives 1x1 (floor) or 2x2 (ceil); and the last-window rule. */
static void test_pool_ceil_mode(void **state) {
    (void)state;
    double xv[16];
    for (int i = 0; i < 16; i++) xv[i] = i + 1;
    int64_t xd[4] = {1, 1, 4, 4}, k[2] = {3, 3}, s[2] = {2, 2};
    tc__tensor x = dtu_from_f64(TC_DTYPE_FLOAT32, 4, xd, xv);
    const tc__tensor *in[1] = {&x};
    tc__attr at[3] = {dtu_attr_ints("kernel_shape", k, 2), dtu_attr_ints("strides", s, 2), dtu_attr_int("ceil_mode", 1)};
    tc__tensor y;
    dtu_run_ok(DTU_OP(MaxPool), 12, at, 3, 1, in, 1, &y);
    int64_t y22[4] = {1, 1, 2, 2};
    dtu_assert_shape(&y, 4, y22);
    dtu_assert_values(&y, (const double[]){11, 12, 15, 16}, 0, "MaxPool ceil");
    tc__tensor_free(&y);
    dtu_run_ok(DTU_OP(AveragePool), 12, at, 3, 1, in, 1, &y);
    /* windows rows {0,1,2} or {2,3} by cols {0,1,2} or {2,3}, padding not counted */
    dtu_assert_values(&y, (const double[]){6, 7.5, 12, 13.5}, 1e-7, "AveragePool ceil");
    tc__tensor_free(&y);
    dtu_run_ok(DTU_OP(MaxPool), 12, at, 2, 1, in, 1, &y);
    int64_t y11[4] = {1, 1, 1, 1};
    dtu_assert_shape(&y, 4, y11);
    dtu_assert_values(&y, (const double[]){11}, 0, "MaxPool floor");
    tc__tensor_free(&y);
    tc__tensor_free(&x);

    /* in 5, k 2, s 2, pads 1: ceil((5+2-2)/2)+1 = 4, but the 4th window would start at 6 >= 5+1: 3. */
    double v5[5] = {1, 5, 2, 4, 3};
    int64_t xd5[3] = {1, 1, 5}, k1[1] = {2}, s1[1] = {2}, p1[2] = {1, 1};
    x = dtu_from_f64(TC_DTYPE_FLOAT32, 3, xd5, v5);
    tc__attr a5[4] = {dtu_attr_ints("kernel_shape", k1, 1), dtu_attr_ints("strides", s1, 1),
                      dtu_attr_ints("pads", p1, 2), dtu_attr_int("ceil_mode", 1)};
    tc__tensor yi[2];
    dtu_run_ok(DTU_OP(MaxPool), 12, a5, 4, 1, in, 2, yi);
    int64_t y3[3] = {1, 1, 3};
    dtu_assert_shape(&yi[0], 3, y3);
    dtu_assert_values(&yi[0], (const double[]){1, 5, 4}, 0, "MaxPool ceil reduce");
    dtu_assert_values(&yi[1], (const double[]){0, 1, 3}, 0, "MaxPool ceil reduce indices");
    tc__tensor_free(&yi[0]);
    tc__tensor_free(&yi[1]);
    tc__tensor_free(&x);
}

/* count_include_pad on a 3x3 ramp with 2x2 windows, pads 1 and stride 2. */
static void test_avgpool_count_include_pad(void **state) {
    (void)state;
    double xv[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    int64_t xd[4] = {1, 1, 3, 3}, k[2] = {2, 2}, s[2] = {2, 2}, p[4] = {1, 1, 1, 1};
    tc__tensor x = dtu_from_f64(TC_DTYPE_FLOAT32, 4, xd, xv);
    const tc__tensor *in[1] = {&x};
    for (int cip = 0; cip <= 1; cip++) {
        tc__attr at[4] = {dtu_attr_ints("kernel_shape", k, 2), dtu_attr_ints("strides", s, 2),
                          dtu_attr_ints("pads", p, 4), dtu_attr_int("count_include_pad", cip)};
        tc__tensor y;
        dtu_run_ok(DTU_OP(AveragePool), 11, at, 4, 1, in, 1, &y);
        const double excl[4] = {1, 2.5, 5.5, 7}, incl[4] = {0.25, 1.25, 2.75, 7};
        dtu_assert_values(&y, cip ? incl : excl, 1e-7, "AveragePool count_include_pad");
        tc__tensor_free(&y);
    }
    tc__tensor_free(&x);
}

static void test_pool_auto_pad(void **state) {
    (void)state;
    dtu_rng r = {40};
    int64_t xd[4] = {1, 2, 7, 6}, k[2] = {3, 2}, s[2] = {2, 2};
    tc__tensor x = dtu_random(&r, TC_DTYPE_FLOAT32, 4, xd);
    const tc__tensor *in[1] = {&x};
    /* H: out 4, pad 3*2+3-7 = 2; W: out 3, pad 2*2+2-6 = 0 */
    const struct {
        const char *mode;
        int64_t pads[4];
    } cases[] = {{"SAME_UPPER", {1, 0, 1, 0}}, {"SAME_LOWER", {1, 0, 1, 0}}, {"VALID", {0, 0, 0, 0}}};
    for (size_t i = 0; i < 3; i++)
        for (int is_max = 0; is_max <= 1; is_max++) {
            tc__attr a1[3] = {dtu_attr_ints("kernel_shape", k, 2), dtu_attr_ints("strides", s, 2),
                              dtu_attr_string("auto_pad", cases[i].mode)};
            tc__attr a2[3] = {dtu_attr_ints("kernel_shape", k, 2), dtu_attr_ints("strides", s, 2),
                              dtu_attr_ints("pads", cases[i].pads, 4)};
            tc__tensor y1, y2;
            dtu_op op = is_max ? DTU_OP(MaxPool) : DTU_OP(AveragePool);
            dtu_run_ok(op, 11, a1, 3, 1, in, 1, &y1);
            dtu_run_ok(op, 11, a2, 3, 1, in, 1, &y2);
            dtu_assert_shape(&y1, 4, i < 2 ? (const int64_t[]){1, 2, 4, 3} : (const int64_t[]){1, 2, 3, 3});
            dtu_assert_close(&y1, &y2, 0, cases[i].mode);
            tc__tensor_free(&y1);
            tc__tensor_free(&y2);
        }
    tc__tensor_free(&x);
}

static void test_global_pools(void **state) {
    (void)state;
    dtu_rng r = {50};
    const int64_t shapes[3][5] = {{2, 3, 5, 7, 1}, {1, 5, 11, 1, 1}, {3, 2, 3, 2, 5}};
    const int ranks[3] = {4, 3, 5};
    for (int s = 0; s < 3; s++) {
        tc__tensor x = dtu_random(&r, TC_DTYPE_FLOAT32, ranks[s], shapes[s]);
        const tc__tensor *in[1] = {&x};
        tc__tensor ya, ym;
        dtu_run_ok(DTU_OP(GlobalAveragePool), 13, NULL, 0, 1, in, 1, &ya);
        dtu_run_ok(DTU_OP(GlobalMaxPool), 13, NULL, 0, 1, in, 1, &ym);
        int64_t plane = tc__numel(ranks[s] - 2, shapes[s] + 2), planes = shapes[s][0] * shapes[s][1];
        assert_int_equal(tc__tensor_numel(&ya), planes);
        for (int d = 2; d < ranks[s]; d++) assert_int_equal(ya.dims[d], 1);
        for (int64_t p = 0; p < planes; p++) {
            double sum = 0, mx = -INFINITY;
            for (int64_t i = 0; i < plane; i++) {
                double v = dtu_get(&x, p * plane + i);
                sum += v;
                mx = v > mx ? v : mx;
            }
            assert_true(fabs(dtu_get(&ya, p) - sum / (double)plane) < 1e-6);
            assert_true(dtu_get(&ym, p) == mx);
        }
        tc__tensor_free(&x);
        tc__tensor_free(&ya);
        tc__tensor_free(&ym);
    }
}

static void test_pool_errors(void **state) {
    (void)state;
    dtu_rng r = {60};
    int64_t xd[4] = {1, 1, 4, 4};
    tc__tensor x = dtu_random(&r, TC_DTYPE_FLOAT32, 4, xd);
    const tc__tensor *in[1] = {&x};
    dtu_run_fails(DTU_OP(MaxPool), 12, NULL, 0, 1, in, 1, TC_STATUS_INVALID_ARGUMENT, "kernel_shape");
    int64_t k3[3] = {2, 2, 2};
    tc__attr a = dtu_attr_ints("kernel_shape", k3, 3);
    dtu_run_fails(DTU_OP(MaxPool), 12, &a, 1, 1, in, 1, TC_STATUS_INVALID_ARGUMENT, "rank");
    int64_t k5[2] = {5, 5};
    tc__attr b = dtu_attr_ints("kernel_shape", k5, 2);
    dtu_run_fails(DTU_OP(AveragePool), 12, &b, 1, 1, in, 1, TC_STATUS_INVALID_ARGUMENT, "kernel");
    tc__tensor xi = dtu_random(&r, TC_DTYPE_INT32, 4, xd);
    const tc__tensor *ini[1] = {&xi};
    int64_t k2[2] = {2, 2};
    tc__attr c = dtu_attr_ints("kernel_shape", k2, 2);
    dtu_run_fails(DTU_OP(AveragePool), 12, &c, 1, 1, ini, 1, TC_STATUS_UNSUPPORTED, "int32");
    tc__tensor_free(&x);
    tc__tensor_free(&xi);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_2d_padded),
        cmocka_unit_test(test_conv_groups_strides_dilations),
        cmocka_unit_test(test_conv_depthwise),
        cmocka_unit_test(test_conv_1d_and_3d),
        cmocka_unit_test(test_conv_pointwise_and_tiny),
        cmocka_unit_test(test_conv_other_float_types),
        cmocka_unit_test(test_conv_hand_checked),
        cmocka_unit_test(test_conv_auto_pad),
        cmocka_unit_test(test_conv_errors),
        cmocka_unit_test(test_maxpool_random),
        cmocka_unit_test(test_avgpool_random),
        cmocka_unit_test(test_pool_ceil_mode),
        cmocka_unit_test(test_avgpool_count_include_pad),
        cmocka_unit_test(test_pool_auto_pad),
        cmocka_unit_test(test_global_pools),
        cmocka_unit_test(test_pool_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
