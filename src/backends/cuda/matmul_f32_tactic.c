/*
 * matmul_f32_tactic.c - tactic cuda_matmul_f32: FP32 MatMul (NumPy semantics: 1-D operands promoted, batch dims
 * broadcast) on the strided GEMM of gemm_f32.cu, with the views and scale of fuse_matmul_views (tc.a_perm, tc.b_perm,
 * tc.y_perm, tc.alpha: fused_attr.h) as strides, and the step's whole epilogue fused (bias over Y's last dim, which
 * a y_perm may map to any dim of the product; residual; activation).
 */
#include <string.h>

#include "backends/cuda/dn_common.h"
#include "backends/cuda/gemm_f32.h"
#include "core/fused_attr.h"

/* The GEMM arguments (pointers excepted) of Y = alpha * A.B through the step's views; false when the shapes do not
 * match, a view is not a permutation, or a rank is too large. */
static bool mm_args(const tc__attrs *attrs, const tc__tensor *a, const tc__tensor *b, const tc__tensor *y,
                    tc__cuda_gemm_args *g) {
    memset(g, 0, sizeof *g);
    const int ra = a->rank, rb = b->rank, ry = y->rank;
    if (ra < 1 || rb < 1 || ra > TC__CUDA_MAX_RANK || rb > TC__CUDA_MAX_RANK || ry > TC__CUDA_MAX_RANK ||
        ra > TC_MAX_RANK || rb > TC_MAX_RANK || ry > TC_MAX_RANK)
        return false;
    int64_t pa[TC_MAX_RANK], pb[TC_MAX_RANK], py[TC_MAX_RANK];
    if (tc__mm_perm(attrs, TC__ATTR_MM_A_PERM, ra, pa) < 0 || tc__mm_perm(attrs, TC__ATTR_MM_B_PERM, rb, pb) < 0 ||
        tc__mm_perm(attrs, TC__ATTR_MM_Y_PERM, ry, py) < 0)
        return false;
    /* Storage strides, then the operands and the product as the product sees them. */
    int64_t sa[TC_MAX_RANK], sb[TC_MAX_RANK], sy[TC_MAX_RANK], ad[TC_MAX_RANK], as[TC_MAX_RANK], bd[TC_MAX_RANK],
        bs[TC_MAX_RANK], pd[TC_MAX_RANK], ps[TC_MAX_RANK];
    int64_t s = 1;
    for (int i = ra - 1; i >= 0; i--) sa[i] = s, s *= a->dims[i];
    s = 1;
    for (int i = rb - 1; i >= 0; i--) sb[i] = s, s *= b->dims[i];
    s = 1;
    for (int i = ry - 1; i >= 0; i--) sy[i] = s, s *= y->dims[i];
    for (int i = 0; i < ra; i++) ad[i] = a->dims[pa[i]], as[i] = sa[pa[i]];
    for (int i = 0; i < rb; i++) bd[i] = b->dims[pb[i]], bs[i] = sb[pb[i]];
    for (int i = 0; i < ry; i++) pd[py[i]] = y->dims[i], ps[py[i]] = sy[i]; /* dim py[i] of the product is Y's i */
    for (int i = 0; i < ra; i++)
        if (a->dims[i] < 0) return false;
    for (int i = 0; i < rb; i++)
        if (b->dims[i] < 0) return false;
    g->m = ra == 1 ? 1 : ad[ra - 2];
    g->k = ad[ra - 1];
    const int64_t kb = rb == 1 ? bd[0] : bd[rb - 2];
    g->n = rb == 1 ? 1 : bd[rb - 1];
    if (g->k != kb) return false;
    g->rs_a = ra == 1 ? 0 : as[ra - 2];
    g->cs_a = as[ra - 1];
    g->rs_b = rb == 1 ? bs[0] : bs[rb - 2];
    g->cs_b = rb == 1 ? 0 : bs[rb - 1];
    const int nba = ra > 2 ? ra - 2 : 0, nbb = rb > 2 ? rb - 2 : 0;
    g->nb = nba > nbb ? nba : nbb;
    g->n_batch = 1;
    for (int i = g->nb - 1; i >= 0; i--) {
        const int ia = i - (g->nb - nba), ib = i - (g->nb - nbb);
        const int64_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;
        if (da != db && da != 1 && db != 1) return false;
        g->bdims[i] = da == 1 ? db : da;
        g->a_bs[i] = da == 1 ? 0 : as[ia];
        g->b_bs[i] = db == 1 ? 0 : bs[ib];
        g->n_batch *= g->bdims[i];
    }
    int64_t want[TC_MAX_RANK];
    int r = 0;
    for (int i = 0; i < g->nb; i++) want[r++] = g->bdims[i];
    if (ra > 1) want[r++] = g->m;
    if (rb > 1) want[r++] = g->n;
    if (ry != r) return false;
    for (int i = 0; i < r; i++)
        if (pd[i] != want[i]) return false;
    for (int i = 0; i < g->nb; i++) g->y_bs[i] = ps[i];
    g->rs_y = ra > 1 ? ps[g->nb] : 0;
    g->cs_y = rb > 1 ? ps[r - 1] : 0;
    /* The bias runs along Y's last dim: product dim py[ry - 1] (none for a scalar Y: one bias element). */
    if (ry > 0) {
        const int64_t pl = py[ry - 1];
        if (pl < g->nb) g->bias_bs[pl] = 1;
        else if (pl == g->nb && ra > 1) g->rs_bias = 1;
        else g->cs_bias = 1;
    }
    g->alpha = tc__attr_float(attrs, TC__ATTR_MM_ALPHA, 1.0f);
    g->beta = 0.0f;
    return true;
}

