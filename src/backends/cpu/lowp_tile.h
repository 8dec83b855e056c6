/*
 * lowp_tile.h - the AVX-512 output side that the reduced-precision kernels share (INT8
 * qconv_u8s8_avx512vnni.c, FP16 hconv_f16_avx512fp16.c, BF16 hconv_bf16_avx512bf16.c) on top of the
 * task loop of lowp_grid.h: the epilogue of one block of 16 channels (bias, residual: FP32 or a 16-bit image,
 * activation) stored into NCHW, NCHW16c or row-major output; and the AMX drivers' task around the tiles of
 * amx_panel.h. Static inline: include only from files compiled for AVX-512.
 */
#ifndef TC_BACKENDS_CPU_LOWP_TILE_H
#define TC_BACKENDS_CPU_LOWP_TILE_H

#include <immintrin.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/cpu/amx_panel.h"
#include "backends/cpu/lowp_grid.h"
#include "backends/cpu/vact_f32.h"
#include "backends/cpu/vact_f32_avx512.h"

/* The lane offsets l * ls of a scattered (NCHW) store. */
static inline __m512i tc__lowp_lanes(size_t ls) {
    return _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                              _mm512_set1_epi32((int32_t)ls));
}

/* v + the FP32 residual of pixel i, block b (when o has one). */
static inline __attribute__((always_inline)) __m512 tc__lowp_add_res(const tc__lowp_out *o, int i, int b, __m512 v,
                                                                     __mmask16 mask, __m512i lanes) {
    if (o->res == NULL) return v;
    const size_t off = (size_t)i * o->ps + (size_t)b * o->bs;
    return _mm512_add_ps(v, o->ls == 1 ? _mm512_maskz_loadu_ps(mask, o->res + off)
                                       : _mm512_mask_i32gather_ps(_mm512_setzero_ps(), mask, lanes, o->res + off, 4));
}

/* Pixel i, block b of a residual image of 16-bit floats (o->rimg of an FP16 or BF16 step), as FP32. */
static inline __attribute__((always_inline)) __m512 tc__lowp_res16(const tc__lowp_out *o, int i, int b, __mmask16 mask,
                                                                   bool bf16) {
    const __m256i h = _mm256_maskz_loadu_epi16(mask, (const uint16_t *)o->rimg + o->roff[i] + (size_t)b * 16);
    return bf16 ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)) : _mm512_cvtph_ps(h);
}

/* Pixel i, block b of an FP16 (BF16: bf16) step's tile: v + bias[oc] (when bias) + the residual (FP32, or the 16-bit
 * values of its residual image), activation: the FP32 value the step outputs (for a chained step: what the next
 * layer's image is made from). */
static inline __attribute__((always_inline)) __m512 tc__lowp_value(const tc__vact *act, const float *bias,
                                                                   const tc__lowp_out *o, int i, int b, __m512 v,
                                                                   __mmask16 mask, __m512i lanes, bool bf16) {
    const size_t oc = o->oc0 + (size_t)b * 16;
    v = _mm512_add_ps(v, bias ? _mm512_maskz_loadu_ps(mask, bias + oc) : _mm512_setzero_ps());
    v = o->rimg ? _mm512_add_ps(v, tc__lowp_res16(o, i, b, mask, bf16)) : tc__lowp_add_res(o, i, b, v, mask, lanes);
    return tc__vact_f32_avx512(v, act);
}

/* v stored as pixel i, block b of o's FP32 output, on the mask's lanes. */
static inline __attribute__((always_inline)) void tc__lowp_put(const tc__lowp_out *o, int i, int b, __m512 v,
                                                               __mmask16 mask, __m512i lanes) {
    const size_t off = (size_t)i * o->ps + (size_t)b * o->bs;
    if (o->ls == 1) _mm512_mask_storeu_ps(o->y + off, mask, v);
    else _mm512_mask_i32scatter_ps(o->y + off, mask, lanes, v, 4);
}

/* tc__lowp_value, stored on the mask's lanes. */
static inline __attribute__((always_inline)) void tc__lowp_store(const tc__vact *act, const float *bias,
                                                                 const tc__lowp_out *o, int i, int b, __m512 v,
                                                                 __mmask16 mask, __m512i lanes, bool bf16) {
    tc__lowp_put(o, i, b, tc__lowp_value(act, bias, o, i, b, v, mask, lanes, bf16), mask, lanes);
}

/*
 * One task of an AMX driver (amx_panel.h): panel `panel` x the blocks of task group `group`, two blocks at a time into C
 * tiles by dot (tc__amx_dot_u8s8 or tc__amx_dot_bf16) from the image img and packed weight w (the window's K bytes x 16
 * per block), then store(job, o, b, row, mask, lanes) for each pixel (o's pixel 0) and block b of the pair, row: its 16
 * sums.
 */
static inline __attribute__((always_inline)) void tc__amx_drive_task(
    const tc__amx_plan *plan, const tc__lowp_grid *grid, size_t cout, const uint8_t *img, const uint8_t *w, float *y,
    const float *res, size_t panel, size_t group, void (*dot)(const tc__amx_job *),
    void (*store)(const void *, const tc__lowp_out *, int, const void *, __mmask16, __m512i), const void *job) {
    size_t n, p0, a_off;
    int m;
    tc__amx_panel_at(plan, panel, &n, &p0, &m, &a_off);
    const size_t b_end = (group + 1) * TC__LOWP_GROUP_BLOCKS < grid->nblocks ? (group + 1) * TC__LOWP_GROUP_BLOCKS
                                                                              : grid->nblocks;
    uint32_t c[TC__AMX_PANEL][32]; /* int32 or float sums */
    const size_t w_block = plan->runs * plan->run_len * 16; /* the runs cover the window's K bytes */
    tc__amx_begin();
    for (size_t b0 = group * TC__LOWP_GROUP_BLOCKS; b0 < b_end; b0 += 2) {
        const int nb = b_end - b0 >= 2 ? 2 : 1;
        const tc__amx_job t = {.a = img + a_off, .stride = plan->stride, .m = m, .plan = plan, .w = w + b0 * w_block,
                               .w_block = w_block, .nb = nb, .c = c};
        dot(&t);
        tc__lowp_out o;
        const size_t base = tc__lowp_out_base(grid, n, b0, &o);
        const __m512i lanes = tc__lowp_lanes(o.ls);
        for (int i = 0; i < m; i++) { /* one pixel at a time: o's pixel 0 */
            tc__lowp_out_pixel(grid, n, p0 + (size_t)i, base, y, res, &o);
            for (int b = 0; b < nb; b++) {
                const size_t last_ch = cout - (b0 + (size_t)b) * 16;
                const __mmask16 mask = last_ch >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << last_ch) - 1);
                store(job, &o, b, &c[i][b * 16], mask, lanes);
            }
        }
    }
    tc__amx_end();
}

#endif
