/*
 * matmul_geom.c - a MatMul step's geometry through its views (matmul_geom.h).
 */
#include <string.h>

#include "backends/cpu/matmul_geom.h"
#include "core/fused_attr.h"

/* Row-major element strides of the dims of t. */
static void strides_of(const tc__tensor *t, size_t *st) {
    size_t s = 1;
    for (int i = t->rank - 1; i >= 0; i--) {
        st[i] = s;
        s *= (size_t)t->dims[i];
    }
}

/* t's dims and strides seen through view attribute `name` (identity when absent); false when it is not a
 * permutation of t's dims. */
static bool view_of(const tc__attrs *attrs, const char *name, const tc__tensor *t, int64_t *dims, size_t *st,
                    bool *has) {
    int64_t perm[TC_MAX_RANK];
    size_t raw[TC_MAX_RANK];
    const int r = tc__mm_perm(attrs, name, t->rank, perm);
    if (r < 0) return false;
    *has = *has || r > 0;
    strides_of(t, raw);
    for (int i = 0; i < t->rank; i++) {
        dims[i] = t->dims[perm[i]];
        st[i] = raw[perm[i]];
    }
    return true;
}

bool tc__mm_geometry(const tc__attrs *attrs, const tc__tensor *a, const tc__tensor *b, const tc__tensor *y,
                     tc__mm_geom *g) {
    memset(g, 0, sizeof *g);
    const int ra = a->rank, rb = b->rank, ry = y->rank;
    if (ra < 1 || rb < 1 || ra > TC_MAX_RANK || rb > TC_MAX_RANK || ry > TC_MAX_RANK) return false;
    for (int i = 0; i < ra; i++)
        if (a->dims[i] < 0) return false;
    for (int i = 0; i < rb; i++)
        if (b->dims[i] < 0) return false;
    for (int i = 0; i < ry; i++)
        if (y->dims[i] < 0) return false;
    /* The operands and product as the product sees them, with the element strides of their storage. */
    int64_t ad[TC_MAX_RANK], bd[TC_MAX_RANK], pd[TC_MAX_RANK], yperm[TC_MAX_RANK];
    size_t as[TC_MAX_RANK], bs[TC_MAX_RANK], ps[TC_MAX_RANK], ys[TC_MAX_RANK];
    if (!view_of(attrs, TC__ATTR_MM_A_PERM, a, ad, as, &g->views) ||
        !view_of(attrs, TC__ATTR_MM_B_PERM, b, bd, bs, &g->views))
        return false;
    const int yr = tc__mm_perm(attrs, TC__ATTR_MM_Y_PERM, ry, yperm);
    if (yr < 0) return false;
    g->views = g->views || yr > 0;
    strides_of(y, ys);
    for (int i = 0; i < ry; i++) { /* dim yperm[i] of the product is dim i of Y */
        pd[yperm[i]] = y->dims[i];
        ps[yperm[i]] = ys[i];
    }
    g->alpha = tc__attr_float(attrs, TC__ATTR_MM_ALPHA, 1.0f);
    g->m = ra == 1 ? 1 : (size_t)ad[ra - 2];
    g->k = (size_t)ad[ra - 1];
    const size_t kb = rb == 1 ? (size_t)bd[0] : (size_t)bd[rb - 2];
    g->n = rb == 1 ? 1 : (size_t)bd[rb - 1];
    g->bias_rows = rb == 1 && ra >= 2;
    if (g->k != kb) return false;
    g->rs_a = ra == 1 ? 0 : as[ra - 2];
    g->cs_a = as[ra - 1];
    g->rs_b = rb == 1 ? bs[0] : bs[rb - 2];
    g->cs_b = rb == 1 ? 1 : bs[rb - 1];
    const int nba = ra > 2 ? ra - 2 : 0, nbb = rb > 2 ? rb - 2 : 0;
    g->nb = nba > nbb ? nba : nbb;
    g->n_batch = 1;
    for (int i = g->nb - 1; i >= 0; i--) {
        const int ia = i - (g->nb - nba), ib = i - (g->nb - nbb);
        const size_t da = ia >= 0 ? (size_t)ad[ia] : 1, db = ib >= 0 ? (size_t)bd[ib] : 1;
        if (da != db && da != 1 && db != 1) return false;
        g->batch[i] = da == 1 ? db : da;
        g->a_bs[i] = da == 1 ? 0 : as[ia];
        g->b_bs[i] = db == 1 ? 0 : bs[ib];
        g->n_batch *= g->batch[i];
    }
    /* The output shape must be what matmul produces, its columns contiguous (the microkernels' stores). */
    int64_t want[TC_MAX_RANK];
    int r = 0;
    for (int i = 0; i < g->nb; i++)
        want[r++] = (int64_t)g->batch[i];
    if (ra > 1) want[r++] = (int64_t)g->m;
    if (rb > 1) want[r++] = (int64_t)g->n;
    if (ry != r || memcmp(pd, want, sizeof(int64_t) * (size_t)r) != 0) return false;
    if (r > 0 && ps[r - 1] != 1 && rb > 1) return false;
    for (int i = 0; i < g->nb; i++) g->c_bs[i] = ps[i];
    g->ldc = ra > 1 ? ps[g->nb] : g->n;
    return true;
}

