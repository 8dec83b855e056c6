/*
 * test_ref_reduce_norm.c - reference kernels for Softmax/LogSoftmax (opset 13
 * single axis and the older flatten-to-2-D form), LayerNormalization (axes,
 * optional bias, Mean/InvStdDev outputs, broadcast scale) and the Reduce*
 * family (axes as attribute or input, keepdims, noop_with_empty_axes, empty
 * reductions, integer and bool types), each against a direct formula.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "elem_test_util.h"

/* ---- Softmax ------------------------------------------------------------------------- */

/* Checks y = softmax / logsoftmax of x over the elements that share every index outside [a0, a1). */
static void check_softmax(const tc__tensor *x, const tc__tensor *y, int32_t a0, int32_t a1, bool log_out,
                          double tol) {
    int64_t n = tc__tensor_numel(x);
    for (int64_t i = 0; i < n; i++) {
        int64_t idx[TC_MAX_RANK];
        etu_unravel(i, x->rank, x->dims, idx);
        /* Walk the slice containing i. */
        int64_t m = 1;
        for (int32_t d = a0; d < a1; d++) m *= x->dims[d];
        double mx = -INFINITY, sum = 0;
        for (int pass = 0; pass < 2; pass++) {
            for (int64_t k = 0; k < m; k++) {
                int64_t j[TC_MAX_RANK];
                memcpy(j, idx, sizeof j);
                int64_t rem = k;
                for (int32_t d = a1 - 1; d >= a0; d--) {
                    j[d] = rem % x->dims[d];
                    rem /= x->dims[d];
                }
                int64_t lin = 0;
                for (int32_t d = 0; d < x->rank; d++) lin = lin * x->dims[d] + j[d];
                double v = tc__tensor_get_f64(x, lin);
                if (pass == 0) mx = v > mx ? v : mx;
                else sum += exp(v - mx);
            }
        }
        double v = tc__tensor_get_f64(x, i);
        double want = log_out ? v - mx - log(sum) : exp(v - mx) / sum;
        ETU_ASSERT_CLOSE(tc__tensor_get_f64(y, i), want, tol, log_out ? "LogSoftmax" : "Softmax", i);
    }
}

static void test_softmax(void **state) {
    (void)state;
    etu_rng rng = {13};
    int64_t d[3] = {3, 5, 7};
    static const tc_dtype types[] = {TC_DTYPE_FLOAT32, TC_DTYPE_FLOAT64, TC_DTYPE_FLOAT16};
    for (int k = 0; k < 3; k++) {
        tc__tensor x = etu_random(&rng, types[k], 3, d, -6, 6);
        const tc__tensor *in[1] = {&x};
        double tol = types[k] == TC_DTYPE_FLOAT16 ? 2e-3 : types[k] == TC_DTYPE_FLOAT32 ? 1e-6 : 1e-13;
        for (int lg = 0; lg < 2; lg++) {
            etu_op op = lg ? ETU_OP(LogSoftmax) : ETU_OP(Softmax);
            /* opset 13: one axis; default -1. */
            for (int64_t axis = -3; axis <= 3; axis++) {
                tc__attr a = etu_attr_int("axis", axis == 3 ? -1 : axis);
                tc__tensor y;
                etu_run_ok(op, 13, &a, axis == 3 ? 0 : 1, 1, in, 1, &y);
                int32_t ax = (int32_t)(axis == 3 ? 2 : axis < 0 ? axis + 3 : axis);
                check_softmax(&x, &y, ax, ax + 1, lg, tol);
                tc__tensor_free(&y);
            }
            /* opset 11: flatten at axis (default 1), normalise each row of the 2-D view. */
            for (int64_t axis = -3; axis <= 4; axis++) {
                tc__attr a = etu_attr_int("axis", axis);
                tc__tensor y;
                etu_run_ok(op, 11, &a, axis == 4 ? 0 : 1, 1, in, 1, &y);
                int32_t ax = (int32_t)(axis == 4 ? 1 : axis < 0 ? axis + 3 : axis);
                check_softmax(&x, &y, ax, 3, lg, tol);
                tc__tensor_free(&y);
            }
            /* Out-of-range axes fail. */
            tc__attr bad = etu_attr_int("axis", 3);
            tc__tensor y;
            tc__err err = {0};
            assert_int_equal(etu_run(op, 13, &bad, 1, 1, in, 1, &y, &err), TC_STATUS_INVALID_ARGUMENT);
        }
        tc__tensor_free(&x);
    }
    /* Large values do not overflow; a single element gives 1 (log: 0). */
    double big[3] = {1000, 1001, 1002};
    int64_t d3[1] = {3};
    tc__tensor x = etu_from_f64(TC_DTYPE_FLOAT32, 1, d3, big);
    const tc__tensor *in[1] = {&x};
    tc__tensor y;
    etu_run_ok(ETU_OP(Softmax), 13, NULL, 0, 1, in, 1, &y);
    check_softmax(&x, &y, 0, 1, false, 1e-6);
    tc__tensor_free(&y);
    tc__tensor_free(&x);
    int64_t d1[2] = {4, 1};
    etu_rng r2 = {3};
    x = etu_random(&r2, TC_DTYPE_FLOAT32, 2, d1, -3, 3);
    etu_run_ok(ETU_OP(LogSoftmax), 13, NULL, 0, 1, in, 1, &y);
    for (int i = 0; i < 4; i++) assert_true(tc__tensor_get_f64(&y, i) == 0.0);
    tc__tensor_free(&y);
    tc__tensor_free(&x);
}

