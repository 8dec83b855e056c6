/*
 * infer_conv_pool.c - shape inference for Conv, MaxPool, AveragePool,
 * GlobalAveragePool and GlobalMaxPool. One helper computes a spatial output
 * size from kernel, stride, dilation, explicit pads, auto_pad and ceil_mode.
 */
#include <stdio.h>
#include <string.h>

#include "graph/op_schema.h"

typedef enum auto_pad_kind { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID } auto_pad_kind;

/* Window attributes of a convolution or pooling node with nsp spatial dims. */
typedef struct window {
    int nsp;
    int64_t kernel[TC_MAX_RANK]; /* < 0 when unknown (Conv with a weight of unknown shape) */
    int64_t stride[TC_MAX_RANK];
    int64_t dilation[TC_MAX_RANK];
    int64_t pads[2 * TC_MAX_RANK]; /* begins then ends */
    auto_pad_kind auto_pad;
    bool ceil_mode;
} window;

static tc_status parse_auto_pad(tc__infer_ctx *ctx, auto_pad_kind *out) {
    const char *s = tc__attr_string(ctx->attrs, "auto_pad", "NOTSET");
    if (strcmp(s, "NOTSET") == 0 || s[0] == '\0') *out = PAD_NOTSET;
    else if (strcmp(s, "SAME_UPPER") == 0) *out = PAD_SAME_UPPER;
    else if (strcmp(s, "SAME_LOWER") == 0) *out = PAD_SAME_LOWER;
    else if (strcmp(s, "VALID") == 0) *out = PAD_VALID;
    else
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "attribute auto_pad is '%s', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID", s);
    return TC_STATUS_OK;
}

/* Reads an INTS attribute of exactly n values, each >= min_value; dflt fills it when absent. */
static tc_status read_ints(tc__infer_ctx *ctx, const char *name, int n, int64_t dflt, int64_t min_value,
                           int64_t *out) {
    const int64_t *v;
    size_t len = tc__attr_ints(ctx->attrs, name, &v);
    if (v == NULL) {
        for (int i = 0; i < n; i++) out[i] = dflt;
        return TC_STATUS_OK;
    }
    if (len != (size_t)n)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute %s has %zu values, expected %d", name,
                        len, n);
    for (int i = 0; i < n; i++) {
        if (v[i] < min_value || v[i] > ((int64_t)1 << 40))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute %s[%d] is %lld, expected >= %lld",
                            name, i, (long long)v[i], (long long)min_value);
        out[i] = v[i];
    }
    return TC_STATUS_OK;
}

/*
 * Reads strides, dilations, pads, auto_pad and ceil_mode. kernel (nsp values,
 * < 0 when unknown) comes from the caller: kernel_shape or the weight's dims.
 */
static tc_status window_parse(tc__infer_ctx *ctx, int nsp, const int64_t *kernel, window *w) {
    tc_status st;
    memset(w, 0, sizeof *w);
    w->nsp = nsp;
    for (int i = 0; i < nsp; i++) w->kernel[i] = kernel[i];
    if ((st = read_ints(ctx, "strides", nsp, 1, 1, w->stride)) != TC_STATUS_OK) return st;
    if ((st = read_ints(ctx, "dilations", nsp, 1, 1, w->dilation)) != TC_STATUS_OK) return st;
    if ((st = read_ints(ctx, "pads", 2 * nsp, 0, 0, w->pads)) != TC_STATUS_OK) return st;
    if ((st = parse_auto_pad(ctx, &w->auto_pad)) != TC_STATUS_OK) return st;
    int64_t ceil_mode = tc__attr_int(ctx->attrs, "ceil_mode", 0);
    if (ceil_mode != 0 && ceil_mode != 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute ceil_mode is %lld, expected 0 or 1",
                        (long long)ceil_mode);
    w->ceil_mode = ceil_mode == 1;
    return TC_STATUS_OK;
}

/*
 * Output size along spatial dim d for an input of size in.
 * NOTSET: floor((in + pads - dk) / s) + 1, or ceil(...) + 1 in ceil mode where the
 * last window must start inside the input or the begin padding; SAME_*: ceil(in / s);
 * VALID: floor((in - dk) / s) + 1, with dk = (k - 1) * dilation + 1.
 */
