/*
 * test_ref_elementwise.c - reference kernels of the elementwise family (unary
 * math and activations, Clip, broadcasting arithmetic, variadic ops,
 * comparisons, logic, IsNaN/IsInf, Where, Cast) against direct formulas on
 * random data, with broadcasting edge shapes (1, odd, prime, rank 0, empty).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "elem_test_util.h"

/* ---- unary -------------------------------------------------------------------------- */

typedef double (*ref_fn)(double);
static double r_abs(double x) { return fabs(x); }
static double r_neg(double x) { return -x; }
static double r_recip(double x) { return 1.0 / x; }
static double r_relu(double x) { return x > 0 ? x : 0; }
static double r_leaky(double x) { return x < 0 ? (double)0.3f * x : x; }
static double r_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double r_hsig(double x) {
    double v = (double)0.3f * x + (double)0.4f;
    return v < 0 ? 0 : v > 1 ? 1 : v;
}
static double r_hswish(double x) {
    double v = x / 6 + 0.5;
    return x * (v < 0 ? 0 : v > 1 ? 1 : v);
}
static double r_gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }
static double r_gelu_tanh(double x) {
    return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * pow(x, 3))));
}

/* Runs a unary op on random data of several shapes and dtypes and compares with f. */
static void check_unary(etu_op op, ref_fn f, double lo, double hi, const tc__attr *attrs, int n_attrs) {
    static const int64_t shapes[][3] = {{1, 1, 1}, {1, 1, 7}, {3, 5, 13}};
    static const tc_dtype types[] = {TC_DTYPE_FLOAT32, TC_DTYPE_FLOAT64, TC_DTYPE_FLOAT16, TC_DTYPE_BFLOAT16};
    etu_rng rng = {0x1234567u};
    for (size_t s = 0; s < 3; s++) {
        for (size_t k = 0; k < 4; k++) {
            tc_dtype dt = types[k];
            tc__tensor x = etu_random(&rng, dt, 3, shapes[s], lo, hi);
            const tc__tensor *in[1] = {&x};
            tc__tensor y;
            etu_run_ok(op, 20, attrs, n_attrs, 1, in, 1, &y);
            etu_assert_shape(&y, 3, shapes[s]);
            assert_int_equal(y.dtype, dt);
            double tol = dt == TC_DTYPE_FLOAT64 ? 1e-14 : dt == TC_DTYPE_FLOAT32 ? 1e-6 : 1e-2;
            for (int64_t i = 0; i < tc__tensor_numel(&x); i++) {
                double want = f(tc__tensor_get_f64(&x, i));
                ETU_ASSERT_CLOSE(tc__tensor_get_f64(&y, i), want, tol, op.name, i);
            }
            tc__tensor_free(&x);
            tc__tensor_free(&y);
        }
    }
}

static void test_unary_float(void **state) {
    (void)state;
    check_unary(ETU_OP(Abs), r_abs, -5, 5, NULL, 0);
    check_unary(ETU_OP(Neg), r_neg, -5, 5, NULL, 0);
    check_unary(ETU_OP(Sqrt), sqrt, 0.01, 9, NULL, 0);
    check_unary(ETU_OP(Exp), exp, -6, 6, NULL, 0);
    check_unary(ETU_OP(Log), log, 0.01, 50, NULL, 0);
    check_unary(ETU_OP(Reciprocal), r_recip, 0.1, 9, NULL, 0);
    check_unary(ETU_OP(Floor), floor, -9, 9, NULL, 0);
    check_unary(ETU_OP(Ceil), ceil, -9, 9, NULL, 0);
    check_unary(ETU_OP(Relu), r_relu, -3, 3, NULL, 0);
    check_unary(ETU_OP(Sigmoid), r_sigmoid, -12, 12, NULL, 0);
    check_unary(ETU_OP(Tanh), tanh, -4, 4, NULL, 0);
    check_unary(ETU_OP(Erf), erf, -3, 3, NULL, 0);
    check_unary(ETU_OP(HardSwish), r_hswish, -5, 5, NULL, 0);
    check_unary(ETU_OP(Gelu), r_gelu, -4, 4, NULL, 0);
    tc__attr tanh_attr = etu_attr_string("approximate", "tanh");
    check_unary(ETU_OP(Gelu), r_gelu_tanh, -4, 4, &tanh_attr, 1);
    tc__attr alpha = etu_attr_float("alpha", 0.3f);
    check_unary(ETU_OP(LeakyRelu), r_leaky, -3, 3, &alpha, 1);
    tc__attr hs[2] = {etu_attr_float("alpha", 0.3f), etu_attr_float("beta", 0.4f)};
    check_unary(ETU_OP(HardSigmoid), r_hsig, -5, 5, hs, 2);
}

static void test_unary_defaults_and_specials(void **state) {
    (void)state;
    /* LeakyRelu default alpha 0.01, HardSigmoid defaults 0.2/0.5; NaN passes through Relu. */
    double xs[4] = {-2.0, 3.0, NAN, -0.5};
    int64_t d[1] = {4};
    tc__tensor x = etu_from_f64(TC_DTYPE_FLOAT32, 1, d, xs);
    const tc__tensor *in[1] = {&x};
    tc__tensor y;
    etu_run_ok(ETU_OP(LeakyRelu), 16, NULL, 0, 1, in, 1, &y);
    ETU_ASSERT_CLOSE(tc__tensor_get_f64(&y, 0), -0.02, 1e-6, "LeakyRelu", 0);
    ETU_ASSERT_CLOSE(tc__tensor_get_f64(&y, 1), 3.0, 1e-6, "LeakyRelu", 1);
    tc__tensor_free(&y);
    etu_run_ok(ETU_OP(HardSigmoid), 6, NULL, 0, 1, in, 1, &y);
    ETU_ASSERT_CLOSE(tc__tensor_get_f64(&y, 0), 0.1, 1e-6, "HardSigmoid", 0);
    ETU_ASSERT_CLOSE(tc__tensor_get_f64(&y, 1), 1.0, 1e-6, "HardSigmoid", 1);
    ETU_ASSERT_CLOSE(tc__tensor_get_f64(&y, 3), 0.4, 1e-6, "HardSigmoid", 3);
    tc__tensor_free(&y);
    etu_run_ok(ETU_OP(Relu), 14, NULL, 0, 1, in, 1, &y);
    assert_true(isnan(tc__tensor_get_f64(&y, 2)));
    assert_true(tc__tensor_get_f64(&y, 0) == 0.0);
    tc__tensor_free(&y);
    /* Gelu with an unknown approximation is refused naming it. */
    tc__attr bad = etu_attr_string("approximate", "fast");
    tc__err err = {0};
    assert_int_equal(etu_run(ETU_OP(Gelu), 20, &bad, 1, 1, in, 1, &y, &err), TC_STATUS_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "fast"));
    /* Sqrt of an integer tensor is unsupported, naming the type. */
    int64_t iv[4] = {1, 4, 9, 16};
    tc__tensor xi = etu_from_i64(TC_DTYPE_INT32, 1, d, iv);
    const tc__tensor *ini[1] = {&xi};
    memset(&err, 0, sizeof err);
    assert_int_equal(etu_run(ETU_OP(Sqrt), 13, NULL, 0, 1, ini, 1, &y, &err), TC_STATUS_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "int32"));
    tc__tensor_free(&xi);
    tc__tensor_free(&x);
}

