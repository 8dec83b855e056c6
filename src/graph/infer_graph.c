/* infer_graph.c - static shape/type inference over a whole graph, with
 * evaluation of small all-constant nodes so that shape arithmetic resolves. */
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

/* Nodes whose inputs are all known are evaluated when every output has at most this many elements. */
#define TC__EVAL_MAX_NUMEL 4096

/* Fills symval from a known small int64/int32 0-D or 1-D value. */
static void fill_symval_from_value(tc__vinfo *v) {
    const tc__tensor *t = v->value;
    if (t == NULL || (t->dtype != TC_DTYPE_INT64 && t->dtype != TC_DTYPE_INT32) || t->rank > 1) return;
    int64_t n = tc__tensor_numel(t);
    if (n < 0 || n > TC_MAX_RANK) return;
    for (int64_t i = 0; i < n; i++) v->symval[i] = tc__dim_literal(tc__tensor_get_i64(t, i));
    v->symval_len = (int32_t)n;
}

/* Materialises the value of a small int64 tensor whose symval is fully known (e.g. Shape of a
 * static tensor) so that nodes consuming it can be evaluated. */
static tc_status value_from_symval(tc__graph *g, tc__vinfo *v, tc__err *err) {
    if (v->value != NULL || v->symval_len < 0 || v->dtype != TC_DTYPE_INT64) return TC_STATUS_OK;
    if (!(v->shape.rank == 1 && v->shape.dims[0].value == v->symval_len) &&
        !(v->shape.rank == 0 && v->symval_len == 1))
        return TC_STATUS_OK;
    for (int32_t i = 0; i < v->symval_len; i++)
        if (!tc__dim_is_literal(v->symval[i])) return TC_STATUS_OK;
    tc__tensor *t = tc__arena_alloc(&g->arena, sizeof *t, 8);
    int64_t *data = t ? tc__arena_alloc(&g->arena, sizeof(int64_t) * (size_t)(v->symval_len + 1), 64) : NULL;
    if (data == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int32_t i = 0; i < v->symval_len; i++) data[i] = v->symval[i].value;
    t->dtype = TC_DTYPE_INT64;
    t->rank = v->shape.rank;
    if (t->rank == 1) t->dims[0] = v->symval_len;
    t->data = data;
    t->nbytes = sizeof(int64_t) * (size_t)v->symval_len;
    v->value = t;
    return TC_STATUS_OK;
}

/* Merges a declared output type into the inferred one: declared knowledge fills unknown parts. A declared shape that
 * contradicts the computed one (another rank, another known dim) is ignored with a warning, as onnxruntime does: the
 * computed shape is what the output will have. Another dtype is refused. */
static tc_status merge_declared(tc__graph *g, const tc__node *node, tc__value *val, const tc__vinfo *declared,
                                tc__err *err) {
    tc__vinfo *inf = &val->info;
    if (declared->dtype != TC_DTYPE_UNDEFINED && inf->dtype != TC_DTYPE_UNDEFINED && declared->dtype != inf->dtype)
        return tc__fail(err, TC_STATUS_INVALID_GRAPH, "node '%s' (%s): output '%s' is declared %s but computes %s",
                        node->name, node->op_type, val->name, tc_dtype_name(declared->dtype) ? tc_dtype_name(declared->dtype) : "?",
                        tc_dtype_name(inf->dtype) ? tc_dtype_name(inf->dtype) : "?");
    if (inf->dtype == TC_DTYPE_UNDEFINED) inf->dtype = declared->dtype;
    if (declared->shape.rank < 0) return TC_STATUS_OK;
    if (inf->shape.rank < 0) {
        inf->shape = declared->shape;
        return TC_STATUS_OK;
    }
    bool contradicts = inf->shape.rank != declared->shape.rank;
    for (int32_t i = 0; i < inf->shape.rank && !contradicts; i++) {
        tc__dim d = declared->shape.dims[i], x = inf->shape.dims[i];
        contradicts = x.value >= 0 && d.value >= 0 && x.value != d.value;
    }
    if (contradicts) {
        char a[128], b[128];
        tc__graph_warn(g, "graph output '%s' is declared with shape %s but node '%s' (%s) computes %s: using %s",
                       val->name, tc__graph_shape_str(g, &declared->shape, a, sizeof a), node->name, node->op_type,
                       tc__graph_shape_str(g, &inf->shape, b, sizeof b), b);
        return TC_STATUS_OK;
    }
    for (int32_t i = 0; i < inf->shape.rank; i++) {
        tc__dim d = declared->shape.dims[i], *x = &inf->shape.dims[i];
        if (x->value < 0 && x->sym < 0) *x = d; /* an unknown dim takes the declared one (known or named) */
    }
    return TC_STATUS_OK;
}

