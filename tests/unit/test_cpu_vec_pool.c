/*
 * test_cpu_vec_pool.c - the MaxPool, AveragePool and GlobalAveragePool tactics (AVX-512 and
 * AVX2) against the reference kernels: widths 1 to 112, kernels 1x1 to 13x13 and rectangular,
 * strides 1, 2 and larger, symmetric / asymmetric / automatic padding, ceil_mode,
 * count_include_pad both ways, NaN and infinite inputs, ResNet / Inception / DenseNet / SPP /
 * EfficientNet shapes, with and without a 2-thread pool; and the steps supports() rejects.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "backends/cpu/tactics.h"
#include "dense_test_util.h"

#include "cpu_vec_test_util.h"

static const tc__tactic *const kMax[] = {&tc__tactic_maxpool_f32_avx512, &tc__tactic_maxpool_f32_avx2};
static const tc__tactic *const kAvg[] = {&tc__tactic_avgpool_f32_avx512, &tc__tactic_avgpool_f32_avx2};
static const tc__tactic *const kGap[] = {&tc__tactic_gavgpool_f32_avx512, &tc__tactic_gavgpool_f32_avx2};

#define POOL_TOL 2e-6

typedef struct pool_case {
    int64_t n, c, h, w, kh, kw, sh, sw;
    int64_t pads[4]; /* top, left, bottom, right */
    bool ceil_mode, cip;
    const char *auto_pad;
    double nan_rate; /* fraction of inputs set to NaN (and as many to -inf / +inf) */
} pool_case;

/* Runs one case through the MaxPool (max) or AveragePool tactics. */
static void check_pool(uint64_t seed, const pool_case *c, bool max, const char *what) {
    dtu_rng r = {seed};
    int64_t xd[4] = {c->n, c->c, c->h, c->w};
    tc__tensor x = vtu_random(&r, 4, xd, -2.0, 2.0);
    float *xp = x.data;
    for (int64_t i = 0; c->nan_rate > 0 && i < tc__tensor_numel(&x); i++) {
        double u = dtu_uniform(&r, 0.0, 1.0);
        if (u < c->nan_rate) xp[i] = NAN;
        else if (u < 1.2 * c->nan_rate) xp[i] = max ? -INFINITY : INFINITY;
    }
    int64_t ks[2] = {c->kh, c->kw}, strides[2] = {c->sh, c->sw};
    int64_t pads[4] = {c->pads[0], c->pads[1], c->pads[2], c->pads[3]};
    tc__attr attrs[5];
    int na = 0;
    attrs[na++] = dtu_attr_ints("kernel_shape", ks, 2);
    attrs[na++] = dtu_attr_ints("strides", strides, 2);
    if (c->auto_pad) attrs[na++] = dtu_attr_string("auto_pad", c->auto_pad);
    else attrs[na++] = dtu_attr_ints("pads", pads, 4);
    attrs[na++] = dtu_attr_int("ceil_mode", c->ceil_mode);
    if (!max) attrs[na++] = dtu_attr_int("count_include_pad", c->cip);
    vtu_step s = vtu_step_of(max ? "MaxPool" : "AveragePool", 13);
    s.attrs = attrs;
    s.n_attrs = na;
    s.n_in = 1;
    s.in[0] = &x;
    char msg[200];
    snprintf(msg, sizeof msg, "%s %s: %lldx%lldx%lldx%lld k%lldx%lld s%lld,%lld pads %lld,%lld,%lld,%lld%s%s%s", what,
             s.op, (long long)c->n, (long long)c->c, (long long)c->h, (long long)c->w, (long long)c->kh,
             (long long)c->kw, (long long)c->sh, (long long)c->sw, (long long)pads[0], (long long)pads[1],
             (long long)pads[2], (long long)pads[3], c->ceil_mode ? " ceil" : "", c->cip ? " cip" : "",
             c->auto_pad ? c->auto_pad : "");
    vtu_check(max ? DTU_OP(MaxPool) : DTU_OP(AveragePool), &s, max ? kMax : kAvg, 2, POOL_TOL, msg);
    tc__tensor_free(&x);
}

