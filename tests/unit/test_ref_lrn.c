/*
 * test_ref_lrn.c - reference LRN and its shape inference. Random cases (ranks
 * 2 to 5, odd and even sizes, windows wider than the channels) against the
 * ONNX formula written here with floor/ceil in double; hand-computed cases;
 * attribute errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dense_test_util.h"

/* The ONNX definition, computed independently: window [c - floor((size-1)/2), c + ceil((size-1)/2)] in [0, C). */
static double *naive_lrn(const tc__tensor *x, int64_t size, double alpha, double beta, double bias) {
    const int64_t n_b = x->dims[0], c_n = x->dims[1], n = tc__tensor_numel(x);
    const int64_t sp = n / (n_b * c_n);
    double *y = malloc((size_t)n * sizeof(double));
    for (int64_t b = 0; b < n_b; b++)
        for (int64_t c = 0; c < c_n; c++)
            for (int64_t s = 0; s < sp; s++) {
                double sq = 0;
                const double lo = fmax(0.0, (double)c - floor((size - 1) / 2.0));
                const double hi = fmin((double)(c_n - 1), (double)c + ceil((size - 1) / 2.0));
                for (int64_t i = (int64_t)lo; i <= (int64_t)hi; i++) {
                    double v = dtu_get(x, (b * c_n + i) * sp + s);
                    sq += v * v;
                }
                const int64_t at = (b * c_n + c) * sp + s;
                y[at] = dtu_get(x, at) / pow(bias + alpha / (double)size * sq, beta);
            }
    return y;
}

static void check_lrn(uint64_t seed, tc_dtype dt, int32_t rank, const int64_t *dims, int64_t size, double alpha,
                      double beta, double bias, bool defaults, double tol) {
    dtu_rng r = {seed};
    tc__tensor x = dtu_random(&r, dt, rank, dims);
    tc__attr at[4] = {dtu_attr_int("size", size), dtu_attr_float("alpha", (float)alpha), dtu_attr_float("beta", (float)beta),
                      dtu_attr_float("bias", (float)bias)};
    if (defaults) {
        alpha = 1e-4f;
        beta = 0.75f;
        bias = 1.0f;
    } else { /* as the attributes hold them */
        alpha = (float)alpha;
        beta = (float)beta;
        bias = (float)bias;
    }
    const tc__tensor *in[1] = {&x};
    tc__tensor y;
    dtu_run_ok(DTU_OP(LRN), 13, at, defaults ? 1 : 4, 1, in, 1, &y);
    dtu_assert_shape(&y, rank, dims);
    double *want = naive_lrn(&x, size, alpha, beta, bias);
    double mx = 0;
    for (int64_t i = 0; i < tc__tensor_numel(&x); i++) mx = fmax(mx, fabs(want[i]));
    assert_true(mx > 0.1); /* the data are not all zero */
    dtu_assert_values(&y, want, tol, "LRN");
    free(want);
    tc__tensor_free(&x);
    tc__tensor_free(&y);
}

static void test_lrn_random(void **state) {
    (void)state;
    dtu_rng r = {99};
    for (int t = 0; t < 24; t++) {
        const int32_t rank = 2 + (int32_t)(dtu_next(&r) % 4);
        int64_t dims[5];
        for (int32_t d = 0; d < rank; d++) dims[d] = 1 + (int64_t)(dtu_next(&r) % (d == 1 ? 9 : 4));
        const int64_t size = 1 + (int64_t)(dtu_next(&r) % 8); /* odd and even, sometimes wider than C */
        const double alpha = dtu_uniform(&r, 0.01, 2.0), beta = dtu_uniform(&r, 0.1, 1.5), bias = dtu_uniform(&r, 0.5, 3.0);
        check_lrn(100 + (uint64_t)t, TC_DTYPE_FLOAT32, rank, dims, size, alpha, beta, bias, t % 5 == 0, 1e-5);
    }
    const int64_t d4[4] = {2, 7, 3, 4};
    check_lrn(200, TC_DTYPE_FLOAT64, 4, d4, 4, 0.5, 0.75, 1.5, false, 1e-12);
    check_lrn(201, TC_DTYPE_FLOAT16, 4, d4, 5, 0.5, 0.75, 1.5, false, 2e-3);
}

