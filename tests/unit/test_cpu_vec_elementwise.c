/*
 * test_cpu_vec_elementwise.c - the elementwise tactics (AVX-512 and AVX2) against the reference
 * kernels: Add / Sub / Mul / Div on same shapes, scalars, per-channel ([1, C, 1, 1], [C, 1, 1],
 * [N, C, 1, 1]) and row operands on either side, with every fused activation and a residual;
 * the unary Relu, Sigmoid, Tanh, Erf, Gelu (erf and tanh), HardSwish, HardSigmoid, LeakyRelu
 * and Clip (attribute and input bounds) on sizes 1 to 100003 including NaN, infinities, zeros
 * and huge values; with and without a 2-thread pool; and the steps supports() rejects.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "backends/cpu/tactics.h"
#include "dense_test_util.h"

#include "cpu_vec_test_util.h"

/* ---- binary ops ------------------------------------------------------------------------ */

typedef struct bin_op {
    const char *name;
    dtu_op ref;
    const tc__tactic *t[2];
} bin_op;

static const bin_op kBin[4] = {
    {"Add", DTU_OP(Add), {&tc__tactic_add_f32_avx512, &tc__tactic_add_f32_avx2}},
    {"Sub", DTU_OP(Sub), {&tc__tactic_sub_f32_avx512, &tc__tactic_sub_f32_avx2}},
    {"Mul", DTU_OP(Mul), {&tc__tactic_mul_f32_avx512, &tc__tactic_mul_f32_avx2}},
    {"Div", DTU_OP(Div), {&tc__tactic_div_f32_avx512, &tc__tactic_div_f32_avx2}},
};

/* op(a, b) with shapes ra/ad and rb/bd, optional epilogue activation and residual. */
static void check_binary(uint64_t seed, const bin_op *op, int32_t ra, const int64_t *ad, int32_t rb,
                         const int64_t *bd, const tc__epilogue *epi, bool residual) {
    dtu_rng r = {seed};
    tc__tensor a = vtu_random(&r, ra, ad, -3.0, 3.0), b = vtu_random(&r, rb, bd, -3.0, 3.0);
    vtu_step s = vtu_step_of(op->name, 14);
    s.n_in = 2;
    s.in[0] = &a;
    s.in[1] = &b;
    if (epi) s.epi = *epi;
    tc__tensor ref, res = {0};
    dtu_run_ok(op->ref, 14, NULL, 0, 2, s.in, 1, &ref);
    if (residual) {
        res = vtu_random(&r, ref.rank, ref.dims, -2.0, 2.0);
        s.residual = &res;
        s.epi.residual_input = 2;
    }
    tc__err err = {0};
    if (tc__epilogue_apply(&s.epi, &ref, NULL, s.residual, &err) != TC_STATUS_OK) fail_msg("%s", err.msg);
    char sa[64], sb[64], msg[200];
    snprintf(msg, sizeof msg, "%s %s %s act %d%s", op->name, tc__shape_str(ra, ad, sa, sizeof sa),
             tc__shape_str(rb, bd, sb, sizeof sb), (int)s.epi.act, residual ? " +res" : "");
    /* without an epilogue the result is one IEEE operation, as in the reference: exact */
    double tol = tc__epilogue_is_none(&s.epi) ? 0.0 : 2e-6;
    for (int i = 0; i < 2; i++) vtu_check_against(op->t[i], &s, &ref, tol, msg);
    if (residual) tc__tensor_free(&res);
    tc__tensor_free(&ref);
    tc__tensor_free(&b);
    tc__tensor_free(&a);
}

typedef struct shape_pair {
    int32_t ra;
    int64_t ad[4];
    int32_t rb;
    int64_t bd[4];
} shape_pair;

