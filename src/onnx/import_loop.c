/*
 * import_loop.c - unrolls a Loop whose trip count is known before the run and whose condition stays true: the body's
 * nodes join the enclosing graph once per iteration, the body-local names suffixed "/iter<i>" (its initializers once,
 * "/iter-1"),
 * iteration_num an int64 initializer i, cond_in true, each loop-carried input the previous iteration's value (the
 * Loop's initial value first); the Loop's final values are Identities of the last iteration's, and each scan output
 * the Concat along a new axis 0 of the iterations' values (Unsqueeze). Anything else is refused naming the Loop and why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/import_internal.h"
#include "onnx/onnx_import.h"

typedef struct name_map {
    const char **from, **to;
    size_t n, cap;
} name_map;

static const char *map_get(const name_map *m, const char *s) {
    for (size_t i = m->n; i-- > 0;)
        if (strcmp(m->from[i], s) == 0) return m->to[i];
    return s;
}

static tc_status map_put(tc__graph *g, name_map *m, const char *from, const char *to, tc__err *err) {
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        const char **f = tc__arena_alloc(&g->arena, cap * sizeof *f, 8), **t = tc__arena_alloc(&g->arena, cap * sizeof *t, 8);
        if (f == NULL || t == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory unrolling a Loop");
        if (m->n) memcpy(f, m->from, m->n * sizeof *f), memcpy(t, m->to, m->n * sizeof *t);
        m->from = f, m->to = t, m->cap = cap;
    }
    m->from[m->n] = from;
    m->to[m->n++] = to;
    return TC_STATUS_OK;
}

/* name + "/iter<i>" in g's arena. */
static const char *suffixed(tc__graph *g, const char *name, int64_t i) {
    size_t len = strlen(name) + 32;
    char *s = tc__arena_alloc(&g->arena, len, 1);
    if (s != NULL) snprintf(s, len, "%s/iter%lld", name, (long long)i);
    return s;
}

/* A new initializer of g holding t (named after base); its name in *name. */
static tc_status add_const(tc__graph *g, const char *base, const tc__tensor *t, const char **name, tc__err *err) {
    int32_t v;
    tc_status st = tc__graph_add_initializer(g, base, t, &v, err);
    if (st == TC_STATUS_OK) *name = g->values[v].name;
    return st;
}

