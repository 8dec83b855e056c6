/* attention_geom.c - the Attention node's geometry (see attention_geom.h). */
#include "core/attention_geom.h"

#include <math.h>
#include <string.h>

#define LIMIT ((int64_t)1 << 40)

static tc_status bad(tc__err *err, const char *what) { return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "%s", what); }

tc_status tc__attn_check_extras(int n_in, const bool *in_present, int n_out, const bool *out_present, tc__err *err) {
    static const char *const kIn[] = {"past_key", "past_value", "nonpad_kv_seqlen"};
    static const char *const kOut[] = {"present_key", "present_value", "qk_matmul_output"};
    for (int i = 4; i < n_in; i++)
        if (in_present[i])
            return tc__fail(err, TC_STATUS_UNSUPPORTED, "Attention: input %s is not supported (no KV cache yet)",
                            i - 4 < 3 ? kIn[i - 4] : "past the seventh");
    for (int i = 1; i < n_out; i++)
        if (out_present[i])
            return tc__fail(err, TC_STATUS_UNSUPPORTED, "Attention: output %s is not supported",
                            i - 1 < 3 ? kOut[i - 1] : "past the fourth");
    return TC_STATUS_OK;
}

/* Splits a 3-D [B, T, H*E] into (B, T, E) given H; false when H does not divide. */
static bool split3(const int64_t *x, int64_t h, int64_t *b, int64_t *t, int64_t *e) {
    if (h < 1 || x[2] % h != 0) return false;
    *b = x[0], *t = x[1], *e = x[2] / h;
    return true;
}

