/*
 * test_cpu_vec_dwconv.c - the depthwise convolution tactics (dwconv_f32_avx512, dwconv_f32_avx2)
 * against the reference Conv plus the reference epilogue: widths 1 to 112 (not multiples of the
 * vector width, primes), 3x3/5x5/7x7, strides 1 and 2 per axis, symmetric, asymmetric, large
 * and automatic padding, bias, every fused activation with and without a residual, MobileNetV2
 * and EfficientNet shapes, with and without a 2-thread pool; and the steps supports() rejects.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "backends/cpu/tactics.h"
#include "dense_test_util.h"

#include "cpu_vec_test_util.h"

static const tc__tactic *const kDw[] = {&tc__tactic_dwconv_f32_avx512, &tc__tactic_dwconv_f32_avx2};
#define N_DW 2

#define DW_TOL 3e-5

typedef struct dw_case {
    int64_t n, c, h, w, k;
    int64_t sh, sw;
    int64_t pads[4]; /* top, left, bottom, right */
    const char *auto_pad; /* NULL: explicit pads */
    bool bias, residual;
    tc__epilogue epi;
} dw_case;

static int64_t out_dim(int64_t in, int64_t k, int64_t s, int64_t pb, int64_t pe) { return (in + pb + pe - k) / s + 1; }

/* Runs one case on random data through both tactics. */
static void check_dw(uint64_t seed, const dw_case *c, const char *what) {
    dtu_rng r = {seed};
    int64_t xd[4] = {c->n, c->c, c->h, c->w}, wd[4] = {c->c, 1, c->k, c->k}, bd[1] = {c->c};
    tc__tensor x = vtu_random(&r, 4, xd, -2.0, 2.0), w = vtu_random(&r, 4, wd, -1.0, 1.0);
    tc__tensor b = vtu_random(&r, 1, bd, -1.0, 1.0);
    int64_t strides[2] = {c->sh, c->sw}, pads[4] = {c->pads[0], c->pads[1], c->pads[2], c->pads[3]};
    tc__attr attrs[4];
    int na = 0;
    attrs[na++] = dtu_attr_int("group", c->c);
    attrs[na++] = dtu_attr_ints("strides", strides, 2);
    if (c->auto_pad) attrs[na++] = dtu_attr_string("auto_pad", c->auto_pad);
    else attrs[na++] = dtu_attr_ints("pads", pads, 4);
    vtu_step s = vtu_step_of("Conv", 13);
    s.attrs = attrs;
    s.n_attrs = na;
    s.n_in = c->bias ? 3 : 2;
    s.in[0] = &x;
    s.in[1] = &w;
    s.in[2] = c->bias ? &b : NULL;
    s.epi = c->epi;
    tc__tensor ref, res = {0};
    dtu_run_ok(DTU_OP(Conv), 13, attrs, na, s.n_in, s.in, 1, &ref);
    if (c->residual) {
        res = vtu_random(&r, ref.rank, ref.dims, -2.0, 2.0);
        s.residual = &res;
        s.epi.residual_input = (int8_t)s.n_in;
    }
    tc__err err = {0};
    if (tc__epilogue_apply(&s.epi, &ref, NULL, s.residual, &err) != TC_STATUS_OK) fail_msg("%s", err.msg);
    char msg[200];
    snprintf(msg, sizeof msg, "%s: %lldx%lldx%lldx%lld k%lld s%lld,%lld pads %lld,%lld,%lld,%lld%s%s act %d%s", what,
             (long long)c->n, (long long)c->c, (long long)c->h, (long long)c->w, (long long)c->k, (long long)c->sh,
             (long long)c->sw, (long long)pads[0], (long long)pads[1], (long long)pads[2], (long long)pads[3],
             c->auto_pad ? " " : "", c->auto_pad ? c->auto_pad : "", (int)c->epi.act, c->residual ? " +res" : "");
    for (int i = 0; i < N_DW; i++) vtu_check_against(kDw[i], &s, &ref, DW_TOL, msg);
    if (c->residual) tc__tensor_free(&res);
    tc__tensor_free(&ref);
    tc__tensor_free(&b);
    tc__tensor_free(&w);
    tc__tensor_free(&x);
}

static dw_case plain(int64_t c, int64_t h, int64_t w, int64_t k, int64_t s) {
    dw_case d = {1, c, h, w, k, s, s, {k / 2, k / 2, k / 2, k / 2}, NULL, true, false, tc__epilogue_none()};
    return d;
}

