/*
 * dwconv_f32_avx2.c - the AVX2 depthwise convolution microkernel: 8 output columns per vector
 * directly on NCHW planes, bias and fused epilogue (residual, activation) before the store.
 *
 * Same structure as the AVX-512 kernel: planes whose K padded rows fit the ring (dwconv_f32.h)
 * are read from it with plain loads, up to four blocks at a time with two or four accumulators
 * each; stride 2 deinterleaves 16 inputs with shuffles. Wider planes read the input in place,
 * edge blocks with masked loads (shifted with a lane permute left of column 0) so that padding
 * reads as zero and no address outside the row is formed.
 */
#include <immintrin.h>

#include "backends/cpu/dwconv_f32.h"
#include "backends/cpu/vact_f32_avx2.h"

#define DW_INLINE static inline __attribute__((always_inline))

/* Integer lane mask: lanes l < n (n <= 8; none for n <= 0). */
DW_INLINE __m256i lanes_below(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Lanes l = row[ix0 + l] where 0 <= ix0 + l < W, zero elsewhere (any ix0). */
DW_INLINE __m256 load_window(const float *row, int64_t W, int64_t ix0) {
    int64_t lo = ix0 < 0 ? -ix0 : 0, hi = W - ix0;
    if (hi > 8) hi = 8;
    if (lo >= hi) return _mm256_setzero_ps();
    if (ix0 >= 0) return hi == 8 ? _mm256_loadu_ps(row + ix0) : _mm256_maskload_ps(row + ix0, lanes_below(hi));
    /* row[0 .. hi - lo) into lanes lo .. hi */
    __m256 v = _mm256_maskload_ps(row, lanes_below(hi - lo));
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256 s = _mm256_permutevar8x32_ps(v, _mm256_sub_epi32(iota, _mm256_set1_epi32((int32_t)lo)));
    return _mm256_andnot_ps(_mm256_castsi256_ps(lanes_below(lo)), s);
}

/* The even / odd elements of the 16 floats a:b. */
DW_INLINE __m256 even8(__m256 a, __m256 b) {
    __m256 t = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), _MM_SHUFFLE(3, 1, 2, 0)));
}
DW_INLINE __m256 odd8(__m256 a, __m256 b) {
    __m256 t = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), _MM_SHUFFLE(3, 1, 2, 0)));
}

/* Lanes l = row[ix0 + s * l] (s = 1 or 2) inside the row, zero elsewhere. */
DW_INLINE __m256 load_edge(const float *row, int64_t W, int64_t ix0, int s) {
    if (s == 1) return load_window(row, W, ix0);
    return even8(load_window(row, W, ix0), load_window(row, W, ix0 + 8));
}

/* Adds the residual, applies the activation and stores lanes [0, n) (n <= 8) at column ox0 of row oy. */
DW_INLINE void finish(const tc__dwconv_f32_geom *g, const tc__dwconv_f32_plane *p, int64_t oy, int64_t ox0, __m256 acc,
                      int64_t n) {
    int64_t at = oy * g->OW + ox0;
    if (n >= 8) {
        if (p->res) acc = _mm256_add_ps(acc, _mm256_loadu_ps(p->res + at));
        _mm256_storeu_ps(p->y + at, tc__vact_f32_avx2(acc, &g->act));
        return;
    }
    __m256i m = lanes_below(n);
    if (p->res) acc = _mm256_add_ps(acc, _mm256_maskload_ps(p->res + at, m));
    _mm256_maskstore_ps(p->y + at, m, tc__vact_f32_avx2(acc, &g->act));
}

/* One edge block (columns ox0..ox0+7) of output row oy, kernel rows [ky0, ky1), read in place. */
DW_INLINE void edge_block(const tc__dwconv_f32_geom *g, const tc__dwconv_f32_plane *p, int64_t oy, int64_t ox0,
                          int64_t iy0, int ky0, int ky1, const int K, const int SW) {
    __m256 a = _mm256_set1_ps(p->bias), b = _mm256_setzero_ps();
    const int64_t ix0 = ox0 * SW - g->pl;
    for (int ky = ky0; ky < ky1; ky++) {
        const float *r = p->x + (iy0 + ky) * g->W;
        __m256 t = _mm256_setzero_ps();
        for (int kx = 0; kx < K; kx++)
            t = _mm256_fmadd_ps(load_edge(r, g->W, ix0 + kx, SW), _mm256_set1_ps(p->w[ky * K + kx]), t);
        if ((ky - ky0) & 1) b = _mm256_add_ps(b, t);
        else a = _mm256_add_ps(a, t);
    }
    int64_t n = g->OW - ox0;
    finish(g, p, oy, ox0, _mm256_add_ps(a, b), n > 8 ? 8 : n);
}

/*
 * acc[j][c] += the taps of one kernel row (weights wrow) on NB blocks whose first input is r[0];
 * chain c = par, plus 2 for odd kernel columns when P = 4.
 */
