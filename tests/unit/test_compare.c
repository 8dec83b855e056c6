/* test_compare.c - the public comparison API (tc_compare_add / _cosine / _rel_l2 / _sqnr_db): figures checked
 * against values worked out by hand, exact types, NaN/Inf pairs, FP16 input, top-5 rows, accumulation over samples
 * and the refusal of mismatched or malformed tensors. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tailcut/tailcut.h"

static tc_tensor tensor(tc_dtype dtype, int32_t rank, const int64_t *dims, void *data, size_t nbytes) {
    tc_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    t.rank = rank;
    for (int32_t d = 0; d < rank; d++) t.dims[d] = dims[d];
    t.data = data;
    t.nbytes = nbytes;
    return t;
}

static void test_float_figures(void **state) {
    (void)state;
    float a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3.5f, 3};
    const int64_t dims[2] = {2, 2};
    tc_tensor ta = tensor(TC_DTYPE_FLOAT32, 2, dims, a, sizeof a), tb = tensor(TC_DTYPE_FLOAT32, 2, dims, b, sizeof b);
    tc_compare_stats st;
    memset(&st, 0, sizeof st);
    tc_error err;
    assert_int_equal(tc_compare_add(&st, &ta, &tb, &err), TC_STATUS_OK);
    assert_int_equal(st.exact, 0);
    assert_int_equal(st.elements, 4);
    assert_int_equal(st.finite, 4);
    assert_true(fabs(tc_compare_cosine(&st) - 27.5 / sqrt(30.0 * 26.25)) < 1e-12);
    assert_true(fabs(st.max_abs - 1.0) < 1e-12);
    assert_true(fabs(st.sum_abs - 1.5) < 1e-12);
    assert_true(fabs(st.max_rel - 0.25) < 1e-12);
    assert_true(fabs(tc_compare_rel_l2(&st) - sqrt(1.25) / sqrt(30.0)) < 1e-12);
    assert_true(fabs(tc_compare_sqnr_db(&st) - 10.0 * log10(30.0 / 1.25)) < 1e-9);
    /* rows of the last dim: [1,2] vs [1,2] agree, [3,4] vs [3.5,3] do not */
    assert_int_equal(st.rows, 2);
    assert_int_equal(st.top1, 1);
    assert_int_equal(st.rows5, 0);
    /* a second sample accumulates */
    assert_int_equal(tc_compare_add(&st, &ta, &ta, &err), TC_STATUS_OK);
    assert_int_equal(st.elements, 8);
    assert_int_equal(st.rows, 4);
    assert_int_equal(st.top1, 3);
    assert_true(fabs(st.sum_abs - 1.5) < 1e-12);
    /* equal tensors: cosine exactly 1 (this vector's sqrt(s) * sqrt(s) rounds below s: the formula gave 1 - 2^-53) */
    float e[3] = {1.3292402029037476f, -1.6274266242980957f, 2.671624183654785f};
    const int64_t edims[1] = {3};
    tc_tensor te = tensor(TC_DTYPE_FLOAT32, 1, edims, e, sizeof e);
    tc_compare_stats eq;
    memset(&eq, 0, sizeof eq);
    assert_int_equal(tc_compare_add(&eq, &te, &te, &err), TC_STATUS_OK);
    assert_true(tc_compare_cosine(&eq) == 1.0);
    assert_true(isinf(tc_compare_sqnr_db(&eq)));
    /* values_only: no rows */
    tc_compare_stats v;
    memset(&v, 0, sizeof v);
    v.values_only = 1;
    assert_int_equal(tc_compare_add(&v, &ta, &tb, &err), TC_STATUS_OK);
    assert_int_equal(v.rows, 0);
    assert_int_equal(v.finite, 4);
}

