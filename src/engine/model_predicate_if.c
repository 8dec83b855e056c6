/*
 * model_predicate_if.c - at model load, an If whose condition is known only at run time becomes predicated steps:
 * the nodes of both branches join the graph, each guarded by a run flag (tc__node.guard: then_run = cond, else_run =
 * Not(cond); under an enclosing branch's flag E, both false when E is: run_flags), and the If becomes the node that copies the
 * taken branch's outputs to its own (graph/infer_control.c, backends/ref/control.c), guarded by E. The whole graph
 * then goes through the normal passes, tactic choice, memory plan and plan file; a context skips a guarded step
 * whose flag is false, and a branch whose shapes do not infer at the current input shapes fails only if taken.
 * An If nested in a branch is folded (known condition) or predicated in a later round (model_fold_if.c).
 */
#include <stdio.h>
#include <string.h>

#include "engine/model.h"
#include "onnx/onnx_import.h"

/* Makes input v the guard of node n. */
static tc_status guard_node(tc__graph *g, int32_t n, int32_t v, tc__err *err) {
    if (g->nodes[n].guard >= 0) return tc__fail(err, TC_STATUS_INTERNAL, "node '%s' is guarded twice", g->nodes[n].name);
    int index;
    tc_status st = tc__graph_node_add_input(g, n, v, &index, err);
    if (st == TC_STATUS_OK) g->nodes[n].guard = index;
    return st;
}

tc_status tc__model_guard_nodes(tc__graph *g, int32_t first, int32_t end, int32_t v, tc__err *err) {
    tc_status st = TC_STATUS_OK;
    for (int32_t n = first; n < end && st == TC_STATUS_OK; n++) st = guard_node(g, n, v, err);
    return st;
}

/* Adds node op(in[0..n_in)) -> a new value named after the If, guarded by value guard (-1: none); its index in
 * *out. */
static tc_status flag_node(tc__graph *g, const char *if_name, const char *what, const char *op, int n_in,
                           const int32_t *in, int32_t guard, int32_t *out, tc__err *err) {
    char name[300];
    snprintf(name, sizeof name, "%s/%s", if_name, what);
    int32_t n, v;
    tc_status st = tc__graph_add_value(g, name, &v, err);
    if (st == TC_STATUS_OK) st = tc__graph_add_node(g, name, op, "", n_in, 1, &n, err);
    if (st) return st;
    for (int i = 0; i < n_in; i++) g->nodes[n].in[i] = in[i];
    g->nodes[n].out[0] = v;
    *out = v;
    return guard >= 0 ? guard_node(g, n, guard, err) : TC_STATUS_OK;
}

/* The run flags of If node n (condition cond) as scalar bools: then_run = cond and else_run = Not(cond); under an
 * enclosing branch's flag E, cond is computed only when E is true (else it is stale, or its shapes do not even infer),
 * so then_run = If(E, cond, false) and else_run = If(E, Not(cond), false): predicated Ifs themselves, which read the
 * branch value only when E is true. */
static tc_status run_flags(tc__graph *g, const char *if_name, int32_t cond, int32_t outer, int32_t *run_then,
                           int32_t *run_else, int32_t *local_then, int32_t *local_else, tc__err *err) {
    const int64_t none = 0;
    const tc__tensor scalar_shape = {.dtype = TC_DTYPE_INT64, .rank = 1, .dims = {0}, .data = (void *)&none, .nbytes = 0};
    int32_t shape, c = -1, nc = -1;
    tc_status st = tc__graph_add_initializer(g, "tc_scalar_shape", &scalar_shape, &shape, err);
    if (st == TC_STATUS_OK) st = flag_node(g, if_name, "cond", "Reshape", 2, (const int32_t[]){cond, shape}, outer, &c, err);
    if (st == TC_STATUS_OK) st = flag_node(g, if_name, "not_cond", "Not", 1, &c, outer, &nc, err);
    *local_then = c, *local_else = nc;
    if (st != TC_STATUS_OK || outer < 0) {
        *run_then = c, *run_else = nc;
        return st;
    }
    const uint8_t no = 0;
    const tc__tensor false_scalar = {.dtype = TC_DTYPE_BOOL, .rank = 0, .data = (void *)&no, .nbytes = 1};
    int32_t f, not_outer;
    st = tc__graph_add_initializer(g, "tc_false", &false_scalar, &f, err);
    if (st == TC_STATUS_OK) st = flag_node(g, if_name, "not_outer", "Not", 1, &outer, -1, &not_outer, err);
    if (st == TC_STATUS_OK)
        st = flag_node(g, if_name, "then_run", "If", 4, (const int32_t[]){outer, not_outer, c, f}, -1, run_then, err);
    if (st == TC_STATUS_OK)
        st = flag_node(g, if_name, "else_run", "If", 4, (const int32_t[]){outer, not_outer, nc, f}, -1, run_else, err);
    return st;
}

