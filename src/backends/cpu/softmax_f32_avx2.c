/*
 * softmax_f32_avx2.c - the AVX2 Softmax and LogSoftmax microkernel. Per row: the maximum (NaN
 * inputs skipped here; they still turn the whole row into NaN through the sum, as in the
 * reference), then e = exp(x - max) with SLEEF, summed in double, then y = e * (1 / sum) or
 * y = (x - max) - log(sum); with the NaN guard, NaN outputs become the guard's value in the same
 * store. 8 floats per step with masked tails. A fused mask is added into y first, then y is normalised
 * in place.
 */
#include <immintrin.h>
#include <math.h>
#include <sleef.h>

#include "backends/cpu/softmax_f32.h"

/* Integer lane mask of the first min(left, 8) lanes. */
static inline __m256i tail_mask(int64_t left) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)(left > 8 ? 8 : left)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static inline void add8(__m256d *lo, __m256d *hi, __m256 v) {
    *lo = _mm256_add_pd(*lo, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    *hi = _mm256_add_pd(*hi, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

/* v with its NaN lanes replaced by c when guard (a loop-invariant branch). */
static inline __m256 guarded(__m256 v, bool guard, __m256 c) {
    return guard ? _mm256_blendv_ps(v, c, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)) : v;
}

static void softmax_row(const float *x, float *y, int64_t n, const tc__softmax_opts *o) {
    const bool log_out = o->log_out, guard = o->nan_guard;
    const __m256 c = _mm256_set1_ps(o->nan_to);
    const int64_t nf = n & ~(int64_t)7; /* full vectors; the tail is masked */
    const __m256i tail = tail_mask(n - nf);
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    __m256 m0 = ninf, m1 = ninf;
    int64_t i = 0;
    for (; i + 16 <= nf; i += 16) {
        m0 = _mm256_max_ps(_mm256_loadu_ps(x + i), m0);
        m1 = _mm256_max_ps(_mm256_loadu_ps(x + i + 8), m1);
    }
    if (i < nf) m0 = _mm256_max_ps(_mm256_loadu_ps(x + i), m0);
    if (nf < n) {
        __m256 v = _mm256_blendv_ps(ninf, _mm256_maskload_ps(x + nf, tail), _mm256_castsi256_ps(tail));
        m1 = _mm256_max_ps(v, m1);
    }
    __m256 mm = _mm256_max_ps(m0, m1);
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(mm), _mm256_extractf128_ps(mm, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    const __m256 vmax = _mm256_set1_ps(_mm_cvtss_f32(h));

    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    for (i = 0; i < nf; i += 8) {
        __m256 e = Sleef_expf8_u10avx2(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmax));
        if (!log_out) _mm256_storeu_ps(y + i, e);
        add8(&s0, &s1, e);
    }
    if (nf < n) {
        __m256 e = Sleef_expf8_u10avx2(_mm256_sub_ps(_mm256_maskload_ps(x + nf, tail), vmax));
        e = _mm256_and_ps(e, _mm256_castsi256_ps(tail)); /* lanes past the row add nothing */
        if (!log_out) _mm256_maskstore_ps(y + nf, tail, e);
        add8(&s0, &s1, e);
    }
    __m256d s = _mm256_add_pd(s0, s1);
    __m128d hs = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
    const double sum = _mm_cvtsd_f64(_mm_add_sd(hs, _mm_unpackhi_pd(hs, hs)));

    if (log_out) {
        const __m256 lsum = _mm256_set1_ps((float)log(sum));
        for (i = 0; i < nf; i += 8)
            _mm256_storeu_ps(y + i, guarded(_mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmax), lsum), guard, c));
        if (nf < n) {
            __m256 d = _mm256_sub_ps(_mm256_maskload_ps(x + nf, tail), vmax);
            _mm256_maskstore_ps(y + nf, tail, guarded(_mm256_sub_ps(d, lsum), guard, c));
        }
        return;
    }
    const __m256 r = _mm256_set1_ps((float)(1.0 / sum));
    for (i = 0; i < nf; i += 8) _mm256_storeu_ps(y + i, guarded(_mm256_mul_ps(_mm256_loadu_ps(y + i), r), guard, c));
    if (nf < n)
        _mm256_maskstore_ps(y + nf, tail, guarded(_mm256_mul_ps(_mm256_maskload_ps(y + nf, tail), r), guard, c));
}

/* y = x + m over a row of n. */
static void add_row(const float *x, const float *m, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(m + i)));
    for (; i < n; i++) y[i] = x[i] + m[i];
}

void tc__softmax_f32_avx2(const float *x, float *y, int64_t n, int64_t rows, const tc__softmax_opts *o) {
    tc__softmax_rows_masked(x, y, n, rows, o, softmax_row, add_row);
}
