/*
 * matmul_node_f32.c - MatMul (NumPy matmul semantics: 1-D promotion, batch broadcasting) on the
 * FP32 GEMM operator, shared by the matmul_f32_<isa> (constant B packed at build) and
 * matmul_dyn_f32_<isa> (B at run time) tactics. When B has no batch dims of its own and A is not
 * broadcast, the batch folds into M (one larger GEMM).
 */
#include <string.h>

#include "backends/cpu/gemm_tactics.h"

typedef struct mm_geom {
    size_t m, k, n;
    int nb;
    size_t batch[TC_MAX_RANK];
    size_t astr[TC_MAX_RANK], bstr[TC_MAX_RANK]; /* in matrices; 0 = broadcast */
    size_t n_batch;
    bool bias_rows; /* the output's last dim is M (B is 1-D): the epilogue bias is per row */
} mm_geom;

static bool mm_geometry(const tc__tensor *a, const tc__tensor *b, const tc__tensor *y, mm_geom *g) {
    memset(g, 0, sizeof *g);
    const int ra = a->rank, rb = b->rank;
    if (ra < 1 || rb < 1 || ra > TC_MAX_RANK || rb > TC_MAX_RANK) return false;
    for (int i = 0; i < ra; i++)
        if (a->dims[i] < 0) return false;
    for (int i = 0; i < rb; i++)
        if (b->dims[i] < 0) return false;
    g->m = ra == 1 ? 1 : (size_t)a->dims[ra - 2];
    g->k = (size_t)a->dims[ra - 1];
    const size_t kb = rb == 1 ? (size_t)b->dims[0] : (size_t)b->dims[rb - 2];
    g->n = rb == 1 ? 1 : (size_t)b->dims[rb - 1];
    g->bias_rows = rb == 1 && ra >= 2;
    if (g->k != kb) return false;
    const int nba = ra > 2 ? ra - 2 : 0, nbb = rb > 2 ? rb - 2 : 0;
    g->nb = nba > nbb ? nba : nbb;
    size_t sa = 1, sb = 1;
    g->n_batch = 1;
    for (int i = g->nb - 1; i >= 0; i--) {
        const int ia = i - (g->nb - nba), ib = i - (g->nb - nbb);
        const size_t da = ia >= 0 ? (size_t)a->dims[ia] : 1, db = ib >= 0 ? (size_t)b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1) return false;
        g->batch[i] = da == 1 ? db : da;
        g->astr[i] = da == 1 ? 0 : sa;
        g->bstr[i] = db == 1 ? 0 : sb;
        sa *= da;
        sb *= db;
        g->n_batch *= g->batch[i];
    }
    /* The output shape must be what matmul produces. */
    int64_t want[TC_MAX_RANK];
    int r = 0;
    for (int i = 0; i < g->nb; i++)
        want[r++] = (int64_t)g->batch[i];
    if (ra > 1) want[r++] = (int64_t)g->m;
    if (rb > 1) want[r++] = (int64_t)g->n;
    return y->rank == r && memcmp(y->dims, want, sizeof(int64_t) * (size_t)r) == 0;
}

/* True when the batch can fold into M: B is shared by every batch matrix and A is not broadcast. */
static bool mm_folds(const mm_geom *g) {
    if (g->nb == 0 || g->bias_rows) return false;
    for (int i = 0; i < g->nb; i++)
        if (g->bstr[i] != 0 || (g->batch[i] > 1 && g->astr[i] == 0)) return false;
    return true;
}

bool tc__matmul_node_f32_supports(const tc__step_desc *d, bool packed_b) {
    if (strcmp(d->op_type, "MatMul") != 0 || d->n_in != 2 || d->n_out < 1) return false;
    const tc__tensor *a = d->in[0], *b = d->in[1], *y = d->out[0];
    if (!tc__gemm_is_f32(a) || !tc__gemm_is_f32(b) || !tc__gemm_is_f32(y)) return false;
    if (packed_b && !(d->in_const != NULL && d->in_const[1])) return false;
    mm_geom g;
    if (!mm_geometry(a, b, y, &g)) return false;
    const int64_t last = y->rank > 0 ? y->dims[y->rank - 1] : 1;
    return tc__gemm_epilogue_ok(d, last);
}

