/*
 * softmax_f32_avx512.c - the AVX-512 Softmax and LogSoftmax microkernel. Per row: the maximum
 * (NaN inputs skipped here; they still turn the whole row into NaN through the sum, as in the
 * reference), then e = exp(x - max) inline (qact_avx512.h's polynomial, 3e-7 relative: a SLEEF call per
 * 16 values was most of BERT-base's attention Softmax), summed in double, then y = e * (1 / sum) or
 * y = (x - max) - log(sum); with the NaN guard, NaN outputs become the guard's value in the same
 * store. 16 floats per step with masked tails. Softmax rows of at most 256 values stay in registers
 * (softmax_row_regs), a fused mask added as they load; longer rows add it into y first, then normalise y in place.
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

/* A Softmax row of at most 16 * NV values (an attention row: BERT-base's 128) held in NV registers: one load, the
 * maximum (NaN skipped, as softmax_row), e = exp(x - max) summed in float by a tree (~1e-7 relative for values of at
 * most 1), y = e / sum (guarded) stored: no second read of x or y and no double sums. softmax_row's 128-value rows
 * were latency-bound: ~1.2 cycles per value. */
static inline __attribute__((always_inline)) void softmax_row_regs(const float *x, const float *mask, float *y,
                                                                   int64_t n, const tc__softmax_opts *o, const int NV) {
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    __m512 v[16], m = ninf;
#pragma GCC unroll 16
    for (int k = 0; k < NV; k++) {
        const __mmask16 t = tail_mask(n - 16 * k);
        v[k] = _mm512_mask_loadu_ps(ninf, t, x + 16 * k);
        if (mask != NULL) v[k] = _mm512_add_ps(v[k], _mm512_maskz_loadu_ps(t, mask + 16 * k)); /* (-inf + 0 past n) */
        m = _mm512_max_ps(v[k], m); /* a NaN in v: the second operand */
    }
    const __m512 vmax = _mm512_set1_ps(_mm512_reduce_max_ps(m));
#pragma GCC unroll 16
    for (int k = 0; k < NV; k++)
        v[k] = _mm512_maskz_mov_ps(tail_mask(n - 16 * k), exp_shifted(_mm512_sub_ps(v[k], vmax)));
    __m512 s[16];
#pragma GCC unroll 16
    for (int k = 0; k < NV; k++) s[k] = v[k];
#pragma GCC unroll 4
    for (int w = 1; w < NV; w *= 2)
#pragma GCC unroll 16
        for (int k = 0; k + w < NV; k += 2 * w) s[k] = _mm512_add_ps(s[k], s[k + w]);
    const __m512 r = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(s[0]));
    const bool guard = o->nan_guard;
    const __m512 c = _mm512_set1_ps(o->nan_to);
#pragma GCC unroll 16
    for (int k = 0; k < NV; k++)
        _mm512_mask_storeu_ps(y + 16 * k, tail_mask(n - 16 * k), guarded(_mm512_mul_ps(v[k], r), guard, c));
}

#define SOFTMAX_REGS(NV)                                                                                              \
    static void softmax_rows_##NV(const float *x, float *y, int64_t n, int64_t rows, const tc__softmax_opts *o) {      \
        for (int64_t r = 0; r < rows; r++)                                                                            \
            softmax_row_regs(x + r * n, o->mask ? o->mask + r * o->mask_stride : NULL, y + r * n, n, o, NV);         \
    }
SOFTMAX_REGS(1)
SOFTMAX_REGS(2)
SOFTMAX_REGS(3)
SOFTMAX_REGS(4)
SOFTMAX_REGS(5)
SOFTMAX_REGS(6)
SOFTMAX_REGS(7)
SOFTMAX_REGS(8)
SOFTMAX_REGS(9)
SOFTMAX_REGS(10)
SOFTMAX_REGS(11)
SOFTMAX_REGS(12)
SOFTMAX_REGS(13)
SOFTMAX_REGS(14)
SOFTMAX_REGS(15)
SOFTMAX_REGS(16)
#undef SOFTMAX_REGS

typedef void (*softmax_rows_fn)(const float *, float *, int64_t, int64_t, const tc__softmax_opts *);
static const softmax_rows_fn kRowsRegs[16] = {softmax_rows_1,  softmax_rows_2,  softmax_rows_3,  softmax_rows_4,
                                              softmax_rows_5,  softmax_rows_6,  softmax_rows_7,  softmax_rows_8,
                                              softmax_rows_9,  softmax_rows_10, softmax_rows_11, softmax_rows_12,
                                              softmax_rows_13, softmax_rows_14, softmax_rows_15, softmax_rows_16};

/* y = x + m over a row of n. */
static void add_row(const float *x, const float *m, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 t = tail_mask(n - i);
        const __m512 s = _mm512_add_ps(_mm512_maskz_loadu_ps(t, x + i), _mm512_maskz_loadu_ps(t, m + i));
        _mm512_mask_storeu_ps(y + i, t, s);
    }
}

void tc__softmax_f32_avx512(const float *x, float *y, int64_t n, int64_t rows, const tc__softmax_opts *o) {
    if (!o->log_out && n >= 1 && n <= 256) {
        kRowsRegs[(n + 15) / 16 - 1](x, y, n, rows, o);
        return;
    }
    tc__softmax_rows_masked(x, y, n, rows, o, softmax_row, add_row);
}
