/*
 * fuse_residual.c - Add(a, b) where a comes from a Conv, Gemm or MatMul that nothing else
 * reads becomes the residual operand of that producer's epilogue: y = act(op(x) + bias + b).
 * a, b and the sum must have identical static shapes (no broadcasting). An activation already
 * fused into the Add moves along with it.
 */
#include "passes/passes.h"
#include "passes/pattern.h"

static bool is_dense(const tc__node *node) {
    return tc__pat_is(node, "Conv") || tc__pat_is(node, "Gemm") || tc__pat_is(node, "MatMul");
}

/* Tries to fuse Add node `add` with its operand `which` (0 or 1) as the producer's output. */
static tc_status try_fuse(tc__pass_ctx *ctx, int32_t add, int which, bool *done) {
    tc__graph *g = ctx->g;
    *done = false;
    const tc__node *an = &g->nodes[add];
    int32_t a = an->in[which], b = an->in[1 - which], y = an->out[0];
    if (a < 0 || b < 0 || a == b) return TC_STATUS_OK;
    int32_t p = tc__pat_producer(g, a, NULL);
    if (p < 0 || !is_dense(&g->nodes[p]) || g->nodes[p].n_out != 1) return TC_STATUS_OK;
    const tc__epilogue *pe = &g->nodes[p].epi;
    if (pe->residual_input >= 0 || pe->act != TC__ACT_NONE || !tc__pat_single_use(g, a)) return TC_STATUS_OK;
    const tc__vinfo *ai = &g->values[a].info, *bi = &g->values[b].info, *yi = &g->values[y].info;
    if (!tc__dtype_is_float(ai->dtype) || ai->dtype != bi->dtype || ai->dtype != yi->dtype) return TC_STATUS_OK;
    if (!tc__pat_same_shape(&ai->shape, &bi->shape) || !tc__pat_same_shape(&ai->shape, &yi->shape)) return TC_STATUS_OK;
    const tc__epilogue ae = an->epi; /* only an activation (checked by the caller) */
    int idx = 0;
    tc_status st = tc__graph_node_add_input(g, p, b, &idx, ctx->err);
    if (st) return st;
    tc__node *pn = &g->nodes[p];
    pn->epi.residual_input = (int8_t)idx;
    pn->epi.act = ae.act;
    pn->epi.alpha = ae.alpha;
    pn->epi.beta = ae.beta;
    const char *add_fused = g->nodes[add].fused;
    st = tc__pat_absorb(g, p, 0, add, ctx->err);
    if (st == TC_STATUS_OK && add_fused[0] != '\0') st = tc__graph_node_note_fused(g, p, add_fused, ctx->err);
    if (st == TC_STATUS_OK) *done = true;
    return st;
}

tc_status tc__pass_fuse_residual(tc__pass_ctx *ctx) {
    tc__graph *g = ctx->g;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const tc__node *add = &g->nodes[n];
        if (!tc__pat_is(add, "Add") || add->n_op_in != 2 || add->n_in != 2 || add->n_out != 1 || add->out[0] < 0)
            continue;
        if (add->epi.bias_input >= 0 || add->epi.residual_input >= 0) continue;
        for (int which = 0; which < 2; which++) {
            bool done = false;
            tc_status st = try_fuse(ctx, n, which, &done);
            if (st) return st;
            if (done) {
                ctx->changes++;
                break;
            }
        }
    }
    return TC_STATUS_OK;
}
