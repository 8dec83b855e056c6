/*
 * layernorm_f32_avx2.c - the AVX2 LayerNormalization microkernel. Per row: the sum and then the
 * sum of squared deviations in double (8 floats per step, widened to two 4-double halves),
 * then y = ((x - mean_hi) - mean_lo) * inv_std * scale + bias in float, where
 * mean_hi + mean_lo is the double mean split into two floats.
 */
#include <immintrin.h>
#include <math.h>

#include "backends/cpu/layernorm_f32.h"

/* Integer lane mask of the first min(left, 8) lanes. */
static inline __m256i tail_mask(int64_t left) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)(left > 8 ? 8 : left)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static inline double hsum(__m256d s) {
    __m128d h = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}

/* Adds the 8 floats v to the double sums s0 (lanes 0-3) and s1 (lanes 4-7). */
static inline void add8(__m256d *s0, __m256d *s1, __m256 v) {
    *s0 = _mm256_add_pd(*s0, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    *s1 = _mm256_add_pd(*s1, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

/* Adds (v - mean)^2 of the lanes of v selected by the integer mask m to q0 (lanes 0-3) and q1 (4-7). */
static inline void add_sq8(__m256d *q0, __m256d *q1, __m256 v, __m256d mean, __m256i m) {
    __m256d d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), mean);
    __m256d d1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), mean);
    __m256d k0 = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(m)));
    __m256d k1 = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm256_extracti128_si256(m, 1)));
    *q0 = _mm256_add_pd(*q0, _mm256_and_pd(_mm256_mul_pd(d0, d0), k0));
    *q1 = _mm256_add_pd(*q1, _mm256_and_pd(_mm256_mul_pd(d1, d1), k1));
}

static void layernorm_row(const float *x, float *y, const float *scale, const float *bias, int64_t n, double eps) {
    const int64_t nf = n & ~(int64_t)7; /* full vectors; the tail is masked */
    const __m256i tail = tail_mask(n - nf), all = _mm256_set1_epi32(-1);
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    for (int64_t i = 0; i < nf; i += 8) add8(&s0, &s1, _mm256_loadu_ps(x + i));
    if (nf < n) add8(&s0, &s1, _mm256_maskload_ps(x + nf, tail));
    const double mean = hsum(_mm256_add_pd(s0, s1)) / (double)n;
    const __m256d vmean = _mm256_set1_pd(mean);
    __m256d q0 = _mm256_setzero_pd(), q1 = _mm256_setzero_pd();
    for (int64_t i = 0; i < nf; i += 8) add_sq8(&q0, &q1, _mm256_loadu_ps(x + i), vmean, all);
    if (nf < n) add_sq8(&q0, &q1, _mm256_maskload_ps(x + nf, tail), vmean, tail); /* lanes past the row add 0 */
    const double var = hsum(_mm256_add_pd(q0, q1)) / (double)n;
    const double inv = 1.0 / sqrt(var + eps);
    const float mh = (float)mean;
    const __m256 vmh = _mm256_set1_ps(mh), vml = _mm256_set1_ps((float)(mean - (double)mh));
    const __m256 vinv = _mm256_set1_ps((float)inv);
    for (int64_t i = 0; i < nf; i += 8) {
        __m256 d = _mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmh), vml);
        __m256 b = bias ? _mm256_loadu_ps(bias + i) : _mm256_setzero_ps();
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(_mm256_mul_ps(d, vinv), _mm256_loadu_ps(scale + i), b));
    }
    if (nf < n) {
        __m256 d = _mm256_sub_ps(_mm256_sub_ps(_mm256_maskload_ps(x + nf, tail), vmh), vml);
        __m256 b = bias ? _mm256_maskload_ps(bias + nf, tail) : _mm256_setzero_ps();
        __m256 r = _mm256_fmadd_ps(_mm256_mul_ps(d, vinv), _mm256_maskload_ps(scale + nf, tail), b);
        _mm256_maskstore_ps(y + nf, tail, r);
    }
}

void tc__layernorm_f32_avx2(const float *x, float *y, const float *scale, const float *bias, int64_t n, int64_t rows,
                            double eps) {
    for (int64_t r = 0; r < rows; r++) layernorm_row(x + r * n, y + r * n, scale, bias, n, eps);
}
