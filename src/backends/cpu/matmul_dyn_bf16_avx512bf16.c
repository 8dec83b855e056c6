/*
 * matmul_dyn_bf16_avx512bf16.c - the BF16 MatMul of matmul_dyn_bf16.h on AVX512-BF16: the conversion of A's rows and
 * the packing of B (contiguous loads where the rows of A, or of B, are contiguous, gathers otherwise), the vdpbf16ps
 * tiles and the threaded driver (each thread a range of (batch matrix, strip) tasks; it packs a batch matrix's B once
 * for its consecutive strips).
 */
#include <immintrin.h>
#include "core/thread_pool.h"
#include <stdint.h>
#include <string.h>

#include "backends/cpu/lowp_tile.h"
#include "backends/cpu/matmul_dyn_bf16.h"

#define MMB_MR 6 /* rows per tile */
#define MMB_NB 4 /* blocks of 16 columns per tile */

static size_t kp_of(const tc__mm_geom *g) { return (g->k + 1) / 2; }
static size_t up64(size_t n) { return (n + 63) / 64 * 64; }
static size_t a_bytes(const tc__mm_geom *g) { return up64(TC__MMB_STRIP * kp_of(g) * 4); }
static size_t b_bytes(const tc__mm_geom *g) { return up64((g->n + 15) / 16 * kp_of(g) * 64); }

size_t tc__mmb_slot_bytes(const tc__mm_geom *g) { return a_bytes(g) + b_bytes(g); }

static inline __mmask16 mask_of(size_t left) {
    return left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
}

/* 16 pairs (x[j], y[j]) of BF16 values as 32-bit words, from 16 floats each. */
static inline __m512i pairs_of(__m512 x, __m512 y) {
    const __m512i idx = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6, 21,
                                         5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    return _mm512_permutexvar_epi16(idx, (__m512i)_mm512_cvtne2ps_pbh(y, x)); /* y in the upper half */
}

/* 16 floats of B's row r from column j (n columns), 0 past them: contiguous, or at stride cs (a gather). */
static inline __m512 load16(const float *row, size_t j, size_t n, size_t cs, __m512i lanes) {
    const __mmask16 m = mask_of(n - j);
    if (cs == 1) return _mm512_maskz_loadu_ps(m, row + j);
    return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, lanes, row + j * cs, 4);
}

/* r[i] word j to r[j] word i (16 x 16 32-bit words): pairs in 128-bit lanes, then quads, then the 4 x 4 lanes. */
static inline void transpose16(__m512i r[16]) {
    __m512i t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    __m512i u[16]; /* u[4 q + c]: words 4 L + c of rows 4 q .. 4 q + 3 in lane L */
    for (int q = 0; q < 4; q++) {
        u[4 * q] = _mm512_unpacklo_epi64(t[4 * q], t[4 * q + 2]);
        u[4 * q + 1] = _mm512_unpackhi_epi64(t[4 * q], t[4 * q + 2]);
        u[4 * q + 2] = _mm512_unpacklo_epi64(t[4 * q + 1], t[4 * q + 3]);
        u[4 * q + 3] = _mm512_unpackhi_epi64(t[4 * q + 1], t[4 * q + 3]);
    }
    for (int c = 0; c < 4; c++) {
        const __m512i v0 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x44), v1 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xee);
        const __m512i v2 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x44);
        const __m512i v3 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xee);
        r[c] = _mm512_shuffle_i32x4(v0, v2, 0x88);
        r[4 + c] = _mm512_shuffle_i32x4(v0, v2, 0xdd);
        r[8 + c] = _mm512_shuffle_i32x4(v1, v3, 0x88);
        r[12 + c] = _mm512_shuffle_i32x4(v1, v3, 0xdd);
    }
}

/* B with contiguous columns (rs 1: K^T's): per block of 16 columns and 16 pairs, each column's 32 values converted in
 * order (word q: pair q), then transposed into the packed words. Gathers (16 strided loads per vector) made the
 * packing of attention's K^T cost more than its products. */
