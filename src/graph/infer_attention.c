/*
 * infer_attention.c - shape inference for Attention (opset 23; the subset core/attention_geom.h describes):
 * Y is [B, Hq, S, Dv] for 4-D inputs, [B, S, Hq*Dv] for 3-D ones (Dv = V's last dim / kv_num_heads), of Q's float
 * type; with tc.qkv_packed (merge_qkv) Q, K and V are one [B, S, (Hq + 2 Hk) * D] tensor and Y is [B, S, Hq*D]. The
 * optional outputs (present key/value, qk_matmul_output) and a KV cache are refused (TC_STATUS_UNSUPPORTED).
 */
#include "core/fused_attr.h"
#include "graph/op_schema.h"

static tc_status bad(tc__infer_ctx *ctx, tc_status st, const char *what) { return tc__fail(ctx->err, st, "%s", what); }

tc_status tc__infer_Attention(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 3, 7, 4);
    if (st != TC_STATUS_OK) return st;
    if (ctx->n_out > 1)
        return bad(ctx, TC_STATUS_UNSUPPORTED, "the outputs present_key, present_value and qk_matmul_output are not supported");
    for (int i = 4; i < ctx->n_in; i++)
        if (ctx->in[i] != NULL)
            return bad(ctx, TC_STATUS_UNSUPPORTED, "past_key, past_value and nonpad_kv_seqlen are not supported (no KV cache yet)");
    const tc__vinfo *q = ctx->in[0], *k = ctx->in[1], *v = ctx->in[2], *m = tc__infer_input(ctx, 3);
    if (q == NULL || k == NULL || v == NULL) return bad(ctx, TC_STATUS_INVALID_GRAPH, "Q, K and V are required");
    for (int i = 0; i < 3; i++) {
        const tc_dtype t = ctx->in[i]->dtype;
        if (t != TC_DTYPE_UNDEFINED && !tc__dtype_is_float(t))
            return bad(ctx, TC_STATUS_INVALID_GRAPH, "Q, K and V must be of a float type");
        if (t != TC_DTYPE_UNDEFINED && q->dtype != TC_DTYPE_UNDEFINED && t != q->dtype)
            return bad(ctx, TC_STATUS_INVALID_GRAPH, "Q, K and V must have the same data type");
    }
    if (m != NULL && m->dtype != TC_DTYPE_UNDEFINED && m->dtype != TC_DTYPE_BOOL && q->dtype != TC_DTYPE_UNDEFINED &&
        m->dtype != q->dtype)
        return bad(ctx, TC_STATUS_INVALID_GRAPH, "attn_mask must be bool or of Q's data type");
    const int32_t r = q->shape.rank;
    if (r >= 0 && r != 3 && r != 4) return bad(ctx, TC_STATUS_INVALID_GRAPH, "Q must be 3-D or 4-D");
    if ((k->shape.rank >= 0 && r >= 0 && k->shape.rank != r) || (v->shape.rank >= 0 && r >= 0 && v->shape.rank != r))
        return bad(ctx, TC_STATUS_INVALID_GRAPH, "Q, K and V must have the same rank");
    tc__vinfo *y = &ctx->out[0];
    y->dtype = q->dtype;
    y->shape.rank = r;
    if (r < 0) return TC_STATUS_OK;
    const bool vk = v->shape.rank == r;
    if (r == 4) {
        for (int i = 0; i < 3; i++) y->shape.dims[i] = q->shape.dims[i];
        y->shape.dims[3] = vk ? v->shape.dims[3] : tc__dim_unknown();
        return TC_STATUS_OK;
    }
    const int64_t hq = tc__attr_int(ctx->attrs, "q_num_heads", 0), hk = tc__attr_int(ctx->attrs, "kv_num_heads", 0);
    if (hq < 1 || hk < 1) return bad(ctx, TC_STATUS_INVALID_GRAPH, "3-D inputs need q_num_heads and kv_num_heads >= 1");
    y->shape.dims[0] = q->shape.dims[0];
    y->shape.dims[1] = q->shape.dims[1];
    y->shape.dims[2] = tc__dim_unknown();
    if (tc__attr_int(ctx->attrs, TC__ATTR_QKV_PACKED, 0) == 1) {
        if (hq > ((int64_t)1 << 40) || hk > ((int64_t)1 << 40))
            return bad(ctx, TC_STATUS_INVALID_GRAPH, "q_num_heads or kv_num_heads is too large");
        if (tc__dim_is_known(q->shape.dims[2])) {
            const int64_t w = q->shape.dims[2].value, heads = hq + 2 * hk;
            if (w % heads != 0)
                return bad(ctx, TC_STATUS_INVALID_GRAPH, "the packed Q|K|V width is not (q + 2 kv heads) x head size");
            y->shape.dims[2] = tc__dim_known(w / heads * hq);
        }
        return TC_STATUS_OK;
    }
    if (vk && tc__dim_is_known(v->shape.dims[2])) {
        const int64_t hv = v->shape.dims[2].value;
        if (hv % hk != 0) return bad(ctx, TC_STATUS_INVALID_GRAPH, "kv_num_heads does not divide V's last dim");
        if (hv / hk > ((int64_t)1 << 40) / hq) return bad(ctx, TC_STATUS_INVALID_GRAPH, "the output is too large");
        y->shape.dims[2] = tc__dim_known(hv / hk * hq);
    }
    return TC_STATUS_OK;
}
