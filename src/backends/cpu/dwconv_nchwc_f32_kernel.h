/*
 * dwconv_nchwc_f32_kernel.h - the body of the blocked depthwise convolution microkernel for one ISA:
 * the BV_L channels of one output pixel are one accumulator, acc += x[iy][ix] * w[ky][kx] per tap
 * (the taps packed as [KH][KW][BV_L] per channel block), with the bias, the residual and the
 * activation applied before the store. Included by dwconv_nchw16c_f32_avx512.c and
 * dwconv_nchw8c_f32_avx2.c after their vector vocabulary (blocked_vec_<isa>.h), with DW_ROWS defined
 * as the name of the function.
 *
 * Output columns whose window lies inside the input row go eight (then four, then one) at a
 * time, so that eight independent FMA chains hide the FMA latency and each weight vector is
 * loaded once per eight pixels; the columns at the edges of a row resolve their taps one by
 * one. Windows three columns wide at dilation 1 and stride 1 or 2 (MobileNet's 3x3), when p->reuse
 * (the tactic's configuration) says so, go instead in tiles of 8, 4, 2 and 1 pixels over the
 * whole row, edges included (a 7- or 14-wide row is then 3 tiles, not 2 edge pixels and 2 tiles),
 * and each tile loads an input vector of a kernel row once for all its pixels that read it (10
 * loads instead of 24 per kernel row of eight pixels at stride 1, 17 at stride 2). Kernel rows
 * outside the input are skipped. Every pixel adds its taps in the same order (kernel row, then
 * column) whichever path computes it, so the result depends neither on the configuration nor on
 * how rows are split over threads.
 */
#include "backends/cpu/blocked_f32.h"

#define DW_INLINE static inline __attribute__((always_inline))

/* Adds the residual of pixel (oy, ox), applies the activation and stores. */
DW_INLINE void finish(const tc__blk_window *g, const tc__vact *act, const tc__dwconv_nchw16c_plane *p, int64_t oy,
                      int64_t ox, BV_V acc) {
    const int64_t at = (oy * g->OW + ox) * BV_L;
    if (p->res) acc = BV_ADD(acc, BV_LOADU(p->res + at));
    BV_STOREU(p->y + at, BV_VACT(acc, act));
}

/*
 * R consecutive output pixels of row oy from column ox, whose window taps inside the input are
 * rows [ky0, ky1) and columns [kx0, kx1) (the same for all R).
 */
DW_INLINE void pixels(const tc__blk_window *g, const tc__vact *act, const tc__dwconv_nchw16c_plane *p, int64_t oy,
                      int64_t ox, int64_t ky0, int64_t ky1, int64_t kx0, int64_t kx1, const int R) {
    const BV_V b = p->bias ? BV_LOADU(p->bias) : BV_ZERO();
    BV_V acc[8];
    for (int j = 0; j < R; j++) acc[j] = b;
    const int64_t iy0 = oy * g->sh - g->pt, ix0 = ox * g->sw - g->pl, step = g->sw * BV_L;
    for (int64_t ky = ky0; ky < ky1; ky++) {
        const float *r = p->x + ((iy0 + ky * g->dh) * g->W + ix0) * BV_L;
        const float *wr = p->w + ky * g->kw * BV_L;
        for (int64_t kx = kx0; kx < kx1; kx++) {
            const BV_V wv = BV_LOADU(wr + kx * BV_L);
            const float *q = r + kx * g->dw * BV_L;
            for (int j = 0; j < R; j++) acc[j] = BV_FMADD(BV_LOADU(q + j * step), wv, acc[j]);
        }
    }
    for (int j = 0; j < R; j++) finish(g, act, p, oy, ox + j, acc[j]);
}

/*
 * R consecutive output pixels of row oy from column ox, for kw == 3, dw == 1 and stride S (1 or 2):
 * input vector i of a kernel row feeds pixel q at window column kx = i - q * S, so each input
 * vector is loaded once for the tile and each pixel still adds its taps in kernel-column order,
 * the order of pixels(). With `checked` (a tile at an edge of the row) the vectors outside the
 * input row are skipped, which skips exactly the taps edge_pixel() leaves out.
 */
