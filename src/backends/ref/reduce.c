/*
 * reduce.c - reference kernels for ReduceMean ReduceSum ReduceMax ReduceMin
 * ReduceProd ReduceSumSquare ReduceL2.
 *
 * Axes come from the 'axes' attribute before opset 18 (ReduceSum: before 13)
 * and from the optional second input after. No axes means every axis, or no
 * reduction at all when noop_with_empty_axes=1. keepdims does not change the
 * order of the output elements, so it only matters to shape inference.
 * Floats accumulate in double; integers exactly in 64 bits (wrapping). An empty
 * reduction gives the identity: 0 for sums, 1 for products, -inf/+inf (the
 * type's minimum/maximum for integers) for Max/Min, NaN for a float mean.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/ref/numeric.h"
#include "backends/ref/ref.h"

typedef enum redop { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_SUMSQ, R_L2 } redop;

/* Sets mask[i] for each reduced axis of a rank-`rank` input; *noop when nothing is reduced. */
static tc_status reduce_mask(const tc__kernel_ctx *ctx, int32_t rank, bool *mask, bool *noop) {
    bool axes_input = ctx->opset >= (strcmp(ctx->op_type, "ReduceSum") == 0 ? 13 : 18);
    const int64_t *attr_axes = NULL;
    size_t n_attr = tc__attr_ints(ctx->attrs, "axes", &attr_axes);
    const tc__tensor *t = ctx->n_in >= 2 ? ctx->in[1] : NULL;
    if (t != NULL && n_attr > 0)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axes given both as attribute and as input");
    if (t != NULL && !axes_input)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axes input is not allowed before opset %d",
                        strcmp(ctx->op_type, "ReduceSum") == 0 ? 13 : 18);
    int64_t n = 0;
    if (t != NULL) {
        if (t->dtype != TC_DTYPE_INT64 || t->rank > 1)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axes must be a 1-D int64 tensor, got %s of rank %d",
                            tc_dtype_name(t->dtype) ? tc_dtype_name(t->dtype) : "unknown", (int)t->rank);
        n = tc__tensor_numel(t);
    } else {
        n = (int64_t)n_attr;
    }
    for (int32_t i = 0; i < rank; i++) mask[i] = false;
    *noop = false;
    if (n == 0) {
        if (tc__attr_int(ctx->attrs, "noop_with_empty_axes", 0) != 0) *noop = true;
        else
            for (int32_t i = 0; i < rank; i++) mask[i] = true;
        return TC_STATUS_OK;
    }
    for (int64_t k = 0; k < n; k++) {
        int64_t a = t != NULL ? ((const int64_t *)t->data)[k] : attr_axes[k];
        if (a < -(int64_t)rank || a >= (int64_t)rank)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                            (long long)a, (int)rank);
        if (a < 0) a += rank;
        if (mask[a])
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axis %lld appears twice in axes", (long long)a);
        mask[a] = true;
    }
    return TC_STATUS_OK;
}

static double f_init(redop op) {
    switch (op) {
    case R_MAX: return -INFINITY;
    case R_MIN: return INFINITY;
    case R_PROD: return 1.0;
    default: return 0.0;
    }
}

static double f_step(redop op, double acc, double v) {
    switch (op) {
    case R_SUM: case R_MEAN: return acc + v;
    case R_SUMSQ: case R_L2: return acc + v * v;
    case R_PROD: return acc * v;
    case R_MAX: return (v != v || acc != acc) ? acc + v : (v > acc ? v : acc);
    case R_MIN: return (v != v || acc != acc) ? acc + v : (v < acc ? v : acc);
    }
    return acc;
}

/* Integer accumulation in the int64 (signed) or uint64 (unsigned, bool) domain; products and sums wrap. */
static uint64_t u_step(redop op, bool is_signed, uint64_t acc, uint64_t v) {
    switch (op) {
    case R_SUM: case R_MEAN: return acc + v;
    case R_SUMSQ: case R_L2: return acc + v * v;
    case R_PROD: return acc * v;
    case R_MAX: return is_signed ? ((int64_t)v > (int64_t)acc ? v : acc) : (v > acc ? v : acc);
    case R_MIN: return is_signed ? ((int64_t)v < (int64_t)acc ? v : acc) : (v < acc ? v : acc);
    }
    return acc;
}

