/*
 * import_model.c - builds a graph from a serialized ONNX ModelProto: opset, initializers, declared
 * graph inputs and outputs, nodes with their attributes. Tensor payloads stay where protobuf-c put
 * them (in the graph arena) whenever possible, so a large model is not copied twice.
 */
#include <stdio.h>
#include <string.h>

#include "onnx/import_internal.h"
#include "onnx/onnx_import.h"

/* Most inputs or outputs a node may have (tc__graph_add_node's own limit). */
#define MAX_NODE_IO (1 << 20)

static bool is_default_domain(const char *d) { return d[0] == '\0' || strcmp(d, "ai.onnx") == 0; }

static tc_status import_opset(tc__graph *g, const Onnx__ModelProto *m, tc__err *err) {
    bool found = false;
    int64_t version = 0;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *op = m->opset_import[i];
        if (!is_default_domain(tc__onnx_str(op->domain))) continue;
        int64_t v = op->has_version ? op->version : 0;
        if (found && v != version)
            return tc__fail(err, TC_STATUS_INVALID_GRAPH,
                            "model imports the default ONNX domain twice, with opsets %lld and %lld",
                            (long long)version, (long long)v);
        found = true;
        version = v;
    }
    if (!found) {
        /* Valid when no node uses the default domain (e.g. ai.onnx.ml-only models); the
         * verifier then reports their ops as unsupported. */
        const Onnx__GraphProto *gp = m->graph;
        for (size_t i = 0; gp != NULL && i < gp->n_node; i++)
            if (gp->node[i] != NULL && is_default_domain(tc__onnx_str(gp->node[i]->domain)))
                return tc__fail(err, TC_STATUS_INVALID_GRAPH,
                                "model declares no opset for the default ONNX domain (no opset_import entry for \"\" "
                                "or \"ai.onnx\"), but node %zu uses it",
                                i);
        g->opset = 0;
        return TC_STATUS_OK;
    }
    if (version <= 0)
        return tc__fail(err, TC_STATUS_INVALID_GRAPH, "model declares an invalid opset version %lld for the default domain",
                        (long long)version);
    g->opset = version;
    return TC_STATUS_OK;
}

/* Fills an initializer value's static information: concrete shape, value, and symval for small int64 vectors. */
static void fill_init_info(tc__value *v, const tc__tensor *t) {
    v->init = t;
    v->info.value = t;
    v->info.dtype = t->dtype;
    v->info.shape.rank = t->rank;
    for (int32_t i = 0; i < t->rank; i++) v->info.shape.dims[i] = tc__dim_known(t->dims[i]);
    int64_t n = tc__tensor_numel(t);
    if (t->dtype == TC_DTYPE_INT64 && t->rank <= 1 && n <= TC_MAX_RANK) {
        const int64_t *d = t->data;
        v->info.symval_len = (int32_t)n;
        for (int64_t i = 0; i < n; i++) v->info.symval[i] = tc__dim_literal(d[i]);
    }
}

tc_status tc__onnx_import_initializers(tc__graph *g, const tc__onnx_tensor_ctx *ctx, const Onnx__GraphProto *gp,
                                       tc__err *err) {
    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        const char *name = tc__onnx_str(tp->name);
        if (name[0] == '\0')
            return tc__fail(err, TC_STATUS_INVALID_GRAPH, "initializer #%zu has no name", i);
        tc__tensor *t = tc__arena_alloc(&g->arena, sizeof *t, 16);
        if (t == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory importing initializer '%s'", name);
        char what[300];
        snprintf(what, sizeof what, "initializer '%s'", name);
        tc_status st = tc__onnx_tensor_decode(ctx, tp, what, t, err);
        int32_t idx;
        if (st == TC_STATUS_OK) st = tc__graph_add_value(g, name, &idx, err);
        if (st != TC_STATUS_OK) return st;
        fill_init_info(&g->values[idx], t);
    }
    return TC_STATUS_OK;
}

/* Graph inputs that are not initializers become g->inputs with their declared types. An input that
 * names an initializer (IR < 4 models list them) only has its declared element type checked. */
