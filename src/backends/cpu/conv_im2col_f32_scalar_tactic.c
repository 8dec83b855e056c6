/*
 * conv_im2col_f32_scalar_tactic.c - tactic conv_im2col_f32_scalar: Conv (NCHW, 1-D to 3-D, groups,
 * strides, pads, dilations, auto_pad) via im2col tiles built in scratch; W packed at build into
 * 4-row panels per group. Microkernel: portable scalar 4x8.
 */
#include "backends/cpu/gemm_tactics.h"

static bool supports(const tc__step_desc *d) { return tc__conv_node_f32_supports(d, true); }

static tc_status pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    return tc__conv_node_f32_pack(d, index, src, dst, err, &tc__gemm_config_f32_scalar);
}

static size_t scratch_bytes(const tc__step_desc *d) {
    return tc__conv_node_f32_scratch_bytes(d, &tc__gemm_config_f32_scalar, true);
}

static tc_status run(const tc__kernel_ctx *ctx) {
    return tc__conv_node_f32_run(ctx, &tc__gemm_config_f32_scalar, true);
}

const tc__tactic tc__tactic_conv_im2col_f32_scalar = {
    .name = "conv_im2col_f32_scalar",
    .op_type = "Conv",
    .backend = TC__BACKEND_CPU, .caps = 0,
    .flags = TC__TACTIC_FUSES_EPILOGUE,
    .supports = supports,
    .packs_input = tc__conv_node_f32_packs_input,
    .pack = pack,
    .scratch_bytes = scratch_bytes,
    .run = run,
};
