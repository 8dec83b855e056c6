/*
 * layernorm_f32_avx512.c - the AVX-512 LayerNormalization microkernel. Per row: the sum and then
 * the sum of squared deviations in double (16 floats per step, widened to two 8-double
 * halves), then y = ((x - mean_hi) - mean_lo) * inv_std * scale + bias in float, where
 * mean_hi + mean_lo is the double mean split into two floats so that the subtraction keeps
 * the accuracy of the reference's double arithmetic.
 */
#include <immintrin.h>
#include <math.h>

#include "backends/cpu/layernorm_f32.h"

static inline __mmask16 tail_mask(int64_t left) {
    return left >= 16 ? (__mmask16)0xffff : (__mmask16)(((uint32_t)1 << left) - 1);
}

static void layernorm_row(const float *x, float *y, const float *scale, const float *bias, int64_t n, double eps) {
    __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
    for (int64_t i = 0; i < n; i += 16) {
        __m512 v = _mm512_maskz_loadu_ps(tail_mask(n - i), x + i);
        s0 = _mm512_add_pd(s0, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
        s1 = _mm512_add_pd(s1, _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
    }
    const double mean = _mm512_reduce_add_pd(_mm512_add_pd(s0, s1)) / (double)n;
    const __m512d vmean = _mm512_set1_pd(mean);
    __m512d q0 = _mm512_setzero_pd(), q1 = _mm512_setzero_pd();
    for (int64_t i = 0; i < n; i += 16) {
        int64_t left = n - i;
        __m512 v = _mm512_maskz_loadu_ps(tail_mask(left), x + i);
        __m512d d0 = _mm512_sub_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(v)), vmean);
        __m512d d1 = _mm512_sub_pd(_mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)), vmean);
        /* lanes past the row must not add (0 - mean)^2 */
        __mmask8 m0 = left >= 8 ? (__mmask8)0xff : (__mmask8)(((uint32_t)1 << left) - 1);
        __mmask8 m1 = left >= 16 ? (__mmask8)0xff : left > 8 ? (__mmask8)(((uint32_t)1 << (left - 8)) - 1) : 0;
        q0 = _mm512_mask3_fmadd_pd(d0, d0, q0, m0);
        q1 = _mm512_mask3_fmadd_pd(d1, d1, q1, m1);
    }
    const double var = _mm512_reduce_add_pd(_mm512_add_pd(q0, q1)) / (double)n;
    const double inv = 1.0 / sqrt(var + eps);
    const float mh = (float)mean;
    const __m512 vmh = _mm512_set1_ps(mh), vml = _mm512_set1_ps((float)(mean - (double)mh));
    const __m512 vinv = _mm512_set1_ps((float)inv);
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 m = tail_mask(n - i);
        __m512 d = _mm512_sub_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), vmh), vml);
        __m512 b = bias ? _mm512_maskz_loadu_ps(m, bias + i) : _mm512_setzero_ps();
        __m512 s = _mm512_maskz_loadu_ps(m, scale + i);
        _mm512_mask_storeu_ps(y + i, m, _mm512_fmadd_ps(_mm512_mul_ps(d, vinv), s, b));
    }
}

void tc__layernorm_f32_avx512(const float *x, float *y, const float *scale, const float *bias, int64_t n, int64_t rows,
                              double eps) {
    for (int64_t r = 0; r < rows; r++) layernorm_row(x + r * n, y + r * n, scale, bias, n, eps);
}
