/*
 * test_cpu_vec_norm.c - the Softmax, LogSoftmax and LayerNormalization tactics (AVX-512 and
 * AVX2) against the reference kernels within 1e-5 relative: rows of 1 to 4099 elements (not
 * multiples of the vector width), BERT shapes, the axis rules of opset 13 and of the older 2-D
 * coercion, large and offset values (max subtraction, double accumulation), NaN and infinite
 * entries, Scale / B shapes and no B, with and without a 2-thread pool; and the steps supports()
 * rejects.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "backends/cpu/tactics.h"
#include "core/fused_attr.h"
#include "dense_test_util.h"

#include "cpu_vec_test_util.h"

#define NORM_TOL 1e-5

static const tc__tactic *const kSoftmax[] = {&tc__tactic_softmax_f32_avx512, &tc__tactic_softmax_f32_avx2};
static const tc__tactic *const kLogSoftmax[] = {&tc__tactic_logsoftmax_f32_avx512, &tc__tactic_logsoftmax_f32_avx2};
static const tc__tactic *const kLayerNorm[] = {&tc__tactic_layernorm_f32_avx512, &tc__tactic_layernorm_f32_avx2};

/* Softmax and LogSoftmax of x (random in [lo, hi)) with this opset and optional axis; with nan_to, the
 * step carries the NaN guard TC__ATTR_NAN_TO = *nan_to (pass fuse_nan_guard) and no output may be NaN. */
static void check_softmax_guard(const tc__tensor *x, int64_t opset, const int64_t *axis, const float *nan_to,
                                const char *what) {
    tc__attr attrs[2];
    int na = 0;
    if (axis) attrs[na++] = dtu_attr_int("axis", *axis);
    if (nan_to) attrs[na++] = (tc__attr){.name = TC__ATTR_NAN_TO, .kind = TC__ATTR_FLOAT, .f = *nan_to};
    char msg[160], sh[64];
    for (int lg = 0; lg < 2; lg++) {
        vtu_step s = vtu_step_of(lg ? "LogSoftmax" : "Softmax", opset);
        s.attrs = attrs;
        s.n_attrs = na;
        s.n_in = 1;
        s.in[0] = x;
        snprintf(msg, sizeof msg, "%s %s %s opset %lld axis %lld", what, s.op,
                 tc__shape_str(x->rank, x->dims, sh, sizeof sh), (long long)opset, axis ? (long long)*axis : 99LL);
        if (nan_to) {
            tc__tensor ref;
            vtu_reference(lg ? DTU_OP(LogSoftmax) : DTU_OP(Softmax), &s, &ref);
            for (int64_t i = 0; i < tc__tensor_numel(&ref); i++)
                if (isnan(((const float *)ref.data)[i])) fail_msg("%s: the reference left a NaN at %lld", msg, (long long)i);
            tc__tensor_free(&ref);
        }
        vtu_check(lg ? DTU_OP(LogSoftmax) : DTU_OP(Softmax), &s, lg ? kLogSoftmax : kSoftmax, 2, NORM_TOL, msg);
    }
}

static void check_softmax_x(const tc__tensor *x, int64_t opset, const int64_t *axis, const char *what) {
    check_softmax_guard(x, opset, axis, NULL, what);
}

static void check_softmax(uint64_t seed, int32_t rank, const int64_t *dims, double lo, double hi, int64_t opset,
                          const int64_t *axis, const char *what) {
    dtu_rng r = {seed};
    tc__tensor x = vtu_random(&r, rank, dims, lo, hi);
    check_softmax_x(&x, opset, axis, what);
    tc__tensor_free(&x);
}

static void test_softmax_rows(void **state) {
    (void)state;
    const int64_t lens[] = {1, 2, 7, 15, 16, 17, 31, 33, 56, 112, 128, 241, 256, 257, 1000, 4099}; /* <= 256: in registers */
    uint64_t seed = 1;
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        int64_t d[2] = {3, lens[i]};
        check_softmax(seed++, 2, d, -4.0, 4.0, 13, NULL, "rows");
        check_softmax(seed++, 2, d, -60.0, 60.0, 13, NULL, "wide rows");
        check_softmax(seed++, 2, d, 900.0, 1000.0, 13, NULL, "offset rows"); /* exp overflows without the max */
    }
    const int64_t bert[4] = {1, 12, 128, 128}, many[2] = {3001, 17};
    check_softmax(seed++, 4, bert, -8.0, 8.0, 13, NULL, "bert attention");
    check_softmax(seed++, 2, many, -8.0, 8.0, 13, NULL, "many short rows");
    const int64_t one[1] = {37};
    check_softmax(seed++, 1, one, -3.0, 3.0, 13, NULL, "rank 1");
    check_softmax(seed++, 0, NULL, -3.0, 3.0, 13, NULL, "scalar");
}

