/*
 * fuse_embed_layernorm.c - a transformer's embedding layer becomes one TcEmbedLayerNorm node (tailcut's own op, domain
 * "tailcut", ops.inc) for device backends (the engine runs this pass for them; the CPU keeps its steps):
 *     e0 = Gather(table [V, D] constant, ids [..., S])      (axis 0)
 *     e1 = Add(e0, A1 constant) ... ek = Add(e(k-1), Ak constant)   (k = 0..4; Ak broadcast to [S, D] without widening)
 *     y  = LayerNormalization(ek, scale [D], bias [D]; last axis) (constant scale and bias, one output)
 * becomes y = TcEmbedLayerNorm(ids, table, scale, bias [, A]; epsilon) with A = A1 + ... + Ak summed in float32 into a
 * new [S, D] initializer (absent when k = 0). BERT's position and token-type embeddings of an exporter without a
 * token_type_ids input are such constants once fold_constants ran. Every intermediate value must be float32, read only
 * by the next node of the chain and no graph output; no node may carry an epilogue. A chain with a computed addend (a
 * token_type_ids input) is left alone.
 */
#include <stdio.h>
#include <string.h>

#include "core/tensor.h"
#include "graph/op_schema.h"
#include "passes/passes.h"
#include "passes/pattern.h"

#define MAX_ADDS 4

typedef struct chain {
    int32_t ln, gather, ids, table;
    int32_t add[MAX_ADDS], addend[MAX_ADDS];
    int n_add;
    int64_t s, d;
} chain;

/* True when constant t broadcasts to [S, D] with its trailing dims and only 1s before them (so summing it into an
 * [S, D] addend changes nothing). */
static bool fits_sd(const tc__tensor *t, int64_t s, int64_t d) {
    if (t == NULL || t->dtype != TC_DTYPE_FLOAT32 || t->rank < 1) return false;
    const int32_t r = t->rank;
    if (t->dims[r - 1] != d && t->dims[r - 1] != 1) return false;
    if (r >= 2 && t->dims[r - 2] != s && t->dims[r - 2] != 1) return false;
    for (int32_t i = 0; i + 2 < r; i++)
        if (t->dims[i] != 1) return false;
    return true;
}

/* The element of t (fits_sd) at [row, col] of the [S, D] broadcast. */
static float at_sd(const tc__tensor *t, int64_t row, int64_t col) {
    const int32_t r = t->rank;
    const int64_t dc = t->dims[r - 1], ds = r >= 2 ? t->dims[r - 2] : 1;
    return ((const float *)t->data)[(ds == 1 ? 0 : row) * dc + (dc == 1 ? 0 : col)];
}

static bool match(const tc__graph *g, int32_t n, chain *c) {
    const tc__node *ln = &g->nodes[n];
    if (!tc__pat_is(ln, "LayerNormalization") || !tc__pat_plain(ln) || ln->n_in < 2 || ln->n_in > 3 || ln->in[0] < 0 ||
        ln->in[1] < 0 || ln->guard >= 0)
        return false;
    for (int o = 1; o < ln->n_out; o++)
        if (ln->out[o] >= 0) return false; /* Mean / InvStdDev */
    memset(c, 0, sizeof *c);
    c->ln = n;
    const tc__vinfo *xi = &g->values[ln->in[0]].info;
    const int32_t rank = xi->shape.rank;
    const int64_t axis = tc__attr_int(&ln->attrs, "axis", -1);
    if (xi->dtype != TC_DTYPE_FLOAT32 || rank < 2 || (axis != -1 && axis != rank - 1)) return false;
    const tc__tensor *scale = tc__pat_const(g, ln->in[1]);
    const tc__tensor *bias = ln->n_in > 2 && ln->in[2] >= 0 ? tc__pat_const(g, ln->in[2]) : NULL;
    if (scale == NULL || scale->dtype != TC_DTYPE_FLOAT32 || bias == NULL || bias->dtype != TC_DTYPE_FLOAT32) return false;
    /* back through the Adds to the Gather */
    int32_t v = ln->in[0];
    for (;;) {
        if (!tc__pat_single_use(g, v) || !tc__pat_is_float(g, v) || g->values[v].info.dtype != TC_DTYPE_FLOAT32)
            return false;
        const int32_t p = g->values[v].producer;
        if (p < 0) return false;
        const tc__node *pn = &g->nodes[p];
        if (tc__pat_is(pn, "Gather")) {
            c->gather = p;
            break;
        }
        if (!tc__pat_is(pn, "Add") || !tc__pat_plain(pn) || pn->n_in != 2 || c->n_add == MAX_ADDS) return false;
        const int ci = tc__pat_const(g, pn->in[1]) != NULL ? 1 : tc__pat_const(g, pn->in[0]) != NULL ? 0 : -1;
        if (ci < 0 || tc__pat_const(g, pn->in[1 - ci]) != NULL) return false;
        c->add[c->n_add] = p, c->addend[c->n_add] = pn->in[ci];
        c->n_add++;
        v = pn->in[1 - ci];
        if (!tc__pat_same_shape(&g->values[v].info.shape, &g->values[pn->out[0]].info.shape)) return false;
    }
    const tc__node *gn = &g->nodes[c->gather];
    if (!tc__pat_plain(gn) || gn->n_in != 2 || gn->in[0] < 0 || gn->in[1] < 0 || tc__attr_int(&gn->attrs, "axis", 0) != 0)
        return false;
    const tc__tensor *table = tc__pat_const(g, gn->in[0]);
    const tc__vinfo *ii = &g->values[gn->in[1]].info;
    if (table == NULL || table->dtype != TC_DTYPE_FLOAT32 || table->rank != 2 || tc__pat_const(g, gn->in[1]) != NULL ||
        (ii->dtype != TC_DTYPE_INT64 && ii->dtype != TC_DTYPE_INT32) || ii->shape.rank < 1 ||
        ii->shape.rank + 1 != rank || !tc__dim_is_known(ii->shape.dims[ii->shape.rank - 1]))
        return false;
    c->ids = gn->in[1], c->table = gn->in[0];
    c->s = ii->shape.dims[ii->shape.rank - 1].value;
    c->d = table->dims[1];
    if (c->s < 1 || c->d < 1 || c->s > INT64_MAX / c->d || tc__tensor_numel(scale) != c->d ||
        tc__tensor_numel(bias) != c->d || scale->rank != 1 || bias->rank != 1)
        return false;
    for (int i = 0; i < c->n_add; i++)
        if (!fits_sd(tc__pat_const(g, c->addend[i]), c->s, c->d)) return false;
    return true;
}