static void pack_b_columns(const tc__mm_geom *g, const float *b, uint32_t *pk) {
    const size_t k = g->k, n = g->n, kp = kp_of(g), cs = g->cs_b;
    for (size_t jb = 0; jb * 16 < n; jb++)
        for (size_t p0 = 0; p0 < kp; p0 += 16) {
            __m512i r[16];
            const size_t left = k - 2 * p0; /* >= 1 */
            const __mmask16 m0 = mask_of(left), m1 = left > 16 ? mask_of(left - 16) : 0;
            for (size_t jj = 0; jj < 16; jj++) {
                const size_t j = jb * 16 + jj;
                if (j >= n) {
                    r[jj] = _mm512_setzero_si512();
                    continue;
                }
                const float *col = b + j * cs + 2 * p0;
                r[jj] = (__m512i)_mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(m1, col + 16), _mm512_maskz_loadu_ps(m0, col));
            }
            transpose16(r);
            const size_t words = kp - p0 < 16 ? kp - p0 : 16;
            for (size_t q = 0; q < words; q++) _mm512_storeu_si512(pk + (jb * kp + p0 + q) * 16, r[q]);
        }
}

/* B (k x n at b, B(p, j) = b[p * rs + j * cs]) into the packed blocks: word p of block jb at pk + (jb * kp + p) * 16. */
static void pack_b(const tc__mm_geom *g, const float *b, uint32_t *pk) {
    if (g->rs_b == 1 && g->cs_b != 1) {
        pack_b_columns(g, b, pk);
        return;
    }
    const size_t k = g->k, n = g->n, kp = kp_of(g), rs = g->rs_b, cs = g->cs_b;
    const __m512i lanes = tc__lowp_lanes(cs); /* the gathers' element offsets */
    for (size_t jb = 0; jb * 16 < n; jb++)
        for (size_t p = 0; p < kp; p++) {
            const __m512 x = load16(b + 2 * p * rs, jb * 16, n, cs, lanes);
            const __m512 y = 2 * p + 1 < k ? load16(b + (2 * p + 1) * rs, jb * 16, n, cs, lanes) : _mm512_setzero_ps();
            _mm512_storeu_si512(pk + (jb * kp + p) * 16, pairs_of(x, y));
        }
}

/* Rows [i0, i0 + rows) of A (A(i, p) = a[i * rs + p * cs]) as BF16 rows of 2 kp values (an odd K's last one 0). */
static void convert_a(const tc__mm_geom *g, const float *a, size_t i0, size_t rows, uint16_t *xa) {
    const size_t k = g->k, kp = kp_of(g), rs = g->rs_a, cs = g->cs_a;
    const __m512i lanes = tc__lowp_lanes(cs); /* the gathers' element offsets */
    for (size_t i = 0; i < rows; i++) {
        const float *src = a + (i0 + i) * rs;
        uint16_t *dst = xa + i * 2 * kp;
        for (size_t p = 0; p < 2 * kp; p += 32) {
            const __m512 x = load16(src, p, k, cs, lanes);
            const __m512 y = p + 16 < k ? load16(src, p + 16, k, cs, lanes) : _mm512_setzero_ps();
            const __m512i h = (__m512i)_mm512_cvtne2ps_pbh(y, x);
            const size_t left = 2 * kp - p;
            _mm512_mask_storeu_epi16(dst + p, left >= 32 ? ~(__mmask32)0 : (__mmask32)((1u << left) - 1), h);
        }
    }
}

/* MR rows (xa's rows i0..) x NB blocks from jb (C at c, row stride ldc, n columns), every pair of K. */
static inline __attribute__((always_inline)) void mmb_tile(const uint16_t *xa, size_t kp, const uint32_t *pk, size_t jb,
                                                           float *c, size_t ldc, size_t n, float alpha, const int MR,
                                                           const int NB) {
    __m512 acc[MMB_MR][MMB_NB];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int b = 0; b < NB; b++) acc[i][b] = _mm512_setzero_ps();
    const uint32_t *w = pk + jb * kp * 16;
    for (size_t p = 0; p < kp; p++, w += 16) {
        __m512bh wv[MMB_NB];
#pragma GCC unroll 4
        for (int b = 0; b < NB; b++) wv[b] = (__m512bh)_mm512_loadu_si512(w + (size_t)b * kp * 16);
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) {
            int32_t pair;
            memcpy(&pair, xa + ((size_t)i * kp + p) * 2, sizeof pair);
            const __m512bh x = (__m512bh)_mm512_set1_epi32(pair);
#pragma GCC unroll 4
            for (int b = 0; b < NB; b++) acc[i][b] = _mm512_dpbf16_ps(acc[i][b], x, wv[b]);
        }
    }
    const __m512 s = _mm512_set1_ps(alpha);
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int b = 0; b < NB; b++) {
            const size_t j = (jb + (size_t)b) * 16;
            _mm512_mask_storeu_ps(c + (size_t)i * ldc + j, mask_of(n - j), _mm512_mul_ps(acc[i][b], s));
        }
}

