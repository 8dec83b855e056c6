/*
 * merge_qkv.c - on device backends, after fuse_attention: an Attention node (3-D form) whose Q, K and V are each the
 * output of a MatMul of one same input X by a constant weight [K, N] (with a fused constant bias or none, no other
 * epilogue, the same integer attributes such as the precision mark, each output read only by the Attention node)
 *     q = MatMul(X, Wq) + bq    k = MatMul(X, Wk) + bk    v = MatMul(X, Wv) + bv    y = Attention(q, k, v [, mask])
 * becomes one MatMul with the weights (and biases) side by side and the Attention node reading its output as packed
 * Q|K|V (TC__ATTR_QKV_PACKED, core/attention_geom.h):
 *     qkv = MatMul(X, [Wq | Wk | Wv]) + [bq | bk | bv]    y = Attention(qkv, qkv, qkv [, mask]; tc.qkv_packed = 1)
 * One launch of a GEMM three times as wide instead of three. K and V need V's head size equal to Q's.
 */
#include <stdio.h>
#include <string.h>

#include "core/fused_attr.h"
#include "passes/passes.h"
#include "passes/pattern.h"

/* The three projections of Attention node a: MatMul node indices, weight and bias (or NULL) constants. */
typedef struct proj {
    int32_t mm[3];
    const tc__tensor *w[3], *b[3];
    int64_t k, n[3];
} proj;

/* True when nodes x and y have the same attributes, all integers. */
static bool same_int_attrs(const tc__node *x, const tc__node *y) {
    if (x->attrs.n != y->attrs.n) return false;
    for (int i = 0; i < x->attrs.n; i++) {
        const tc__attr *a = &x->attrs.items[i];
        const tc__attr *b = tc__attr_find(&y->attrs, a->name);
        if (a->kind != TC__ATTR_INT || b == NULL || b->kind != TC__ATTR_INT || a->i != b->i) return false;
    }
    return true;
}

static bool match(const tc__graph *g, int32_t a, proj *p) {
    const tc__node *at = &g->nodes[a];
    if (!tc__pat_is(at, "Attention") || at->n_op_in < 3 || at->guard >= 0 || !tc__epilogue_is_none(&at->epi) ||
        tc__attr_has(&at->attrs, TC__ATTR_QKV_PACKED))
        return false;
    const int64_t hq = tc__attr_int(&at->attrs, "q_num_heads", 0), hk = tc__attr_int(&at->attrs, "kv_num_heads", 0);
    if (hq < 1 || hk < 1) return false;
    if (at->in[0] == at->in[1] || at->in[0] == at->in[2] || at->in[1] == at->in[2]) return false;
    int32_t x = -1;
    for (int i = 0; i < 3; i++) {
        const int32_t v = at->in[i];
        if (v < 0) return false;
        if (tc__graph_use_count(g, v) != 1 || !tc__pat_is_float(g, v) || g->values[v].info.shape.rank != 3) return false;
        const int32_t m = tc__pat_producer(g, v, "MatMul");
        if (m < 0) return false;
        const tc__node *mm = &g->nodes[m];
        if (mm->removed || mm->n_out != 1 || mm->n_op_in != 2 || mm->guard >= 0 || mm->in[0] < 0 ||
            mm->epi.residual_input >= 0 || mm->epi.act != TC__ACT_NONE)
            return false;
        if (x < 0) x = mm->in[0];
        if (mm->in[0] != x || (i > 0 && !same_int_attrs(mm, &g->nodes[p->mm[0]]))) return false;
        const tc__tensor *w = tc__pat_const(g, mm->in[1]);
        if (w == NULL || w->dtype != TC_DTYPE_FLOAT32 || w->rank != 2) return false;
        const tc__tensor *b = mm->epi.bias_input >= 0 ? tc__pat_const(g, mm->in[mm->epi.bias_input]) : NULL;
        if (mm->epi.bias_input >= 0 && (b == NULL || b->dtype != TC_DTYPE_FLOAT32 || b->rank != 1 ||
                                        b->dims[0] != w->dims[1]))
            return false;
        if (i > 0 && (w->dims[0] != p->k || (b == NULL) != (p->b[0] == NULL))) return false;
        p->mm[i] = m, p->w[i] = w, p->b[i] = b, p->k = w->dims[0], p->n[i] = w->dims[1];
    }
    /* Q's heads of D, K's and V's of the same D */
    return p->n[0] % hq == 0 && p->n[1] == p->n[0] / hq * hk && p->n[2] == p->n[1] && p->n[0] + 2 * p->n[1] <= INT32_MAX;
}

/* Copies the three [K, N_i] weights (rank 2) or [N_i] biases (rank 1) side by side into a new initializer. */
static tc_status concat(tc__graph *g, const char *name, const tc__tensor *const *t, int rank, int64_t rows,
                        int32_t *out, tc__err *err) {
    const int64_t n = t[0]->dims[rank - 1] + t[1]->dims[rank - 1] + t[2]->dims[rank - 1];
    const int64_t dims[2] = {rank == 2 ? rows : n, n};
    tc__tensor c;
    tc_status st = tc__tensor_alloc(&c, TC_DTYPE_FLOAT32, rank, dims, err);
    if (st != TC_STATUS_OK) return st;
    float *dst = c.data;
    for (int64_t r = 0; r < rows; r++)
        for (int i = 0; i < 3; i++) {
            const int64_t w = t[i]->dims[rank - 1];
            memcpy(dst, (const float *)t[i]->data + r * w, (size_t)w * sizeof(float));
            dst += w;
        }
    st = tc__graph_add_initializer(g, name, &c, out, err);
    tc__tensor_free(&c);
    return st;
}

static tc_status rewrite(tc__graph *g, int32_t a, const proj *p, tc__err *err) {
    tc__node *m0 = &g->nodes[p->mm[0]];
    int32_t w = -1, b = -1;
    char name[256];
    snprintf(name, sizeof name, "%s.qkv_weight", m0->name);
    tc_status st = concat(g, name, p->w, 2, p->k, &w, err);
    if (st == TC_STATUS_OK && p->b[0] != NULL) {
        snprintf(name, sizeof name, "%s.qkv_bias", g->nodes[p->mm[0]].name);
        st = concat(g, name, p->b, 1, 1, &b, err);
    }
    for (int i = 1; st == TC_STATUS_OK && i < 3; i++) {
        const tc__node *mi = &g->nodes[p->mm[i]];
        st = tc__graph_node_note_fused(g, p->mm[0], "MatMul", err);
        if (st == TC_STATUS_OK && mi->fused[0]) st = tc__graph_node_note_fused(g, p->mm[0], mi->fused, err);
    }
    if (st != TC_STATUS_OK) return st;
    m0 = &g->nodes[p->mm[0]];
    m0->in[1] = w;
    if (b >= 0) m0->in[m0->epi.bias_input] = b;
    g->nodes[p->mm[1]].removed = g->nodes[p->mm[2]].removed = true;
    tc__node *at = &g->nodes[a];
    at->in[1] = at->in[2] = at->in[0];
    const tc__attr packed = {.name = TC__ATTR_QKV_PACKED, .kind = TC__ATTR_INT, .i = 1};
    return tc__pat_set_attr(g, a, &packed, err);
}

tc_status tc__pass_merge_qkv(tc__pass_ctx *ctx) {
    tc__graph *g = ctx->g;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        proj p;
        if (g->nodes[n].removed || !match(g, n, &p)) continue;
        tc_status st = rewrite(g, n, &p, ctx->err);
        if (st != TC_STATUS_OK) return st;
        ctx->changes++;
    }
    return TC_STATUS_OK;
}