DW_INLINE void accum_row(const float *r, const float *wrow, __m256 (*acc)[4], const int par, const int NB, const int K,
                         const int SW, const int P) {
    if (SW == 1) {
        for (int kx = 0; kx < K; kx++) {
            const __m256 wv = _mm256_set1_ps(wrow[kx]);
            const int c = par + (P == 4 ? 2 * (kx & 1) : 0);
            for (int j = 0; j < NB; j++) acc[j][c] = _mm256_fmadd_ps(_mm256_loadu_ps(r + kx + 8 * j), wv, acc[j][c]);
        }
        return;
    }
    for (int kx = 0; kx < K; kx += 2) {
        const __m256 we = _mm256_set1_ps(wrow[kx]);
        for (int j = 0; j < NB; j++) {
            const float *q = r + kx + 16 * j;
            __m256 lo = _mm256_loadu_ps(q);
            if (kx + 1 < K) {
                __m256 hi = _mm256_loadu_ps(q + 8);
                const int c1 = par + (P == 4 ? 2 : 0);
                acc[j][par] = _mm256_fmadd_ps(even8(lo, hi), we, acc[j][par]);
                acc[j][c1] = _mm256_fmadd_ps(odd8(lo, hi), _mm256_set1_ps(wrow[kx + 1]), acc[j][c1]);
            } else { /* the last tap needs inputs up to q[14] only */
                __m256 hi = _mm256_maskload_ps(q + 8, lanes_below(7));
                acc[j][par] = _mm256_fmadd_ps(even8(lo, hi), we, acc[j][par]);
            }
        }
    }
}

/*
 * NB blocks at columns ox0.. of output row oy whose taps read rows[ky] + col0 + ... with plain
 * loads, kernel rows [ky0, ky1); stores min(8, OW - column) lanes of each.
 */
DW_INLINE void blocks(const tc__dwconv_f32_geom *g, const tc__dwconv_f32_plane *p, const float *const *rows,
                      int64_t col0, int64_t oy, int64_t ox0, int ky0, int ky1, const int NB, const int K,
                      const int SW) {
    const int P = NB <= 2 ? 4 : 2;
    __m256 acc[4][4];
    for (int j = 0; j < NB; j++) {
        acc[j][0] = _mm256_set1_ps(p->bias);
        for (int c = 1; c < P; c++) acc[j][c] = _mm256_setzero_ps();
    }
    int ky = ky0;
    for (; ky + 1 < ky1; ky += 2) {
        accum_row(rows[ky] + col0, p->w + ky * K, acc, 0, NB, K, SW, P);
        accum_row(rows[ky + 1] + col0, p->w + (ky + 1) * K, acc, 1, NB, K, SW, P);
    }
    if (ky < ky1) accum_row(rows[ky] + col0, p->w + ky * K, acc, 0, NB, K, SW, P);
    for (int j = 0; j < NB; j++) {
        __m256 s = _mm256_add_ps(acc[j][0], acc[j][1]);
        if (P == 4) s = _mm256_add_ps(s, _mm256_add_ps(acc[j][2], acc[j][3]));
        int64_t n = g->OW - (ox0 + 8 * j);
        finish(g, p, oy, ox0 + 8 * j, s, n > 8 ? 8 : n);
    }
}

/* Blocks [b, end) of row oy, four at a time then the rest together. */
DW_INLINE void block_range(const tc__dwconv_f32_geom *g, const tc__dwconv_f32_plane *p, const float *const *rows,
                           int64_t col_of_b0, int64_t oy, int64_t b, int64_t end, int ky0, int ky1, const int K,
                           const int SW) {
    for (; b + 4 <= end; b += 4) blocks(g, p, rows, col_of_b0 + 8 * b * SW, oy, 8 * b, ky0, ky1, 4, K, SW);
    switch (end - b) {
    case 3: blocks(g, p, rows, col_of_b0 + 8 * b * SW, oy, 8 * b, ky0, ky1, 3, K, SW); break;
    case 2: blocks(g, p, rows, col_of_b0 + 8 * b * SW, oy, 8 * b, ky0, ky1, 2, K, SW); break;
    case 1: blocks(g, p, rows, col_of_b0 + 8 * b * SW, oy, 8 * b, ky0, ky1, 1, K, SW); break;
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
    const int64_t nb = (g->OW + 7) / 8;
    const float *rows[8];
    const int64_t len = tc__dwconv_f32_ring_len(g, 8);
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
    /* in place: interior blocks b have 8 b SW >= pl, 8 b SW - pl + 7 SW + K - 1 <= W - 1, 8 b + 8 <= OW */
    int64_t lo = (g->pl + 8 * SW - 1) / (8 * SW);
    const int64_t num = g->W - K + g->pl - 7 * SW;
    int64_t hi = num < 0 ? 0 : num / (8 * SW) + 1;
    if (hi > g->OW / 8) hi = g->OW / 8;
    if (lo > nb) lo = nb;
    if (hi < lo) hi = lo;
    for (int64_t oy = oy0; oy < oy1; oy++) {
        int ky0, ky1;
        const int64_t iy0 = kernel_rows(g, oy, &ky0, &ky1, K);
        for (int ky = ky0; ky < ky1; ky++) rows[ky] = p->x + (iy0 + ky) * g->W;
        int64_t b = 0;
        for (; b < lo; b++) edge_block(g, p, oy, 8 * b, iy0, ky0, ky1, K, SW);
        if (hi > lo) block_range(g, p, rows, -g->pl, oy, lo, hi, ky0, ky1, K, SW);
        for (b = hi; b < nb; b++) edge_block(g, p, oy, 8 * b, iy0, ky0, ky1, K, SW);
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

void tc__dwconv_f32_rows_avx2(const tc__dwconv_f32_geom *g, const tc__dwconv_f32_plane *p, int64_t oy0, int64_t oy1) {
    tc__dwconv_f32_ukernel f = NULL;
    switch (g->K) {
    case 3: f = g->sw == 1 ? rows_k3s1 : rows_k3s2; break;
    case 5: f = g->sw == 1 ? rows_k5s1 : rows_k5s2; break;
    case 7: f = g->sw == 1 ? rows_k7s1 : rows_k7s2; break;
    default: return; /* rejected by tc__dwconv_f32_supports */
    }
    f(g, p, oy0, oy1);
}
