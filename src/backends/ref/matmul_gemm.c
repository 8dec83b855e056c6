/*
 * matmul_gemm.c - reference MatMul and MatMulInteger (NumPy matmul: 1-D promotion, batch
 * broadcasting; float and integer types; the views and scale of fuse_matmul_views) and Gemm
 * (transA/transB, alpha, beta, C broadcast to [M, N]). Floats are computed in double with an i,k,j loop
 * that accumulates one output row at a time; integers in 64-bit with
 * wrap-around, then narrowed like a C cast.
 */
#include <string.h>

#include "backends/ref/dense_util.h"
#include "backends/ref/ref.h"
#include "core/fused_attr.h"

/* c[M x N] = a[M x K] * b[K x N], all row-major and contiguous. */
static void matmul_f64(const double *a, const double *b, double *c, int64_t m, int64_t k, int64_t n) {
    for (int64_t i = 0; i < m; i++) {
        double *cr = c + i * n;
        for (int64_t j = 0; j < n; j++) cr[j] = 0.0;
        const double *ar = a + i * k;
        for (int64_t p = 0; p < k; p++) {
            const double av = ar[p];
            const double *br = b + p * n;
            for (int64_t j = 0; j < n; j++) cr[j] += av * br[j];
        }
    }
}

/* Integer version with unsigned 64-bit wrap-around (no signed overflow). */
static void matmul_u64(const uint64_t *a, const uint64_t *b, uint64_t *c, int64_t m, int64_t k, int64_t n) {
    for (int64_t i = 0; i < m; i++) {
        uint64_t *cr = c + i * n;
        for (int64_t j = 0; j < n; j++) cr[j] = 0;
        for (int64_t p = 0; p < k; p++) {
            const uint64_t av = a[i * k + p];
            const uint64_t *br = b + p * n;
            for (int64_t j = 0; j < n; j++) cr[j] += av * br[j];
        }
    }
}

static void load_u64(const tc__tensor *t, int64_t n, uint64_t *dst) {
    for (int64_t i = 0; i < n; i++) dst[i] = (uint64_t)tc__tensor_get_i64(t, i);
}

/* ---- MatMul ------------------------------------------------------------------ */

typedef struct matmul_geom {
    int64_t m, k, n;
    int nb;                              /* batch rank of the output */
    int64_t batch[TC_MAX_RANK];          /* output batch dims */
    int64_t astr[TC_MAX_RANK], bstr[TC_MAX_RANK]; /* matrix-index strides of A and B per batch dim (0: broadcast) */
    int64_t n_batch;
} matmul_geom;

static tc_status matmul_geometry(const tc__kernel_ctx *ctx, const tc__tensor *a, const tc__tensor *b,
                                 const tc__tensor *y, matmul_geom *g) {
    memset(g, 0, sizeof *g);
    if (a->rank < 1 || b->rank < 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "inputs have ranks %d and %d, expected >= 1",
                        (int)a->rank, (int)b->rank);
    int ra = a->rank, rb = b->rank;
    g->m = ra == 1 ? 1 : a->dims[ra - 2];
    g->k = a->dims[ra - 1];
    int64_t kb = rb == 1 ? b->dims[0] : b->dims[rb - 2];
    g->n = rb == 1 ? 1 : b->dims[rb - 1];
    if (g->k != kb)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "inner dimensions differ: A has %lld, B has %lld",
                        (long long)g->k, (long long)kb);
    int nba = ra > 2 ? ra - 2 : 0, nbb = rb > 2 ? rb - 2 : 0;
    g->nb = nba > nbb ? nba : nbb;
    int64_t sa = 1, sb = 1; /* strides in matrices, innermost batch dim first */
    g->n_batch = 1;
    for (int i = g->nb - 1; i >= 0; i--) {
        int ia = i - (g->nb - nba), ib = i - (g->nb - nbb);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "batch dims %lld and %lld cannot broadcast",
                            (long long)da, (long long)db);
        g->batch[i] = da == 1 ? db : da;
        g->astr[i] = da == 1 ? 0 : sa;
        g->bstr[i] = db == 1 ? 0 : sb;
        sa *= da;
        sb *= db;
        g->n_batch *= g->batch[i];
    }
    int64_t want[TC_MAX_RANK];
    int r = 0;
    for (int i = 0; i < g->nb; i++) want[r++] = g->batch[i];
    if (ra > 1) want[r++] = g->m;
    if (rb > 1) want[r++] = g->n;
    if (y->rank != r || memcmp(y->dims, want, sizeof(int64_t) * (size_t)r) != 0) {
        char got[160], exp[160];
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output has shape %s, expected %s",
                        tc__shape_str(y->rank, y->dims, got, sizeof got), tc__shape_str(r, want, exp, sizeof exp));
    }
    return TC_STATUS_OK;
}