static void check_both(uint64_t seed, const pool_case *c, const char *what) {
    check_pool(seed, c, true, what);
    pool_case a = *c;
    a.cip = false;
    check_pool(seed + 1, &a, false, what);
    a.cip = true;
    check_pool(seed + 2, &a, false, what);
}

static pool_case square(int64_t c, int64_t h, int64_t w, int64_t k, int64_t s, int64_t p) {
    pool_case q = {1, c, h, w, k, k, s, s, {p, p, p, p}, false, false, NULL, 0.0};
    return q;
}

static void test_widths(void **state) {
    (void)state;
    const int64_t widths[] = {1, 7, 15, 17, 33, 56, 112};
    const int64_t geo[][3] = {{3, 2, 1}, {2, 2, 0}, {3, 1, 1}, {5, 1, 2}, {3, 3, 1}, {1, 1, 0}, {4, 4, 0}};
    uint64_t seed = 1;
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++)
        for (size_t g = 0; g < sizeof geo / sizeof geo[0]; g++) {
            if (widths[i] + 2 * geo[g][2] < geo[g][0]) continue;
            pool_case c = square(3, 9, widths[i], geo[g][0], geo[g][1], geo[g][2]);
            check_both(seed, &c, "widths");
            seed += 3;
        }
}

static void test_random(void **state) {
    (void)state;
    dtu_rng r = {999};
    for (int t = 0; t < 150; t++) {
        pool_case c;
        memset(&c, 0, sizeof c);
        c.n = 1 + (int64_t)(dtu_next(&r) % 2);
        c.c = 1 + (int64_t)(dtu_next(&r) % 4);
        c.h = 1 + (int64_t)(dtu_next(&r) % 19);
        c.w = 1 + (int64_t)(dtu_next(&r) % 75);
        c.kh = 1 + (int64_t)(dtu_next(&r) % 6);
        c.kw = 1 + (int64_t)(dtu_next(&r) % 7);
        c.sh = 1 + (int64_t)(dtu_next(&r) % 3);
        c.sw = 1 + (int64_t)(dtu_next(&r) % 4);
        c.pads[0] = (int64_t)(dtu_next(&r) % (uint64_t)c.kh);
        c.pads[2] = (int64_t)(dtu_next(&r) % (uint64_t)c.kh);
        c.pads[1] = (int64_t)(dtu_next(&r) % (uint64_t)c.kw);
        c.pads[3] = (int64_t)(dtu_next(&r) % (uint64_t)c.kw);
        c.ceil_mode = dtu_next(&r) % 2;
        if (c.h + c.pads[0] + c.pads[2] < c.kh || c.w + c.pads[1] + c.pads[3] < c.kw) {
            t--;
            continue;
        }
        check_both(5000 + 3 * (uint64_t)t, &c, "random");
    }
}

static void test_auto_pad(void **state) {
    (void)state;
    const char *modes[] = {"SAME_UPPER", "SAME_LOWER", "VALID"};
    uint64_t seed = 300;
    for (int m = 0; m < 3; m++)
        for (int64_t k = 2; k <= 4; k++)
            for (int64_t s = 1; s <= 3; s++) {
                pool_case c = square(2, 11, 37, k, s, 0);
                c.auto_pad = modes[m];
                check_both(seed, &c, "auto_pad");
                seed += 3;
            }
}

/* NaN is skipped by the max unless a whole window is NaN; -inf and +inf flow through. */
static void test_special_values(void **state) {
    (void)state;
    uint64_t seed = 700;
    const int64_t geo[][3] = {{2, 2, 0}, {3, 1, 1}, {3, 2, 1}, {2, 3, 1}};
    for (size_t g = 0; g < sizeof geo / sizeof geo[0]; g++)
        for (int64_t w = 5; w <= 41; w += 12) {
            pool_case c = square(3, 8, w, geo[g][0], geo[g][1], geo[g][2]);
            c.nan_rate = 0.45;
            check_both(seed, &c, "NaN/inf");
            seed += 3;
        }
}