static const shape_pair kPairs[] = {
    /* same shape */
    {4, {2, 3, 5, 7}, 4, {2, 3, 5, 7}},
    {3, {1, 128, 768}, 3, {1, 128, 768}},
    {1, {17}, 1, {17}},
    {1, {1}, 1, {1}},
    {0, {0}, 0, {0}},
    {1, {100003}, 1, {100003}},
    {3, {5, 3, 7}, 2, {3, 7}}, /* leading dims of the full operand's own: same layout */
    /* scalars, both sides */
    {4, {2, 3, 5, 7}, 0, {0}},
    {4, {2, 3, 5, 7}, 1, {1}},
    {4, {2, 3, 5, 7}, 4, {1, 1, 1, 1}},
    {0, {0}, 4, {2, 3, 5, 7}},
    {1, {1}, 1, {33}},
    /* per channel */
    {4, {1, 16, 7, 9}, 4, {1, 16, 1, 1}},
    {4, {1, 16, 7, 9}, 3, {16, 1, 1}},
    {4, {2, 5, 3, 17}, 4, {1, 5, 1, 1}},
    {4, {2, 5, 3, 17}, 4, {2, 5, 1, 1}},
    {4, {1, 5, 1, 1}, 4, {2, 5, 6, 7}},
    {3, {5, 1, 1}, 4, {1, 5, 13, 3}},
    {4, {1, 32, 112, 112}, 4, {1, 32, 1, 1}},
    /* rows over the last dim(s), both sides */
    {3, {1, 128, 768}, 1, {768}},
    {3, {4, 7, 33}, 1, {33}},
    {3, {4, 7, 33}, 2, {1, 33}},
    {1, {33}, 3, {4, 7, 33}},
    {3, {3, 7, 33}, 2, {7, 33}},
    /* a run of dims in the middle */
    {4, {2, 3, 4, 5}, 3, {3, 4, 1}},
    {4, {2, 3, 4, 5}, 4, {2, 3, 1, 1}},
};

static void test_binary_shapes(void **state) {
    (void)state;
    uint64_t seed = 1;
    for (int o = 0; o < 4; o++)
        for (size_t p = 0; p < sizeof kPairs / sizeof kPairs[0]; p++, seed++)
            check_binary(seed, &kBin[o], kPairs[p].ra, kPairs[p].ad, kPairs[p].rb, kPairs[p].bd, NULL, false);
}

static void test_binary_epilogues(void **state) {
    (void)state;
    uint64_t seed = 500;
    const int64_t full[4] = {2, 5, 7, 19}, chan[4] = {1, 5, 1, 1}, big[1] = {40001};
    for (int o = 0; o < 4; o++)
        for (int e = 0; e < VTU_N_EPILOGUES; e++)
            for (int res = 0; res < 2; res++) {
                check_binary(seed++, &kBin[o], 4, full, 4, full, &vtu_epilogues[e], res == 1);
                check_binary(seed++, &kBin[o], 4, chan, 4, full, &vtu_epilogues[e], res == 1);
                check_binary(seed++, &kBin[o], 1, big, 0, NULL, &vtu_epilogues[e], res == 1);
            }
}

/* supports() of both tactics of op (they must agree). */
static bool bin_supports(const bin_op *op, const tc__tensor *a, const tc__tensor *b, const tc__tensor *y,
                         const tc__epilogue *epi, const tc__tensor *ebias, const tc__tensor *res) {
    const tc__tensor *in[2] = {a, b}, *out[1] = {y};
    bool in_const[2] = {false, false};
    tc__attrs as = {0, NULL};
    tc__epilogue none = tc__epilogue_none();
    tc__step_desc d = {op->name, 14, &as, 2, in, in_const, 1, out, epi ? epi : &none, ebias, res, NULL, 0};
    bool x = op->t[0]->supports(&d), z = op->t[1]->supports(&d);
    assert_int_equal(x, z);
    return x;
}

