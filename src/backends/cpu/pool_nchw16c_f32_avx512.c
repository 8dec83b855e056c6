/*
 * pool_nchw16c_f32_avx512.c - the AVX-512 MaxPool, AveragePool and GlobalAveragePool
 * microkernels on NCHW16c: one vector is the 16 channels of one pixel, so a window is a plain
 * loop over its taps inside the input, with no masks and no lane shuffles.
 *
 * Window rows and columns outside the input are skipped (columns are resolved per output
 * column only at the edges of a row). As in the reference, the max ignores NaN unless every
 * tap of the window is NaN, and a window that holds only padding gives -inf; the average
 * divides by the number of taps inside the input (count_include_pad = 0) or inside the padded
 * input (1), so a window that counts no tap gives NaN. The global average sums in double.
 */
#include <immintrin.h>
#include <math.h>

#include "backends/cpu/blocked_f32.h"

#define POOL_INLINE static inline __attribute__((always_inline))

/* max ignoring a NaN v (MAXPS returns its second operand when one is NaN), or the sum. */
POOL_INLINE __m512 combine(__m512 acc, __m512 v, const bool MAX) {
    return MAX ? _mm512_max_ps(v, acc) : _mm512_add_ps(acc, v);
}

/* The combination of the taps [ky0, ky1) x [kx0, kx1) of the window whose first tap is input (iy0, ix0). */
POOL_INLINE __m512 window(const tc__blk_window *g, const float *x, int64_t iy0, int64_t ix0, int64_t ky0, int64_t ky1,
                          int64_t kx0, int64_t kx1, const bool MAX) {
    __m512 acc = _mm512_set1_ps(MAX ? -INFINITY : 0.0f);
    for (int64_t ky = ky0; ky < ky1; ky++) {
        const float *r = x + ((iy0 + ky * g->dh) * g->W + ix0) * 16;
        for (int64_t kx = kx0; kx < kx1; kx++) acc = combine(acc, _mm512_loadu_ps(r + kx * g->dw * 16), MAX);
    }
    return acc;
}

/* Lanes of the same window that hold at least one number (not NaN). */
static __mmask16 window_ordered(const tc__blk_window *g, const float *x, int64_t iy0, int64_t ix0, int64_t ky0,
                                int64_t ky1, int64_t kx0, int64_t kx1) {
    __mmask16 ord = 0;
    for (int64_t ky = ky0; ky < ky1; ky++) {
        const float *r = x + ((iy0 + ky * g->dh) * g->W + ix0) * 16;
        for (int64_t kx = kx0; kx < kx1; kx++) {
            __m512 v = _mm512_loadu_ps(r + kx * g->dw * 16);
            ord |= _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
        }
    }
    return ord;
}

/* One output pixel (oy, ox) whose window taps inside the input are [ky0, ky1) x [kx0, kx1). */
POOL_INLINE void pixel(const tc__blk_window *g, const float *x, float *y, int64_t oy, int64_t ox, int64_t ky0,
                       int64_t ky1, int64_t kx0, int64_t kx1, float count, const bool MAX) {
    const int64_t iy0 = oy * g->sh - g->pt, ix0 = ox * g->sw - g->pl;
    __m512 acc = window(g, x, iy0, ix0, ky0, ky1, kx0, kx1, MAX);
    if (MAX) {
        /* lanes at -inf whose taps are all NaN: the reference gives NaN */
        __mmask16 ninf = _mm512_cmp_ps_mask(acc, _mm512_set1_ps(-INFINITY), _CMP_EQ_OQ);
        if (ninf != 0 && ky0 < ky1 && kx0 < kx1) {
            __mmask16 nan = ninf & (__mmask16)~window_ordered(g, x, iy0, ix0, ky0, ky1, kx0, kx1);
            acc = _mm512_mask_mov_ps(acc, nan, _mm512_set1_ps(NAN));
        }
    } else {
        acc = _mm512_div_ps(acc, _mm512_set1_ps(count));
    }
    _mm512_storeu_ps(y + (oy * g->OW + ox) * 16, acc);
}

/*
 * Taps [*k0, *k1) of a window of k taps from input index start that lie in [0, in), and *cnt,
 * the taps the average counts (those in the padded input with count_include_pad).
 */
POOL_INLINE void taps(int64_t start, int64_t dil, int64_t k, int64_t in, int64_t pad_begin, int64_t pad_end, bool cip,
                      int64_t *k0, int64_t *k1, int64_t *cnt) {
    tc__ref_window_taps(start, dil, k, 0, in, k0, k1);
    *cnt = *k1 - *k0;
    if (cip) {
        int64_t c0, c1;
        tc__ref_window_taps(start, dil, k, -pad_begin, in + pad_end, &c0, &c1);
        *cnt = c1 - c0;
    }
}

/* One output column at the edge of row oy (its window columns resolved one by one). */
POOL_INLINE void edge_pixel(const tc__blk_window *g, bool cip, const float *x, float *y, int64_t oy, int64_t ox,
                            int64_t ky0, int64_t ky1, int64_t cnt_y, const bool MAX) {
    int64_t kx0, kx1, cnt_x;
    taps(ox * g->sw - g->pl, g->dw, g->kw, g->W, g->pl, g->pr, cip, &kx0, &kx1, &cnt_x);
    pixel(g, x, y, oy, ox, ky0, ky1, kx0, kx1, (float)(cnt_y * cnt_x), MAX);
}

POOL_INLINE void rows_impl(const tc__blk_window *g, bool cip, const float *x, float *y, int64_t oy0, int64_t oy1,
                           const bool MAX) {
    int64_t lo, hi;
    tc__blk_window_interior(g, &lo, &hi);
    for (int64_t oy = oy0; oy < oy1; oy++) {
        int64_t ky0, ky1, cnt_y;
        taps(oy * g->sh - g->pt, g->dh, g->kh, g->H, g->pt, g->pb, cip, &ky0, &ky1, &cnt_y);
        int64_t ox = 0;
        for (; ox < lo; ox++) edge_pixel(g, cip, x, y, oy, ox, ky0, ky1, cnt_y, MAX);
        const float count = (float)(cnt_y * g->kw);
        for (; ox < hi; ox++) pixel(g, x, y, oy, ox, ky0, ky1, 0, g->kw, count, MAX);
        for (; ox < g->OW; ox++) edge_pixel(g, cip, x, y, oy, ox, ky0, ky1, cnt_y, MAX);
    }
}

void tc__maxpool_nchw16c_f32_rows_avx512(const tc__blk_window *g, const float *x, float *y, int64_t oy0, int64_t oy1) {
    rows_impl(g, false, x, y, oy0, oy1, true);
}

void tc__avgpool_nchw16c_f32_rows_avx512(const tc__blk_window *g, bool count_include_pad, const float *x, float *y,
                                         int64_t oy0, int64_t oy1) {
    rows_impl(g, count_include_pad, x, y, oy0, oy1, false);
}

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