static void test_model_shapes(void **state) {
    (void)state;
    pool_case c = square(64, 112, 112, 3, 2, 1);
    check_pool(800, &c, true, "resnet stem maxpool");
    c = square(192, 28, 28, 3, 1, 1);
    check_both(801, &c, "inception 3x3 s1");
    c = square(128, 56, 56, 2, 2, 0);
    check_pool(804, &c, false, "densenet transition avgpool");
    c = square(256, 20, 20, 5, 1, 2);
    check_pool(805, &c, true, "SPP 5x5");
    c = square(8, 20, 20, 13, 1, 6);
    check_pool(806, &c, true, "SPP 13x13");
    c = square(16, 35, 35, 3, 2, 0);
    c.ceil_mode = true;
    check_both(807, &c, "ceil_mode 3x3 s2");
}

/* GlobalAveragePool over x of this shape. */
static void check_gap(uint64_t seed, int32_t rank, const int64_t *dims, const char *what) {
    dtu_rng r = {seed};
    tc__tensor x = vtu_random(&r, rank, dims, -2.0, 2.0);
    vtu_step s = vtu_step_of("GlobalAveragePool", 13);
    s.n_in = 1;
    s.in[0] = &x;
    vtu_check(DTU_OP(GlobalAveragePool), &s, kGap, 2, 1e-6, what);
    tc__tensor_free(&x);
}

static void test_global_average(void **state) {
    (void)state;
    const int64_t shapes[][4] = {{1, 1280, 7, 7}, {2, 3, 1, 1}, {1, 5, 17, 33}, {1, 32, 112, 112}, {1, 96, 56, 56},
                                 {3, 7, 1, 15},   {1, 1, 1, 17}, {2, 9, 4, 4}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) check_gap(900 + i, 4, shapes[i], "gap");
    const int64_t r3[3] = {2, 3, 17}, r5[5] = {1, 2, 3, 4, 5}, r2[2] = {4, 6};
    check_gap(950, 3, r3, "gap rank 3");
    check_gap(951, 5, r5, "gap rank 5");
    check_gap(952, 2, r2, "gap rank 2");
    /* offset data: double accumulation keeps the mean exact */
    int64_t d[4] = {1, 4, 64, 64};
    dtu_rng r = {953};
    tc__tensor x = vtu_random(&r, 4, d, 1000.0, 1000.001);
    vtu_step s = vtu_step_of("GlobalAveragePool", 13);
    s.n_in = 1;
    s.in[0] = &x;
    vtu_check(DTU_OP(GlobalAveragePool), &s, kGap, 2, 1e-7, "gap offset");
    tc__tensor_free(&x);
}

/* supports() of every tactic in ts (they must agree) on a one-input pooling step. */
static bool pool_supports(const tc__tactic *const *ts, const char *op, const tc__tensor *x, int n_out,
                          const tc__tensor *const *out, const tc__attr *attrs, int na) {
    const tc__tensor *in[1] = {x};
    bool in_const[1] = {false};
    tc__attrs as = {na, attrs};
    tc__epilogue none = tc__epilogue_none();
    tc__step_desc d = {op, 13, &as, 1, in, in_const, n_out, out, &none, NULL, NULL, NULL, 0};
    bool a = ts[0]->supports(&d), b = ts[1]->supports(&d);
    assert_int_equal(a, b);
    return a;
}