static tc_status rewrite(tc__graph *g, const chain *c, tc__err *err) {
    int32_t a = -1;
    tc_status st = TC_STATUS_OK;
    if (c->n_add > 0) { /* A = A1 + ... + Ak as [S, D], summed in the chain's order */
        const int64_t dims[2] = {c->s, c->d};
        tc__tensor sum;
        st = tc__tensor_alloc(&sum, TC_DTYPE_FLOAT32, 2, dims, err);
        if (st != TC_STATUS_OK) return st;
        float *o = sum.data;
        for (int64_t r = 0; r < c->s; r++)
            for (int64_t j = 0; j < c->d; j++) {
                float acc = at_sd(tc__pat_const(g, c->addend[c->n_add - 1]), r, j); /* (the Add nearest the Gather) */
                for (int i = c->n_add - 2; i >= 0; i--) acc += at_sd(tc__pat_const(g, c->addend[i]), r, j);
                o[r * c->d + j] = acc;
            }
        char name[256];
        snprintf(name, sizeof name, "%.200s.embed_addend", g->nodes[c->ln].name);
        st = tc__graph_add_initializer(g, name, &sum, &a, err);
        tc__tensor_free(&sum);
        if (st != TC_STATUS_OK) return st;
    }
    const tc__node *ln0 = &g->nodes[c->ln];
    const float eps = tc__attr_float(&ln0->attrs, "epsilon", 1e-5f);
    int32_t *in = tc__arena_alloc(&g->arena, sizeof(int32_t) * 5, 4);
    tc__attr *attr = tc__arena_alloc(&g->arena, sizeof(tc__attr), 8);
    const char *op = tc__arena_strdup(&g->arena, "TcEmbedLayerNorm");
    if (in == NULL || attr == NULL || op == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    in[0] = c->ids, in[1] = c->table, in[2] = ln0->in[1], in[3] = ln0->in[2], in[4] = a;
    attr[0] = (tc__attr){.name = "epsilon", .kind = TC__ATTR_FLOAT, .f = eps};
    st = tc__graph_node_note_fused(g, c->ln, "Gather", err);
    for (int i = c->n_add - 1; i >= 0 && st == TC_STATUS_OK; i--) st = tc__graph_node_note_fused(g, c->ln, "Add", err);
    if (st == TC_STATUS_OK) st = tc__graph_node_note_fused(g, c->ln, "LayerNormalization", err);
    if (st != TC_STATUS_OK) return st;
    tc__node *ln = &g->nodes[c->ln];
    ln->op_type = op;
    ln->domain = TC__DOMAIN_INTERNAL;
    ln->in = in;
    ln->n_in = ln->n_op_in = a >= 0 ? 5 : 4;
    ln->n_out = 1;
    ln->attrs = (tc__attrs){.n = 1, .items = attr};
    ln->schema = tc__op_schema_find(TC__DOMAIN_INTERNAL, "TcEmbedLayerNorm");
    if (ln->schema == NULL) return tc__fail(err, TC_STATUS_INTERNAL, "no schema for TcEmbedLayerNorm");
    g->nodes[c->gather].removed = true;
    for (int i = 0; i < c->n_add; i++) g->nodes[c->add[i]].removed = true;
    return TC_STATUS_OK;
}

tc_status tc__pass_fuse_embed_layernorm(tc__pass_ctx *ctx) {
    tc__graph *g = ctx->g;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        chain c;
        if (g->nodes[n].removed || !match(g, n, &c)) continue;
        tc_status st = rewrite(g, &c, ctx->err);
        if (st != TC_STATUS_OK) return st;
        ctx->changes++;
    }
    return TC_STATUS_OK;
}
