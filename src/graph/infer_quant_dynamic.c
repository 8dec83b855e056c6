/*
 * infer_quant_dynamic.c - shape and type inference of the ops onnxruntime's quantize_dynamic writes:
 * DynamicQuantizeLinear (float32 -> uint8, scalar scale and zero point), MatMulInteger and ConvInteger
 * (uint8 / int8 operands with optional zero points, int32 results). The shapes of the products are MatMul's
 * and Conv's; the zero points are per tensor, per row of A / per column of B (MatMulInteger) or per output
 * channel of W (ConvInteger).
 */
#include "graph/op_schema.h"

static const char *dtype_str(tc_dtype d) { return tc_dtype_name(d) ? tc_dtype_name(d) : "this type"; }

/* Input i is uint8 or int8 (or not known yet); what names it. */
static tc_status check_8bit(tc__infer_ctx *ctx, int i, const char *what) {
    const tc__vinfo *v = tc__infer_input(ctx, i);
    if (v == NULL || v->dtype == TC_DTYPE_UNDEFINED || v->dtype == TC_DTYPE_UINT8 || v->dtype == TC_DTYPE_INT8)
        return TC_STATUS_OK;
    return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "%s of type %s is not supported (uint8 or int8)", what,
                    dtype_str(v->dtype));
}

/* The zero point (input zi) of operand i has the operand's type, and at most rank 1 unless allow_nd. */
static tc_status check_zero_point(tc__infer_ctx *ctx, int i, int zi, const char *what, bool allow_nd) {
    const tc__vinfo *x = ctx->in[i], *z = tc__infer_input(ctx, zi);
    if (z == NULL) return TC_STATUS_OK;
    if (z->dtype != TC_DTYPE_UNDEFINED && x->dtype != TC_DTYPE_UNDEFINED && z->dtype != x->dtype)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "%s's zero point is %s, the operand %s", what,
                        dtype_str(z->dtype), dtype_str(x->dtype));
    if (!allow_nd && z->shape.rank > 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "%s's zero point has rank %d, expected a scalar or 1-D",
                        what, (int)z->shape.rank);
    return TC_STATUS_OK;
}

/* Runs the float op's inference (MatMul or Conv) on the two operands seen with one dtype; the result is int32. */
static tc_status infer_as(tc__infer_ctx *ctx, tc__infer_fn float_infer) {
    tc__vinfo a = *ctx->in[0], b = *ctx->in[1];
    a.dtype = b.dtype = TC_DTYPE_UNDEFINED; /* uint8 x int8 is allowed here; the float op wants one type */
    const tc__vinfo *in[2] = {&a, &b};
    tc__infer_ctx sub = *ctx;
    sub.n_in = 2;
    sub.in = in;
    tc_status st = float_infer(&sub);
    if (st) return st;
    ctx->out[0].dtype = TC_DTYPE_INT32;
    return TC_STATUS_OK;
}

tc_status tc__infer_DynamicQuantizeLinear(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 1, 1, 3);
    if (st) return st;
    if (ctx->n_out != 3)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "has %d outputs, expected 3 (y, y_scale, y_zero_point)",
                        ctx->n_out);
    const tc__vinfo *x = ctx->in[0];
    if (x->dtype != TC_DTYPE_FLOAT32 && x->dtype != TC_DTYPE_UNDEFINED)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "input of type %s is not supported (float32)",
                        dtype_str(x->dtype));
    ctx->out[0].dtype = TC_DTYPE_UINT8;
    ctx->out[0].shape = x->shape;
    ctx->out[1].dtype = TC_DTYPE_FLOAT32;
    ctx->out[1].shape.rank = 0;
    ctx->out[2].dtype = TC_DTYPE_UINT8;
    ctx->out[2].shape.rank = 0;
    return TC_STATUS_OK;
}

tc_status tc__infer_MatMulInteger(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 2, 4, 1);
    if (st) return st;
    if ((st = check_8bit(ctx, 0, "A")) || (st = check_8bit(ctx, 1, "B")) ||
        (st = check_zero_point(ctx, 0, 2, "A", true)) || (st = check_zero_point(ctx, 1, 3, "B", true)))
        return st;
    return infer_as(ctx, tc__infer_MatMul);
}

tc_status tc__infer_ConvInteger(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 2, 4, 1);
    if (st) return st;
    if ((st = check_8bit(ctx, 0, "X")) || (st = check_8bit(ctx, 1, "W")) ||
        (st = check_zero_point(ctx, 0, 2, "X", false)) || (st = check_zero_point(ctx, 1, 3, "W", false)))
        return st;
    const tc__vinfo *xz = tc__infer_input(ctx, 2);
    if (xz != NULL && xz->shape.rank == 1 && tc__dim_is_literal(xz->shape.dims[0]) && xz->shape.dims[0].value != 1)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "X's zero point has %lld values; only one is supported",
                        (long long)xz->shape.dims[0].value);
    return infer_as(ctx, tc__infer_Conv);
}
