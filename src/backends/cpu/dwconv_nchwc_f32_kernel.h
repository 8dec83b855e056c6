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
 * one. Kernel rows outside the input are skipped. Every pixel adds its taps in the same order
 * (kernel row, then column) whichever path computes it, so the result does not depend on how
 * rows are split over threads.
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
        int64_t ox = 0;
        for (; ox < lo; ox++) edge_pixel(g, &a, p, oy, ox, ky0, ky1);
        for (; ox + 8 <= hi; ox += 8) pixels(g, &a, p, oy, ox, ky0, ky1, 0, g->kw, 8);
        for (; ox + 4 <= hi; ox += 4) pixels(g, &a, p, oy, ox, ky0, ky1, 0, g->kw, 4);
        for (; ox < hi; ox++) pixels(g, &a, p, oy, ox, ky0, ky1, 0, g->kw, 1);
        for (; ox < g->OW; ox++) edge_pixel(g, &a, p, oy, ox, ky0, ky1);
    }
}
