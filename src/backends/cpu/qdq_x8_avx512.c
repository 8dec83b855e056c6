/* qdq_x8_avx512.c - AVX-512 kernels of per-tensor QuantizeLinear / DequantizeLinear (see qdq_x8.h). */
#include <immintrin.h>
#include <math.h>

#include "backends/cpu/qdq_x8.h"

/* 16 results of the reference's formula: rne(x / s) (a division, as the reference) + zp, saturated. */
static inline __m512i q16(__m512 x, __m512 s, __m512i zp, __m512i lo, __m512i hi) {
    __m512 q = _mm512_roundscale_ps(_mm512_div_ps(x, s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    /* Clamp in float first so the conversion cannot overflow; NaN gives 0 (then + zp), as the reference. */
    q = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(q, q, _CMP_ORD_Q), q);
    q = _mm512_min_ps(_mm512_max_ps(q, _mm512_set1_ps(-1024.0f)), _mm512_set1_ps(1024.0f));
    __m512i v = _mm512_add_epi32(_mm512_cvtps_epi32(q), zp);
    return _mm512_min_epi32(_mm512_max_epi32(v, lo), hi);
}

void tc__quantize_x8_avx512(const float *x, void *y, int64_t n, float scale, int32_t zp, bool is_signed) {
    const __m512 s = _mm512_set1_ps(scale);
    const __m512i z = _mm512_set1_epi32(zp), lo = _mm512_set1_epi32(is_signed ? -128 : 0),
                  hi = _mm512_set1_epi32(is_signed ? 127 : 255);
    uint8_t *o = y;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm_storeu_si128((__m128i *)(o + i), _mm512_cvtepi32_epi8(q16(_mm512_loadu_ps(x + i), s, z, lo, hi)));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        _mm_mask_storeu_epi8(o + i, m, _mm512_cvtepi32_epi8(q16(_mm512_maskz_loadu_ps(m, x + i), s, z, lo, hi)));
    }
}

void tc__dequantize_x8_avx512(const void *x, float *y, int64_t n, float scale, int32_t zp, bool is_signed) {
    const __m512 s = _mm512_set1_ps(scale);
    const __m512i z = _mm512_set1_epi32(zp);
    const uint8_t *p = x;
    int64_t i = 0;
    for (; i < n; i += 16) {
        const __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        const __m128i b = _mm_maskz_loadu_epi8(m, p + i);
        const __m512i v = is_signed ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
        /* (x - zp) is exact in int32 and in float; one rounding in the product, as the reference. */
        _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(v, z)), s));
    }
}
