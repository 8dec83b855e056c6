/* verify.c - structural checks of a graph before it is run or optimised. */
#include <stdio.h>
#include <string.h>

#include "graph/graph.h"

/* Fails naming every unsupported node of g at once, grouped by op: "3 nodes of 2 ops are not supported: Shrink x2
 * ('m1', 'm2'), Hardmax x1 ('h1')" (at most 12 ops and 3 node names each), so that a user sees the whole list. */
tc_status tc__graph_fail_unsupported(const tc__graph *g, tc__err *err) {
    enum { MAX_OPS = 12, MAX_NAMES = 3 };
    struct { const char *op, *domain; int count; const char *names[MAX_NAMES]; } ops[MAX_OPS];
    int n_ops = 0, total = 0, more_ops = 0;
    for (int n = 0; n < g->n_nodes; n++) {
        const tc__node *node = &g->nodes[n];
        if (node->schema != NULL) continue;
        total++;
        int k = 0;
        while (k < n_ops && !(strcmp(ops[k].op, node->op_type) == 0 && strcmp(ops[k].domain, node->domain) == 0)) k++;
        if (k == n_ops) {
            if (n_ops == MAX_OPS) {
                more_ops++;
                continue;
            }
            ops[n_ops].op = node->op_type, ops[n_ops].domain = node->domain, ops[n_ops].count = 0;
            n_ops++;
        }
        if (ops[k].count < MAX_NAMES) ops[k].names[ops[k].count] = node->name;
        ops[k].count++;
    }
    char buf[sizeof err->msg];
    size_t len = (size_t)snprintf(buf, sizeof buf, "%d node%s of %d op%s %s not supported (opset %lld): ", total,
                                  total == 1 ? "" : "s", n_ops + more_ops, n_ops + more_ops == 1 ? "" : "s",
                                  total == 1 ? "is" : "are", (long long)g->opset);
    for (int k = 0; k < n_ops && len < sizeof buf; k++) {
        const bool other = ops[k].domain[0] != '\0' && strcmp(ops[k].domain, "ai.onnx") != 0;
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s%s%s x%d (", k ? ", " : "", other ? ops[k].domain : "",
                                other ? "." : "", ops[k].op, ops[k].count);
        for (int i = 0; i < ops[k].count && i < MAX_NAMES && len < sizeof buf; i++)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s'%s'", i ? ", " : "", ops[k].names[i]);
        if (len < sizeof buf) len += (size_t)snprintf(buf + len, sizeof buf - len, "%s)", ops[k].count > MAX_NAMES ? ", ..." : "");
    }
    if (more_ops && len < sizeof buf)
        len += (size_t)snprintf(buf + len, sizeof buf - len, " and %d more op%s", more_ops, more_ops == 1 ? "" : "s");
    for (int n = 0, said = 0; n < g->n_nodes && said < MAX_NAMES && len < sizeof buf; n++) {
        const tc__attr *why = g->nodes[n].schema == NULL ? tc__attr_find(&g->nodes[n].attrs, TC__ATTR_WHY) : NULL;
        if (why == NULL || why->kind != TC__ATTR_STRING || why->s == NULL) continue;
        len += (size_t)snprintf(buf + len, sizeof buf - len, "; %s", why->s);
        said++;
    }
    return tc__fail(err, TC_STATUS_UNSUPPORTED, "%s", buf);
}

tc_status tc__graph_verify(tc__graph *g, bool allow_unsupported, tc__err *err) {
    for (int n = 0; n < g->n_nodes && g->opset <= 0; n++)
        if (g->nodes[n].domain[0] == '\0' || strcmp(g->nodes[n].domain, "ai.onnx") == 0)
            return tc__fail(err, TC_STATUS_INVALID_GRAPH, "node '%s' uses the default ONNX domain, which the model does "
                            "not import", g->nodes[n].name);
    if (g->n_outputs == 0) return tc__fail(err, TC_STATUS_INVALID_GRAPH, "the graph has no outputs");
    for (int n = 0; n < g->n_nodes; n++) {
        const tc__node *node = &g->nodes[n];
        if (node->schema == NULL && !allow_unsupported) return tc__graph_fail_unsupported(g, err);
        for (int a = 0; a < node->attrs.n; a++)
            if (node->attrs.items[a].kind == TC__ATTR_GRAPH && !allow_unsupported)
                return tc__fail(err, TC_STATUS_UNSUPPORTED, "node '%s' (%s): subgraph attribute '%s' is not supported",
                                node->name, node->op_type, node->attrs.items[a].name);
        for (int i = 0; i < node->n_in; i++) {
            int32_t v = node->in[i];
            if (v < -1 || v >= g->n_values)
                return tc__fail(err, TC_STATUS_INVALID_GRAPH, "node '%s': input %d refers to no tensor", node->name, i);
        }
    }
    for (int k = 0; k < g->n_outputs; k++) {
        const tc__value *v = &g->values[g->outputs[k]];
        if (v->producer < 0 && v->init == NULL && !v->is_input)
            return tc__fail(err, TC_STATUS_INVALID_GRAPH, "graph output '%s' is not produced by any node", v->name);
    }
    return TC_STATUS_OK;
}