/* Evaluates a node with all inputs known and stores the small results as values in the arena. */
static tc_status evaluate(tc__graph *g, const tc__node *node, const tc__vinfo *const *in, tc__eval_fn eval, void *user,
                          tc__err *err) {
    for (int o = 0; o < node->n_out; o++) {
        int32_t v = node->out[o];
        if (v < 0) continue;
        const tc__vinfo *info = &g->values[v].info;
        if (!tc__shape_is_concrete(&info->shape) || !tc__dtype_valid(info->dtype)) return TC_STATUS_OK;
        int64_t dims[TC_MAX_RANK];
        for (int32_t i = 0; i < info->shape.rank; i++) dims[i] = info->shape.dims[i].value;
        int64_t n = tc__numel(info->shape.rank, dims);
        if (n < 0 || n > TC__EVAL_MAX_NUMEL) return TC_STATUS_OK;
    }
    const tc__tensor *tin[64];
    if (node->n_in > 64) return TC_STATUS_OK;
    for (int i = 0; i < node->n_in; i++) tin[i] = in[i] ? in[i]->value : NULL;
    tc__tensor outs[16];
    if (node->n_out > 16) return TC_STATUS_OK;
    memset(outs, 0, sizeof outs);
    tc__err local = {0};
    tc_status st = eval(user, node, tin, outs, &local);
    if (st != TC_STATUS_OK) {
        /* An unsupported variant is not an error here: the value just stays unknown. */
        if (st == TC_STATUS_UNSUPPORTED) return TC_STATUS_OK;
        tc__fail(err, st, "%s", local.msg);
        tc__err_prefix(err, "node '%s' (%s): ", node->name, node->op_type);
        return st;
    }
    st = TC_STATUS_OK;
    for (int o = 0; o < node->n_out; o++) {
        int32_t v = node->out[o];
        if (v < 0 || outs[o].data == NULL) continue;
        tc__tensor *t = tc__arena_alloc(&g->arena, sizeof *t, 8);
        void *data = t ? tc__arena_alloc(&g->arena, outs[o].nbytes, 64) : NULL;
        if (data == NULL) {
            st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
            break;
        }
        *t = outs[o];
        memcpy(data, outs[o].data, outs[o].nbytes);
        t->data = data;
        tc__vinfo *info = &g->values[v].info;
        info->value = t;
        fill_symval_from_value(info);
    }
    for (int o = 0; o < node->n_out && o < 16; o++) tc__tensor_free(&outs[o]);
    return st;
}

tc_status tc__graph_infer_shapes(tc__graph *g, bool allow_unsupported, tc__eval_fn eval, void *user, tc__err *err) {
    for (int v = 0; v < g->n_values; v++) {
        tc__vinfo *info = &g->values[v].info;
        if (g->values[v].init != NULL) {
            info->value = g->values[v].init;
            fill_symval_from_value(info);
        }
    }
    for (int n = 0; n < g->n_nodes; n++) {
        tc__node *node = &g->nodes[n];
        if (node->n_in > 64 || node->n_out > 16)
            return tc__fail(err, TC_STATUS_UNSUPPORTED, "node '%s' (%s): too many inputs or outputs", node->name,
                            node->op_type);
        const tc__vinfo *in[64];
        bool all_known = true;
        for (int i = 0; i < node->n_in; i++) {
            in[i] = node->in[i] >= 0 ? &g->values[node->in[i]].info : NULL;
            if (in[i] != NULL && in[i]->value == NULL && i != node->guard) all_known = false; /* a guard: when */
        }
        tc__vinfo out[16];
        for (int o = 0; o < node->n_out; o++) tc__vinfo_init(&out[o]);
        if (node->schema == NULL) {
            if (!allow_unsupported) return tc__graph_fail_unsupported(g, err);
        } else {
            tc__infer_ctx ctx = {.node_name = node->name,
                                 .op_type = node->op_type,
                                 .opset = g->opset,
                                 .attrs = &node->attrs,
                                 .n_in = node->n_op_in,
                                 .in = in,
                                 .n_out = node->n_out,
                                 .out = out,
                                 .err = err};
            tc_status st = node->schema->infer(&ctx);
            if (st != TC_STATUS_OK) {
                /* A guarded node (an If branch decided at run time) that does not infer leaves its outputs unknown:
                 * its branch cannot run at these shapes, which the engine refuses only if the branch is taken. */
                if ((st == TC_STATUS_UNSUPPORTED && allow_unsupported) || node->guard >= 0) {
                    if (err) memset(err, 0, sizeof *err);
                    for (int o = 0; o < node->n_out; o++) tc__vinfo_init(&out[o]);
                } else {
                    tc__err_prefix(err, "node '%s' (%s): ", node->name, node->op_type);
                    return st;
                }
            }
        }
        for (int o = 0; o < node->n_out; o++) {
            int32_t v = node->out[o];
            if (v < 0) continue;
            tc__value *val = &g->values[v];
            tc__vinfo declared = val->info;
            out[o].value = NULL; /* values come only from evaluation below */
            val->info = out[o];
            tc_status vs = value_from_symval(g, &val->info, err);
            if (vs) return vs;
            if (val->is_output) {
                tc_status st = merge_declared(g, node, val, &declared, err);
                if (st) return st;
            }
        }
        if (eval != NULL && all_known && node->schema != NULL && node->n_out > 0) {
            tc_status st = evaluate(g, node, in, eval, user, err);
            if (st && node->guard >= 0) {
                if (err) memset(err, 0, sizeof *err); /* as above: the value stays unknown */
                st = TC_STATUS_OK;
            }
            if (st) return st;
        }
    }
    return TC_STATUS_OK;
}