static void test_rejects(void **state) {
    (void)state;
    int64_t k3[2] = {3, 3}, p1[4] = {1, 1, 1, 1}, d2[2] = {2, 2}, k3_1[1] = {3}, p1_1[2] = {1, 1};
    tc__attr ok[2] = {dtu_attr_ints("kernel_shape", k3, 2), dtu_attr_ints("pads", p1, 4)};
    tc__tensor x = {TC_DTYPE_FLOAT32, 4, {1, 4, 9, 9}, NULL, 0}, y = {TC_DTYPE_FLOAT32, 4, {1, 4, 9, 9}, NULL, 0};
    tc__tensor ind = {TC_DTYPE_INT64, 4, {1, 4, 9, 9}, NULL, 0};
    const tc__tensor *out1[1] = {&y}, *out2[2] = {&y, &ind}, *out2n[2] = {&y, NULL};
    assert_true(pool_supports(kMax, "MaxPool", &x, 1, out1, ok, 2));
    assert_true(pool_supports(kMax, "MaxPool", &x, 2, out2n, ok, 2)); /* Indices not requested */
    assert_true(pool_supports(kAvg, "AveragePool", &x, 1, out1, ok, 2));
    assert_false(pool_supports(kMax, "MaxPool", &x, 2, out2, ok, 2)); /* Indices */
    tc__attr dil[3] = {dtu_attr_ints("kernel_shape", k3, 2), dtu_attr_ints("pads", p1, 4),
                       dtu_attr_ints("dilations", d2, 2)};
    tc__tensor y7 = {TC_DTYPE_FLOAT32, 4, {1, 4, 7, 7}, NULL, 0};
    const tc__tensor *out7[1] = {&y7};
    assert_false(pool_supports(kMax, "MaxPool", &x, 1, out7, dil, 3));
    tc__tensor x64 = x, y64 = y;
    x64.dtype = y64.dtype = TC_DTYPE_FLOAT64;
    const tc__tensor *out64[1] = {&y64};
    assert_false(pool_supports(kMax, "MaxPool", &x64, 1, out64, ok, 2));
    assert_false(pool_supports(kAvg, "AveragePool", &x64, 1, out64, ok, 2));
    tc__tensor x1 = {TC_DTYPE_FLOAT32, 3, {1, 4, 9}, NULL, 0}, y1 = {TC_DTYPE_FLOAT32, 3, {1, 4, 9}, NULL, 0};
    const tc__tensor *out1d[1] = {&y1};
    tc__attr a1[2] = {dtu_attr_ints("kernel_shape", k3_1, 1), dtu_attr_ints("pads", p1_1, 2)};
    assert_false(pool_supports(kMax, "MaxPool", &x1, 1, out1d, a1, 2)); /* 1-D pooling */
    tc__attr no_kernel[1] = {dtu_attr_ints("pads", p1, 4)};
    assert_false(pool_supports(kAvg, "AveragePool", &x, 1, out1, no_kernel, 1));
    tc__attr bad_cip[3] = {dtu_attr_ints("kernel_shape", k3, 2), dtu_attr_ints("pads", p1, 4),
                           dtu_attr_int("count_include_pad", 2)};
    assert_false(pool_supports(kAvg, "AveragePool", &x, 1, out1, bad_cip, 3));
    /* GlobalAveragePool: output must be [N, C, 1, 1] of float32 */
    tc__tensor g = {TC_DTYPE_FLOAT32, 4, {1, 4, 1, 1}, NULL, 0}, gbad = {TC_DTYPE_FLOAT32, 4, {1, 4, 1, 2}, NULL, 0};
    const tc__tensor *og[1] = {&g}, *ogbad[1] = {&gbad}, *og64[1] = {&y64};
    assert_true(pool_supports(kGap, "GlobalAveragePool", &x, 1, og, NULL, 0));
    assert_false(pool_supports(kGap, "GlobalAveragePool", &x, 1, ogbad, NULL, 0));
    assert_false(pool_supports(kGap, "GlobalAveragePool", &x64, 1, og64, NULL, 0));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_widths),         cmocka_unit_test(test_random),
        cmocka_unit_test(test_auto_pad),       cmocka_unit_test(test_special_values),
        cmocka_unit_test(test_model_shapes),   cmocka_unit_test(test_global_average),
        cmocka_unit_test(test_rejects),
    };
    return cmocka_run_group_tests(tests, vtu_setup, vtu_teardown);
}
