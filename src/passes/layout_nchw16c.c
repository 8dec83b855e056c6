/*
 * layout_nchw16c.c - the layout pass: keeps 4-D float activations in a blocked layout, NCHW16c or
 * NCHW8c (core/layout.h; the block is the backend's choice for the target, a parameter here),
 * between the nodes that have blocked kernels, and inserts a reorder back to NCHW only where a
 * value leaves that region (a consumer without a blocked kernel, or a graph output).
 *
 * A value can be blocked when its channel count is static and its producer is one of:
 *   - Conv with one group (its input may be either layout: the direct kernel reads NCHW too, so a
 *     network's first convolution needs no reorder in front of it);
 *   - depthwise Conv, MaxPool, AveragePool, GlobalAveragePool (input blocked);
 *   - Add/Sub/Mul/Div of two blocked values that have the output's shape or are [N or 1, C, 1, 1]
 *     (squeeze-excite scaling);
 *   - elementwise activations (input blocked), only when C is a multiple of the block B: their
 *     tactics are layout-agnostic loops over the bytes, which would make f(0) of padding lanes.
 * When C is not a multiple of B the value is stored with C padded up to one, the padding lanes zero
 * (core/layout.h); the blocked tactics of the kinds above handle that (supports() of a tactic that
 * does not refuses it, and the engine then rejects the build rather than compute garbage). The
 * reduced-precision layers (INT8, FP16, BF16: their blocked kernels take whole blocks only) keep the
 * rule of whole blocks: their outputs are blocked only when C % B == 0, and a value with C % B != 0
 * that one of them reads is not blocked (it reads NCHW, as before padding existed).
 * The pass starts from "every such value is blocked" and un-blocks, until nothing changes, every
 * value whose producer would need a blocked input (or a blocked residual) that is not blocked.
 * Then it drops blocked outputs that nothing blocked reads when their producer read only NCHW
 * (the reorder would cost more than it saves). It records the result on the nodes in the
 * attributes tc.layout_in / tc.layout_out (and tc.layout_block when B is not 16), and reorders are
 * Identity nodes marked blocked-in.
 *
 * It runs once, after the fixpoint passes, and only when the target has the blocked kernels; the
 * engine rejects a build whose blocked node no blocked tactic supports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "core/quant_attr.h"
#include "passes/passes.h"
#include "passes/pattern.h"

typedef enum lk_kind {
    LK_NONE = 0,     /* needs NCHW inputs, writes NCHW */
    LK_CONV,         /* input 0 in either layout */
    LK_BLOCKED_IN,   /* every non-constant input blocked (pools, depthwise conv, activations) */
    LK_BINARY,       /* both inputs blocked, each the output's shape or a per-channel vector */
} lk_kind;

static const char *const kActivations[] = {"Relu", "Sigmoid", "Tanh", "HardSwish", "HardSigmoid",
                                           "LeakyRelu", "Clip", "Erf", "Gelu"};

static int64_t static_dim(const tc__shape *s, int d) { return s->rank > d ? s->dims[d].value : -1; }

/* True when v is a 4-D float32 value whose channel count is static (and, unless padded, a multiple of block). */
static bool blockable_value(const tc__graph *g, int32_t v, int64_t block, bool padded) {
    if (v < 0) return false;
    const tc__vinfo *vi = &g->values[v].info;
    int64_t c = static_dim(&vi->shape, 1);
    return vi->dtype == TC_DTYPE_FLOAT32 && vi->shape.rank == 4 && c > 0 && (padded || c % block == 0);
}

/* True when the precision passes made n a reduced-precision layer (INT8, FP16, BF16). */
static bool lowp_node(const tc__node *n) {
    return tc__attr_has(&n->attrs, TC__ATTR_INT8_SCALE) || tc__attr_has(&n->attrs, TC__ATTR_FP16) ||
           tc__attr_has(&n->attrs, TC__ATTR_BF16);
}

