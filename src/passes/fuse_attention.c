/*
 * fuse_attention.c - exported transformers' attention, after fuse_matmul_views and fuse_softmax_mask, becomes one
 * ONNX Attention node (3-D form) for backends that have a fused attention kernel (the engine runs this pass for
 * device backends; the CPU keeps its MatMul/Softmax steps):
 *     q4 = Reshape(q3 [B,S,H*D]) [B,S,H,D]   k4 = Reshape(k3) [B,L,H,D]   v4 = Reshape(v3) [B,L,H,Dv]
 *     s  = MatMul(q4 via perm 0,2,1,3, k4 via perm 0,2,3,1) * alpha              [B,H,S,L]
 *     p  = Softmax(s [+ mask], last axis) [NaN -> c]
 *     o  = MatMul(p, v4 via perm 0,2,1,3) written through perm 0,2,1,3           [B,S,H,Dv]
 *     y  = Reshape(o) [B,S,H*Dv]
 * becomes y = Attention(q3, k3, v3 [, mask]; q_num_heads = kv_num_heads = H, scale = alpha (1 without one),
 * tc.nan_to = c when the Softmax had the guard). s, p and o must be read only by the next node of the chain, every
 * value float32, no epilogue on any node. The Reshapes to q4, k4, v4 are left to eliminate_dead.
 */
#include <string.h>

#include "core/fused_attr.h"
#include "passes/passes.h"
#include "passes/pattern.h"

/* True when node n has the ints attribute `name` and it is the rank-4 permutation p. */
static bool perm_is(const tc__node *n, const char *name, const int64_t *p) {
    const int64_t *a = NULL;
    return tc__attr_has(&n->attrs, name) && tc__attr_ints(&n->attrs, name, &a) == 4 && memcmp(a, p, 4 * sizeof *a) == 0;
}

/* x4 = Reshape(x3) with x3 [B, T, H*E] and x4 [B, T, H, E] (H, E known): x3's value, or -1. */
static int32_t head_split(const tc__graph *g, int32_t x4, int64_t *h, int64_t *e) {
    const int32_t r = tc__pat_producer(g, x4, "Reshape");
    if (r < 0 || !tc__pat_plain(&g->nodes[r]) || g->nodes[r].in[0] < 0) return -1;
    const int32_t x3 = g->nodes[r].in[0];
    const tc__vinfo *a = &g->values[x3].info, *b = &g->values[x4].info;
    if (a->dtype != TC_DTYPE_FLOAT32 || b->dtype != TC_DTYPE_FLOAT32 || a->shape.rank != 3 || b->shape.rank != 4)
        return -1;
    const tc__dim *ad = a->shape.dims, *bd = b->shape.dims;
    if (!tc__dim_same(ad[0], bd[0]) || !tc__dim_same(ad[1], bd[1]) || !tc__dim_is_known(ad[2]) ||
        !tc__dim_is_known(bd[2]) || !tc__dim_is_known(bd[3]) || bd[2].value * bd[3].value != ad[2].value)
        return -1;
    *h = bd[2].value, *e = bd[3].value;
    return x3;
}

typedef struct chain {
    int32_t qk, sm, pv, rs;   /* the nodes */
    int32_t q3, k3, v3, mask; /* the Attention's inputs (mask -1 when none) */
    int32_t q4, k4, v4;
    int64_t h;
} chain;

