/*
 * dwconv_f32_avx512.c - the AVX-512 depthwise convolution microkernel: 16 output columns per
 * vector directly on NCHW planes, bias and fused epilogue (residual, activation) before the
 * store.
 *
 * Planes whose K padded rows fit the ring (dwconv_f32.h) are read from it: every block uses
 * plain loads, up to four blocks at a time with two or four accumulators each (split by kernel
 * row and column parity) to hide FMA latency; stride 2 loads 32 inputs and keeps the even or odd
 * ones with a permute. Wider planes read the input in place: interior blocks the same way,
 * edge blocks with masked loads (expand-loads left of column 0) so that padding reads as zero
 * and no address outside the row is formed. Kernel rows outside the input are skipped.
 */
#include <immintrin.h>

#include "backends/cpu/dwconv_f32.h"
#include "backends/cpu/vact_f32_avx512.h"

#define DW_INLINE static inline __attribute__((always_inline))

/* Lanes l = row[ix0 + l] where 0 <= ix0 + l < W, zero elsewhere (any ix0). */
DW_INLINE __m512 load_window(const float *row, int64_t W, int64_t ix0) {
    int64_t lo = ix0 < 0 ? -ix0 : 0, hi = W - ix0;
    if (hi > 16) hi = 16;
    if (lo >= hi) return _mm512_setzero_ps();
    __mmask16 m = (__mmask16)((((uint32_t)1 << hi) - 1) & ~(((uint32_t)1 << lo) - 1));
    if (ix0 >= 0) return _mm512_maskz_loadu_ps(m, row + ix0);
    return _mm512_maskz_expandloadu_ps(m, row); /* consecutive row[0..] into lanes lo.. */
}

/* Lanes l = row[ix0 + s * l] (s = 1 or 2) inside the row, zero elsewhere. */
DW_INLINE __m512 load_edge(const float *row, int64_t W, int64_t ix0, int s) {
    if (s == 1) return load_window(row, W, ix0);
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    return _mm512_permutex2var_ps(load_window(row, W, ix0), even, load_window(row, W, ix0 + 16));
}

/* Adds the residual, applies the activation and stores lanes [0, n) (n <= 16) at column ox0 of row oy. */
DW_INLINE void finish(const tc__dwconv_f32_geom *g, const tc__dwconv_f32_plane *p, int64_t oy, int64_t ox0, __m512 acc,
                      int64_t n) {
    __mmask16 m = n >= 16 ? (__mmask16)0xffff : (__mmask16)(((uint32_t)1 << n) - 1);
    int64_t at = oy * g->OW + ox0;
    if (p->res) acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(m, p->res + at));
    acc = tc__vact_f32_avx512(acc, &g->act);
    _mm512_mask_storeu_ps(p->y + at, m, acc);
}

/* One edge block (columns ox0..ox0+15) of output row oy, kernel rows [ky0, ky1), read in place. */
DW_INLINE void edge_block(const tc__dwconv_f32_geom *g, const tc__dwconv_f32_plane *p, int64_t oy, int64_t ox0,
                          int64_t iy0, int ky0, int ky1, const int K, const int SW) {
    __m512 a = _mm512_set1_ps(p->bias), b = _mm512_setzero_ps();
    const int64_t ix0 = ox0 * SW - g->pl;
    for (int ky = ky0; ky < ky1; ky++) {
        const float *r = p->x + (iy0 + ky) * g->W;
        __m512 t = _mm512_setzero_ps();
        for (int kx = 0; kx < K; kx++)
            t = _mm512_fmadd_ps(load_edge(r, g->W, ix0 + kx, SW), _mm512_set1_ps(p->w[ky * K + kx]), t);
        if ((ky - ky0) & 1) b = _mm512_add_ps(b, t);
        else a = _mm512_add_ps(a, t);
    }
    int64_t n = g->OW - ox0;
    finish(g, p, oy, ox0, _mm512_add_ps(a, b), n > 16 ? 16 : n);
}

/*
 * acc[j][c] += the taps of one kernel row (weights wrow) on NB blocks whose first input is r[0];
 * chain c = par, plus 2 for odd kernel columns when P = 4.
 */
