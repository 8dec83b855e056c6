/*
 * eliminate_noops.c - removes nodes that copy their input unchanged: Identity, inference
 * Dropout, Reshape/Flatten to the same static shape, Cast to the same type and Transpose
 * with the identity permutation. Consumers are rewired to the input.
 */
#include "passes/passes.h"
#include "passes/pattern.h"

/* Dropout is a copy unless training_mode is (or may be) true with a non-zero ratio, or its mask is read. */
static bool dropout_is_noop(const tc__graph *g, const tc__node *node) {
    for (int o = 1; o < node->n_out; o++)
        if (node->out[o] >= 0 && tc__graph_use_count(g, node->out[o]) > 0) return false;
    if (g->opset < 12 || node->n_in < 3 || node->in[2] < 0) return true;
    const tc__tensor *mode = tc__pat_const(g, node->in[2]);
    if (mode == NULL || tc__tensor_numel(mode) != 1) return false;
    if (tc__tensor_get_i64(mode, 0) == 0) return true;
    const tc__tensor *ratio = node->in[1] >= 0 ? tc__pat_const(g, node->in[1]) : NULL;
    return ratio != NULL && tc__tensor_numel(ratio) == 1 && tc__tensor_get_f64(ratio, 0) == 0.0;
}

static bool transpose_is_noop(const tc__node *node, const tc__vinfo *x) {
    const int64_t *perm = NULL;
    size_t n = tc__attr_ints(&node->attrs, "perm", &perm);
    if (perm == NULL) return x->shape.rank == 0 || x->shape.rank == 1; /* default: reverse the dims */
    if (x->shape.rank >= 0 && (int64_t)n != x->shape.rank) return false;
    for (size_t i = 0; i < n; i++)
        if (perm[i] != (int64_t)i) return false;
    return true;
}

/* True when node passes its input 0 through unchanged (value and type). */
static bool is_noop(const tc__graph *g, const tc__node *node) {
    if (node->removed || node->n_in < 1 || node->in[0] < 0 || node->n_out < 1 || node->out[0] < 0) return false;
    if (!tc__pat_plain(node)) return false;
    const tc__vinfo *x = &g->values[node->in[0]].info, *y = &g->values[node->out[0]].info;
    if (x->dtype == TC_DTYPE_UNDEFINED || x->dtype != y->dtype) return false;
    if (tc__pat_is(node, "Identity")) return true;
    if (tc__pat_is(node, "Dropout")) return dropout_is_noop(g, node);
    if (tc__pat_is(node, "Reshape") || tc__pat_is(node, "Flatten")) return tc__pat_same_shape(&x->shape, &y->shape);
    if (tc__pat_is(node, "Cast")) return tc__attr_int(&node->attrs, "to", -1) == (int64_t)x->dtype;
    if (tc__pat_is(node, "Transpose")) return transpose_is_noop(node, x);
    return false;
}

tc_status tc__pass_eliminate_noops(tc__pass_ctx *ctx) {
    tc__graph *g = ctx->g;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        tc__node *node = &g->nodes[n];
        if (!is_noop(g, node)) continue;
        int32_t x = node->in[0], y = node->out[0];
        if (!tc__pat_is_graph_output(g, y)) {
            tc__graph_replace_uses(g, y, x);
            node->removed = true;
            ctx->changes++;
            continue;
        }
        /* y keeps its name: x's producer writes y instead, when nothing else needs x. */
        int32_t p = tc__pat_producer(g, x, NULL);
        const tc__value *xv = &g->values[x];
        if (p < 0 || xv->is_input || xv->init != NULL || tc__pat_is_graph_output(g, x) ||
            tc__graph_use_count(g, x) != 1)
            continue;
        int slot = -1;
        for (int o = 0; o < g->nodes[p].n_out; o++)
            if (g->nodes[p].out[o] == x) slot = o;
        if (slot < 0) continue;
        node->removed = true;
        tc__pat_set_output(g, p, slot, y);
        ctx->changes++;
    }
    return TC_STATUS_OK;
}
