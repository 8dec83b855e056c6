/*
 * reorder_nchw16c_avx512.c - the AVX-512 reorder from NCHW16c back to NCHW: 16 pixels of one
 * channel block (16 vectors of 16 channels) are transposed in registers into 16 channel rows
 * of 16 pixels and stored to the 16 NCHW planes (the first `lanes` of them: a last block's padding
 * lanes have no plane); a tail of fewer pixels uses masked stores.
 */
#include <immintrin.h>

#include "backends/cpu/blocked_f32.h"

#define RO_INLINE static inline __attribute__((always_inline))

RO_INLINE __m512 unpacklo_pd(__m512 a, __m512 b) {
    return _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}
RO_INLINE __m512 unpackhi_pd(__m512 a, __m512 b) {
    return _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}

/* Transposes the 16 x 16 matrix whose rows are r[0..15], in place. */
RO_INLINE void transpose16(__m512 r[16]) {
    __m512 t[16], u[16];
    /* pairs of rows interleaved within 128-bit lanes */
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    /* u[4g + j]: lane L of 128 bits holds column 4L + j of rows 4g .. 4g + 3 */
    for (int g = 0; g < 4; g++) {
        u[4 * g + 0] = unpacklo_pd(t[4 * g], t[4 * g + 2]);
        u[4 * g + 1] = unpackhi_pd(t[4 * g], t[4 * g + 2]);
        u[4 * g + 2] = unpacklo_pd(t[4 * g + 1], t[4 * g + 3]);
        u[4 * g + 3] = unpackhi_pd(t[4 * g + 1], t[4 * g + 3]);
    }
    /* gather lane L of the four row groups into column 4L + j */
    for (int j = 0; j < 4; j++) {
        __m512 v0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88), v1 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
        __m512 w0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xdd), w1 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xdd);
        r[j] = _mm512_shuffle_f32x4(v0, v1, 0x88);
        r[8 + j] = _mm512_shuffle_f32x4(v0, v1, 0xdd);
        r[4 + j] = _mm512_shuffle_f32x4(w0, w1, 0x88);
        r[12 + j] = _mm512_shuffle_f32x4(w0, w1, 0xdd);
    }
}

void tc__reorder_nchw16c_to_nchw_avx512(const float *xb, float *y, int64_t hw, int64_t cb, int64_t lanes, int64_t p0,
                                        int64_t p1) {
    const float *x = xb + cb * hw * 16;
    float *yc = y + cb * 16 * hw;
    __m512 r[16];
    int64_t p = p0;
    for (; p + 16 <= p1; p += 16) {
        for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(x + (p + i) * 16);
        transpose16(r);
        for (int l = 0; l < lanes; l++) _mm512_storeu_ps(yc + l * hw + p, r[l]);
    }
    if (p < p1) {
        const int n = (int)(p1 - p);
        for (int i = 0; i < 16; i++) r[i] = i < n ? _mm512_loadu_ps(x + (p + i) * 16) : _mm512_setzero_ps();
        transpose16(r);
        const __mmask16 m = (__mmask16)(((uint32_t)1 << n) - 1);
        for (int l = 0; l < lanes; l++) _mm512_mask_storeu_ps(yc + l * hw + p, m, r[l]);
    }
}