static tc_status import_inputs(tc__graph *g, const Onnx__GraphProto *gp, tc__err *err) {
    g->inputs = tc__arena_alloc(&g->arena, sizeof(int32_t) * (gp->n_input ? gp->n_input : 1), 4);
    if (g->inputs == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory importing graph inputs");
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        const char *name = tc__onnx_str(vi->name);
        if (name[0] == '\0') return tc__fail(err, TC_STATUS_INVALID_GRAPH, "graph input #%zu has no name", i);
        char what[300];
        snprintf(what, sizeof what, "graph input '%s'", name);
        tc__vinfo info;
        tc__vinfo_init(&info);
        tc_status st = tc__onnx_type_import(g, vi->type, what, &info, err);
        if (st != TC_STATUS_OK) return st;
        int32_t idx = tc__graph_find_value(g, name);
        if (idx >= 0 && g->values[idx].init != NULL) {
            const tc__tensor *t = g->values[idx].init;
            if (info.dtype != TC_DTYPE_UNDEFINED && info.dtype != t->dtype)
                return tc__fail(err, TC_STATUS_INVALID_GRAPH,
                                "graph input '%s' is declared %s but its initializer is %s", name,
                                tc_dtype_name(info.dtype), tc_dtype_name(t->dtype));
            continue;
        }
        st = tc__graph_add_value(g, name, &idx, err);
        if (st != TC_STATUS_OK) return st;
        g->values[idx].info = info;
        g->values[idx].is_input = true;
        g->inputs[g->n_inputs++] = idx;
    }
    return TC_STATUS_OK;
}

/* Resolves a node's input or output name: "" is an absent optional (-1). */
static tc_status io_value(tc__graph *g, const char *s, int32_t *out, tc__err *err) {
    if (s == NULL || s[0] == '\0') {
        *out = -1;
        return TC_STATUS_OK;
    }
    return tc__graph_value_by_name(g, s, out, err);
}

tc_status tc__onnx_import_node(tc__graph *g, const tc__onnx_tensor_ctx *ctx, const Onnx__NodeProto *np, size_t index,
                               tc__err *err) {
    const char *op_type = tc__onnx_str(np->op_type);
    const char *name = tc__onnx_str(np->name);
    if (op_type[0] == '\0')
        return tc__fail(err, TC_STATUS_INVALID_GRAPH, "node '%s' (#%zu in the graph) has no op_type", name, index);
    if (np->n_input > MAX_NODE_IO || np->n_output > MAX_NODE_IO)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "node '%s' (%s) has %zu inputs and %zu outputs, too many", name,
                        op_type, np->n_input, np->n_output);
    const char *domain = tc__onnx_str(np->domain);
    if (is_default_domain(domain)) domain = "";
    if (strcmp(domain, TC__DOMAIN_INTERNAL) == 0) /* (its ops are made by tailcut's passes, op_schema.h) */
        return tc__fail(err, TC_STATUS_INVALID_GRAPH, "node '%s' (%s) is in the domain '%s', which is reserved for "
                        "tailcut's own ops", name, op_type, TC__DOMAIN_INTERNAL);
    int32_t ni;
    tc_status st = tc__graph_add_node(g, name, op_type, domain, (int)np->n_input, (int)np->n_output, &ni, err);
    if (st != TC_STATUS_OK) return st;
    /* g->nodes does not move while this node is filled: only values and the arena grow. */
    tc__node *node = &g->nodes[ni];
    for (size_t k = 0; k < np->n_input && st == TC_STATUS_OK; k++)
        st = io_value(g, np->input[k], &node->in[k], err);
    for (size_t k = 0; k < np->n_output && st == TC_STATUS_OK; k++)
        st = io_value(g, np->output[k], &node->out[k], err);
    if (st == TC_STATUS_OK) st = tc__onnx_attrs_import(g, ctx, np, node->name, &node->attrs, err);
    return st;
}

