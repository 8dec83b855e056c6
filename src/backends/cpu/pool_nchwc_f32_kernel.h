/*
 * pool_nchwc_f32_kernel.h - the body of the blocked MaxPool and AveragePool microkernels for one ISA:
 * one vector is the BV_L channels of one pixel, so a window is a plain loop over its taps inside the
 * input, with no shuffles. Included by pool_nchw16c_f32_avx512.c and pool_nchw8c_f32_avx2.c after
 * their vector vocabulary (blocked_vec_<isa>.h, with its lane masks BV_MASK*), with POOL_MAX_ROWS and
 * POOL_AVG_ROWS defined as the functions' names.
 *
 * Window rows and columns outside the input are skipped (columns are resolved per output
 * column only at the edges of a row). As in the reference, the max ignores NaN unless every
 * tap of the window is NaN, and a window that holds only padding gives -inf; the average
 * divides by the number of taps inside the input (count_include_pad = 0) or inside the padded
 * input (1), so a window that counts no tap gives NaN.
 */
#include <math.h>

#include "backends/cpu/blocked_f32.h"

#define POOL_INLINE static inline __attribute__((always_inline))

/* max ignoring a NaN v (MAXPS returns its second operand when one is NaN), or the sum. */
POOL_INLINE BV_V combine(BV_V acc, BV_V v, const bool MAX) {
    return MAX ? BV_MAX(v, acc) : BV_ADD(acc, v);
}

/* The combination of the taps [ky0, ky1) x [kx0, kx1) of the window whose first tap is input (iy0, ix0). */
POOL_INLINE BV_V window(const tc__blk_window *g, const float *x, int64_t iy0, int64_t ix0, int64_t ky0, int64_t ky1,
                          int64_t kx0, int64_t kx1, const bool MAX) {
    BV_V acc = BV_SET1(MAX ? -INFINITY : 0.0f);
    for (int64_t ky = ky0; ky < ky1; ky++) {
        const float *r = x + ((iy0 + ky * g->dh) * g->W + ix0) * BV_L;
        for (int64_t kx = kx0; kx < kx1; kx++) acc = combine(acc, BV_LOADU(r + kx * g->dw * BV_L), MAX);
    }
    return acc;
}

/* Lanes of the same window that hold at least one number (not NaN). */
static BV_MASK window_ordered(const tc__blk_window *g, const float *x, int64_t iy0, int64_t ix0, int64_t ky0,
                                int64_t ky1, int64_t kx0, int64_t kx1) {
    BV_MASK ord = BV_MASK_NONE;
    for (int64_t ky = ky0; ky < ky1; ky++) {
        const float *r = x + ((iy0 + ky * g->dh) * g->W + ix0) * BV_L;
        for (int64_t kx = kx0; kx < kx1; kx++) {
            BV_V v = BV_LOADU(r + kx * g->dw * BV_L);
            ord = BV_MASK_OR(ord, BV_MASK_ORDERED(v));
        }
    }
    return ord;
}

/* One output pixel (oy, ox) whose window taps inside the input are [ky0, ky1) x [kx0, kx1). */
POOL_INLINE void pixel(const tc__blk_window *g, const float *x, float *y, int64_t oy, int64_t ox, int64_t ky0,
                       int64_t ky1, int64_t kx0, int64_t kx1, float count, const bool MAX) {
    const int64_t iy0 = oy * g->sh - g->pt, ix0 = ox * g->sw - g->pl;
    BV_V acc = window(g, x, iy0, ix0, ky0, ky1, kx0, kx1, MAX);
    if (MAX) {
        /* lanes at -inf whose taps are all NaN: the reference gives NaN */
        BV_MASK ninf = BV_MASK_EQ(acc, BV_SET1(-INFINITY));
        if (BV_MASK_ANY(ninf) && ky0 < ky1 && kx0 < kx1) {
            BV_MASK nan = BV_MASK_ANDNOT(window_ordered(g, x, iy0, ix0, ky0, ky1, kx0, kx1), ninf);
            acc = BV_MASK_SET_NAN(acc, nan);
        }
    } else {
        acc = BV_DIV(acc, BV_SET1(count));
    }
    BV_STOREU(y + (oy * g->OW + ox) * BV_L, acc);
}

/*
 * Taps [*k0, *k1) of a window of k taps from input index start that lie in [0, in), and *cnt,
 * the taps the average counts (those in the padded input with count_include_pad).
 */
POOL_INLINE void taps(int64_t start, int64_t dil, int64_t k, int64_t in, int64_t pad_begin, int64_t pad_end, bool cip,
                      int64_t *k0, int64_t *k1, int64_t *cnt) {
    tc__window_taps(start, dil, k, 0, in, k0, k1);
    *cnt = *k1 - *k0;
    if (cip) {
        int64_t c0, c1;
        tc__window_taps(start, dil, k, -pad_begin, in + pad_end, &c0, &c1);
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

void POOL_MAX_ROWS(const tc__blk_window *g, const float *x, float *y, int64_t oy0, int64_t oy1) {
    rows_impl(g, false, x, y, oy0, oy1, true);
}

void POOL_AVG_ROWS(const tc__blk_window *g, bool count_include_pad, const float *x, float *y, int64_t oy0, int64_t oy1) {
    rows_impl(g, count_include_pad, x, y, oy0, oy1, false);
}