/* True when v is a value whose blocked form would have padding lanes. */
static bool padded_value(const tc__graph *g, int32_t v, int64_t block) {
    return v >= 0 && blockable_value(g, v, block, true) && !blockable_value(g, v, block, false);
}

static bool is_activation(const tc__node *n) {
    for (size_t i = 0; i < sizeof kActivations / sizeof kActivations[0]; i++)
        if (tc__pat_is(n, kActivations[i])) return true;
    return false;
}

/* A broadcast operand of a blocked binary op: [N or 1, C, 1, 1] with the output's N and C. */
static bool channel_vector(const tc__shape *a, const tc__shape *y) {
    return a->rank == 4 && y->rank == 4 && (static_dim(a, 0) == 1 || tc__dim_same(a->dims[0], y->dims[0])) &&
           tc__dim_same(a->dims[1], y->dims[1]) && static_dim(a, 2) == 1 && static_dim(a, 3) == 1;
}

/* True when node n writes a blocked output 0 (and so reads its inputs as the pass marked them). */
static bool node_blocked(const tc__node *n, const bool *blocked) {
    return !n->removed && n->n_out > 0 && n->out[0] >= 0 && blocked[n->out[0]];
}

static lk_kind conv_kind(const tc__graph *g, const tc__node *n, int64_t block) {
    int32_t x = n->in[0], w = n->n_op_in > 1 ? n->in[1] : -1;
    if (w < 0 || g->values[w].init == NULL || g->values[w].init->rank != 4) return LK_NONE;
    const int64_t group = tc__attr_int(&n->attrs, "group", 1), *wd = g->values[w].init->dims;
    if (group == 1) return LK_CONV;
    if (blockable_value(g, x, block, true) && group == static_dim(&g->values[x].info.shape, 1) && wd[0] == group &&
        wd[1] == 1)
        return LK_BLOCKED_IN;
    return LK_NONE;
}

/* What a node could do in the blocked layout, from its type and static shapes. */
static lk_kind node_kind(const tc__graph *g, const tc__node *n, int64_t block) {
    if (n->removed || n->n_out < 1 || !blockable_value(g, n->out[0], block, !lowp_node(n)) || n->n_op_in < 1 ||
        n->in[0] < 0)
        return LK_NONE;
    if (n->epi.bias_input >= 0) return LK_NONE; /* a bias over W would be applied in the wrong order */
    for (int o = 1; o < n->n_out; o++)
        if (n->out[o] >= 0) return LK_NONE;
    if (tc__pat_is(n, "Conv")) return conv_kind(g, n, block);
    if (tc__pat_is(n, "MaxPool") || tc__pat_is(n, "AveragePool") || tc__pat_is(n, "GlobalAveragePool") ||
        (is_activation(n) && blockable_value(g, n->out[0], block, false)))
        return LK_BLOCKED_IN;
    if ((tc__pat_is(n, "Add") || tc__pat_is(n, "Sub") || tc__pat_is(n, "Mul") || tc__pat_is(n, "Div")) &&
        n->n_op_in == 2) {
        const tc__shape *y = &g->values[n->out[0]].info.shape;
        for (int i = 0; i < 2; i++) {
            int32_t v = n->in[i];
            if (v < 0 || g->values[v].init != NULL) return LK_NONE;
            const tc__shape *s = &g->values[v].info.shape;
            if (!tc__pat_same_shape(s, y) && !channel_vector(s, y)) return LK_NONE;
        }
        return LK_BINARY;
    }
    return LK_NONE;
}

/* True when every input that kind k needs blocked is blocked (epilogue residual included). */
static bool inputs_ok(const tc__graph *g, const tc__node *n, lk_kind k, const bool *blocked) {
    if (n->epi.residual_input >= 0 && !blocked[n->in[n->epi.residual_input]]) return false;
    if (k == LK_CONV) return true;
    for (int i = 0; i < n->n_op_in; i++) {
        int32_t v = n->in[i];
        if (v < 0 || g->values[v].init != NULL) {
            if (k == LK_BINARY) return false;
            continue; /* weights, bias, Clip's bounds */
        }
        if (!blocked[v]) return false;
    }
    return true;
}

