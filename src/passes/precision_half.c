/*
 * precision_half.c - the 16-bit float precision pass (--fp16, --bf16): gives every Conv (one group), MatMul
 * and Gemm with a constant weight the node attribute tc.fp16 = 1 or tc.bf16 = 1. The fp16 / bf16 tactics
 * take only such nodes; the tuner then times them against the other precisions' tactics and keeps the
 * fastest, so a layer runs in FP16 or BF16 only where that is faster. Layers named in the exclusion list
 * (--layer-precision NAME:fp32) keep FP32.
 */

#include "core/quant_attr.h"
#include "passes/passes.h"
#include "passes/pattern.h"
#include "quant/quantizable.h"

tc_status tc__pass_precision_half(tc__pass_ctx *ctx, const char *attr, const char *const *exclude, int n_exclude) {
    tc__graph *g = ctx->g;
    for (int32_t k = 0; k < g->n_nodes; k++) {
        const tc__node *n = &g->nodes[k];
        tc__qlayer q;
        /* (no FP16/BF16 depthwise tactic: those layers stay FP32) */
        if (!tc__quantizable_layer(g, n, false, &q) || q.depthwise || tc__attr_has(&n->attrs, attr)) continue;
        if (tc__layer_listed(n->name, exclude, n_exclude)) continue;
        tc__attr a = {.name = attr, .kind = TC__ATTR_INT, .i = 1};
        tc_status st = tc__pat_set_attr(g, k, &a, ctx->err);
        if (st) return st;
        ctx->changes++;
    }
    return TC_STATUS_OK;
}
