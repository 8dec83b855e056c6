/*
 * fuse_nan_guard.c - folds the NaN guard that exported transformers put after the attention
 * Softmax into the Softmax itself:
 *     s = Softmax(x), n = IsNaN(s), y = Where(n, c, s)      (c a constant one-element float)
 * becomes y = Softmax(x) with the attribute TC__ATTR_NAN_TO = c, which the Softmax kernels apply
 * in the store that writes y (a row of -inf scores, fully masked, is NaN and becomes c).
 * s must be read only by the IsNaN and the Where, n only by the Where, and y must have s's shape.
 */
#include "core/fused_attr.h"
#include "passes/passes.h"
#include "passes/pattern.h"

/* If Where node w is Where(IsNaN(s), c, s) around Softmax node output s, returns the Softmax and the
 * IsNaN in *isnan and c's value in *c; -1 otherwise. */
static int32_t match(const tc__graph *g, int32_t w, int32_t *isnan, float *c) {
    const tc__node *wn = &g->nodes[w];
    if (wn->n_op_in != 3 || !tc__pat_plain(wn) || wn->n_out != 1 || wn->out[0] < 0) return -1;
    const int32_t nv = wn->in[0], cv = wn->in[1], s = wn->in[2];
    if (nv < 0 || cv < 0 || s < 0) return -1;
    int32_t i = tc__pat_producer(g, nv, "IsNaN");
    if (i < 0 || g->nodes[i].n_op_in != 1 || g->nodes[i].in[0] != s || !tc__pat_single_use(g, nv)) return -1;
    int32_t p = tc__pat_producer(g, s, "Softmax");
    if (p < 0 || !tc__pat_plain(&g->nodes[p]) || g->nodes[p].n_out != 1) return -1;
    /* s read twice (IsNaN, Where) and nowhere else: no other reader may see the guarded values. */
    if (g->values[s].is_output || tc__graph_use_count(g, s) != 2 || !tc__pat_is_float(g, s)) return -1;
    if (tc__attr_has(&g->nodes[p].attrs, TC__ATTR_NAN_TO)) return -1;
    const tc__tensor *ct = tc__pat_const(g, cv);
    if (ct == NULL || !tc__dtype_is_float(ct->dtype) || tc__tensor_numel(ct) != 1) return -1;
    if (g->values[wn->out[0]].info.dtype != g->values[s].info.dtype) return -1;
    if (!tc__pat_same_shape(&g->values[wn->out[0]].info.shape, &g->values[s].info.shape)) return -1;
    *isnan = i;
    *c = (float)tc__tensor_get_f64(ct, 0);
    return p;
}

tc_status tc__pass_fuse_nan_guard(tc__pass_ctx *ctx) {
    tc__graph *g = ctx->g;
    for (int32_t w = 0; w < g->n_nodes; w++) {
        if (!tc__pat_is(&g->nodes[w], "Where")) continue;
        int32_t isnan = -1;
        float c = 0.0f;
        int32_t p = match(g, w, &isnan, &c);
        if (p < 0) continue;
        const tc__attr a = {.name = TC__ATTR_NAN_TO, .kind = TC__ATTR_FLOAT, .f = c};
        tc_status st = tc__pat_set_attr(g, p, &a, ctx->err);
        if (st) return st;
        g->nodes[isnan].removed = true;
        st = tc__graph_node_note_fused(g, p, "IsNaN", ctx->err);
        if (st == TC_STATUS_OK) st = tc__pat_absorb(g, p, 0, w, ctx->err);
        if (st) return st;
        ctx->changes++;
    }
    return TC_STATUS_OK;
}