/* ---- LayerNormalization -------------------------------------------------------------- */

static void check_layernorm(const tc__tensor *x, const tc__tensor *scale, const tc__tensor *bias, int32_t axis,
                            double eps, const tc__tensor *y, const tc__tensor *mean, const tc__tensor *inv,
                            double tol) {
    int64_t outer = 1, n = 1;
    for (int32_t i = 0; i < x->rank; i++) {
        if (i < axis) outer *= x->dims[i];
        else n *= x->dims[i];
    }
    for (int64_t o = 0; o < outer; o++) {
        double s = 0, ss = 0;
        for (int64_t j = 0; j < n; j++) s += tc__tensor_get_f64(x, o * n + j);
        double mu = s / (double)n;
        for (int64_t j = 0; j < n; j++) ss += pow(tc__tensor_get_f64(x, o * n + j) - mu, 2);
        double is = 1 / sqrt(ss / (double)n + eps);
        for (int64_t j = 0; j < n; j++) {
            /* Scale/bias broadcast against dims[axis:]. */
            int64_t idx[TC_MAX_RANK];
            etu_unravel(j, x->rank - axis, x->dims + axis, idx);
            double sc = tc__tensor_get_f64(scale, etu_bcast_index(scale, x->rank - axis, idx));
            double b = bias ? tc__tensor_get_f64(bias, etu_bcast_index(bias, x->rank - axis, idx)) : 0;
            double want = (tc__tensor_get_f64(x, o * n + j) - mu) * is * sc + b;
            ETU_ASSERT_CLOSE(tc__tensor_get_f64(y, o * n + j), want, tol, "LayerNormalization", o * n + j);
        }
        if (mean) ETU_ASSERT_CLOSE(tc__tensor_get_f64(mean, o), mu, tol, "Mean", o);
        if (inv) ETU_ASSERT_CLOSE(tc__tensor_get_f64(inv, o), is, tol, "InvStdDev", o);
    }
}

