/* verify.c - structural checks of a graph before it is run or optimised. */
#include <string.h>

#include "graph/graph.h"

tc_status tc__graph_verify(tc__graph *g, bool allow_unsupported, tc__err *err) {
    for (int n = 0; n < g->n_nodes && g->opset <= 0; n++)
        if (g->nodes[n].domain[0] == '\0' || strcmp(g->nodes[n].domain, "ai.onnx") == 0)
            return tc__fail(err, TC_STATUS_INVALID_GRAPH, "node '%s' uses the default ONNX domain, which the model does "
                            "not import", g->nodes[n].name);
    if (g->n_outputs == 0) return tc__fail(err, TC_STATUS_INVALID_GRAPH, "the graph has no outputs");
    for (int n = 0; n < g->n_nodes; n++) {
        const tc__node *node = &g->nodes[n];
        if (node->schema == NULL && !allow_unsupported) {
            if (node->domain[0] != '\0' && strcmp(node->domain, "ai.onnx") != 0)
                return tc__fail(err, TC_STATUS_UNSUPPORTED,
                                "node '%s': op %s of domain '%s' is not supported (default-domain opset %lld)",
                                node->name, node->op_type, node->domain, (long long)g->opset);
            return tc__fail(err, TC_STATUS_UNSUPPORTED, "node '%s': op %s (opset %lld) is not supported", node->name,
                            node->op_type, (long long)g->opset);
        }
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
