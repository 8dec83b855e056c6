/*
 * fold_qdq.c - explicit quantization (QDQ models, e.g. from onnxruntime's quantize_static): a Conv (one
 * group), MatMul or Gemm with a constant weight whose input x is fake-quantized per tensor - x is the output
 * of a QuantizeLinear -> DequantizeLinear pair, or of a producer whose epilogue took such a pair
 * (TC__ACT_FAKE_QUANT, see fuse_activation.c) - gets that quantization in its attributes (tc.int8_scale,
 * tc.int8_zero_point as an unsigned code). x is then exactly on the int8 grid, so an INT8 tactic that
 * quantizes it with the same scale and zero point gets back the model's codes, and an FP32 tactic computes
 * the model's arithmetic too: the tuner keeps whichever is faster. The weights' DequantizeLinear becomes an
 * FP32 constant by constant folding; the INT8 packing finds its per-tensor or per-channel grid again. A weight on
 * onnxruntime's reduce_range grid (|q| <= 64) also gets tc.int8_w7 = 1: the 7-bit-weight kernels then compute the
 * model's codes exactly.
 */
#include <string.h>

#include "core/quant_attr.h"
#include "passes/passes.h"
#include "passes/pattern.h"
#include "graph/quantizable.h"

/* The per-tensor (one element) float32 scale and the zero point of a Q or DQ node, if constant; *lo is the
 * lowest code of its type (0 for uint8, -128 for int8). */
static bool qdq_params(const tc__graph *g, const tc__node *n, float *scale, int64_t *zp, int64_t *lo) {
    if (n->n_op_in < 2 || n->in[1] < 0 || tc__attr_int(&n->attrs, "block_size", 0) != 0) return false;
    const tc__tensor *s = tc__pat_const(g, n->in[1]);
    if (s == NULL || s->dtype != TC_DTYPE_FLOAT32 || tc__tensor_numel(s) != 1 || s->data == NULL) return false;
    *scale = *(const float *)s->data;
    *zp = 0, *lo = 0;
    if (n->n_op_in > 2 && n->in[2] >= 0) {
        const tc__tensor *z = tc__pat_const(g, n->in[2]);
        if (z == NULL || tc__tensor_numel(z) != 1 || z->data == NULL) return false;
        if (z->dtype == TC_DTYPE_UINT8) *zp = *(const uint8_t *)z->data;
        else if (z->dtype == TC_DTYPE_INT8) *zp = *(const int8_t *)z->data, *lo = -128;
        else return false;
    } else if (strcmp(n->op_type, "QuantizeLinear") == 0 && tc__attr_int(&n->attrs, "output_dtype", 0) == TC_DTYPE_INT8) {
        *lo = -128;
    }
    return *scale > 0.0f && *scale < 1e30f;
}

bool tc__qdq_pair(const tc__graph *g, int32_t q, int32_t dq, float *scale, float *qmin) {
    float s_q, s_dq;
    int64_t z_q, z_dq, lo_q, lo_dq;
    const tc__node *qn = &g->nodes[q], *dn = &g->nodes[dq];
    if (!tc__pat_is(qn, "QuantizeLinear") || !tc__pat_is(dn, "DequantizeLinear") || dn->in[0] != qn->out[0] ||
        qn->in[0] < 0 || g->values[qn->in[0]].info.dtype != TC_DTYPE_FLOAT32 || !qdq_params(g, qn, &s_q, &z_q, &lo_q) ||
        !qdq_params(g, dn, &s_dq, &z_dq, &lo_dq) || s_q != s_dq || z_q != z_dq || lo_q != lo_dq)
        return false;
    *scale = s_q;
    *qmin = (float)(lo_q - z_q);
    return true;
}

/* The fake quantization of value x (scale, qmin), from a Q -> DQ pair or a producer's epilogue. */
static bool fake_quantized(const tc__graph *g, int32_t x, float *scale, float *qmin) {
    const int32_t p = tc__pat_producer(g, x, NULL);
    if (p < 0) return false;
    const tc__node *pn = &g->nodes[p];
    if (pn->epi.act == TC__ACT_FAKE_QUANT && pn->n_out == 1) {
        *scale = pn->epi.alpha, *qmin = pn->epi.beta;
        return true;
    }
    const int32_t q = tc__pat_is(pn, "DequantizeLinear") && pn->in[0] >= 0 ? tc__pat_producer(g, pn->in[0], NULL) : -1;
    return q >= 0 && tc__qdq_pair(g, q, p, scale, qmin);
}

tc_status tc__pass_fold_qdq(tc__pass_ctx *ctx) {
    tc__graph *g = ctx->g;
    for (int32_t k = 0; k < g->n_nodes; k++) {
        const tc__node *n = &g->nodes[k];
        tc__qlayer q;
        float scale, qmin;
        if (!tc__quantizable_layer(g, n, false, &q) || tc__attr_has(&n->attrs, TC__ATTR_INT8_SCALE) ||
            !(q.depthwise ? tc__int8_dw_weight_fits(q.cout, q.taps) : tc__int8_weight_fits(q.cout, q.cin, q.taps)) ||
            !fake_quantized(g, q.x, &scale, &qmin) || qmin > 0.0f ||
            qmin < -255.0f)
            continue;
        const tc__attr a[3] = {{.name = TC__ATTR_INT8_SCALE, .kind = TC__ATTR_FLOAT, .f = scale},
                               {.name = TC__ATTR_INT8_ZERO_POINT, .kind = TC__ATTR_INT, .i = (int64_t)-qmin},
                               {.name = TC__ATTR_INT8_W7, .kind = TC__ATTR_INT, .i = 1}};
        const int n_attr = tc__weight_on_grid(g, n, &q, TC__INT8_W7_MAX) ? 3 : 2;
        for (int i = 0; i < n_attr; i++) {
            tc_status st = tc__pat_set_attr(g, k, &a[i], ctx->err);
            if (st) return st;
        }
        ctx->changes++;
    }
    return TC_STATUS_OK;
}