static void test_widths(void **state) {
    (void)state;
    const int64_t widths[] = {1, 7, 15, 17, 33, 56, 112};
    const int64_t ks[] = {3, 5, 7};
    uint64_t seed = 1;
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++)
        for (int k = 0; k < 3; k++)
            for (int64_t s = 1; s <= 2; s++) {
                dw_case c = plain(3, 9, widths[i], ks[k], s);
                check_dw(seed++, &c, "widths");
                c.h = 1; /* a single input row: most kernel rows fall in the padding */
                check_dw(seed++, &c, "widths, H = 1");
            }
}

/* Planes too wide for the ring of padded rows: read in place, masked loads at the edges. */
static void test_wide_planes(void **state) {
    (void)state;
    const int64_t widths[] = {1201, 2749, 3001};
    uint64_t seed = 50;
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++)
        for (int64_t k = 3; k <= 7; k += 2)
            for (int64_t s = 1; s <= 2; s++) {
                dw_case c = plain(2, 4, widths[i], k, s);
                c.pads[1] = k - 1; /* asymmetric: left edge blocks start inside the padding */
                c.pads[3] = 0;
                c.epi = vtu_epilogues[seed % VTU_N_EPILOGUES];
                c.residual = seed % 2 == 0;
                check_dw(seed++, &c, "wide");
            }
}

static void test_epilogues(void **state) {
    (void)state;
    for (int e = 0; e < VTU_N_EPILOGUES; e++)
        for (int res = 0; res < 2; res++) {
            dw_case c = plain(5, 13, 37, 3, 1);
            c.n = 2;
            c.epi = vtu_epilogues[e];
            c.residual = res == 1;
            check_dw(100 + (uint64_t)e * 2 + (uint64_t)res, &c, "epilogue 3x3 s1");
            c = plain(4, 11, 23, 5, 2);
            c.epi = vtu_epilogues[e];
            c.residual = res == 1;
            c.bias = false;
            check_dw(200 + (uint64_t)e * 2 + (uint64_t)res, &c, "epilogue 5x5 s2");
        }
}

static void test_random(void **state) {
    (void)state;
    dtu_rng r = {12345};
    const int64_t widths[] = {1, 2, 7, 15, 16, 17, 31, 32, 33, 47, 56, 64, 65, 112};
    for (int t = 0; t < 120; t++) {
        dw_case c;
        memset(&c, 0, sizeof c);
        const int64_t ks[] = {3, 5, 7};
        c.n = 1 + (int64_t)(dtu_next(&r) % 2);
        c.c = 1 + (int64_t)(dtu_next(&r) % 5);
        c.k = ks[dtu_next(&r) % 3];
        c.sh = 1 + (int64_t)(dtu_next(&r) % 2);
        c.sw = 1 + (int64_t)(dtu_next(&r) % 2);
        c.h = 1 + (int64_t)(dtu_next(&r) % 20);
        c.w = dtu_next(&r) % 2 ? widths[dtu_next(&r) % (sizeof widths / sizeof widths[0])]
                               : 1 + (int64_t)(dtu_next(&r) % 80);
        for (int i = 0; i < 4; i++) c.pads[i] = (int64_t)(dtu_next(&r) % (uint64_t)(c.k + 2));
        if (out_dim(c.h, c.k, c.sh, c.pads[0], c.pads[2]) < 1 || out_dim(c.w, c.k, c.sw, c.pads[1], c.pads[3]) < 1) {
            t--;
            continue;
        }
        c.bias = dtu_next(&r) % 2;
        c.residual = dtu_next(&r) % 3 == 0;
        c.epi = vtu_epilogues[dtu_next(&r) % VTU_N_EPILOGUES];
        check_dw(1000 + (uint64_t)t, &c, "random");
    }
}

static void test_auto_pad(void **state) {
    (void)state;
    const char *modes[] = {"SAME_UPPER", "SAME_LOWER", "VALID"};
    uint64_t seed = 300;
    for (int m = 0; m < 3; m++)
        for (int64_t k = 3; k <= 7; k += 2)
            for (int64_t s = 1; s <= 2; s++) {
                dw_case c = plain(3, 14, 29, k, s);
                c.auto_pad = modes[m];
                check_dw(seed++, &c, "auto_pad");
            }
}

/* MobileNetV2 and EfficientNet-B0 depthwise layers (ReLU6 / SiLU epilogues). */
static void test_model_shapes(void **state) {
    (void)state;
    const tc__epilogue relu6 = {-1, -1, TC__ACT_CLIP, 0, 0.0f, 6.0f}, silu = {-1, -1, TC__ACT_SILU, 0, 0.0f, 0.0f};
    dw_case c = plain(32, 112, 112, 3, 1);
    c.epi = relu6;
    check_dw(400, &c, "mobilenetv2 112x112x32 s1");
    c = plain(144, 56, 56, 3, 2);
    c.epi = relu6;
    check_dw(401, &c, "mobilenetv2 56x56x144 s2");
    c = plain(960, 7, 7, 3, 1);
    c.epi = relu6;
    check_dw(402, &c, "mobilenetv2 7x7x960 s1");
    c = plain(240, 28, 28, 5, 2);
    c.auto_pad = "SAME_UPPER";
    c.epi = silu;
    check_dw(403, &c, "efficientnet 28x28x240 5x5 s2");
    c = plain(1152, 7, 7, 5, 1);
    c.epi = silu;
    check_dw(404, &c, "efficientnet 7x7x1152 5x5 s1");
    c = plain(32, 57, 61, 7, 1);
    check_dw(405, &c, "7x7 s1");
}