DW_INLINE void pixels3(const tc__blk_window *g, const tc__vact *act, const tc__dwconv_nchw16c_plane *p, int64_t oy,
                       int64_t ox, int64_t ky0, int64_t ky1, const int R, const int S, const bool checked) {
    const BV_V b = p->bias ? BV_LOADU(p->bias) : BV_ZERO();
    BV_V acc[8];
    for (int j = 0; j < R; j++) acc[j] = b;
    const int64_t iy0 = oy * g->sh - g->pt, ix0 = ox * S - g->pl;
    for (int64_t ky = ky0; ky < ky1; ky++) {
        const float *r = p->x + ((iy0 + ky * g->dh) * g->W + ix0) * BV_L;
        const float *wr = p->w + ky * 3 * BV_L;
        const BV_V w[3] = {BV_LOADU(wr), BV_LOADU(wr + BV_L), BV_LOADU(wr + 2 * BV_L)};
#pragma GCC unroll 17
        for (int i = 0; i < (R - 1) * S + 3; i++) {
            if (checked && (ix0 + i < 0 || ix0 + i >= g->W)) continue;
            const BV_V v = BV_LOADU(r + i * BV_L);
#pragma GCC unroll 8
            for (int j = 0; j < R; j++) {
                const int kx = i - j * S;
                if (kx >= 0 && kx < 3) acc[j] = BV_FMADD(v, w[kx], acc[j]);
            }
        }
    }
    for (int j = 0; j < R; j++) finish(g, act, p, oy, ox + j, acc[j]);
}

/*
 * pixels3 for rows oy and oy + 1 at once (both with every kernel row in bounds, kh == 3): twice the
 * independent FMA chains of one row for the small planes, and the input rows both read loaded once.
 * Each pixel adds its taps in (kernel row, kernel column) order, as in pixels3.
 */
DW_INLINE void pixels3x2(const tc__blk_window *g, const tc__vact *act, const tc__dwconv_nchw16c_plane *p, int64_t oy,
                         int64_t ox, const int R, const int S, const bool checked) {
    const BV_V b = p->bias ? BV_LOADU(p->bias) : BV_ZERO();
    BV_V acc[2][8];
    for (int j = 0; j < R; j++) acc[0][j] = acc[1][j] = b;
    const int64_t iy0 = oy * g->sh - g->pt, ix0 = ox * S - g->pl;
    /* Input rows iy0 .. iy0 + S + 2: row 0 of the pair reads kernel row ky = r, row 1 ky = r - S. */
#pragma GCC unroll 5
    for (int r = 0; r < S + 3; r++) {
        const float *x = p->x + ((iy0 + r) * g->W + ix0) * BV_L;
#pragma GCC unroll 17
        for (int i = 0; i < (R - 1) * S + 3; i++) {
            if (checked && (ix0 + i < 0 || ix0 + i >= g->W)) continue;
            const BV_V v = BV_LOADU(x + i * BV_L);
#pragma GCC unroll 2
            for (int h = 0; h < 2; h++) {
                const int ky = r - h * S;
                if (ky < 0 || ky >= 3) continue;
#pragma GCC unroll 8
                for (int j = 0; j < R; j++) {
                    const int kx = i - j * S;
                    if (kx >= 0 && kx < 3) acc[h][j] = BV_FMADD(v, BV_LOADU(p->w + (ky * 3 + kx) * BV_L), acc[h][j]);
                }
            }
        }
    }
    for (int j = 0; j < R; j++) {
        finish(g, act, p, oy, ox + j, acc[0][j]);
        finish(g, act, p, oy + 1, ox + j, acc[1][j]);
    }
}

/* R pixels from column ox of row oy (pixels3), or of rows oy and oy + 1 (pair: pixels3x2). */
DW_INLINE void tile3(const tc__blk_window *g, const tc__vact *act, const tc__dwconv_nchw16c_plane *p, int64_t oy,
                     int64_t ox, int64_t ky0, int64_t ky1, const int R, const int S, const bool checked,
                     const bool pair) {
    if (pair) pixels3x2(g, act, p, oy, ox, R, S, checked);
    else pixels3(g, act, p, oy, ox, ky0, ky1, R, S, checked);
}