/* True when some live node reads v as a blocked input (its own output is blocked). */
static bool read_blocked(const tc__graph *g, int32_t v, const bool *blocked) {
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const tc__node *node = &g->nodes[n];
        if (!node_blocked(node, blocked)) continue;
        for (int i = 0; i < node->n_in; i++)
            if (node->in[i] == v) return true;
    }
    return false;
}

/* True when node n reads no blocked value. */
static bool reads_only_nchw(const tc__node *n, const bool *blocked) {
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i] >= 0 && blocked[n->in[i]]) return false;
    return true;
}

/* Decides blocked[v] for every value; returns the number of blocked values. */
static int decide(const tc__graph *g, const lk_kind *kind, bool *blocked, int64_t block) {
    for (int32_t n = 0; n < g->n_nodes; n++)
        if (kind[n] != LK_NONE) blocked[g->nodes[n].out[0]] = true;
    for (bool changed = true; changed;) {
        changed = false;
        for (int32_t n = 0; n < g->n_nodes; n++) /* a reduced-precision layer reads no padded value blocked */
            if (!g->nodes[n].removed && lowp_node(&g->nodes[n]))
                for (int i = 0; i < g->nodes[n].n_in; i++) {
                    const int32_t v = g->nodes[n].in[i];
                    if (v >= 0 && blocked[v] && padded_value(g, v, block)) blocked[v] = false, changed = true;
                }
        for (int32_t n = 0; n < g->n_nodes; n++) {
            const tc__node *node = &g->nodes[n];
            if (kind[n] == LK_NONE || !blocked[node->out[0]]) continue;
            bool useless = reads_only_nchw(node, blocked) && !read_blocked(g, node->out[0], blocked);
            if (!inputs_ok(g, node, kind[n], blocked) || useless) {
                blocked[node->out[0]] = false;
                changed = true;
            }
        }
    }
    int count = 0;
    for (int32_t v = 0; v < g->n_values; v++) count += blocked[v];
    return count;
}

static tc_status set_int_attr(tc__graph *g, int32_t n, const char *name, int64_t v, tc__err *err) {
    tc__attr a = {.name = name, .kind = TC__ATTR_INT, .i = v};
    return tc__pat_set_attr(g, n, &a, err);
}

/* Inserts `plain = Identity(v)` (a reorder to NCHW) and points every NCHW reader of v at it. When v is
 * a graph output, the producer writes a new blocked value instead and the reorder writes v. */
static tc_status insert_reorder(tc__pass_ctx *ctx, int32_t v, bool **blocked, int64_t block) {
    tc__graph *g = ctx->g;
    char name[320];
    snprintf(name, sizeof name, "%.200s/nchw%dc", g->values[v].name, (int)block);
    for (int k = 1; tc__graph_find_value(g, name) >= 0; k++)
        snprintf(name, sizeof name, "%.200s/nchw%dc_%d", g->values[v].name, (int)block, k);
    int32_t nv, node;
    tc_status st = tc__graph_add_value(g, name, &nv, ctx->err);
    if (st) return st;
    bool *grown = realloc(*blocked, sizeof(bool) * (size_t)g->n_values);
    if (grown == NULL) return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    *blocked = grown;
    g->values[nv].info = g->values[v].info;
    int32_t blk = v, plain = nv;
    if (g->values[v].is_output) { /* keep the output's name on the NCHW value */
        blk = nv, plain = v;
        grown[nv] = true, grown[v] = false;
    } else {
        grown[nv] = false;
    }
    const int32_t producer = g->values[v].producer;
    for (int32_t n = 0; n < g->n_nodes; n++) { /* readers: blocked ones read blk, NCHW ones plain */
        tc__node *r = &g->nodes[n];
        if (r->removed || n == producer) continue;
        const bool reader_blocked = node_blocked(r, grown);
        for (int i = 0; i < r->n_in; i++)
            if (r->in[i] == v) r->in[i] = reader_blocked ? blk : plain;
    }
    if (blk != v) tc__pat_set_output(g, producer, 0, blk);
    snprintf(name, sizeof name, "%.200s/to_nchw", g->values[v].name);
    st = tc__graph_add_node(g, name, "Identity", "", 1, 1, &node, ctx->err);
    if (st) return st;
    g->nodes[node].in[0] = blk;
    g->nodes[node].n_op_in = 1;
    tc__pat_set_output(g, node, 0, plain);
    ctx->changes++;
    st = set_int_attr(g, node, TC__ATTR_LAYOUT_IN, 1, ctx->err);
    if (st == TC_STATUS_OK && block != TC__LAYOUT_BLOCK) st = set_int_attr(g, node, TC__ATTR_LAYOUT_BLOCK, block, ctx->err);
    return st;
}

