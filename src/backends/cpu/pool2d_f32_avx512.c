/*
 * pool2d_f32_avx512.c - the AVX-512 MaxPool and AveragePool microkernel: one row kernel,
 * specialised for max / average and for stride 1, 2 or any, computing 16 output columns per
 * vector on NCHW planes.
 *
 * Column blocks whose windows lie inside the input row use plain loads (four blocks at a
 * time); stride 2 keeps the even or odd elements of 32 loaded inputs with a permute. Edge
 * blocks, and every block for strides above 2, load with masks, expand-loads or masked
 * gathers, so that lanes outside the row read as -inf (max) or 0 (average) and no address
 * outside the row is formed. Window rows outside the input are skipped. As in the reference,
 * the max ignores NaN unless a window holds only NaN (fixed up lane by lane, see
 * tc__maxpool_f32_neg_inf_fixup), and the average divides by the number of taps inside the
 * input (count_include_pad = 0) or inside the padded input (1).
 */
#include <immintrin.h>
#include <math.h>

#include "backends/cpu/pool_f32.h"

#define POOL_INLINE static inline __attribute__((always_inline))

/* Lanes l = row[ix0 + l] where 0 <= ix0 + l < W, fill elsewhere (any ix0). */
POOL_INLINE __m512 load_window(const float *row, int64_t W, int64_t ix0, __m512 fill) {
    int64_t lo = ix0 < 0 ? -ix0 : 0, hi = W - ix0;
    if (hi > 16) hi = 16;
    if (lo >= hi) return fill;
    __mmask16 m = (__mmask16)((((uint32_t)1 << hi) - 1) & ~(((uint32_t)1 << lo) - 1));
    if (ix0 >= 0) return _mm512_mask_loadu_ps(fill, m, row + ix0);
    return _mm512_mask_expandloadu_ps(fill, m, row);
}

/* Lanes l = row[ix0 + s * l] inside the row, fill elsewhere; S = 1, 2, or 0 for stride s. */
POOL_INLINE __m512 load_edge(const float *row, int64_t W, int64_t ix0, int64_t s, __m512 fill, const int S) {
    if (S == 1) return load_window(row, W, ix0, fill);
    if (S == 2) {
        const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
        return _mm512_permutex2var_ps(load_window(row, W, ix0, fill), even, load_window(row, W, ix0 + 16, fill));
    }
    const __m512i iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    __m512i idx =
        _mm512_add_epi32(_mm512_set1_epi32((int32_t)ix0), _mm512_mullo_epi32(iota, _mm512_set1_epi32((int32_t)s)));
    __mmask16 m = _mm512_cmpge_epi32_mask(idx, _mm512_setzero_si512()) &
                  _mm512_cmplt_epi32_mask(idx, _mm512_set1_epi32((int32_t)W));
    return _mm512_mask_i32gather_ps(fill, m, idx, row, 4);
}

/* max ignoring a NaN v (MAXPS returns its second operand when one is NaN), or the sum. */
POOL_INLINE __m512 combine(__m512 acc, __m512 v, const bool MAX) {
    return MAX ? _mm512_max_ps(v, acc) : _mm512_add_ps(acc, v);
}

/* Finishes and stores lanes [0, n) of the block at column ox0 of row oy (cnt_y: average's row taps). */
POOL_INLINE void finish(const tc__pool_f32_geom *g, const float *x, float *y, int64_t oy, int64_t ox0, __m512 acc,
                        int64_t n, int64_t cnt_y, const bool MAX) {
    __mmask16 m = n >= 16 ? (__mmask16)0xffff : (__mmask16)(((uint32_t)1 << n) - 1);
    float *yo = y + oy * g->OW + ox0;
    if (MAX) {
        __mmask16 ninf = _mm512_mask_cmp_ps_mask(m, acc, _mm512_set1_ps(-INFINITY), _CMP_EQ_OQ);
        _mm512_mask_storeu_ps(yo, m, acc);
        for (unsigned l = 0; ninf != 0; l++, ninf >>= 1)
            if (ninf & 1) yo[l] = tc__maxpool_f32_neg_inf_fixup(g, x, oy, ox0 + l);
        return;
    }
    const __m512i iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    __m512i ox = _mm512_add_epi32(_mm512_set1_epi32((int32_t)ox0), iota);
    __m512i start =
        _mm512_sub_epi32(_mm512_mullo_epi32(ox, _mm512_set1_epi32((int32_t)g->sw)), _mm512_set1_epi32((int32_t)g->pl));
    __m512i k0, k1;
    if (g->count_include_pad) {
        k0 = _mm512_setzero_si512();
        k1 = _mm512_sub_epi32(_mm512_set1_epi32((int32_t)(g->W + g->pr)), start);
    } else {
        k0 = _mm512_max_epi32(_mm512_setzero_si512(), _mm512_sub_epi32(_mm512_setzero_si512(), start));
        k1 = _mm512_sub_epi32(_mm512_set1_epi32((int32_t)g->W), start);
    }
    k1 = _mm512_min_epi32(k1, _mm512_set1_epi32((int32_t)g->kw));
    __m512i cnt = _mm512_max_epi32(_mm512_setzero_si512(), _mm512_sub_epi32(k1, k0));
    __m512 div = _mm512_mul_ps(_mm512_cvtepi32_ps(cnt), _mm512_set1_ps((float)cnt_y));
    _mm512_mask_storeu_ps(yo, m, _mm512_div_ps(acc, div));
}

