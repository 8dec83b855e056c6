/*
 * mmi_s16_avx512.c - the AVX-512BW microkernel of MatMulInteger (mmi_s16.h, W = 16): blocks of up to 4 rows by 16
 * columns; per K pair one load of 32 B bytes widened to int16 minus their zero points, then one vpmaddwd per row.
 * The last block's columns past N are computed and not stored (masked stores).
 */
#include <immintrin.h>

#include "backends/cpu/mmi_s16.h"

/* 32 bytes widened to int16; the unsigned case in two halves (SIMDe 0.7.4, the emulation build's, lacks
 * _mm512_cvtepu8_epi16). */
static inline __m512i widen(const uint8_t *p, bool s) {
    if (s) return _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)p));
    const __m256i lo = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)p));
    const __m256i hi = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(p + 16)));
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

void tc__mmi_s16_rows_avx512(const int32_t *apairs, const uint8_t *bblk, const int16_t *bzero, bool b_signed,
                             int32_t *y, int64_t r0, int64_t r1, int64_t kp, int64_t n) {
    for (int64_t j = 0; j < n; j += 16) {
        const uint8_t *bj = bblk + (j / 16) * kp * 32;
        const __m512i z = _mm512_loadu_si512((const void *)(bzero + j * 2));
        const __mmask16 cols = (__mmask16)(n - j < 16 ? (1u << (n - j)) - 1 : 0xffffu);
        int64_t i = r0;
        for (; i + 4 <= r1; i += 4) {
            const int32_t *a0 = apairs + i * kp, *a1 = a0 + kp, *a2 = a1 + kp, *a3 = a2 + kp;
            __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0;
            for (int64_t p = 0; p < kp; p++) {
                const __m512i b = _mm512_sub_epi16(widen(bj + p * 32, b_signed), z);
                c0 = _mm512_add_epi32(c0, _mm512_madd_epi16(b, _mm512_set1_epi32(a0[p])));
                c1 = _mm512_add_epi32(c1, _mm512_madd_epi16(b, _mm512_set1_epi32(a1[p])));
                c2 = _mm512_add_epi32(c2, _mm512_madd_epi16(b, _mm512_set1_epi32(a2[p])));
                c3 = _mm512_add_epi32(c3, _mm512_madd_epi16(b, _mm512_set1_epi32(a3[p])));
            }
            _mm512_mask_storeu_epi32(y + i * n + j, cols, c0);
            _mm512_mask_storeu_epi32(y + (i + 1) * n + j, cols, c1);
            _mm512_mask_storeu_epi32(y + (i + 2) * n + j, cols, c2);
            _mm512_mask_storeu_epi32(y + (i + 3) * n + j, cols, c3);
        }
        for (; i < r1; i++) {
            const int32_t *ar = apairs + i * kp;
            __m512i c = _mm512_setzero_si512();
            for (int64_t p = 0; p < kp; p++)
                c = _mm512_add_epi32(c, _mm512_madd_epi16(_mm512_sub_epi16(widen(bj + p * 32, b_signed), z),
                                                          _mm512_set1_epi32(ar[p])));
            _mm512_mask_storeu_epi32(y + i * n + j, cols, c);
        }
    }
}
