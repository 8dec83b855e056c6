/*
 * hconv_bf16_avx512bf16.c - the BF16 operator of hconv.h on AVX512-BF16: conversion of X into the padded
 * channels-last BF16 image (vcvtneps2bf16; the plain-layout path converts with tc__f32_to_bf16, which
 * differs only in keeping denormals, which vdpbf16ps flushes anyway), the vdpbf16ps microkernels (MR
 * output pixels x NB blocks of 16 output channels in FP32 accumulators, each lane adding the products
 * of a pair of input channels), the FP32 epilogue (bias, residual, activation) and the threaded driver.
 */
#include <immintrin.h>
#include <pthreadpool.h>
#include <string.h>

#include "backends/cpu/hconv.h"
#include "backends/cpu/vact_f32.h"
#include "backends/cpu/vact_f32_avx512.h"
#include "core/tensor.h"

/* Output pixels per task strip (of an image's pixels in row-major order, so a strip may span rows). */
#define B_STRIP 48
/* Blocks of 16 output channels per task (and per microkernel call at most). */
#define B_GROUP_BLOCKS 4
/* Output pixels per microkernel call at most (6 with 3 or 4 blocks). */
#define B_MR 12

typedef struct b_job {
    const tc__hconv_geom *g;
    const float *x;
    uint16_t *xh;
    const size_t *tap_off; /* element offset of each tap in the padded image */
    const uint16_t *w;
    const float *bias, *res;
    float *y;
    tc__vact act;
    size_t nblocks, groups, strips; /* blocks of 16 channels, task groups, strips per image */
} b_job;

/* Converts padded row r of image n: the border is 0. */
static void b_convert_row(void *arg, size_t task) {
    const b_job *j = arg;
    const tc__lowp_shape *s = &j->g->s;
    const size_t n = task / s->hp, r = task % s->hp, cp = j->g->cp;
    uint16_t *row = j->xh + (n * s->hp + r) * s->wp * cp;
    if (r < s->pt || r >= s->pt + s->ih) {
        memset(row, 0, s->wp * cp * sizeof *row);
        return;
    }
    const size_t h = r - s->pt;
    memset(row, 0, s->pl * cp * sizeof *row);
    memset(row + (s->pl + s->iw) * cp, 0, (s->wp - s->pl - s->iw) * cp * sizeof *row);
    uint16_t *dst = row + s->pl * cp;
    if (s->in_layout == TC__LOWP_NCHW16C) {
        const size_t cb_n = s->cin / 16;
        for (size_t cb = 0; cb < cb_n; cb++) {
            const float *src = j->x + ((n * cb_n + cb) * s->ih + h) * s->iw * 16;
            for (size_t w = 0; w < s->iw; w++)
                _mm256_storeu_si256((__m256i *)(dst + w * cp + cb * 16), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(src + w * 16)));
        }
    } else if (s->in_layout == TC__LOWP_ROWS) {
        const size_t c16 = s->cin / 16 * 16;
        const __mmask16 tail = (__mmask16)((1u << (s->cin - c16)) - 1);
        for (size_t w = 0; w < s->iw; w++) {
            const float *src = j->x + w * s->cin;
            uint16_t *o = dst + w * cp;
            for (size_t c = 0; c < c16; c += 16)
                _mm256_storeu_si256((__m256i *)(o + c), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(src + c)));
            if (tail) _mm256_mask_storeu_epi16(o + c16, tail, (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(tail, src + c16)));
            if (cp > s->cin) o[s->cin] = 0;
        }
    } else {
        const size_t plane = s->ih * s->iw;
        for (size_t c = 0; c < s->cin; c++) {
            const float *src = j->x + (n * s->cin + c) * plane + h * s->iw;
            for (size_t w = 0; w < s->iw; w++) dst[w * cp + c] = tc__f32_to_bf16(src[w]);
        }
        if (cp > s->cin)
            for (size_t w = 0; w < s->iw; w++) dst[w * cp + s->cin] = 0;
    }
}

/* Where output element (pixel i, block of 16 channels b, lane l) of a tile lives: y + i * ps + b * bs + l * ls. */
typedef struct b_out {
    float *y;
    const float *res;
    size_t ps, bs, ls;
    size_t oc0;
} b_out;

/* Block b of pixel i: bias, residual, activation, stored. */
static inline __attribute__((always_inline)) void b_store(const b_job *j, const b_out *o, int i, int b, __m512 v,
                                                          __mmask16 mask, __m512i lanes) {
    if (j->bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, j->bias + o->oc0 + (size_t)b * 16));
    const size_t off = (size_t)i * o->ps + (size_t)b * o->bs;
    if (o->ls == 1) {
        if (o->res) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, o->res + off));
        v = tc__vact_f32_avx512(v, &j->act);
        _mm512_mask_storeu_ps(o->y + off, mask, v);
    } else {
        if (o->res) v = _mm512_add_ps(v, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), mask, lanes, o->res + off, 4));
        v = tc__vact_f32_avx512(v, &j->act);
        _mm512_mask_i32scatter_ps(o->y + off, mask, lanes, v, 4);
    }
}

