/*
 * attention.c - reference Attention (opset 23, the subset of core/attention_geom.h): for each batch b, query head h
 * and query row i, s_j = scale * (Q[b,h,i] . K[b,h',j]) + mask (a float added; a boolean false or j past the mask's
 * length: -inf) + causal (-inf for j > i), then softcap * tanh(s_j / softcap) when softcap > 0, p = softmax(s)
 * (float32 only; a row of -inf gives NaN, as the spec's arithmetic; TC__ATTR_NAN_TO replaces NaN probabilities), and
 * Y[b,h,i] = sum_j p_j V[b,h',j] with h' = h / (Hq / Hk). Computes in double from the inputs; takes no scratch: each
 * score is computed three times (the row maximum, the sum, the output), Y accumulates in place.
 */
#include <math.h>

#include "backends/ref/ref.h"
#include "core/attention_geom.h"

static inline double get(const tc__tensor *t, int64_t i) { return (double)((const float *)t->data)[i]; }

typedef struct row {
    const tc__attn_geom *g;
    const tc__tensor *q, *k, *m;
    int64_t q_at, k_at, m_at, i;
} row;

/* The score s_j of row r (mask, causal and softcap applied). */
static double score(const row *r, int64_t j) {
    const tc__attn_geom *g = r->g;
    if ((g->causal && j > r->i) || (g->has_mask && j >= g->mask_len)) return g->softcap > 0.0f ? -g->softcap : -INFINITY;
    double s = 0.0;
    for (int64_t e = 0; e < g->d; e++) s += get(r->q, r->q_at + e) * get(r->k, r->k_at + j * g->k_si + e);
    s *= g->scale;
    if (g->has_mask) {
        if (g->mask_bool) {
            if (((const uint8_t *)r->m->data)[r->m_at + j] == 0) s = -INFINITY;
        } else {
            s += get(r->m, r->m_at + j);
        }
    }
    if (g->softcap > 0.0f) s = g->softcap * tanh(s / g->softcap);
    return s;
}

tc_status tc__ref_Attention(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 3 || ctx->in[0] == NULL || ctx->in[1] == NULL || ctx->in[2] == NULL || ctx->n_out < 1 ||
        ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects inputs Q, K, V and output Y");
    bool in_present[8] = {false}, out_present[8] = {false};
    for (int i = 0; i < ctx->n_in && i < 8; i++) in_present[i] = ctx->in[i] != NULL;
    for (int i = 0; i < ctx->n_out && i < 8; i++) out_present[i] = ctx->out[i] != NULL;
    tc_status st = tc__attn_check_extras(ctx->n_in < 8 ? ctx->n_in : 8, in_present, ctx->n_out < 8 ? ctx->n_out : 8,
                                         out_present, ctx->err);
    if (st != TC_STATUS_OK) return st;
    const tc__tensor *q = ctx->in[0], *k = ctx->in[1], *v = ctx->in[2], *m = ctx->n_in > 3 ? ctx->in[3] : NULL;
    tc__tensor *y = ctx->out[0];
    if (q->dtype != TC_DTYPE_FLOAT32)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "Attention computes float32 only (Q is %s)",
                        tc_dtype_name(q->dtype) ? tc_dtype_name(q->dtype) : "?");
    if (k->dtype != q->dtype || v->dtype != q->dtype || y->dtype != q->dtype)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Q, K, V and Y must have the same data type");
    if (m != NULL && m->dtype != TC_DTYPE_BOOL && m->dtype != q->dtype)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attn_mask must be bool or of Q's data type");
    tc__attn_geom g;
    st = tc__attn_geometry(ctx->attrs, q->rank, q->dims, k->rank, k->dims, v->rank, v->dims, m ? m->rank : 0,
                           m ? m->dims : NULL, m != NULL && m->dtype == TC_DTYPE_BOOL, &g, ctx->err);
    if (st != TC_STATUS_OK) return st;
    const int64_t want[4] = {g.b, g.rank3 ? g.s : g.hq, g.rank3 ? g.hq * g.dv : g.s, g.dv};
    if (y->rank != q->rank) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output Y must have Q's rank");
    for (int32_t i = 0; i < y->rank; i++)
        if (y->dims[i] != want[i])
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output Y's dim %d is %lld, expected %lld", (int)i,
                            (long long)y->dims[i], (long long)want[i]);
    const int64_t group = g.hq / g.hk;
    for (int64_t b = 0; b < g.b; b++)
        for (int64_t h = 0; h < g.hq; h++)
            for (int64_t i = 0; i < g.s; i++) {
                const int64_t hk = h / group;
                const row r = {.g = &g, .q = q, .k = k, .m = m, .i = i,
                               .q_at = b * g.q_sb + h * g.q_sh + i * g.q_si,
                               .k_at = g.k_off + b * g.k_sb + hk * g.k_sh,
                               .m_at = b * g.m_sb + h * g.m_sh + i * g.m_si};
                double mx = -INFINITY, sum = 0.0;
                for (int64_t j = 0; j < g.l; j++) {
                    const double s = score(&r, j);
                    mx = s > mx || isnan(s) ? s : mx;
                }
                for (int64_t j = 0; j < g.l; j++) sum += exp(score(&r, j) - mx);
                const int64_t y_at = b * g.y_sb + h * g.y_sh + i * g.y_si, v_at = g.v_off + b * g.v_sb + hk * g.v_sh;
                float *yr = (float *)y->data + y_at;
                for (int64_t e = 0; e < g.dv; e++) yr[e] = 0.0f;
                for (int64_t j = 0; j < g.l; j++) {
                    double p = exp(score(&r, j) - mx) / sum;
                    if (isnan(p) && g.nan_guard) p = g.nan_to;
                    for (int64_t e = 0; e < g.dv; e++) yr[e] = (float)(yr[e] + p * get(v, v_at + j * g.v_si + e));
                }
            }
    return TC_STATUS_OK;
}