static bool match(const tc__graph *g, int32_t sm, chain *c) {
    static const int64_t kA[4] = {0, 2, 1, 3}, kB[4] = {0, 2, 3, 1};
    const tc__node *s = &g->nodes[sm];
    if (!tc__pat_is(s, "Softmax") || s->n_out != 1 || s->out[0] < 0 || s->in[0] < 0 || !tc__pat_plain(s)) return false;
    const bool adds = tc__softmax_adds(&s->attrs);
    if (s->n_op_in != (adds ? 2 : 1)) return false;
    const tc__vinfo *si = &g->values[s->in[0]].info;
    const int64_t axis = tc__attr_int(&s->attrs, "axis", g->opset < 13 ? 1 : -1);
    if (si->dtype != TC_DTYPE_FLOAT32 || si->shape.rank != 4 || (axis != -1 && axis != 3)) return false;
    memset(c, 0, sizeof *c);
    c->sm = sm;
    c->mask = adds ? s->in[1] : -1;
    if (adds && (c->mask < 0 || g->values[c->mask].info.dtype != TC_DTYPE_FLOAT32)) return false;
    /* scores = QK MatMul */
    c->qk = tc__pat_producer(g, s->in[0], "MatMul");
    if (c->qk < 0 || !tc__pat_single_use(g, s->in[0])) return false;
    const tc__node *qk = &g->nodes[c->qk];
    if (qk->n_op_in != 2 || !tc__pat_plain(qk) || qk->n_in != 2 || !perm_is(qk, TC__ATTR_MM_A_PERM, kA) ||
        !perm_is(qk, TC__ATTR_MM_B_PERM, kB) || tc__attr_has(&qk->attrs, TC__ATTR_MM_Y_PERM))
        return false;
    /* probabilities -> PV MatMul -> Reshape */
    const int32_t p = s->out[0];
    c->pv = tc__pat_sole_consumer(g, p);
    if (c->pv < 0 || !tc__pat_single_use(g, p) || tc__pat_is_graph_output(g, p)) return false;
    const tc__node *pv = &g->nodes[c->pv];
    if (!tc__pat_is(pv, "MatMul") || pv->n_op_in != 2 || pv->n_in != 2 || !tc__pat_plain(pv) || pv->in[0] != p ||
        pv->n_out != 1 || pv->out[0] < 0 || tc__attr_has(&pv->attrs, TC__ATTR_MM_A_PERM) ||
        tc__attr_has(&pv->attrs, TC__ATTR_MM_ALPHA) || !perm_is(pv, TC__ATTR_MM_B_PERM, kA) ||
        !perm_is(pv, TC__ATTR_MM_Y_PERM, kA))
        return false;
    const int32_t o = pv->out[0];
    c->rs = tc__pat_sole_consumer(g, o);
    if (c->rs < 0 || !tc__pat_single_use(g, o) || tc__pat_is_graph_output(g, o)) return false;
    const tc__node *rs = &g->nodes[c->rs];
    if (!tc__pat_is(rs, "Reshape") || !tc__pat_plain(rs) || rs->in[0] != o || rs->n_out != 1 || rs->out[0] < 0)
        return false;
    /* the head splits */
    int64_t hq, d, hk, dk, hv, dv;
    c->q4 = qk->in[0], c->k4 = qk->in[1], c->v4 = pv->in[1];
    if (c->q4 < 0 || c->k4 < 0 || c->v4 < 0) return false;
    c->q3 = head_split(g, c->q4, &hq, &d);
    c->k3 = head_split(g, c->k4, &hk, &dk);
    c->v3 = head_split(g, c->v4, &hv, &dv);
    if (c->q3 < 0 || c->k3 < 0 || c->v3 < 0 || hq != hk || hq != hv || d != dk) return false;
    c->h = hq;
    /* y = [B, S, H*Dv] */
    const tc__vinfo *yi = &g->values[rs->out[0]].info, *qi = &g->values[c->q3].info;
    if (yi->dtype != TC_DTYPE_FLOAT32 || yi->shape.rank != 3 || !tc__dim_same(yi->shape.dims[0], qi->shape.dims[0]) ||
        !tc__dim_same(yi->shape.dims[1], qi->shape.dims[1]) || !tc__dim_is_known(yi->shape.dims[2]) ||
        yi->shape.dims[2].value != hq * dv)
        return false;
    return true;
}

static tc_status rewrite(tc__graph *g, const chain *c, tc__err *err) {
    const tc__node *qk = &g->nodes[c->qk], *sm = &g->nodes[c->sm];
    const float alpha = tc__attr_float(&qk->attrs, TC__ATTR_MM_ALPHA, 1.0f);
    const bool guard = tc__attr_has(&sm->attrs, TC__ATTR_NAN_TO);
    const float nan_to = tc__attr_float(&sm->attrs, TC__ATTR_NAN_TO, 0.0f);
    const int n_in = c->mask >= 0 ? 4 : 3;
    int32_t *in = tc__arena_alloc(&g->arena, sizeof(int32_t) * 4, 4);
    tc__attr *attr = tc__arena_alloc(&g->arena, sizeof(tc__attr) * 4, 8);
    const char *op = tc__arena_strdup(&g->arena, "Attention");
    if (in == NULL || attr == NULL || op == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    in[0] = c->q3, in[1] = c->k3, in[2] = c->v3, in[3] = c->mask;
    int n_attr = 0;
    attr[n_attr++] = (tc__attr){.name = "q_num_heads", .kind = TC__ATTR_INT, .i = c->h};
    attr[n_attr++] = (tc__attr){.name = "kv_num_heads", .kind = TC__ATTR_INT, .i = c->h};
    attr[n_attr++] = (tc__attr){.name = "scale", .kind = TC__ATTR_FLOAT, .f = alpha};
    if (guard) attr[n_attr++] = (tc__attr){.name = TC__ATTR_NAN_TO, .kind = TC__ATTR_FLOAT, .f = nan_to};
    const char *fused = qk->fused, *sm_fused = sm->fused;
    tc__node *rs = &g->nodes[c->rs];
    rs->op_type = op;
    rs->domain = "";
    rs->in = in;
    rs->n_in = rs->n_op_in = n_in;
    rs->attrs = (tc__attrs){.n = (size_t)n_attr, .items = attr};
    rs->schema = tc__op_schema_find("", "Attention");
    if (rs->schema == NULL) return tc__fail(err, TC_STATUS_INTERNAL, "no schema for Attention");
    rs->fused = "";
    tc_status st = tc__graph_node_note_fused(g, c->rs, "MatMul", err);
    if (st == TC_STATUS_OK && fused[0]) st = tc__graph_node_note_fused(g, c->rs, fused, err);
    if (st == TC_STATUS_OK) st = tc__graph_node_note_fused(g, c->rs, "Softmax", err);
    if (st == TC_STATUS_OK && sm_fused[0]) st = tc__graph_node_note_fused(g, c->rs, sm_fused, err);
    if (st == TC_STATUS_OK) st = tc__graph_node_note_fused(g, c->rs, "MatMul+Reshape", err);
    if (st != TC_STATUS_OK) return st;
    g->nodes[c->qk].removed = g->nodes[c->sm].removed = g->nodes[c->pv].removed = true;
    return TC_STATUS_OK;
}

tc_status tc__pass_fuse_attention(tc__pass_ctx *ctx) {
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