/*
 * The microkernel: MR pixels (at x0 + xoff[i]) x NB blocks of 16 output channels (weights w0 + b * wbs),
 * accumulated in FP32 over every tap and pair of input channels, then stored.
 */
static inline __attribute__((always_inline)) void b_tile(const b_job *j, const uint16_t *x0, const size_t *xoff,
                                                         const uint16_t *w0, size_t wbs, const b_out *o,
                                                         __mmask16 last_mask, const int MR, const int NB) {
    const tc__lowp_shape *s = &j->g->s;
    const size_t taps = s->kh * s->kw, c2 = j->g->cp / 2;
    __m512 acc[B_MR][B_GROUP_BLOCKS];
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int b = 0; b < NB; b++) acc[i][b] = _mm512_setzero_ps();
    const uint16_t *wp = w0;
    for (size_t t = 0; t < taps; t++) {
        const uint16_t *xt = x0 + j->tap_off[t];
        for (size_t p = 0; p < c2; p++, wp += 32) {
            __m512bh wv[B_GROUP_BLOCKS];
#pragma GCC unroll 4
            for (int b = 0; b < NB; b++) wv[b] = (__m512bh)_mm512_loadu_si512(wp + (size_t)b * wbs);
#pragma GCC unroll 12
            for (int i = 0; i < MR; i++) {
                int32_t pair;
                memcpy(&pair, xt + xoff[i] + 2 * p, sizeof pair);
                const __m512bh xb = (__m512bh)_mm512_set1_epi32(pair);
#pragma GCC unroll 4
                for (int b = 0; b < NB; b++) acc[i][b] = _mm512_dpbf16_ps(acc[i][b], xb, wv[b]);
            }
        }
    }
    const __m512i lanes = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                             _mm512_set1_epi32((int32_t)o->ls));
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int b = 0; b < NB; b++)
            b_store(j, o, i, b, acc[i][b], b == NB - 1 ? last_mask : (__mmask16)0xffff, lanes);
}

/* One instantiation per (MR, NB): the tile calls with constant sizes. */
#define B_FN(MR, NB)                                                                                                  \
    static void b_tile_##MR##x##NB(const b_job *j, const uint16_t *x0, const size_t *xoff, const uint16_t *w0,        \
                                   size_t wbs, const b_out *o, __mmask16 m) {                                          \
        b_tile(j, x0, xoff, w0, wbs, o, m, MR, NB);                                                                     \
    }
#define B_FNS6(NB) B_FN(1, NB) B_FN(2, NB) B_FN(3, NB) B_FN(4, NB) B_FN(5, NB) B_FN(6, NB)
#define B_FNS12(NB) B_FNS6(NB) B_FN(7, NB) B_FN(8, NB) B_FN(9, NB) B_FN(10, NB) B_FN(11, NB) B_FN(12, NB)
B_FNS6(4)
B_FNS6(3)
B_FNS12(2)
B_FNS12(1)

typedef void (*b_tile_fn)(const b_job *, const uint16_t *, const size_t *, const uint16_t *, size_t, const b_out *,
                          __mmask16);