static void test_softmax_axes(void **state) {
    (void)state;
    uint64_t seed = 100;
    const int64_t d3[3] = {2, 3, 17}, d3t[3] = {2, 19, 1}, d4t[4] = {2, 5, 1, 1};
    const int64_t m1 = -1, a2 = 2, a1 = 1, a0 = 0, a3 = 3;
    check_softmax(seed++, 3, d3, -5.0, 5.0, 13, &m1, "axis -1");
    check_softmax(seed++, 3, d3, -5.0, 5.0, 13, &a2, "axis 2");
    check_softmax(seed++, 3, d3t, -5.0, 5.0, 13, &a1, "axis 1, trailing 1");
    check_softmax(seed++, 4, d4t, -5.0, 5.0, 13, &a1, "axis 1, trailing 1s");
    /* before opset 13: rows of prod(dims[axis:]) */
    check_softmax(seed++, 3, d3, -5.0, 5.0, 11, NULL, "legacy default axis 1");
    check_softmax(seed++, 3, d3, -5.0, 5.0, 11, &a0, "legacy axis 0");
    check_softmax(seed++, 3, d3, -5.0, 5.0, 11, &a2, "legacy axis 2");
    check_softmax(seed++, 3, d3, -5.0, 5.0, 11, &a3, "legacy axis = rank");
}

/* NaN turns its row into NaN; +inf gives NaN rows (inf - inf), -inf entries give 0 (-inf for LogSoftmax). */
static void test_softmax_special(void **state) {
    (void)state;
    int64_t d[2] = {6, 21};
    dtu_rng r = {200};
    tc__tensor x = vtu_random(&r, 2, d, -5.0, 5.0);
    float *p = x.data;
    p[0 * 21 + 3] = NAN;
    p[1 * 21 + 20] = INFINITY;
    p[2 * 21 + 0] = -INFINITY;
    p[2 * 21 + 17] = -INFINITY;
    for (int j = 0; j < 21; j++) p[3 * 21 + j] = -INFINITY;
    p[4 * 21 + 5] = 1e30f;
    p[5 * 21 + 16] = -1e30f;
    check_softmax_x(&x, 13, NULL, "special values");
    /* With the NaN guard: the NaN rows (0, 1 and the all -inf row 3) take the guard's value, exactly. */
    const float guards[2] = {0.0f, -3.5f};
    for (int k = 0; k < 2; k++) check_softmax_guard(&x, 13, NULL, &guards[k], "special values, NaN guard");
    const int64_t d2[2] = {5, 16};
    tc__tensor x2 = vtu_random(&r, 2, d2, -5.0, 5.0);
    for (int j = 0; j < 16; j++) ((float *)x2.data)[2 * 16 + j] = -INFINITY; /* a fully masked row, no tail */
    check_softmax_guard(&x2, 13, NULL, &guards[1], "full vectors, NaN guard");
    tc__tensor_free(&x2);
    tc__tensor_free(&x);
}

static bool softmax_supports(const tc__tensor *x, const tc__tensor *y, int64_t opset, const int64_t *axis) {
    tc__attr attrs[1];
    int na = 0;
    if (axis) attrs[na++] = dtu_attr_int("axis", *axis);
    const tc__tensor *in[1] = {x};
    tc__attrs as = {na, attrs};
    return vtu_softmax_supports(kSoftmax, kLogSoftmax, 2, &as, opset, 1, in, y);
}

static void test_softmax_rejects(void **state) {
    (void)state;
    tc__tensor x = {TC_DTYPE_FLOAT32, 3, {2, 3, 4}, NULL, 0};
    const int64_t a0 = 0, a1 = 1, m1 = -1, a3 = 3;
    assert_true(softmax_supports(&x, &x, 13, &m1));
    assert_false(softmax_supports(&x, &x, 13, &a0)); /* not innermost */
    assert_false(softmax_supports(&x, &x, 13, &a1));
    assert_false(softmax_supports(&x, &x, 13, &a3)); /* out of range */
    tc__tensor x64 = x, y2 = x;
    x64.dtype = TC_DTYPE_FLOAT64;
    y2.dims[2] = 5;
    assert_false(softmax_supports(&x64, &x64, 13, NULL));
    assert_false(softmax_supports(&x, &y2, 13, NULL));
}

/* ---- LayerNormalization --------------------------------------------------------------- */

/* LayerNormalization of x [.., n] with scale (and bias) of rank prank over the last prank dims. */
static void check_layernorm(uint64_t seed, int32_t rank, const int64_t *dims, int64_t axis, int32_t prank, bool bias,
                            double lo, double hi, float eps, const char *what) {
    dtu_rng r = {seed};
    tc__tensor x = vtu_random(&r, rank, dims, lo, hi);
    tc__tensor sc = vtu_random(&r, prank, dims + rank - prank, 0.5, 1.5);
    tc__tensor b = vtu_random(&r, prank, dims + rank - prank, -1.0, 1.0);
    tc__attr attrs[2] = {dtu_attr_int("axis", axis), dtu_attr_float("epsilon", eps)};
    vtu_step s = vtu_step_of("LayerNormalization", 17);
    s.attrs = attrs;
    s.n_attrs = 2;
    s.n_in = bias ? 3 : 2;
    s.in[0] = &x;
    s.in[1] = &sc;
    s.in[2] = bias ? &b : NULL;
    char msg[160], sh[64];
    snprintf(msg, sizeof msg, "%s %s axis %lld%s", what, tc__shape_str(rank, dims, sh, sizeof sh), (long long)axis,
             bias ? " +B" : "");
    vtu_check(DTU_OP(LayerNormalization), &s, kLayerNorm, 2, NORM_TOL, msg);
    tc__tensor_free(&b);
    tc__tensor_free(&sc);
    tc__tensor_free(&x);
}

