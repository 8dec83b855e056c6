/* gavgpool_f32_avx2.c - the AVX2 GlobalAveragePool microkernel: each plane summed 8 floats at a
 * time into double accumulators (masked tail), divided once in double. */
#include <immintrin.h>

#include "backends/cpu/gavgpool_f32.h"

/* Adds the 8 floats v to the double accumulators lo (lanes 0-3) and hi (lanes 4-7). */
static inline void add8(__m256d *lo, __m256d *hi, __m256 v) {
    *lo = _mm256_add_pd(*lo, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    *hi = _mm256_add_pd(*hi, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

void tc__gavgpool_f32_avx2(const float *x, float *y, int64_t n, int64_t planes) {
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (int64_t p = 0; p < planes; p++, x += n) {
        __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd(), b0 = _mm256_setzero_pd(), b1 = _mm256_setzero_pd();
        int64_t i = 0;
        for (; i + 16 <= n; i += 16) {
            add8(&a0, &a1, _mm256_loadu_ps(x + i));
            add8(&b0, &b1, _mm256_loadu_ps(x + i + 8));
        }
        for (; i < n; i += 8) {
            int64_t left = n - i;
            __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)(left > 8 ? 8 : left)), iota);
            add8(&a0, &a1, _mm256_maskload_ps(x + i, m));
        }
        __m256d s = _mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(b0, b1));
        __m128d h = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
        double sum = _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
        y[p] = (float)(sum / (double)n);
    }
}