static void test_unary_int(void **state) {
    (void)state;
    int64_t v[6] = {-128, -7, 0, 5, 127, -1};
    int64_t d[1] = {6};
    tc__tensor x = etu_from_i64(TC_DTYPE_INT8, 1, d, v);
    const tc__tensor *in[1] = {&x};
    tc__tensor y;
    etu_run_ok(ETU_OP(Abs), 13, NULL, 0, 1, in, 1, &y);
    int64_t want_abs[6] = {-128, 7, 0, 5, 127, 1}; /* |-128| wraps in int8, as in NumPy */
    for (int i = 0; i < 6; i++) assert_int_equal(tc__tensor_get_i64(&y, i), want_abs[i]);
    tc__tensor_free(&y);
    etu_run_ok(ETU_OP(Neg), 13, NULL, 0, 1, in, 1, &y);
    int64_t want_neg[6] = {-128, 7, 0, -5, -127, 1};
    for (int i = 0; i < 6; i++) assert_int_equal(tc__tensor_get_i64(&y, i), want_neg[i]);
    tc__tensor_free(&y);
    etu_run_ok(ETU_OP(Relu), 14, NULL, 0, 1, in, 1, &y);
    for (int i = 0; i < 6; i++) assert_int_equal(tc__tensor_get_i64(&y, i), v[i] > 0 ? v[i] : 0);
    tc__tensor_free(&y);
    tc__tensor_free(&x);
    /* int64 extremes do not trip UBSan. */
    int64_t w[3] = {INT64_MIN, INT64_MAX, -3};
    int64_t d3[1] = {3};
    x = etu_from_i64(TC_DTYPE_INT64, 1, d3, w);
    etu_run_ok(ETU_OP(Abs), 13, NULL, 0, 1, in, 1, &y);
    assert_true(tc__tensor_get_i64(&y, 0) == INT64_MIN);
    assert_true(tc__tensor_get_i64(&y, 2) == 3);
    tc__tensor_free(&y);
    tc__tensor_free(&x);
}

static void test_clip(void **state) {
    (void)state;
    etu_rng rng = {99};
    int64_t d[2] = {7, 11};
    tc__tensor x = etu_random(&rng, TC_DTYPE_FLOAT32, 2, d, -3, 3);
    tc__tensor lo = etu_scalar_f64(TC_DTYPE_FLOAT32, -1.25), hi = etu_scalar_f64(TC_DTYPE_FLOAT32, 0.5);
    tc__tensor y;
    /* opset 13: both bounds, only min, only max (min absent). */
    const tc__tensor *in3[3] = {&x, &lo, &hi};
    etu_run_ok(ETU_OP(Clip), 13, NULL, 0, 3, in3, 1, &y);
    for (int64_t i = 0; i < 77; i++) {
        double v = tc__tensor_get_f64(&x, i);
        ETU_ASSERT_CLOSE(tc__tensor_get_f64(&y, i), v < -1.25 ? -1.25 : v > 0.5 ? 0.5 : v, 0, "Clip", i);
    }
    tc__tensor_free(&y);
    const tc__tensor *in2[2] = {&x, &lo};
    etu_run_ok(ETU_OP(Clip), 13, NULL, 0, 2, in2, 1, &y);
    for (int64_t i = 0; i < 77; i++) {
        double v = tc__tensor_get_f64(&x, i);
        ETU_ASSERT_CLOSE(tc__tensor_get_f64(&y, i), v < -1.25 ? -1.25 : v, 0, "Clip min", i);
    }
    tc__tensor_free(&y);
    const tc__tensor *in_max[3] = {&x, NULL, &hi};
    etu_run_ok(ETU_OP(Clip), 13, NULL, 0, 3, in_max, 1, &y);
    for (int64_t i = 0; i < 77; i++) {
        double v = tc__tensor_get_f64(&x, i);
        ETU_ASSERT_CLOSE(tc__tensor_get_f64(&y, i), v > 0.5 ? 0.5 : v, 0, "Clip max", i);
    }
    tc__tensor_free(&y);
    /* min > max gives max everywhere (np.clip semantics). */
    const tc__tensor *in_rev[3] = {&x, &hi, &lo};
    etu_run_ok(ETU_OP(Clip), 13, NULL, 0, 3, in_rev, 1, &y);
    for (int64_t i = 0; i < 77; i++) ETU_ASSERT_CLOSE(tc__tensor_get_f64(&y, i), -1.25, 0, "Clip rev", i);
    tc__tensor_free(&y);
    /* opset 6: attributes. */
    tc__attr at[2] = {etu_attr_float("min", -0.75f), etu_attr_float("max", 1.5f)};
    const tc__tensor *in1[1] = {&x};
    etu_run_ok(ETU_OP(Clip), 6, at, 2, 1, in1, 1, &y);
    for (int64_t i = 0; i < 77; i++) {
        double v = tc__tensor_get_f64(&x, i);
        ETU_ASSERT_CLOSE(tc__tensor_get_f64(&y, i), v < -0.75 ? -0.75 : v > 1.5 ? 1.5 : v, 1e-7, "Clip-6", i);
    }
    tc__tensor_free(&y);
    tc__tensor_free(&x);
    tc__tensor_free(&lo);
    tc__tensor_free(&hi);
    /* int8 with only a min; uint16 with both. */
    x = etu_random(&rng, TC_DTYPE_INT8, 2, d, -100, 100);
    lo = etu_scalar_i64(TC_DTYPE_INT8, -5);
    etu_run_ok(ETU_OP(Clip), 13, NULL, 0, 2, in2, 1, &y);
    for (int64_t i = 0; i < 77; i++) {
        int64_t v = tc__tensor_get_i64(&x, i);
        assert_int_equal(tc__tensor_get_i64(&y, i), v < -5 ? -5 : v);
    }
    tc__tensor_free(&y);
    tc__tensor_free(&x);
    tc__tensor_free(&lo);
    x = etu_random(&rng, TC_DTYPE_UINT16, 2, d, 1, 60000);
    lo = etu_scalar_i64(TC_DTYPE_UINT16, 1000);
    hi = etu_scalar_i64(TC_DTYPE_UINT16, 50000);
    etu_run_ok(ETU_OP(Clip), 13, NULL, 0, 3, in3, 1, &y);
    for (int64_t i = 0; i < 77; i++) {
        int64_t v = tc__tensor_get_i64(&x, i);
        assert_int_equal(tc__tensor_get_i64(&y, i), v < 1000 ? 1000 : v > 50000 ? 50000 : v);
    }
    tc__tensor_free(&y);
    tc__tensor_free(&x);
    tc__tensor_free(&lo);
    tc__tensor_free(&hi);
}

