/*
 * lowp_tile.h - the AVX-512 output side that the reduced-precision kernels share (INT8
 * qconv_u8s8_avx512vnni.c, FP16 hconv_f16_avx512fp16.c, BF16 hconv_bf16_avx512bf16.c) on top of the
 * task loop of lowp_grid.h: the epilogue of one block of 16 channels (dequantization scale, bias,
 * residual, activation) stored into NCHW, NCHW16c or row-major output. Static inline: include only from
 * files compiled for AVX-512.
 */
#ifndef TC_BACKENDS_CPU_LOWP_TILE_H
#define TC_BACKENDS_CPU_LOWP_TILE_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/cpu/lowp_grid.h"
#include "backends/cpu/vact_f32.h"
#include "backends/cpu/vact_f32_avx512.h"

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

#endif