static tc_status run_reduce(const tc__kernel_ctx *ctx, redop op) {
    if (ctx->n_in < 1 || ctx->in[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "required input 0 (data) is missing");
    const tc__tensor *x = ctx->in[0];
    tc_status st = tc__ref_check_io(ctx, 1, 0, x->dtype, NULL);
    if (st) return st;
    tc__tensor *y = ctx->out[0];
    tc__numclass cls = tc__numclass_of(x->dtype);
    if (cls == TC__NUM_NONE || (cls == TC__NUM_BOOL && op != R_MAX && op != R_MIN))
        return tc__ref_unsupported_dtype(ctx, 0, x->dtype);
    int32_t rank = x->rank;
    bool mask[TC_MAX_RANK];
    bool noop;
    if ((st = reduce_mask(ctx, rank, mask, &noop))) return st;
    if (noop)
        for (int32_t i = 0; i < rank; i++) mask[i] = false;

    /* Output strides (0 on reduced axes) and the element counts. */
    int64_t ostride[TC_MAX_RANK], on = 1, count = 1;
    for (int32_t i = rank - 1; i >= 0; i--) {
        ostride[i] = mask[i] ? 0 : on;
        if (mask[i]) count *= x->dims[i];
        else on *= x->dims[i];
    }
    if (tc__tensor_numel(y) != on) {
        char a[160];
        return tc__fail(ctx->err, TC_STATUS_INTERNAL, "output shape %s does not have the %lld elements of the reduction",
                        tc__shape_str(y->rank, y->dims, a, sizeof a), (long long)on);
    }
    if (cls != TC__NUM_FLOAT && op == R_MEAN && count == 0 && on > 0)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "mean over an empty set of integers is undefined");

    double *accf = NULL;
    uint64_t *accu = NULL;
    if (cls == TC__NUM_FLOAT) accf = tc__kernel_alloc(ctx, (size_t)(on ? on : 1) * sizeof *accf);
    else accu = tc__kernel_alloc(ctx, (size_t)(on ? on : 1) * sizeof *accu);
    if (accf == NULL && accu == NULL)
        return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of memory for %lld accumulators", (long long)on);
    bool is_signed = cls == TC__NUM_SIGNED;
    uint64_t uinit = 0;
    if (op == R_PROD) uinit = 1;
    else if (op == R_MAX) uinit = is_signed ? (uint64_t)tc__dtype_min_i64(x->dtype) : 0;
    else if (op == R_MIN) uinit = is_signed ? (uint64_t)tc__dtype_max_i64(x->dtype) : tc__dtype_max_u64(x->dtype);
    for (int64_t o = 0; o < on; o++) {
        if (accf) accf[o] = f_init(op);
        else accu[o] = uinit;
    }

    /* Walk the input in order, keeping the multi-index and the output offset. */
    int64_t n = tc__tensor_numel(x);
    int64_t idx[TC_MAX_RANK] = {0};
    int64_t o = 0;
    bool f32 = x->dtype == TC_DTYPE_FLOAT32;
    const float *xs = x->data;
    for (int64_t i = 0; i < n; i++) {
        if (accf) accf[o] = f_step(op, accf[o], f32 ? (double)xs[i] : tc__tensor_get_f64(x, i));
        else accu[o] = u_step(op, is_signed, accu[o], (uint64_t)tc__tensor_get_i64(x, i));
        for (int32_t d = rank - 1; d >= 0; d--) {
            o += ostride[d];
            if (++idx[d] < x->dims[d]) break;
            o -= ostride[d] * x->dims[d];
            idx[d] = 0;
        }
    }

    for (int64_t k = 0; k < on; k++) {
        if (accf) {
            double v = accf[k];
            if (op == R_MEAN) v /= (double)count;
            else if (op == R_L2) v = sqrt(v);
            tc__tensor_set_f64(y, k, v);
        } else {
            uint64_t v = accu[k];
            if (op == R_MEAN) v = is_signed ? (uint64_t)((int64_t)v / count) : v / (uint64_t)count;
            else if (op == R_L2) v = (uint64_t)tc__f64_to_int_bits(sqrt(is_signed ? (double)(int64_t)v : (double)v), y->dtype);
            tc__tensor_set_i64(y, k, (int64_t)v);
        }
    }
    tc__kernel_free(ctx, accf);
    tc__kernel_free(ctx, accu);
    return TC_STATUS_OK;
}

tc_status tc__ref_ReduceMean(const tc__kernel_ctx *ctx) { return run_reduce(ctx, R_MEAN); }
tc_status tc__ref_ReduceSum(const tc__kernel_ctx *ctx) { return run_reduce(ctx, R_SUM); }
tc_status tc__ref_ReduceMax(const tc__kernel_ctx *ctx) { return run_reduce(ctx, R_MAX); }
tc_status tc__ref_ReduceMin(const tc__kernel_ctx *ctx) { return run_reduce(ctx, R_MIN); }
tc_status tc__ref_ReduceProd(const tc__kernel_ctx *ctx) { return run_reduce(ctx, R_PROD); }
tc_status tc__ref_ReduceSumSquare(const tc__kernel_ctx *ctx) { return run_reduce(ctx, R_SUMSQ); }
tc_status tc__ref_ReduceL2(const tc__kernel_ctx *ctx) { return run_reduce(ctx, R_L2); }