/* ---- broadcasting binary ---------------------------------------------------------------- */

typedef struct shape_pair {
    int32_t ra;
    int64_t a[4];
    int32_t rb;
    int64_t b[4];
} shape_pair;

static const shape_pair kPairs[] = {
    {1, {7}, 1, {7}},                  /* same shape */
    {0, {0}, 2, {3, 5}},               /* rank-0 scalar */
    {2, {3, 5}, 0, {0}},
    {1, {1}, 1, {13}},                 /* size-1 dim */
    {3, {3, 1, 5}, 2, {4, 1}},         /* both broadcast */
    {4, {2, 3, 5, 7}, 4, {1, 3, 1, 7}},
    {2, {11, 1}, 3, {2, 1, 3}},
    {3, {2, 0, 3}, 1, {3}},            /* empty */
    {2, {1, 1}, 2, {1, 1}},
    {3, {5, 1, 2}, 3, {1, 3, 1}},
};

/* Output dims of two broadcast shapes (test-side, independent of the library). */
static int32_t bcast_dims(const tc__tensor *a, const tc__tensor *b, int64_t *out) {
    int32_t r = a->rank > b->rank ? a->rank : b->rank;
    for (int32_t i = 0; i < r; i++) {
        int32_t ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        out[i] = da == 1 ? db : da;
    }
    return r;
}

typedef double (*bin_fn)(double, double);
static double b_add(double a, double b) { return a + b; }
static double b_sub(double a, double b) { return a - b; }
static double b_mul(double a, double b) { return a * b; }
static double b_div(double a, double b) { return a / b; }

static void check_binary_float(etu_op op, bin_fn f, tc_dtype dt, double lo, double hi, double tol) {
    etu_rng rng = {777};
    for (size_t p = 0; p < sizeof kPairs / sizeof kPairs[0]; p++) {
        tc__tensor a = etu_random(&rng, dt, kPairs[p].ra, kPairs[p].a, lo, hi);
        tc__tensor b = etu_random(&rng, dt, kPairs[p].rb, kPairs[p].b, lo, hi);
        const tc__tensor *in[2] = {&a, &b};
        tc__tensor y;
        etu_run_ok(op, 14, NULL, 0, 2, in, 1, &y);
        int64_t od[TC_MAX_RANK];
        int32_t r = bcast_dims(&a, &b, od);
        etu_assert_shape(&y, r, od);
        assert_int_equal(y.dtype, dt);
        int64_t n = tc__numel(r, od);
        for (int64_t i = 0; i < n; i++) {
            int64_t idx[TC_MAX_RANK];
            etu_unravel(i, r, od, idx);
            double va = tc__tensor_get_f64(&a, etu_bcast_index(&a, r, idx));
            double vb = tc__tensor_get_f64(&b, etu_bcast_index(&b, r, idx));
            ETU_ASSERT_CLOSE(tc__tensor_get_f64(&y, i), f(va, vb), tol, op.name, i);
        }
        tc__tensor_free(&a);
        tc__tensor_free(&b);
        tc__tensor_free(&y);
    }
}

static void test_binary_float_broadcast(void **state) {
    (void)state;
    static const tc_dtype types[] = {TC_DTYPE_FLOAT32, TC_DTYPE_FLOAT64, TC_DTYPE_FLOAT16};
    static const double tols[] = {1e-7, 1e-15, 2e-3};
    for (int k = 0; k < 3; k++) {
        check_binary_float(ETU_OP(Add), b_add, types[k], -4, 4, tols[k]);
        check_binary_float(ETU_OP(Sub), b_sub, types[k], -4, 4, tols[k]);
        check_binary_float(ETU_OP(Mul), b_mul, types[k], -4, 4, tols[k]);
        check_binary_float(ETU_OP(Div), b_div, types[k], 0.5, 4, tols[k]);
        check_binary_float(ETU_OP(Pow), pow, types[k], 0.5, 3, tols[k] * 10);
    }
}

static void test_binary_int(void **state) {
    (void)state;
    /* int32 Div truncates toward zero, like C and the ONNX test data. */
    int64_t av[6] = {7, -7, 7, -7, 13, -100};
    int64_t bv[6] = {2, 2, -2, -2, 5, 7};
    int64_t d[1] = {6};
    tc__tensor a = etu_from_i64(TC_DTYPE_INT32, 1, d, av), b = etu_from_i64(TC_DTYPE_INT32, 1, d, bv);
    const tc__tensor *in[2] = {&a, &b};
    tc__tensor y;
    etu_run_ok(ETU_OP(Div), 14, NULL, 0, 2, in, 1, &y);
    int64_t want[6] = {3, -3, -3, 3, 2, -14};
    for (int i = 0; i < 6; i++) assert_int_equal(tc__tensor_get_i64(&y, i), want[i]);
    tc__tensor_free(&y);
    etu_run_ok(ETU_OP(Pow), 15, NULL, 0, 2, in, 1, &y);
    for (int i = 0; i < 6; i++) {
        int64_t p = 1;
        if (bv[i] < 0) p = 0; /* |base| > 1 to a negative power truncates to 0 */
        else
            for (int64_t k = 0; k < bv[i]; k++) p *= av[i];
        assert_int_equal(tc__tensor_get_i64(&y, i), (int32_t)p);
    }
    tc__tensor_free(&y);
    /* Division by zero is an error, not a crash. */
    tc__tensor_set_i64(&b, 3, 0);
    tc__err err = {0};
    assert_int_equal(etu_run(ETU_OP(Div), 14, NULL, 0, 2, in, 1, &y, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "zero"));
    tc__tensor_free(&a);
    tc__tensor_free(&b);

    /* Random uint8 / int16 Add, Sub, Mul wrap like NumPy; broadcasting a column. */
    etu_rng rng = {31337};
    int64_t da[2] = {5, 7}, db[2] = {5, 1};
    static const tc_dtype types[] = {TC_DTYPE_UINT8, TC_DTYPE_INT16, TC_DTYPE_UINT64, TC_DTYPE_INT64};
    for (int k = 0; k < 4; k++) {
        a = etu_random(&rng, types[k], 2, da, types[k] == TC_DTYPE_INT16 ? -30000 : 1, 250);
        b = etu_random(&rng, types[k], 2, db, 1, 250);
        for (int opi = 0; opi < 4; opi++) {
            etu_op op = opi == 0 ? ETU_OP(Add) : opi == 1 ? ETU_OP(Sub) : opi == 2 ? ETU_OP(Mul) : ETU_OP(Div);
            etu_run_ok(op, 14, NULL, 0, 2, in, 1, &y);
            etu_assert_shape(&y, 2, da);
            for (int64_t i = 0; i < 35; i++) {
                uint64_t x1 = (uint64_t)tc__tensor_get_i64(&a, i), x2 = (uint64_t)tc__tensor_get_i64(&b, i / 7);
                uint64_t r = opi == 0 ? x1 + x2 : opi == 1 ? x1 - x2 : opi == 2 ? x1 * x2 : 0;
                tc__tensor expect = etu_tensor(types[k], 0, NULL);
                if (opi == 3) {
                    if (types[k] == TC_DTYPE_UINT8 || types[k] == TC_DTYPE_UINT64) r = x1 / x2;
                    else r = (uint64_t)((int64_t)x1 / (int64_t)x2);
                }
                tc__tensor_set_i64(&expect, 0, (int64_t)r);
                assert_true(tc__tensor_get_i64(&y, i) == tc__tensor_get_i64(&expect, 0));
                tc__tensor_free(&expect);
            }
            tc__tensor_free(&y);
        }
        tc__tensor_free(&a);
        tc__tensor_free(&b);
    }
}

