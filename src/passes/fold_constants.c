/*
 * fold_constants.c - turns nodes whose results are known at build time into initializers:
 * nodes whose inputs are all known are evaluated with ctx->eval, and nodes whose outputs
 * inference already knows (Shape of a static tensor, shape arithmetic) are replaced by those
 * values. Each output value keeps its name and becomes an initializer.
 */
#include <string.h>

#include "passes/passes.h"
#include "passes/pattern.h"

/* Outputs above this many elements stay computed at run time. */
#define TC__FOLD_MAX_NUMEL ((int64_t)16 << 20)

/* Copies t into the graph's arena and makes value v an initializer holding it. */
static tc_status make_initializer(tc__graph *g, int32_t v, const tc__tensor *t, tc__err *err) {
    tc__tensor *copy = tc__arena_alloc(&g->arena, sizeof *copy, 8);
    void *data = copy ? tc__arena_alloc(&g->arena, t->nbytes ? t->nbytes : 1, 64) : NULL;
    if (data == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory folding '%s'", g->values[v].name);
    *copy = *t;
    if (t->nbytes) memcpy(data, t->data, t->nbytes);
    copy->data = data;
    tc__value *val = &g->values[v];
    val->init = copy;
    val->producer = -1;
    val->info.dtype = t->dtype;
    val->info.shape.rank = t->rank;
    for (int32_t i = 0; i < t->rank; i++) val->info.shape.dims[i] = tc__dim_known(t->dims[i]);
    val->info.value = copy;
    return TC_STATUS_OK;
}

/* True when every present output's value is already known and within the size cap. */
static bool outputs_known(const tc__graph *g, const tc__node *node) {
    bool any = false;
    for (int o = 0; o < node->n_out; o++) {
        int32_t v = node->out[o];
        if (v < 0) continue;
        const tc__tensor *t = g->values[v].info.value;
        if (t == NULL || tc__tensor_numel(t) > TC__FOLD_MAX_NUMEL) return false;
        any = true;
    }
    return any;
}

/* True when every present input is known and each present output has a static shape within the cap. */
static bool evaluable(const tc__graph *g, const tc__node *node) {
    if (node->schema == NULL || node->n_in > 64 || node->n_out > 16) return false;
    for (int i = 0; i < node->n_in; i++) /* a guard says when the node runs, not what it computes */
        if (node->in[i] >= 0 && i != node->guard && tc__pat_const(g, node->in[i]) == NULL) return false;
    bool any = false;
    for (int o = 0; o < node->n_out; o++) {
        int32_t v = node->out[o];
        if (v < 0) continue;
        const tc__shape *s = &g->values[v].info.shape;
        if (!tc__shape_is_concrete(s)) return false;
        int64_t dims[TC_MAX_RANK];
        for (int32_t i = 0; i < s->rank; i++) dims[i] = s->dims[i].value;
        int64_t n = tc__numel(s->rank, dims);
        if (n < 0 || n > TC__FOLD_MAX_NUMEL) return false;
        any = true;
    }
    return any;
}

/* Evaluates node n and turns its outputs into initializers. *folded is false when the
 * evaluator does not support the node (it then stays). */
static tc_status fold_by_eval(tc__pass_ctx *ctx, int32_t n, bool *folded) {
    tc__graph *g = ctx->g;
    const tc__node *node = &g->nodes[n];
    *folded = false;
    const tc__tensor *in[64];
    for (int i = 0; i < node->n_in; i++) in[i] = node->in[i] >= 0 ? tc__pat_const(g, node->in[i]) : NULL;
    tc__tensor outs[16];
    memset(outs, 0, sizeof outs);
    tc__err local = {0};
    tc_status st = ctx->eval(ctx->eval_user, node, in, outs, &local);
    /* A guarded node that fails on constants is kept: it fails only if its If branch is taken at run time. */
    if (st == TC_STATUS_UNSUPPORTED || (st != TC_STATUS_OK && node->guard >= 0)) return TC_STATUS_OK;
    if (st != TC_STATUS_OK)
        return tc__fail(ctx->err, st, "node '%s' (%s): %s", node->name, node->op_type, local.msg);
    for (int o = 0; o < node->n_out && st == TC_STATUS_OK; o++) {
        int32_t v = node->out[o];
        if (v < 0) continue;
        if (outs[o].data == NULL && tc__tensor_numel(&outs[o]) != 0) {
            /* The evaluator left an output out: keep the node. */
            for (int k = 0; k < node->n_out; k++) tc__tensor_free(&outs[k]);
            return TC_STATUS_OK;
        }
    }
    for (int o = 0; o < node->n_out && st == TC_STATUS_OK; o++)
        if (node->out[o] >= 0) st = make_initializer(g, node->out[o], &outs[o], ctx->err);
    for (int o = 0; o < node->n_out; o++) tc__tensor_free(&outs[o]);
    if (st == TC_STATUS_OK) *folded = true;
    return st;
}

tc_status tc__pass_fold_constants(tc__pass_ctx *ctx) {
    tc__graph *g = ctx->g;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        tc__node *node = &g->nodes[n];
        if (node->removed || node->schema == NULL) continue;
        bool folded = false;
        if (outputs_known(g, node)) {
            for (int o = 0; o < node->n_out; o++) {
                int32_t v = node->out[o];
                if (v < 0) continue;
                tc_status st = make_initializer(g, v, g->values[v].info.value, ctx->err);
                if (st) return st;
            }
            folded = true;
        } else if (ctx->eval != NULL && evaluable(g, node)) {
            tc_status st = fold_by_eval(ctx, n, &folded);
            if (st) return st;
        }
        if (folded) {
            g->nodes[n].removed = true;
            ctx->changes++;
        }
    }
    return TC_STATUS_OK;
}
