/*
 * gemm_f32_avx2_6x16.c - the AVX2+FMA FP32 GEMM microkernel: up to 6 rows x 16 columns of C in
 * 12 ymm accumulators; per k, two loads of B and one broadcast of A per row. One variant per row
 * count (1..6), each in a full-width and a masked (nr < 16) form. The epilogue's scale, biases,
 * residual and clamp (None/Relu/Clip) are applied in registers; other activations run on the
 * stored tile while it is in L1.
 */
#include <immintrin.h>

#include "backends/cpu/gemm.h"

#define MR 6

/* Lane masks for the first n of 8 lanes (n may be <= 0 or >= 8). */
static inline __m256i lanes(long n) {
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n < 0 ? 0 : (n > 8 ? 8 : n))), iota);
}

static inline __attribute__((always_inline)) __m256 load(const float *p, bool full, __m256i mask) {
    return full ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask);
}

static inline __attribute__((always_inline)) void store(float *p, __m256 v, bool full, __m256i mask) {
    if (full)
        _mm256_storeu_ps(p, v);
    else
        _mm256_maskstore_ps(p, mask, v);
}

static inline __attribute__((always_inline)) void kernel(const tc__gemm_tile *t, const int mr, const bool full) {
    const size_t nr = t->nr, kc = t->kc, rs_a = t->rs_a, cs_a = t->cs_a, rs_b = t->rs_b, ldc = t->ldc;
    const __m256i k0 = lanes((long)nr), k1 = lanes((long)nr - 8);
    float *c = t->c;
    __m256 acc0[MR], acc1[MR];
#pragma GCC unroll 6
    for (int i = 0; i < mr; i++) {
        if (t->load_c) {
            acc0[i] = load(c + (size_t)i * ldc, full, k0);
            acc1[i] = load(c + (size_t)i * ldc + 8, full, k1);
        } else {
            acc0[i] = _mm256_setzero_ps();
            acc1[i] = _mm256_setzero_ps();
        }
    }
    /* A(i, k) at a[k * cs_a + i * rs_a]: one moving pointer, rows at fixed offsets. */
    const float *b = t->b, *a = t->a;
    for (size_t k = 0; k < kc; k++) {
        const __m256 b0 = load(b, full, k0);
        const __m256 b1 = load(b + 8, full, k1);
        b += rs_b;
#pragma GCC unroll 6
        for (int i = 0; i < mr; i++) {
            const __m256 av = _mm256_broadcast_ss(a + (size_t)i * rs_a);
            acc0[i] = _mm256_fmadd_ps(av, b0, acc0[i]);
            acc1[i] = _mm256_fmadd_ps(av, b1, acc1[i]);
        }
        a += cs_a;
    }
    const tc__gemm_epi *e = t->epi;
    if (e != NULL) {
        if (e->alpha != 1.0f) {
            const __m256 va = _mm256_set1_ps(e->alpha);
#pragma GCC unroll 6
            for (int i = 0; i < mr; i++) {
                acc0[i] = _mm256_mul_ps(acc0[i], va);
                acc1[i] = _mm256_mul_ps(acc1[i], va);
            }
        }
        if (e->bias_m != NULL) {
            const float *bm = e->bias_m + t->i0;
#pragma GCC unroll 6
            for (int i = 0; i < mr; i++) {
                const __m256 v = _mm256_set1_ps(bm[i]);
                acc0[i] = _mm256_add_ps(acc0[i], v);
                acc1[i] = _mm256_add_ps(acc1[i], v);
            }
        }
        if (e->bias_n != NULL) {
            const __m256 v0 = load(e->bias_n + t->j0, full, k0), v1 = load(e->bias_n + t->j0 + 8, full, k1);
#pragma GCC unroll 6
            for (int i = 0; i < mr; i++) {
                acc0[i] = _mm256_add_ps(acc0[i], v0);
                acc1[i] = _mm256_add_ps(acc1[i], v1);
            }
        }
        if (e->res != NULL) {
            const float *r = e->res + t->i0 * e->ld_res + t->j0;
            const __m256 s = _mm256_set1_ps(e->res_scale);
#pragma GCC unroll 6
            for (int i = 0; i < mr; i++) {
                acc0[i] = _mm256_fmadd_ps(s, load(r + (size_t)i * e->ld_res, full, k0), acc0[i]);
                acc1[i] = _mm256_fmadd_ps(s, load(r + (size_t)i * e->ld_res + 8, full, k1), acc1[i]);
            }
        }
        if (e->act == TC__ACT_RELU || e->act == TC__ACT_CLIP) {
            /* max(lo, x) and min(hi, x) return x when x is NaN (Clip keeps NaN); Relu maps NaN to 0. */
            const bool relu = e->act == TC__ACT_RELU;
            const __m256 lo = _mm256_set1_ps(relu ? 0.0f : e->act_alpha), hi = _mm256_set1_ps(e->act_beta);
#pragma GCC unroll 6
            for (int i = 0; i < mr; i++) {
                if (relu) {
                    acc0[i] = _mm256_max_ps(acc0[i], lo);
                    acc1[i] = _mm256_max_ps(acc1[i], lo);
                } else {
                    acc0[i] = _mm256_min_ps(hi, _mm256_max_ps(lo, acc0[i]));
                    acc1[i] = _mm256_min_ps(hi, _mm256_max_ps(lo, acc1[i]));
                }
            }
        }
    }
#pragma GCC unroll 6
    for (int i = 0; i < mr; i++) {
        store(c + (size_t)i * ldc, acc0[i], full, k0);
        store(c + (size_t)i * ldc + 8, acc1[i], full, k1);
    }
    if (e != NULL && !tc__gemm_act_is_clamp(e->act)) tc__gemm_act_f32_avx2(c, ldc, (size_t)mr, nr, e);
}

#define TC_KERNEL_ROWS_(n)                                                                                             \
    static void kernel_##n(const tc__gemm_tile *t) { kernel(t, n, true); }                                             \
    static void kernel_##n##_masked(const tc__gemm_tile *t) { kernel(t, n, false); }
TC_KERNEL_ROWS_(1)
TC_KERNEL_ROWS_(2)
TC_KERNEL_ROWS_(3)
TC_KERNEL_ROWS_(4)
TC_KERNEL_ROWS_(5)
TC_KERNEL_ROWS_(6)
#undef TC_KERNEL_ROWS_

void tc__gemm_f32_avx2_6x16(const tc__gemm_tile *t) {
    static void (*const kFull[MR + 1])(const tc__gemm_tile *) = {
        NULL, kernel_1, kernel_2, kernel_3, kernel_4, kernel_5, kernel_6,
    };
    static void (*const kMasked[MR + 1])(const tc__gemm_tile *) = {
        NULL, kernel_1_masked, kernel_2_masked, kernel_3_masked, kernel_4_masked, kernel_5_masked, kernel_6_masked,
    };
    if (t->mr < 1 || t->mr > MR || t->nr < 1 || t->nr > 16) return;
    (t->nr == 16 ? kFull : kMasked)[t->mr](t);
}
