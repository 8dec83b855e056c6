/*
 * softmax.c - reference kernels for Softmax and LogSoftmax.
 *
 * From opset 13 the op normalises along one axis (default -1). Before opset 13
 * the input is viewed as a 2-D matrix [prod(dims[:axis]), prod(dims[axis:])]
 * (default axis 1) and each row is normalised. Both become "outer x n x inner"
 * walks here. Sums are in double and the maximum is subtracted first. A step with the
 * attribute TC__ATTR_NAN_TO (a fused Where(IsNaN(y), c, y)) writes c for every NaN output; one with
 * TC__ATTR_SOFTMAX_ADD (a fused Add of the attention mask) normalises input 0 + input 1 (float32, broadcast).
 */
#include <math.h>
#include <stdlib.h>

#include "backends/ref/numeric.h"
#include "backends/ref/ref.h"
#include "core/fused_attr.h"

/* A Softmax with TC__ATTR_SOFTMAX_ADD: checks its float32 input 1 (the mask) against x = input 0 (it broadcasts to x's
 * shape, NumPy rules) and sets stride[i], the mask's element stride along x's dim i (0 where it broadcasts). */
static tc_status mask_strides(const tc__kernel_ctx *ctx, int64_t *stride) {
    const tc__tensor *x = ctx->in[0], *m = ctx->n_in >= 2 ? ctx->in[1] : NULL;
    if (m == NULL || (m->data == NULL && tc__tensor_numel(m) != 0))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Softmax: the fused mask (input 1) is missing");
    if (x->dtype != TC_DTYPE_FLOAT32 || m->dtype != TC_DTYPE_FLOAT32)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "Softmax with a fused mask: float32 only");
    if (!tc__bcast_strides(m, x->rank, x->dims, stride)) {
        char a[160], b[160];
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "Softmax: the mask's shape %s does not broadcast to X's %s",
                        tc__shape_str(m->rank, m->dims, a, sizeof a), tc__shape_str(x->rank, x->dims, b, sizeof b));
    }
    return TC_STATUS_OK;
}

/* The mask's element for x's element idx (row-major). */
static int64_t mask_offset(const tc__tensor *x, const int64_t *stride, int64_t idx) {
    int64_t off = 0;
    for (int32_t i = x->rank - 1; i >= 0; i--) {
        off += idx % x->dims[i] * stride[i];
        idx /= x->dims[i];
    }
    return off;
}

static tc_status run_softmax(const tc__kernel_ctx *ctx, bool log_out) {
    tc_status st = tc__ref_check_io(ctx, 1, 0, ctx->n_in >= 1 && ctx->in[0] ? ctx->in[0]->dtype : TC_DTYPE_UNDEFINED,
                                    ctx->n_in >= 1 ? ctx->in[0] : NULL);
    if (st) return st;
    const tc__tensor *x = ctx->in[0];
    tc__tensor *y = ctx->out[0];
    if (tc__numclass_of(x->dtype) != TC__NUM_FLOAT) return tc__ref_unsupported_dtype(ctx, 0, x->dtype);
    int32_t rank = x->rank;
    bool legacy = ctx->opset < 13;
    int64_t axis = tc__attr_int(ctx->attrs, "axis", legacy ? 1 : -1);
    /* Legacy mode accepts axis == rank (empty inner matrix dim); a rank-0 input is one element. */
    int32_t arank = rank == 0 ? 1 : rank;
    if (axis < -(int64_t)arank || axis > (int64_t)arank - (legacy ? 0 : 1))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                        (long long)axis, (int)rank);
    if (axis < 0) axis += arank;
    int64_t outer = 1, n = 1, inner = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (i < axis) outer *= x->dims[i];
        else if (i == axis || legacy) n *= x->dims[i];
        else inner *= x->dims[i];
    }
    const bool adds = tc__softmax_adds(ctx->attrs);
    int64_t mstride[TC_MAX_RANK] = {0}; /* the mask's element stride along each of x's dims (0: broadcast) */
    const float *ms = NULL;
    if (adds) {
        st = mask_strides(ctx, mstride);
        if (st) return st;
        ms = ctx->in[1]->data;
    }
    if (outer == 0 || n == 0 || inner == 0) return TC_STATUS_OK;
    double *buf = tc__kernel_alloc(ctx, (size_t)n * sizeof *buf);
    if (buf == NULL) return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of memory for a row of %lld", (long long)n);
    const bool f32 = x->dtype == TC_DTYPE_FLOAT32, guard = tc__attr_has(ctx->attrs, TC__ATTR_NAN_TO);
    const double nan_to = guard ? (double)tc__attr_float(ctx->attrs, TC__ATTR_NAN_TO, 0.0f) : 0.0;
    const float *xs = x->data;
    float *ys = y->data;
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * n * inner + in;
            double mx = -INFINITY;
            for (int64_t k = 0; k < n; k++) {
                int64_t idx = base + k * inner;
                buf[k] = adds  ? (double)(xs[idx] + ms[mask_offset(x, mstride, idx)]) /* (a float Add) */
                         : f32 ? (double)xs[idx]
                               : tc__tensor_get_f64(x, idx);
                if (buf[k] != buf[k]) mx = NAN; /* a NaN makes the whole slice NaN, as in NumPy */
                else if (buf[k] > mx) mx = buf[k];
            }
            double sum = 0.0;
            for (int64_t k = 0; k < n; k++) sum += exp(buf[k] - mx);
            double lsum = log(sum);
            for (int64_t k = 0; k < n; k++) {
                double v = log_out ? buf[k] - mx - lsum : exp(buf[k] - mx) / sum;
                if (guard && v != v) v = nan_to;
                int64_t idx = base + k * inner;
                if (f32) ys[idx] = (float)v;
                else tc__tensor_set_f64(y, idx, v);
            }
        }
    }
    tc__kernel_free(ctx, buf);
    return TC_STATUS_OK;
}

tc_status tc__ref_Softmax(const tc__kernel_ctx *ctx) { return run_softmax(ctx, false); }
tc_status tc__ref_LogSoftmax(const tc__kernel_ctx *ctx) { return run_softmax(ctx, true); }