/* Mod: integers take the divisor's sign (fmod 0, Python's %) or the dividend's (fmod 1, C's %), INT64_MIN % -1 is 0,
 * zero divisors fail; floats are C's fmod (ONNX test_mod_* cover the dtypes and broadcasting). */
static void test_mod(void **state) {
    (void)state;
    int64_t d[1] = {6};
    int64_t av[6] = {7, -7, 7, -7, INT64_MIN, 5}, bv[6] = {3, 3, -3, -3, -1, 5};
    tc__tensor a = etu_from_i64(TC_DTYPE_INT64, 1, d, av), b = etu_from_i64(TC_DTYPE_INT64, 1, d, bv);
    const tc__tensor *in[2] = {&a, &b};
    tc__tensor y;
    etu_run_ok(ETU_OP(Mod), 13, NULL, 0, 2, in, 1, &y);
    const int64_t want_mod[6] = {1, 2, -2, -1, 0, 0};
    for (int i = 0; i < 6; i++) assert_int_equal(tc__tensor_get_i64(&y, i), want_mod[i]);
    tc__tensor_free(&y);
    tc__attr fm = etu_attr_int("fmod", 1);
    etu_run_ok(ETU_OP(Mod), 13, &fm, 1, 2, in, 1, &y);
    const int64_t want_fmod[6] = {1, -1, 1, -1, 0, 0};
    for (int i = 0; i < 6; i++) assert_int_equal(tc__tensor_get_i64(&y, i), want_fmod[i]);
    tc__tensor_free(&y);
    tc__tensor_set_i64(&b, 2, 0);
    tc__err err = {0};
    assert_int_equal(etu_run(ETU_OP(Mod), 13, NULL, 0, 2, in, 1, &y, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "Mod by zero"));
    tc__tensor_free(&a);
    tc__tensor_free(&b);
    double fa[3] = {5.5, -5.5, 4.0}, fb[1] = {2.0};
    int64_t d3[1] = {3}, d1[1] = {1};
    a = etu_from_f64(TC_DTYPE_FLOAT32, 1, d3, fa);
    b = etu_from_f64(TC_DTYPE_FLOAT32, 1, d1, fb);
    etu_run_ok(ETU_OP(Mod), 13, &fm, 1, 2, in, 1, &y);
    ETU_ASSERT_CLOSE(tc__tensor_get_f64(&y, 0), 1.5, 0, "Mod", 0);
    ETU_ASSERT_CLOSE(tc__tensor_get_f64(&y, 1), -1.5, 0, "Mod", 1);
    ETU_ASSERT_CLOSE(tc__tensor_get_f64(&y, 2), 0.0, 0, "Mod", 2);
    tc__tensor_free(&y);
    tc__tensor_free(&a);
    tc__tensor_free(&b);
}

static void test_pow_mixed_types(void **state) {
    (void)state;
    int64_t d[1] = {3};
    /* int32 base, float exponent: int32 result (ONNX test_pow_types_int32_float32). */
    int64_t bi[3] = {1, 2, 3};
    double ef[3] = {4, 5, 6};
    tc__tensor a = etu_from_i64(TC_DTYPE_INT32, 1, d, bi), b = etu_from_f64(TC_DTYPE_FLOAT32, 1, d, ef);
    const tc__tensor *in[2] = {&a, &b};
    tc__tensor y;
    etu_run_ok(ETU_OP(Pow), 15, NULL, 0, 2, in, 1, &y);
    assert_int_equal(y.dtype, TC_DTYPE_INT32);
    assert_int_equal(tc__tensor_get_i64(&y, 0), 1);
    assert_int_equal(tc__tensor_get_i64(&y, 1), 32);
    assert_int_equal(tc__tensor_get_i64(&y, 2), 729);
    tc__tensor_free(&y);
    tc__tensor_free(&a);
    tc__tensor_free(&b);
    /* float base, uint64 / int64 exponents; float exponent 0.5 with int64 base truncates. */
    double bf[3] = {1.5, 2, -3};
    int64_t ei[3] = {4, 5, 3};
    a = etu_from_f64(TC_DTYPE_FLOAT32, 1, d, bf);
    b = etu_from_i64(TC_DTYPE_UINT64, 1, d, ei);
    etu_run_ok(ETU_OP(Pow), 15, NULL, 0, 2, in, 1, &y);
    assert_int_equal(y.dtype, TC_DTYPE_FLOAT32);
    ETU_ASSERT_CLOSE(tc__tensor_get_f64(&y, 0), 5.0625, 1e-7, "Pow", 0);
    ETU_ASSERT_CLOSE(tc__tensor_get_f64(&y, 1), 32, 1e-7, "Pow", 1);
    ETU_ASSERT_CLOSE(tc__tensor_get_f64(&y, 2), -27, 1e-7, "Pow", 2);
    tc__tensor_free(&y);
    tc__tensor_free(&a);
    tc__tensor_free(&b);
    int64_t bl[3] = {10, 17, 3};
    double half = 0.5;
    a = etu_from_i64(TC_DTYPE_INT64, 1, d, bl);
    b = etu_from_f64(TC_DTYPE_FLOAT64, 0, NULL, &half);
    etu_run_ok(ETU_OP(Pow), 15, NULL, 0, 2, in, 1, &y);
    assert_int_equal(y.dtype, TC_DTYPE_INT64);
    assert_int_equal(tc__tensor_get_i64(&y, 0), 3);
    assert_int_equal(tc__tensor_get_i64(&y, 1), 4);
    assert_int_equal(tc__tensor_get_i64(&y, 2), 1);
    tc__tensor_free(&y);
    tc__tensor_free(&a);
    tc__tensor_free(&b);
}