DW_INLINE void accum_row(const float *r, const float *wrow, __m512 (*acc)[4], const int par, const int NB, const int K,
                         const int SW, const int P) {
    if (SW == 1) {
        for (int kx = 0; kx < K; kx++) {
            const __m512 wv = _mm512_set1_ps(wrow[kx]);
            const int c = par + (P == 4 ? 2 * (kx & 1) : 0);
            for (int j = 0; j < NB; j++) acc[j][c] = _mm512_fmadd_ps(_mm512_loadu_ps(r + kx + 16 * j), wv, acc[j][c]);
        }
        return;
    }
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    for (int kx = 0; kx < K; kx += 2) {
        const __m512 we = _mm512_set1_ps(wrow[kx]);
        for (int j = 0; j < NB; j++) {
            const float *q = r + kx + 32 * j;
            __m512 lo = _mm512_loadu_ps(q);
            if (kx + 1 < K) {
                __m512 hi = _mm512_loadu_ps(q + 16);
                const int c1 = par + (P == 4 ? 2 : 0);
                acc[j][par] = _mm512_fmadd_ps(_mm512_permutex2var_ps(lo, even, hi), we, acc[j][par]);
                acc[j][c1] = _mm512_fmadd_ps(_mm512_permutex2var_ps(lo, odd, hi), _mm512_set1_ps(wrow[kx + 1]),
                                             acc[j][c1]);
            } else { /* the last tap needs inputs up to q[30] only */
                __m512 hi = _mm512_maskz_loadu_ps((__mmask16)0x7fff, q + 16);
                acc[j][par] = _mm512_fmadd_ps(_mm512_permutex2var_ps(lo, even, hi), we, acc[j][par]);
            }
        }
    }
}

/*
 * NB blocks at columns ox0.. of output row oy whose taps read rows[ky] + col0 + ... with plain
 * loads, kernel rows [ky0, ky1); stores min(16, OW - column) lanes of each.
 */
DW_INLINE void blocks(const tc__dwconv_f32_geom *g, const tc__dwconv_f32_plane *p, const float *const *rows,
                      int64_t col0, int64_t oy, int64_t ox0, int ky0, int ky1, const int NB, const int K,
                      const int SW) {
    const int P = NB <= 2 ? 4 : 2;
    __m512 acc[4][4];
    for (int j = 0; j < NB; j++) {
        acc[j][0] = _mm512_set1_ps(p->bias);
        for (int c = 1; c < P; c++) acc[j][c] = _mm512_setzero_ps();
    }
    int ky = ky0;
    for (; ky + 1 < ky1; ky += 2) {
        accum_row(rows[ky] + col0, p->w + ky * K, acc, 0, NB, K, SW, P);
        accum_row(rows[ky + 1] + col0, p->w + (ky + 1) * K, acc, 1, NB, K, SW, P);
    }
    if (ky < ky1) accum_row(rows[ky] + col0, p->w + ky * K, acc, 0, NB, K, SW, P);
    for (int j = 0; j < NB; j++) {
        __m512 s = _mm512_add_ps(acc[j][0], acc[j][1]);
        if (P == 4) s = _mm512_add_ps(s, _mm512_add_ps(acc[j][2], acc[j][3]));
        int64_t n = g->OW - (ox0 + 16 * j);
        finish(g, p, oy, ox0 + 16 * j, s, n > 16 ? 16 : n);
    }
}

/* Blocks [b, end) of row oy, four at a time then the rest together. */
DW_INLINE void block_range(const tc__dwconv_f32_geom *g, const tc__dwconv_f32_plane *p, const float *const *rows,
                           int64_t col_of_b0, int64_t oy, int64_t b, int64_t end, int ky0, int ky1, const int K,
                           const int SW) {
    for (; b + 4 <= end; b += 4) blocks(g, p, rows, col_of_b0 + 16 * b * SW, oy, 16 * b, ky0, ky1, 4, K, SW);
    switch (end - b) {
    case 3: blocks(g, p, rows, col_of_b0 + 16 * b * SW, oy, 16 * b, ky0, ky1, 3, K, SW); break;
    case 2: blocks(g, p, rows, col_of_b0 + 16 * b * SW, oy, 16 * b, ky0, ky1, 2, K, SW); break;
    case 1: blocks(g, p, rows, col_of_b0 + 16 * b * SW, oy, 16 * b, ky0, ky1, 1, K, SW); break;
    default: break;
    }
}

/* Kernel rows [*ky0, *ky1) of output row oy that lie inside the input; returns the first input row. */
DW_INLINE int64_t kernel_rows(const tc__dwconv_f32_geom *g, int64_t oy, int *ky0, int *ky1, const int K) {
    const int64_t iy0 = oy * g->sh - g->pt;
    int64_t k0 = iy0 < 0 ? -iy0 : 0, k1 = g->H - iy0;
    if (k0 > K) k0 = K;
    if (k1 > K) k1 = K;
    if (k1 < k0) k1 = k0;
    *ky0 = (int)k0;
    *ky1 = (int)k1;
    return iy0;
}

