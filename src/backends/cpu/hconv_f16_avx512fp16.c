/*
 * hconv_f16_avx512fp16.c - the FP16 operator of hconv.h on AVX512-FP16: conversion of X into the
 * padded channels-last FP16 image, the vfmadd231ph microkernels (MR output pixels x NB blocks of 16
 * output channels x 2 channel parities in FP16 accumulators, flushed into FP32 partial sums every
 * TC__HCONV_CHUNK multiply-adds), the FP32 epilogue (parities added, bias, residual, activation) and
 * the threaded driver.
 */
#include <immintrin.h>
#include <string.h>

#include "backends/cpu/hconv_job.h"

typedef tc__hconv_job h_job;

#define H_ROUND (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* Converts padded row r of image n: the border is 0. */
static void h_convert_row(void *arg, size_t task) {
    const h_job *j = arg;
    const tc__lowp_shape *s = &j->g->s;
    const size_t n = task / s->hp, r = task % s->hp, cp = j->g->cp;
    _Float16 *row = (_Float16 *)j->xh + (n * s->hp + r) * s->wp * cp;
    if (r < s->pt || r >= s->pt + s->ih) {
        memset(row, 0, s->wp * cp * sizeof *row);
        return;
    }
    const size_t h = r - s->pt;
    memset(row, 0, s->pl * cp * sizeof *row);
    memset(row + (s->pl + s->iw) * cp, 0, (s->wp - s->pl - s->iw) * cp * sizeof *row);
    _Float16 *dst = row + s->pl * cp;
    if (s->in_layout == TC__LOWP_NCHW16C) {
        const size_t cb_n = s->cin / 16;
        for (size_t cb = 0; cb < cb_n; cb++) {
            const float *src = j->x + ((n * cb_n + cb) * s->ih + h) * s->iw * 16;
            for (size_t w = 0; w < s->iw; w++)
                _mm256_storeu_si256((__m256i *)(dst + w * cp + cb * 16), _mm512_cvtps_ph(_mm512_loadu_ps(src + w * 16), H_ROUND));
        }
    } else if (s->in_layout == TC__LOWP_ROWS) {
        const size_t c16 = s->cin / 16 * 16;
        const __mmask16 tail = (__mmask16)((1u << (s->cin - c16)) - 1);
        for (size_t w = 0; w < s->iw; w++) {
            const float *src = j->x + ((n * s->ih + h) * s->iw + w) * s->cin;
            _Float16 *o = dst + w * cp;
            for (size_t c = 0; c < c16; c += 16)
                _mm256_storeu_si256((__m256i *)(o + c), _mm512_cvtps_ph(_mm512_loadu_ps(src + c), H_ROUND));
            if (tail) _mm256_mask_storeu_epi16(o + c16, tail, _mm512_cvtps_ph(_mm512_maskz_loadu_ps(tail, src + c16), H_ROUND));
            if (cp > s->cin) o[s->cin] = (_Float16)0.0f;
        }
    } else {
        const size_t plane = s->ih * s->iw;
        for (size_t c = 0; c < s->cin; c++) {
            const float *src = j->x + (n * s->cin + c) * plane + h * s->iw;
            for (size_t w = 0; w < s->iw; w++) dst[w * cp + c] = (_Float16)src[w];
        }
        if (cp > s->cin)
            for (size_t w = 0; w < s->iw; w++) dst[w * cp + s->cin] = (_Float16)0.0f;
    }
}

/* The 16 FP32 values of half h (0: lanes 0-15) of an FP16 register. */
static inline __m512 h_half(__m512h v, int h) {
    const __m512i b = _mm512_castph_si512(v);
    return _mm512_cvtph_ps(h ? _mm512_extracti64x4_epi64(b, 1) : _mm512_castsi512_si256(b));
}

/* The epilogue of pixel i, block b (tc__lowp_value: the residual may be an FP16 image): stored as FP32, or (the chain)
 * converted and stored into the next layer's image as its own conversion pass would. */