/* A branch node may write the If's own output under its name (the ONNX checker allows it): with both branches in the
 * graph that would be two producers, so the nodes [first, end) write and read a new value instead. */
static tc_status rename_if_outputs(tc__graph *g, int32_t if_node, int32_t first, int32_t end, const char *which,
                                   int32_t *src, tc__err *err) {
    for (int k = 0; k < g->nodes[if_node].n_out; k++) {
        int32_t y = g->nodes[if_node].out[k];
        if (y < 0 || src[k] != y) continue;
        char name[300];
        snprintf(name, sizeof name, "%s/%s", g->values[y].name, which);
        int32_t fresh;
        tc_status st = tc__graph_add_value(g, name, &fresh, err);
        if (st) return st;
        for (int32_t n = first; n < end; n++) {
            tc__node *node = &g->nodes[n];
            for (int i = 0; i < node->n_in; i++)
                if (node->in[i] == y) node->in[i] = fresh;
            for (int o = 0; o < node->n_out; o++)
                if (node->out[o] == y) node->out[o] = fresh;
        }
        src[k] = fresh;
    }
    return TC_STATUS_OK;
}

tc_status tc__model_predicate_if(tc__graph *g, int32_t n, tc__err *err) {
    char if_name[256];
    snprintf(if_name, sizeof if_name, "%s", g->nodes[n].name);
    const int n_out = g->nodes[n].n_out;
    if (g->nodes[n].n_op_in != 1 || g->nodes[n].in[0] < 0)
        return tc__fail(err, TC_STATUS_INVALID_GRAPH, "If '%s' takes one input (its condition), got %d", if_name,
                        g->nodes[n].n_op_in);
    if (n_out < 1 || n_out > TC__ONNX_MAX_IF_OUTPUTS)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "If '%s' has %d outputs (1 to %d are supported)", if_name, n_out,
                        TC__ONNX_MAX_IF_OUTPUTS);
    const int32_t cond = g->nodes[n].in[0];
    const tc__vinfo *ci = &g->values[cond].info;
    if (ci->dtype != TC_DTYPE_BOOL)
        return tc__fail(err, TC_STATUS_INVALID_GRAPH, "If '%s': its condition '%s' is %s, not bool", if_name,
                        g->values[cond].name, ci->dtype == TC_DTYPE_UNDEFINED ? "of unknown type" : tc_dtype_name(ci->dtype));
    if (ci->shape.rank > 1 || (ci->shape.rank == 1 && ci->shape.dims[0].value != 1))
        return tc__fail(err, TC_STATUS_INVALID_GRAPH, "If '%s': its condition '%s' must hold one element", if_name,
                        g->values[cond].name);
    const int32_t outer = g->nodes[n].guard >= 0 ? g->nodes[n].in[g->nodes[n].guard] : -1;
    int32_t run_then, run_else, local_then, local_else;
    tc_status st = run_flags(g, if_name, cond, outer, &run_then, &run_else, &local_then, &local_else, err);
    int32_t src[2][TC__ONNX_MAX_IF_OUTPUTS];
    for (int b = 0; b < 2 && st == TC_STATUS_OK; b++) {
        const int32_t first = g->n_nodes;
        st = tc__onnx_import_branch(g, n, b == 0, src[b], err);
        if (st == TC_STATUS_OK) st = rename_if_outputs(g, n, first, g->n_nodes, b == 0 ? "then" : "else", src[b], err);
        if (st == TC_STATUS_OK) st = tc__model_guard_nodes(g, first, g->n_nodes, b == 0 ? run_then : run_else, err);
    }
    int32_t sel;
    if (st == TC_STATUS_OK) st = tc__graph_add_node(g, if_name, "If", "", 2 + 2 * n_out, n_out, &sel, err);
    if (st) return st;
    tc__node *s = &g->nodes[sel];
    /* the If itself runs under E: its own condition then decides (and, known when shapes are set, sizes its outputs) */
    s->in[0] = local_then;
    s->in[1] = local_else;
    for (int k = 0; k < n_out; k++) {
        s->in[2 + k] = src[0][k];
        s->in[2 + n_out + k] = src[1][k];
        s->out[k] = g->nodes[n].out[k];
    }
    g->nodes[n].removed = true;
    return outer >= 0 ? guard_node(g, sel, outer, err) : TC_STATUS_OK;
}
