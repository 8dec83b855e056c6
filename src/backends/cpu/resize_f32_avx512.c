/*
 * resize_f32_avx512.c - AVX-512 Resize row microkernels: per block of 16 outputs, when its taps lie within 16
 * consecutive inputs (upsampling, mild downsampling) one masked load and a lane permute; else a gather. Masked tails.
 */
#include <immintrin.h>

#include "backends/cpu/resize_f32.h"

static inline __mmask16 head_mask(int64_t n) { return (__mmask16)(n >= 16 ? 0xffff : (1u << n) - 1u); }

/* The values src[idx[0..16)] for the block starting at output o (m: its valid lanes). */
static inline __m512 taps(const tc__resize_plan *p, const float *src, const int32_t *idx, int64_t o, __mmask16 m) {
    const int64_t k = o / 16;
    const __m512i i = _mm512_maskz_loadu_epi32(m, idx + o);
    const int32_t span = p->span[k];
    if (span > 0) {
        const __m512 v = _mm512_maskz_loadu_ps(head_mask(span), src + p->base[k]);
        return _mm512_permutexvar_ps(_mm512_sub_epi32(i, _mm512_set1_epi32(p->base[k])), v);
    }
    return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, i, src, 4);
}

static void nearest_row(const tc__resize_plan *p, const float *src, float *y) {
    int64_t o = 0;
    for (; o + 16 <= p->ow; o += 16) _mm512_storeu_ps(y + o, taps(p, src, p->w.i0, o, 0xffff));
    if (o < p->ow) {
        const __mmask16 m = head_mask(p->ow - o);
        _mm512_mask_storeu_ps(y + o, m, taps(p, src, p->w.i0, o, m));
    }
}

static inline __m512 lerp16(const tc__resize_plan *p, const float *src, int64_t o, __mmask16 m) {
    const __m512 a = taps(p, src, p->w.i0, o, m), b = taps(p, src, p->w.i1, o, m);
    const __m512 wa = _mm512_maskz_loadu_ps(m, p->w.w0 + o), wb = _mm512_maskz_loadu_ps(m, p->w.w1 + o);
    return _mm512_fmadd_ps(wa, a, _mm512_mul_ps(wb, b));
}

static void lerp_row(const tc__resize_plan *p, const float *src, float *h, int64_t o0, int64_t n) {
    int64_t o = o0;
    for (; o + 16 <= o0 + n; o += 16) _mm512_storeu_ps(h + (o - o0), lerp16(p, src, o, 0xffff));
    if (o < o0 + n) {
        const __mmask16 m = head_mask(o0 + n - o);
        _mm512_mask_storeu_ps(h + (o - o0), m, lerp16(p, src, o, m));
    }
}

static void blend_row(const float *h0, const float *h1, float a, float b, float *y, int64_t n) {
    const __m512 va = _mm512_set1_ps(a), vb = _mm512_set1_ps(b);
    int64_t o = 0;
    for (; o + 16 <= n; o += 16)
        _mm512_storeu_ps(y + o, _mm512_fmadd_ps(va, _mm512_loadu_ps(h0 + o), _mm512_mul_ps(vb, _mm512_loadu_ps(h1 + o))));
    if (o < n) {
        const __mmask16 m = head_mask(n - o);
        const __m512 v = _mm512_fmadd_ps(va, _mm512_maskz_loadu_ps(m, h0 + o), _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(m, h1 + o)));
        _mm512_mask_storeu_ps(y + o, m, v);
    }
}

const tc__resize_ukernels tc__resize_f32_avx512 = {16, nearest_row, lerp_row, blend_row};