/* dst (contiguous) = Transpose(src, perm), src contiguous with dims sd; 8-byte elements (doubles or uint64). */
static void permute8(const void *src, const int64_t *sd, int32_t rank, const int64_t *perm, void *dst) {
    int64_t st[TC_MAX_RANK], dims[TC_MAX_RANK], strides[TC_MAX_RANK];
    tc__ref_row_strides(rank, sd, st);
    for (int32_t i = 0; i < rank; i++) dims[i] = sd[perm[i]], strides[i] = st[perm[i]];
    tc__ref_strided_copy(dst, src, rank, dims, strides, 0, 8);
}

/* Loads t (n elements) as doubles (floats) or uint64 (integers), through perm when has. tmp holds n elements. */
static void load_view(const tc__tensor *t, int64_t n, bool is_float, int has, const int64_t *perm, void *dst,
                      void *tmp) {
    void *raw = has ? tmp : dst;
    if (is_float) tc__ref_load_f64(t, 0, n, raw);
    else load_u64(t, n, raw);
    if (has) permute8(raw, t->dims, t->rank, perm, dst);
}

/*
 * MatMul, also with the views and scale of fuse_matmul_views (fused_attr.h): A and B are read through
 * their permutations, the product is scaled by alpha (floats) and written through Y's permutation.
 */
