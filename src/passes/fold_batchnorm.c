/*
 * fold_batchnorm.c - folds an inference BatchNormalization into the Conv (or Gemm on [N, C])
 * that feeds it: y = s * z + t per channel, with s = scale / sqrt(var + eps) and
 * t = B - mean * s, goes into new weight and bias initializers. The originals are left
 * untouched (another node may share them); eliminate_dead drops them when unused.
 */
#include <math.h>
#include <stdlib.h>

#include "passes/passes.h"
#include "passes/pattern.h"

/* Per-channel affine form of a BatchNormalization with constant parameters. */
typedef struct bn_affine {
    int64_t c;
    double *s, *t; /* malloc'd, c elements each */
} bn_affine;

static void affine_free(bn_affine *a) {
    free(a->s);
    free(a->t);
}

/* Reads BN node bn into a->s, a->t when it is foldable; returns false (nothing allocated) otherwise. */
static bool bn_read(const tc__graph *g, const tc__node *bn, bn_affine *a) {
    a->s = a->t = NULL;
    if (bn->n_op_in < 5 || !tc__pat_plain(bn) || bn->out[0] < 0) return false;
    for (int o = 1; o < bn->n_out; o++)
        if (bn->out[o] >= 0 && tc__graph_use_count(g, bn->out[o]) > 0) return false;
    if (g->opset >= 14 && tc__attr_int(&bn->attrs, "training_mode", 0) != 0) return false;
    if (g->opset < 9 && tc__attr_int(&bn->attrs, "spatial", 1) != 1) return false;
    const tc__tensor *p[4];
    for (int i = 0; i < 4; i++) {
        p[i] = bn->in[i + 1] >= 0 ? tc__pat_const(g, bn->in[i + 1]) : NULL;
        if (p[i] == NULL || !tc__dtype_is_float(p[i]->dtype)) return false;
    }
    int64_t c = tc__tensor_numel(p[0]);
    if (c <= 0) return false;
    for (int i = 1; i < 4; i++)
        if (tc__tensor_numel(p[i]) != c) return false;
    a->c = c;
    a->s = malloc(sizeof(double) * (size_t)c);
    a->t = malloc(sizeof(double) * (size_t)c);
    if (a->s == NULL || a->t == NULL) {
        affine_free(a);
        return false;
    }
    double eps = tc__attr_float(&bn->attrs, "epsilon", 1e-5f);
    for (int64_t k = 0; k < c; k++) {
        double scale = tc__tensor_get_f64(p[0], k), bias = tc__tensor_get_f64(p[1], k);
        double mean = tc__tensor_get_f64(p[2], k), var = tc__tensor_get_f64(p[3], k);
        a->s[k] = scale / sqrt(var + eps);
        a->t[k] = bias - mean * a->s[k];
    }
    return true;
}

/* Adds an initializer named after base with the given dtype and shape, filled by vals (n elements). */
static tc_status add_f64_init(tc__graph *g, const char *base, tc_dtype dt, int32_t rank, const int64_t *dims,
                              const double *vals, int32_t *out, tc__err *err) {
    tc__tensor t;
    tc_status st = tc__tensor_alloc(&t, dt, rank, dims, err);
    if (st) return st;
    int64_t n = tc__tensor_numel(&t);
    for (int64_t i = 0; i < n; i++) tc__tensor_set_f64(&t, i, vals[i]);
    st = tc__graph_add_initializer(g, base, &t, out, err);
    tc__tensor_free(&t);
    return st;
}

/* Sets node n's op input 2 (bias / C) to v, appending the input when the node has only two. */
static tc_status set_input2(tc__graph *g, int32_t n, int32_t v, tc__err *err) {
    tc__node *node = &g->nodes[n];
    if (node->n_op_in >= 3) {
        node->in[2] = v;
        return TC_STATUS_OK;
    }
    int idx = 0;
    tc_status st = tc__graph_node_add_input(g, n, v, &idx, err);
    if (st) return st;
    g->nodes[n].n_op_in = 3;
    return TC_STATUS_OK;
}

/* Conv (constant W [M, ...], optional constant B [M]) followed by bn. */
static tc_status fold_conv(tc__pass_ctx *ctx, int32_t conv, int32_t bn, const bn_affine *a, bool *done) {
    tc__graph *g = ctx->g;
    const tc__node *cn = &g->nodes[conv];
    *done = false;
    if (cn->n_op_in < 2 || cn->in[1] < 0) return TC_STATUS_OK;
    const tc__tensor *w = tc__pat_const(g, cn->in[1]);
    const tc__tensor *b = cn->n_op_in >= 3 && cn->in[2] >= 0 ? tc__pat_const(g, cn->in[2]) : NULL;
    if (w == NULL || !tc__dtype_is_float(w->dtype) || w->rank < 1 || w->dims[0] != a->c) return TC_STATUS_OK;
    if (cn->n_op_in >= 3 && cn->in[2] >= 0 && (b == NULL || tc__tensor_numel(b) != a->c)) return TC_STATUS_OK;
    int64_t nw = tc__tensor_numel(w), per = nw / a->c;
    double *wv = malloc(sizeof(double) * (size_t)(nw ? nw : 1));
    double *bv = malloc(sizeof(double) * (size_t)a->c);
    tc_status st = TC_STATUS_OK;
    if (wv == NULL || bv == NULL) {
        st = tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of memory folding BatchNormalization");
        goto out;
    }
    for (int64_t m = 0; m < a->c; m++) {
        for (int64_t k = 0; k < per; k++) wv[m * per + k] = tc__tensor_get_f64(w, m * per + k) * a->s[m];
        bv[m] = (b ? tc__tensor_get_f64(b, m) : 0.0) * a->s[m] + a->t[m];
    }
    int32_t vw, vb;
    const char *wname = g->values[cn->in[1]].name;
    int64_t cdim = a->c;
    st = add_f64_init(g, wname, w->dtype, w->rank, w->dims, wv, &vw, ctx->err);
    if (st == TC_STATUS_OK)
        st = add_f64_init(g, b ? g->values[g->nodes[conv].in[2]].name : wname, w->dtype, 1, &cdim, bv, &vb, ctx->err);
    if (st == TC_STATUS_OK) {
        g->nodes[conv].in[1] = vw;
        st = set_input2(g, conv, vb, ctx->err);
    }
    if (st == TC_STATUS_OK) st = tc__pat_absorb(g, conv, 0, bn, ctx->err);
    if (st == TC_STATUS_OK) *done = true;
out:
    free(wv);
    free(bv);
    return st;
}

