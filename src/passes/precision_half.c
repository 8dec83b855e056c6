/*
 * precision_half.c - the 16-bit float precision pass (--fp16, --bf16): gives every Conv (one group), MatMul
 * and Gemm with a constant weight the node attribute tc.fp16 = 1 or tc.bf16 = 1, and with --bf16 every MatMul of two
 * values computed at run time (attention's; matmul_dyn_bf16_avx512bf16) tc.bf16 = 1. The fp16 / bf16 tactics
 * take only such nodes; the tuner then times them against the other precisions' tactics and keeps the
 * fastest, so a layer runs in FP16 or BF16 only where that is faster. Layers named in the exclusion list
 * (--layer-precision NAME:fp32) keep FP32. tc__pass_precision_half_op marks every node of one op type likewise (device
 * builds: the fused Attention nodes, for the FP16 Tensor Core attention).
 */

#include <string.h>

#include "core/quant_attr.h"
#include "passes/passes.h"
#include "passes/pattern.h"
#include "graph/quantizable.h"

/* A MatMul of two float32 values computed at run time (attention's Q.K^T and P.V): BF16 has a tactic for it. */
static bool dynamic_matmul(const tc__graph *g, const tc__node *n) {
    if (n->removed || strcmp(n->op_type, "MatMul") != 0 || n->n_op_in < 2) return false;
    for (int i = 0; i < 2; i++) {
        const int32_t v = n->in[i];
        if (v < 0 || g->values[v].init != NULL || g->values[v].info.dtype != TC_DTYPE_FLOAT32) return false;
        const int32_t p = g->values[v].producer;
        if (p >= 0 && strcmp(g->nodes[p].op_type, "Constant") == 0) return false;
    }
    return true;
}

tc_status tc__pass_precision_half(tc__pass_ctx *ctx, const char *attr, const char *const *exclude, int n_exclude) {
    tc__graph *g = ctx->g;
    const bool bf16 = strcmp(attr, TC__ATTR_BF16) == 0;
    for (int32_t k = 0; k < g->n_nodes; k++) {
        const tc__node *n = &g->nodes[k];
        tc__qlayer q;
        /* (no FP16/BF16 depthwise tactic: those layers stay FP32) */
        const bool layer = tc__quantizable_layer(g, n, false, &q) && !q.depthwise;
        if (!(layer || (bf16 && dynamic_matmul(g, n))) || tc__attr_has(&n->attrs, attr)) continue;
        if (tc__layer_listed(n->name, exclude, n_exclude)) continue;
        tc__attr a = {.name = attr, .kind = TC__ATTR_INT, .i = 1};
        tc_status st = tc__pat_set_attr(g, k, &a, ctx->err);
        if (st) return st;
        ctx->changes++;
    }
    return TC_STATUS_OK;
}

tc_status tc__pass_precision_half_op(tc__pass_ctx *ctx, const char *attr, const char *op_type, const char *const *exclude,
                                     int n_exclude) {
    tc__graph *g = ctx->g;
    for (int32_t k = 0; k < g->n_nodes; k++) {
        const tc__node *n = &g->nodes[k];
        if (n->removed || strcmp(n->op_type, op_type) != 0 || tc__attr_has(&n->attrs, attr)) continue;
        if (tc__layer_listed(n->name, exclude, n_exclude)) continue;
        tc__attr a = {.name = attr, .kind = TC__ATTR_INT, .i = 1};
        tc_status st = tc__pat_set_attr(g, k, &a, ctx->err);
        if (st) return st;
        ctx->changes++;
    }
    return TC_STATUS_OK;
}
