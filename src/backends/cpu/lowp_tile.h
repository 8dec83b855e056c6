/*
 * lowp_tile.h - the task loop and the output side that the reduced-precision kernels share (INT8
 * qconv_u8s8_avx512vnni.c, FP16 hconv_f16_avx512fp16.c, BF16 hconv_bf16_avx512bf16.c). A task is a strip
 * of TC__LOWP_STRIP output pixels of one image, in row-major order (so a strip may span output rows and
 * small planes still fill whole tiles), x a group of up to TC__LOWP_GROUP_BLOCKS blocks of 16 output
 * channels; a tile is up to 6 pixels (3 or 4 blocks) or 12 pixels (1 or 2 blocks); the kernel's tile
 * function reads each pixel's window at an offset into the padded channels-last input image. The
 * epilogue of one block of 16 channels (dequantization scale, bias, residual, activation) stores into
 * NCHW, NCHW16c or row-major output. Static inline: include only from files compiled for AVX-512.
 */
#ifndef TC_BACKENDS_CPU_LOWP_TILE_H
#define TC_BACKENDS_CPU_LOWP_TILE_H

#include <immintrin.h>
#include <pthreadpool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/cpu/lowp_layer.h"
#include "backends/cpu/vact_f32.h"
#include "backends/cpu/vact_f32_avx512.h"

#define TC__LOWP_STRIP 48        /* output pixels per task */
#define TC__LOWP_GROUP_BLOCKS 4  /* blocks of 16 output channels per task (and per tile at most) */
#define TC__LOWP_MR 12           /* output pixels per tile at most (6 with 3 or 4 blocks) */

/* What the task loop needs of the operator (one image's sizes; cp: channels per pixel of the padded image). */
typedef struct tc__lowp_grid {
    size_t oh, ow, sh, sw, hp, wp, cp, cout;
    uint8_t out_layout;     /* tc__lowp_layout */
    size_t nblocks, groups; /* blocks of 16 output channels (C_out rounded up), task groups of them */
    size_t strips;          /* strips per image */
    /* INT8 chain: the output is the next layer's padded channels-last image (o_cp != 0; see qconv_u8s8.h) */
    size_t o_hp, o_wp, o_cp, o_pt, o_pl;
} tc__lowp_grid;

static inline tc__lowp_grid tc__lowp_grid_of(size_t oh, size_t ow, size_t sh, size_t sw, size_t hp, size_t wp,
                                             size_t cp, size_t cout, uint8_t out_layout) {
    tc__lowp_grid g = {oh, ow, sh, sw, hp, wp, cp, cout, out_layout, (cout + 15) / 16, 0, 0, 0, 0, 0, 0, 0};
    g.groups = (g.nblocks + TC__LOWP_GROUP_BLOCKS - 1) / TC__LOWP_GROUP_BLOCKS;
    g.strips = (oh * ow + TC__LOWP_STRIP - 1) / TC__LOWP_STRIP;
    return g;
}

/* Where output element (pixel i, block b, lane l) of a tile lives: y + i * ps + b * bs + l * ls. */
typedef struct tc__lowp_out {
    float *y;
    const float *res;
    size_t ps, bs, ls;
    size_t oc0; /* the tile's first output channel */
    size_t qoff[TC__LOWP_MR]; /* INT8 chain: byte offset of pixel i's channel oc0 in the output image */
} tc__lowp_out;

/* The lane offsets l * ls of a scattered (NCHW) store. */
static inline __m512i tc__lowp_lanes(size_t ls) {
    return _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                              _mm512_set1_epi32((int32_t)ls));
}

/* Pixel i, block b of a tile: v * mult[oc] (when mult) + bias[oc] (when bias) + residual, activation: the
 * FP32 value the step outputs (for a chained step: what the next layer's image is made from). */
static inline __attribute__((always_inline)) __m512 tc__lowp_value(const tc__vact *act, const float *mult,
                                                                   const float *bias, const tc__lowp_out *o, int i,
                                                                   int b, __m512 v, __mmask16 mask, __m512i lanes) {
    const size_t oc = o->oc0 + (size_t)b * 16;
    const __m512 bv = bias ? _mm512_maskz_loadu_ps(mask, bias + oc) : _mm512_setzero_ps();
    v = mult ? _mm512_fmadd_ps(v, _mm512_maskz_loadu_ps(mask, mult + oc), bv) : _mm512_add_ps(v, bv);
    if (o->res) {
        const size_t off = (size_t)i * o->ps + (size_t)b * o->bs;
        v = _mm512_add_ps(v, o->ls == 1 ? _mm512_maskz_loadu_ps(mask, o->res + off)
                                        : _mm512_mask_i32gather_ps(_mm512_setzero_ps(), mask, lanes, o->res + off, 4));
    }
    return tc__vact_f32_avx512(v, act);
}