/* Gemm (constant B, optional constant C of one or N elements) on [M, N] followed by bn. */
static tc_status fold_gemm(tc__pass_ctx *ctx, int32_t gemm, int32_t bn, const bn_affine *a, bool *done) {
    tc__graph *g = ctx->g;
    const tc__node *gn = &g->nodes[gemm];
    *done = false;
    if (gn->n_op_in < 2 || gn->in[1] < 0) return TC_STATUS_OK;
    const int64_t trans_b = tc__attr_int(&gn->attrs, "transB", 0);
    const double beta = tc__attr_float(&gn->attrs, "beta", 1.0f);
    const tc__tensor *w = tc__pat_const(g, gn->in[1]);
    if (w == NULL || !tc__dtype_is_float(w->dtype) || w->rank != 2 || (trans_b != 0 && trans_b != 1)) return TC_STATUS_OK;
    const int64_t n = trans_b ? w->dims[0] : w->dims[1], k = trans_b ? w->dims[1] : w->dims[0];
    if (n != a->c) return TC_STATUS_OK;
    const tc__tensor *c = gn->n_op_in >= 3 && gn->in[2] >= 0 ? tc__pat_const(g, gn->in[2]) : NULL;
    if (gn->n_op_in >= 3 && gn->in[2] >= 0) {
        if (c == NULL || !tc__dtype_is_float(c->dtype)) return TC_STATUS_OK;
        int64_t nc = tc__tensor_numel(c);
        bool row = nc == n && (c->rank == 1 || (c->rank == 2 && c->dims[0] == 1));
        if (nc != 1 && !row) return TC_STATUS_OK;
    }
    const int64_t nw = n * k;
    double *wv = malloc(sizeof(double) * (size_t)(nw ? nw : 1));
    double *cv = malloc(sizeof(double) * (size_t)n);
    tc_status st = TC_STATUS_OK;
    if (wv == NULL || cv == NULL) {
        st = tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of memory folding BatchNormalization");
        goto out;
    }
    for (int64_t i = 0; i < nw; i++) {
        int64_t col = trans_b ? i / k : i % n;
        wv[i] = tc__tensor_get_f64(w, i) * a->s[col];
    }
    for (int64_t j = 0; j < n; j++) {
        double cj = c == NULL ? 0.0 : tc__tensor_get_f64(c, tc__tensor_numel(c) == 1 ? 0 : j);
        cv[j] = beta * cj * a->s[j] + a->t[j];
    }
    int32_t vw, vc;
    const char *wname = g->values[gn->in[1]].name;
    st = add_f64_init(g, wname, w->dtype, 2, w->dims, wv, &vw, ctx->err);
    if (st == TC_STATUS_OK) st = add_f64_init(g, wname, w->dtype, 1, &n, cv, &vc, ctx->err);
    if (st == TC_STATUS_OK) {
        g->nodes[gemm].in[1] = vw;
        st = set_input2(g, gemm, vc, ctx->err);
    }
    if (st == TC_STATUS_OK && beta != 1.0) {
        tc__attr one = {.name = "beta", .kind = TC__ATTR_FLOAT, .f = 1.0f};
        st = tc__pat_set_attr(g, gemm, &one, ctx->err);
    }
    if (st == TC_STATUS_OK) st = tc__pat_absorb(g, gemm, 0, bn, ctx->err);
    if (st == TC_STATUS_OK) *done = true;
out:
    free(wv);
    free(cv);
    return st;
}

tc_status tc__pass_fold_batchnorm(tc__pass_ctx *ctx) {
    tc__graph *g = ctx->g;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const tc__node *bn = &g->nodes[n];
        if (!tc__pat_is(bn, "BatchNormalization") || bn->n_in < 1 || bn->in[0] < 0) continue;
        int32_t z = bn->in[0];
        int32_t p = tc__pat_producer(g, z, NULL);
        if (p < 0 || g->nodes[p].n_out != 1 || !tc__pat_plain(&g->nodes[p]) || !tc__pat_single_use(g, z)) continue;
        bool conv = tc__pat_is(&g->nodes[p], "Conv"), gemm = tc__pat_is(&g->nodes[p], "Gemm");
        if (!conv && !gemm) continue;
        if (gemm && g->values[z].info.shape.rank != 2) continue;
        bn_affine a;
        if (!bn_read(g, bn, &a)) continue;
        bool done = false;
        tc_status st = conv ? fold_conv(ctx, p, n, &a, &done) : fold_gemm(ctx, p, n, &a, &done);
        affine_free(&a);
        if (st) return st;
        if (done) ctx->changes++;
    }
    return TC_STATUS_OK;
}