static void test_layernorm(void **state) {
    (void)state;
    etu_rng rng = {17};
    int64_t d[4] = {2, 3, 5, 7};
    tc__tensor x = etu_random(&rng, TC_DTYPE_FLOAT32, 4, d, -4, 4);
    for (int32_t axis = -4; axis < 4; axis++) {
        int32_t a = axis < 0 ? axis + 4 : axis;
        tc__tensor scale = etu_random(&rng, TC_DTYPE_FLOAT32, 4 - a, d + a, -2, 2);
        tc__tensor bias = etu_random(&rng, TC_DTYPE_FLOAT32, 4 - a, d + a, -2, 2);
        tc__attr at[2] = {etu_attr_int("axis", axis), etu_attr_float("epsilon", 0.1f)};
        /* Three outputs with bias. */
        const tc__tensor *in[3] = {&x, &scale, &bias};
        tc__tensor y[3];
        etu_run_ok(ETU_OP(LayerNormalization), 17, at, 2, 3, in, 3, y);
        int64_t sd[4];
        for (int i = 0; i < 4; i++) sd[i] = i < a ? d[i] : 1;
        etu_assert_shape(&y[1], 4, sd);
        etu_assert_shape(&y[2], 4, sd);
        assert_int_equal(y[1].dtype, TC_DTYPE_FLOAT32);
        check_layernorm(&x, &scale, &bias, a, (double)0.1f, &y[0], &y[1], &y[2], 1e-5);
        for (int i = 0; i < 3; i++) tc__tensor_free(&y[i]);
        /* One output, no bias, default epsilon. */
        tc__attr at1 = etu_attr_int("axis", axis);
        etu_run_ok(ETU_OP(LayerNormalization), 17, &at1, 1, 2, in, 1, y);
        check_layernorm(&x, &scale, NULL, a, (double)1e-5f, &y[0], NULL, NULL, 1e-5);
        tc__tensor_free(&y[0]);
        tc__tensor_free(&scale);
        tc__tensor_free(&bias);
    }
    /* Default axis -1; Scale of shape [1] broadcast; float64 input with float64 statistics; bias absent as NULL. */
    tc__tensor xd = etu_random(&rng, TC_DTYPE_FLOAT64, 4, d, -4, 4);
    int64_t one[1] = {1};
    tc__tensor scale = etu_random(&rng, TC_DTYPE_FLOAT64, 1, one, 0.5, 2);
    const tc__tensor *in[3] = {&xd, &scale, NULL};
    tc__tensor y[3];
    tc__attr stash = etu_attr_int("stash_type", TC_DTYPE_FLOAT64);
    etu_run_ok(ETU_OP(LayerNormalization), 17, &stash, 1, 3, in, 3, y);
    assert_int_equal(y[1].dtype, TC_DTYPE_FLOAT64);
    assert_int_equal(y[2].dtype, TC_DTYPE_FLOAT64);
    check_layernorm(&xd, &scale, NULL, 3, (double)1e-5f, &y[0], &y[1], &y[2], 1e-12);
    for (int i = 0; i < 3; i++) tc__tensor_free(&y[i]);
    tc__tensor_free(&scale);
    tc__tensor_free(&xd);
    /* A scale that does not broadcast to the normalised shape is refused. */
    int64_t six[1] = {6};
    scale = etu_random(&rng, TC_DTYPE_FLOAT32, 1, six, 0.5, 2);
    in[0] = &x;
    tc__err err = {0};
    assert_int_equal(etu_run(ETU_OP(LayerNormalization), 17, NULL, 0, 2, in, 1, y, &err), TC_STATUS_INVALID_ARGUMENT);
    tc__tensor_free(&scale);
    tc__tensor_free(&x);
}

/* ---- Reduce* ------------------------------------------------------------------------------ */

enum { RMEAN, RSUM, RMAX, RMIN, RPROD, RSUMSQ, RL2, RCOUNT };
static const char *const kReduceNames[RCOUNT] = {"ReduceMean", "ReduceSum",       "ReduceMax", "ReduceMin",
                                                 "ReduceProd", "ReduceSumSquare", "ReduceL2"};

static etu_op reduce_op(int which) {
    switch (which) {
    case RMEAN: return ETU_OP(ReduceMean);
    case RSUM: return ETU_OP(ReduceSum);
    case RMAX: return ETU_OP(ReduceMax);
    case RMIN: return ETU_OP(ReduceMin);
    case RPROD: return ETU_OP(ReduceProd);
    case RSUMSQ: return ETU_OP(ReduceSumSquare);
    default: return ETU_OP(ReduceL2);
    }
}

