/*
 * fuse_softmax_mask.c - folds the attention mask's Add into the Softmax that reads it:
 *     s = Add(x, m), y = Softmax(s)      (over the last axis)
 * becomes y = Softmax(x, m) with TC__ATTR_SOFTMAX_ADD = 1: the Softmax kernels add m's row as they load x's, so the
 * sum is neither written nor read again (BERT-base: 12 steps that wrote and read 0.8 MB). m must broadcast to x's
 * shape (NumPy rules) without broadcasting along the axis, s must be read only by the Softmax, and x, m and s must be
 * float32 and computed (a constant addend is a bias: fuse_matmul_bias's, which runs earlier in the round, as does
 * fuse_residual for addends of x's own shape).
 */
#include "core/fused_attr.h"
#include "passes/passes.h"
#include "passes/pattern.h"

/* True when m broadcasts to shape x (rank >= 1) keeping its last dim, provably (known or the same symbol). */
static bool mask_fits(const tc__shape *x, const tc__shape *m) {
    if (x->rank < 1 || m->rank < 1 || m->rank > x->rank) return false;
    for (int32_t i = 0; i < m->rank; i++) {
        const tc__dim d = m->dims[i], e = x->dims[i + x->rank - m->rank];
        const bool last = i == m->rank - 1;
        if (!tc__dim_same(d, e) && (last || d.value != 1)) return false;
    }
    return true;
}

/* True when Softmax node p normalises its input's last axis (of rank >= 1). */
static bool last_axis(const tc__graph *g, const tc__node *p, int32_t rank) {
    const int64_t axis = tc__attr_int(&p->attrs, "axis", g->opset < 13 ? 1 : -1);
    return rank >= 1 && (axis == -1 || axis == rank - 1);
}

/* The Add feeding Softmax node p that fits, with its summand operand (x) in *xi; -1 when none. */
static int32_t match(const tc__graph *g, const tc__node *p, int *xi) {
    if (p->n_op_in != 1 || !tc__pat_plain(p) || p->n_out != 1 || p->out[0] < 0 || p->in[0] < 0) return -1;
    if (tc__attr_has(&p->attrs, TC__ATTR_SOFTMAX_ADD)) return -1;
    const int32_t s = p->in[0];
    const int32_t a = tc__pat_producer(g, s, "Add");
    if (a < 0) return -1;
    const tc__node *add = &g->nodes[a];
    if (add->n_op_in != 2 || !tc__pat_plain(add) || add->n_out != 1 || !tc__pat_single_use(g, s)) return -1;
    const tc__vinfo *si = &g->values[s].info;
    if (si->dtype != TC_DTYPE_FLOAT32 || !last_axis(g, p, si->shape.rank)) return -1;
    for (int k = 0; k < 2; k++) {
        const int32_t x = add->in[k], m = add->in[1 - k];
        if (x < 0 || m < 0 || tc__pat_const(g, x) != NULL || tc__pat_const(g, m) != NULL) continue;
        const tc__vinfo *xv = &g->values[x].info, *mv = &g->values[m].info;
        if (xv->dtype != TC_DTYPE_FLOAT32 || mv->dtype != TC_DTYPE_FLOAT32) continue;
        if (!tc__pat_same_shape(&xv->shape, &si->shape) || !mask_fits(&xv->shape, &mv->shape)) continue;
        *xi = k;
        return a;
    }
    return -1;
}

tc_status tc__pass_fuse_softmax_mask(tc__pass_ctx *ctx) {
    tc__graph *g = ctx->g;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        if (!tc__pat_is(&g->nodes[n], "Softmax")) continue;
        int xi = 0;
        const int32_t a = match(g, &g->nodes[n], &xi);
        if (a < 0) continue;
        const int32_t x = g->nodes[a].in[xi], m = g->nodes[a].in[1 - xi];
        int idx = 0;
        tc_status st = tc__graph_node_add_input(g, n, m, &idx, ctx->err);
        if (st) return st;
        const tc__attr attr = {.name = TC__ATTR_SOFTMAX_ADD, .kind = TC__ATTR_INT, .i = 1};
        st = tc__pat_set_attr(g, n, &attr, ctx->err);
        if (st) return st;
        tc__node *sm = &g->nodes[n];
        sm->in[0] = x;
        sm->n_op_in = 2; /* (idx is 1: the Softmax had one input) */
        g->nodes[a].removed = true;
        st = tc__graph_node_note_fused(g, n, "Add", ctx->err);
        if (st) return st;
        ctx->changes++;
    }
    return TC_STATUS_OK;
}
