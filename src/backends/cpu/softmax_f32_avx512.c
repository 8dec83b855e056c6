/*
 * softmax_f32_avx512.c - the AVX-512 Softmax and LogSoftmax microkernel. Per row: the maximum
 * (NaN inputs skipped here; they still turn the whole row into NaN through the sum, as in the
 * reference), then e = exp(x - max) inline (qact_avx512.h's polynomial, 3e-7 relative: a SLEEF call per
 * 16 values was most of BERT-base's attention Softmax), summed in double, then y = e * (1 / sum) or
 * y = (x - max) - log(sum); with the NaN guard, NaN outputs become the guard's value in the same
 * store. 16 floats per step with masked tails.
 */
#include <immintrin.h>
#include <math.h>

#include "backends/cpu/qact_avx512.h"
#include "backends/cpu/softmax_f32.h"

/* e^d for d = x - max <= 0: 0 below -87.3 (where e^d is below FLT_MIN; -inf included), NaN kept. */
static inline __m512 exp_shifted(__m512 d) {
    const __mmask16 under = _mm512_cmp_ps_mask(d, _mm512_set1_ps(-87.3f), _CMP_LT_OQ);
    return _mm512_mask_mov_ps(tc__qact_exp_avx512(d), under, _mm512_setzero_ps());
}

static inline __mmask16 tail_mask(int64_t left) {
    return left >= 16 ? (__mmask16)0xffff : (__mmask16)(((uint32_t)1 << left) - 1);
}

static inline void add16(__m512d *lo, __m512d *hi, __m512 v) {
    *lo = _mm512_add_pd(*lo, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
    *hi = _mm512_add_pd(*hi, _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
}

/* v with its NaN lanes replaced by c when guard (a loop-invariant branch). */
static inline __m512 guarded(__m512 v, bool guard, __m512 c) {
    return guard ? _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), c) : v;
}

static void softmax_row(const float *x, float *y, int64_t n, const tc__softmax_opts *o) {
    const bool log_out = o->log_out, guard = o->nan_guard;
    const __m512 c = _mm512_set1_ps(o->nan_to);
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    __m512 m0 = ninf, m1 = ninf;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        m0 = _mm512_max_ps(_mm512_loadu_ps(x + i), m0);
        m1 = _mm512_max_ps(_mm512_loadu_ps(x + i + 16), m1);
    }
    for (; i < n; i += 16) m0 = _mm512_max_ps(_mm512_mask_loadu_ps(ninf, tail_mask(n - i), x + i), m0);
    const __m512 vmax = _mm512_set1_ps(_mm512_reduce_max_ps(_mm512_max_ps(m0, m1)));

    __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
    for (i = 0; i < n; i += 16) {
        __mmask16 m = tail_mask(n - i);
        __m512 e = exp_shifted(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), vmax));
        e = _mm512_maskz_mov_ps(m, e); /* lanes past the row add nothing */
        if (!log_out) _mm512_mask_storeu_ps(y + i, m, e);
        add16(&s0, &s1, e);
    }
    const double sum = _mm512_reduce_add_pd(_mm512_add_pd(s0, s1));

    if (log_out) {
        const __m512 lsum = _mm512_set1_ps((float)log(sum));
        for (i = 0; i < n; i += 16) {
            __mmask16 m = tail_mask(n - i);
            __m512 d = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), vmax);
            _mm512_mask_storeu_ps(y + i, m, guarded(_mm512_sub_ps(d, lsum), guard, c));
        }
        return;
    }
    const __m512 r = _mm512_set1_ps((float)(1.0 / sum));
    for (i = 0; i < n; i += 16) {
        __mmask16 m = tail_mask(n - i);
        _mm512_mask_storeu_ps(y + i, m, guarded(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, y + i), r), guard, c));
    }
}

void tc__softmax_f32_avx512(const float *x, float *y, int64_t n, int64_t rows, const tc__softmax_opts *o) {
    for (int64_t r = 0; r < rows; r++) softmax_row(x + r * n, y + r * n, n, o);
}
