/*
 * fuse_matmul_bias.c - MatMul(A, B) followed by Add with a constant bias over the output's
 * last dim (shape [N], [1, N], [1, 1, N], ...) becomes a MatMul whose epilogue adds a 1-D copy
 * of the bias. The MatMul output must be read only by that Add.
 */
#include "passes/passes.h"
#include "passes/pattern.h"

/* True when bias t broadcasts over the last dim of shape s without changing s. */
static bool is_last_dim_bias(const tc__tensor *t, const tc__shape *s) {
    if (s->rank < 1 || t->rank > s->rank) return false;
    tc__dim last = s->dims[s->rank - 1];
    if (!tc__dim_is_known(last) || tc__tensor_numel(t) != last.value) return false;
    for (int32_t i = 0; i + 1 < t->rank; i++)
        if (t->dims[i] != 1) return false;
    return t->rank == 0 ? last.value == 1 : t->dims[t->rank - 1] == last.value;
}

tc_status tc__pass_fuse_matmul_bias(tc__pass_ctx *ctx) {
    tc__graph *g = ctx->g;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const tc__node *mm = &g->nodes[n];
        if (!tc__pat_is(mm, "MatMul") || !tc__pat_plain(mm) || mm->n_out != 1 || mm->out[0] < 0) continue;
        int32_t y = mm->out[0];
        if (!tc__pat_is_float(g, y)) continue;
        int32_t a = tc__pat_sole_consumer(g, y);
        if (a < 0 || !tc__pat_is(&g->nodes[a], "Add") || !tc__pat_plain(&g->nodes[a]) || g->nodes[a].n_op_in != 2)
            continue;
        const tc__node *add = &g->nodes[a];
        int32_t bias_v = add->in[0] == y ? add->in[1] : add->in[0];
        if (bias_v < 0 || bias_v == y) continue;
        const tc__tensor *bias = tc__pat_const(g, bias_v);
        const tc__shape *ys = &g->values[y].info.shape;
        if (bias == NULL || bias->dtype != g->values[y].info.dtype || !is_last_dim_bias(bias, ys)) continue;
        tc__tensor flat = *bias;
        flat.rank = 1;
        flat.dims[0] = ys->dims[ys->rank - 1].value;
        int32_t v;
        tc_status st = tc__graph_add_initializer(g, g->values[bias_v].name, &flat, &v, ctx->err);
        int idx = 0;
        if (st == TC_STATUS_OK) st = tc__graph_node_add_input(g, n, v, &idx, ctx->err);
        if (st) return st;
        g->nodes[n].epi.bias_input = (int8_t)idx;
        st = tc__pat_absorb(g, n, 0, a, ctx->err);
        if (st) return st;
        ctx->changes++;
    }
    return TC_STATUS_OK;
}
