/*
 * pool_nchw8c_f32_avx2.c - the AVX2 MaxPool, AveragePool (the body pool_nchwc_f32_kernel.h with 8-lane
 * vectors) and GlobalAveragePool microkernels on NCHW8c. The global average sums in double.
 */
#include "backends/cpu/blocked_vec_avx2.h"

#define POOL_MAX_ROWS tc__maxpool_nchw8c_f32_rows_avx2
#define POOL_AVG_ROWS tc__avgpool_nchw8c_f32_rows_avx2

#include "backends/cpu/pool_nchwc_f32_kernel.h"

/* Adds the 8 floats v to the double accumulators lo (lanes 0-3) and hi (lanes 4-7). */
POOL_INLINE void add8(__m256d *lo, __m256d *hi, __m256 v) {
    *lo = _mm256_add_pd(*lo, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    *hi = _mm256_add_pd(*hi, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

void tc__gavgpool_nchw8c_f32_avx2(const float *x, float *y, int64_t hw, int64_t planes) {
    const __m256d n = _mm256_set1_pd((double)hw);
    for (int64_t p = 0; p < planes; p++, x += hw * 8) {
        /* even and odd pixels in separate accumulators, to hide the latency of the adds */
        __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd(), b0 = _mm256_setzero_pd(), b1 = _mm256_setzero_pd();
        int64_t i = 0;
        for (; i + 2 <= hw; i += 2) {
            add8(&a0, &a1, _mm256_loadu_ps(x + i * 8));
            add8(&b0, &b1, _mm256_loadu_ps(x + i * 8 + 8));
        }
        if (i < hw) add8(&a0, &a1, _mm256_loadu_ps(x + i * 8));
        __m128 lo = _mm256_cvtpd_ps(_mm256_div_pd(_mm256_add_pd(a0, b0), n));
        __m128 hi = _mm256_cvtpd_ps(_mm256_div_pd(_mm256_add_pd(a1, b1), n));
        _mm256_storeu_ps(y + p * 8, _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1));
    }
}
