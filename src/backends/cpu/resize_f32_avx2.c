/*
 * resize_f32_avx2.c - AVX2 Resize row microkernels: per block of 8 outputs, when its taps lie within 8 consecutive
 * inputs (upsampling, mild downsampling) one masked load and a lane permute; else a gather. Masked tails.
 */
#include <immintrin.h>

#include "backends/cpu/resize_f32.h"

static inline __m256i head_mask(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)(n > 8 ? 8 : n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* The values src[idx[0..8)] for the block starting at output o (m: its valid lanes). */
static inline __m256 taps(const tc__resize_plan *p, const float *src, const int32_t *idx, int64_t o, __m256i m) {
    const int64_t k = o / 8;
    const __m256i i = _mm256_maskload_epi32(idx + o, m);
    const int32_t span = p->span[k];
    if (span > 0) {
        const __m256 v = _mm256_maskload_ps(src + p->base[k], head_mask(span));
        return _mm256_permutevar8x32_ps(v, _mm256_sub_epi32(i, _mm256_set1_epi32(p->base[k])));
    }
    return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), src, i, _mm256_castsi256_ps(m), 4);
}

static void nearest_row(const tc__resize_plan *p, const float *src, float *y) {
    const __m256i all = _mm256_set1_epi32(-1);
    int64_t o = 0;
    for (; o + 8 <= p->ow; o += 8) _mm256_storeu_ps(y + o, taps(p, src, p->w.i0, o, all));
    if (o < p->ow) {
        const __m256i m = head_mask(p->ow - o);
        _mm256_maskstore_ps(y + o, m, taps(p, src, p->w.i0, o, m));
    }
}

static inline __m256 lerp8(const tc__resize_plan *p, const float *src, int64_t o, __m256i m) {
    const __m256 a = taps(p, src, p->w.i0, o, m), b = taps(p, src, p->w.i1, o, m);
    const __m256 wa = _mm256_maskload_ps(p->w.w0 + o, m), wb = _mm256_maskload_ps(p->w.w1 + o, m);
    return _mm256_fmadd_ps(wa, a, _mm256_mul_ps(wb, b));
}

static void lerp_row(const tc__resize_plan *p, const float *src, float *h, int64_t o0, int64_t n) {
    const __m256i all = _mm256_set1_epi32(-1);
    int64_t o = o0;
    for (; o + 8 <= o0 + n; o += 8) _mm256_storeu_ps(h + (o - o0), lerp8(p, src, o, all));
    if (o < o0 + n) {
        const __m256i m = head_mask(o0 + n - o);
        _mm256_maskstore_ps(h + (o - o0), m, lerp8(p, src, o, m));
    }
}

static void blend_row(const float *h0, const float *h1, float a, float b, float *y, int64_t n) {
    const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b);
    int64_t o = 0;
    for (; o + 8 <= n; o += 8)
        _mm256_storeu_ps(y + o, _mm256_fmadd_ps(va, _mm256_loadu_ps(h0 + o), _mm256_mul_ps(vb, _mm256_loadu_ps(h1 + o))));
    if (o < n) {
        const __m256i m = head_mask(n - o);
        const __m256 v = _mm256_fmadd_ps(va, _mm256_maskload_ps(h0 + o, m), _mm256_mul_ps(vb, _mm256_maskload_ps(h1 + o, m)));
        _mm256_maskstore_ps(y + o, m, v);
    }
}

const tc__resize_ukernels tc__resize_f32_avx2 = {8, nearest_row, lerp_row, blend_row};
