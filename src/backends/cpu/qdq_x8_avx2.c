/* qdq_x8_avx2.c - AVX2 kernels of per-tensor QuantizeLinear / DequantizeLinear (see qdq_x8.h): 8 elements per step,
 * a scalar tail with the same formula. */
#include <immintrin.h>
#include <math.h>

#include "backends/cpu/qdq_x8.h"

/* 8 results of the reference's formula: rne(x / s) (a division, as the reference) + zp, saturated to [lo, hi]. */
static inline __m256i q8(__m256 x, __m256 s, __m256i zp, __m256i lo, __m256i hi) {
    __m256 q = _mm256_round_ps(_mm256_div_ps(x, s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    /* Clamp in float first so the conversion cannot overflow; NaN gives 0 (then + zp), as the reference. */
    q = _mm256_and_ps(q, _mm256_cmp_ps(q, q, _CMP_ORD_Q));
    q = _mm256_min_ps(_mm256_max_ps(q, _mm256_set1_ps(-1024.0f)), _mm256_set1_ps(1024.0f));
    const __m256i v = _mm256_add_epi32(_mm256_cvtps_epi32(q), zp);
    return _mm256_min_epi32(_mm256_max_epi32(v, lo), hi);
}

/* The same for one element. */
static inline int32_t q1(float x, float s, int32_t zp, int32_t lo, int32_t hi) {
    float q = nearbyintf(x / s);
    if (isnan(q)) q = 0.0f;
    q = q < -1024.0f ? -1024.0f : q > 1024.0f ? 1024.0f : q;
    const int32_t v = (int32_t)q + zp;
    return v < lo ? lo : v > hi ? hi : v;
}

void tc__quantize_x8_avx2(const float *x, void *y, int64_t n, float scale, int32_t zp, bool is_signed) {
    const int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
    const __m256 s = _mm256_set1_ps(scale);
    const __m256i z = _mm256_set1_epi32(zp), vlo = _mm256_set1_epi32(lo), vhi = _mm256_set1_epi32(hi);
    uint8_t *o = y;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i v = q8(_mm256_loadu_ps(x + i), s, z, vlo, vhi); /* in [lo, hi]: the packs below are exact */
        const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
        _mm_storel_epi64((__m128i *)(o + i), is_signed ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w));
    }
    for (; i < n; i++) o[i] = (uint8_t)q1(x[i], scale, zp, lo, hi);
}

void tc__dequantize_x8_avx2(const void *x, float *y, int64_t n, float scale, int32_t zp, bool is_signed) {
    const __m256 s = _mm256_set1_ps(scale);
    const __m256i z = _mm256_set1_epi32(zp);
    const uint8_t *p = x;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i b = _mm_loadl_epi64((const __m128i *)(p + i));
        const __m256i v = is_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
        /* (x - zp) is exact in int32 and in float; one rounding in the product, as the reference. */
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(v, z)), s));
    }
    for (; i < n; i++) y[i] = (float)((is_signed ? (int32_t)(int8_t)p[i] : (int32_t)p[i]) - zp) * scale;
}
