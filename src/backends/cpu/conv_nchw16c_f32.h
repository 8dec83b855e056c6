/*
 * conv_nchw16c_f32.h - direct 2-D convolution on a blocked layout (core/layout.h) of B channels,
 * NCHW16c (B = 16, tactic conv_nchw16c_f32_avx512) or NCHW8c (B = 8, conv_nchw8c_f32_avx2), FP32,
 * one group. The output Y is blocked; the input X is blocked or plain NCHW (a network's first
 * layer); the fused residual has Y's shape and layout. Y = act(conv(X, W) + B + residual). A blocked
 * channel count that is not a multiple of B is padded up to one (core/layout.h): the geometry's cout
 * (and cin, X blocked) are the padded counts, the packed weight and bias hold zeros for the padding
 * channels, and the driver writes zeros into Y's padding lanes after the epilogue.
 *
 * The constant weight W [C_out, C_in, KH, KW] is packed at build time into units of two output
 * channel blocks (2B channels; a last unit of one block when C_out / B is odd). With G = B input
 * channels per group for a blocked X and G = 1 for a plain X, unit u starts at float u * 2B * C_in *
 * KH * KW and holds [C_in / G][KH][KW][G][NB * B] (NB = 2, or 1 for a last odd unit): for each
 * reduction step the NB * B output channels are contiguous, C_out and C_in being the padded counts
 * (cout and cin of the geometry), zeros where a padded channel has no weight; a permutation of W's
 * floats when no count is padded.
 *
 * The baseline-ISA part (geometry, supports, packing) is in conv_nchw16c_f32_avx512_tactic.c; the
 * microkernels and the threaded driver, run(), are in conv_nchwc_f32_kernel.h, compiled per ISA by
 * conv_nchw16c_f32_avx512.c and conv_nchw8c_f32_avx2.c.
 */
#ifndef TC_BACKENDS_CPU_CONV_NCHW16C_F32_H
#define TC_BACKENDS_CPU_CONV_NCHW16C_F32_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/tactic.h"

/* Blocks per unit of the packed weight. */
#define TC__CONV16_UNIT_BLOCKS 2

/* The geometry of a convolution this operator computes (sizes of one image). */
typedef struct tc__conv16_geom {
    size_t batch, cin, cout;   /* channels, padded up to the block where blocked */
    size_t cin_real, cout_real; /* the tensors' channels */
    size_t ih, iw, oh, ow;
    size_t kh, kw;
    size_t sh, sw, dh, dw; /* strides and dilations */
    int64_t pt, pl;        /* top and left padding; the bottom and right follow from the sizes */
    size_t block;          /* channels of a layout block: 16 or 8 */
    size_t group;          /* input channels per reduction group: block (blocked X) or 1 (plain X) */
    bool blocked_in;       /* X is blocked */
} tc__conv16_geom;

/*
 * Fills g from the Conv attributes and the shapes of X [N, C_in, H, W], W [C_out, C_in, KH, KW]
 * and Y [N, C_out, OH, OW], X being blocked when blocked_in, in blocks of `block` (16 or 8) channels.
 * False when this operator cannot compute the convolution (dtype, rank, group, channel counts, sizes
 * beyond its index range).
 */
bool tc__conv_nchw16c_f32_geometry(const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *w,
                                   const tc__tensor *y, bool blocked_in, size_t block, tc__conv16_geom *g);

/* Output channels of packed unit u (2B, or B for a last odd unit). */
static inline size_t tc__conv16_unit_channels(const tc__conv16_geom *g, size_t u) {
    const size_t left = g->cout - u * g->block * TC__CONV16_UNIT_BLOCKS;
    return left < g->block * TC__CONV16_UNIT_BLOCKS ? left : g->block * TC__CONV16_UNIT_BLOCKS;
}

/* Offset in floats of W[oc, ic, kh, kw] in the packed weight (see the top of this file). */
static inline size_t tc__conv16_weight_offset(const tc__conv16_geom *g, size_t oc, size_t ic, size_t kh, size_t kw) {
    const size_t unit = g->block * TC__CONV16_UNIT_BLOCKS, u = oc / unit;
    const size_t step = ((ic / g->group * g->kh + kh) * g->kw + kw) * g->group + ic % g->group;
    return u * unit * g->cin * g->kh * g->kw + step * tc__conv16_unit_channels(g, u) + oc % unit;
}

/*
 * A configuration of the direct tactics (the tuner times each, "name#index"; conv_nchw16c_f32_configs lists
 * them, the default first). wide: 1 when a task computes two packed units (4 blocks, up to 7 pixels per
 * microkernel call) rather than one (2 blocks, up to 14 pixels): the default for all but 1x1 stride-1
 * unpadded convolutions, which run as one row of pixels and are offered both. It never changes the order of
 * any pixel's sums: every configuration gives the same bits.
 */
typedef struct tc__conv16_config {
    uint32_t wide; /* 0 or 1 */
} tc__conv16_config;

/* The configurations of a step (default first), and the check of one read from a plan. */
int tc__conv_nchw16c_f32_configs(const tc__step_desc *d, void *out, int cap);
bool tc__conv_nchw16c_f32_check_config(const void *config, tc__err *err);

/* The tactic's supports() (NCHW16c; _8: NCHW8c), packs_input(), packed_bytes() and pack() (index 1: W; index 2:
 * B, when C_out is padded; the block from the step's tc.layout_block). */
bool tc__conv_nchw16c_f32_supports(const tc__step_desc *d);
bool tc__conv_nchw8c_f32_supports(const tc__step_desc *d);
bool tc__conv_nchw16c_f32_packs_input(const tc__step_desc *d, int index);
size_t tc__conv_nchw16c_f32_packed_bytes(const tc__step_desc *d, int index);
tc_status tc__conv_nchw16c_f32_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err);

/*
 * Runs a step that supports() accepted: ctx->in X, packed W, optional B; ctx->out[0] Y (every
 * element written; partial sums are kept in it, so neither X nor the residual may alias it);
 * ctx->residual; ctx->exec. Needs no scratch, allocates nothing, fails on shapes that do not match.
 */
tc_status tc__conv_nchw16c_f32_run_avx512(const tc__kernel_ctx *ctx);
tc_status tc__conv_nchw8c_f32_run_avx2(const tc__kernel_ctx *ctx);

#endif