static void test_binary_rejects(void **state) {
    (void)state;
    tc__tensor full = {TC_DTYPE_FLOAT32, 4, {2, 3, 4, 5}, NULL, 0};
    tc__tensor mid1 = {TC_DTYPE_FLOAT32, 4, {2, 1, 4, 5}, NULL, 0};
    tc__tensor col = {TC_DTYPE_FLOAT32, 2, {3, 1}, NULL, 0}, row = {TC_DTYPE_FLOAT32, 2, {1, 4}, NULL, 0};
    tc__tensor outer = {TC_DTYPE_FLOAT32, 2, {3, 4}, NULL, 0};
    tc__tensor i32 = {TC_DTYPE_INT32, 4, {2, 3, 4, 5}, NULL, 0}, f64 = {TC_DTYPE_FLOAT64, 4, {2, 3, 4, 5}, NULL, 0};
    tc__tensor wrong_y = {TC_DTYPE_FLOAT32, 4, {2, 3, 4, 6}, NULL, 0};
    for (int o = 0; o < 4; o++) {
        const bin_op *op = &kBin[o];
        assert_true(bin_supports(op, &full, &full, &full, NULL, NULL, NULL));
        assert_false(bin_supports(op, &full, &mid1, &full, NULL, NULL, NULL)); /* broadcast inside the run */
        assert_false(bin_supports(op, &col, &row, &outer, NULL, NULL, NULL));  /* both operands broadcast */
        assert_false(bin_supports(op, &i32, &i32, &i32, NULL, NULL, NULL));
        assert_false(bin_supports(op, &f64, &f64, &f64, NULL, NULL, NULL));
        assert_false(bin_supports(op, &full, &full, &wrong_y, NULL, NULL, NULL));
        tc__tensor eb = {TC_DTYPE_FLOAT32, 1, {5}, NULL, 0};
        tc__epilogue with_bias = {2, -1, TC__ACT_RELU, 0, 0.0f, 0.0f};
        assert_false(bin_supports(op, &full, &full, &full, &with_bias, &eb, NULL));
        tc__epilogue with_res = {-1, 2, TC__ACT_NONE, 0, 0.0f, 0.0f};
        assert_true(bin_supports(op, &full, &full, &full, &with_res, NULL, &full));
        assert_false(bin_supports(op, &full, &full, &full, &with_res, NULL, &mid1));
        assert_false(bin_supports(op, &full, &full, &full, &with_res, NULL, NULL));
    }
}

/* ---- unary ops ------------------------------------------------------------------------- */

typedef struct un_op {
    const char *name;
    int64_t opset;
    dtu_op ref;
    const tc__tactic *t[2];
} un_op;

