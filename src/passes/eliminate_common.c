/*
 * eliminate_common.c - common subexpression elimination: a node that computes what an earlier node computes (same
 * op, domain, attributes and inputs, where a constant input may also be another constant of the same type, shape
 * and bytes) goes, and its readers read the earlier node's outputs. Exporters repeat work per layer: BERT-base's
 * builds its attention mask in each of its 12 layers (a Where on the shared mask and two per-layer constants of
 * equal values); one remains. Random ops and nodes with a fused epilogue are left alone, and so is a node whose
 * output is a graph output (its name is kept).
 */
#include <string.h>

#include "passes/passes.h"
#include "passes/pattern.h"

static bool tensors_equal(const tc__tensor *a, const tc__tensor *b) {
    if (a == b) return true;
    if (a == NULL || b == NULL || a->dtype != b->dtype || a->rank != b->rank || a->nbytes != b->nbytes) return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return a->nbytes == 0 || (a->data != NULL && b->data != NULL && memcmp(a->data, b->data, a->nbytes) == 0);
}

static bool attr_equal(const tc__attr *a, const tc__attr *b) {
    if (a->kind != b->kind || strcmp(a->name, b->name) != 0) return false;
    switch (a->kind) {
    case TC__ATTR_FLOAT: return memcmp(&a->f, &b->f, sizeof a->f) == 0; /* bits: NaN == NaN, 0 != -0 */
    case TC__ATTR_INT: return a->i == b->i;
    case TC__ATTR_STRING: return strcmp(a->s, b->s) == 0;
    case TC__ATTR_TENSOR: return tensors_equal(a->t, b->t);
    case TC__ATTR_FLOATS: return a->n == b->n && (a->n == 0 || memcmp(a->floats, b->floats, a->n * sizeof *a->floats) == 0);
    case TC__ATTR_INTS: return a->n == b->n && (a->n == 0 || memcmp(a->ints, b->ints, a->n * sizeof *a->ints) == 0);
    case TC__ATTR_STRINGS:
        if (a->n != b->n) return false;
        for (size_t i = 0; i < a->n; i++)
            if (strcmp(a->strings[i], b->strings[i]) != 0) return false;
        return true;
    case TC__ATTR_GRAPH: return false;
    }
    return false;
}

/* The same attributes in any order (names are unique within a node). */
static bool attrs_equal(const tc__attrs *a, const tc__attrs *b) {
    if (a->n != b->n) return false;
    for (int i = 0; i < a->n; i++) {
        const tc__attr *o = tc__attr_find(b, a->items[i].name);
        if (o == NULL || !attr_equal(&a->items[i], o)) return false;
    }
    return true;
}

/* Values va and vb hold the same data: the same value (or both absent), or equal constants. */
static bool same_input(const tc__graph *g, int32_t va, int32_t vb) {
    if (va == vb) return true;
    if (va < 0 || vb < 0) return false;
    const tc__tensor *a = tc__pat_const(g, va), *b = tc__pat_const(g, vb);
    return a != NULL && b != NULL && tensors_equal(a, b);
}

/* Ops whose outputs differ from call to call. */
static bool random_op(const tc__node *n) {
    static const char *const kRandom[] = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                                          "Multinomial",  "Bernoulli",     "Dropout"};
    for (size_t i = 0; i < sizeof kRandom / sizeof kRandom[0]; i++)
        if (strcmp(n->op_type, kRandom[i]) == 0) return true;
    return false;
}

/* Node b may go for a (earlier): the same computation, and every output of b that exists, a has. */
static bool same_node(const tc__graph *g, const tc__node *a, const tc__node *b) {
    if (a->removed || strcmp(a->op_type, b->op_type) != 0 || strcmp(a->domain, b->domain) != 0) return false;
    if (a->n_in != b->n_in || a->n_out != b->n_out || !tc__pat_plain(a)) return false;
    for (int i = 0; i < a->n_in; i++)
        if (!same_input(g, a->in[i], b->in[i])) return false;
    for (int o = 0; o < a->n_out; o++)
        if (b->out[o] >= 0 && a->out[o] < 0) return false;
    return attrs_equal(&a->attrs, &b->attrs);
}

tc_status tc__pass_eliminate_common(tc__pass_ctx *ctx) {
    tc__graph *g = ctx->g;
    for (int32_t m = 0; m < g->n_nodes; m++) { /* nodes are in topological order: an earlier twin is ready first */
        tc__node *b = &g->nodes[m];
        if (b->removed || !tc__pat_plain(b) || random_op(b)) continue;
        bool kept_name = false;
        for (int o = 0; o < b->n_out; o++) kept_name = kept_name || tc__pat_is_graph_output(g, b->out[o]);
        if (kept_name) continue;
        for (int32_t n = 0; n < m; n++) {
            const tc__node *a = &g->nodes[n];
            if (!same_node(g, a, b)) continue;
            for (int o = 0; o < b->n_out; o++)
                if (b->out[o] >= 0) tc__graph_replace_uses(g, b->out[o], a->out[o]);
            b->removed = true;
            ctx->changes++;
            break;
        }
    }
    return TC_STATUS_OK;
}
