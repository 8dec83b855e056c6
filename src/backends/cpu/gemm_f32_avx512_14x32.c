/*
 * gemm_f32_avx512_14x32.c - the AVX-512 FP32 GEMM microkernel: up to 14 rows x 32 columns of C in
 * 28 zmm accumulators; per k, two loads of B and one broadcast of A per row. One variant per row
 * count (1..14), so remainder rows cost no wasted FMAs, each in a full-width and a masked (nr < 32)
 * form; packed panels narrower than 32 are never read past their end. The epilogue's scale,
 * biases, residual and clamp (None/Relu/Clip) are applied in registers; other activations run on
 * the stored tile while it is in L1.
 */
#include <immintrin.h>

#include "backends/cpu/gemm.h"

#define MR 14

/* B rows: plain loads for full tiles (masked loads cost ~6% in the inner loop), masked otherwise. */
static inline __attribute__((always_inline)) __m512 load_b(const float *p, bool full, __mmask16 m) {
    return full ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(m, p);
}

/*
 * packed: A is an MR-row panel (rs_a 1, cs_a mr), so rows are at constant offsets from one pointer;
 * this frees the registers the generic form spends on row offsets (about 4% faster).
 */
static inline __attribute__((always_inline)) void kernel(const tc__gemm_tile *t, const int mr, const bool full,
                                                         const bool packed) {
    const size_t nr = full ? 32 : t->nr, kc = t->kc, rs_b = t->rs_b, ldc = t->ldc;
    const size_t rs_a = packed ? 1 : t->rs_a, cs_a = packed ? (size_t)mr : t->cs_a;
    const __mmask16 m0 = nr >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << nr) - 1u);
    const __mmask16 m1 = nr >= 32 ? (__mmask16)0xffff : (nr <= 16 ? (__mmask16)0 : (__mmask16)((1u << (nr - 16)) - 1u));
    float *c = t->c;
    __m512 acc0[MR], acc1[MR];
#pragma GCC unroll 14
    for (int i = 0; i < mr; i++) {
        if (t->load_c) {
            acc0[i] = _mm512_maskz_loadu_ps(m0, c + (size_t)i * ldc);
            acc1[i] = _mm512_maskz_loadu_ps(m1, c + (size_t)i * ldc + 16);
        } else {
            acc0[i] = _mm512_setzero_ps();
            acc1[i] = _mm512_setzero_ps();
        }
    }
    /* A(i, k) at a[k * cs_a + i * rs_a]: one moving pointer, rows at fixed offsets (fewer live
     * registers than a pointer per row). */
    const float *b = t->b, *a = t->a;
    for (size_t k = 0; k < kc; k++) {
        const __m512 b0 = load_b(b, full, m0);
        const __m512 b1 = load_b(b + 16, full, m1);
        b += rs_b;
#pragma GCC unroll 14
        for (int i = 0; i < mr; i++) {
            const __m512 av = _mm512_set1_ps(a[(size_t)i * rs_a]);
            acc0[i] = _mm512_fmadd_ps(av, b0, acc0[i]);
            acc1[i] = _mm512_fmadd_ps(av, b1, acc1[i]);
        }
        a += cs_a;
    }
    const tc__gemm_epi *e = t->epi;
    if (e != NULL) {
        if (e->alpha != 1.0f) {
            const __m512 va = _mm512_set1_ps(e->alpha);
#pragma GCC unroll 14
            for (int i = 0; i < mr; i++) {
                acc0[i] = _mm512_mul_ps(acc0[i], va);
                acc1[i] = _mm512_mul_ps(acc1[i], va);
            }
        }
        if (e->bias_m != NULL) {
            const float *bm = e->bias_m + t->i0;
#pragma GCC unroll 14
            for (int i = 0; i < mr; i++) {
                const __m512 v = _mm512_set1_ps(bm[i]);
                acc0[i] = _mm512_add_ps(acc0[i], v);
                acc1[i] = _mm512_add_ps(acc1[i], v);
            }
        }
        if (e->bias_n != NULL) {
            const __m512 v0 = _mm512_maskz_loadu_ps(m0, e->bias_n + t->j0);
            const __m512 v1 = _mm512_maskz_loadu_ps(m1, e->bias_n + t->j0 + 16);
#pragma GCC unroll 14
            for (int i = 0; i < mr; i++) {
                acc0[i] = _mm512_add_ps(acc0[i], v0);
                acc1[i] = _mm512_add_ps(acc1[i], v1);
            }
        }
        if (e->res != NULL) {
            const float *r = e->res + t->i0 * e->ld_res + t->j0;
            const __m512 s = _mm512_set1_ps(e->res_scale);
#pragma GCC unroll 14
            for (int i = 0; i < mr; i++) {
                acc0[i] = _mm512_fmadd_ps(s, _mm512_maskz_loadu_ps(m0, r + (size_t)i * e->ld_res), acc0[i]);
                acc1[i] = _mm512_fmadd_ps(s, _mm512_maskz_loadu_ps(m1, r + (size_t)i * e->ld_res + 16), acc1[i]);
            }
        }
        if (e->act == TC__ACT_RELU || e->act == TC__ACT_CLIP) {
            /* max(lo, x) and min(hi, x) return x when x is NaN (Clip keeps NaN); Relu maps NaN to 0. */
            const bool relu = e->act == TC__ACT_RELU;
            const __m512 lo = _mm512_set1_ps(relu ? 0.0f : e->act_alpha), hi = _mm512_set1_ps(e->act_beta);
#pragma GCC unroll 14
            for (int i = 0; i < mr; i++) {
                if (relu) {
                    acc0[i] = _mm512_max_ps(acc0[i], lo);
                    acc1[i] = _mm512_max_ps(acc1[i], lo);
                } else {
                    acc0[i] = _mm512_min_ps(hi, _mm512_max_ps(lo, acc0[i]));
                    acc1[i] = _mm512_min_ps(hi, _mm512_max_ps(lo, acc1[i]));
                }
            }
        }
    }
