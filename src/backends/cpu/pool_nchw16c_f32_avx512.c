/*
 * pool_nchw16c_f32_avx512.c - the AVX-512 MaxPool, AveragePool (the body pool_nchwc_f32_kernel.h with
 * 16-lane vectors) and GlobalAveragePool microkernels on NCHW16c. The global average sums in double.
 */
#include "backends/cpu/blocked_vec_avx512.h"

#define POOL_MAX_ROWS tc__maxpool_nchw16c_f32_rows_avx512
#define POOL_AVG_ROWS tc__avgpool_nchw16c_f32_rows_avx512

#include "backends/cpu/pool_nchwc_f32_kernel.h"

/* Adds the 16 floats v to the double accumulators lo (lanes 0-7) and hi (lanes 8-15). */
POOL_INLINE void add16(__m512d *lo, __m512d *hi, __m512 v) {
    *lo = _mm512_add_pd(*lo, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
    *hi = _mm512_add_pd(*hi, _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
}

void tc__gavgpool_nchw16c_f32_avx512(const float *x, float *y, int64_t hw, int64_t planes) {
    const __m512d n = _mm512_set1_pd((double)hw);
    for (int64_t p = 0; p < planes; p++, x += hw * 16) {
        /* even and odd pixels in separate accumulators, to hide the latency of the adds */
        __m512d a0 = _mm512_setzero_pd(), a1 = _mm512_setzero_pd(), b0 = _mm512_setzero_pd(), b1 = _mm512_setzero_pd();
        int64_t i = 0;
        for (; i + 2 <= hw; i += 2) {
            add16(&a0, &a1, _mm512_loadu_ps(x + i * 16));
            add16(&b0, &b1, _mm512_loadu_ps(x + i * 16 + 16));
        }
        if (i < hw) add16(&a0, &a1, _mm512_loadu_ps(x + i * 16));
        __m256 lo = _mm512_cvtpd_ps(_mm512_div_pd(_mm512_add_pd(a0, b0), n));
        __m256 hi = _mm512_cvtpd_ps(_mm512_div_pd(_mm512_add_pd(a1, b1), n));
        _mm512_storeu_ps(y + p * 16, _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1));
    }
}