DW_INLINE void rows_impl(const tc__dwconv_f32_geom *g, const tc__dwconv_f32_plane *p, int64_t oy0, int64_t oy1,
                         const int K, const int SW) {
    const int64_t nb = (g->OW + 15) / 16;
    const float *rows[8];
    const int64_t len = tc__dwconv_f32_ring_len(g, 16);
    if (len > 0) {
        float ring[TC__DWCONV_F32_RING_FLOATS] __attribute__((aligned(64)));
        memset(ring, 0, sizeof(float) * (size_t)(len * K));
        int64_t loaded = 0;
        for (int64_t oy = oy0; oy < oy1; oy++) {
            int ky0, ky1;
            const int64_t iy0 = kernel_rows(g, oy, &ky0, &ky1, K);
            tc__dwconv_f32_ring_fill(g, p->x, ring, len, &loaded, iy0 + ky0, iy0 + ky1);
            for (int ky = ky0; ky < ky1; ky++) rows[ky] = ring + ((iy0 + ky) % K) * len;
            block_range(g, p, rows, 0, oy, 0, nb, ky0, ky1, K, SW);
        }
        return;
    }
    /* in place: interior blocks b have 16 b SW >= pl, 16 b SW - pl + 15 SW + K - 1 <= W - 1, 16 b + 16 <= OW */
    int64_t lo = (g->pl + 16 * SW - 1) / (16 * SW);
    const int64_t num = g->W - K + g->pl - 15 * SW;
    int64_t hi = num < 0 ? 0 : num / (16 * SW) + 1;
    if (hi > g->OW / 16) hi = g->OW / 16;
    if (lo > nb) lo = nb;
    if (hi < lo) hi = lo;
    for (int64_t oy = oy0; oy < oy1; oy++) {
        int ky0, ky1;
        const int64_t iy0 = kernel_rows(g, oy, &ky0, &ky1, K);
        for (int ky = ky0; ky < ky1; ky++) rows[ky] = p->x + (iy0 + ky) * g->W;
        int64_t b = 0;
        for (; b < lo; b++) edge_block(g, p, oy, 16 * b, iy0, ky0, ky1, K, SW);
        if (hi > lo) block_range(g, p, rows, -g->pl, oy, lo, hi, ky0, ky1, K, SW);
        for (b = hi; b < nb; b++) edge_block(g, p, oy, 16 * b, iy0, ky0, ky1, K, SW);
    }
}

static void rows_k3s1(const tc__dwconv_f32_geom *g, const tc__dwconv_f32_plane *p, int64_t a, int64_t b) {
    rows_impl(g, p, a, b, 3, 1);
}
static void rows_k3s2(const tc__dwconv_f32_geom *g, const tc__dwconv_f32_plane *p, int64_t a, int64_t b) {
    rows_impl(g, p, a, b, 3, 2);
}
static void rows_k5s1(const tc__dwconv_f32_geom *g, const tc__dwconv_f32_plane *p, int64_t a, int64_t b) {
    rows_impl(g, p, a, b, 5, 1);
}
static void rows_k5s2(const tc__dwconv_f32_geom *g, const tc__dwconv_f32_plane *p, int64_t a, int64_t b) {
    rows_impl(g, p, a, b, 5, 2);
}
static void rows_k7s1(const tc__dwconv_f32_geom *g, const tc__dwconv_f32_plane *p, int64_t a, int64_t b) {
    rows_impl(g, p, a, b, 7, 1);
}
static void rows_k7s2(const tc__dwconv_f32_geom *g, const tc__dwconv_f32_plane *p, int64_t a, int64_t b) {
    rows_impl(g, p, a, b, 7, 2);
}

void tc__dwconv_f32_rows_avx512(const tc__dwconv_f32_geom *g, const tc__dwconv_f32_plane *p, int64_t oy0, int64_t oy1) {
    tc__dwconv_f32_ukernel f = NULL;
    switch (g->K) {
    case 3: f = g->sw == 1 ? rows_k3s1 : rows_k3s2; break;
    case 5: f = g->sw == 1 ? rows_k5s1 : rows_k5s2; break;
    case 7: f = g->sw == 1 ? rows_k7s1 : rows_k7s2; break;
    default: return; /* rejected by tc__dwconv_f32_supports */
    }
    f(g, p, oy0, oy1);
}
