/*
 * dwconv_nchw16c_f32_avx512.c - the AVX-512 depthwise convolution microkernel on NCHW16c: the
 * 16 channels of one output pixel are one accumulator, acc += x[iy][ix] * w[ky][kx] per tap
 * (the taps packed as [KH][KW][16] per channel block), with the bias, the residual and the
 * activation applied before the store.
 *
 * Output columns whose window lies inside the input row go eight (then four, then one) at a
 * time, so that eight independent FMA chains hide the FMA latency and each weight vector is
 * loaded once per eight pixels; the columns at the edges of a row resolve their taps one by
 * one. Kernel rows outside the input are skipped. Every pixel adds its taps in the same order
 * (kernel row, then column) whichever path computes it, so the result does not depend on how
 * rows are split over threads.
 */
#include <immintrin.h>

#include "backends/cpu/blocked_f32.h"
#include "backends/cpu/vact_f32_avx512.h"

#define DW_INLINE static inline __attribute__((always_inline))

/* Adds the residual of pixel (oy, ox), applies the activation and stores. */
DW_INLINE void finish(const tc__blk_window *g, const tc__vact *act, const tc__dwconv_nchw16c_plane *p, int64_t oy,
                      int64_t ox, __m512 acc) {
    const int64_t at = (oy * g->OW + ox) * 16;
    if (p->res) acc = _mm512_add_ps(acc, _mm512_loadu_ps(p->res + at));
    _mm512_storeu_ps(p->y + at, tc__vact_f32_avx512(acc, act));
}

/*
 * R consecutive output pixels of row oy from column ox, whose window taps inside the input are
 * rows [ky0, ky1) and columns [kx0, kx1) (the same for all R).
 */
DW_INLINE void pixels(const tc__blk_window *g, const tc__vact *act, const tc__dwconv_nchw16c_plane *p, int64_t oy,
                      int64_t ox, int64_t ky0, int64_t ky1, int64_t kx0, int64_t kx1, const int R) {
    const __m512 b = p->bias ? _mm512_loadu_ps(p->bias) : _mm512_setzero_ps();
    __m512 acc[8];
    for (int j = 0; j < R; j++) acc[j] = b;
    const int64_t iy0 = oy * g->sh - g->pt, ix0 = ox * g->sw - g->pl, step = g->sw * 16;
    for (int64_t ky = ky0; ky < ky1; ky++) {
        const float *r = p->x + ((iy0 + ky * g->dh) * g->W + ix0) * 16;
        const float *wr = p->w + ky * g->kw * 16;
        for (int64_t kx = kx0; kx < kx1; kx++) {
            const __m512 wv = _mm512_loadu_ps(wr + kx * 16);
            const float *q = r + kx * g->dw * 16;
            for (int j = 0; j < R; j++) acc[j] = _mm512_fmadd_ps(_mm512_loadu_ps(q + j * step), wv, acc[j]);
        }
    }
    for (int j = 0; j < R; j++) finish(g, act, p, oy, ox + j, acc[j]);
}

/* One output pixel at the edge of row oy: its window columns are resolved here. */
static void edge_pixel(const tc__blk_window *g, const tc__vact *act, const tc__dwconv_nchw16c_plane *p, int64_t oy,
                       int64_t ox, int64_t ky0, int64_t ky1) {
    int64_t kx0, kx1;
    tc__ref_window_taps(ox * g->sw - g->pl, g->dw, g->kw, 0, g->W, &kx0, &kx1);
    pixels(g, act, p, oy, ox, ky0, ky1, kx0, kx1, 1);
}

void tc__dwconv_nchw16c_f32_rows_avx512(const tc__blk_window *g, const tc__vact *act,
                                        const tc__dwconv_nchw16c_plane *p, int64_t oy0, int64_t oy1) {
    const tc__vact a = *act; /* a local copy: stores to y cannot change it */
    int64_t lo, hi;
    tc__blk_window_interior(g, &lo, &hi);
    for (int64_t oy = oy0; oy < oy1; oy++) {
        int64_t ky0, ky1;
        tc__ref_window_taps(oy * g->sh - g->pt, g->dh, g->kh, 0, g->H, &ky0, &ky1);
        int64_t ox = 0;
        for (; ox < lo; ox++) edge_pixel(g, &a, p, oy, ox, ky0, ky1);
        for (; ox + 8 <= hi; ox += 8) pixels(g, &a, p, oy, ox, ky0, ky1, 0, g->kw, 8);
        for (; ox + 4 <= hi; ox += 4) pixels(g, &a, p, oy, ox, ky0, ky1, 0, g->kw, 4);
        for (; ox < hi; ox++) pixels(g, &a, p, oy, ox, ky0, ky1, 0, g->kw, 1);
        for (; ox < g->OW; ox++) edge_pixel(g, &a, p, oy, ox, ky0, ky1);
    }
}