static void test_binary_errors(void **state) {
    (void)state;
    int64_t da[1] = {3}, db[1] = {4};
    etu_rng rng = {5};
    tc__tensor a = etu_random(&rng, TC_DTYPE_FLOAT32, 1, da, -1, 1), b = etu_random(&rng, TC_DTYPE_FLOAT32, 1, db, -1, 1);
    const tc__tensor *in[2] = {&a, &b};
    tc__tensor y;
    tc__err err = {0};
    assert_int_not_equal(etu_run(ETU_OP(Add), 14, NULL, 0, 2, in, 1, &y, &err), TC_STATUS_OK);
    assert_non_null(strstr(err.msg, "3"));
    tc__tensor_free(&b);
    b = etu_random(&rng, TC_DTYPE_FLOAT64, 1, da, -1, 1);
    memset(&err, 0, sizeof err);
    assert_int_equal(etu_run(ETU_OP(Mul), 14, NULL, 0, 2, in, 1, &y, &err), TC_STATUS_INVALID_GRAPH);
    assert_non_null(strstr(err.msg, "float64"));
    /* The kernel itself also refuses mismatched types and shapes that do not broadcast. */
    tc__tensor out = etu_tensor(TC_DTYPE_FLOAT32, 1, da);
    tc__tensor *pout[1] = {&out};
    tc__kernel_ctx kc = {"k", "Mul", 14, NULL, 2, in, 1, pout, &err, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__ref_Mul(&kc), TC_STATUS_INVALID_ARGUMENT);
    tc__tensor_free(&b);
    b = etu_random(&rng, TC_DTYPE_FLOAT32, 1, db, -1, 1);
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__ref_Mul(&kc), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "broadcast"));
    tc__tensor_free(&out);
    tc__tensor_free(&a);
    tc__tensor_free(&b);
}

/* ---- variadic ------------------------------------------------------------------------------ */

static void check_variadic(etu_op op, tc_dtype dt, int which /* 0 min 1 max 2 sum 3 mean */) {
    etu_rng rng = {4242 + (uint64_t)which};
    int64_t d0[3] = {2, 1, 5}, d1[2] = {3, 1}, d2[1] = {5};
    tc__tensor x[3] = {etu_random(&rng, dt, 3, d0, -50, 50), etu_random(&rng, dt, 2, d1, -50, 50),
                       etu_random(&rng, dt, 1, d2, -50, 50)};
    const tc__tensor *in[3] = {&x[0], &x[1], &x[2]};
    for (int n_in = 1; n_in <= 3; n_in++) {
        tc__tensor y;
        etu_run_ok(op, 13, NULL, 0, n_in, in, 1, &y);
        int64_t od[3] = {2, n_in >= 2 ? 3 : 1, 5};
        etu_assert_shape(&y, 3, od);
        for (int64_t i = 0; i < tc__tensor_numel(&y); i++) {
            int64_t idx[3];
            etu_unravel(i, 3, od, idx);
            double acc = 0;
            for (int k = 0; k < n_in; k++) {
                double v = tc__tensor_get_f64(&x[k], etu_bcast_index(&x[k], 3, idx));
                if (k == 0) acc = v;
                else if (which == 0) acc = v < acc ? v : acc;
                else if (which == 1) acc = v > acc ? v : acc;
                else acc += v;
            }
            if (which == 3) acc /= n_in;
            if (!tc__dtype_is_float(dt)) acc = trunc(acc);
            ETU_ASSERT_CLOSE(tc__tensor_get_f64(&y, i), acc, dt == TC_DTYPE_FLOAT16 ? 1e-3 : 1e-7, op.name, i);
        }
        tc__tensor_free(&y);
    }
    for (int k = 0; k < 3; k++) tc__tensor_free(&x[k]);
}

static void test_variadic(void **state) {
    (void)state;
    static const tc_dtype types[] = {TC_DTYPE_FLOAT32, TC_DTYPE_FLOAT64, TC_DTYPE_FLOAT16, TC_DTYPE_INT32,
                                     TC_DTYPE_INT8};
    for (int k = 0; k < 5; k++) {
        check_variadic(ETU_OP(Min), types[k], 0);
        check_variadic(ETU_OP(Max), types[k], 1);
        check_variadic(ETU_OP(Sum), types[k], 2);
        check_variadic(ETU_OP(Mean), types[k], 3);
    }
    /* uint64 beyond 2^63 compares as unsigned; NaN propagates through float Max. */
    int64_t d[1] = {2};
    int64_t big[2] = {(int64_t)0xF000000000000000ull, 5};
    int64_t small[2] = {7, 3};
    tc__tensor a = etu_from_i64(TC_DTYPE_UINT64, 1, d, big), b = etu_from_i64(TC_DTYPE_UINT64, 1, d, small);
    const tc__tensor *in[2] = {&a, &b};
    tc__tensor y;
    etu_run_ok(ETU_OP(Max), 13, NULL, 0, 2, in, 1, &y);
    assert_true((uint64_t)tc__tensor_get_i64(&y, 0) == 0xF000000000000000ull);
    assert_int_equal(tc__tensor_get_i64(&y, 1), 5);
    tc__tensor_free(&y);
    tc__tensor_free(&a);
    tc__tensor_free(&b);
    double fa[2] = {NAN, 1}, fb[2] = {2, NAN};
    a = etu_from_f64(TC_DTYPE_FLOAT32, 1, d, fa);
    b = etu_from_f64(TC_DTYPE_FLOAT32, 1, d, fb);
    etu_run_ok(ETU_OP(Max), 13, NULL, 0, 2, in, 1, &y);
    assert_true(isnan(tc__tensor_get_f64(&y, 0)) && isnan(tc__tensor_get_f64(&y, 1)));
    tc__tensor_free(&y);
    tc__tensor_free(&a);
    tc__tensor_free(&b);
}

/* ---- comparisons and logic ------------------------------------------------------------------ */

