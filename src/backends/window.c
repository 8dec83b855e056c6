/* window.c - resolves kernel, strides, dilations and padding of Conv and pooling nodes. */
#include "backends/window.h"

#include <string.h>

/* Reads an INTS attribute of n values >= min_value, or fills dflt when absent. */
static tc_status read_ints(const tc__kernel_ctx *ctx, const char *name, int n, int64_t dflt, int64_t min_value,
                           int64_t *out) {
    const int64_t *v;
    size_t len = tc__attr_ints(ctx->attrs, name, &v);
    if (v == NULL) {
        for (int i = 0; i < n; i++) out[i] = dflt;
        return TC_STATUS_OK;
    }
    if (len != (size_t)n)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute %s has %zu values, expected %d", name, len, n);
    for (int i = 0; i < n; i++) {
        if (v[i] < min_value || v[i] > ((int64_t)1 << 40))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute %s[%d] is %lld, expected >= %lld", name, i,
                            (long long)v[i], (long long)min_value);
        out[i] = v[i];
    }
    return TC_STATUS_OK;
}

tc_status tc__window_resolve(const tc__kernel_ctx *ctx, const tc__tensor *x, const tc__tensor *y,
                                 const int64_t *kernel, tc__window *w) {
    memset(w, 0, sizeof *w);
    if (x->rank < 3 || x->rank > TC_MAX_RANK)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input X has rank %d, expected 3 to %d", (int)x->rank,
                        TC_MAX_RANK);
    if (y->rank != x->rank || y->dims[0] != x->dims[0])
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output has rank %d and batch %lld, expected %d and %lld",
                        (int)y->rank, (long long)(y->rank > 0 ? y->dims[0] : -1), (int)x->rank, (long long)x->dims[0]);
    int nsp = x->rank - 2;
    w->nsp = nsp;
    tc_status st;
    if (kernel != NULL) {
        for (int d = 0; d < nsp; d++) w->kernel[d] = kernel[d];
        const int64_t *ks;
        size_t n = tc__attr_ints(ctx->attrs, "kernel_shape", &ks);
        if (ks != NULL) {
            if (n != (size_t)nsp)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute kernel_shape has %zu values, expected %d",
                                n, nsp);
            for (int d = 0; d < nsp; d++)
                if (ks[d] != kernel[d])
                    return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                                    "attribute kernel_shape[%d] is %lld but the weight has %lld", d, (long long)ks[d],
                                    (long long)kernel[d]);
        }
    } else {
        if (!tc__attr_has(ctx->attrs, "kernel_shape"))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute kernel_shape is required");
        if ((st = read_ints(ctx, "kernel_shape", nsp, 1, 1, w->kernel)) != TC_STATUS_OK) return st;
    }
    if ((st = read_ints(ctx, "strides", nsp, 1, 1, w->stride)) != TC_STATUS_OK) return st;
    if ((st = read_ints(ctx, "dilations", nsp, 1, 1, w->dilation)) != TC_STATUS_OK) return st;
    int64_t pads[2 * TC_MAX_RANK];
    if ((st = read_ints(ctx, "pads", 2 * nsp, 0, 0, pads)) != TC_STATUS_OK) return st;
    const char *ap = tc__attr_string(ctx->attrs, "auto_pad", "NOTSET");
    bool same_upper = strcmp(ap, "SAME_UPPER") == 0, same_lower = strcmp(ap, "SAME_LOWER") == 0;
    bool valid = strcmp(ap, "VALID") == 0;
    if (!same_upper && !same_lower && !valid && strcmp(ap, "NOTSET") != 0 && ap[0] != '\0')
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "attribute auto_pad is '%s', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID", ap);
    for (int d = 0; d < nsp; d++) {
        w->in[d] = x->dims[2 + d];
        w->out[d] = y->dims[2 + d];
        if (w->kernel[d] < 1)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "kernel size %lld along spatial dim %d, expected >= 1",
                            (long long)w->kernel[d], d);
        /* Bound the extent of the windows so that index arithmetic cannot overflow. */
        int64_t dk, reach;
        if (w->out[d] < 0 || tc__mul_overflow_i64(w->kernel[d] - 1, w->dilation[d], &dk) ||
            tc__mul_overflow_i64(w->out[d] > 0 ? w->out[d] - 1 : 0, w->stride[d], &reach) || dk > ((int64_t)1 << 50) ||
            reach > ((int64_t)1 << 50))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                            "spatial dim %d: output size %lld, stride %lld, kernel %lld and dilation %lld are too large", d,
                            (long long)w->out[d], (long long)w->stride[d], (long long)w->kernel[d],
                            (long long)w->dilation[d]);
        dk += 1;
        if (same_upper || same_lower) {
            int64_t need = (w->out[d] - 1) * w->stride[d] + dk - w->in[d];
            if (need < 0) need = 0; /* stride larger than the kernel: no padding (as ONNX Runtime and TF) */
            w->pad_begin[d] = same_upper ? need / 2 : (need + 1) / 2;
            w->pad_end[d] = need - w->pad_begin[d];
        } else if (!valid) {
            w->pad_begin[d] = pads[d];
            w->pad_end[d] = pads[nsp + d];
        }
    }
    return TC_STATUS_OK;
}