bool tc__matmul_node_f32_packs_input(const tc__step_desc *d, int index) { return index == 1; }

tc_status tc__matmul_node_f32_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err,
                                   const tc__gemm_config *cfg) {
    const tc__tensor *b = d->in[1];
    if (index != 1 || !tc__gemm_is_f32(b))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "MatMul packs only a float32 input B");
    const int rb = b->rank;
    const size_t k = rb == 1 ? (size_t)b->dims[0] : (size_t)b->dims[rb - 2], n = rb == 1 ? 1 : (size_t)b->dims[rb - 1];
    size_t mats = 1;
    for (int i = 0; i + 2 < rb; i++)
        mats *= (size_t)b->dims[i];
    for (size_t t = 0; t < mats; t++)
        tc__gemm_pack_b_f32(k, n, cfg->nr, (const float *)src + t * k * n, n, 1, (float *)dst + t * k * n);
    return TC_STATUS_OK;
}

/* The GEMM problem of a MatMul (pointers from the tensors, which may be shape-only for sizing). */
static tc__gemm_f32_problem mm_problem(const mm_geom *g, const tc__tensor *a, const tc__tensor *b, tc__tensor *y,
                                       const tc__tensor *bias, const tc__tensor *res, bool packed_b) {
    tc__gemm_f32_problem p = tc__gemm_f32_problem_init(g->m, g->n, g->k);
    p.a = a->data;
    p.b = b->data;
    p.b_packed = packed_b;
    p.c = y->data;
    if (bias != NULL) {
        if (g->bias_rows)
            p.epi.bias_m = bias->data;
        else
            p.epi.bias_n = bias->data;
    }
    if (res != NULL) {
        p.epi.res = res->data;
        p.epi.ld_res = g->n;
    }
    if (mm_folds(g)) {
        p.m = g->m * g->n_batch;
        return p;
    }
    p.nb = g->nb;
    size_t cstride = g->m * g->n;
    for (int i = g->nb - 1; i >= 0; i--) {
        p.bdims[i] = g->batch[i];
        p.a_bs[i] = g->astr[i] * g->m * g->k;
        p.b_bs[i] = g->bstr[i] * g->k * g->n;
        p.c_bs[i] = p.res_bs[i] = cstride;
        cstride *= g->batch[i];
    }
    return p;
}

size_t tc__matmul_node_f32_scratch_bytes(const tc__step_desc *d, const tc__gemm_config *cfg, bool packed_b) {
    mm_geom g;
    if (!mm_geometry(d->in[0], d->in[1], d->out[0], &g)) return 0;
    tc__gemm_f32_problem p = mm_problem(&g, d->in[0], d->in[1], (tc__tensor *)d->out[0], NULL, NULL, packed_b);
    return tc__gemm_f32_scratch_bytes(&p, cfg, tc__gemm_tactic_max_threads());
}

tc_status tc__matmul_node_f32_run(const tc__kernel_ctx *ctx, const tc__gemm_config *cfg, bool packed_b) {
    if (ctx->n_in < 2 || ctx->n_out < 1 || !tc__gemm_is_f32(ctx->in[0]) || !tc__gemm_is_f32(ctx->in[1]) ||
        !tc__gemm_is_f32(ctx->out[0]))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "MatMul expects float32 A, B and Y");
    mm_geom g;
    if (!mm_geometry(ctx->in[0], ctx->in[1], ctx->out[0], &g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "MatMul shapes do not match");
    tc__gemm_f32_problem p = mm_problem(&g, ctx->in[0], ctx->in[1], ctx->out[0], ctx->bias, ctx->residual, packed_b);
    const tc__gemm_epi e = tc__gemm_epi_from_ctx(ctx);
    p.epi.act = e.act;
    p.epi.act_alpha = e.act_alpha;
    p.epi.act_beta = e.act_beta;
    return tc__gemm_f32_run(&p, cfg, ctx);
}
