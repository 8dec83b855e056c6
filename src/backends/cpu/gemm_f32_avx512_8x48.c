/*
 * gemm_f32_avx512_8x48.c - the second AVX-512 FP32 GEMM microkernel: up to 8 rows x 48 columns of C
 * in 24 zmm accumulators; per k, three loads of B and one broadcast of A per row (24 FMAs for 11
 * loads). It tiles M = 128 (BERT's 128 tokens) and N = 768 / 2304 / 3072 exactly, where the 14x32
 * kernel ends each column panel with a 2-row tile that runs far below peak (4 loads per 4 FMAs);
 * the tuner times both per layer. The contract is that of tc__gemm_f32_avx512_14x32 (gemm.h): one
 * variant per row count (1..8), each in a full-width form, a full-width form for packed A panels,
 * and masked forms (nr < 48) that compute only the 16-column vectors the tile has; packed panels
 * narrower than 48 are never read past their end. The epilogue's scale, biases, residual and clamp
 * (None/Relu/Clip) are applied in registers; other activations run on the stored tile while it is
 * in L1.
 */
#include <immintrin.h>

#include "backends/cpu/gemm.h"

#define MR 8
#define NR 48

/* The lanes of the 16-column vector starting at column `first` that lie within nr columns. */
static inline __mmask16 lane_mask(size_t nr, size_t first) {
    if (nr >= first + 16) return (__mmask16)0xffff;
    if (nr <= first) return (__mmask16)0;
    return (__mmask16)((1u << (nr - first)) - 1u);
}

/* B rows: plain loads for full tiles, masked loads otherwise (never past a narrow panel's end). */
static inline __attribute__((always_inline)) __m512 load_b(const float *p, bool full, __mmask16 m) {
    return full ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(m, p);
}

/*
 * mr rows, nv 16-column vectors (3 unless masked), full: nr == 48 (unmasked loads of B).
 * packed: A is an MR-row panel (rs_a 1, cs_a mr), so rows are at constant offsets from one pointer
 * and the registers that would hold row offsets are free.
 * acc[v][i] holds row i, columns [16 v, 16 v + 16); every index is a constant once unrolled, so
 * the array lives in registers.
 */
static inline __attribute__((always_inline)) void kernel(const tc__gemm_tile *t, const int mr, const int nv,
                                                         const bool full, const bool packed) {
    const size_t nr = full ? NR : t->nr, kc = t->kc, rs_b = t->rs_b, ldc = t->ldc;
    const size_t rs_a = packed ? 1 : t->rs_a, cs_a = packed ? (size_t)mr : t->cs_a;
    const __mmask16 mask[3] = {lane_mask(nr, 0), lane_mask(nr, 16), lane_mask(nr, 32)};
    float *c = t->c;
    __m512 acc[3][MR];
    if (t->load_c) {
#pragma GCC unroll 8
        for (int i = 0; i < mr; i++) {
#pragma GCC unroll 3
            for (int v = 0; v < nv; v++)
                acc[v][i] = _mm512_maskz_loadu_ps(mask[v], c + (size_t)i * ldc + 16 * v);
        }
    } else {
#pragma GCC unroll 8
        for (int i = 0; i < mr; i++) {
#pragma GCC unroll 3
            for (int v = 0; v < nv; v++)
                acc[v][i] = _mm512_setzero_ps();
        }
    }
    /* A(i, k) at a[k * cs_a + i * rs_a]: one moving pointer, rows at fixed offsets. */
    const float *b = t->b, *a = t->a;
    for (size_t k = 0; k < kc; k++) {
        __m512 bv[3];
#pragma GCC unroll 3
        for (int v = 0; v < nv; v++)
            bv[v] = load_b(b + 16 * v, full, mask[v]);
        b += rs_b;
#pragma GCC unroll 8
        for (int i = 0; i < mr; i++) {
            const __m512 av = _mm512_set1_ps(a[(size_t)i * rs_a]);
#pragma GCC unroll 3
            for (int v = 0; v < nv; v++)
                acc[v][i] = _mm512_fmadd_ps(av, bv[v], acc[v][i]);
        }
        a += cs_a;
    }
    const tc__gemm_epi *e = t->epi;
    if (e != NULL) {
        if (e->alpha != 1.0f) {
            const __m512 va = _mm512_set1_ps(e->alpha);
#pragma GCC unroll 8
            for (int i = 0; i < mr; i++) {
#pragma GCC unroll 3
                for (int v = 0; v < nv; v++)
                    acc[v][i] = _mm512_mul_ps(acc[v][i], va);
            }
        }
        if (e->bias_m != NULL) {
            const float *bm = e->bias_m + t->i0;
#pragma GCC unroll 8
            for (int i = 0; i < mr; i++) {
                const __m512 s = _mm512_set1_ps(bm[i]);
#pragma GCC unroll 3
                for (int v = 0; v < nv; v++)
                    acc[v][i] = _mm512_add_ps(acc[v][i], s);
            }
        }
        if (e->bias_n != NULL) {
            __m512 bn[3];
#pragma GCC unroll 3
            for (int v = 0; v < nv; v++)
                bn[v] = _mm512_maskz_loadu_ps(mask[v], e->bias_n + t->j0 + 16 * v);
#pragma GCC unroll 8
            for (int i = 0; i < mr; i++) {
#pragma GCC unroll 3
                for (int v = 0; v < nv; v++)
                    acc[v][i] = _mm512_add_ps(acc[v][i], bn[v]);
            }
        }
        if (e->res != NULL) {
            const float *r = e->res + t->i0 * e->ld_res + t->j0;
            const __m512 s = _mm512_set1_ps(e->res_scale);
#pragma GCC unroll 8
            for (int i = 0; i < mr; i++) {
#pragma GCC unroll 3
                for (int v = 0; v < nv; v++)
                    acc[v][i] = _mm512_fmadd_ps(s, _mm512_maskz_loadu_ps(mask[v], r + (size_t)i * e->ld_res + 16 * v),
                                                acc[v][i]);
            }
        }
        if (e->act == TC__ACT_RELU || e->act == TC__ACT_CLIP) {
            /* max(lo, x) and min(hi, x) return x when x is NaN (Clip keeps NaN); Relu maps NaN to 0. */
            const bool relu = e->act == TC__ACT_RELU;
            const __m512 lo = _mm512_set1_ps(relu ? 0.0f : e->act_alpha), hi = _mm512_set1_ps(e->act_beta);
#pragma GCC unroll 8
            for (int i = 0; i < mr; i++) {
#pragma GCC unroll 3
                for (int v = 0; v < nv; v++)
                    acc[v][i] = relu ? _mm512_max_ps(acc[v][i], lo) : _mm512_min_ps(hi, _mm512_max_ps(lo, acc[v][i]));
            }
        }
    }
#pragma GCC unroll 8
    for (int i = 0; i < mr; i++) {
#pragma GCC unroll 3
        for (int v = 0; v < nv; v++)
            _mm512_mask_storeu_ps(c + (size_t)i * ldc + 16 * v, mask[v], acc[v][i]);
    }
    if (e != NULL && !tc__gemm_act_is_clamp(e->act)) tc__gemm_act_f32_avx512(c, ldc, (size_t)mr, nr, e);
}