/* Direct formula: reduces x over mask into a value for output multi-index oidx (in x's rank, reduced dims 0). */
static double reduce_ref(int which, const tc__tensor *x, const bool *mask, const int64_t *oidx, bool is_int) {
    int64_t n = tc__tensor_numel(x);
    double acc = which == RMAX ? -INFINITY : which == RMIN ? INFINITY : which == RPROD ? 1 : 0;
    int64_t cnt = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t idx[TC_MAX_RANK];
        etu_unravel(i, x->rank, x->dims, idx);
        bool in_slice = true;
        for (int32_t d = 0; d < x->rank; d++)
            if (!mask[d] && idx[d] != oidx[d]) in_slice = false;
        if (!in_slice) continue;
        double v = tc__tensor_get_f64(x, i);
        cnt++;
        switch (which) {
        case RMEAN: case RSUM: acc += v; break;
        case RMAX: acc = v > acc ? v : acc; break;
        case RMIN: acc = v < acc ? v : acc; break;
        case RPROD: acc *= v; break;
        default: acc += v * v; break;
        }
    }
    if (which == RMEAN) acc = is_int ? trunc(acc / (double)cnt) : acc / (double)cnt;
    if (which == RL2) acc = is_int ? trunc(sqrt(acc)) : sqrt(acc);
    return acc;
}

/* Runs one reduction of x with the given axes (NULL: none given) and checks shape and values. */
static void check_reduce(int which, int64_t opset, const tc__tensor *x, const int64_t *axes, int n_axes,
                         bool axes_as_input, int keepdims, int noop) {
    tc__attr at[3];
    int na = 0;
    if (keepdims >= 0) at[na++] = etu_attr_int("keepdims", keepdims);
    if (noop >= 0) at[na++] = etu_attr_int("noop_with_empty_axes", noop);
    tc__tensor axes_t = {0};
    const tc__tensor *in[2] = {x, NULL};
    int n_in = 1;
    if (axes != NULL && axes_as_input) {
        int64_t d[1] = {n_axes};
        axes_t = etu_from_i64(TC_DTYPE_INT64, 1, d, axes);
        in[1] = &axes_t;
        n_in = 2;
    } else if (axes != NULL && n_axes > 0) {
        at[na++] = etu_attr_ints("axes", axes, (size_t)n_axes);
    }
    tc__tensor y;
    etu_run_ok(reduce_op(which), opset, at, na, n_in, in, 1, &y);
    bool mask[TC_MAX_RANK] = {false};
    bool any = axes != NULL && n_axes > 0;
    for (int k = 0; any && k < n_axes; k++) mask[axes[k] < 0 ? axes[k] + x->rank : axes[k]] = true;
    if (!any && noop != 1)
        for (int32_t i = 0; i < x->rank; i++) mask[i] = true;
    /* Expected shape. */
    int64_t od[TC_MAX_RANK], full[TC_MAX_RANK];
    int32_t r = 0;
    for (int32_t i = 0; i < x->rank; i++) {
        full[i] = mask[i] ? 1 : x->dims[i];
        if (!mask[i]) od[r++] = x->dims[i];
        else if (keepdims != 0) od[r++] = 1;
    }
    etu_assert_shape(&y, r, od);
    assert_int_equal(y.dtype, x->dtype);
    bool is_int = !tc__dtype_is_float(x->dtype);
    double tol = x->dtype == TC_DTYPE_FLOAT32 ? 1e-6 : x->dtype == TC_DTYPE_FLOAT16 ? 2e-3 : 1e-12;
    for (int64_t i = 0; i < tc__tensor_numel(&y); i++) {
        int64_t oidx[TC_MAX_RANK];
        etu_unravel(i, x->rank, full, oidx);
        double want = reduce_ref(which, x, mask, oidx, is_int);
        if (is_int) { /* integer results wrap to the type like the kernel's (exact: |want| < 2^53 here) */
            tc__tensor w = etu_scalar_i64(x->dtype, (int64_t)want);
            want = tc__tensor_get_f64(&w, 0);
            tc__tensor_free(&w);
        }
        ETU_ASSERT_CLOSE(tc__tensor_get_f64(&y, i), want, tol, kReduceNames[which], i);
    }
    tc__tensor_free(&y);
    if (axes_t.data) tc__tensor_free(&axes_t);
}

