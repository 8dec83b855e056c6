/* toposort.c - orders a graph's nodes topologically (Kahn's algorithm, stable
 * with respect to the model's order) and records each value's producer. */
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

tc_status tc__graph_toposort(tc__graph *g, tc__err *err) {
    tc_status st = TC_STATUS_OK;
    int nn = g->n_nodes, nv = g->n_values;
    if (nn < 0 || nv < 0) return tc__fail(err, TC_STATUS_INTERNAL, "negative node or value count");
    size_t nn_sz = nn > 0 ? (size_t)nn : 1, nv_sz = nv > 0 ? (size_t)nv : 1;
    int32_t *producer = malloc(sizeof(int32_t) * nv_sz);
    int32_t *pending = calloc(nn_sz, sizeof(int32_t));   /* unmet inputs per node */
    int32_t *order = malloc(sizeof(int32_t) * nn_sz);
    int32_t *cons_start = calloc((size_t)nv + 1, sizeof(int32_t));       /* CSR of consumers per value */
    int32_t *cons = NULL;
    bool *done = calloc(nn_sz, sizeof(bool));
    tc__node *sorted = NULL;
    if (!producer || !pending || !order || !cons_start || !done) {
        st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory sorting the graph");
        goto out;
    }
    for (int v = 0; v < nv; v++) producer[v] = -1;
    for (int n = 0; n < nn; n++) {
        const tc__node *node = &g->nodes[n];
        for (int o = 0; o < node->n_out; o++) {
            int32_t v = node->out[o];
            if (v < 0) continue;
            if (g->values[v].init != NULL || g->values[v].is_input) {
                st = tc__fail(err, TC_STATUS_INVALID_GRAPH, "node '%s' (%s) writes '%s', which is a graph input or initializer",
                              node->name, node->op_type, g->values[v].name);
                goto out;
            }
            if (producer[v] >= 0) {
                st = tc__fail(err, TC_STATUS_INVALID_GRAPH, "tensor '%s' is produced by both node '%s' and node '%s'",
                              g->values[v].name, g->nodes[producer[v]].name, node->name);
                goto out;
            }
            producer[v] = n;
        }
    }
    /* Count consumers, then fill the CSR. */
    int64_t total = 0;
    for (int n = 0; n < nn; n++) {
        const tc__node *node = &g->nodes[n];
        for (int i = 0; i < node->n_in; i++) {
            int32_t v = node->in[i];
            if (v < 0) continue;
            const tc__value *val = &g->values[v];
            if (producer[v] < 0 && val->init == NULL && !val->is_input) {
                st = tc__fail(err, TC_STATUS_INVALID_GRAPH,
                              "node '%s' (%s) input %d '%s' is not a graph input, initializer or node output",
                              node->name, node->op_type, i, val->name);
                goto out;
            }
            if (producer[v] >= 0) {
                cons_start[v + 1]++;
                pending[n]++;
                total++;
            }
        }
    }
    for (int v = 0; v < nv; v++) cons_start[v + 1] += cons_start[v];
    cons = malloc(sizeof(int32_t) * (size_t)(total ? total : 1));
    int32_t *fill = calloc(nv_sz, sizeof(int32_t));
    if (cons == NULL || fill == NULL) {
        free(fill);
        st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory sorting the graph");
        goto out;
    }
    for (int n = 0; n < nn; n++) {
        const tc__node *node = &g->nodes[n];
        for (int i = 0; i < node->n_in; i++) {
            int32_t v = node->in[i];
            if (v >= 0 && producer[v] >= 0) cons[cons_start[v] + fill[v]++] = n;
        }
    }
    free(fill);
    /* Stable Kahn: repeatedly take the lowest-index ready node. A simple scan pointer keeps
     * this near-linear for graphs that are already ordered. */
    int count = 0, scan = 0;
    while (count < nn) {
        int pick = -1;
        for (int n = scan; n < nn; n++)
            if (!done[n] && pending[n] == 0) {
                pick = n;
                break;
            }
        if (pick < 0)
            for (int n = 0; n < scan; n++)
                if (!done[n] && pending[n] == 0) {
                    pick = n;
                    break;
                }
        if (pick < 0) {
            for (int n = 0; n < nn; n++)
                if (!done[n]) {
                    st = tc__fail(err, TC_STATUS_INVALID_GRAPH, "the graph has a cycle through node '%s' (%s)",
                                  g->nodes[n].name, g->nodes[n].op_type);
                    break;
                }
            goto out;
        }
        done[pick] = true;
        order[count++] = pick;
        scan = pick + 1 < nn ? pick + 1 : 0;
        const tc__node *node = &g->nodes[pick];
        for (int o = 0; o < node->n_out; o++) {
            int32_t v = node->out[o];
            if (v < 0) continue;
            for (int32_t k = cons_start[v]; k < cons_start[v + 1]; k++) {
                pending[cons[k]]--;
                if (cons[k] < scan) scan = cons[k];
            }
        }
    }
    sorted = malloc(sizeof(tc__node) * nn_sz);
    if (sorted == NULL) {
        st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory sorting the graph");
        goto out;
    }
    for (int k = 0; k < nn; k++) sorted[k] = g->nodes[order[k]];
    if (nn > 0) memcpy(g->nodes, sorted, sizeof(tc__node) * (size_t)nn);
    for (int v = 0; v < nv; v++) g->values[v].producer = -1;
    for (int n = 0; n < nn; n++)
        for (int o = 0; o < g->nodes[n].n_out; o++)
            if (g->nodes[n].out[o] >= 0) g->values[g->nodes[n].out[o]].producer = n;
out:
    free(producer);
    free(pending);
    free(order);
    free(cons_start);
    free(cons);
    free(done);
    free(sorted);
    return st;
}