#define MMB_FN(MR, NB)                                                                                                \
    static void mmb_tile_##MR##x##NB(const uint16_t *xa, size_t kp, const uint32_t *pk, size_t jb, float *c,        \
                                     size_t ldc, size_t n, float alpha) {                                             \
        mmb_tile(xa, kp, pk, jb, c, ldc, n, alpha, MR, NB);                                                           \
    }
#define MMB_FNS(NB) MMB_FN(1, NB) MMB_FN(2, NB) MMB_FN(3, NB) MMB_FN(4, NB) MMB_FN(5, NB) MMB_FN(6, NB)
MMB_FNS(1)
MMB_FNS(2)
MMB_FNS(3)
MMB_FNS(4)

typedef void (*mmb_tile_fn)(const uint16_t *, size_t, const uint32_t *, size_t, float *, size_t, size_t, float);
#define MMB_ROW(NB) {mmb_tile_1x##NB, mmb_tile_2x##NB, mmb_tile_3x##NB, mmb_tile_4x##NB, mmb_tile_5x##NB, mmb_tile_6x##NB}
static const mmb_tile_fn mmb_tiles[MMB_NB][MMB_MR] = {MMB_ROW(1), MMB_ROW(2), MMB_ROW(3), MMB_ROW(4)};

typedef struct mmb_job {
    const tc__mm_geom *g;
    const float *a, *b;
    float *y;
    size_t strips, tasks, slots;
    unsigned char *scratch;
} mmb_job;

/* Batch matrix t's offsets of A, B and Y (elements). */
static void offsets_of(const tc__mm_geom *g, size_t t, size_t *oa, size_t *ob, size_t *oc) {
    *oa = *ob = *oc = 0;
    for (int d = g->nb - 1; d >= 0; d--) {
        const size_t i = t % g->batch[d];
        t /= g->batch[d];
        *oa += i * g->a_bs[d], *ob += i * g->b_bs[d], *oc += i * g->c_bs[d];
    }
}

/* Slot s: its range of (batch matrix, strip) tasks; B packed once per batch matrix it meets. */
static void mmb_slot(void *arg, size_t s) {
    const mmb_job *j = arg;
    const tc__mm_geom *g = j->g;
    const size_t kp = kp_of(g), first = s * j->tasks / j->slots, end = (s + 1) * j->tasks / j->slots;
    unsigned char *mem = j->scratch + s * tc__mmb_slot_bytes(g);
    uint16_t *xa = (uint16_t *)mem;
    uint32_t *pk = (uint32_t *)(mem + a_bytes(g));
    size_t packed = SIZE_MAX;
    for (size_t task = first; task < end; task++) {
        const size_t t = task / j->strips, strip = task % j->strips;
        size_t oa, ob, oc;
        offsets_of(g, t, &oa, &ob, &oc);
        if (packed != t) pack_b(g, j->b + ob, pk), packed = t;
        const size_t i0 = strip * TC__MMB_STRIP, rows = g->m - i0 < TC__MMB_STRIP ? g->m - i0 : TC__MMB_STRIP;
        convert_a(g, j->a + oa, i0, rows, xa);
        const size_t nblocks = (g->n + 15) / 16;
        for (size_t jb = 0; jb < nblocks; jb += MMB_NB) {
            const int nb = (int)(nblocks - jb < MMB_NB ? nblocks - jb : MMB_NB);
            size_t left = (rows + MMB_MR - 1) / MMB_MR; /* tiles of equal size */
            for (size_t i = 0; i < rows; left--) {
                const int mr = (int)((rows - i + left - 1) / left);
                mmb_tiles[nb - 1][mr - 1](xa + i * 2 * kp, kp, pk, jb, j->y + oc + (i0 + i) * g->ldc,
                                          g->ldc, g->n, g->alpha);
                i += (size_t)mr;
            }
        }
    }
}

void tc__mmb_run_avx512bf16(const tc__mm_geom *g, const float *a, const float *b, float *y, void *pool, size_t slots,
                            unsigned char *scratch) {
    if (g->m == 0 || g->n == 0 || g->n_batch == 0) return;
    mmb_job j = {g, a, b, y, (g->m + TC__MMB_STRIP - 1) / TC__MMB_STRIP, 0, 0, scratch};
    j.tasks = g->n_batch * j.strips;
    j.slots = slots < j.tasks ? slots : j.tasks;
    if (j.slots <= 1 || pool == NULL) {
        j.slots = 1;
        mmb_slot(&j, 0);
    } else {
        tc__pool_parallelize_1d((tc__pool_t)pool, mmb_slot, &j, j.slots, 0);
    }
}
