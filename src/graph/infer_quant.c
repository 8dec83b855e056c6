/*
 * infer_quant.c - shape and type inference of QuantizeLinear and DequantizeLinear (opset 13+):
 * per-tensor (a scalar or one-element scale) or per-axis (a 1-D scale along `axis`) linear
 * quantization between float32 and uint8 / int8 (DequantizeLinear also reads int32 without a
 * zero point). Blocked quantization (block_size) and 4-bit, 16-bit and float8 types are refused.
 */
#include "graph/op_schema.h"

/* The scale and zero point: float32 scale, a zero point of an allowed type with the scale's shape, and an
 * axis within x's rank when the scale is 1-D with more than one element. */
static tc_status check_params(tc__infer_ctx *ctx, const tc__vinfo *x, tc_dtype zp_allowed_a, tc_dtype zp_allowed_b) {
    const tc__vinfo *s = ctx->in[1], *z = tc__infer_input(ctx, 2);
    if (s == NULL) return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "the scale input is missing");
    if (s->dtype != TC_DTYPE_FLOAT32 && s->dtype != TC_DTYPE_UNDEFINED)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "only float32 scales are supported, not %s",
                        tc_dtype_name(s->dtype) ? tc_dtype_name(s->dtype) : "this type");
    if (tc__attr_int(ctx->attrs, "block_size", 0) != 0)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "blocked quantization (block_size) is not supported");
    if (s->shape.rank > 1) return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "the scale must be a scalar or 1-D");
    if (z != NULL && z->dtype != TC_DTYPE_UNDEFINED && z->dtype != zp_allowed_a && z->dtype != zp_allowed_b)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "zero point of type %s is not supported",
                        tc_dtype_name(z->dtype) ? tc_dtype_name(z->dtype) : "this type");
    /* Ranks may differ for one element ([] vs [1], as exporters write them); else the shapes must agree. */
    if (z != NULL && z->shape.rank == 1 && s->shape.rank == 1 && tc__dim_is_literal(z->shape.dims[0]) &&
        tc__dim_is_literal(s->shape.dims[0]) && z->shape.dims[0].value != s->shape.dims[0].value)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "the zero point and the scale differ in size");
    const bool one = s->shape.rank == 0 || (s->shape.rank == 1 && tc__dim_is_literal(s->shape.dims[0]) &&
                                            s->shape.dims[0].value == 1);
    if (!one && x->shape.rank >= 0) { /* per axis */
        int32_t axis;
        tc_status st = tc__infer_axis(ctx, tc__attr_int(ctx->attrs, "axis", 1), x->shape.rank, &axis);
        if (st) return st;
        const tc__dim n = s->shape.dims[0], c = x->shape.dims[axis];
        if (tc__dim_is_literal(n) && tc__dim_is_literal(c) && n.value != c.value)
            return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "%lld scales for axis %d of size %lld",
                            (long long)n.value, (int)axis, (long long)c.value);
    }
    return TC_STATUS_OK;
}

tc_status tc__infer_QuantizeLinear(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 2, 3, 1);
    if (st) return st;
    const tc__vinfo *x = ctx->in[0], *z = tc__infer_input(ctx, 2);
    if (x->dtype != TC_DTYPE_FLOAT32 && x->dtype != TC_DTYPE_UNDEFINED)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "only float32 inputs are supported");
    if ((st = check_params(ctx, x, TC_DTYPE_UINT8, TC_DTYPE_INT8))) return st;
    tc_dtype out = z != NULL ? z->dtype : TC_DTYPE_UINT8;
    const int64_t od = tc__attr_int(ctx->attrs, "output_dtype", 0);
    if (od != 0) {
        if (od != TC_DTYPE_UINT8 && od != TC_DTYPE_INT8)
            return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "output_dtype %lld is not supported", (long long)od);
        if (z != NULL && z->dtype != TC_DTYPE_UNDEFINED && z->dtype != (tc_dtype)od)
            return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "output_dtype differs from the zero point's type");
        out = (tc_dtype)od;
    }
    ctx->out[0].dtype = out;
    ctx->out[0].shape = x->shape;
    return TC_STATUS_OK;
}

tc_status tc__infer_DequantizeLinear(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 2, 3, 1);
    if (st) return st;
    const tc__vinfo *x = ctx->in[0];
    if (x->dtype != TC_DTYPE_UINT8 && x->dtype != TC_DTYPE_INT8 && x->dtype != TC_DTYPE_INT32 &&
        x->dtype != TC_DTYPE_UNDEFINED)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "dequantizing %s is not supported",
                        tc_dtype_name(x->dtype) ? tc_dtype_name(x->dtype) : "this type");
    if ((st = check_params(ctx, x, x->dtype == TC_DTYPE_UNDEFINED ? TC_DTYPE_UINT8 : x->dtype, TC_DTYPE_UNDEFINED)))
        return st;
    ctx->out[0].dtype = TC_DTYPE_FLOAT32;
    ctx->out[0].shape = x->shape;
    return TC_STATUS_OK;
}
