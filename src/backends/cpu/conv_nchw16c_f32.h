/*
 * conv_nchw16c_f32.h - direct 2-D convolution on the blocked NCHW16c layout (core/layout.h), FP32,
 * one group, for the conv_nchw16c_f32_avx512 tactic. The output Y is NCHW16c (C_out % 16 == 0);
 * the input X is NCHW16c (C_in % 16 == 0) or plain NCHW with any C_in (a network's first layer);
 * the fused residual has Y's shape and layout. Y = act(conv(X, W) + B + residual).
 *
 * The constant weight W [C_out, C_in, KH, KW] is packed at build time into units of two output
 * channel blocks (32 channels; a last unit of one block when C_out / 16 is odd). With G = 16 input
 * channels per group for a blocked X and G = 1 for a plain X, unit u starts at float u * 32 * C_in *
 * KH * KW and holds [C_in / G][KH][KW][G][NB * 16] (NB = 2, or 1 for a last odd unit): for each
 * reduction step the NB * 16 output channels are contiguous. It is a permutation of the same size.
 *
 * The baseline-ISA part (geometry, supports, packing) is in conv_nchw16c_f32_avx512_tactic.c; the
 * microkernels and the threaded driver, run(), are in conv_nchw16c_f32_avx512.c.
 */
#ifndef TC_BACKENDS_CPU_CONV_NCHW16C_F32_H
#define TC_BACKENDS_CPU_CONV_NCHW16C_F32_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/tactic.h"

/* Output channels per block of the layout, and blocks per unit of the packed weight. */
#define TC__CONV16_BLOCK 16
#define TC__CONV16_UNIT_BLOCKS 2

/* The geometry of a convolution this operator computes (sizes of one image). */
typedef struct tc__conv16_geom {
    size_t batch, cin, cout;
    size_t ih, iw, oh, ow;
    size_t kh, kw;
    size_t sh, sw, dh, dw; /* strides and dilations */
    int64_t pt, pl;        /* top and left padding; the bottom and right follow from the sizes */
    size_t group;          /* input channels per reduction group: 16 (blocked X) or 1 (plain X) */
    bool blocked_in;       /* X is NCHW16c */
} tc__conv16_geom;

/*
 * Fills g from the Conv attributes and the shapes of X [N, C_in, H, W], W [C_out, C_in, KH, KW]
 * and Y [N, C_out, OH, OW], X being blocked when blocked_in. False when this operator cannot
 * compute the convolution (dtype, rank, group, channel counts, sizes beyond its index range).
 */
bool tc__conv_nchw16c_f32_geometry(const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *w,
                                   const tc__tensor *y, bool blocked_in, tc__conv16_geom *g);

/* Output channels of packed unit u (32, or 16 for a last odd unit). */
static inline size_t tc__conv16_unit_channels(const tc__conv16_geom *g, size_t u) {
    const size_t left = g->cout - u * TC__CONV16_BLOCK * TC__CONV16_UNIT_BLOCKS;
    return left < TC__CONV16_BLOCK * TC__CONV16_UNIT_BLOCKS ? left : TC__CONV16_BLOCK * TC__CONV16_UNIT_BLOCKS;
}

/* Offset in floats of W[oc, ic, kh, kw] in the packed weight (see the top of this file). */
static inline size_t tc__conv16_weight_offset(const tc__conv16_geom *g, size_t oc, size_t ic, size_t kh, size_t kw) {
    const size_t unit = TC__CONV16_BLOCK * TC__CONV16_UNIT_BLOCKS, u = oc / unit;
    const size_t step = ((ic / g->group * g->kh + kh) * g->kw + kw) * g->group + ic % g->group;
    return u * unit * g->cin * g->kh * g->kw + step * tc__conv16_unit_channels(g, u) + oc % unit;
}

/* The tactic's supports(), packs_input() and pack() (index 1: W). */
bool tc__conv_nchw16c_f32_supports(const tc__step_desc *d);
bool tc__conv_nchw16c_f32_packs_input(const tc__step_desc *d, int index);
tc_status tc__conv_nchw16c_f32_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err);

/*
 * Runs a step that supports() accepted: ctx->in X, packed W, optional B; ctx->out[0] Y (every
 * element written; partial sums are kept in it, so neither X nor the residual may alias it);
 * ctx->residual; ctx->exec. Needs no scratch, allocates nothing, fails on shapes that do not match.
 */
tc_status tc__conv_nchw16c_f32_run_avx512(const tc__kernel_ctx *ctx);

#endif