/* True when a live node that is not blocked reads v, or v is a graph output. */
static bool needs_nchw_copy(const tc__graph *g, int32_t v, const bool *blocked) {
    if (g->values[v].is_output) return true;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const tc__node *r = &g->nodes[n];
        if (r->removed || node_blocked(r, blocked)) continue;
        for (int i = 0; i < r->n_in; i++)
            if (r->in[i] == v) return true;
    }
    return false;
}

/* Records the decision on the blocked nodes: tc.layout_out, the tc.layout_in bits and tc.layout_block. */
static tc_status mark_nodes(tc__pass_ctx *ctx, const bool *blocked, int32_t n_nodes, int64_t block) {
    tc__graph *g = ctx->g;
    for (int32_t n = 0; n < n_nodes; n++) {
        const tc__node *node = &g->nodes[n];
        if (!node_blocked(node, blocked)) continue;
        int64_t bits = 0;
        for (int i = 0; i < node->n_in && i < 32; i++)
            if (node->in[i] >= 0 && blocked[node->in[i]]) bits |= (int64_t)1 << i;
        tc_status st = set_int_attr(g, n, TC__ATTR_LAYOUT_OUT, 1, ctx->err);
        if (st == TC_STATUS_OK && bits) st = set_int_attr(g, n, TC__ATTR_LAYOUT_IN, bits, ctx->err);
        if (st == TC_STATUS_OK && block != TC__LAYOUT_BLOCK) st = set_int_attr(g, n, TC__ATTR_LAYOUT_BLOCK, block, ctx->err);
        if (st) return st;
        ctx->changes++;
    }
    return TC_STATUS_OK;
}

tc_status tc__pass_layout_nchwc(tc__pass_ctx *ctx, int64_t block) {
    if (block != TC__LAYOUT_BLOCK && block != TC__LAYOUT_BLOCK_AVX2)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "layout pass: block %lld is not 16 or 8", (long long)block);
    tc__graph *g = ctx->g;
    const int32_t n_nodes = g->n_nodes, n_values = g->n_values;
    lk_kind *kind = calloc((size_t)n_nodes + 1, sizeof *kind);
    bool *blocked = calloc((size_t)n_values + 1, sizeof *blocked);
    tc_status st = TC_STATUS_OK;
    if (kind == NULL || blocked == NULL) {
        st = tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        goto out;
    }
    for (int32_t n = 0; n < n_nodes; n++) kind[n] = node_kind(g, &g->nodes[n], block);
    if (decide(g, kind, blocked, block) == 0) goto out;
    st = mark_nodes(ctx, blocked, n_nodes, block);
    for (int32_t v = 0; v < n_values && st == TC_STATUS_OK; v++)
        if (blocked[v] && needs_nchw_copy(g, v, blocked)) st = insert_reorder(ctx, v, &blocked, block);
out:
    free(kind);
    free(blocked);
    return st;
}

tc_status tc__pass_layout_nchw16c(tc__pass_ctx *ctx) { return tc__pass_layout_nchwc(ctx, TC__LAYOUT_BLOCK); }