/* Node op(in[0..n_in)) -> value out (index), with attribute `attr` (INT value or INTS of one element; NULL none). */
static tc_status add_node(tc__graph *g, const char *name, const char *op, int n_in, const int32_t *in, int32_t out,
                          const char *attr, int64_t value, bool ints, tc__err *err) {
    int32_t n;
    tc_status st = tc__graph_add_node(g, name, op, "", n_in, 1, &n, err);
    if (st) return st;
    for (int i = 0; i < n_in; i++) g->nodes[n].in[i] = in[i];
    g->nodes[n].out[0] = out;
    if (attr == NULL) return TC_STATUS_OK;
    tc__attr *a = tc__arena_alloc(&g->arena, sizeof *a, 8);
    int64_t *v = tc__arena_alloc(&g->arena, sizeof *v, 8);
    if (a == NULL || v == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory unrolling a Loop");
    memset(a, 0, sizeof *a);
    *v = value;
    a->name = attr;
    a->kind = ints ? TC__ATTR_INTS : TC__ATTR_INT;
    a->i = value;
    a->ints = v;
    a->n = ints ? 1 : 0;
    g->nodes[n].attrs = (tc__attrs){.n = 1, .items = a};
    return TC_STATUS_OK;
}

/* Why the body's cond output does not stay true, or NULL when it is cond_in itself or Identity(cond_in). */
static const char *cond_changes(const Onnx__GraphProto *body) {
    const char *cin = tc__onnx_str(body->input[1]->name), *cout = tc__onnx_str(body->output[0]->name);
    if (strcmp(cin, cout) == 0) return NULL;
    for (size_t i = 0; i < body->n_node; i++) {
        const Onnx__NodeProto *np = body->node[i];
        for (size_t k = 0; k < np->n_output; k++)
            if (strcmp(tc__onnx_str(np->output[k]), cout) == 0)
                return strcmp(tc__onnx_str(np->op_type), "Identity") == 0 && np->n_input == 1 &&
                               strcmp(tc__onnx_str(np->input[0]), cin) == 0
                           ? NULL
                           : "its body computes its condition (only loops whose condition stays true are unrolled)";
    }
    return "its body's condition output is not its condition input";
}

/* Imports the body's initializers once (shared by the iterations), named "<name>/iter-1"; inits maps the names. */
static tc_status import_initializers(tc__graph *g, Onnx__GraphProto *body, name_map *inits, tc__err *err) {
    tc__onnx_tensor_ctx ctx = {.arena = &g->arena, .adopt = false, .external_ok = false, .base_dir = NULL};
    tc_status st = TC_STATUS_OK;
    for (size_t k = 0; k < body->n_initializer && st == TC_STATUS_OK; k++) {
        Onnx__TensorProto *tp = body->initializer[k];
        char *old = tp->name;
        const char *fresh = suffixed(g, tc__onnx_str(old), -1);
        if (fresh == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory unrolling a Loop");
        st = map_put(g, inits, tc__onnx_str(old), fresh, err);
        tp->name = (char *)fresh;
        Onnx__GraphProto one = *body; /* this initializer alone */
        one.n_initializer = 1;
        one.initializer = &body->initializer[k];
        if (st == TC_STATUS_OK) st = tc__onnx_import_initializers(g, &ctx, &one, err);
        tp->name = old;
    }
    return st;
}

/* Imports the nodes of iteration i of body into g, names mapped through m (initializers and inputs already mapped). */
static tc_status import_iteration(tc__graph *g, Onnx__GraphProto *body, int64_t i, name_map *m, const char *loop_name,
                                  tc__err *err) {
    tc__onnx_tensor_ctx ctx = {.arena = &g->arena, .adopt = false, .external_ok = false, .base_dir = NULL};
    tc_status st = TC_STATUS_OK;
    for (size_t k = 0; k < body->n_node && st == TC_STATUS_OK; k++) {
        Onnx__NodeProto *np = body->node[k];
        char **in = np->input, **out = np->output, *name = np->name;
        char **min = tc__arena_alloc(&g->arena, (np->n_input + 1) * sizeof *min, 8);
        char **mout = tc__arena_alloc(&g->arena, (np->n_output + 1) * sizeof *mout, 8);
        if (min == NULL || mout == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory unrolling a Loop");
        for (size_t j = 0; j < np->n_input; j++) min[j] = (char *)map_get(m, tc__onnx_str(in[j]));
        for (size_t j = 0; j < np->n_output && st == TC_STATUS_OK; j++) {
            const char *o = tc__onnx_str(out[j]);
            mout[j] = (char *)(o[0] ? suffixed(g, o, i) : "");
            if (mout[j] == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory unrolling a Loop");
            if (o[0]) st = map_put(g, m, o, mout[j], err);
        }
        char node_name[300];
        snprintf(node_name, sizeof node_name, "%s/%s/iter%lld", loop_name, name && name[0] ? name : "node", (long long)i);
        np->input = min, np->output = mout, np->name = node_name;
        if (st == TC_STATUS_OK) st = tc__onnx_import_node(g, &ctx, np, k, err);
        np->input = in, np->output = out, np->name = name;
    }
    return st;
}

tc_status tc__onnx_unroll_loop(tc__graph *g, int32_t n, int64_t trip, tc__err *err) {
    char loop_name[256];
    snprintf(loop_name, sizeof loop_name, "%s", g->nodes[n].name);
    const int n_in = g->nodes[n].n_op_in, n_out = g->nodes[n].n_out, n_carried = n_in - 2;
    if (n_in < 2 || n_carried > n_out)
        return tc__fail(err, TC_STATUS_INVALID_GRAPH, "Loop '%s' has %d inputs and %d outputs", loop_name, n_in, n_out);
    if (trip < 0 || trip > TC__ONNX_MAX_LOOP_TRIPS)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "Loop '%s': trip count %lld (loops are unrolled: at most %d)",
                        loop_name, (long long)trip, TC__ONNX_MAX_LOOP_TRIPS);
    const int n_scan = n_out - n_carried;
    if (trip == 0 && n_scan > 0)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "Loop '%s': trip count 0 with scan outputs (empty, of no known "
                        "shape) is not supported", loop_name);
    const tc__attr *a = tc__attr_find(&g->nodes[n].attrs, "body");
    if (a == NULL || a->kind != TC__ATTR_GRAPH || a->s == NULL)
        return tc__fail(err, TC_STATUS_INVALID_GRAPH, "Loop '%s' has no graph attribute 'body'", loop_name);
    tc__onnx_alloc alloc;
    tc__onnx_alloc_init(&alloc, &g->arena);
    Onnx__GraphProto *body = onnx__graph_proto__unpack(&alloc.pc, a->n, (const uint8_t *)a->s);
    if (body == NULL)
        return tc__fail(err, alloc.failed ? TC_STATUS_OUT_OF_MEMORY : TC_STATUS_CORRUPT_FILE,
                        "Loop '%s': cannot read its body", loop_name);
    tc_status st = TC_STATUS_OK;
    const char *why = NULL;
    if (body->n_input != (size_t)n_in || body->n_output != (size_t)(1 + n_out))
        st = tc__fail(err, TC_STATUS_INVALID_GRAPH, "Loop '%s': its body has %zu inputs and %zu outputs, expected %d and %d",
                      loop_name, body->n_input, body->n_output, n_in, 1 + n_out);
    else if ((uint64_t)trip * body->n_node > TC__ONNX_MAX_LOOP_NODES)
        st = tc__fail(err, TC_STATUS_UNSUPPORTED, "Loop '%s': %lld iterations of %zu nodes is more than the %d nodes an "
                      "unrolled loop may have", loop_name, (long long)trip, body->n_node, TC__ONNX_MAX_LOOP_NODES);
    else if ((why = cond_changes(body)) != NULL)
        st = tc__fail(err, TC_STATUS_UNSUPPORTED, "Loop '%s': %s", loop_name, why);
    for (size_t k = 0; k < body->n_node && st == TC_STATUS_OK; k++)
        for (size_t j = 0; j < body->node[k]->n_attribute && st == TC_STATUS_OK; j++)
            if (body->node[k]->attribute[j]->n_graphs > 0 || body->node[k]->attribute[j]->has_g)
                st = tc__fail(err, TC_STATUS_UNSUPPORTED, "Loop '%s': its body's node '%s' holds a subgraph (an If or "
                              "Loop inside a Loop is not unrolled)", loop_name, tc__onnx_str(body->node[k]->name));
    const char **cur = calloc((size_t)n_carried + 1, sizeof *cur), **scans = NULL;
    if (n_scan > 0 && trip > 0) scans = calloc((size_t)n_scan * (size_t)trip, sizeof *scans);
    if (st == TC_STATUS_OK && (cur == NULL || (n_scan > 0 && trip > 0 && scans == NULL)))
        st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory unrolling Loop '%s'", loop_name);
    for (int k = 0; k < n_carried && st == TC_STATUS_OK; k++) {
        int32_t v = g->nodes[n].in[2 + k];
        if (v < 0) st = tc__fail(err, TC_STATUS_INVALID_GRAPH, "Loop '%s': loop-carried input %d is absent", loop_name, k);
        else cur[k] = g->values[v].name;
    }
    const uint8_t yes = 1;
    const tc__tensor true_t = {.dtype = TC_DTYPE_BOOL, .rank = 0, .data = (void *)&yes, .nbytes = 1};
    const char *true_name = NULL;
    name_map inits = {0};
    if (st == TC_STATUS_OK) st = add_const(g, "tc_loop_true", &true_t, &true_name, err);
    if (st == TC_STATUS_OK && trip > 0) st = import_initializers(g, body, &inits, err);
    for (int64_t i = 0; i < trip && st == TC_STATUS_OK; i++) {
        name_map m = {0};
        for (size_t k = 0; k < inits.n && st == TC_STATUS_OK; k++) st = map_put(g, &m, inits.from[k], inits.to[k], err);
        const tc__tensor it = {.dtype = TC_DTYPE_INT64, .rank = 0, .data = (void *)&i, .nbytes = sizeof i};
        const char *iter_name = NULL;
        st = add_const(g, "tc_loop_iter", &it, &iter_name, err);
        if (st == TC_STATUS_OK) st = map_put(g, &m, tc__onnx_str(body->input[0]->name), iter_name, err);
        if (st == TC_STATUS_OK) st = map_put(g, &m, tc__onnx_str(body->input[1]->name), true_name, err);
        for (int k = 0; k < n_carried && st == TC_STATUS_OK; k++)
            st = map_put(g, &m, tc__onnx_str(body->input[2 + k]->name), cur[k], err);
        if (st == TC_STATUS_OK) st = import_iteration(g, body, i, &m, loop_name, err);
        for (int k = 0; k < n_carried && st == TC_STATUS_OK; k++) cur[k] = map_get(&m, tc__onnx_str(body->output[1 + k]->name));
        for (int k = 0; k < n_scan && st == TC_STATUS_OK; k++)
            scans[(size_t)k * (size_t)trip + (size_t)i] = map_get(&m, tc__onnx_str(body->output[1 + n_carried + k]->name));
    }
    char name[320];
    for (int k = 0; k < n_carried && st == TC_STATUS_OK; k++) {
        int32_t y = g->nodes[n].out[k], src;
        if (y < 0) continue;
        snprintf(name, sizeof name, "%s/final%d", loop_name, k);
        st = tc__graph_value_by_name(g, cur[k], &src, err);
        if (st == TC_STATUS_OK) st = add_node(g, name, "Identity", 1, &src, y, NULL, 0, false, err);
    }
    int32_t axes = -1;
    const int64_t zero = 0;
    const tc__tensor axes_t = {.dtype = TC_DTYPE_INT64, .rank = 1, .dims = {1}, .data = (void *)&zero, .nbytes = 8};
    if (st == TC_STATUS_OK && n_scan > 0 && g->opset >= 13) st = tc__graph_add_initializer(g, "tc_loop_axes", &axes_t, &axes, err);
    for (int k = 0; k < n_scan && st == TC_STATUS_OK; k++) {
        int32_t y = g->nodes[n].out[n_carried + k];
        if (y < 0) continue;
        int32_t *parts = calloc((size_t)trip, sizeof *parts);
        if (parts == NULL) st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory unrolling Loop '%s'", loop_name);
        for (int64_t i = 0; i < trip && st == TC_STATUS_OK; i++) {
            int32_t src;
            snprintf(name, sizeof name, "%s/scan%d/iter%lld", loop_name, k, (long long)i);
            st = tc__graph_value_by_name(g, scans[(size_t)k * (size_t)trip + (size_t)i], &src, err);
            if (st == TC_STATUS_OK) st = tc__graph_add_value(g, name, &parts[i], err);
            const int32_t uin[2] = {src, axes};
            if (st == TC_STATUS_OK)
                st = add_node(g, name, "Unsqueeze", axes >= 0 ? 2 : 1, uin, parts[i], axes >= 0 ? NULL : "axes", 0, true, err);
        }
        snprintf(name, sizeof name, "%s/scan%d", loop_name, k);
        if (st == TC_STATUS_OK) st = add_node(g, name, "Concat", (int)trip, parts, y, "axis", 0, false, err);
        free(parts);
    }
    free(cur);
    free(scans);
    onnx__graph_proto__free_unpacked(body, &alloc.pc);
    if (st == TC_STATUS_OK) g->nodes[n].removed = true;
    return st;
}
