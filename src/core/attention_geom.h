/*
 * attention_geom.h - the geometry of an ONNX Attention node (opset 23) from its tensors' dims and attributes, read
 * and checked once for the reference kernel and the fast tactics: Q [B, Hq, S, D] or [B, S, Hq*D] (3-D: q_num_heads,
 * kv_num_heads given), K [B, Hk, L, D], V [B, Hk, L, Dv] (or 3-D likewise), an optional additive float or boolean
 * mask broadcast to [B, Hq, S, L], is_causal, scale (default 1/sqrt(D)), softcap; grouped-query heads (Hq a multiple
 * of Hk: q head h reads kv head h / (Hq / Hk)). Not taken (TC_STATUS_UNSUPPORTED): past_key/past_value,
 * nonpad_kv_seqlen, the outputs present_key/present_value/qk_matmul_output. TC__ATTR_NAN_TO (the fused
 * Where(IsNaN(p), c, p) of exported transformers, put by fuse_attention) replaces NaN probabilities by c.
 * Element (b, h, i, d) of Q is at b * q_sb + h * q_sh + i * q_si + d (likewise K, V with the kv head, Y with Dv);
 * the mask's element (b, h, i, j) at b * m_sb + h * m_sh + i * m_si + j (stride 0 along broadcast dims), for
 * j < mask_len (j >= mask_len: masked out, the spec's -inf padding).
 * With TC__ATTR_QKV_PACKED (merge_qkv) the three inputs are one packed [B, S, (Hq + 2 Hk) * D] tensor: K's and V's
 * elements are at k_off and v_off past the start of that tensor (0 otherwise), with its row stride.
 */
#ifndef TC_CORE_ATTENTION_GEOM_H
#define TC_CORE_ATTENTION_GEOM_H

#include <stdbool.h>
#include <stdint.h>

#include "core/attr.h"
#include "core/error.h"
#include "core/fused_attr.h"

typedef struct tc__attn_geom {
    int64_t b, hq, hk, s, l, d, dv;
    bool rank3;
    bool packed;          /* TC__ATTR_QKV_PACKED: K and V inside Q's tensor, at k_off and v_off (elements) */
    int64_t k_off, v_off;
    int64_t q_sb, q_sh, q_si, k_sb, k_sh, k_si, v_sb, v_sh, v_si, y_sb, y_sh, y_si;
    bool has_mask, mask_bool;
    int64_t m_sb, m_sh, m_si, mask_len;
    bool causal;
    float scale, softcap;
    bool nan_guard;
    float nan_to;
} tc__attn_geom;

/* The geometry from the inputs' ranks and dims (mask_rank 0: no mask; mask_bool: a boolean mask) and the node's
 * attributes. Fails naming what does not fit. */
tc_status tc__attn_geometry(const tc__attrs *attrs, int32_t q_rank, const int64_t *q, int32_t k_rank, const int64_t *k,
                            int32_t v_rank, const int64_t *v, int32_t mask_rank, const int64_t *mask, bool mask_bool,
                            tc__attn_geom *g, tc__err *err);

/* Fails (TC_STATUS_UNSUPPORTED) when inputs 4.. or outputs 1.. are present (in_present[i] / out_present[i] of the
 * node's n_in inputs and n_out outputs): past key/value, nonpad_kv_seqlen, present key/value, qk_matmul_output. */
tc_status tc__attn_check_extras(int n_in, const bool *in_present, int n_out, const bool *out_present, tc__err *err);

#endif
