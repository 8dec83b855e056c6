/*
 * convt_gemm_f32_scalar_tactic.c - tactic convt_gemm_f32_scalar: ConvTranspose (NCHW, 1-D to 3-D, groups,
 * strides, dilations, pads, output_padding, output_shape, auto_pad) as W^T * X into columns in scratch,
 * then col2im onto the bias; W packed at build into MR-row panels per group. Microkernel: the portable scalar GEMM microkernel.
 */
#include "backends/cpu/convt_node_f32.h"

static tc_status pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    return tc__convt_node_f32_pack(d, index, src, dst, err, &tc__gemm_config_f32_scalar);
}

static size_t scratch_bytes(const tc__step_desc *d) { return tc__convt_node_f32_scratch_bytes(d, &tc__gemm_config_f32_scalar); }

static tc_status run(const tc__kernel_ctx *ctx) { return tc__convt_node_f32_run(ctx, &tc__gemm_config_f32_scalar); }

const tc__tactic tc__tactic_convt_gemm_f32_scalar = {
    .name = "convt_gemm_f32_scalar",
    .op_type = "ConvTranspose",
    .backend = TC__BACKEND_CPU, .caps = 0,
    .supports = tc__convt_node_f32_supports,
    .packs_input = tc__convt_node_f32_packs_input,
    .pack = pack,
    .scratch_bytes = scratch_bytes,
    .run = run,
};