/* x over 3 channels = [1, 2, 3], with alpha = size so that alpha / size = 1, beta 1, bias 1. */
static void test_lrn_hand_checked(void **state) {
    (void)state;
    const int64_t dims[3] = {1, 3, 1};
    tc__tensor x = dtu_from_f64(TC_DTYPE_FLOAT32, 3, dims, (const double[]){1, 2, 3});
    const tc__tensor *in[1] = {&x};
    tc__tensor y;
    /* size 2: the window is c and c + 1 -> 1/(1+1+4), 2/(1+4+9), 3/(1+9) */
    tc__attr a2[4] = {dtu_attr_int("size", 2), dtu_attr_float("alpha", 2), dtu_attr_float("beta", 1),
                      dtu_attr_float("bias", 1)};
    dtu_run_ok(DTU_OP(LRN), 13, a2, 4, 1, in, 1, &y);
    dtu_assert_values(&y, (const double[]){1.0 / 6, 2.0 / 14, 3.0 / 10}, 1e-6, "size 2");
    tc__tensor_free(&y);
    /* size 3: c - 1 to c + 1 -> 1/(1+5), 2/(1+14), 3/(1+13) */
    tc__attr a3[4] = {dtu_attr_int("size", 3), dtu_attr_float("alpha", 3), dtu_attr_float("beta", 1),
                      dtu_attr_float("bias", 1)};
    dtu_run_ok(DTU_OP(LRN), 13, a3, 4, 1, in, 1, &y);
    dtu_assert_values(&y, (const double[]){1.0 / 6, 2.0 / 15, 3.0 / 14}, 1e-6, "size 3");
    tc__tensor_free(&y);
    /* size 1, beta 0.5, bias 3, alpha 1: x / sqrt(3 + x^2) -> 1/2, 2/sqrt(7), 3/sqrt(12) */
    tc__attr a1[4] = {dtu_attr_int("size", 1), dtu_attr_float("alpha", 1), dtu_attr_float("beta", 0.5f),
                      dtu_attr_float("bias", 3)};
    dtu_run_ok(DTU_OP(LRN), 13, a1, 4, 1, in, 1, &y);
    dtu_assert_values(&y, (const double[]){0.5, 2 / sqrt(7.0), 3 / sqrt(12.0)}, 1e-6, "size 1");
    tc__tensor_free(&y);
    tc__tensor_free(&x);
}

static void test_lrn_errors(void **state) {
    (void)state;
    dtu_rng r = {7};
    const int64_t dims[4] = {1, 4, 2, 2};
    tc__tensor x = dtu_random(&r, TC_DTYPE_FLOAT32, 4, dims);
    tc__tensor xi = dtu_random(&r, TC_DTYPE_INT32, 4, dims);
    tc__tensor x1 = dtu_random(&r, TC_DTYPE_FLOAT32, 1, dims + 1);
    const tc__tensor *in[1] = {&x}, *in_i[1] = {&xi}, *in_1[1] = {&x1};
    const dtu_op op = DTU_OP(LRN);
    dtu_run_fails(op, 13, NULL, 0, 1, in, 1, TC_STATUS_INVALID_ARGUMENT, "size is required");
    tc__attr s0 = dtu_attr_int("size", 0), sf = dtu_attr_float("size", 3), s3 = dtu_attr_int("size", 3);
    dtu_run_fails(op, 13, &s0, 1, 1, in, 1, TC_STATUS_INVALID_ARGUMENT, "size is 0");
    dtu_run_fails(op, 13, &sf, 1, 1, in, 1, TC_STATUS_INVALID_ARGUMENT, "size must be an integer");
    tc__attr an[2] = {s3, dtu_attr_float("alpha", NAN)}, bi[2] = {s3, dtu_attr_float("beta", INFINITY)};
    dtu_run_fails(op, 13, an, 2, 1, in, 1, TC_STATUS_INVALID_ARGUMENT, "alpha");
    dtu_run_fails(op, 13, bi, 2, 1, in, 1, TC_STATUS_INVALID_ARGUMENT, "beta");
    tc__attr bs[2] = {s3, dtu_attr_int("bias", 1)};
    dtu_run_fails(op, 13, bs, 2, 1, in, 1, TC_STATUS_INVALID_ARGUMENT, "bias must be a float");
    dtu_run_fails(op, 13, &s3, 1, 1, in_i, 1, TC_STATUS_INVALID_GRAPH, "int32");
    dtu_run_fails(op, 13, &s3, 1, 1, in_1, 1, TC_STATUS_INVALID_ARGUMENT, "rank 1");
    tc__tensor_free(&x);
    tc__tensor_free(&xi);
    tc__tensor_free(&x1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lrn_random),
        cmocka_unit_test(test_lrn_hand_checked),
        cmocka_unit_test(test_lrn_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
