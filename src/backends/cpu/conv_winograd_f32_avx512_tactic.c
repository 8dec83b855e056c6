/*
 * conv_winograd_f32_avx512_tactic.c - tactic conv_winograd_f32_avx512: Conv (NCHW 2-D, 3x3, stride 1,
 * dilation 1, one group, any pads) by Winograd F(4x4, 3x3) with the AVX-512 14x32 GEMM microkernel.
 * The weights are used as is (the transformed filter is 4x larger, so it is built in scratch at
 * run time); the epilogue is fused into the output transform.
 */
#include "backends/cpu/conv_winograd_f32.h"

static size_t scratch_bytes(const tc__step_desc *d) {
    return tc__conv_winograd_f32_scratch_bytes(d, &tc__gemm_config_f32_avx512);
}

static tc_status run(const tc__kernel_ctx *ctx) { return tc__conv_winograd_f32_run(ctx, &tc__gemm_config_f32_avx512); }

const tc__tactic tc__tactic_conv_winograd_f32_avx512 = {
    .name = "conv_winograd_f32_avx512",
    .op_type = "Conv",
    .backend = TC__BACKEND_CPU, .caps = TC__GEMM_ISA_AVX512,
    .flags = TC__TACTIC_FUSES_EPILOGUE,
    .supports = tc__conv_winograd_f32_supports,
    .packs_input = NULL,
    .pack = NULL,
    .scratch_bytes = scratch_bytes,
    .run = run,
};
