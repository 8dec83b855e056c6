/*
 * eliminate_dead.c - removes what no graph output depends on: nodes none of whose outputs is
 * needed (transitively; nodes without outputs too), unused optional outputs (set to -1 so that
 * kernels skip them) and the data of initializers nothing reads (so a plan does not store them).
 */
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"
#include "passes/pattern.h"

/* True when output o of node may be left out (-1): the optional outputs kernels skip. */
static bool optional_output(const tc__node *node, int o) {
    if (o < 1) return false;
    return tc__pat_is(node, "Dropout") || tc__pat_is(node, "BatchNormalization") ||
           tc__pat_is(node, "LayerNormalization") || tc__pat_is(node, "MaxPool");
}

tc_status tc__pass_eliminate_dead(tc__pass_ctx *ctx) {
    tc__graph *g = ctx->g;
    size_t nv = (size_t)(g->n_values ? g->n_values : 1);
    bool *live = calloc(nv, sizeof(bool));
    int32_t *uses = calloc(nv, sizeof(int32_t));
    if (live == NULL || uses == NULL) {
        free(live);
        free(uses);
        return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    for (int k = 0; k < g->n_outputs; k++) live[g->outputs[k]] = true;
    /* Backward sweeps until stable (one sweep when the nodes are in topological order). */
    bool grew = true;
    while (grew) {
        grew = false;
        for (int32_t n = g->n_nodes - 1; n >= 0; n--) {
            const tc__node *node = &g->nodes[n];
            if (node->removed) continue;
            bool needed = false;
            for (int o = 0; o < node->n_out; o++) needed |= node->out[o] >= 0 && live[node->out[o]];
            if (!needed) continue;
            for (int i = 0; i < node->n_in; i++)
                if (node->in[i] >= 0 && !live[node->in[i]]) {
                    live[node->in[i]] = true;
                    grew = true;
                }
        }
    }
    for (int32_t n = 0; n < g->n_nodes; n++) {
        tc__node *node = &g->nodes[n];
        if (node->removed) continue;
        bool needed = false;
        for (int o = 0; o < node->n_out; o++) needed |= node->out[o] >= 0 && live[node->out[o]];
        if (!needed) {
            node->removed = true;
            ctx->changes++;
            continue;
        }
        for (int i = 0; i < node->n_in; i++)
            if (node->in[i] >= 0) uses[node->in[i]]++;
        for (int o = 1; o < node->n_out; o++) {
            int32_t v = node->out[o];
            if (v >= 0 && !live[v] && optional_output(node, o)) {
                g->values[v].producer = -1;
                node->out[o] = -1;
                ctx->changes++;
            }
        }
    }
    for (int k = 0; k < g->n_outputs; k++) uses[g->outputs[k]]++;
    for (int32_t v = 0; v < g->n_values; v++) {
        tc__value *val = &g->values[v];
        if (val->init != NULL && uses[v] == 0) {
            val->init = NULL;
            val->info.value = NULL;
            ctx->changes++;
        }
    }
    free(live);
    free(uses);
    return TC_STATUS_OK;
}