/* NB interior blocks (taps all inside the row) at column ox0 of row oy, window rows [ky0, ky1). */
POOL_INLINE void interior_blocks(const tc__pool_f32_geom *g, const float *x, float *y, int64_t oy, int64_t ox0,
                                 int64_t iy0, int64_t ky0, int64_t ky1, int64_t cnt_y, const int NB, const bool MAX,
                                 const int S) {
    const __m512 fill = _mm512_set1_ps(MAX ? -INFINITY : 0.0f);
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    const int64_t kw = g->kw;
    __m512 acc[4];
    for (int j = 0; j < NB; j++) acc[j] = fill;
    for (int64_t ky = ky0; ky < ky1; ky++) {
        const float *r = x + (iy0 + ky) * g->W + ox0 * S - g->pl;
        if (S == 1) {
            for (int64_t kx = 0; kx < kw; kx++)
                for (int j = 0; j < NB; j++) acc[j] = combine(acc[j], _mm512_loadu_ps(r + kx + 16 * j), MAX);
            continue;
        }
        for (int64_t kx = 0; kx < kw; kx += 2)
            for (int j = 0; j < NB; j++) {
                const float *q = r + kx + 32 * j;
                __m512 lo = _mm512_loadu_ps(q);
                if (kx + 1 < kw) {
                    __m512 hi = _mm512_loadu_ps(q + 16);
                    acc[j] = combine(acc[j], _mm512_permutex2var_ps(lo, even, hi), MAX);
                    acc[j] = combine(acc[j], _mm512_permutex2var_ps(lo, odd, hi), MAX);
                } else { /* the last tap needs inputs up to q[30] only */
                    __m512 hi = _mm512_maskz_loadu_ps((__mmask16)0x7fff, q + 16);
                    acc[j] = combine(acc[j], _mm512_permutex2var_ps(lo, even, hi), MAX);
                }
            }
    }
    for (int j = 0; j < NB; j++) finish(g, x, y, oy, ox0 + 16 * j, acc[j], 16, cnt_y, MAX);
}

/* One edge block at column ox0 of row oy. */
POOL_INLINE void edge_block(const tc__pool_f32_geom *g, const float *x, float *y, int64_t oy, int64_t ox0, int64_t iy0,
                            int64_t ky0, int64_t ky1, int64_t cnt_y, const bool MAX, const int S) {
    const __m512 fill = _mm512_set1_ps(MAX ? -INFINITY : 0.0f);
    const int64_t ix0 = ox0 * g->sw - g->pl;
    __m512 acc = fill;
    for (int64_t ky = ky0; ky < ky1; ky++) {
        const float *r = x + (iy0 + ky) * g->W;
        for (int64_t kx = 0; kx < g->kw; kx++) acc = combine(acc, load_edge(r, g->W, ix0 + kx, g->sw, fill, S), MAX);
    }
    int64_t n = g->OW - ox0;
    finish(g, x, y, oy, ox0, acc, n > 16 ? 16 : n, cnt_y, MAX);
}

POOL_INLINE void rows_impl(const tc__pool_f32_geom *g, const float *x, float *y, int64_t oy0, int64_t oy1,
                           const bool MAX, const int S) {
    const int64_t nb = (g->OW + 15) / 16;
    int64_t lo = nb, hi = nb; /* interior blocks [lo, hi); none for the generic stride */
    if (S != 0) tc__pool_f32_interior(g, 16, S, &lo, &hi);
    for (int64_t oy = oy0; oy < oy1; oy++) {
        int64_t iy0, ky0, ky1, cnt_y;
        tc__pool_f32_window_rows(g, oy, &iy0, &ky0, &ky1, &cnt_y);
        int64_t b = 0;
        for (; b < lo; b++) edge_block(g, x, y, oy, 16 * b, iy0, ky0, ky1, cnt_y, MAX, S);
        for (; b + 4 <= hi; b += 4) interior_blocks(g, x, y, oy, 16 * b, iy0, ky0, ky1, cnt_y, 4, MAX, S);
        for (; b < hi; b++) interior_blocks(g, x, y, oy, 16 * b, iy0, ky0, ky1, cnt_y, 1, MAX, S);
        for (; b < nb; b++) edge_block(g, x, y, oy, 16 * b, iy0, ky0, ky1, cnt_y, MAX, S);
    }
}

typedef const tc__pool_f32_geom *geom_t;
static void max_s1(geom_t g, const float *x, float *y, int64_t a, int64_t b) { rows_impl(g, x, y, a, b, true, 1); }
static void max_s2(geom_t g, const float *x, float *y, int64_t a, int64_t b) { rows_impl(g, x, y, a, b, true, 2); }
static void max_sn(geom_t g, const float *x, float *y, int64_t a, int64_t b) { rows_impl(g, x, y, a, b, true, 0); }
static void avg_s1(geom_t g, const float *x, float *y, int64_t a, int64_t b) { rows_impl(g, x, y, a, b, false, 1); }
static void avg_s2(geom_t g, const float *x, float *y, int64_t a, int64_t b) { rows_impl(g, x, y, a, b, false, 2); }
static void avg_sn(geom_t g, const float *x, float *y, int64_t a, int64_t b) { rows_impl(g, x, y, a, b, false, 0); }

void tc__maxpool_f32_rows_avx512(const tc__pool_f32_geom *g, const float *x, float *y, int64_t oy0, int64_t oy1) {
    (g->sw == 1 ? max_s1 : g->sw == 2 ? max_s2 : max_sn)(g, x, y, oy0, oy1);
}

void tc__avgpool_f32_rows_avx512(const tc__pool_f32_geom *g, const float *x, float *y, int64_t oy0, int64_t oy1) {
    (g->sw == 1 ? avg_s1 : g->sw == 2 ? avg_s2 : avg_sn)(g, x, y, oy0, oy1);
}
