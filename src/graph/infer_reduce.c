/*
 * infer_reduce.c - shape and type inference for ReduceMean ReduceSum ReduceMax
 * ReduceMin ReduceProd ReduceSumSquare ReduceL2.
 *
 * Axes come from the 'axes' attribute before opset 18 (ReduceSum: before 13)
 * and from the optional second input after; a model that still uses the
 * attribute at a later opset is accepted. When the axes input's value is not
 * known statically, keepdims=1 keeps the rank with unknown dims and keepdims=0
 * gives rank - len(axes) when the length of axes is known, else an unknown rank.
 */
#include <string.h>

#include "graph/op_schema.h"

static tc_status infer_reduce(tc__infer_ctx *ctx) {
    int axes_opset = strcmp(ctx->op_type, "ReduceSum") == 0 ? 13 : 18;
    bool axes_input = ctx->opset >= axes_opset;
    tc_status st = tc__infer_check_arity(ctx, 1, axes_input ? 2 : 1, 1);
    if (st) return st;
    const tc__vinfo *x = ctx->in[0];
    const tc__vinfo *ax = tc__infer_input(ctx, 1);
    bool keepdims = tc__attr_int(ctx->attrs, "keepdims", 1) != 0;
    bool noop_empty = tc__attr_int(ctx->attrs, "noop_with_empty_axes", 0) != 0;
    const int64_t *attr_axes = NULL;
    size_t n_attr = tc__attr_ints(ctx->attrs, "axes", &attr_axes);
    if (ax != NULL && n_attr > 0)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "axes given both as attribute and as input");
    if (ax != NULL && ax->dtype != TC_DTYPE_UNDEFINED && ax->dtype != TC_DTYPE_INT64)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "axes input has data type %s, expected int64",
                        tc_dtype_name(ax->dtype) ? tc_dtype_name(ax->dtype) : "unknown");
    tc__vinfo *y = &ctx->out[0];
    y->dtype = x->dtype;

    /* The axes, when known. */
    int64_t axes[TC_MAX_RANK];
    int64_t n_axes = -1;
    if (ax == NULL) {
        if (n_attr > TC_MAX_RANK)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%zu axes given, more than the maximum rank %d",
                            n_attr, TC_MAX_RANK);
        n_axes = (int64_t)n_attr;
        for (size_t i = 0; i < n_attr; i++) axes[i] = attr_axes[i];
    } else {
        n_axes = tc__infer_const_ints(ax, axes, TC_MAX_RANK);
        if (n_axes < 0 && ax->shape.rank == 1 && ax->shape.dims[0].value == 0) n_axes = 0;
    }

    if (n_axes == 0 && noop_empty) {
        y->shape = x->shape;
        return TC_STATUS_OK;
    }
    int32_t rank = x->shape.rank;
    if (rank < 0) {
        y->shape.rank = TC__RANK_UNKNOWN;
        return TC_STATUS_OK;
    }
    if (n_axes < 0) { /* axes not known statically */
        if (keepdims) {
            y->shape.rank = rank;
            for (int32_t i = 0; i < rank; i++)
                y->shape.dims[i] = x->shape.dims[i].value == 1 ? tc__dim_known(1) : tc__dim_unknown();
        } else if (ax->shape.rank == 1 && ax->shape.dims[0].value > 0 && ax->shape.dims[0].value <= rank &&
                   !noop_empty) {
            y->shape.rank = rank - (int32_t)ax->shape.dims[0].value;
            for (int32_t i = 0; i < y->shape.rank; i++) y->shape.dims[i] = tc__dim_unknown();
        } else {
            y->shape.rank = TC__RANK_UNKNOWN;
        }
        return TC_STATUS_OK;
    }

    bool mask[TC_MAX_RANK] = {false};
    if (n_axes == 0) {
        for (int32_t i = 0; i < rank; i++) mask[i] = true;
    } else {
        for (int64_t k = 0; k < n_axes; k++) {
            int32_t a;
            if ((st = tc__infer_axis(ctx, axes[k], rank, &a))) return st;
            if (mask[a])
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axis %lld appears twice in axes",
                                (long long)axes[k]);
            mask[a] = true;
        }
    }
    int32_t r = 0;
    for (int32_t i = 0; i < rank; i++) {
        if (!mask[i]) y->shape.dims[r++] = x->shape.dims[i];
        else if (keepdims) y->shape.dims[r++] = tc__dim_known(1);
    }
    y->shape.rank = r;
    return TC_STATUS_OK;
}

tc_status tc__infer_ReduceMean(tc__infer_ctx *ctx) { return infer_reduce(ctx); }
tc_status tc__infer_ReduceSum(tc__infer_ctx *ctx) { return infer_reduce(ctx); }
tc_status tc__infer_ReduceMax(tc__infer_ctx *ctx) { return infer_reduce(ctx); }
tc_status tc__infer_ReduceMin(tc__infer_ctx *ctx) { return infer_reduce(ctx); }
tc_status tc__infer_ReduceProd(tc__infer_ctx *ctx) { return infer_reduce(ctx); }
tc_status tc__infer_ReduceSumSquare(tc__infer_ctx *ctx) { return infer_reduce(ctx); }
tc_status tc__infer_ReduceL2(tc__infer_ctx *ctx) { return infer_reduce(ctx); }