tc_status tc__attn_geometry(const tc__attrs *attrs, int32_t q_rank, const int64_t *q, int32_t k_rank, const int64_t *k,
                            int32_t v_rank, const int64_t *v, int32_t mask_rank, const int64_t *mask, bool mask_bool,
                            tc__attn_geom *g, tc__err *err) {
    memset(g, 0, sizeof *g);
    if (q_rank != k_rank || q_rank != v_rank || (q_rank != 3 && q_rank != 4))
        return bad(err, "Attention: Q, K and V must all be 3-D or all 4-D");
    for (int32_t i = 0; i < q_rank; i++)
        if (q[i] < 0 || k[i] < 0 || v[i] < 0 || q[i] > LIMIT || k[i] > LIMIT || v[i] > LIMIT)
            return bad(err, "Attention: Q, K or V has an invalid dim");
    const int64_t qmode = tc__attr_int(attrs, "qk_matmul_output_mode", 0);
    if (qmode < 0 || qmode > 3) return bad(err, "Attention: qk_matmul_output_mode must be 0..3");
    const int64_t causal = tc__attr_int(attrs, "is_causal", 0);
    if (causal != 0 && causal != 1) return bad(err, "Attention: is_causal must be 0 or 1");
    g->causal = causal == 1;
    int64_t kb, vb, l2;
    g->packed = tc__attr_int(attrs, TC__ATTR_QKV_PACKED, 0) == 1;
    if (g->packed) {
        /* one [B, S, (Hq + 2 Hk) * D] tensor given as Q, K and V */
        if (q_rank != 3 || memcmp(q, k, 3 * sizeof *q) != 0 || memcmp(q, v, 3 * sizeof *q) != 0)
            return bad(err, "Attention: packed Q|K|V must be one 3-D tensor");
        g->rank3 = true;
        g->hq = tc__attr_int(attrs, "q_num_heads", 0);
        g->hk = tc__attr_int(attrs, "kv_num_heads", 0);
        if (g->hq < 1 || g->hk < 1 || g->hq > LIMIT || g->hk > LIMIT)
            return bad(err, "Attention: packed Q|K|V needs q_num_heads and kv_num_heads >= 1");
        const int64_t heads = g->hq + 2 * g->hk;
        if (q[2] % heads != 0) return bad(err, "Attention: the packed width is not (q + 2 kv heads) x head size");
        g->b = kb = vb = q[0], g->s = g->l = l2 = q[1], g->d = g->dv = q[2] / heads;
        g->q_sb = g->k_sb = g->v_sb = g->s * q[2], g->q_sh = g->k_sh = g->v_sh = g->d, g->q_si = g->k_si = g->v_si = q[2];
        g->k_off = g->hq * g->d, g->v_off = (g->hq + g->hk) * g->d;
        g->y_sb = g->s * g->hq * g->dv, g->y_sh = g->dv, g->y_si = g->hq * g->dv;
    } else if (q_rank == 3) {
        g->rank3 = true;
        g->hq = tc__attr_int(attrs, "q_num_heads", 0);
        g->hk = tc__attr_int(attrs, "kv_num_heads", 0);
        if (g->hq < 1 || g->hk < 1) return bad(err, "Attention: 3-D inputs need q_num_heads and kv_num_heads >= 1");
        if (!split3(q, g->hq, &g->b, &g->s, &g->d)) return bad(err, "Attention: q_num_heads does not divide Q's last dim");
        int64_t dk;
        if (!split3(k, g->hk, &kb, &g->l, &dk) || !split3(v, g->hk, &vb, &l2, &g->dv))
            return bad(err, "Attention: kv_num_heads does not divide K's or V's last dim");
        if (dk != g->d) return bad(err, "Attention: Q and K head sizes differ");
        g->q_sb = g->s * g->hq * g->d, g->q_sh = g->d, g->q_si = g->hq * g->d;
        g->k_sb = g->l * g->hk * g->d, g->k_sh = g->d, g->k_si = g->hk * g->d;
        g->v_sb = g->l * g->hk * g->dv, g->v_sh = g->dv, g->v_si = g->hk * g->dv;
        g->y_sb = g->s * g->hq * g->dv, g->y_sh = g->dv, g->y_si = g->hq * g->dv;
    } else {
        g->b = q[0], g->hq = q[1], g->s = q[2], g->d = q[3];
        kb = k[0], g->hk = k[1], g->l = k[2];
        vb = v[0], l2 = v[2], g->dv = v[3];
        if (k[3] != g->d) return bad(err, "Attention: Q and K head sizes differ");
        if (v[1] != g->hk) return bad(err, "Attention: K and V have different head counts");
        g->q_sb = g->hq * g->s * g->d, g->q_sh = g->s * g->d, g->q_si = g->d;
        g->k_sb = g->hk * g->l * g->d, g->k_sh = g->l * g->d, g->k_si = g->d;
        g->v_sb = g->hk * g->l * g->dv, g->v_sh = g->l * g->dv, g->v_si = g->dv;
        g->y_sb = g->hq * g->s * g->dv, g->y_sh = g->s * g->dv, g->y_si = g->dv;
    }
    if (kb != g->b || vb != g->b) return bad(err, "Attention: Q, K and V have different batch sizes");
    if (l2 != g->l) return bad(err, "Attention: K and V have different sequence lengths");
    if (g->hk < 1 || g->hq % g->hk != 0) return bad(err, "Attention: the query heads are not a multiple of the KV heads");
    if (g->d < 1) return bad(err, "Attention: the head size is 0");
    const float dflt = (float)(1.0 / sqrt((double)g->d));
    g->scale = tc__attr_float(attrs, "scale", dflt);
    g->softcap = tc__attr_float(attrs, "softcap", 0.0f);
    if (!isfinite(g->scale) || !isfinite(g->softcap) || g->softcap < 0.0f)
        return bad(err, "Attention: scale and softcap must be finite (softcap >= 0)");
    g->nan_guard = tc__attr_has(attrs, TC__ATTR_NAN_TO);
    g->nan_to = tc__attr_float(attrs, TC__ATTR_NAN_TO, 0.0f);
    if (mask_rank > 0) {
        if (mask_rank > 4) return bad(err, "Attention: the mask has rank above 4");
        int64_t md[4] = {1, 1, 1, 1};
        for (int32_t i = 0; i < mask_rank; i++) {
            if (mask[i] < 0 || mask[i] > LIMIT) return bad(err, "Attention: the mask has an invalid dim");
            md[4 - mask_rank + i] = mask[i];
        }
        const int64_t full[3] = {g->b, g->hq, g->s};
        for (int i = 0; i < 3; i++)
            if (md[i] != 1 && md[i] != full[i])
                return bad(err, "Attention: the mask does not broadcast to [batch, q_heads, q_seq, kv_seq]");
        if (md[3] > g->l) return bad(err, "Attention: the mask's last dim exceeds the KV sequence length");
        g->has_mask = true;
        g->mask_bool = mask_bool;
        g->mask_len = md[3];
        g->m_si = md[2] == 1 ? 0 : md[3];
        g->m_sh = md[1] == 1 ? 0 : md[2] * md[3];
        g->m_sb = md[0] == 1 ? 0 : md[1] * md[2] * md[3];
    }
    return TC_STATUS_OK;
}
