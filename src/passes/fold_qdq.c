/*
 * fold_qdq.c - explicit quantization (QDQ models, e.g. onnxruntime's quantize_static): where a Conv (one
 * group), MatMul or Gemm with a constant weight reads x through QuantizeLinear -> DequantizeLinear with one
 * per-tensor scale and zero point, the node reads x itself and carries that quantization in its attributes
 * (tc.int8_scale, tc.int8_zero_point as an unsigned code, tc.int8_required): its INT8 tactic quantizes x
 * exactly as the pair did, so the result is the model's. The weights' DequantizeLinear was folded into an
 * FP32 constant by constant folding; the INT8 tactic requantizes it per output channel. Q/DQ pairs that
 * feed other ops stay and run as they are. Runs only where the target has INT8 tactics; the pairs left
 * without readers are removed by dead-code elimination.
 */
#include <string.h>

#include "core/quant_attr.h"
#include "passes/passes.h"
#include "passes/pattern.h"

/* The per-tensor (one element) float32 scale and integer zero point of a Q or DQ node, if constant. */
static bool qdq_params(const tc__graph *g, const tc__node *n, float *scale, int64_t *zp, tc_dtype *zdt) {
    if (n->n_in < 2 || n->in[1] < 0) return false;
    const tc__tensor *s = tc__pat_const(g, n->in[1]);
    if (s == NULL || s->dtype != TC_DTYPE_FLOAT32 || tc__tensor_numel(s) != 1 || s->data == NULL) return false;
    if (tc__attr_int(&n->attrs, "block_size", 0) != 0) return false;
    *scale = *(const float *)s->data;
    *zp = 0;
    *zdt = TC_DTYPE_UINT8;
    if (n->n_in > 2 && n->in[2] >= 0) {
        const tc__tensor *z = tc__pat_const(g, n->in[2]);
        if (z == NULL || tc__tensor_numel(z) != 1 || z->data == NULL) return false;
        if (z->dtype == TC_DTYPE_UINT8) *zp = *(const uint8_t *)z->data;
        else if (z->dtype == TC_DTYPE_INT8) *zp = *(const int8_t *)z->data;
        else return false;
        *zdt = z->dtype;
    }
    return *scale > 0.0f && *scale < 1e30f;
}

/* The weight's (C_out, C_in, taps) of a quantizable node with static weight dims, or false. */
static bool weight_dims(const tc__graph *g, const tc__node *n, int64_t *cout, int64_t *cin, int64_t *taps) {
    const tc__tensor *w = n->n_op_in >= 2 && n->in[1] >= 0 ? g->values[n->in[1]].init : NULL;
    if (w == NULL || w->dtype != TC_DTYPE_FLOAT32) return false;
    if (strcmp(n->op_type, "Conv") == 0) {
        if (w->rank != 4 || tc__attr_int(&n->attrs, "group", 1) != 1) return false;
        *cout = w->dims[0], *cin = w->dims[1], *taps = w->dims[2] * w->dims[3];
        return true;
    }
    if (w->rank != 2) return false;
    const bool tb = strcmp(n->op_type, "Gemm") == 0 && tc__attr_int(&n->attrs, "transB", 0) != 0;
    if (strcmp(n->op_type, "Gemm") == 0 && tc__attr_int(&n->attrs, "transA", 0) != 0) return false;
    if (strcmp(n->op_type, "MatMul") != 0 && strcmp(n->op_type, "Gemm") != 0) return false;
    *cout = tb ? w->dims[0] : w->dims[1], *cin = tb ? w->dims[1] : w->dims[0], *taps = 1;
    return true;
}

tc_status tc__pass_fold_qdq(tc__pass_ctx *ctx) {
    tc__graph *g = ctx->g;
    for (int32_t k = 0; k < g->n_nodes; k++) {
        const tc__node *n = &g->nodes[k];
        int64_t cout, cin, taps;
        if (n->removed || n->n_op_in < 2 || n->in[0] < 0 || tc__attr_has(&n->attrs, TC__ATTR_INT8_SCALE) ||
            !weight_dims(g, n, &cout, &cin, &taps) || !tc__int8_weight_fits(cout, cin, taps))
            continue;
        const int32_t dq = tc__pat_producer(g, n->in[0], "DequantizeLinear");
        if (dq < 0 || g->nodes[dq].in[0] < 0) continue;
        const int32_t q = tc__pat_producer(g, g->nodes[dq].in[0], "QuantizeLinear");
        if (q < 0 || g->nodes[q].in[0] < 0) continue;
        float s_q, s_dq;
        int64_t z_q, z_dq;
        tc_dtype t_q, t_dq;
        if (!qdq_params(g, &g->nodes[q], &s_q, &z_q, &t_q) || !qdq_params(g, &g->nodes[dq], &s_dq, &z_dq, &t_dq) ||
            s_q != s_dq || z_q != z_dq || t_q != t_dq)
            continue;
        const int32_t x = g->nodes[q].in[0];
        if (g->values[x].info.dtype != TC_DTYPE_FLOAT32) continue;
        const int64_t code = t_q == TC_DTYPE_INT8 ? z_q + 128 : z_q;
        tc__attr a[3] = {{.name = TC__ATTR_INT8_SCALE, .kind = TC__ATTR_FLOAT, .f = s_q},
                         {.name = TC__ATTR_INT8_ZERO_POINT, .kind = TC__ATTR_INT, .i = code},
                         {.name = TC__ATTR_INT8_REQUIRED, .kind = TC__ATTR_INT, .i = 1}};
        for (int i = 0; i < 3; i++) {
            tc_status st = tc__pat_set_attr(g, k, &a[i], ctx->err);
            if (st) return st;
        }
        g->nodes[k].in[0] = x;
        ctx->changes++;
    }
    return ctx->changes > 0 ? tc__pass_eliminate_dead(ctx) : TC_STATUS_OK;
}