/* tc__lowp_value, stored on the mask's lanes. */
static inline __attribute__((always_inline)) void tc__lowp_store(const tc__vact *act, const float *mult,
                                                                 const float *bias, const tc__lowp_out *o, int i,
                                                                 int b, __m512 v, __mmask16 mask, __m512i lanes) {
    v = tc__lowp_value(act, mult, bias, o, i, b, v, mask, lanes);
    const size_t off = (size_t)i * o->ps + (size_t)b * o->bs;
    if (o->ls == 1) _mm512_mask_storeu_ps(o->y + off, mask, v);
    else _mm512_mask_i32scatter_ps(o->y + off, mask, lanes, v, 4);
}

/* The kernel's tile: mr pixels whose windows start at xoff[0..mr) (elements of the padded image, the image's
 * own offset included) x nb blocks of 16 channels from block b0; last_mask: the channels of the last block. */
typedef void (*tc__lowp_tile_fn)(const void *job, int mr, int nb, size_t b0, const size_t *xoff,
                                 const tc__lowp_out *o, __mmask16 last_mask);

/* Task (strip_task, group) of an operator with output y (and residual res, or NULL): every tile of the strip. */
static inline void tc__lowp_task(const tc__lowp_grid *g, size_t strip_task, size_t group, float *y, const float *res,
                                 tc__lowp_tile_fn tile, const void *job) {
    const size_t plane = g->oh * g->ow;
    const size_t n = strip_task / g->strips, p0 = strip_task % g->strips * TC__LOWP_STRIP;
    const size_t p1 = p0 + TC__LOWP_STRIP < plane ? p0 + TC__LOWP_STRIP : plane;
    const size_t b0 = group * TC__LOWP_GROUP_BLOCKS;
    const int nb = (int)(g->nblocks - b0 < TC__LOWP_GROUP_BLOCKS ? g->nblocks - b0 : TC__LOWP_GROUP_BLOCKS);
    const size_t oc0 = b0 * 16, last_ch = g->cout - (b0 + (size_t)nb - 1) * 16;
    const __mmask16 last_mask = last_ch >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << last_ch) - 1);
    const int mr_max = nb >= 3 ? 6 : TC__LOWP_MR;
    tc__lowp_out o = {.oc0 = oc0};
    size_t base;
    if (g->out_layout == TC__LOWP_NCHW16C) {
        base = (n * (g->cout / 16) + b0) * plane * 16;
        o.ps = 16, o.bs = plane * 16, o.ls = 1;
    } else if (g->out_layout == TC__LOWP_ROWS) {
        base = oc0;
        o.ps = g->cout, o.bs = 16, o.ls = 1;
    } else {
        base = (n * g->cout + oc0) * plane;
        o.ps = 1, o.bs = 16 * plane, o.ls = plane;
    }
    const size_t img = n * g->hp * g->wp * g->cp;
    size_t r = p0 / g->ow, c = p0 % g->ow; /* output pixel p as row and column */
    for (size_t p = p0; p < p1;) {
        const int mr = (int)(p1 - p < (size_t)mr_max ? p1 - p : (size_t)mr_max);
        size_t xoff[TC__LOWP_MR];
        for (int i = 0; i < mr; i++) {
            xoff[i] = img + (r * g->sh * g->wp + c * g->sw) * g->cp;
            if (g->o_cp) o.qoff[i] = ((n * g->o_hp + g->o_pt + r) * g->o_wp + g->o_pl + c) * g->o_cp + oc0;
            if (++c == g->ow) c = 0, r++;
        }
        o.y = y + base + p * o.ps;
        o.res = res ? res + base + p * o.ps : NULL;
        tile(job, mr, nb, b0, xoff, &o, last_mask);
        p += (size_t)mr;
    }
}

/* Runs an operator: convert(job, row) for each of n_rows padded input rows, then compute(job, strip_task,
 * group) for every task of the grid over the batch, on the pool (or the calling thread when it has one
 * thread). */
static inline void tc__lowp_run(pthreadpool_t pool, const tc__lowp_grid *g, size_t batch, size_t n_rows,
                                void (*convert)(void *, size_t), void (*compute)(void *, size_t, size_t), void *job) {
    const size_t tasks = batch * g->strips;
    if (pool == NULL || pthreadpool_get_threads_count(pool) <= 1) {
        for (size_t t = 0; t < n_rows; t++) convert(job, t);
        for (size_t t = 0; t < tasks; t++)
            for (size_t u = 0; u < g->groups; u++) compute(job, t, u);
    } else {
        if (n_rows > 0) pthreadpool_parallelize_1d(pool, convert, job, n_rows, 0);
        pthreadpool_parallelize_2d(pool, compute, job, tasks, g->groups, 0);
    }
}

#endif
