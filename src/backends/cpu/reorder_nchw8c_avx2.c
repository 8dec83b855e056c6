/*
 * reorder_nchw8c_avx2.c - the AVX2 reorder from NCHW8c back to NCHW: 8 pixels of one channel
 * block (8 vectors of 8 channels) are transposed in registers into 8 channel rows of 8 pixels and
 * stored to the 8 NCHW planes (the first `lanes` of them: a last block's padding lanes have no
 * plane); a tail of fewer pixels is copied element by element.
 */
#include <immintrin.h>

#include "backends/cpu/blocked_f32.h"

/* Transposes the 8 x 8 matrix whose rows are r[0..7], in place. */
static inline __attribute__((always_inline)) void transpose8(__m256 r[8]) {
    __m256 t[8], u[8];
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int g = 0; g < 2; g++) {
        u[4 * g + 0] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
        u[4 * g + 1] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0xee);
        u[4 * g + 2] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
        u[4 * g + 3] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xee);
    }
    for (int j = 0; j < 4; j++) {
        r[j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
        r[4 + j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
    }
}

void tc__reorder_nchw8c_to_nchw_avx2(const float *xb, float *y, int64_t hw, int64_t cb, int64_t lanes, int64_t p0,
                                     int64_t p1) {
    const float *x = xb + cb * hw * 8;
    float *yc = y + cb * 8 * hw;
    __m256 r[8];
    int64_t p = p0;
    for (; p + 8 <= p1; p += 8) {
        for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(x + (p + i) * 8);
        transpose8(r);
        for (int l = 0; l < lanes; l++) _mm256_storeu_ps(yc + l * hw + p, r[l]);
    }
    for (; p < p1; p++)
        for (int l = 0; l < lanes; l++) yc[l * hw + p] = x[p * 8 + l];
}