static bool is_f32(const tc__tensor *t) { return t != NULL && t->dtype == TC_DTYPE_FLOAT32; }

static bool supports(const tc__step_desc *d) {
    if (d->n_in != 2 || d->n_out < 1 || d->out[0] == NULL) return tc__refuse(d, "expects inputs A, B and output Y");
    if (!is_f32(d->in[0]) || !is_f32(d->in[1]) || !is_f32(d->out[0])) return tc__refuse(d, "float32 only");
    tc__cuda_gemm_args g;
    if (!mm_args(d->attrs, d->in[0], d->in[1], d->out[0], &g))
        return tc__refuse(d, "shapes or views this kernel does not take (rank above %d?)", TC__CUDA_MAX_RANK);
    return tc__dn_epilogue_ok(d);
}

static tc_status run(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 2 || ctx->n_out < 1 || !is_f32(ctx->in[0]) || !is_f32(ctx->in[1]) || !is_f32(ctx->out[0]))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "MatMul expects float32 A, B and Y");
    tc__cuda_gemm_args g;
    if (!mm_args(ctx->attrs, ctx->in[0], ctx->in[1], ctx->out[0], &g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "MatMul shapes do not match");
    if (tc__tensor_numel(ctx->out[0]) <= 0) return TC_STATUS_OK;
    const tc__epilogue *e = ctx->epi;
    g.a = ctx->in[0]->data;
    g.b = ctx->in[1]->data;
    g.y = ctx->out[0]->data;
    g.bias = e != NULL && e->bias_input >= 0 && ctx->bias != NULL ? ctx->bias->data : NULL;
    g.residual = e != NULL && e->residual_input >= 0 && ctx->residual != NULL ? ctx->residual->data : NULL;
    g.act = tc__cuda_act_of(e);
    const tc__cuda_exec *x = ctx->exec;
    cudaError_t err = tc__cuda_gemm_f32(&g, x != NULL ? x->n_sm : 0, tc__cuda_stream(ctx));
    return err == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(err, ctx->err, "cuda_matmul_f32 launch");
}

const tc__tactic tc__tactic_cuda_matmul_f32 = {
    .name = "cuda_matmul_f32",
    .op_type = "MatMul",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = TC__TACTIC_FUSES_EPILOGUE,
    .supports = supports,
    .run = run,
};