static void test_layernorm(void **state) {
    (void)state;
    const int64_t lens[] = {1, 2, 7, 15, 16, 17, 33, 56, 112, 768, 1024, 4099};
    uint64_t seed = 300;
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        int64_t d[2] = {5, lens[i]};
        check_layernorm(seed++, 2, d, -1, 1, true, -2.0, 2.0, 1e-5f, "rows");
        check_layernorm(seed++, 2, d, 1, 1, false, -2.0, 2.0, 1e-5f, "rows, no B");
        check_layernorm(seed++, 2, d, -1, 1, true, 1000.0, 1000.01, 1e-12f, "offset rows");
    }
    const int64_t bert[3] = {1, 128, 768}, big[3] = {2, 64, 1023};
    check_layernorm(seed++, 3, bert, -1, 1, true, -3.0, 3.0, 1e-12f, "bert");
    check_layernorm(seed++, 3, big, 2, 1, true, -3.0, 3.0, 1e-5f, "threaded");
    /* normalising several trailing dims: rows of prod(dims[axis:]) */
    const int64_t d4[4] = {2, 3, 5, 7};
    check_layernorm(seed++, 4, d4, 2, 2, true, -2.0, 2.0, 1e-5f, "axis 2 of 4");
    check_layernorm(seed++, 4, d4, 1, 3, true, -2.0, 2.0, 1e-5f, "axis 1 of 4");
    const int64_t d4b[4] = {2, 1, 5, 7};
    check_layernorm(seed++, 4, d4b, 1, 2, false, -2.0, 2.0, 1e-5f, "axis 1, scale over the last 2 (leading 1)");
}

static bool ln_supports(const tc__tensor *x, const tc__tensor *scale, const tc__tensor *bias, int n_out,
                        const tc__tensor *const *out, int64_t axis) {
    tc__attr attrs[1] = {dtu_attr_int("axis", axis)};
    const tc__tensor *in[3] = {x, scale, bias};
    bool in_const[3] = {false, true, true};
    tc__attrs as = {1, attrs};
    tc__epilogue none = tc__epilogue_none();
    tc__step_desc d = {"LayerNormalization", 17, &as, bias ? 3 : 2, in, in_const, n_out, out, &none, NULL, NULL, NULL, 0};
    bool a = kLayerNorm[0]->supports(&d), b = kLayerNorm[1]->supports(&d);
    assert_int_equal(a, b);
    return a;
}

static void test_layernorm_rejects(void **state) {
    (void)state;
    tc__tensor x = {TC_DTYPE_FLOAT32, 3, {2, 4, 6}, NULL, 0}, sc = {TC_DTYPE_FLOAT32, 1, {6}, NULL, 0};
    tc__tensor mean = {TC_DTYPE_FLOAT32, 3, {2, 4, 1}, NULL, 0};
    const tc__tensor *out1[1] = {&x}, *out2[2] = {&x, &mean}, *out3n[3] = {&x, NULL, NULL};
    assert_true(ln_supports(&x, &sc, &sc, 1, out1, -1));
    assert_true(ln_supports(&x, &sc, NULL, 3, out3n, -1));
    assert_false(ln_supports(&x, &sc, &sc, 2, out2, -1)); /* Mean requested */
    tc__tensor s1 = {TC_DTYPE_FLOAT32, 1, {1}, NULL, 0}, s46 = {TC_DTYPE_FLOAT32, 2, {4, 6}, NULL, 0};
    assert_false(ln_supports(&x, &s1, NULL, 1, out1, -1));  /* broadcast Scale */
    assert_false(ln_supports(&x, &s46, NULL, 1, out1, -1)); /* Scale of more dims than normalised */
    assert_true(ln_supports(&x, &s46, NULL, 1, out1, 1));
    assert_false(ln_supports(&x, &sc, NULL, 1, out1, 1)); /* [6] against [4, 6]: a broadcast */
    tc__tensor sc64 = sc, x64 = x;
    sc64.dtype = x64.dtype = TC_DTYPE_FLOAT64;
    const tc__tensor *out64[1] = {&x64};
    assert_false(ln_supports(&x, &sc64, NULL, 1, out1, -1));
    assert_false(ln_supports(&x64, &sc64, NULL, 1, out64, -1));
    assert_false(ln_supports(&x, &sc, NULL, 1, out1, 3));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_softmax_rows),    cmocka_unit_test(test_softmax_axes),
        cmocka_unit_test(test_softmax_special), cmocka_unit_test(test_softmax_rejects),
        cmocka_unit_test(test_layernorm),       cmocka_unit_test(test_layernorm_rejects),
    };
    return cmocka_run_group_tests(tests, vtu_setup, vtu_teardown);
}