#pragma GCC unroll 14
    for (int i = 0; i < mr; i++) {
        _mm512_mask_storeu_ps(c + (size_t)i * ldc, m0, acc0[i]);
        _mm512_mask_storeu_ps(c + (size_t)i * ldc + 16, m1, acc1[i]);
    }
    if (e != NULL && !tc__gemm_act_is_clamp(e->act)) tc__gemm_act_f32_avx512(c, ldc, (size_t)mr, nr, e);
}

#define TC_KERNEL_ROWS_(n)                                                                                             \
    static void kernel_##n(const tc__gemm_tile *t) { kernel(t, n, true, false); }                                      \
    static void kernel_##n##_packed(const tc__gemm_tile *t) { kernel(t, n, true, true); }                              \
    static void kernel_##n##_masked(const tc__gemm_tile *t) { kernel(t, n, false, false); }
TC_KERNEL_ROWS_(1)
TC_KERNEL_ROWS_(2)
TC_KERNEL_ROWS_(3)
TC_KERNEL_ROWS_(4)
TC_KERNEL_ROWS_(5)
TC_KERNEL_ROWS_(6)
TC_KERNEL_ROWS_(7)
TC_KERNEL_ROWS_(8)
TC_KERNEL_ROWS_(9)
TC_KERNEL_ROWS_(10)
TC_KERNEL_ROWS_(11)
TC_KERNEL_ROWS_(12)
TC_KERNEL_ROWS_(13)
TC_KERNEL_ROWS_(14)
#undef TC_KERNEL_ROWS_

void tc__gemm_f32_avx512_14x32(const tc__gemm_tile *t) {
    static void (*const kFull[MR + 1])(const tc__gemm_tile *) = {
        NULL,     kernel_1, kernel_2,  kernel_3,  kernel_4,  kernel_5,  kernel_6,  kernel_7,
        kernel_8, kernel_9, kernel_10, kernel_11, kernel_12, kernel_13, kernel_14,
    };
    static void (*const kMasked[MR + 1])(const tc__gemm_tile *) = {
        NULL,
        kernel_1_masked,
        kernel_2_masked,
        kernel_3_masked,
        kernel_4_masked,
        kernel_5_masked,
        kernel_6_masked,
        kernel_7_masked,
        kernel_8_masked,
        kernel_9_masked,
        kernel_10_masked,
        kernel_11_masked,
        kernel_12_masked,
        kernel_13_masked,
        kernel_14_masked,
    };
    static void (*const kPacked[MR + 1])(const tc__gemm_tile *) = {
        NULL,
        kernel_1_packed,
        kernel_2_packed,
        kernel_3_packed,
        kernel_4_packed,
        kernel_5_packed,
        kernel_6_packed,
        kernel_7_packed,
        kernel_8_packed,
        kernel_9_packed,
        kernel_10_packed,
        kernel_11_packed,
        kernel_12_packed,
        kernel_13_packed,
        kernel_14_packed,
    };
    if (t->mr < 1 || t->mr > MR || t->nr < 1 || t->nr > 32) return;
    if (t->nr < 32)
        kMasked[t->mr](t);
    else if (t->rs_a == 1 && t->cs_a == t->mr)
        kPacked[t->mr](t);
    else
        kFull[t->mr](t);
}
