/*
 * mmi_s16_avx2.c - the AVX2 microkernel of MatMulInteger (mmi_s16.h): blocks of 4 rows by 8 columns, one vpmaddwd per
 * row and pair of K steps; columns past the last multiple of 8 in plain C.
 */
#include <immintrin.h>

#include "backends/cpu/mmi_s16.h"

/* y[i][j] for one row and one column, in plain C. */
static int32_t dot_tail(const int32_t *ar, const int16_t *bp, int64_t kp, int64_t n, int64_t j) {
    int32_t s = 0;
    for (int64_t p = 0; p < kp; p++) {
        const int16_t lo = (int16_t)(ar[p] & 0xffff), hi = (int16_t)((uint32_t)ar[p] >> 16);
        s += lo * bp[(p * n + j) * 2] + hi * bp[(p * n + j) * 2 + 1];
    }
    return s;
}

void tc__mmi_s16_rows_avx2(const int32_t *apairs, const int16_t *bpairs, int32_t *y, int64_t r0, int64_t r1,
                           int64_t kp, int64_t n) {
    const int64_t n8 = n / 8 * 8;
    int64_t i = r0;
    for (; i + 4 <= r1; i += 4) {
        const int32_t *a0 = apairs + i * kp, *a1 = a0 + kp, *a2 = a1 + kp, *a3 = a2 + kp;
        for (int64_t j = 0; j < n8; j += 8) {
            __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0;
            for (int64_t p = 0; p < kp; p++) {
                const __m256i b = _mm256_loadu_si256((const __m256i *)(bpairs + (p * n + j) * 2));
                c0 = _mm256_add_epi32(c0, _mm256_madd_epi16(b, _mm256_set1_epi32(a0[p])));
                c1 = _mm256_add_epi32(c1, _mm256_madd_epi16(b, _mm256_set1_epi32(a1[p])));
                c2 = _mm256_add_epi32(c2, _mm256_madd_epi16(b, _mm256_set1_epi32(a2[p])));
                c3 = _mm256_add_epi32(c3, _mm256_madd_epi16(b, _mm256_set1_epi32(a3[p])));
            }
            _mm256_storeu_si256((__m256i *)(y + i * n + j), c0);
            _mm256_storeu_si256((__m256i *)(y + (i + 1) * n + j), c1);
            _mm256_storeu_si256((__m256i *)(y + (i + 2) * n + j), c2);
            _mm256_storeu_si256((__m256i *)(y + (i + 3) * n + j), c3);
        }
        for (int64_t r = 0; r < 4; r++)
            for (int64_t j = n8; j < n; j++) y[(i + r) * n + j] = dot_tail(apairs + (i + r) * kp, bpairs, kp, n, j);
    }
    for (; i < r1; i++) {
        const int32_t *ar = apairs + i * kp;
        for (int64_t j = 0; j < n8; j += 8) {
            __m256i c = _mm256_setzero_si256();
            for (int64_t p = 0; p < kp; p++)
                c = _mm256_add_epi32(c, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(bpairs + (p * n + j) * 2)),
                                                          _mm256_set1_epi32(ar[p])));
            _mm256_storeu_si256((__m256i *)(y + i * n + j), c);
        }
        for (int64_t j = n8; j < n; j++) y[i * n + j] = dot_tail(ar, bpairs, kp, n, j);
    }
}
