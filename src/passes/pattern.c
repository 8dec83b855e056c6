/* pattern.c - matching and rewriting helpers shared by the optimisation passes (see pattern.h). */
#include "passes/pattern.h"

#include <math.h>
#include <string.h>

bool tc__pat_is(const tc__node *node, const char *op) {
    if (node->removed) return false;
    if (node->domain[0] != '\0' && strcmp(node->domain, "ai.onnx") != 0) return false;
    return strcmp(node->op_type, op) == 0;
}

int32_t tc__pat_producer(const tc__graph *g, int32_t v, const char *op) {
    if (v < 0 || v >= g->n_values) return -1;
    int32_t p = g->values[v].producer;
    if (p < 0 || p >= g->n_nodes || g->nodes[p].removed) return -1;
    if (op != NULL && !tc__pat_is(&g->nodes[p], op)) return -1;
    return p;
}

int32_t tc__pat_sole_consumer(const tc__graph *g, int32_t v) {
    if (v < 0 || g->values[v].is_output) return -1;
    for (int k = 0; k < g->n_outputs; k++)
        if (g->outputs[k] == v) return -1;
    int32_t found = -1;
    int count = 0;
    for (int n = 0; n < g->n_nodes; n++) {
        const tc__node *node = &g->nodes[n];
        if (node->removed) continue;
        for (int i = 0; i < node->n_in; i++)
            if (node->in[i] == v) {
                found = n;
                count++;
            }
    }
    return count == 1 ? found : -1;
}

bool tc__pat_single_use(const tc__graph *g, int32_t v) { return tc__pat_sole_consumer(g, v) >= 0; }

const tc__tensor *tc__pat_const(const tc__graph *g, int32_t v) {
    if (v < 0 || v >= g->n_values) return NULL;
    const tc__value *val = &g->values[v];
    if (val->init != NULL) return val->init;
    return val->info.value;
}

bool tc__pat_scalar_near(const tc__graph *g, int32_t v, double target, double tol, int32_t max_rank) {
    const tc__tensor *t = tc__pat_const(g, v);
    if (t == NULL || !tc__dtype_is_float(t->dtype) || tc__tensor_numel(t) != 1) return false;
    if (max_rank >= 0 && t->rank > max_rank) return false;
    double x = tc__tensor_get_f64(t, 0);
    return fabs(x - target) <= tol * fabs(target);
}

bool tc__pat_is_graph_output(const tc__graph *g, int32_t v) {
    if (v < 0) return false;
    if (g->values[v].is_output) return true;
    for (int k = 0; k < g->n_outputs; k++)
        if (g->outputs[k] == v) return true;
    return false;
}

bool tc__pat_plain(const tc__node *node) { return tc__epilogue_is_none(&node->epi) && node->n_in == node->n_op_in; }

int tc__pat_operand_of(const tc__node *node, int32_t v) {
    if (node->n_op_in != 2 || !tc__pat_plain(node)) return -1;
    if (node->in[0] == v) return 0;
    if (node->in[1] == v) return 1;
    return -1;
}

int32_t tc__pat_with_scalar(const tc__graph *g, int32_t n, const char *op, double target, double tol,
                            bool const_second_only, int32_t max_rank) {
    if (n < 0) return -1;
    const tc__node *node = &g->nodes[n];
    if (!tc__pat_is(node, op) || node->n_op_in != 2 || !tc__pat_plain(node)) return -1;
    if (tc__pat_scalar_near(g, node->in[1], target, tol, max_rank)) return node->in[0];
    if (!const_second_only && tc__pat_scalar_near(g, node->in[0], target, tol, max_rank)) return node->in[1];
    return -1;
}

bool tc__pat_same_shape(const tc__shape *a, const tc__shape *b) {
    if (a->rank < 0 || a->rank != b->rank) return false;
    for (int32_t i = 0; i < a->rank; i++)
        if (!tc__dim_same(a->dims[i], b->dims[i])) return false;
    return true;
}

bool tc__pat_is_float(const tc__graph *g, int32_t v) { return v >= 0 && tc__dtype_is_float(g->values[v].info.dtype); }

void tc__pat_set_output(tc__graph *g, int32_t n, int o, int32_t v) {
    tc__node *node = &g->nodes[n];
    int32_t old = node->out[o];
    if (old >= 0 && g->values[old].producer == n) g->values[old].producer = -1;
    node->out[o] = v;
    if (v >= 0) g->values[v].producer = n;
}

tc_status tc__pat_absorb(tc__graph *g, int32_t p, int o, int32_t c, tc__err *err) {
    int32_t v = g->nodes[c].out[0];
    g->nodes[c].removed = true;
    tc__pat_set_output(g, p, o, v);
    return tc__graph_node_note_fused(g, p, g->nodes[c].op_type, err);
}

tc_status tc__pat_set_attr(tc__graph *g, int32_t n, const tc__attr *a, tc__err *err) {
    tc__node *node = &g->nodes[n];
    int count = node->attrs.n;
    tc__attr *items = tc__arena_alloc(&g->arena, sizeof(tc__attr) * (size_t)(count + 1), 8);
    char *name = tc__arena_strdup(&g->arena, a->name);
    if (items == NULL || name == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    int k = 0;
    for (int i = 0; i < count; i++)
        if (strcmp(node->attrs.items[i].name, a->name) != 0) items[k++] = node->attrs.items[i];
    items[k] = *a;
    items[k].name = name;
    /* the graph owns its attributes' data: copy arrays and strings into its arena */
    if (a->kind == TC__ATTR_INTS && a->n > 0) {
        int64_t *v = tc__arena_alloc(&g->arena, sizeof *v * a->n, 8);
        if (v == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        memcpy(v, a->ints, sizeof *v * a->n);
        items[k].ints = v;
    } else if (a->kind == TC__ATTR_FLOATS && a->n > 0) {
        float *v = tc__arena_alloc(&g->arena, sizeof *v * a->n, 8);
        if (v == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        memcpy(v, a->floats, sizeof *v * a->n);
        items[k].floats = v;
    } else if (a->kind == TC__ATTR_STRING && a->s != NULL) {
        char *v = tc__arena_strdup(&g->arena, a->s);
        if (v == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        items[k].s = v;
    }
    node->attrs.items = items;
    node->attrs.n = k + 1;
    return TC_STATUS_OK;
}