static tc_status import_outputs(tc__graph *g, const Onnx__GraphProto *gp, tc__err *err) {
    g->outputs = tc__arena_alloc(&g->arena, sizeof(int32_t) * (gp->n_output ? gp->n_output : 1), 4);
    if (g->outputs == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory importing graph outputs");
    for (size_t i = 0; i < gp->n_output; i++) {
        const Onnx__ValueInfoProto *vi = gp->output[i];
        const char *name = tc__onnx_str(vi->name);
        if (name[0] == '\0') return tc__fail(err, TC_STATUS_INVALID_GRAPH, "graph output #%zu has no name", i);
        char what[300];
        snprintf(what, sizeof what, "graph output '%s'", name);
        tc__vinfo info;
        tc__vinfo_init(&info);
        int32_t idx;
        tc_status st = tc__onnx_type_import(g, vi->type, what, &info, err);
        if (st == TC_STATUS_OK) st = tc__graph_value_by_name(g, name, &idx, err);
        if (st != TC_STATUS_OK) return st;
        tc__value *v = &g->values[idx];
        if (v->is_output) return tc__fail(err, TC_STATUS_INVALID_GRAPH, "graph output '%s' is listed twice", name);
        v->is_output = true;
        /* Inputs and initializers keep what they already know; the rest get the declared type. */
        if (v->init == NULL && !v->is_input) v->info = info;
        g->outputs[g->n_outputs++] = idx;
    }
    return TC_STATUS_OK;
}

static tc_status import_graph(tc__graph *g, const Onnx__ModelProto *m, const char *base_dir, tc__err *err) {
    tc_status st = import_opset(g, m, err);
    if (st != TC_STATUS_OK) return st;
    const Onnx__GraphProto *gp = m->graph;
    if (gp == NULL) return tc__fail(err, TC_STATUS_CORRUPT_FILE, "model has no graph");
    g->ir_version = m->has_ir_version ? m->ir_version : 0;
    g->producer_name = tc__arena_strdup(&g->arena, tc__onnx_str(m->producer_name));
    g->name = tc__arena_strdup(&g->arena, tc__onnx_str(gp->name));
    if (g->producer_name == NULL || g->name == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    if (gp->n_node > INT32_MAX / 2 || gp->n_initializer > INT32_MAX / 2)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "graph has too many nodes (%zu) or initializers (%zu)",
                        gp->n_node, gp->n_initializer);

    tc__onnx_tensor_ctx ctx = {.arena = &g->arena, .adopt = true, .external_ok = true, .base_dir = base_dir};
    st = tc__onnx_import_initializers(g, &ctx, gp, err);
    if (st == TC_STATUS_OK) st = import_inputs(g, gp, err);
    for (size_t i = 0; i < gp->n_node && st == TC_STATUS_OK; i++)
        st = tc__onnx_import_node(g, &ctx, gp->node[i], i, err);
    if (st == TC_STATUS_OK) st = import_outputs(g, gp, err);
    return st;
}

tc_status tc__onnx_import(const void *data, size_t size, const char *base_dir, tc__graph **out, tc__err *err) {
    if (out == NULL) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "onnx import: out is NULL");
    *out = NULL;
    if (data == NULL && size > 0) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "onnx import: data is NULL");
    if (size == 0)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "not a valid ONNX model: the input is empty (0 bytes)");
    tc__graph *g = tc__graph_create();
    if (g == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory creating a graph");
    tc__onnx_alloc alloc;
    tc__onnx_alloc_init(&alloc, &g->arena);
    Onnx__ModelProto *m = onnx__model_proto__unpack(&alloc.pc, size, data);
    tc_status st;
    if (m == NULL) {
        if (alloc.failed)
            st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory parsing an ONNX model of %zu bytes", size);
        else
            st = tc__fail(err, TC_STATUS_CORRUPT_FILE,
                          "not a valid ONNX model: protobuf parsing failed (%zu bytes; truncated or damaged?)", size);
    } else {
        st = import_graph(g, m, base_dir, err);
        /* Frees the malloc'd parts of the message; blocks adopted from the arena stay with the graph. */
        onnx__model_proto__free_unpacked(m, &alloc.pc);
    }
    if (st != TC_STATUS_OK) {
        tc__graph_destroy(g);
        return st;
    }
    *out = g;
    return TC_STATUS_OK;
}
