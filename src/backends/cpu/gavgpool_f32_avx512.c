/* gavgpool_f32_avx512.c - the AVX-512 GlobalAveragePool microkernel: each plane summed 16 floats
 * at a time into double accumulators (masked tail), divided once in double. */
#include <immintrin.h>

#include "backends/cpu/gavgpool_f32.h"

/* Adds the 16 floats v to the double accumulators lo (lanes 0-7) and hi (lanes 8-15). */
static inline void add16(__m512d *lo, __m512d *hi, __m512 v) {
    *lo = _mm512_add_pd(*lo, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
    *hi = _mm512_add_pd(*hi, _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
}

void tc__gavgpool_f32_avx512(const float *x, float *y, int64_t n, int64_t planes) {
    for (int64_t p = 0; p < planes; p++, x += n) {
        __m512d a0 = _mm512_setzero_pd(), a1 = _mm512_setzero_pd(), b0 = _mm512_setzero_pd(), b1 = _mm512_setzero_pd();
        int64_t i = 0;
        for (; i + 32 <= n; i += 32) {
            add16(&a0, &a1, _mm512_loadu_ps(x + i));
            add16(&b0, &b1, _mm512_loadu_ps(x + i + 16));
        }
        for (; i < n; i += 16) {
            int64_t left = n - i;
            __mmask16 m = left >= 16 ? (__mmask16)0xffff : (__mmask16)(((uint32_t)1 << left) - 1);
            add16(&a0, &a1, _mm512_maskz_loadu_ps(m, x + i));
        }
        double sum = _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(a0, a1), _mm512_add_pd(b0, b1)));
        y[p] = (float)(sum / (double)n);
    }
}
