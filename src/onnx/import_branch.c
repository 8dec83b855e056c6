/*
 * import_branch.c - folds an If whose condition is known into the nodes of the branch it takes: the branch's
 * initializers and nodes join the enclosing graph under their own names (ONNX keeps names unique across scopes, so
 * outer-scope references resolve to the enclosing graph's values), and an Identity gives each If output the value of
 * the branch output at its position. The subgraph comes from the attribute, kept serialized by import_attr.c.
 */
#include <stdio.h>
#include <string.h>

#include "onnx/import_internal.h"
#include "onnx/onnx_import.h"

/* Fails when name (defined inside the branch) already names a value of g other than an output of If node n (the
 * ONNX checker lets a branch node name its result after the If's output; n < 0: no exception, as for initializers):
 * the branch would redefine it. */
static tc_status check_new(const tc__graph *g, int32_t n, const char *name, const char *if_name, tc__err *err) {
    int32_t v = name[0] == '\0' ? -1 : tc__graph_find_value(g, name);
    if (v < 0) return TC_STATUS_OK;
    for (int k = 0; n >= 0 && k < g->nodes[n].n_out; k++)
        if (g->nodes[n].out[k] == v) return TC_STATUS_OK;
    return tc__fail(err, TC_STATUS_INVALID_GRAPH,
                    "If '%s': its branch defines '%s', a name the enclosing graph already has (ONNX wants names "
                    "unique across subgraphs)", if_name, name);
}

/* Imports gp (a branch of If node n) into g; src[k] is the value of its output k (n_out of them). */
static tc_status import_graph(tc__graph *g, int32_t n, const Onnx__GraphProto *gp, const char *if_name, int32_t *src,
                              tc__err *err) {
    const int n_out = g->nodes[n].n_out;
    if (gp->n_input != 0)
        return tc__fail(err, TC_STATUS_INVALID_GRAPH, "If '%s': its branch declares %zu inputs (a branch takes none)",
                        if_name, gp->n_input);
    if (gp->n_output != (size_t)n_out)
        return tc__fail(err, TC_STATUS_INVALID_GRAPH, "If '%s' has %d outputs but its branch %zu", if_name, n_out,
                        gp->n_output);
    tc_status st = TC_STATUS_OK;
    for (size_t i = 0; i < gp->n_initializer && st == TC_STATUS_OK; i++)
        st = check_new(g, -1, tc__onnx_str(gp->initializer[i]->name), if_name, err);
    for (size_t i = 0; i < gp->n_node && st == TC_STATUS_OK; i++)
        for (size_t k = 0; k < gp->node[i]->n_output && st == TC_STATUS_OK; k++)
            st = check_new(g, n, tc__onnx_str(gp->node[i]->output[k]), if_name, err);
    if (st != TC_STATUS_OK) return st;
    /* External data would be relative to the model's folder, which is not known here. */
    tc__onnx_tensor_ctx ctx = {.arena = &g->arena, .adopt = true, .external_ok = false, .base_dir = NULL};
    st = tc__onnx_import_initializers(g, &ctx, gp, err);
    for (size_t i = 0; i < gp->n_node && st == TC_STATUS_OK; i++) st = tc__onnx_import_node(g, &ctx, gp->node[i], i, err);
    for (int k = 0; k < n_out && st == TC_STATUS_OK; k++) {
        const char *name = tc__onnx_str(gp->output[k]->name);
        if (name[0] == '\0')
            return tc__fail(err, TC_STATUS_INVALID_GRAPH, "If '%s': branch output #%d has no name", if_name, k);
        st = tc__graph_value_by_name(g, name, &src[k], err);
    }
    return st;
}

/* Imports gp (a branch of If node n) into g and wires its outputs to the If's outputs. */
static tc_status inline_graph(tc__graph *g, int32_t n, const Onnx__GraphProto *gp, const char *if_name, tc__err *err) {
    const int n_out = g->nodes[n].n_out;
    int32_t src[TC__ONNX_MAX_IF_OUTPUTS];
    if (n_out > TC__ONNX_MAX_IF_OUTPUTS)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "If '%s' has %d outputs, more than %d", if_name, n_out,
                        TC__ONNX_MAX_IF_OUTPUTS);
    tc_status st = import_graph(g, n, gp, if_name, src, err);
    for (int k = 0; k < n_out && st == TC_STATUS_OK; k++) {
        int32_t y = g->nodes[n].out[k], id;
        if (y < 0 || src[k] == y) continue; /* absent, or the branch computes the If's output under its name */
        char id_name[300];
        snprintf(id_name, sizeof id_name, "%s/output%d", if_name, k);
        if ((st = tc__graph_add_node(g, id_name, "Identity", "", 1, 1, &id, err)) != TC_STATUS_OK) break;
        g->nodes[id].in[0] = src[k];
        g->nodes[id].out[0] = y;
    }
    return st;
}

/* Unpacks If node n's branch attribute `which` and passes it to fn (inline_graph, or import_graph with src). */
static tc_status with_branch(tc__graph *g, int32_t n, bool cond, int32_t *src, tc__err *err) {
    char if_name[256];
    snprintf(if_name, sizeof if_name, "%s", g->nodes[n].name);
    const char *which = cond ? "then_branch" : "else_branch";
    const tc__attr *a = tc__attr_find(&g->nodes[n].attrs, which);
    if (a == NULL || a->kind != TC__ATTR_GRAPH || a->s == NULL)
        return tc__fail(err, TC_STATUS_INVALID_GRAPH, "If '%s' has no graph attribute '%s'", if_name, which);
    tc__onnx_alloc alloc;
    tc__onnx_alloc_init(&alloc, &g->arena);
    Onnx__GraphProto *gp = onnx__graph_proto__unpack(&alloc.pc, a->n, (const uint8_t *)a->s);
    if (gp == NULL)
        return tc__fail(err, alloc.failed ? TC_STATUS_OUT_OF_MEMORY : TC_STATUS_CORRUPT_FILE,
                        "If '%s': cannot read its %s", if_name, which);
    tc_status st = src ? import_graph(g, n, gp, if_name, src, err) : inline_graph(g, n, gp, if_name, err);
    onnx__graph_proto__free_unpacked(gp, &alloc.pc);
    return st;
}

tc_status tc__onnx_import_branch(tc__graph *g, int32_t n, bool cond, int32_t *src, tc__err *err) {
    if (g->nodes[n].n_out > TC__ONNX_MAX_IF_OUTPUTS)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "If '%s' has %d outputs, more than %d", g->nodes[n].name,
                        g->nodes[n].n_out, TC__ONNX_MAX_IF_OUTPUTS);
    return with_branch(g, n, cond, src, err);
}

tc_status tc__onnx_inline_if(tc__graph *g, int32_t n, bool cond, tc__err *err) {
    tc_status st = with_branch(g, n, cond, NULL, err);
    if (st == TC_STATUS_OK) g->nodes[n].removed = true;
    return st;
}