static void test_reduce_float(void **state) {
    (void)state;
    etu_rng rng = {23};
    int64_t d[3] = {3, 5, 7};
    static const tc_dtype types[] = {TC_DTYPE_FLOAT32, TC_DTYPE_FLOAT64, TC_DTYPE_FLOAT16};
    static const int64_t axes_sets[][3] = {{0}, {1}, {2}, {-1}, {0, 2}, {-2, 0}, {0, 1, 2}};
    static const int axes_len[] = {1, 1, 1, 1, 2, 2, 3};
    for (int k = 0; k < 3; k++) {
        tc__tensor x = etu_random(&rng, types[k], 3, d, 0.5, 1.5);
        for (int which = 0; which < RCOUNT; which++) {
            int64_t attr_opset = which == RSUM ? 11 : 13, input_opset = 18;
            for (size_t s = 0; s < sizeof axes_len / sizeof axes_len[0]; s++) {
                for (int keep = 0; keep <= 1; keep++) {
                    check_reduce(which, attr_opset, &x, axes_sets[s], axes_len[s], false, keep, -1);
                    check_reduce(which, input_opset, &x, axes_sets[s], axes_len[s], true, keep, -1);
                }
            }
            /* No axes: all axes; default keepdims is 1. */
            check_reduce(which, attr_opset, &x, NULL, 0, false, -1, -1);
            check_reduce(which, input_opset, &x, NULL, 0, true, 0, 0);
            /* Empty axes input with noop_with_empty_axes=1: identity. */
            int64_t none[1] = {0};
            check_reduce(which, input_opset, &x, none, 0, true, 1, 1);
            /* ReduceSum takes axes as an input from opset 13. */
            if (which == RSUM) check_reduce(which, 13, &x, axes_sets[4], 2, true, 0, -1);
        }
        tc__tensor_free(&x);
    }
}

static void test_reduce_int_bool(void **state) {
    (void)state;
    etu_rng rng = {29};
    int64_t d[2] = {5, 3};
    static const tc_dtype types[] = {TC_DTYPE_INT32, TC_DTYPE_INT64, TC_DTYPE_UINT8, TC_DTYPE_INT8};
    int64_t ax0[1] = {0}, ax1[1] = {-1};
    for (int k = 0; k < 4; k++) {
        tc__tensor x = etu_random(&rng, types[k], 2, d, types[k] == TC_DTYPE_UINT8 ? 1 : -9, 9);
        for (int which = 0; which < RCOUNT; which++) {
            if (which == RL2 && types[k] != TC_DTYPE_UINT8) continue; /* wrap-free L2 needs non-negative sums */
            check_reduce(which, 18, &x, ax0, 1, true, 1, -1);
            check_reduce(which, 18, &x, ax1, 1, true, 0, -1);
            check_reduce(which, 18, &x, NULL, 0, false, 0, -1);
        }
        tc__tensor_free(&x);
    }
    /* bool ReduceMax / ReduceMin (opset 20; test_reduce_min_bool_inputs data). */
    int64_t bv[8] = {1, 1, 1, 0, 0, 1, 0, 0};
    int64_t bd[2] = {4, 2};
    tc__tensor b = etu_from_i64(TC_DTYPE_BOOL, 2, bd, bv);
    int64_t axes[1] = {1};
    int64_t d1[1] = {1};
    tc__tensor at = etu_from_i64(TC_DTYPE_INT64, 1, d1, axes);
    const tc__tensor *in[2] = {&b, &at};
    tc__tensor y;
    etu_run_ok(ETU_OP(ReduceMin), 20, NULL, 0, 2, in, 1, &y);
    int64_t wmin[4] = {1, 0, 0, 0}, wmax[4] = {1, 1, 1, 0};
    for (int i = 0; i < 4; i++) assert_int_equal(((uint8_t *)y.data)[i], wmin[i]);
    tc__tensor_free(&y);
    etu_run_ok(ETU_OP(ReduceMax), 20, NULL, 0, 2, in, 1, &y);
    for (int i = 0; i < 4; i++) assert_int_equal(((uint8_t *)y.data)[i], wmax[i]);
    tc__tensor_free(&y);
    tc__err err = {0};
    assert_int_equal(etu_run(ETU_OP(ReduceSum), 20, NULL, 0, 2, in, 1, &y, &err), TC_STATUS_UNSUPPORTED);
    tc__tensor_free(&at);
    tc__tensor_free(&b);
}