tc_status tc__ref_MatMul(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 2 || !ctx->in[0] || !ctx->in[1] || ctx->n_out < 1 || !ctx->out[0])
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects inputs A, B and output Y");
    const tc__tensor *a = ctx->in[0], *b = ctx->in[1];
    tc__tensor *y = ctx->out[0];
    bool is_float = tc__dtype_is_float(a->dtype);
    if (!is_float && !tc__dtype_is_int(a->dtype)) return tc__ref_unsupported_dtype(ctx, 0, a->dtype);
    if (b->dtype != a->dtype || y->dtype != a->dtype)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "B and Y must have the data type of A (%s)",
                        tc_dtype_name(a->dtype));
    const bool scaled = tc__attr_has(ctx->attrs, TC__ATTR_MM_ALPHA);
    const double alpha = (double)tc__attr_float(ctx->attrs, TC__ATTR_MM_ALPHA, 1.0f);
    if (scaled && !is_float)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute %s on an integer MatMul", TC__ATTR_MM_ALPHA);
    int64_t pa[TC_MAX_RANK], pb[TC_MAX_RANK], py[TC_MAX_RANK];
    int ha, hb, hy;
    tc__tensor va = *a, vb = *b, vy = *y; /* the operands and product as the product sees them */
    tc_status st = tc__mm_perm_checked(ctx->attrs, TC__ATTR_MM_A_PERM, a->rank, pa, &ha, ctx->err);
    if (st == TC_STATUS_OK) st = tc__mm_perm_checked(ctx->attrs, TC__ATTR_MM_B_PERM, b->rank, pb, &hb, ctx->err);
    if (st == TC_STATUS_OK) st = tc__mm_perm_checked(ctx->attrs, TC__ATTR_MM_Y_PERM, y->rank, py, &hy, ctx->err);
    if (st) return st;
    for (int32_t i = 0; i < a->rank; i++) va.dims[i] = a->dims[pa[i]];
    for (int32_t i = 0; i < b->rank; i++) vb.dims[i] = b->dims[pb[i]];
    for (int32_t i = 0; i < y->rank; i++) vy.dims[py[i]] = y->dims[i]; /* dim perm[i] of the product is dim i of Y */
    matmul_geom g;
    if ((st = matmul_geometry(ctx, &va, &vb, &vy, &g)) != TC_STATUS_OK) return st;
    const int64_t an = tc__tensor_numel(a), bn = tc__tensor_numel(b), yn = tc__tensor_numel(y);
    const int64_t amat = g.m * g.k, bmat = g.k * g.n, ymat = g.m * g.n;
    if (an < 0 || bn < 0 || yn < 0) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "invalid input sizes");

    /* Every path uses 8-byte elements: double for floats, uint64 for integers. With an output view the whole
     * product is kept (yd) and permuted into Y at the end; tmp serves the permutations. */
    int64_t tmp_n = 1;
    if (ha && an > tmp_n) tmp_n = an;
    if (hb && bn > tmp_n) tmp_n = bn;
    if (hy && yn > tmp_n) tmp_n = yn;
    void *ad = tc__ref_alloc_f64(ctx, an), *bd = tc__ref_alloc_f64(ctx, bn);
    void *yd = tc__ref_alloc_f64(ctx, hy ? tmp_n : ymat), *tmp = tc__ref_alloc_f64(ctx, tmp_n);
    if (!ad || !bd || !yd || !tmp) {
        tc__kernel_free(ctx, tmp);
        tc__kernel_free(ctx, yd);
        tc__kernel_free(ctx, bd);
        tc__kernel_free(ctx, ad);
        return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of memory for MatMul work buffers");
    }
    load_view(a, an, is_float, ha, pa, ad, tmp);
    load_view(b, bn, is_float, hb, pb, bd, tmp);
    int64_t idx[TC_MAX_RANK] = {0};
    for (int64_t t = 0; t < g.n_batch; t++) {
        int64_t ai = 0, bi = 0;
        for (int i = 0; i < g.nb; i++) {
            ai += idx[i] * g.astr[i];
            bi += idx[i] * g.bstr[i];
        }
        if (is_float) {
            double *out = hy ? (double *)yd + t * ymat : yd;
            matmul_f64((const double *)ad + ai * amat, (const double *)bd + bi * bmat, out, g.m, g.k, g.n);
            if (scaled)
                for (int64_t i = 0; i < ymat; i++) out[i] *= alpha;
            if (!hy) tc__ref_store_f64(y, t * ymat, ymat, out);
        } else {
            uint64_t *out = hy ? (uint64_t *)yd + t * ymat : yd;
            matmul_u64((const uint64_t *)ad + ai * amat, (const uint64_t *)bd + bi * bmat, out, g.m, g.k, g.n);
            if (!hy)
                for (int64_t i = 0; i < ymat; i++) tc__tensor_set_i64(y, t * ymat + i, (int64_t)out[i]);
        }
        for (int i = g.nb - 1; i >= 0; i--) {
            if (++idx[i] < g.batch[i]) break;
            idx[i] = 0;
        }
    }
    if (hy) { /* Y = Transpose(product, perm) */
        permute8(yd, vy.dims, vy.rank, py, tmp);
        if (is_float) tc__ref_store_f64(y, 0, yn, tmp);
        else
            for (int64_t i = 0; i < yn; i++) tc__tensor_set_i64(y, i, (int64_t)((uint64_t *)tmp)[i]);
    }
    tc__kernel_free(ctx, tmp);
    tc__kernel_free(ctx, yd);
    tc__kernel_free(ctx, bd);
    tc__kernel_free(ctx, ad);
    return TC_STATUS_OK;
}

/* ---- Gemm -------------------------------------------------------------------- */

/* dst[r x c] = src (rows x cols, row-major) or its transpose, as doubles or uint64. */
static void load_matrix(const tc__tensor *t, bool trans, bool as_float, void *dst) {
    const int64_t rows = t->dims[0], cols = t->dims[1];
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            int64_t o = trans ? j * rows + i : i * cols + j;
            if (as_float) ((double *)dst)[o] = tc__tensor_get_f64(t, i * cols + j);
            else ((uint64_t *)dst)[o] = (uint64_t)tc__tensor_get_i64(t, i * cols + j);
        }
}

