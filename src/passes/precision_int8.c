/*
 * precision_int8.c - the INT8 precision pass (implicit quantization): gives every Conv (one group),
 * MatMul and Gemm whose weight is constant and whose data input has a calibrated scale the node
 * attribute tc.int8_scale. The int8 tactics take only such nodes; the tuner then times them
 * against the FP32 tactics, so each layer runs in INT8 only where that is faster. Layers named in
 * the exclusion list (--layer-precision NAME:fp32) keep FP32.
 */

#include "core/quant_attr.h"
#include "passes/passes.h"
#include "passes/pattern.h"
#include "quant/calib_cache.h"
#include "quant/quantizable.h"

tc_status tc__pass_precision_int8(tc__pass_ctx *ctx, const tc__calib_cache *cache, const char *const *exclude,
                                  int n_exclude) {
    tc__graph *g = ctx->g;
    for (int32_t k = 0; k < g->n_nodes; k++) {
        const tc__node *n = &g->nodes[k];
        float scale;
        tc__qlayer q;
        if (!tc__quantizable_layer(g, n, false, &q) || tc__attr_has(&n->attrs, TC__ATTR_INT8_SCALE)) continue;
        if (tc__layer_listed(n->name, exclude, n_exclude)) continue;
        if (!tc__calib_cache_find(cache, g->values[n->in[0]].name, &scale)) continue;
        tc__attr a = {.name = TC__ATTR_INT8_SCALE, .kind = TC__ATTR_FLOAT, .f = scale};
        tc_status st = tc__pat_set_attr(g, k, &a, ctx->err);
        if (st) return st;
        ctx->changes++;
    }
    return TC_STATUS_OK;
}
