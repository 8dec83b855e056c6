/*
 * infer_lrn.c - shape inference for LRN: X [N, C, D1, ..., Dk] (rank >= 3 as the
 * ONNX spec writes it; rank 2 accepted) -> Y of X's shape and float type;
 * attributes validated by core/lrn_params.c.
 */
#include "core/lrn_params.h"
#include "graph/op_schema.h"

tc_status tc__infer_LRN(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 1, 1, 1);
    if (st != TC_STATUS_OK) return st;
    tc__lrn_params p;
    if ((st = tc__lrn_params_read(ctx->attrs, &p, ctx->err)) != TC_STATUS_OK) return st;
    const tc__vinfo *x = ctx->in[0];
    if (x->dtype != TC_DTYPE_UNDEFINED && !tc__dtype_is_float(x->dtype)) {
        const char *n = tc_dtype_name(x->dtype);
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "input X has data type %s, expected a float type",
                        n ? n : "?");
    }
    if (x->shape.rank >= 0 && x->shape.rank < 2)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input X has rank %d, expected 2 or more (N, C, ...)",
                        (int)x->shape.rank);
    return tc__infer_same_as_input0(ctx);
}