/* Index into C broadcast to [M, N] (rank 0, 1 or 2, dims 1 or matching). */
static int64_t c_index(const tc__tensor *c, int64_t i, int64_t j) {
    if (c->rank == 0) return 0;
    if (c->rank == 1) return c->dims[0] == 1 ? 0 : j;
    return (c->dims[0] == 1 ? 0 : i) * c->dims[1] + (c->dims[1] == 1 ? 0 : j);
}

static tc_status gemm_check(const tc__kernel_ctx *ctx, bool ta, bool tb, int64_t *m, int64_t *k, int64_t *n) {
    const tc__tensor *a = ctx->in[0], *b = ctx->in[1], *c = ctx->n_in > 2 ? ctx->in[2] : NULL, *y = ctx->out[0];
    if (a->rank != 2 || b->rank != 2)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "A and B have ranks %d and %d, expected 2", (int)a->rank,
                        (int)b->rank);
    *m = a->dims[ta ? 1 : 0];
    *k = a->dims[ta ? 0 : 1];
    int64_t kb = b->dims[tb ? 1 : 0];
    *n = b->dims[tb ? 0 : 1];
    if (*k != kb)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "inner dimensions differ: A has %lld, B has %lld",
                        (long long)*k, (long long)kb);
    if (y->rank != 2 || y->dims[0] != *m || y->dims[1] != *n)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output must have shape %lldx%lld", (long long)*m,
                        (long long)*n);
    if (c) {
        int64_t want[2] = {*m, *n};
        bool ok = c->rank <= 2;
        for (int32_t i = 0; ok && i < c->rank; i++)
            ok = c->dims[i] == 1 || c->dims[i] == want[2 - c->rank + i];
        if (!ok) {
            char buf[160];
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "C has shape %s, which does not broadcast to %lldx%lld",
                            tc__shape_str(c->rank, c->dims, buf, sizeof buf), (long long)*m, (long long)*n);
        }
    }
    return TC_STATUS_OK;
}

tc_status tc__ref_Gemm(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 2 || !ctx->in[0] || !ctx->in[1] || ctx->n_out < 1 || !ctx->out[0])
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects inputs A, B (optional C) and output Y");
    const tc__tensor *a = ctx->in[0], *b = ctx->in[1], *c = ctx->n_in > 2 ? ctx->in[2] : NULL;
    tc__tensor *y = ctx->out[0];
    bool is_float = tc__dtype_is_float(a->dtype);
    if (!is_float && !tc__dtype_is_int(a->dtype)) return tc__ref_unsupported_dtype(ctx, 0, a->dtype);
    if (b->dtype != a->dtype || y->dtype != a->dtype || (c && c->dtype != a->dtype))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "B, C and Y must have the data type of A (%s)",
                        tc_dtype_name(a->dtype));
    bool ta = tc__attr_int(ctx->attrs, "transA", 0) != 0, tb = tc__attr_int(ctx->attrs, "transB", 0) != 0;
    double alpha = tc__attr_float(ctx->attrs, "alpha", 1.0f), beta = tc__attr_float(ctx->attrs, "beta", 1.0f);
    if (!is_float && (alpha != 1.0 || (beta != 1.0 && beta != 0.0)))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED,
                        "integer Gemm with alpha = %g and beta = %g is not supported (only alpha 1, beta 0 or 1)", alpha,
                        beta);
    int64_t m = 0, k = 0, n = 0;
    tc_status st = gemm_check(ctx, ta, tb, &m, &k, &n);
    if (st != TC_STATUS_OK) return st;
    int64_t amat, bmat, ymat;
    if (tc__mul_overflow_i64(m, k, &amat) || tc__mul_overflow_i64(k, n, &bmat) || tc__mul_overflow_i64(m, n, &ymat))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "matrix sizes overflow");
    void *ad = tc__ref_alloc_f64(ctx, amat), *bd = tc__ref_alloc_f64(ctx, bmat), *yd = tc__ref_alloc_f64(ctx, ymat);
    if (!ad || !bd || !yd) {
        tc__kernel_free(ctx, yd);
        tc__kernel_free(ctx, bd);
        tc__kernel_free(ctx, ad);
        return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of memory for Gemm work buffers");
    }
    load_matrix(a, ta, is_float, ad);
    load_matrix(b, tb, is_float, bd);
    bool use_c = c != NULL && beta != 0.0;
    if (is_float) {
        double *r = yd;
        matmul_f64(ad, bd, r, m, k, n);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double v = alpha * r[i * n + j];
                if (use_c) v += beta * tc__tensor_get_f64(c, c_index(c, i, j));
                r[i * n + j] = v;
            }
        tc__ref_store_f64(y, 0, ymat, r);
    } else {
        uint64_t *r = yd;
        matmul_u64(ad, bd, r, m, k, n);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                uint64_t v = r[i * n + j];
                if (use_c) v += (uint64_t)tc__tensor_get_i64(c, c_index(c, i, j));
                tc__tensor_set_i64(y, i * n + j, (int64_t)v);
            }
    }
    tc__kernel_free(ctx, yd);
    tc__kernel_free(ctx, bd);
    tc__kernel_free(ctx, ad);
    return TC_STATUS_OK;
}