static tc_status window_out_dim(tc__infer_ctx *ctx, const window *w, int d, tc__dim in, tc__dim *out) {
    *out = tc__dim_unknown();
    if (!tc__dim_is_known(in)) return TC_STATUS_OK;
    int64_t s = w->stride[d], n = in.value;
    if (w->auto_pad == PAD_SAME_UPPER || w->auto_pad == PAD_SAME_LOWER) {
        *out = tc__dim_known((n + s - 1) / s);
        return TC_STATUS_OK;
    }
    if (w->kernel[d] < 0) return TC_STATUS_OK;
    int64_t dk;
    if (tc__mul_overflow_i64(w->kernel[d] - 1, w->dilation[d], &dk) || dk > ((int64_t)1 << 50))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "spatial dim %d: kernel %lld with dilation %lld is too large",
                        d, (long long)w->kernel[d], (long long)w->dilation[d]);
    dk += 1;
    int64_t pb = w->auto_pad == PAD_VALID ? 0 : w->pads[d];
    int64_t pe = w->auto_pad == PAD_VALID ? 0 : w->pads[w->nsp + d];
    int64_t span = n + pb + pe - dk;
    if (span < 0)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "spatial dim %d: input size %lld plus pads %lld+%lld is smaller than the dilated kernel "
                        "size %lld",
                        d, (long long)n, (long long)pb, (long long)pe, (long long)dk);
    int64_t o;
    if (w->ceil_mode && w->auto_pad == PAD_NOTSET) {
        o = (span + s - 1) / s + 1;
        if ((o - 1) * s >= n + pb) o--; /* the last window must start inside the input or begin padding */
    } else {
        o = span / s + 1;
    }
    *out = tc__dim_known(o);
    return TC_STATUS_OK;
}

/* Fills out dims [N, channels, spatial...] for an input shape of rank nsp + 2. */
static tc_status window_out_shape(tc__infer_ctx *ctx, const window *w, const tc__shape *x, tc__dim channels,
                                  tc__shape *out) {
    out->rank = w->nsp + 2;
    out->dims[0] = x->rank >= 0 ? x->dims[0] : tc__dim_unknown();
    out->dims[1] = channels;
    for (int d = 0; d < w->nsp; d++) {
        tc__dim in = x->rank >= 0 ? x->dims[2 + d] : tc__dim_unknown();
        tc_status st = window_out_dim(ctx, w, d, in, &out->dims[2 + d]);
        if (st != TC_STATUS_OK) return st;
    }
    return TC_STATUS_OK;
}

/* Fails when inputs ia and ib both have known, different dtypes. */
static tc_status check_dtype_same(tc__infer_ctx *ctx, int ia, int ib) {
    tc_dtype a = ctx->in[ia]->dtype, b = ctx->in[ib]->dtype;
    if (a != TC_DTYPE_UNDEFINED && b != TC_DTYPE_UNDEFINED && a != b) {
        const char *na = tc_dtype_name(a), *nb = tc_dtype_name(b);
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "input %d has data type %s, expected %s like input %d",
                        ib, nb ? nb : "?", na ? na : "?", ia);
    }
    return TC_STATUS_OK;
}

tc_status tc__infer_Conv(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 2, 3, 1);
    if (st != TC_STATUS_OK) return st;
    const tc__vinfo *x = ctx->in[0], *wt = ctx->in[1], *b = tc__infer_input(ctx, 2);
    if ((st = check_dtype_same(ctx, 0, 1)) != TC_STATUS_OK) return st;
    if (b && (st = check_dtype_same(ctx, 0, 2)) != TC_STATUS_OK) return st;
    ctx->out[0].dtype = x->dtype != TC_DTYPE_UNDEFINED ? x->dtype : wt->dtype;

    int32_t rank = x->shape.rank >= 0 ? x->shape.rank : wt->shape.rank;
    if (rank < 0) {
        ctx->out[0].shape.rank = TC__RANK_UNKNOWN;
        return TC_STATUS_OK;
    }
    if (rank < 3)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "input X has rank %d, expected at least 3 (N, C and spatial dims)", (int)rank);
    if (x->shape.rank >= 0 && wt->shape.rank >= 0 && x->shape.rank != wt->shape.rank)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input X has rank %d but weight W has rank %d",
                        (int)x->shape.rank, (int)wt->shape.rank);
    int nsp = rank - 2;

    int64_t group = tc__attr_int(ctx->attrs, "group", 1);
    if (group < 1 || group > ((int64_t)1 << 40))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute group is %lld, expected 1 to 2^40",
                        (long long)group);

    tc__dim m = wt->shape.rank >= 0 ? wt->shape.dims[0] : tc__dim_unknown();
    tc__dim cw = wt->shape.rank >= 0 ? wt->shape.dims[1] : tc__dim_unknown();
    tc__dim cx = x->shape.rank >= 0 ? x->shape.dims[1] : tc__dim_unknown();
    if (tc__dim_is_known(cx) && tc__dim_is_known(cw) && cx.value != cw.value * group)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "input X has %lld channels, expected %lld (weight's dim 1 = %lld times group = %lld)",
                        (long long)cx.value, (long long)(cw.value * group), (long long)cw.value, (long long)group);
    if (tc__dim_is_known(m) && m.value % group != 0)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "weight has %lld output channels, which is not a multiple of group = %lld",
                        (long long)m.value, (long long)group);
    if (b && b->shape.rank >= 0) {
        if (b->shape.rank != 1)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "bias B has rank %d, expected 1",
                            (int)b->shape.rank);
        if (tc__dim_is_known(b->shape.dims[0]) && tc__dim_is_known(m) && b->shape.dims[0].value != m.value)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "bias B has %lld elements, expected %lld",
                            (long long)b->shape.dims[0].value, (long long)m.value);
    }

    int64_t kernel[TC_MAX_RANK];
    const int64_t *ks;
    size_t nks = tc__attr_ints(ctx->attrs, "kernel_shape", &ks);
    if (ks != NULL && nks != (size_t)nsp)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute kernel_shape has %zu values, expected %d",
                        nks, nsp);
    for (int d = 0; d < nsp; d++) {
        tc__dim wd = wt->shape.rank >= 0 ? wt->shape.dims[2 + d] : tc__dim_unknown();
        if (tc__dim_is_known(wd) && wd.value < 1)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "weight W has spatial dim %d of size 0", d + 2);
        if (ks != NULL) {
            if (ks[d] < 1 || ks[d] > ((int64_t)1 << 40))
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute kernel_shape[%d] is %lld, expected 1 to 2^40",
                                d, (long long)ks[d]);
            if (tc__dim_is_known(wd) && wd.value != ks[d])
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                                "attribute kernel_shape[%d] is %lld but the weight's dim %d is %lld", d,
                                (long long)ks[d], d + 2, (long long)wd.value);
            kernel[d] = ks[d];
        } else {
            kernel[d] = tc__dim_is_known(wd) ? wd.value : -1;
        }
    }
    window w;
    if ((st = window_parse(ctx, nsp, kernel, &w)) != TC_STATUS_OK) return st;
    return window_out_shape(ctx, &w, &x->shape, m, &ctx->out[0].shape);
}

