/*
 * hconv.h - convolution and matrix product in a 16-bit float type: FP32 tensors in and out, FP16 or BF16
 * arithmetic inside. Used by the fp16 and bf16 tactics of Conv (one group, any kernel, stride, dilation
 * and padding), MatMul and Gemm (constant B), which take only nodes the half-precision pass marked
 * (tc.fp16 from --fp16, tc.bf16 from --bf16; core/quant_attr.h).
 *
 * Both kernels broadcast a pair of input channels (32 bits: a plain load, no shuffle) against a register
 * of 16 output channels x that pair:
 *   FP16 (AVX512-FP16, hconv_f16_avx512fp16.c): vfmadd231ph, 32 half lanes per register (twice the
 *        multiply-adds of FP32 FMA), so each lane sums the products of one channel parity; the two
 *        parities are added when the tile is stored. Products are accumulated in FP16 over chunks of at
 *        most TC__HCONV_CHUNK multiply-adds per lane, and each chunk's sum is added into an FP32 partial
 *        sum, so the rounding error of FP16 accumulation does not grow with K. |x| > 65504 becomes Inf,
 *        as with TensorRT's FP16.
 *   BF16 (AVX512-BF16, hconv_bf16_avx512bf16.c): vdpbf16ps adds both products of the pair into an FP32
 *        lane: FP32 accumulation, only the operands are rounded (to 8 bits of mantissa; FP32's range).
 * X and W are rounded to nearest even. The epilogue (bias, residual, activation) is FP32.
 *
 * The operator converts X once per run into a padded channels-last 16-bit image (scratch):
 * [N][Hp][Wp][Cp] with Cp = C_in rounded up to 2 and the border and padding channel 0, so the kernel
 * has no edge cases (lowp_layer.h's shape). The constant weight is packed at build time into the FP32
 * weight's bytes (the packing contract), which holds when Cpad16 * Cp <= 2 * C_out * C_in; supports()
 * checks it. Layout of the packed 16-bit values:
 *   [Cpad16 / 16][KH * KW][Cp / 2][16][2]   (block of 16 output channels, tap, pair of input channels)
 * The baseline-ISA part (geometry, supports, packing) is hconv_tactic.c.
 */
#ifndef TC_BACKENDS_CPU_HCONV_H
#define TC_BACKENDS_CPU_HCONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/cpu/amx_panel.h"
#include "backends/cpu/lowp_layer.h"
#include "core/quant_attr.h"
#include "backends/tactic.h"

/* FP16: multiply-adds per lane accumulated in FP16 before the sum goes into FP32. */
#define TC__HCONV_CHUNK 64

typedef struct tc__hconv_geom {
    tc__lowp_shape s;
    size_t cp;     /* channels per pixel of the image: C_in rounded up to 2, or (BF16) an odd C_in below 8 as is */
    size_t cout16; /* C_out rounded up to 16 */
    bool bf16;     /* BF16 (else FP16) */
    /* The reduced-precision chain (core/quant_attr.h): X is already this operator's padded 16-bit image
     * (in_image), or Y is written as the next layer's padded image [N][o_hp][o_wp][o_cp] (out_image). */
    bool in_image, out_image;
    size_t o_hp, o_wp, o_cp, o_pt, o_pl;
    /* The fused residual is a padded 16-bit image [N][r_hp][r_wp][r_cp] of this type (tc.half_res_image) */
    bool res_image;
    size_t r_hp, r_wp, r_cp, r_pt, r_pl;
} tc__hconv_geom;

/* The microkernels' runs: at dilation 1 a kernel row's taps are consecutive pixels of the channels-last image, so a run
 * is a kernel row (run_step = KW taps, run_step * cp values); else a tap. A run is read as pairs of values, the last one
 * alone when its length is odd (an odd cp: an image stem of 3 channels runs 7 x 3 = 21 values, 11 steps, not the 14 of
 * 7 pixels of 4 channels). The weights are packed run by run in the same order, a zero after an odd run's last value. */
static inline size_t tc__hconv_run_step(const tc__lowp_shape *s) { return s->dw == 1 ? s->kw : 1; }
static inline size_t tc__hconv_runs(const tc__lowp_shape *s) { return s->kh * s->kw / tc__hconv_run_step(s); }
static inline size_t tc__hconv_run_values(const tc__hconv_geom *g) { return tc__hconv_run_step(&g->s) * g->cp; }
/* Pair steps per run, the last one half a pair when the run is odd. */
static inline size_t tc__hconv_run_steps(const tc__hconv_geom *g) { return (tc__hconv_run_values(g) + 1) / 2; }

/* 16-bit values of the packed weight per block of 16 output channels, and in all. */
static inline size_t tc__hconv_block_halves(const tc__hconv_geom *g) {
    return tc__hconv_runs(&g->s) * tc__hconv_run_steps(g) * 32;
}
static inline size_t tc__hconv_weight_halves(const tc__hconv_geom *g) {
    return g->cout16 / 16 * tc__hconv_block_halves(g);
}
/* Scratch bytes of one run: the 16-bit padded image of the whole batch, the taps' offsets, alignment. */
static inline size_t tc__hconv_scratch(const tc__hconv_geom *g) {
    return g->s.batch * g->s.hp * g->s.wp * g->cp * 2 + g->s.kh * g->s.kw * sizeof(size_t) + 256;
}

/* The geometry of step d (Conv, MatMul or Gemm) for the bf16 or fp16 operator; false when it cannot compute
 * it (not a layer of lowp_layer.h, no tc.bf16 / tc.fp16 mark, sizes beyond 2^31, or packed weights larger
 * than the FP32 ones). */
bool tc__hconv_geometry(const tc__step_desc *d, bool bf16, tc__hconv_geom *g);

/* Rounds the FP32 weight (ONNX layout: Conv [C_out][C_in][KH][KW], or k-major [K][N]) to the 16-bit type
 * and packs it into dst (tc__hconv_weight_halves values). */
void tc__hconv_pack_weight(const tc__hconv_geom *g, const float *w, bool k_major, uint16_t *dst);

/* Run the operator on a step its tactic supports (need AVX512-FP16 / AVX512-BF16). */
tc_status tc__hconv_run_avx512fp16(const tc__kernel_ctx *ctx, const tc__hconv_geom *g);
tc_status tc__hconv_run_avx512bf16(const tc__kernel_ctx *ctx, const tc__hconv_geom *g);

/* AMX-BF16 (amx_panel.h): the panel plan of a BF16 g, false when the AMX kernel does not take it; and the run (needs
 * AMX-BF16 and AVX512-BF16; the same image, packing and epilogue as the AVX512-BF16 kernel, FP32 sums). */
bool tc__hconv_amx_plan(const tc__hconv_geom *g, tc__amx_plan *p);
tc_status tc__hconv_run_amx_bf16(const tc__kernel_ctx *ctx, const tc__hconv_geom *g);

#endif
