/* rewrite.c - small graph-editing helpers used by optimisation passes. */
#include <stdio.h>
#include <string.h>

#include "graph/graph.h"

int tc__graph_use_count(const tc__graph *g, int32_t v) {
    int count = 0;
    for (int n = 0; n < g->n_nodes; n++) {
        const tc__node *node = &g->nodes[n];
        if (node->removed) continue;
        for (int i = 0; i < node->n_in; i++) count += node->in[i] == v;
    }
    for (int k = 0; k < g->n_outputs; k++) count += g->outputs[k] == v;
    return count;
}

void tc__graph_replace_uses(tc__graph *g, int32_t old_v, int32_t new_v) {
    for (int n = 0; n < g->n_nodes; n++) {
        tc__node *node = &g->nodes[n];
        if (node->removed) continue;
        for (int i = 0; i < node->n_in; i++)
            if (node->in[i] == old_v) node->in[i] = new_v;
    }
}

void tc__graph_compact(tc__graph *g) {
    int k = 0;
    for (int n = 0; n < g->n_nodes; n++)
        if (!g->nodes[n].removed) g->nodes[k++] = g->nodes[n];
    g->n_nodes = k;
    for (int v = 0; v < g->n_values; v++) g->values[v].producer = -1;
    for (int n = 0; n < g->n_nodes; n++)
        for (int o = 0; o < g->nodes[n].n_out; o++)
            if (g->nodes[n].out[o] >= 0) g->values[g->nodes[n].out[o]].producer = n;
}

/* The initializer behind tc__graph_add_initializer and tc__graph_add_packed: t's dtype and dims, nbytes bytes copied
 * from t->data (or zeroed when copy is false). */
static tc_status add_init(tc__graph *g, const char *base_name, const tc__tensor *t, size_t nbytes, bool copy_data,
                          int32_t *out, tc__err *err) {
    char name[256];
    snprintf(name, sizeof name, "%s", base_name);
    for (int k = 1; tc__graph_find_value(g, name) >= 0; k++) {
        snprintf(name, sizeof name, "%.200s_%d", base_name, k);
        if (k > 1000000) return tc__fail(err, TC_STATUS_INTERNAL, "cannot name an initializer after '%s'", base_name);
    }
    tc__tensor *copy = tc__arena_alloc(&g->arena, sizeof *copy, 8);
    void *data = copy ? tc__arena_alloc(&g->arena, nbytes ? nbytes : 1, 64) : NULL;
    if (data == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory adding initializer '%s'", name);
    *copy = *t;
    if (nbytes && copy_data) memcpy(data, t->data, nbytes);
    else memset(data, 0, nbytes ? nbytes : 1);
    copy->data = data;
    copy->nbytes = nbytes;
    int32_t v;
    tc_status st = tc__graph_add_value(g, name, &v, err);
    if (st) return st;
    tc__value *val = &g->values[v];
    val->init = copy;
    val->info.dtype = t->dtype;
    val->info.shape.rank = t->rank;
    for (int32_t i = 0; i < t->rank; i++) val->info.shape.dims[i] = tc__dim_known(t->dims[i]);
    val->info.value = copy_data ? copy : NULL; /* packed bytes are no values of the dtype */
    *out = v;
    return TC_STATUS_OK;
}

tc_status tc__graph_add_initializer(tc__graph *g, const char *base_name, const tc__tensor *t, int32_t *out,
                                    tc__err *err) {
    return add_init(g, base_name, t, t->nbytes, true, out, err);
}

tc_status tc__graph_add_packed(tc__graph *g, const char *base_name, const tc__tensor *like, size_t nbytes, int32_t *out,
                               tc__err *err) {
    return add_init(g, base_name, like, nbytes, false, out, err);
}