static void test_compare(void **state) {
    (void)state;
    etu_rng rng = {8080};
    static const tc_dtype types[] = {TC_DTYPE_FLOAT32, TC_DTYPE_INT64, TC_DTYPE_UINT8, TC_DTYPE_FLOAT16};
    for (int k = 0; k < 4; k++) {
        for (size_t p = 0; p < sizeof kPairs / sizeof kPairs[0]; p++) {
            /* Small integer range so that equality happens. */
            tc__tensor a = etu_random(&rng, types[k], kPairs[p].ra, kPairs[p].a, 1, 4);
            tc__tensor b = etu_random(&rng, types[k], kPairs[p].rb, kPairs[p].b, 1, 4);
            if (tc__dtype_is_float(types[k])) { /* round to make ties */
                for (int64_t i = 0; i < tc__tensor_numel(&a); i++) tc__tensor_set_f64(&a, i, floor(tc__tensor_get_f64(&a, i)));
                for (int64_t i = 0; i < tc__tensor_numel(&b); i++) tc__tensor_set_f64(&b, i, floor(tc__tensor_get_f64(&b, i)));
            }
            const tc__tensor *in[2] = {&a, &b};
            for (int opi = 0; opi < 5; opi++) {
                etu_op op = opi == 0   ? ETU_OP(Equal)
                            : opi == 1 ? ETU_OP(Less)
                            : opi == 2 ? ETU_OP(LessOrEqual)
                            : opi == 3 ? ETU_OP(Greater)
                                       : ETU_OP(GreaterOrEqual);
                tc__tensor y;
                etu_run_ok(op, 16, NULL, 0, 2, in, 1, &y);
                assert_int_equal(y.dtype, TC_DTYPE_BOOL);
                int64_t od[TC_MAX_RANK];
                int32_t r = bcast_dims(&a, &b, od);
                etu_assert_shape(&y, r, od);
                for (int64_t i = 0; i < tc__numel(r, od); i++) {
                    int64_t idx[TC_MAX_RANK];
                    etu_unravel(i, r, od, idx);
                    double va = tc__tensor_get_f64(&a, etu_bcast_index(&a, r, idx));
                    double vb = tc__tensor_get_f64(&b, etu_bcast_index(&b, r, idx));
                    bool want = opi == 0 ? va == vb : opi == 1 ? va < vb : opi == 2 ? va <= vb : opi == 3 ? va > vb : va >= vb;
                    assert_int_equal(((const uint8_t *)y.data)[i], want ? 1 : 0);
                }
                tc__tensor_free(&y);
            }
            tc__tensor_free(&a);
            tc__tensor_free(&b);
        }
    }
    /* NaN is unordered and unequal; int64 values beyond 2^53 compare exactly. */
    int64_t d[1] = {2};
    double fa[2] = {NAN, 1}, fb[2] = {NAN, NAN};
    tc__tensor a = etu_from_f64(TC_DTYPE_FLOAT32, 1, d, fa), b = etu_from_f64(TC_DTYPE_FLOAT32, 1, d, fb);
    const tc__tensor *in[2] = {&a, &b};
    tc__tensor y;
    etu_run_ok(ETU_OP(Equal), 13, NULL, 0, 2, in, 1, &y);
    assert_int_equal(((uint8_t *)y.data)[0] + ((uint8_t *)y.data)[1], 0);
    tc__tensor_free(&y);
    etu_run_ok(ETU_OP(LessOrEqual), 16, NULL, 0, 2, in, 1, &y);
    assert_int_equal(((uint8_t *)y.data)[0] + ((uint8_t *)y.data)[1], 0);
    tc__tensor_free(&y);
    tc__tensor_free(&a);
    tc__tensor_free(&b);
    int64_t ia[2] = {(int64_t)1 << 60, -5}, ib[2] = {((int64_t)1 << 60) + 1, -5};
    a = etu_from_i64(TC_DTYPE_INT64, 1, d, ia);
    b = etu_from_i64(TC_DTYPE_INT64, 1, d, ib);
    etu_run_ok(ETU_OP(Less), 13, NULL, 0, 2, in, 1, &y);
    assert_int_equal(((uint8_t *)y.data)[0], 1);
    assert_int_equal(((uint8_t *)y.data)[1], 0);
    tc__tensor_free(&y);
    etu_run_ok(ETU_OP(Equal), 13, NULL, 0, 2, in, 1, &y);
    assert_int_equal(((uint8_t *)y.data)[0], 0);
    assert_int_equal(((uint8_t *)y.data)[1], 1);
    tc__tensor_free(&y);
    tc__tensor_free(&a);
    tc__tensor_free(&b);
}

static void test_logic(void **state) {
    (void)state;
    etu_rng rng = {2024};
    for (size_t p = 0; p < sizeof kPairs / sizeof kPairs[0]; p++) {
        tc__tensor a = etu_random(&rng, TC_DTYPE_BOOL, kPairs[p].ra, kPairs[p].a, 0, 1);
        tc__tensor b = etu_random(&rng, TC_DTYPE_BOOL, kPairs[p].rb, kPairs[p].b, 0, 1);
        const tc__tensor *in[2] = {&a, &b};
        for (int opi = 0; opi < 3; opi++) {
            etu_op op = opi == 0 ? ETU_OP(And) : opi == 1 ? ETU_OP(Or) : ETU_OP(Xor);
            tc__tensor y;
            etu_run_ok(op, 7, NULL, 0, 2, in, 1, &y);
            int64_t od[TC_MAX_RANK];
            int32_t r = bcast_dims(&a, &b, od);
            etu_assert_shape(&y, r, od);
            for (int64_t i = 0; i < tc__numel(r, od); i++) {
                int64_t idx[TC_MAX_RANK];
                etu_unravel(i, r, od, idx);
                bool va = tc__tensor_get_i64(&a, etu_bcast_index(&a, r, idx)) != 0;
                bool vb = tc__tensor_get_i64(&b, etu_bcast_index(&b, r, idx)) != 0;
                bool want = opi == 0 ? (va && vb) : opi == 1 ? (va || vb) : (va != vb);
                assert_int_equal(((const uint8_t *)y.data)[i], want);
            }
            tc__tensor_free(&y);
        }
        const tc__tensor *in1[1] = {&a};
        tc__tensor y;
        etu_run_ok(ETU_OP(Not), 1, NULL, 0, 1, in1, 1, &y);
        for (int64_t i = 0; i < tc__tensor_numel(&a); i++)
            assert_int_equal(((const uint8_t *)y.data)[i], ((const uint8_t *)a.data)[i] ? 0 : 1);
        tc__tensor_free(&y);
        tc__tensor_free(&a);
        tc__tensor_free(&b);
    }
}