/* The context may list the residual as input 2 when the Conv has no bias: it must not be read as B. */
static void test_residual_in_bias_slot(void **state) {
    (void)state;
    dtu_rng r = {77};
    int64_t xd[4] = {1, 4, 10, 19}, wd[4] = {4, 1, 3, 3};
    tc__tensor x = vtu_random(&r, 4, xd, -2.0, 2.0), w = vtu_random(&r, 4, wd, -1.0, 1.0);
    int64_t pads[4] = {1, 1, 1, 1};
    tc__attr attrs[2] = {dtu_attr_int("group", 4), dtu_attr_ints("pads", pads, 4)};
    vtu_step s = vtu_step_of("Conv", 13);
    s.attrs = attrs;
    s.n_attrs = 2;
    s.n_in = 2;
    s.in[0] = &x;
    s.in[1] = &w;
    tc__tensor ref;
    dtu_run_ok(DTU_OP(Conv), 13, attrs, 2, 2, s.in, 1, &ref);
    tc__tensor res = vtu_random(&r, ref.rank, ref.dims, -2.0, 2.0);
    s.residual = &res;
    s.epi.residual_input = 2;
    s.epi.act = TC__ACT_RELU;
    tc__err err = {0};
    assert_int_equal(tc__epilogue_apply(&s.epi, &ref, NULL, &res, &err), TC_STATUS_OK);
    const tc__tensor *in3[3] = {&x, &w, &res};
    for (int i = 0; i < N_DW; i++) {
        if (!vtu_isa_ok(kDw[i])) continue;
        tc__tensor y = vtu_run_tactic(kDw[i], &s, &ref, NULL, 3, in3);
        vtu_assert_close(&y, &ref, DW_TOL, "residual as input 2");
        tc__tensor_free(&y);
    }
    tc__tensor_free(&res);
    tc__tensor_free(&ref);
    tc__tensor_free(&w);
    tc__tensor_free(&x);
}

/* supports() on a Conv with these input shapes and attributes, output shape y. */
static bool dw_supports(const int64_t *xd, const int64_t *wd, int32_t rank, const int64_t *yd, const tc__attr *attrs,
                        int na, tc_dtype dt, const tc__epilogue *epi, const tc__tensor *bias_epi,
                        const tc__tensor *res) {
    tc__tensor x = {dt, rank, {0}, NULL, 0}, w = {dt, rank, {0}, NULL, 0}, y = {dt, rank, {0}, NULL, 0};
    for (int32_t i = 0; i < rank; i++) {
        x.dims[i] = xd[i];
        w.dims[i] = wd[i];
        y.dims[i] = yd[i];
    }
    const tc__tensor *in[2] = {&x, &w}, *out[1] = {&y};
    bool in_const[2] = {false, true};
    tc__attrs as = {na, attrs};
    tc__epilogue none = tc__epilogue_none();
    tc__step_desc d = {"Conv", 13, &as, 2, in, in_const, 1, out, epi ? epi : &none, bias_epi, res, NULL, 0};
    bool ok = true;
    for (int i = 0; i < N_DW; i++) ok = kDw[i]->supports(&d) && ok;
    for (int i = 0; i < N_DW; i++) assert_int_equal(kDw[i]->supports(&d), ok); /* both tactics agree */
    return ok;
}

