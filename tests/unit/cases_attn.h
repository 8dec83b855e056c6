/*
 * cases_attn.h - generated Attention cases for test_all_tactics.c (the CUDA fused attention against the reference):
 * 3-D and 4-D inputs, grouped-query heads, head sizes and sequence lengths at edge sizes (a key tile is 32), float
 * masks of every broadcast shape (with -inf entries and, under the NaN guard, fully masked rows), boolean masks, a mask
 * shorter than the keys, is_causal, scale, softcap; then the same marked tc.fp16 (the FP16 Tensor Core attention: head
 * sizes 16..128 in steps of 16, no softcap, the NaN guard only to 0; FP16's tolerance). #included after cases_dense.h (dn_rand_int)
 * and cases_fp16.h (fp16_mark); attn_cases() runs them all.
 */
#ifndef TC_TESTS_UNIT_CASES_ATTN_H
#define TC_TESTS_UNIT_CASES_ATTN_H

#include "core/fused_attr.h"

static void attn_cases_of(bool fp16) {
    static const int64_t kHead16[5] = {64, 16, 32, 128, 48};
    for (int r = 0; r < 16; r++) {
        tcase c = {.op = "Attention", .opset = 23, .tol = fp16 ? FP16_TOL : 2e-5};
        if (fp16) fp16_mark(&c);
        const bool rank3 = r % 2 == 0;
        const int64_t b = 1 + r % 2, hk = 1 + r % 3, group = r % 4 == 3 ? 2 : 1, hq = hk * group;
        const int64_t s = r == 0 ? 128 : pick(kEdge, 10), l = r == 0 ? 128 : r == 1 ? 300 : pick(kEdge, 10);
        const int64_t d = fp16 ? kHead16[r % 5] : r == 0 ? 64 : r == 2 ? 130 : pick(kEdge, 10);
        const int64_t dv = !fp16 && r % 5 == 1 ? d + 3 : d;
        if (rank3) {
            const int64_t q[3] = {b, s, hq * d}, k[3] = {b, l, hk * d}, v[3] = {b, l, hk * dv};
            add_in(&c, rand_t(3, q, -2, 2), false);
            add_in(&c, rand_t(3, k, -2, 2), false);
            add_in(&c, rand_t(3, v, -2, 2), false);
            c.attrs[c.n_attrs++] = etu_attr_int("q_num_heads", hq);
            c.attrs[c.n_attrs++] = etu_attr_int("kv_num_heads", hk);
        } else {
            const int64_t q[4] = {b, hq, s, d}, k[4] = {b, hk, l, d}, v[4] = {b, hk, l, dv};
            add_in(&c, rand_t(4, q, -2, 2), false);
            add_in(&c, rand_t(4, k, -2, 2), false);
            add_in(&c, rand_t(4, v, -2, 2), false);
        }
        const int mk = r % 6; /* 0: none; 1: [S, L] float; 2: [B, 1, S, L] float; 3: [1, Hq, 1, L] float; 4: bool [B, Hq,
                               * S, L]; 5: [S, L'] float with L' < L (padded) */
        const bool guard = r % 3 == 0 && (!fp16 || r % 2 == 0); /* (FP16: the guard to 0 only) */
        if (mk != 0) {
            int64_t md[4] = {s, l, 0, 0};
            int32_t mr = 2;
            if (mk == 2) mr = 4, md[0] = b, md[1] = 1, md[2] = s, md[3] = l;
            if (mk == 3) mr = 4, md[0] = 1, md[1] = hq, md[2] = 1, md[3] = l;
            if (mk == 4) mr = 4, md[0] = b, md[1] = hq, md[2] = s, md[3] = l;
            if (mk == 5) md[1] = l > 1 ? l - 1 : 1;
            tc__tensor m = mk == 4 ? dn_rand_int(TC_DTYPE_BOOL, mr, md, 0, 1) : rand_t(mr, md, -1, 1);
            const int64_t mn = tc__tensor_numel(&m), last = md[mr - 1];
            for (int64_t i = 0; i < mn; i++) {
                if (mk == 4) {
                    if (i % last == 0) ((uint8_t *)m.data)[i] = 1; /* every row keeps a key... */
                    if (guard && i < last) ((uint8_t *)m.data)[i] = 0; /* ...but the first under the guard */
                } else {
                    float *mv = m.data;
                    mv[i] = i % 5 == 2 ? -10000.0f : (i % 7 == 1 && i % last != 0 ? -INFINITY : mv[i]);
                    if (guard && i < last) mv[i] = -INFINITY;
                }
            }
            add_in(&c, m, r % 4 == 0);
        }
        if (guard) c.attrs[c.n_attrs++] = etu_attr_float(TC__ATTR_NAN_TO, r % 2 ? -1.0f : 0.0f);
        if (r % 4 == 1) c.attrs[c.n_attrs++] = etu_attr_int("is_causal", 1);
        if (r % 5 == 2) c.attrs[c.n_attrs++] = etu_attr_float("scale", 0.3f);
        if (!fp16 && r % 7 == 4) c.attrs[c.n_attrs++] = etu_attr_float("softcap", 2.5f);
        run_case(&c);
    }
}

static void attn_cases(void) {
    attn_cases_of(false);
    attn_cases_of(true);
}

#endif