static void test_isnan_isinf(void **state) {
    (void)state;
    double v[6] = {-1.7, NAN, INFINITY, -3.6, -INFINITY, INFINITY};
    int64_t d[1] = {6};
    static const tc_dtype types[] = {TC_DTYPE_FLOAT32, TC_DTYPE_FLOAT16, TC_DTYPE_FLOAT64, TC_DTYPE_BFLOAT16};
    for (int k = 0; k < 4; k++) {
        tc__tensor x = etu_from_f64(types[k], 1, d, v);
        const tc__tensor *in[1] = {&x};
        tc__tensor y;
        etu_run_ok(ETU_OP(IsNaN), 20, NULL, 0, 1, in, 1, &y);
        for (int i = 0; i < 6; i++) assert_int_equal(((uint8_t *)y.data)[i], i == 1);
        tc__tensor_free(&y);
        etu_run_ok(ETU_OP(IsInf), 20, NULL, 0, 1, in, 1, &y);
        for (int i = 0; i < 6; i++) assert_int_equal(((uint8_t *)y.data)[i], i == 2 || i == 4 || i == 5);
        tc__tensor_free(&y);
        tc__attr pos = etu_attr_int("detect_negative", 0);
        etu_run_ok(ETU_OP(IsInf), 20, &pos, 1, 1, in, 1, &y);
        for (int i = 0; i < 6; i++) assert_int_equal(((uint8_t *)y.data)[i], i == 2 || i == 5);
        tc__tensor_free(&y);
        tc__attr neg = etu_attr_int("detect_positive", 0);
        etu_run_ok(ETU_OP(IsInf), 20, &neg, 1, 1, in, 1, &y);
        for (int i = 0; i < 6; i++) assert_int_equal(((uint8_t *)y.data)[i], i == 4);
        tc__tensor_free(&y);
        tc__tensor_free(&x);
    }
}

/* ---- Where ------------------------------------------------------------------------------------ */

static void test_where(void **state) {
    (void)state;
    etu_rng rng = {6060};
    static const struct {
        int32_t rc, rx, ry;
        int64_t c[3], x[3], y[3];
    } cases[] = {
        {2, 2, 2, {2, 2}, {2, 2}, {2, 2}},
        {3, 1, 0, {3, 1, 5}, {5}, {0}},
        {1, 3, 2, {7}, {2, 1, 7}, {3, 1}},
        {0, 2, 1, {0}, {4, 3}, {3}},
        {2, 2, 3, {1, 0}, {2, 1}, {3, 2, 1}},
    };
    static const tc_dtype types[] = {TC_DTYPE_FLOAT32, TC_DTYPE_INT64, TC_DTYPE_FLOAT16, TC_DTYPE_UINT8};
    for (int k = 0; k < 4; k++) {
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            tc__tensor cond = etu_random(&rng, TC_DTYPE_BOOL, cases[c].rc, cases[c].c, 0, 1);
            tc__tensor x = etu_random(&rng, types[k], cases[c].rx, cases[c].x, 1, 100);
            tc__tensor w = etu_random(&rng, types[k], cases[c].ry, cases[c].y, 1, 100);
            const tc__tensor *in[3] = {&cond, &x, &w};
            tc__tensor y;
            etu_run_ok(ETU_OP(Where), 16, NULL, 0, 3, in, 1, &y);
            assert_int_equal(y.dtype, types[k]);
            int64_t t1[TC_MAX_RANK] = {0}, od[TC_MAX_RANK] = {0};
            int32_t r1 = bcast_dims(&cond, &x, t1);
            tc__tensor tmp = {.rank = r1};
            memcpy(tmp.dims, t1, sizeof t1);
            int32_t r = bcast_dims(&tmp, &w, od);
            etu_assert_shape(&y, r, od);
            for (int64_t i = 0; i < tc__numel(r, od); i++) {
                int64_t idx[TC_MAX_RANK];
                etu_unravel(i, r, od, idx);
                bool cv = tc__tensor_get_i64(&cond, etu_bcast_index(&cond, r, idx)) != 0;
                double want = cv ? tc__tensor_get_f64(&x, etu_bcast_index(&x, r, idx))
                                 : tc__tensor_get_f64(&w, etu_bcast_index(&w, r, idx));
                assert_true(tc__tensor_get_f64(&y, i) == want);
            }
            tc__tensor_free(&y);
            tc__tensor_free(&cond);
            tc__tensor_free(&x);
            tc__tensor_free(&w);
        }
    }
}

/* ---- Cast ---------------------------------------------------------------------------------------- */

static tc__tensor cast(const tc__tensor *x, tc_dtype to) {
    tc__attr a = etu_attr_int("to", to);
    const tc__tensor *in[1] = {x};
    tc__tensor y;
    etu_run_ok(ETU_OP(Cast), 21, &a, 1, 1, in, 1, &y);
    assert_int_equal(y.dtype, to);
    etu_assert_shape(&y, x->rank, x->dims);
    return y;
}

static void test_cast_float_to_int(void **state) {
    (void)state;
    double v[9] = {2.9, -2.9, 0.5, -0.5, 300.7, -1.0, NAN, 1e30, 127.99};
    int64_t d[1] = {9};
    tc__tensor x = etu_from_f64(TC_DTYPE_FLOAT32, 1, d, v);
    tc__tensor y = cast(&x, TC_DTYPE_INT32);
    int64_t want32[9] = {2, -2, 0, 0, 300, -1, 0, INT32_MAX, 127};
    /* 1e30 saturates to INT64_MAX in the int64 domain, whose low 32 bits are -1 in int32. */
    want32[7] = (int32_t)INT64_MAX;
    for (int i = 0; i < 9; i++) assert_int_equal(tc__tensor_get_i64(&y, i), want32[i]);
    tc__tensor_free(&y);
    y = cast(&x, TC_DTYPE_INT64);
    int64_t want64[9] = {2, -2, 0, 0, 300, -1, 0, INT64_MAX, 127};
    for (int i = 0; i < 9; i++) assert_true(tc__tensor_get_i64(&y, i) == want64[i]);
    tc__tensor_free(&y);
    y = cast(&x, TC_DTYPE_UINT8);
    int64_t want8[9] = {2, 254, 0, 0, 44, 255, 0, 255, 127}; /* wraps like NumPy on x86 */
    for (int i = 0; i < 9; i++) assert_int_equal(tc__tensor_get_i64(&y, i), want8[i]);
    tc__tensor_free(&y);
    y = cast(&x, TC_DTYPE_BOOL);
    for (int i = 0; i < 9; i++) assert_int_equal(((uint8_t *)y.data)[i], 1); /* all non-zero, NaN is true */
    tc__tensor_free(&y);
    tc__tensor_free(&x);
    double big = 1.5e19; /* fits uint64 but not int64 */
    x = etu_from_f64(TC_DTYPE_FLOAT64, 0, NULL, &big);
    y = cast(&x, TC_DTYPE_UINT64);
    assert_true((uint64_t)tc__tensor_get_i64(&y, 0) == 15000000000000000000ull);
    tc__tensor_free(&y);
    tc__tensor_free(&x);
}

