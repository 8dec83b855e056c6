/*
 * infer_normalization.c - shape and type inference for Softmax, LogSoftmax and
 * LayerNormalization.
 */
#include "core/fused_attr.h"
#include "graph/op_schema.h"

/* Softmax/LogSoftmax: the output is the input; the axis is checked when the rank is known. A fused Softmax may add
 * its input 1 first (TC__ATTR_SOFTMAX_ADD).
 * Before opset 13 the axis (default 1) splits the input into a 2-D matrix and may equal the rank. */
static tc_status infer_softmax(tc__infer_ctx *ctx) {
    const bool adds = tc__softmax_adds(ctx->attrs); /* (fuse_softmax_mask: input 1 added first) */
    tc_status st = tc__infer_check_arity(ctx, adds ? 2 : 1, adds ? 2 : 1, 1);
    if (st) return st;
    if (adds) { /* input 1 must broadcast to input 0's shape, not widen it */
        tc__shape b;
        st = tc__infer_broadcast(ctx, &ctx->in[0]->shape, &ctx->in[1]->shape, &b);
        if (st) return st;
        const tc__shape *a = &ctx->in[0]->shape;
        bool same = b.rank == a->rank; /* (dims not known on both sides: checked by the kernels) */
        for (int32_t i = 0; same && i < a->rank; i++)
            same = !tc__dim_is_known(a->dims[i]) || !tc__dim_is_known(b.dims[i]) || a->dims[i].value == b.dims[i].value;
        if (a->rank >= 0 && !same)
            return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH,
                            "Softmax: input 1 does not broadcast to input 0's shape");
        if (ctx->in[1]->dtype != ctx->in[0]->dtype)
            return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "Softmax: input 1's type differs from input 0's");
    }
    bool legacy = ctx->opset < 13;
    int64_t axis = tc__attr_int(ctx->attrs, "axis", legacy ? 1 : -1);
    int32_t rank = ctx->in[0]->shape.rank;
    if (rank >= 0) {
        int32_t r = rank == 0 ? 1 : rank;
        if (axis < -(int64_t)r || axis > (int64_t)r - (legacy ? 0 : 1))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                            (long long)axis, (int)rank);
    }
    return tc__infer_same_as_input0(ctx);
}

tc_status tc__infer_Softmax(tc__infer_ctx *ctx) { return infer_softmax(ctx); }
tc_status tc__infer_LogSoftmax(tc__infer_ctx *ctx) { return infer_softmax(ctx); }

/*
 * LayerNormalization: Y is like X; the optional Mean and InvStdDev have type
 * stash_type (default float32) and X's dims before axis followed by 1s.
 */
tc_status tc__infer_LayerNormalization(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 2, 3, 3);
    if (st) return st;
    const tc__vinfo *x = ctx->in[0];
    int64_t stash = tc__attr_int(ctx->attrs, "stash_type", TC_DTYPE_FLOAT32);
    if (stash != TC_DTYPE_FLOAT32 && stash != TC_DTYPE_FLOAT64 && stash != TC_DTYPE_FLOAT16 &&
        stash != TC_DTYPE_BFLOAT16)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "stash_type %lld is not a supported float type",
                        (long long)stash);
    int64_t axis = tc__attr_int(ctx->attrs, "axis", -1);
    int32_t rank = x->shape.rank, a = 0;
    if (rank >= 0 && (st = tc__infer_axis(ctx, axis, rank, &a))) return st;
    ctx->out[0].dtype = x->dtype;
    ctx->out[0].shape = x->shape;
    for (int k = 1; k < ctx->n_out; k++) {
        tc__vinfo *o = &ctx->out[k];
        o->dtype = (tc_dtype)stash;
        o->shape.rank = rank;
        for (int32_t i = 0; i < rank; i++) o->shape.dims[i] = i < a ? x->shape.dims[i] : tc__dim_known(1);
    }
    return TC_STATUS_OK;
}

/*
 * TcEmbedLayerNorm (tailcut's own, made by fuse_embed_layernorm): ids [..., S] int32/int64, table [V, D] float32,
 * scale [D], bias [D], optional addend [S, D] float32 -> float32 ids' dims + [D].
 */
tc_status tc__infer_TcEmbedLayerNorm(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 4, 5, 1);
    if (st) return st;
    const tc__vinfo *ids = ctx->in[0], *table = ctx->in[1], *scale = ctx->in[2], *bias = ctx->in[3];
    const tc__vinfo *add = tc__infer_input(ctx, 4);
    if (ids == NULL || table == NULL || scale == NULL || bias == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "TcEmbedLayerNorm: ids, table, scale and bias are required");
    if (ids->dtype != TC_DTYPE_UNDEFINED && ids->dtype != TC_DTYPE_INT64 && ids->dtype != TC_DTYPE_INT32)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "TcEmbedLayerNorm: ids must be int32 or int64");
    const tc__vinfo *fl[4] = {table, scale, bias, add};
    for (int i = 0; i < 4; i++)
        if (fl[i] != NULL && fl[i]->dtype != TC_DTYPE_UNDEFINED && fl[i]->dtype != TC_DTYPE_FLOAT32)
            return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "TcEmbedLayerNorm: input %d must be float32", i + 1);
    if (table->shape.rank >= 0 && table->shape.rank != 2)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "TcEmbedLayerNorm: the table must be [V, D]");
    if (add != NULL && add->shape.rank >= 0 && add->shape.rank != 2)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "TcEmbedLayerNorm: the addend must be [S, D]");
    ctx->out[0].dtype = TC_DTYPE_FLOAT32;
    ctx->out[0].shape.rank = TC__RANK_UNKNOWN;
    const int32_t q = ids->shape.rank;
    if (q < 0 || table->shape.rank != 2) return TC_STATUS_OK;
    if (q < 1 || q + 1 > TC_MAX_RANK)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "TcEmbedLayerNorm: ids must have rank 1..%d", TC_MAX_RANK - 1);
    for (int32_t i = 0; i < q; i++) ctx->out[0].shape.dims[i] = ids->shape.dims[i];
    ctx->out[0].shape.dims[q] = table->shape.dims[1];
    ctx->out[0].shape.rank = q + 1;
    return TC_STATUS_OK;
}