/* ---- MatMulInteger ------------------------------------------------------------ */

/*
 * The zero point of operand t (input zi, may be absent) for its element e, where the operand holds matrices of
 * rows x cols: per tensor (one value), per row (A: a 1-D [rows], or t's shape with its last dim 1) or per column
 * (B: a 1-D [cols], or t's shape with its second-to-last dim 1). by_row picks A's or B's rule.
 */
typedef struct int_zp {
    const tc__tensor *z;
    int kind; /* 0: none, 1: one value, 2: per row/column of every matrix, 3: per row/column of each matrix */
} int_zp;

static tc_status int_zp_of(const tc__kernel_ctx *ctx, const tc__tensor *t, int zi, bool by_row, int64_t rows,
                           int64_t cols, int_zp *out) {
    const tc__tensor *z = ctx->n_in > zi ? ctx->in[zi] : NULL;
    *out = (int_zp){.z = z, .kind = 0};
    if (z == NULL) return TC_STATUS_OK;
    const char *what = by_row ? "a_zero_point" : "b_zero_point";
    if (z->dtype != t->dtype)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s is %s, its operand %s", what,
                        tc_dtype_name(z->dtype), tc_dtype_name(t->dtype));
    const int64_t per = by_row ? rows : cols;
    if (tc__tensor_numel(z) == 1) {
        out->kind = 1;
    } else if (z->rank == 1 && z->dims[0] == per && t->rank >= (by_row ? 2 : 1)) {
        out->kind = 2;
    } else {
        bool same = z->rank == t->rank && t->rank >= 2;
        for (int32_t d = 0; same && d < t->rank; d++)
            same = z->dims[d] == (d == t->rank - (by_row ? 1 : 2) ? 1 : t->dims[d]);
        if (!same) {
            char zs[160], ts[160];
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                            "%s has shape %s: expected one value, a 1-D of %lld (per %s) or %s's shape with %s 1", what,
                            tc__shape_str(z->rank, z->dims, zs, sizeof zs), (long long)per, by_row ? "row" : "column",
                            tc__shape_str(t->rank, t->dims, ts, sizeof ts),
                            by_row ? "the last dim" : "the second-to-last dim");
        }
        out->kind = 3;
    }
    return TC_STATUS_OK;
}

static int64_t int_zp_at(const int_zp *p, bool by_row, int64_t e, int64_t rows, int64_t cols) {
    if (p->kind == 0) return 0;
    if (p->kind == 1) return tc__tensor_get_i64(p->z, 0);
    const int64_t mat = e / (rows * cols), r = e / cols % rows, c = e % cols;
    const int64_t in_mat = by_row ? r : c;
    return tc__tensor_get_i64(p->z, p->kind == 2 ? in_mat : mat * (by_row ? rows : cols) + in_mat);
}