static inline __attribute__((always_inline)) void h_out(const h_job *j, const tc__lowp_out *o, int i, int b, __m512 v,
                                                        __mmask16 mask, __m512i lanes) {
    if (j->ych == NULL) {
        tc__lowp_store(&j->act, j->bias, o, i, b, v, mask, lanes, false);
        return;
    }
    v = tc__lowp_value(&j->act, j->bias, o, i, b, v, mask, lanes, false);
    _mm256_mask_storeu_epi16(j->ych + o->qoff[i] + (size_t)b * 16, mask, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

/* Block b of pixel i: the two parities' partial sums (lanes 2k, 2k + 1 of lo:hi hold channel k) added, then
 * the epilogue. */
static inline __attribute__((always_inline)) void h_store(const h_job *j, const tc__lowp_out *o, int i, int b,
                                                          __m512 lo, __m512 hi, __mmask16 mask, __m512i lanes) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    const __m512 v = _mm512_add_ps(_mm512_permutex2var_ps(lo, even, hi), _mm512_permutex2var_ps(lo, odd, hi));
    h_out(j, o, i, b, v, mask, lanes);
}

/*
 * The microkernel: MR pixels (at x0 + xoff[i]) x NB blocks of 16 output channels (weights w0 + b * wbs),
 * accumulated over every tap and pair of input channels, in FP16 chunks summed into FP32, then stored.
 */
static inline __attribute__((always_inline)) void h_tile(const h_job *j, const _Float16 *x0, const size_t *xoff,
                                                         const _Float16 *w0, size_t wbs, const tc__lowp_out *o,
                                                         __mmask16 last_mask, const int MR, const int NB) {
    const size_t runs = j->runs, c2 = j->run_pairs, run_step = j->run_step;
    __m512h acc[TC__LOWP_MR][TC__LOWP_GROUP_BLOCKS];
    __m512 part[TC__LOWP_MR][TC__LOWP_GROUP_BLOCKS][2];
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int b = 0; b < NB; b++) {
            acc[i][b] = _mm512_setzero_ph();
            part[i][b][0] = part[i][b][1] = _mm512_setzero_ps();
        }
    const _Float16 *wp = w0;
    size_t left = TC__HCONV_CHUNK;
    for (size_t t = 0; t < runs; t++) {
        const _Float16 *xt = x0 + j->tap_off[t * run_step];
        for (size_t p = 0; p < c2;) {
            const size_t n = c2 - p < left ? c2 - p : left;
            for (size_t e = 0; e < n; e++, p++, wp += 32) {
                __m512h wv[TC__LOWP_GROUP_BLOCKS];
#pragma GCC unroll 4
                for (int b = 0; b < NB; b++) wv[b] = _mm512_loadu_ph(wp + (size_t)b * wbs);
#pragma GCC unroll 12
                for (int i = 0; i < MR; i++) {
                    int32_t pair;
                    memcpy(&pair, xt + xoff[i] + 2 * p, sizeof pair);
                    const __m512h xb = _mm512_castsi512_ph(_mm512_set1_epi32(pair));
#pragma GCC unroll 4
                    for (int b = 0; b < NB; b++) acc[i][b] = _mm512_fmadd_ph(xb, wv[b], acc[i][b]);
                }
            }
            left -= n;
            if (left == 0 || (t + 1 == runs && p == c2)) {
#pragma GCC unroll 12
                for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
                    for (int b = 0; b < NB; b++) {
                        part[i][b][0] = _mm512_add_ps(part[i][b][0], h_half(acc[i][b], 0));
                        part[i][b][1] = _mm512_add_ps(part[i][b][1], h_half(acc[i][b], 1));
                        acc[i][b] = _mm512_setzero_ph();
                    }
                left = TC__HCONV_CHUNK;
            }
        }
    }
    const __m512i lanes = tc__lowp_lanes(o->ls);
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int b = 0; b < NB; b++)
            h_store(j, o, i, b, part[i][b][0], part[i][b][1], b == NB - 1 ? last_mask : (__mmask16)0xffff, lanes);
}

/* One instantiation per (MR, NB): the tile calls with constant sizes. */
#define H_FN(MR, NB)                                                                                                  \
    static void h_tile_##MR##x##NB(const h_job *j, const _Float16 *x0, const size_t *xoff, const _Float16 *w0,        \
                                   size_t wbs, const tc__lowp_out *o, __mmask16 m) {                                          \
        h_tile(j, x0, xoff, w0, wbs, o, m, MR, NB);                                                                     \
    }
#define H_FNS6(NB) H_FN(1, NB) H_FN(2, NB) H_FN(3, NB) H_FN(4, NB) H_FN(5, NB) H_FN(6, NB)
#define H_FNS12(NB) H_FNS6(NB) H_FN(7, NB) H_FN(8, NB) H_FN(9, NB) H_FN(10, NB) H_FN(11, NB) H_FN(12, NB)
H_FNS6(4)
H_FNS6(3)
H_FNS12(2)
H_FNS12(1)

typedef void (*h_tile_fn)(const h_job *, const _Float16 *, const size_t *, const _Float16 *, size_t, const tc__lowp_out *,
                          __mmask16);

#define H_ROW6(NB) {h_tile_1x##NB, h_tile_2x##NB, h_tile_3x##NB, h_tile_4x##NB, h_tile_5x##NB, h_tile_6x##NB}
#define H_ROW12(NB)                                                                                                   \
    {h_tile_1x##NB, h_tile_2x##NB, h_tile_3x##NB, h_tile_4x##NB, h_tile_5x##NB,  h_tile_6x##NB,                       \
     h_tile_7x##NB, h_tile_8x##NB, h_tile_9x##NB, h_tile_10x##NB, h_tile_11x##NB, h_tile_12x##NB}
static const h_tile_fn h_tiles_nb4[6] = H_ROW6(4), h_tiles_nb3[6] = H_ROW6(3);
static const h_tile_fn h_tiles_nb2[12] = H_ROW12(2), h_tiles_nb1[12] = H_ROW12(1);

/* The tile of lowp_tile.h's task loop: the (mr, nb) microkernel on the weights of block b0. */
static void h_tile_at(const void *job, int mr, int nb, size_t b0, const size_t *xoff, const tc__lowp_out *o,
                      __mmask16 last_mask) {
    const h_job *j = job;
    const size_t wbs = tc__hconv_block_halves(j->g); /* 16-bit values per block of 16 channels (cp even: no odd runs) */
    const h_tile_fn *tiles = nb == 4 ? h_tiles_nb4 : nb == 3 ? h_tiles_nb3 : nb == 2 ? h_tiles_nb2 : h_tiles_nb1;
    tiles[mr - 1](j, (const _Float16 *)j->xh, xoff, (const _Float16 *)j->w + b0 * wbs, wbs, o, last_mask);
}

static void h_compute(void *arg, size_t strip_task, size_t group) {
    const h_job *j = arg;
    tc__lowp_task(&j->grid, strip_task, group, j->y, j->res, h_tile_at, j);
}

tc_status tc__hconv_run_avx512fp16(const tc__kernel_ctx *ctx, const tc__hconv_geom *g) {
    return tc__hconv_job_run(ctx, g, h_convert_row, h_compute, "fp16");
}