static void test_cast_floats(void **state) {
    (void)state;
    etu_rng rng = {1};
    int64_t d[2] = {3, 17};
    tc__tensor x = etu_random(&rng, TC_DTYPE_FLOAT32, 2, d, -70000, 70000);
    tc__tensor_set_f64(&x, 0, NAN);
    tc__tensor_set_f64(&x, 1, INFINITY);
    tc__tensor_set_f64(&x, 2, -INFINITY);
    tc__tensor_set_f64(&x, 3, 1e-6);
    tc__tensor h = cast(&x, TC_DTYPE_FLOAT16), b = cast(&x, TC_DTYPE_BFLOAT16), f64 = cast(&x, TC_DTYPE_FLOAT64);
    const float *xs = x.data;
    for (int i = 0; i < 51; i++) {
        assert_int_equal(((uint16_t *)h.data)[i], tc__f32_to_f16(xs[i]));
        assert_int_equal(((uint16_t *)b.data)[i], tc__f32_to_bf16(xs[i]));
        double dv = ((double *)f64.data)[i];
        assert_true(dv == (double)xs[i] || (isnan(dv) && isnan(xs[i])));
    }
    /* And back: float16 -> float32 and float64 -> float32 are exact here. */
    tc__tensor back = cast(&h, TC_DTYPE_FLOAT32);
    for (int i = 0; i < 51; i++) {
        float want = tc__f16_to_f32(((uint16_t *)h.data)[i]);
        float got = ((float *)back.data)[i];
        assert_true(got == want || (isnan(got) && isnan(want)));
    }
    tc__tensor_free(&back);
    back = cast(&f64, TC_DTYPE_FLOAT32);
    assert_memory_equal(back.data, x.data, 51 * sizeof(float));
    tc__tensor_free(&back);
    tc__tensor_free(&h);
    tc__tensor_free(&b);
    tc__tensor_free(&f64);
    tc__tensor_free(&x);

    /* float64 -> float16 rounds once: 1 + 2^-11 + 2^-40 is just above a tie and must round up
     * (rounding through float32 first would make it a tie and round to even, down). */
    double tricky = 1.0 + ldexp(1.0, -11) + ldexp(1.0, -40);
    x = etu_from_f64(TC_DTYPE_FLOAT64, 0, NULL, &tricky);
    h = cast(&x, TC_DTYPE_FLOAT16);
    assert_int_equal(((uint16_t *)h.data)[0], 0x3c01);
    tc__tensor_free(&h);
    tc__tensor_free(&x);
}

static void test_cast_ints(void **state) {
    (void)state;
    int64_t v[5] = {-1, 0, 255, 256, INT64_MAX};
    int64_t d[1] = {5};
    tc__tensor x = etu_from_i64(TC_DTYPE_INT64, 1, d, v);
    tc__tensor y = cast(&x, TC_DTYPE_UINT8);
    int64_t w8[5] = {255, 0, 255, 0, 255};
    for (int i = 0; i < 5; i++) assert_int_equal(tc__tensor_get_i64(&y, i), w8[i]);
    tc__tensor_free(&y);
    y = cast(&x, TC_DTYPE_FLOAT32);
    for (int i = 0; i < 5; i++) assert_true(((float *)y.data)[i] == (float)v[i]);
    tc__tensor_free(&y);
    y = cast(&x, TC_DTYPE_BOOL);
    for (int i = 0; i < 5; i++) assert_int_equal(((uint8_t *)y.data)[i], v[i] != 0);
    tc__tensor_free(&y);
    y = cast(&x, TC_DTYPE_INT64); /* same type: a copy */
    assert_memory_equal(y.data, x.data, 5 * sizeof(int64_t));
    tc__tensor_free(&y);
    tc__tensor_free(&x);
    /* uint64 above 2^63 converts to float as unsigned; bool -> float gives 0/1. */
    int64_t u = (int64_t)0xC000000000000000ull;
    x = etu_from_i64(TC_DTYPE_UINT64, 0, NULL, &u);
    y = cast(&x, TC_DTYPE_FLOAT64);
    assert_true(((double *)y.data)[0] == 13835058055282163712.0);
    tc__tensor_free(&y);
    tc__tensor_free(&x);
    int64_t bv[3] = {1, 0, 1};
    int64_t d3[1] = {3};
    x = etu_from_i64(TC_DTYPE_BOOL, 1, d3, bv);
    y = cast(&x, TC_DTYPE_FLOAT32);
    for (int i = 0; i < 3; i++) assert_true(((float *)y.data)[i] == (float)bv[i]);
    tc__tensor_free(&y);
    tc__tensor_free(&x);
    /* Empty tensors cast fine. */
    int64_t d0[2] = {0, 3};
    x = etu_tensor(TC_DTYPE_INT32, 2, d0);
    y = cast(&x, TC_DTYPE_FLOAT16);
    tc__tensor_free(&y);
    tc__tensor_free(&x);
}

static void test_cast_unsupported(void **state) {
    (void)state;
    int64_t d[1] = {2};
    double v[2] = {1, 2};
    tc__tensor x = etu_from_f64(TC_DTYPE_FLOAT32, 1, d, v);
    const tc__tensor *in[1] = {&x};
    static const struct {
        int64_t to;
        const char *name;
    } bad[] = {{8, "STRING"}, {17, "FLOAT8E4M3FN"}, {19, "FLOAT8E5M2"}, {22, "INT4"}, {14, "COMPLEX64"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        tc__attr a = etu_attr_int("to", bad[k].to);
        tc__tensor y;
        tc__err err = {0};
        assert_int_equal(etu_run(ETU_OP(Cast), 21, &a, 1, 1, in, 1, &y, &err), TC_STATUS_UNSUPPORTED);
        assert_non_null(strstr(err.msg, bad[k].name));
        /* The kernel refuses it too. */
        tc__tensor out = etu_tensor(TC_DTYPE_FLOAT32, 1, d);
        tc__tensor *pout[1] = {&out};
        tc__attrs as = {1, &a};
        tc__kernel_ctx kc = {"k", "Cast", 21, &as, 1, in, 1, pout, &err, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
        memset(&err, 0, sizeof err);
        assert_int_equal(tc__ref_Cast(&kc), TC_STATUS_UNSUPPORTED);
        assert_non_null(strstr(err.msg, bad[k].name));
        tc__tensor_free(&out);
    }
    tc__tensor_free(&x);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary_float),
        cmocka_unit_test(test_unary_defaults_and_specials),
        cmocka_unit_test(test_unary_int),
        cmocka_unit_test(test_clip),
        cmocka_unit_test(test_binary_float_broadcast),
        cmocka_unit_test(test_binary_int),
        cmocka_unit_test(test_pow_mixed_types),
        cmocka_unit_test(test_mod),
        cmocka_unit_test(test_binary_errors),
        cmocka_unit_test(test_variadic),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_logic),
        cmocka_unit_test(test_isnan_isinf),
        cmocka_unit_test(test_where),
        cmocka_unit_test(test_cast_float_to_int),
        cmocka_unit_test(test_cast_floats),
        cmocka_unit_test(test_cast_ints),
        cmocka_unit_test(test_cast_unsupported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