static void test_rejects(void **state) {
    (void)state;
    int64_t xd[4] = {1, 8, 16, 16}, wd[4] = {8, 1, 3, 3}, yd[4] = {1, 8, 16, 16};
    int64_t p1[4] = {1, 1, 1, 1}, s3[2] = {3, 3}, d2[2] = {2, 2};
    tc__attr ok_attrs[2] = {dtu_attr_int("group", 8), dtu_attr_ints("pads", p1, 4)};
    assert_true(dw_supports(xd, wd, 4, yd, ok_attrs, 2, TC_DTYPE_FLOAT32, NULL, NULL, NULL));
    /* not depthwise: one group, or a channel multiplier of 2 */
    tc__attr g1[2] = {dtu_attr_int("group", 1), dtu_attr_ints("pads", p1, 4)};
    int64_t wfull[4] = {8, 8, 3, 3};
    assert_false(dw_supports(xd, wfull, 4, yd, g1, 2, TC_DTYPE_FLOAT32, NULL, NULL, NULL));
    int64_t wmul[4] = {16, 1, 3, 3}, ymul[4] = {1, 16, 16, 16};
    assert_false(dw_supports(xd, wmul, 4, ymul, ok_attrs, 2, TC_DTYPE_FLOAT32, NULL, NULL, NULL));
    /* kernel sizes other than 3, 5, 7, or not square */
    int64_t w4[4] = {8, 1, 4, 4}, w35[4] = {8, 1, 3, 5}, w1[4] = {8, 1, 1, 1};
    assert_false(dw_supports(xd, w4, 4, yd, ok_attrs, 2, TC_DTYPE_FLOAT32, NULL, NULL, NULL));
    assert_false(dw_supports(xd, w35, 4, yd, ok_attrs, 2, TC_DTYPE_FLOAT32, NULL, NULL, NULL));
    assert_false(dw_supports(xd, w1, 4, yd, ok_attrs, 2, TC_DTYPE_FLOAT32, NULL, NULL, NULL));
    /* stride 3, dilation 2 */
    tc__attr st3[3] = {dtu_attr_int("group", 8), dtu_attr_ints("pads", p1, 4), dtu_attr_ints("strides", s3, 2)};
    int64_t y3[4] = {1, 8, 6, 6};
    assert_false(dw_supports(xd, wd, 4, y3, st3, 3, TC_DTYPE_FLOAT32, NULL, NULL, NULL));
    tc__attr dl2[3] = {dtu_attr_int("group", 8), dtu_attr_ints("pads", p1, 4), dtu_attr_ints("dilations", d2, 2)};
    int64_t y2[4] = {1, 8, 14, 14};
    assert_false(dw_supports(xd, wd, 4, y2, dl2, 3, TC_DTYPE_FLOAT32, NULL, NULL, NULL));
    /* other dtypes, 1-D convolution */
    assert_false(dw_supports(xd, wd, 4, yd, ok_attrs, 2, TC_DTYPE_FLOAT64, NULL, NULL, NULL));
    assert_false(dw_supports(xd, wd, 4, yd, ok_attrs, 2, TC_DTYPE_FLOAT16, NULL, NULL, NULL));
    int64_t x1[3] = {1, 8, 16}, w1d[3] = {8, 1, 3}, y1[3] = {1, 8, 16};
    int64_t p1d[2] = {1, 1};
    tc__attr a1d[2] = {dtu_attr_int("group", 8), dtu_attr_ints("pads", p1d, 2)};
    assert_false(dw_supports(x1, w1d, 3, y1, a1d, 2, TC_DTYPE_FLOAT32, NULL, NULL, NULL));
    /* epilogues: a bias over the last dim, a residual of another shape, an unknown activation */
    tc__tensor eb = {TC_DTYPE_FLOAT32, 1, {16}, NULL, 0};
    tc__epilogue with_bias = {2, -1, TC__ACT_NONE, 0, 0.0f, 0.0f};
    assert_false(dw_supports(xd, wd, 4, yd, ok_attrs, 2, TC_DTYPE_FLOAT32, &with_bias, &eb, NULL));
    tc__tensor bad_res = {TC_DTYPE_FLOAT32, 4, {1, 8, 16, 15}, NULL, 0};
    tc__epilogue with_res = {-1, 2, TC__ACT_RELU, 0, 0.0f, 0.0f};
    assert_false(dw_supports(xd, wd, 4, yd, ok_attrs, 2, TC_DTYPE_FLOAT32, &with_res, NULL, &bad_res));
    tc__tensor good_res = {TC_DTYPE_FLOAT32, 4, {1, 8, 16, 16}, NULL, 0};
    assert_true(dw_supports(xd, wd, 4, yd, ok_attrs, 2, TC_DTYPE_FLOAT32, &with_res, NULL, &good_res));
    tc__epilogue bad_act = {-1, -1, TC__ACT_COUNT_, 0, 0.0f, 0.0f};
    assert_false(dw_supports(xd, wd, 4, yd, ok_attrs, 2, TC_DTYPE_FLOAT32, &bad_act, NULL, NULL));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_widths),       cmocka_unit_test(test_wide_planes), cmocka_unit_test(test_epilogues),
        cmocka_unit_test(test_random),       cmocka_unit_test(test_auto_pad),
        cmocka_unit_test(test_model_shapes), cmocka_unit_test(test_residual_in_bias_slot),
        cmocka_unit_test(test_rejects),
    };
    return cmocka_run_group_tests(tests, vtu_setup, vtu_teardown);
}
