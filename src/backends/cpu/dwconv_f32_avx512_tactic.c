/*
 * dwconv_f32_avx512_tactic.c - tactic dwconv_f32_avx512: AVX-512 depthwise convolution
 * (3x3/5x5/7x7, stride 1 or 2, fused epilogue); microkernel in dwconv_f32_avx512.c.
 */
#include "backends/cpu/dwconv_f32.h"
#include "backends/cpu/vec_isa.h"

static tc_status run(const tc__kernel_ctx *ctx) { return tc__dwconv_f32_run(ctx, tc__dwconv_f32_rows_avx512); }

const tc__tactic tc__tactic_dwconv_f32_avx512 = {
    .name = "dwconv_f32_avx512",
    .op_type = "Conv",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX512,
    .flags = TC__TACTIC_FUSES_EPILOGUE,
    .supports = tc__dwconv_f32_supports,
    .run = run,
};