/* Loads operand t (n elements) as int64 values minus their zero points (exact: 8-bit operands). */
static void load_shifted(const tc__tensor *t, int64_t n, const int_zp *p, bool by_row, int64_t rows, int64_t cols,
                         int64_t *dst) {
    for (int64_t e = 0; e < n; e++) dst[e] = tc__tensor_get_i64(t, e) - int_zp_at(p, by_row, e, rows, cols);
}

/*
 * MatMulInteger: Y (int32) = (A - a_zero_point) x (B - b_zero_point), A and B uint8 or int8, NumPy matmul
 * shapes. Products are summed exactly in 64 bits; a sum outside int32 fails (onnxruntime would wrap it).
 */
tc_status tc__ref_MatMulInteger(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 2 || !ctx->in[0] || !ctx->in[1] || ctx->n_out < 1 || !ctx->out[0])
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects inputs A, B and output Y");
    const tc__tensor *a = ctx->in[0], *b = ctx->in[1];
    tc__tensor *y = ctx->out[0];
    for (int i = 0; i < 2; i++)
        if (ctx->in[i]->dtype != TC_DTYPE_UINT8 && ctx->in[i]->dtype != TC_DTYPE_INT8)
            return tc__ref_unsupported_dtype(ctx, i, ctx->in[i]->dtype);
    if (y->dtype != TC_DTYPE_INT32)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output Y is %s, expected int32", tc_dtype_name(y->dtype));
    matmul_geom g;
    tc_status st = matmul_geometry(ctx, a, b, y, &g);
    if (st) return st;
    int_zp za, zb;
    if ((st = int_zp_of(ctx, a, 2, true, g.m, g.k, &za)) || (st = int_zp_of(ctx, b, 3, false, g.k, g.n, &zb)))
        return st;
    const int64_t an = tc__tensor_numel(a), bn = tc__tensor_numel(b);
    const int64_t amat = g.m * g.k, bmat = g.k * g.n, ymat = g.m * g.n;
    int64_t *ad = (int64_t *)tc__ref_alloc_f64(ctx, an), *bd = (int64_t *)tc__ref_alloc_f64(ctx, bn);
    int64_t *yd = (int64_t *)tc__ref_alloc_f64(ctx, ymat);
    if (!ad || !bd || !yd) {
        tc__kernel_free(ctx, yd);
        tc__kernel_free(ctx, bd);
        tc__kernel_free(ctx, ad);
        return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of memory for MatMulInteger work buffers");
    }
    load_shifted(a, an, &za, true, g.m, g.k, ad);
    load_shifted(b, bn, &zb, false, g.k, g.n, bd);
    int64_t idx[TC_MAX_RANK] = {0};
    st = TC_STATUS_OK;
    for (int64_t t = 0; t < g.n_batch && st == TC_STATUS_OK; t++) {
        int64_t ai = 0, bi = 0;
        for (int i = 0; i < g.nb; i++) {
            ai += idx[i] * g.astr[i];
            bi += idx[i] * g.bstr[i];
        }
        /* |a - za| and |b - zb| are at most 255: two's complement uint64 sums are the exact int64 sums. */
        matmul_u64((const uint64_t *)(ad + ai * amat), (const uint64_t *)(bd + bi * bmat), (uint64_t *)yd, g.m, g.k,
                   g.n);
        for (int64_t i = 0; i < ymat; i++) {
            if (yd[i] < INT32_MIN || yd[i] > INT32_MAX) {
                st = tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                              "the int32 result overflows (%lld at element %lld): K = %lld is too long for int32 sums",
                              (long long)yd[i], (long long)(t * ymat + i), (long long)g.k);
                break;
            }
            ((int32_t *)y->data)[t * ymat + i] = (int32_t)yd[i];
        }
        for (int i = g.nb - 1; i >= 0; i--) {
            if (++idx[i] < g.batch[i]) break;
            idx[i] = 0;
        }
    }
    tc__kernel_free(ctx, yd);
    tc__kernel_free(ctx, bd);
    tc__kernel_free(ctx, ad);
    return st;
}