#define UN(Name, lower, opset) \
    {#Name, opset, DTU_OP(Name), {&tc__tactic_##lower##_f32_avx512, &tc__tactic_##lower##_f32_avx2}}

static const un_op kUnRelu = UN(Relu, relu, 14), kUnSigmoid = UN(Sigmoid, sigmoid, 13), kUnTanh = UN(Tanh, tanh, 13),
                   kUnErf = UN(Erf, erf, 13), kUnGelu = UN(Gelu, gelu, 20), kUnHardSwish = UN(HardSwish, hardswish, 14),
                   kUnHardSigmoid = UN(HardSigmoid, hardsigmoid, 6), kUnLeakyRelu = UN(LeakyRelu, leakyrelu, 16),
                   kUnClip = UN(Clip, clip, 13), kUnClip6 = UN(Clip, clip, 6);

static const float kSpecial[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e30f, -1e30f, 1e-30f, -1e-30f,
                                 100.0f, -100.0f, 88.0f, -88.0f, 10.0f, -10.0f, 3.0f, -3.0f, 6.0f, -6.0f};

/* Runs op on n random values in [-lo, lo) (the first ones special) with these attributes and extra inputs. */
static void check_unary(uint64_t seed, const un_op *op, int64_t n, double lo, const tc__attr *attrs, int na,
                        int n_extra, const tc__tensor *const *extra, double tol) {
    dtu_rng r = {seed};
    tc__tensor x = vtu_random(&r, 1, &n, -lo, lo);
    float *xp = x.data;
    for (int64_t i = 0; i < n && i < (int64_t)(sizeof kSpecial / sizeof kSpecial[0]); i++)
        xp[(i * 7) % n] = kSpecial[i];
    vtu_step s = vtu_step_of(op->name, op->opset);
    s.attrs = attrs;
    s.n_attrs = na;
    s.n_in = 1 + n_extra;
    s.in[0] = &x;
    for (int i = 0; i < n_extra; i++) s.in[1 + i] = extra[i];
    char msg[120];
    snprintf(msg, sizeof msg, "%s (opset %lld) n=%lld", op->name, (long long)op->opset, (long long)n);
    vtu_check(op->ref, &s, op->t, 2, tol, msg);
    tc__tensor_free(&x);
}

static const int64_t kSizes[] = {1, 7, 15, 17, 33, 1000, 100003};
#define N_SIZES ((int)(sizeof kSizes / sizeof kSizes[0]))

static void test_unary(void **state) {
    (void)state;
    uint64_t seed = 1000;
    tc__attr gelu_tanh[1] = {dtu_attr_string("approximate", "tanh")};
    tc__attr gelu_none[1] = {dtu_attr_string("approximate", "none")};
    tc__attr hs[2] = {dtu_attr_float("alpha", 0.3f), dtu_attr_float("beta", 0.4f)};
    tc__attr lr[1] = {dtu_attr_float("alpha", 0.2f)};
    tc__attr clip6[2] = {dtu_attr_float("min", -1.5f), dtu_attr_float("max", 2.5f)};
    tc__attr clip6_min[1] = {dtu_attr_float("min", 0.5f)};
    double vmin = -1.0, vmax = 6.0;
    int64_t one = 1, zero = 0;
    tc__tensor tmin = dtu_from_f64(TC_DTYPE_FLOAT32, 0, NULL, &vmin);
    tc__tensor tmax = dtu_from_f64(TC_DTYPE_FLOAT32, 1, &one, &vmax);
    tc__tensor tempty = dtu_tensor(TC_DTYPE_FLOAT32, 1, &zero);
    const tc__tensor *both[2] = {&tmin, &tmax}, *only_max[2] = {NULL, &tmax}, *only_min[1] = {&tmin};
    const tc__tensor *empty_min[2] = {&tempty, &tmax};
    for (int i = 0; i < N_SIZES; i++) {
        int64_t n = kSizes[i];
        check_unary(seed++, &kUnRelu, n, 4.0, NULL, 0, 0, NULL, 0.0);
        check_unary(seed++, &kUnSigmoid, n, 20.0, NULL, 0, 0, NULL, 1e-6);
        check_unary(seed++, &kUnTanh, n, 10.0, NULL, 0, 0, NULL, 1e-6);
        check_unary(seed++, &kUnErf, n, 5.0, NULL, 0, 0, NULL, 1e-6);
        check_unary(seed++, &kUnGelu, n, 10.0, NULL, 0, 0, NULL, 1e-6);
        check_unary(seed++, &kUnGelu, n, 10.0, gelu_none, 1, 0, NULL, 1e-6);
        check_unary(seed++, &kUnGelu, n, 10.0, gelu_tanh, 1, 0, NULL, 1e-6);
        check_unary(seed++, &kUnHardSwish, n, 8.0, NULL, 0, 0, NULL, 1e-6);
        check_unary(seed++, &kUnHardSigmoid, n, 8.0, NULL, 0, 0, NULL, 1e-6);
        check_unary(seed++, &kUnHardSigmoid, n, 8.0, hs, 2, 0, NULL, 1e-6);
        check_unary(seed++, &kUnLeakyRelu, n, 4.0, NULL, 0, 0, NULL, 1e-7);
        check_unary(seed++, &kUnLeakyRelu, n, 4.0, lr, 1, 0, NULL, 1e-7);
        check_unary(seed++, &kUnClip, n, 8.0, NULL, 0, 0, NULL, 0.0);
        check_unary(seed++, &kUnClip, n, 8.0, NULL, 0, 2, both, 0.0);
        check_unary(seed++, &kUnClip, n, 8.0, NULL, 0, 2, only_max, 0.0);
        check_unary(seed++, &kUnClip, n, 8.0, NULL, 0, 1, only_min, 0.0);
        check_unary(seed++, &kUnClip, n, 8.0, NULL, 0, 2, empty_min, 0.0);
        check_unary(seed++, &kUnClip6, n, 8.0, clip6, 2, 0, NULL, 0.0);
        check_unary(seed++, &kUnClip6, n, 8.0, clip6_min, 1, 0, NULL, 0.0);
        check_unary(seed++, &kUnClip6, n, 8.0, NULL, 0, 0, NULL, 0.0); /* +-FLT_MAX defaults clamp infinities */
    }
    tc__tensor_free(&tempty);
    tc__tensor_free(&tmax);
    tc__tensor_free(&tmin);
}

/* supports() of both tactics of op on a [3, 5] float input with these attributes and extra inputs. */
static bool un_supports(const un_op *op, tc_dtype dt, const int64_t *ydims, const tc__attr *attrs, int na, int n_extra,
                        const tc__tensor *const *extra) {
    tc__tensor x = {dt, 2, {3, 5}, NULL, 0}, y = {dt, 2, {ydims[0], ydims[1]}, NULL, 0};
    const tc__tensor *in[3] = {&x, n_extra > 0 ? extra[0] : NULL, n_extra > 1 ? extra[1] : NULL}, *out[1] = {&y};
    bool in_const[3] = {false, true, true};
    tc__attrs as = {na, attrs};
    tc__epilogue none = tc__epilogue_none();
    tc__step_desc d = {op->name, op->opset, &as, 1 + n_extra, in, in_const, 1, out, &none, NULL, NULL, NULL, 0};
    bool a = op->t[0]->supports(&d), b = op->t[1]->supports(&d);
    assert_int_equal(a, b);
    return a;
}

static void test_unary_rejects(void **state) {
    (void)state;
    const int64_t same[2] = {3, 5}, other[2] = {5, 3};
    assert_true(un_supports(&kUnRelu, TC_DTYPE_FLOAT32, same, NULL, 0, 0, NULL));
    assert_false(un_supports(&kUnRelu, TC_DTYPE_FLOAT64, same, NULL, 0, 0, NULL));
    assert_false(un_supports(&kUnRelu, TC_DTYPE_FLOAT16, same, NULL, 0, 0, NULL));
    assert_false(un_supports(&kUnRelu, TC_DTYPE_INT32, same, NULL, 0, 0, NULL));
    assert_false(un_supports(&kUnTanh, TC_DTYPE_FLOAT32, other, NULL, 0, 0, NULL));
    tc__attr fast[1] = {dtu_attr_string("approximate", "fast")};
    assert_false(un_supports(&kUnGelu, TC_DTYPE_FLOAT32, same, fast, 1, 0, NULL));
    tc__tensor two = {TC_DTYPE_FLOAT32, 1, {2}, NULL, 0}, i32 = {TC_DTYPE_INT32, 0, {0}, NULL, 0};
    tc__tensor ok = {TC_DTYPE_FLOAT32, 0, {0}, NULL, 0};
    const tc__tensor *e_two[1] = {&two}, *e_i32[1] = {&i32}, *e_ok[2] = {&ok, &ok};
    assert_true(un_supports(&kUnClip, TC_DTYPE_FLOAT32, same, NULL, 0, 2, e_ok));
    assert_false(un_supports(&kUnClip, TC_DTYPE_FLOAT32, same, NULL, 0, 1, e_two));
    assert_false(un_supports(&kUnClip, TC_DTYPE_FLOAT32, same, NULL, 0, 1, e_i32));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binary_shapes), cmocka_unit_test(test_binary_epilogues),
        cmocka_unit_test(test_binary_rejects), cmocka_unit_test(test_unary),
        cmocka_unit_test(test_unary_rejects),
    };
    return cmocka_run_group_tests(tests, vtu_setup, vtu_teardown);
}