/* Shared by MaxPool and AveragePool: kernel_shape is required and fixes the rank. */
static tc_status infer_pool(tc__infer_ctx *ctx, int max_out) {
    tc_status st = tc__infer_check_arity(ctx, 1, 1, max_out);
    if (st != TC_STATUS_OK) return st;
    const tc__vinfo *x = ctx->in[0];
    const int64_t *ks;
    size_t nks = tc__attr_ints(ctx->attrs, "kernel_shape", &ks);
    if (ks == NULL) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute kernel_shape is required");
    if (nks < 1 || nks > TC_MAX_RANK - 2)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute kernel_shape has %zu values, expected 1 to %d",
                        nks, TC_MAX_RANK - 2);
    int nsp = (int)nks;
    if (x->shape.rank >= 0 && x->shape.rank != nsp + 2)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "input X has rank %d, expected %d (N, C and %d spatial dims as in kernel_shape)",
                        (int)x->shape.rank, nsp + 2, nsp);
    for (int d = 0; d < nsp; d++)
        if (ks[d] < 1 || ks[d] > ((int64_t)1 << 40))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute kernel_shape[%d] is %lld, expected 1 to 2^40",
                            d, (long long)ks[d]);
    window w;
    if ((st = window_parse(ctx, nsp, ks, &w)) != TC_STATUS_OK) return st;
    tc__dim c = x->shape.rank >= 0 ? x->shape.dims[1] : tc__dim_unknown();
    ctx->out[0].dtype = x->dtype;
    return window_out_shape(ctx, &w, &x->shape, c, &ctx->out[0].shape);
}

tc_status tc__infer_MaxPool(tc__infer_ctx *ctx) {
    tc_status st = infer_pool(ctx, 2);
    if (st != TC_STATUS_OK) return st;
    int64_t so = tc__attr_int(ctx->attrs, "storage_order", 0);
    if (so != 0 && so != 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute storage_order is %lld, expected 0 or 1",
                        (long long)so);
    if (ctx->n_out > 1) {
        ctx->out[1].dtype = TC_DTYPE_INT64;
        ctx->out[1].shape = ctx->out[0].shape;
    }
    return TC_STATUS_OK;
}

tc_status tc__infer_AveragePool(tc__infer_ctx *ctx) {
    int64_t cip = tc__attr_int(ctx->attrs, "count_include_pad", 0);
    if (cip != 0 && cip != 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute count_include_pad is %lld, expected 0 or 1",
                        (long long)cip);
    return infer_pool(ctx, 1);
}

/* Global pools: [N, C, d1, ...] -> [N, C, 1, ...]. */
static tc_status infer_global_pool(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 1, 1, 1);
    if (st != TC_STATUS_OK) return st;
    const tc__vinfo *x = ctx->in[0];
    ctx->out[0].dtype = x->dtype;
    ctx->out[0].shape = x->shape;
    if (x->shape.rank < 0) return TC_STATUS_OK;
    if (x->shape.rank < 2)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input X has rank %d, expected at least 2 (N, C, ...)",
                        (int)x->shape.rank);
    for (int32_t d = 2; d < x->shape.rank; d++) ctx->out[0].shape.dims[d] = tc__dim_known(1);
    return TC_STATUS_OK;
}

tc_status tc__infer_GlobalAveragePool(tc__infer_ctx *ctx) { return infer_global_pool(ctx); }
tc_status tc__infer_GlobalMaxPool(tc__infer_ctx *ctx) { return infer_global_pool(ctx); }