/* Per row count: the full, packed-A and three masked forms (1, 2 or 3 vectors of 16 columns). */
#define TC_KERNEL_ROWS_(n)                                                                                             \
    static void kernel_##n(const tc__gemm_tile *t) { kernel(t, n, 3, true, false); }                                   \
    static void kernel_##n##_packed(const tc__gemm_tile *t) { kernel(t, n, 3, true, true); }                           \
    static void kernel_##n##_masked1(const tc__gemm_tile *t) { kernel(t, n, 1, false, false); }                        \
    static void kernel_##n##_masked2(const tc__gemm_tile *t) { kernel(t, n, 2, false, false); }                        \
    static void kernel_##n##_masked3(const tc__gemm_tile *t) { kernel(t, n, 3, false, false); }
TC_KERNEL_ROWS_(1)
TC_KERNEL_ROWS_(2)
TC_KERNEL_ROWS_(3)
TC_KERNEL_ROWS_(4)
TC_KERNEL_ROWS_(5)
TC_KERNEL_ROWS_(6)
TC_KERNEL_ROWS_(7)
TC_KERNEL_ROWS_(8)
#undef TC_KERNEL_ROWS_

typedef void (*kernel_fn)(const tc__gemm_tile *);

void tc__gemm_f32_avx512_8x48(const tc__gemm_tile *t) {
    static const kernel_fn kFull[MR + 1] = {
        NULL, kernel_1, kernel_2, kernel_3, kernel_4, kernel_5, kernel_6, kernel_7, kernel_8,
    };
    static const kernel_fn kPacked[MR + 1] = {
        NULL,
        kernel_1_packed,
        kernel_2_packed,
        kernel_3_packed,
        kernel_4_packed,
        kernel_5_packed,
        kernel_6_packed,
        kernel_7_packed,
        kernel_8_packed,
    };
    /* kMasked[mr][vectors - 1] */
    static const kernel_fn kMasked[MR + 1][3] = {
        {NULL, NULL, NULL},
        {kernel_1_masked1, kernel_1_masked2, kernel_1_masked3},
        {kernel_2_masked1, kernel_2_masked2, kernel_2_masked3},
        {kernel_3_masked1, kernel_3_masked2, kernel_3_masked3},
        {kernel_4_masked1, kernel_4_masked2, kernel_4_masked3},
        {kernel_5_masked1, kernel_5_masked2, kernel_5_masked3},
        {kernel_6_masked1, kernel_6_masked2, kernel_6_masked3},
        {kernel_7_masked1, kernel_7_masked2, kernel_7_masked3},
        {kernel_8_masked1, kernel_8_masked2, kernel_8_masked3},
    };
    if (t->mr < 1 || t->mr > MR || t->nr < 1 || t->nr > NR) return;
    if (t->nr < NR)
        kMasked[t->mr][(t->nr - 1) / 16](t);
    else if (t->rs_a == 1 && t->cs_a == t->mr)
        kPacked[t->mr](t);
    else
        kFull[t->mr](t);
}
