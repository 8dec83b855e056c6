/*
 * fuse_activation.c - an activation whose input comes from a Conv, Gemm, MatMul or Add that
 * nothing else reads becomes the activation of that producer's epilogue: Relu, Clip (constant
 * bounds), Sigmoid, Tanh, LeakyRelu, HardSigmoid, HardSwish, Gelu (none / tanh), SiLU
 * written as x * Sigmoid(x), and a QDQ model's per-tensor QuantizeLinear -> DequantizeLinear pair
 * (fake quantization) when the DequantizeLinear is the only reader of the QuantizeLinear.
 */
#include <math.h>
#include <string.h>

#include "passes/passes.h"
#include "passes/pattern.h"

static bool is_producer_op(const tc__node *node) {
    return tc__pat_is(node, "Conv") || tc__pat_is(node, "Gemm") || tc__pat_is(node, "MatMul") ||
           tc__pat_is(node, "Add");
}

/* Reads Clip's bound input i (absent or empty: dflt); false when it is not a known scalar. */
static bool clip_bound(const tc__graph *g, const tc__node *node, int i, float dflt, float *out) {
    *out = dflt;
    if (i >= node->n_op_in || node->in[i] < 0) return true;
    const tc__tensor *t = tc__pat_const(g, node->in[i]);
    if (t == NULL) return false;
    int64_t n = tc__tensor_numel(t);
    if (n == 0) return true;
    if (n != 1 || !tc__dtype_is_float(t->dtype)) return false;
    *out = (float)tc__tensor_get_f64(t, 0);
    return true;
}

/* Describes activation node `node` as an epilogue activation; false when it is not one we fuse. */
static bool act_of(const tc__graph *g, const tc__node *node, tc__epilogue *e) {
    e->alpha = e->beta = 0.0f;
    const tc__attrs *at = &node->attrs;
    if (tc__pat_is(node, "Relu")) e->act = TC__ACT_RELU;
    else if (tc__pat_is(node, "Sigmoid")) e->act = TC__ACT_SIGMOID;
    else if (tc__pat_is(node, "Tanh")) e->act = TC__ACT_TANH;
    else if (tc__pat_is(node, "HardSwish")) e->act = TC__ACT_HARDSWISH;
    else if (tc__pat_is(node, "LeakyRelu")) {
        e->act = TC__ACT_LEAKY_RELU;
        e->alpha = tc__attr_float(at, "alpha", 0.01f);
    } else if (tc__pat_is(node, "HardSigmoid")) {
        e->act = TC__ACT_HARDSIGMOID;
        e->alpha = tc__attr_float(at, "alpha", 0.2f);
        e->beta = tc__attr_float(at, "beta", 0.5f);
    } else if (tc__pat_is(node, "Gelu")) {
        const char *approx = tc__attr_string(at, "approximate", "none");
        if (strcmp(approx, "none") == 0) e->act = TC__ACT_GELU_ERF;
        else if (strcmp(approx, "tanh") == 0) e->act = TC__ACT_GELU_TANH;
        else return false;
    } else if (tc__pat_is(node, "Clip")) {
        e->act = TC__ACT_CLIP;
        if (g->opset < 11) {
            e->alpha = tc__attr_has(at, "min") ? tc__attr_float(at, "min", 0.0f) : -INFINITY;
            e->beta = tc__attr_has(at, "max") ? tc__attr_float(at, "max", 0.0f) : INFINITY;
        } else if (!clip_bound(g, node, 1, -INFINITY, &e->alpha) || !clip_bound(g, node, 2, INFINITY, &e->beta)) {
            return false;
        }
    } else {
        return false;
    }
    return true;
}

/* The producer of v whose epilogue can take an activation, or -1. */
static int32_t fusable_producer(const tc__graph *g, int32_t v) {
    int32_t p = tc__pat_producer(g, v, NULL);
    if (p < 0) return -1;
    const tc__node *pn = &g->nodes[p];
    if (!is_producer_op(pn) || pn->n_out != 1 || pn->epi.act != TC__ACT_NONE || !tc__pat_is_float(g, v)) return -1;
    return p;
}

/* x * Sigmoid(x): s is the Sigmoid on x; returns the Mul when the pattern holds, else -1. */
static int32_t silu_mul(const tc__graph *g, int32_t s, int32_t x) {
    if (tc__graph_use_count(g, x) != 2 || g->values[x].is_output) return -1;
    int32_t m = tc__pat_sole_consumer(g, g->nodes[s].out[0]);
    if (m < 0) return -1;
    const tc__node *mn = &g->nodes[m];
    if (!tc__pat_is(mn, "Mul") || !tc__pat_plain(mn) || mn->n_op_in != 2 || mn->n_out != 1) return -1;
    int32_t sv = g->nodes[s].out[0];
    if (!((mn->in[0] == x && mn->in[1] == sv) || (mn->in[0] == sv && mn->in[1] == x))) return -1;
    return m;
}

tc_status tc__pass_fuse_activation(tc__pass_ctx *ctx) {
    tc__graph *g = ctx->g;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const tc__node *an = &g->nodes[n];
        if (an->removed || !tc__pat_plain(an) || an->n_op_in < 1 || an->in[0] < 0 || an->n_out < 1 || an->out[0] < 0)
            continue;
        tc__epilogue e;
        int32_t dq = -1; /* a Q -> DQ pair: the DequantizeLinear */
        if (tc__pat_is(an, "QuantizeLinear")) {
            dq = tc__pat_sole_consumer(g, an->out[0]);
            e.act = TC__ACT_FAKE_QUANT;
            if (dq < 0 || !tc__pat_plain(&g->nodes[dq]) || !tc__qdq_pair(g, n, dq, &e.alpha, &e.beta)) continue;
        } else if (!act_of(g, an, &e)) {
            continue;
        }
        int32_t x = an->in[0];
        int32_t p = fusable_producer(g, x);
        if (p < 0) continue;
        tc_status st;
        if (dq >= 0 && tc__pat_single_use(g, x)) {
            g->nodes[p].epi.act = e.act;
            g->nodes[p].epi.alpha = e.alpha;
            g->nodes[p].epi.beta = e.beta;
            st = tc__pat_absorb(g, p, 0, n, ctx->err); /* p writes the codes for a moment, then the DQ's output */
            if (st == TC_STATUS_OK) st = tc__pat_absorb(g, p, 0, dq, ctx->err);
        } else if (dq >= 0) {
            continue;
        } else if (tc__pat_single_use(g, x)) {
            g->nodes[p].epi.act = e.act;
            g->nodes[p].epi.alpha = e.alpha;
            g->nodes[p].epi.beta = e.beta;
            st = tc__pat_absorb(g, p, 0, n, ctx->err);
        } else {
            int32_t m = e.act == TC__ACT_SIGMOID ? silu_mul(g, n, x) : -1;
            if (m < 0) continue;
            g->nodes[p].epi.act = TC__ACT_SILU;
            g->nodes[p].epi.alpha = g->nodes[p].epi.beta = 0.0f;
            g->nodes[n].removed = true;
            st = tc__graph_node_note_fused(g, p, "Sigmoid", ctx->err);
            if (st == TC_STATUS_OK) st = tc__pat_absorb(g, p, 0, m, ctx->err);
        }
        if (st) return st;
        ctx->changes++;
    }
    return TC_STATUS_OK;
}