/*
 * Row oy (pair: rows oy and oy + 1, both with every kernel row in bounds and kh == 3) of a 3-wide window at
 * stride S, edges included, in tiles of 8, 4, 2 and 1 pixels; tiles that touch an edge skip the columns outside.
 */
DW_INLINE void row3(const tc__blk_window *g, const tc__vact *act, const tc__dwconv_nchw16c_plane *p, int64_t oy,
                    int64_t ky0, int64_t ky1, int64_t lo, int64_t hi, const int S, const bool pair) {
    int64_t ox = 0;
    while (ox < g->OW) {
        const int64_t left = g->OW - ox;
        if (left >= 8) {
            if (ox >= lo && ox + 8 <= hi) tile3(g, act, p, oy, ox, ky0, ky1, 8, S, false, pair);
            else tile3(g, act, p, oy, ox, ky0, ky1, 8, S, true, pair);
            ox += 8;
        } else if (left >= 4) {
            tile3(g, act, p, oy, ox, ky0, ky1, 4, S, !(ox >= lo && ox + 4 <= hi), pair);
            ox += 4;
        } else if (left >= 2) {
            tile3(g, act, p, oy, ox, ky0, ky1, 2, S, !(ox >= lo && ox + 2 <= hi), pair);
            ox += 2;
        } else {
            tile3(g, act, p, oy, ox, ky0, ky1, 1, S, !(ox >= lo && ox + 1 <= hi), pair);
            ox += 1;
        }
    }
}

/* One output pixel at the edge of row oy: its window columns are resolved here. */
static void edge_pixel(const tc__blk_window *g, const tc__vact *act, const tc__dwconv_nchw16c_plane *p, int64_t oy,
                       int64_t ox, int64_t ky0, int64_t ky1) {
    int64_t kx0, kx1;
    tc__window_taps(ox * g->sw - g->pl, g->dw, g->kw, 0, g->W, &kx0, &kx1);
    pixels(g, act, p, oy, ox, ky0, ky1, kx0, kx1, 1);
}

void DW_ROWS(const tc__blk_window *g, const tc__vact *act,
             const tc__dwconv_nchw16c_plane *p, int64_t oy0, int64_t oy1) {
    const tc__vact a = *act; /* a local copy: stores to y cannot change it */
    int64_t lo, hi;
    tc__blk_window_interior(g, &lo, &hi);
    for (int64_t oy = oy0; oy < oy1; oy++) {
        int64_t ky0, ky1;
        tc__window_taps(oy * g->sh - g->pt, g->dh, g->kh, 0, g->H, &ky0, &ky1);
        if (p->reuse && g->kw == 3 && g->dw == 1 && (g->sw == 1 || g->sw == 2)) {
            const int S = (int)g->sw;
            /* Two rows at once when both have every kernel row in bounds (rows of 3, at dilation 1). */
            if (p->reuse == 2 && g->kh == 3 && g->dh == 1 && oy + 1 < oy1 && ky0 == 0 && ky1 == 3 &&
                (oy + 1) * g->sh - g->pt + 3 <= g->H) {
                if (S == 1) row3(g, &a, p, oy, ky0, ky1, lo, hi, 1, true);
                else row3(g, &a, p, oy, ky0, ky1, lo, hi, 2, true);
                oy++;
                continue;
            }
            if (S == 1) row3(g, &a, p, oy, ky0, ky1, lo, hi, 1, false);
            else row3(g, &a, p, oy, ky0, ky1, lo, hi, 2, false);
            continue;
        }
        int64_t ox = 0;
        for (; ox < lo; ox++) edge_pixel(g, &a, p, oy, ox, ky0, ky1);
        for (; ox + 8 <= hi; ox += 8) pixels(g, &a, p, oy, ox, ky0, ky1, 0, g->kw, 8);
        for (; ox + 4 <= hi; ox += 4) pixels(g, &a, p, oy, ox, ky0, ky1, 0, g->kw, 4);
        for (; ox < hi; ox++) pixels(g, &a, p, oy, ox, ky0, ky1, 0, g->kw, 1);
        for (; ox < g->OW; ox++) edge_pixel(g, &a, p, oy, ox, ky0, ky1);
    }
}
