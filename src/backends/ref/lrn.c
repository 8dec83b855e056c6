/*
 * lrn.c - reference LRN (local response normalization across channels):
 * y[n, c, p] = x[n, c, p] / (bias + alpha / size * sum(x[n, i, p]^2))^beta over
 * channels i from c - floor((size - 1) / 2) to c + ceil((size - 1) / 2), clipped
 * to [0, C). Computes in double, directly from the input (no scratch).
 */
#include <math.h>

#include "backends/ref/ref.h"
#include "core/lrn_params.h"

/* Element i of t as a double (float32 read directly). */
static inline double get(const tc__tensor *t, int64_t i) {
    return t->dtype == TC_DTYPE_FLOAT32 ? (double)((const float *)t->data)[i] : tc__tensor_get_f64(t, i);
}

tc_status tc__ref_LRN(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 1 || ctx->in[0] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects input X and output Y");
    const tc__tensor *x = ctx->in[0];
    tc__tensor *y = ctx->out[0];
    if (!tc__dtype_is_float(x->dtype)) return tc__ref_unsupported_dtype(ctx, 0, x->dtype);
    if (y->dtype != x->dtype || y->rank != x->rank)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output Y must have the data type and rank of X");
    for (int32_t d = 0; d < x->rank; d++)
        if (y->dims[d] != x->dims[d])
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output Y's dim %d is %lld, expected %lld", (int)d,
                            (long long)y->dims[d], (long long)x->dims[d]);
    if (x->rank < 2)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input X has rank %d, expected 2 or more", (int)x->rank);
    tc__lrn_params p;
    tc_status st = tc__lrn_params_read(ctx->attrs, &p, ctx->err);
    if (st != TC_STATUS_OK) return st;
    const int64_t n_batch = x->dims[0], c_n = x->dims[1], sp = tc__numel(x->rank - 2, x->dims + 2);
    if (sp < 0 || tc__tensor_numel(x) < 0)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "tensor size is invalid or too large");
    const double scale = p.alpha / (double)p.size;
    for (int64_t n = 0; n < n_batch; n++)
        for (int64_t c = 0; c < c_n; c++) {
            const int64_t lo = c - p.before < 0 ? 0 : c - p.before;
            const int64_t hi = c_n - 1 - c < p.after ? c_n - 1 : c + p.after;
            for (int64_t s = 0; s < sp; s++) {
                double sq = 0.0;
                for (int64_t i = lo; i <= hi; i++) {
                    const double v = get(x, (n * c_n + i) * sp + s);
                    sq += v * v;
                }
                const int64_t at = (n * c_n + c) * sp + s;
                const double v = get(x, at) / pow(p.bias + scale * sq, p.beta);
                if (y->dtype == TC_DTYPE_FLOAT32) ((float *)y->data)[at] = (float)v;
                else tc__tensor_set_f64(y, at, v);
            }
        }
    return TC_STATUS_OK;
}
