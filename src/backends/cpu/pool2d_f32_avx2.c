/*
 * pool2d_f32_avx2.c - the AVX2 MaxPool and AveragePool microkernel: one row kernel,
 * specialised for max / average and for stride 1, 2 or any, computing 8 output columns per
 * vector on NCHW planes. Same structure and semantics as pool2d_f32_avx512.c: plain loads on
 * interior blocks, masked loads (lane-permuted left of column 0) or masked gathers on edge
 * blocks, lanes outside the row reading as -inf (max) or 0 (average).
 */
#include <immintrin.h>
#include <math.h>

#include "backends/cpu/pool_f32.h"

#define POOL_INLINE static inline __attribute__((always_inline))

/* Integer lane mask: lanes l < n (n <= 8; none for n <= 0). */
POOL_INLINE __m256i lanes_below(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Lanes l = row[ix0 + l] where 0 <= ix0 + l < W, fill elsewhere (any ix0). */
POOL_INLINE __m256 load_window(const float *row, int64_t W, int64_t ix0, __m256 fill) {
    int64_t lo = ix0 < 0 ? -ix0 : 0, hi = W - ix0;
    if (hi > 8) hi = 8;
    if (lo >= hi) return fill;
    if (ix0 >= 0) {
        if (hi == 8) return _mm256_loadu_ps(row + ix0);
        __m256i m = lanes_below(hi);
        return _mm256_blendv_ps(fill, _mm256_maskload_ps(row + ix0, m), _mm256_castsi256_ps(m));
    }
    __m256 v = _mm256_maskload_ps(row, lanes_below(hi - lo)); /* row[0 .. hi - lo) into lanes lo .. hi */
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256 s = _mm256_permutevar8x32_ps(v, _mm256_sub_epi32(iota, _mm256_set1_epi32((int32_t)lo)));
    __m256i valid = _mm256_andnot_si256(lanes_below(lo), lanes_below(hi));
    return _mm256_blendv_ps(fill, s, _mm256_castsi256_ps(valid));
}

/* The even / odd elements of the 16 floats a:b. */
POOL_INLINE __m256 even8(__m256 a, __m256 b) {
    __m256 t = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), _MM_SHUFFLE(3, 1, 2, 0)));
}
POOL_INLINE __m256 odd8(__m256 a, __m256 b) {
    __m256 t = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), _MM_SHUFFLE(3, 1, 2, 0)));
}

/* Lanes l = row[ix0 + s * l] inside the row, fill elsewhere; S = 1, 2, or 0 for stride s. */
POOL_INLINE __m256 load_edge(const float *row, int64_t W, int64_t ix0, int64_t s, __m256 fill, const int S) {
    if (S == 1) return load_window(row, W, ix0, fill);
    if (S == 2) return even8(load_window(row, W, ix0, fill), load_window(row, W, ix0 + 8, fill));
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i idx =
        _mm256_add_epi32(_mm256_set1_epi32((int32_t)ix0), _mm256_mullo_epi32(iota, _mm256_set1_epi32((int32_t)s)));
    __m256i valid = _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_setzero_si256(), idx),
                                        _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)W), idx));
    return _mm256_mask_i32gather_ps(fill, row, idx, _mm256_castsi256_ps(valid), 4);
}

/* max ignoring a NaN v (MAXPS returns its second operand when one is NaN), or the sum. */
POOL_INLINE __m256 combine(__m256 acc, __m256 v, const bool MAX) {
    return MAX ? _mm256_max_ps(v, acc) : _mm256_add_ps(acc, v);
}

/* Finishes and stores lanes [0, n) of the block at column ox0 of row oy (cnt_y: average's row taps). */
POOL_INLINE void finish(const tc__pool_f32_geom *g, const float *x, float *y, int64_t oy, int64_t ox0, __m256 acc,
                        int64_t n, int64_t cnt_y, const bool MAX) {
    float *yo = y + oy * g->OW + ox0;
    if (!MAX) {
        const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        __m256i ox = _mm256_add_epi32(_mm256_set1_epi32((int32_t)ox0), iota);
        __m256i start = _mm256_sub_epi32(_mm256_mullo_epi32(ox, _mm256_set1_epi32((int32_t)g->sw)),
                                         _mm256_set1_epi32((int32_t)g->pl));
        __m256i k0, k1;
        if (g->count_include_pad) {
            k0 = _mm256_setzero_si256();
            k1 = _mm256_sub_epi32(_mm256_set1_epi32((int32_t)(g->W + g->pr)), start);
        } else {
            k0 = _mm256_max_epi32(_mm256_setzero_si256(), _mm256_sub_epi32(_mm256_setzero_si256(), start));
            k1 = _mm256_sub_epi32(_mm256_set1_epi32((int32_t)g->W), start);
        }
        k1 = _mm256_min_epi32(k1, _mm256_set1_epi32((int32_t)g->kw));
        __m256i cnt = _mm256_max_epi32(_mm256_setzero_si256(), _mm256_sub_epi32(k1, k0));
        acc = _mm256_div_ps(acc, _mm256_mul_ps(_mm256_cvtepi32_ps(cnt), _mm256_set1_ps((float)cnt_y)));
    }
    if (n >= 8) _mm256_storeu_ps(yo, acc);
    else _mm256_maskstore_ps(yo, lanes_below(n), acc);
    if (MAX) {
        unsigned ninf = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(acc, _mm256_set1_ps(-INFINITY), _CMP_EQ_OQ));
        if (n < 8) ninf &= (1u << n) - 1;
        for (unsigned l = 0; ninf != 0; l++, ninf >>= 1)
            if (ninf & 1) yo[l] = tc__maxpool_f32_neg_inf_fixup(g, x, oy, ox0 + l);
    }
}