#define B_ROW6(NB) {b_tile_1x##NB, b_tile_2x##NB, b_tile_3x##NB, b_tile_4x##NB, b_tile_5x##NB, b_tile_6x##NB}
#define B_ROW12(NB)                                                                                                   \
    {b_tile_1x##NB, b_tile_2x##NB, b_tile_3x##NB, b_tile_4x##NB, b_tile_5x##NB,  b_tile_6x##NB,                       \
     b_tile_7x##NB, b_tile_8x##NB, b_tile_9x##NB, b_tile_10x##NB, b_tile_11x##NB, b_tile_12x##NB}
static const b_tile_fn b_tiles_nb4[6] = B_ROW6(4), b_tiles_nb3[6] = B_ROW6(3);
static const b_tile_fn b_tiles_nb2[12] = B_ROW12(2), b_tiles_nb1[12] = B_ROW12(1);

/* Task (strip, group): the strip's output pixels (row-major over the image) x the group's blocks of channels. */
static void b_compute(void *arg, size_t strip_task, size_t group) {
    const b_job *j = arg;
    const tc__lowp_shape *s = &j->g->s;
    const size_t cp = j->g->cp, plane = s->oh * s->ow;
    const size_t n = strip_task / j->strips, p0 = strip_task % j->strips * B_STRIP;
    const size_t p1 = p0 + B_STRIP < plane ? p0 + B_STRIP : plane;
    const size_t b0 = group * B_GROUP_BLOCKS;
    const int nb = (int)(j->nblocks - b0 < B_GROUP_BLOCKS ? j->nblocks - b0 : B_GROUP_BLOCKS);
    const size_t oc0 = b0 * 16;
    const size_t last_ch = s->cout - (b0 + (size_t)nb - 1) * 16;
    const __mmask16 last_mask = last_ch >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << last_ch) - 1);
    const size_t wbs = s->kh * s->kw * cp * 16; /* halves per block of 16 channels */
    const uint16_t *w0 = j->w + b0 * wbs;
    const int mr_max = nb >= 3 ? 6 : 12;
    const b_tile_fn *tiles = nb == 4 ? b_tiles_nb4 : nb == 3 ? b_tiles_nb3 : nb == 2 ? b_tiles_nb2 : b_tiles_nb1;
    const uint16_t *ximg = j->xh + n * s->hp * s->wp * cp;
    b_out o = {.oc0 = oc0};
    size_t base;
    if (s->out_layout == TC__LOWP_NCHW16C) {
        base = (n * (s->cout / 16) + b0) * plane * 16;
        o.ps = 16, o.bs = plane * 16, o.ls = 1;
    } else if (s->out_layout == TC__LOWP_ROWS) {
        base = oc0;
        o.ps = s->cout, o.bs = 16, o.ls = 1;
    } else {
        base = (n * s->cout + oc0) * plane;
        o.ps = 1, o.bs = 16 * plane, o.ls = plane;
    }
    size_t r = p0 / s->ow, c = p0 % s->ow; /* the output pixel p, as row and column */
    for (size_t p = p0; p < p1;) {
        const int mr = (int)(p1 - p < (size_t)mr_max ? p1 - p : (size_t)mr_max);
        size_t xoff[B_MR];
        for (int i = 0; i < mr; i++) {
            xoff[i] = (r * s->sh * s->wp + c * s->sw) * cp;
            if (++c == s->ow) c = 0, r++;
        }
        o.y = j->y + base + p * o.ps;
        o.res = j->res ? j->res + base + p * o.ps : NULL;
        tiles[mr - 1](j, ximg, xoff, w0, wbs, &o, last_mask);
        p += (size_t)mr;
    }
}

tc_status tc__hconv_run_avx512bf16(const tc__kernel_ctx *ctx, const tc__hconv_geom *g) {
    const tc__lowp_shape *s = &g->s;
    const tc__tensor *x = ctx->in[0], *w = ctx->in[1];
    tc__tensor *y = ctx->out[0];
    if (x->data == NULL || w->data == NULL || y->data == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: tensors need data", ctx->op_type);
    b_job j = {.g = g, .x = x->data, .w = w->data, .y = y->data, .act = {TC__VACT_NONE, 0, 0, 0}};
    const tc__tensor *b = tc__lowp_bias(ctx, s->cout);
    j.bias = b ? b->data : NULL;
    if (ctx->epi != NULL) {
        tc_status st = tc__vact_residual(ctx, tc__tensor_numel(y), &j.res);
        if (st != TC_STATUS_OK) return st;
        j.act = tc__vact_from_epilogue(ctx->epi);
    }
    const size_t img_bytes = s->batch * s->hp * s->wp * g->cp * sizeof(uint16_t);
    unsigned char *scratch = tc__kernel_alloc(ctx, tc__hconv_scratch(g));
    if (scratch == NULL) return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "%s: no scratch for the bf16 image", ctx->op_type);
    j.xh = (uint16_t *)scratch;
    size_t *tap_off = (size_t *)(scratch + (img_bytes + 63) / 64 * 64);
    for (size_t a = 0; a < s->kh; a++)
        for (size_t c = 0; c < s->kw; c++) tap_off[a * s->kw + c] = (a * s->dh * s->wp + c * s->dw) * g->cp;
    j.tap_off = tap_off;
    j.nblocks = g->cout16 / 16;
    j.groups = (j.nblocks + B_GROUP_BLOCKS - 1) / B_GROUP_BLOCKS;
    j.strips = (s->oh * s->ow + B_STRIP - 1) / B_STRIP;
    pthreadpool_t pool = ctx->pool;
    const size_t rows = s->batch * j.strips;
    if (pool == NULL || pthreadpool_get_threads_count(pool) <= 1) {
        for (size_t t = 0; t < s->batch * s->hp; t++) b_convert_row(&j, t);
        for (size_t t = 0; t < rows; t++)
            for (size_t u = 0; u < j.groups; u++) b_compute(&j, t, u);
    } else {
        pthreadpool_parallelize_1d(pool, b_convert_row, &j, s->batch * s->hp, 0);
        pthreadpool_parallelize_2d(pool, b_compute, &j, rows, j.groups, 0);
    }
    tc__kernel_free(ctx, scratch);
    return TC_STATUS_OK;
}