static void test_exact_nan_half_top5(void **state) {
    (void)state;
    tc_error err;
    int32_t ia[3] = {1, 2, 3}, ib[3] = {1, 5, 3};
    const int64_t d3[1] = {3};
    tc_tensor ta = tensor(TC_DTYPE_INT32, 1, d3, ia, sizeof ia), tb = tensor(TC_DTYPE_INT32, 1, d3, ib, sizeof ib);
    tc_compare_stats st;
    memset(&st, 0, sizeof st);
    assert_int_equal(tc_compare_add(&st, &ta, &tb, &err), TC_STATUS_OK);
    assert_int_equal(st.exact, 1);
    assert_int_equal(st.mismatches, 1);
    assert_int_equal(st.elements, 3);

    const int64_t d2[1] = {2};
    float na[2] = {NAN, 1}, nb[2] = {NAN, 2}, ia2[2] = {INFINITY, 1}, ib2[2] = {1, 1};
    tc_tensor a1 = tensor(TC_DTYPE_FLOAT32, 1, d2, na, 8), b1 = tensor(TC_DTYPE_FLOAT32, 1, d2, nb, 8);
    tc_tensor a2 = tensor(TC_DTYPE_FLOAT32, 1, d2, ia2, 8), b2 = tensor(TC_DTYPE_FLOAT32, 1, d2, ib2, 8);
    memset(&st, 0, sizeof st);
    assert_int_equal(tc_compare_add(&st, &a1, &b1, &err), TC_STATUS_OK);
    assert_int_equal(st.nan_mismatches, 0); /* NaN on both sides agrees */
    assert_int_equal(st.finite, 1);
    assert_int_equal(tc_compare_add(&st, &a2, &b2, &err), TC_STATUS_OK);
    assert_int_equal(st.nan_mismatches, 1);
    assert_int_equal(st.finite, 2);

    uint16_t h[2] = {0x3C00, 0xC000}; /* 1.0, -2.0 in FP16 */
    tc_tensor ha = tensor(TC_DTYPE_FLOAT16, 1, d2, h, 4);
    memset(&st, 0, sizeof st);
    assert_int_equal(tc_compare_add(&st, &ha, &ha, &err), TC_STATUS_OK);
    assert_true(fabs(st.sum_a2 - 5.0) < 1e-12);
    assert_true(isinf(tc_compare_sqnr_db(&st)) && tc_compare_sqnr_db(&st) > 0);
    assert_true(fabs(tc_compare_cosine(&st) - 1.0) < 1e-12);

    const int64_t d6[2] = {2, 6};
    float t5a[12] = {6, 5, 4, 3, 2, 1, 6, 5, 4, 3, 2, 1}, t5b[12] = {1, 2, 3, 4, 5, 6, 0, 9, 0, 0, 0, 0};
    tc_tensor xa = tensor(TC_DTYPE_FLOAT32, 2, d6, t5a, sizeof t5a), xb = tensor(TC_DTYPE_FLOAT32, 2, d6, t5b, sizeof t5b);
    memset(&st, 0, sizeof st);
    assert_int_equal(tc_compare_add(&st, &xa, &xb, &err), TC_STATUS_OK);
    assert_int_equal(st.rows, 2);
    assert_int_equal(st.top1, 0);
    assert_int_equal(st.rows5, 2);
    assert_int_equal(st.top5, 1); /* B's argmax 5 is A's smallest; B's argmax 1 is in A's top 5 */
}

static void test_refusals(void **state) {
    (void)state;
    float a[4] = {1, 2, 3, 4};
    double b[4] = {1, 2, 3, 4};
    const int64_t dims[2] = {2, 2}, other[2] = {4, 1};
    tc_tensor ta = tensor(TC_DTYPE_FLOAT32, 2, dims, a, sizeof a);
    tc_tensor tb = tensor(TC_DTYPE_FLOAT64, 2, dims, b, sizeof b);
    tc_compare_stats st;
    memset(&st, 0, sizeof st);
    tc_error err;
    assert_int_equal(tc_compare_add(&st, &ta, &tb, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "float32"));
    assert_non_null(strstr(err.message, "float64"));
    tc_tensor tc = tensor(TC_DTYPE_FLOAT32, 2, other, a, sizeof a);
    assert_int_equal(tc_compare_add(&st, &ta, &tc, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "shape"));
    tc_tensor small = tensor(TC_DTYPE_FLOAT32, 2, dims, a, 8);
    assert_int_equal(tc_compare_add(&st, &ta, &small, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "needs 16"));
    tc_tensor bad = tensor((tc_dtype)99, 2, dims, a, sizeof a);
    assert_int_equal(tc_compare_add(&st, &bad, &bad, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_int_equal(tc_compare_add(NULL, &ta, &ta, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_int_equal(st.elements, 0); /* nothing was added by a refused call */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float_figures),
        cmocka_unit_test(test_exact_nan_half_top5),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