static void test_reduce_empty(void **state) {
    (void)state;
    /* data 2x0x4 reduced over axis 1 (the ONNX *_empty_set tests): the identity of each op. */
    int64_t d[3] = {2, 0, 4};
    tc__tensor x = etu_tensor(TC_DTYPE_FLOAT32, 3, d);
    int64_t axes[1] = {1};
    int64_t d1[1] = {1};
    tc__tensor at = etu_from_i64(TC_DTYPE_INT64, 1, d1, axes);
    const tc__tensor *in[2] = {&x, &at};
    const double want[RCOUNT] = {NAN, 0, -INFINITY, INFINITY, 1, 0, 0};
    for (int which = 0; which < RCOUNT; which++) {
        tc__tensor y;
        etu_run_ok(reduce_op(which), 20, NULL, 0, 2, in, 1, &y);
        int64_t od[3] = {2, 1, 4};
        etu_assert_shape(&y, 3, od);
        for (int i = 0; i < 8; i++) ETU_ASSERT_CLOSE(tc__tensor_get_f64(&y, i), want[which], 0, kReduceNames[which], i);
        tc__tensor_free(&y);
    }
    /* Reducing a non-empty axis of an empty tensor gives an empty output. */
    axes[0] = 2;
    tc__tensor_free(&at);
    at = etu_from_i64(TC_DTYPE_INT64, 1, d1, axes);
    tc__tensor y;
    etu_run_ok(ETU_OP(ReduceSum), 13, NULL, 0, 2, in, 1, &y);
    int64_t od[3] = {2, 0, 1};
    etu_assert_shape(&y, 3, od);
    tc__tensor_free(&y);
    tc__tensor_free(&at);
    tc__tensor_free(&x);
    /* Integer empty Max gives the type's minimum. */
    x = etu_tensor(TC_DTYPE_INT16, 3, d);
    axes[0] = 1;
    at = etu_from_i64(TC_DTYPE_INT64, 1, d1, axes);
    etu_run_ok(ETU_OP(ReduceMax), 18, NULL, 0, 2, in, 1, &y);
    assert_int_equal(tc__tensor_get_i64(&y, 0), INT16_MIN);
    tc__tensor_free(&y);
    tc__tensor_free(&at);
    tc__tensor_free(&x);
}

static void test_reduce_errors(void **state) {
    (void)state;
    etu_rng rng = {31};
    int64_t d[2] = {3, 4};
    tc__tensor x = etu_random(&rng, TC_DTYPE_FLOAT32, 2, d, -1, 1);
    int64_t bad[2] = {2, 0}, dup[2] = {1, -1};
    int64_t d2[1] = {2};
    tc__tensor at = etu_from_i64(TC_DTYPE_INT64, 1, d2, bad);
    const tc__tensor *in[2] = {&x, &at};
    tc__tensor y;
    tc__err err = {0};
    assert_int_equal(etu_run(ETU_OP(ReduceMean), 18, NULL, 0, 2, in, 1, &y, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "out of range"));
    tc__tensor_free(&at);
    at = etu_from_i64(TC_DTYPE_INT64, 1, d2, dup);
    memset(&err, 0, sizeof err);
    assert_int_equal(etu_run(ETU_OP(ReduceMean), 18, NULL, 0, 2, in, 1, &y, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "twice"));
    tc__tensor_free(&at);
    tc__tensor_free(&x);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_layernorm),
        cmocka_unit_test(test_reduce_float),
        cmocka_unit_test(test_reduce_int_bool),
        cmocka_unit_test(test_reduce_empty),
        cmocka_unit_test(test_reduce_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