/* NB interior blocks (taps all inside the row) at column ox0 of row oy, window rows [ky0, ky1). */
POOL_INLINE void interior_blocks(const tc__pool_f32_geom *g, const float *x, float *y, int64_t oy, int64_t ox0,
                                 int64_t iy0, int64_t ky0, int64_t ky1, int64_t cnt_y, const int NB, const bool MAX,
                                 const int S) {
    const __m256 fill = _mm256_set1_ps(MAX ? -INFINITY : 0.0f);
    const int64_t kw = g->kw;
    __m256 acc[4];
    for (int j = 0; j < NB; j++) acc[j] = fill;
    for (int64_t ky = ky0; ky < ky1; ky++) {
        const float *r = x + (iy0 + ky) * g->W + ox0 * S - g->pl;
        if (S == 1) {
            for (int64_t kx = 0; kx < kw; kx++)
                for (int j = 0; j < NB; j++) acc[j] = combine(acc[j], _mm256_loadu_ps(r + kx + 8 * j), MAX);
            continue;
        }
        for (int64_t kx = 0; kx < kw; kx += 2)
            for (int j = 0; j < NB; j++) {
                const float *q = r + kx + 16 * j;
                __m256 lo = _mm256_loadu_ps(q);
                if (kx + 1 < kw) {
                    __m256 hi = _mm256_loadu_ps(q + 8);
                    acc[j] = combine(acc[j], even8(lo, hi), MAX);
                    acc[j] = combine(acc[j], odd8(lo, hi), MAX);
                } else { /* the last tap needs inputs up to q[14] only */
                    __m256 hi = _mm256_maskload_ps(q + 8, lanes_below(7));
                    acc[j] = combine(acc[j], even8(lo, hi), MAX);
                }
            }
    }
    for (int j = 0; j < NB; j++) finish(g, x, y, oy, ox0 + 8 * j, acc[j], 8, cnt_y, MAX);
}

/* One edge block at column ox0 of row oy. */
POOL_INLINE void edge_block(const tc__pool_f32_geom *g, const float *x, float *y, int64_t oy, int64_t ox0, int64_t iy0,
                            int64_t ky0, int64_t ky1, int64_t cnt_y, const bool MAX, const int S) {
    const __m256 fill = _mm256_set1_ps(MAX ? -INFINITY : 0.0f);
    const int64_t ix0 = ox0 * g->sw - g->pl;
    __m256 acc = fill;
    for (int64_t ky = ky0; ky < ky1; ky++) {
        const float *r = x + (iy0 + ky) * g->W;
        for (int64_t kx = 0; kx < g->kw; kx++) acc = combine(acc, load_edge(r, g->W, ix0 + kx, g->sw, fill, S), MAX);
    }
    int64_t n = g->OW - ox0;
    finish(g, x, y, oy, ox0, acc, n > 8 ? 8 : n, cnt_y, MAX);
}

POOL_INLINE void rows_impl(const tc__pool_f32_geom *g, const float *x, float *y, int64_t oy0, int64_t oy1,
                           const bool MAX, const int S) {
    const int64_t nb = (g->OW + 7) / 8;
    int64_t lo = nb, hi = nb; /* interior blocks [lo, hi); none for the generic stride */
    if (S != 0) tc__pool_f32_interior(g, 8, S, &lo, &hi);
    for (int64_t oy = oy0; oy < oy1; oy++) {
        int64_t iy0, ky0, ky1, cnt_y;
        tc__pool_f32_window_rows(g, oy, &iy0, &ky0, &ky1, &cnt_y);
        int64_t b = 0;
        for (; b < lo; b++) edge_block(g, x, y, oy, 8 * b, iy0, ky0, ky1, cnt_y, MAX, S);
        for (; b + 4 <= hi; b += 4) interior_blocks(g, x, y, oy, 8 * b, iy0, ky0, ky1, cnt_y, 4, MAX, S);
        for (; b < hi; b++) interior_blocks(g, x, y, oy, 8 * b, iy0, ky0, ky1, cnt_y, 1, MAX, S);
        for (; b < nb; b++) edge_block(g, x, y, oy, 8 * b, iy0, ky0, ky1, cnt_y, MAX, S);
    }
}

typedef const tc__pool_f32_geom *geom_t;
static void max_s1(geom_t g, const float *x, float *y, int64_t a, int64_t b) { rows_impl(g, x, y, a, b, true, 1); }
static void max_s2(geom_t g, const float *x, float *y, int64_t a, int64_t b) { rows_impl(g, x, y, a, b, true, 2); }
static void max_sn(geom_t g, const float *x, float *y, int64_t a, int64_t b) { rows_impl(g, x, y, a, b, true, 0); }
static void avg_s1(geom_t g, const float *x, float *y, int64_t a, int64_t b) { rows_impl(g, x, y, a, b, false, 1); }
static void avg_s2(geom_t g, const float *x, float *y, int64_t a, int64_t b) { rows_impl(g, x, y, a, b, false, 2); }
static void avg_sn(geom_t g, const float *x, float *y, int64_t a, int64_t b) { rows_impl(g, x, y, a, b, false, 0); }

void tc__maxpool_f32_rows_avx2(const tc__pool_f32_geom *g, const float *x, float *y, int64_t oy0, int64_t oy1) {
    (g->sw == 1 ? max_s1 : g->sw == 2 ? max_s2 : max_sn)(g, x, y, oy0, oy1);
}

void tc__avgpool_f32_rows_avx2(const tc__pool_f32_geom *g, const float *x, float *y, int64_t oy0, int64_t oy1) {
    (g->sw == 1 ? avg_s1 : g->sw == 2 ? avg_s2 : avg_sn)(g, x, y, oy0, oy1);
}
