/*
 * fuse_matmul_views.c - a MatMul of two computed operands (attention's Q.K^T and P.V) takes over the
 * data movement around it, as attributes of fused_attr.h the MatMul kernels read:
 *   - an operand that is Mul(x, c), c a constant one-element float: reads x and scales the product by c
 *     (TC__ATTR_MM_ALPHA multiplies up);
 *   - an operand that is Transpose(x, perm): reads x through perm (TC__ATTR_MM_A_PERM / B_PERM);
 *   - an output read only by Transpose(y, perm) keeping the last dim last: writes that Transpose's
 *     output directly (TC__ATTR_MM_Y_PERM).
 * Each absorbed node must be read only by the MatMul (or be the MatMul output's only reader). MatMuls
 * with a constant operand are left to the weight tactics (INT8, FP16, packed FP32), which take no views.
 */
#include "core/fused_attr.h"
#include "passes/passes.h"
#include "passes/pattern.h"

static bool candidate(const tc__graph *g, int32_t n) {
    const tc__node *node = &g->nodes[n];
    if (!tc__pat_is(node, "MatMul") || node->n_op_in != 2 || node->n_out != 1 || node->out[0] < 0) return false;
    for (int s = 0; s < 2; s++)
        if (node->in[s] < 0 || tc__pat_const(g, node->in[s]) != NULL) return false;
    return tc__pat_is_float(g, node->out[0]);
}

/* The perm of Transpose node t for its input's rank (ONNX default: reversed); false when unusable. */
static bool transpose_perm(const tc__graph *g, int32_t t, int64_t *perm, int32_t *rank) {
    const tc__node *tn = &g->nodes[t];
    if (tn->n_op_in != 1 || !tc__pat_plain(tn) || tn->in[0] < 0) return false;
    const int32_t r = g->values[tn->in[0]].info.shape.rank;
    if (r < 2 || r > TC_MAX_RANK) return false;
    *rank = r;
    if (!tc__attr_has(&tn->attrs, "perm")) {
        for (int32_t i = 0; i < r; i++) perm[i] = r - 1 - i;
        return true;
    }
    const int64_t *p;
    if (tc__attr_ints(&tn->attrs, "perm", &p) != (size_t)r) return false;
    bool seen[TC_MAX_RANK] = {false};
    for (int32_t i = 0; i < r; i++) {
        const int64_t a = p[i] < 0 ? p[i] + r : p[i];
        if (a < 0 || a >= r || seen[a]) return false;
        seen[a] = true;
        perm[i] = a;
    }
    return true;
}

static tc_status set_perm(tc__graph *g, int32_t n, const char *name, const int64_t *perm, int32_t rank, tc__err *err) {
    const tc__attr a = {.name = name, .kind = TC__ATTR_INTS, .n = (size_t)rank, .ints = perm};
    return tc__pat_set_attr(g, n, &a, err);
}

/* Operand s read as Mul(x, c): the MatMul reads x and its alpha takes c. */
static tc_status absorb_scale(tc__graph *g, int32_t n, int s, bool *done, tc__err *err) {
    const int32_t v = g->nodes[n].in[s];
    const int32_t m = tc__pat_producer(g, v, "Mul");
    if (m < 0 || !tc__pat_single_use(g, v)) return TC_STATUS_OK;
    const tc__node *mn = &g->nodes[m];
    if (mn->n_op_in != 2 || !tc__pat_plain(mn)) return TC_STATUS_OK;
    for (int k = 0; k < 2; k++) {
        const int32_t x = mn->in[1 - k], cv = mn->in[k];
        const tc__tensor *c = tc__pat_const(g, cv);
        if (x < 0 || c == NULL || !tc__dtype_is_float(c->dtype) || tc__tensor_numel(c) != 1) continue;
        /* c must not broadcast x to another shape or type */
        if (!tc__pat_same_shape(&g->values[x].info.shape, &g->values[v].info.shape) ||
            g->values[x].info.dtype != g->values[v].info.dtype)
            continue;
        const float alpha = tc__attr_float(&g->nodes[n].attrs, TC__ATTR_MM_ALPHA, 1.0f) * (float)tc__tensor_get_f64(c, 0);
        const tc__attr a = {.name = TC__ATTR_MM_ALPHA, .kind = TC__ATTR_FLOAT, .f = alpha};
        tc_status st = tc__pat_set_attr(g, n, &a, err);
        if (st) return st;
        g->nodes[n].in[s] = x;
        g->nodes[m].removed = true;
        *done = true;
        return tc__graph_node_note_fused(g, n, "Mul", err);
    }
    return TC_STATUS_OK;
}

/* Operand s read as Transpose(x, perm): the MatMul reads x through perm. */
static tc_status absorb_input_transpose(tc__graph *g, int32_t n, int s, bool *done, tc__err *err) {
    const char *name = s == 0 ? TC__ATTR_MM_A_PERM : TC__ATTR_MM_B_PERM;
    const int32_t v = g->nodes[n].in[s];
    const int32_t t = tc__pat_producer(g, v, "Transpose");
    if (t < 0 || !tc__pat_single_use(g, v) || tc__attr_has(&g->nodes[n].attrs, name)) return TC_STATUS_OK;
    int64_t perm[TC_MAX_RANK];
    int32_t rank;
    if (!transpose_perm(g, t, perm, &rank)) return TC_STATUS_OK;
    tc_status st = set_perm(g, n, name, perm, rank, err);
    if (st) return st;
    g->nodes[n].in[s] = g->nodes[t].in[0];
    g->nodes[t].removed = true;
    *done = true;
    return tc__graph_node_note_fused(g, n, "Transpose", err);
}

/* The output read only by Transpose(y, perm) with the last dim kept last: the MatMul writes its output. */
static tc_status absorb_output_transpose(tc__graph *g, int32_t n, bool *done, tc__err *err) {
    const tc__node *node = &g->nodes[n];
    if (!tc__epilogue_is_none(&node->epi) || tc__attr_has(&node->attrs, TC__ATTR_MM_Y_PERM)) return TC_STATUS_OK;
    const int32_t t = tc__pat_sole_consumer(g, node->out[0]);
    if (t < 0 || !tc__pat_is(&g->nodes[t], "Transpose") || g->nodes[t].n_out != 1) return TC_STATUS_OK;
    int64_t perm[TC_MAX_RANK];
    int32_t rank;
    if (!transpose_perm(g, t, perm, &rank) || perm[rank - 1] != rank - 1) return TC_STATUS_OK;
    tc_status st = set_perm(g, n, TC__ATTR_MM_Y_PERM, perm, rank, err);
    if (st) return st;
    *done = true;
    return tc__pat_absorb(g, n, 0, t, err);
}

tc_status tc__pass_fuse_matmul_views(tc__pass_ctx *ctx) {
    tc__graph *g = ctx->g;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        if (!candidate(g, n)) continue;
        /* Mul then Transpose: attention scales the transposed Q and K^T (Transpose -> Mul -> MatMul). */
        for (bool again = true; again;) {
            again = false;
            for (int s = 0; s < 2; s++) {
                bool scaled = false, viewed = false;
                tc_status st = absorb_scale(g, n, s, &scaled, ctx->err);
                if (st == TC_STATUS_OK) st = absorb_input_transpose(g, n, s, &viewed, ctx->err);
                if (st) return st;
                ctx->changes += scaled + viewed;
                again = again || scaled || viewed;
            }
        }
        bool done = false;
        tc_status st = absorb_output_transpose(g, n, &done, ctx->err);
        if (st) return st;
        if (done) ctx->changes++;
    }
    return TC_STATUS_OK;
}
