/* clone.c - deep copy of a graph into a new arena (strings, attributes, initializer data),
 * so that a build can rewrite its own copy while the user's model stays untouched. */
#include <string.h>

#include "graph/graph.h"

static void *dup_bytes(tc__arena *a, const void *src, size_t n, size_t align) {
    void *p = tc__arena_alloc(a, n ? n : 1, align);
    if (p != NULL && n) memcpy(p, src, n);
    return p;
}

static tc__tensor *dup_tensor(tc__arena *a, const tc__tensor *t) {
    tc__tensor *c = dup_bytes(a, t, sizeof *t, 8);
    if (c == NULL) return NULL;
    c->data = dup_bytes(a, t->data, t->nbytes, 64);
    return c->data ? c : NULL;
}

static int dup_attrs(tc__arena *a, const tc__attrs *src, tc__attrs *dst) {
    dst->n = src->n;
    dst->items = NULL;
    if (src->n == 0) return 0;
    tc__attr *items = tc__arena_alloc(a, sizeof(tc__attr) * (size_t)src->n, 8);
    if (items == NULL) return -1;
    for (int i = 0; i < src->n; i++) {
        const tc__attr *s = &src->items[i];
        tc__attr *d = &items[i];
        *d = *s;
        d->name = tc__arena_strdup(a, s->name);
        if (d->name == NULL) return -1;
        if (s->kind == TC__ATTR_GRAPH) { /* a serialized subgraph: s holds n bytes */
            if (s->s != NULL && (d->s = dup_bytes(a, s->s, s->n, 16)) == NULL) return -1;
        } else if (s->s != NULL && (d->s = tc__arena_strdup(a, s->s)) == NULL) {
            return -1;
        }
        if (s->floats != NULL && (d->floats = dup_bytes(a, s->floats, sizeof(float) * s->n, 8)) == NULL) return -1;
        if (s->ints != NULL && (d->ints = dup_bytes(a, s->ints, sizeof(int64_t) * s->n, 8)) == NULL) return -1;
        if (s->strings != NULL) {
            const char **strs = tc__arena_alloc(a, sizeof(char *) * (s->n ? s->n : 1), 8);
            if (strs == NULL) return -1;
            for (size_t k = 0; k < s->n; k++)
                if ((strs[k] = tc__arena_strdup(a, s->strings[k])) == NULL) return -1;
            d->strings = strs;
        }
        if (s->t != NULL && (d->t = dup_tensor(a, s->t)) == NULL) return -1;
    }
    dst->items = items;
    return 0;
}

tc_status tc__graph_clone(const tc__graph *src, tc__graph **out, tc__err *err) {
    *out = NULL;
    tc__graph *g = tc__graph_create();
    if (g == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory cloning the graph");
    tc__arena *a = &g->arena;
    tc_status st = TC_STATUS_OK;
    g->opset = src->opset;
    g->ir_version = src->ir_version;
    g->name = tc__arena_strdup(a, src->name);
    g->producer_name = tc__arena_strdup(a, src->producer_name);
    for (int s = 0; s < src->n_symbols; s++)
        if (tc__graph_symbol(g, src->symbols[s]) != s) goto oom;
    for (int v = 0; v < src->n_values; v++) {
        int32_t idx;
        st = tc__graph_add_value(g, src->values[v].name, &idx, err);
        if (st) goto fail;
        tc__value *d = &g->values[idx];
        const char *name = d->name;
        *d = src->values[v];
        d->name = name;
        d->info.value = NULL;
        if (src->values[v].init != NULL) {
            tc__tensor *t = dup_tensor(a, src->values[v].init);
            if (t == NULL) goto oom;
            d->init = t;
            d->info.value = t;
        }
    }
    /* Values computed during inference (not initializers) are re-derived by the next inference. */
    g->inputs = dup_bytes(a, src->inputs, sizeof(int32_t) * (size_t)src->n_inputs, 4);
    g->outputs = dup_bytes(a, src->outputs, sizeof(int32_t) * (size_t)src->n_outputs, 4);
    if (g->inputs == NULL || g->outputs == NULL) goto oom;
    g->n_inputs = src->n_inputs;
    g->n_outputs = src->n_outputs;
    for (int n = 0; n < src->n_nodes; n++) {
        const tc__node *s = &src->nodes[n];
        int32_t idx;
        st = tc__graph_add_node(g, s->name, s->op_type, s->domain, s->n_in, s->n_out, &idx, err);
        if (st) goto fail;
        tc__node *d = &g->nodes[idx];
        memcpy(d->in, s->in, sizeof(int32_t) * (size_t)s->n_in);
        memcpy(d->out, s->out, sizeof(int32_t) * (size_t)s->n_out);
        d->n_op_in = s->n_op_in;
        d->epi = s->epi;
        d->removed = s->removed;
        d->guard = s->guard;
        d->fused = tc__arena_strdup(a, s->fused);
        if (d->fused == NULL || dup_attrs(a, &s->attrs, &d->attrs)) goto oom;
    }
    tc__graph_compact(g);
    *out = g;
    return TC_STATUS_OK;
oom:
    st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory cloning the graph");
fail:
    tc__graph_destroy(g);
    return st;
}
