/*
 * mmi_s16_avx2.c - the AVX2 microkernel of MatMulInteger (mmi_s16.h): blocks of up to 4 rows by 8 columns; per K pair
 * one load of 16 B bytes widened to int16 minus their zero points, then one vpmaddwd per row. Columns of the last
 * block past N are computed and not stored.
 */
#include <immintrin.h>
#include <string.h>

#include "backends/cpu/mmi_s16.h"

static inline __m256i widen(const uint8_t *p, bool s) {
    const __m128i v = _mm_loadu_si128((const __m128i *)p);
    return s ? _mm256_cvtepi8_epi16(v) : _mm256_cvtepu8_epi16(v);
}

/* Stores the 8 lanes of c into y[0..cols). */
static inline void store(int32_t *y, __m256i c, int64_t cols) {
    if (cols == 8) {
        _mm256_storeu_si256((__m256i *)y, c);
    } else {
        int32_t t[8];
        _mm256_storeu_si256((__m256i *)t, c);
        memcpy(y, t, (size_t)cols * sizeof(int32_t));
    }
}

void tc__mmi_s16_rows_avx2(const int32_t *apairs, const uint8_t *bblk, const int16_t *bzero, bool b_signed, int32_t *y,
                           int64_t r0, int64_t r1, int64_t kp, int64_t n) {
    for (int64_t j = 0; j < n; j += 8) {
        const uint8_t *bj = bblk + (j / 8) * kp * 16;
        const __m256i z = _mm256_loadu_si256((const __m256i *)(bzero + j * 2));
        const int64_t cols = n - j < 8 ? n - j : 8;
        int64_t i = r0;
        for (; i + 4 <= r1; i += 4) {
            const int32_t *a0 = apairs + i * kp, *a1 = a0 + kp, *a2 = a1 + kp, *a3 = a2 + kp;
            __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0;
            for (int64_t p = 0; p < kp; p++) {
                const __m256i b = _mm256_sub_epi16(widen(bj + p * 16, b_signed), z);
                c0 = _mm256_add_epi32(c0, _mm256_madd_epi16(b, _mm256_set1_epi32(a0[p])));
                c1 = _mm256_add_epi32(c1, _mm256_madd_epi16(b, _mm256_set1_epi32(a1[p])));
                c2 = _mm256_add_epi32(c2, _mm256_madd_epi16(b, _mm256_set1_epi32(a2[p])));
                c3 = _mm256_add_epi32(c3, _mm256_madd_epi16(b, _mm256_set1_epi32(a3[p])));
            }
            store(y + i * n + j, c0, cols);
            store(y + (i + 1) * n + j, c1, cols);
            store(y + (i + 2) * n + j, c2, cols);
            store(y + (i + 3) * n + j, c3, cols);
        }
        for (; i < r1; i++) {
            const int32_t *ar = apairs + i * kp;
            __m256i c = _mm256_setzero_si256();
            for (int64_t p = 0; p < kp; p++)
                c = _mm256_add_epi32(c, _mm256_madd_epi16(_mm256_sub_epi16(widen(bj + p * 16, b_signed), z),
                                                          _mm256_set1_epi32(ar[p])));
            store(y + i * n + j, c, cols);
        }
    }
}
