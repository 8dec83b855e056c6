/*
 * conv1x1_f32_avx512_tactic.c - tactic conv1x1_f32_avx512: Conv 1x1, stride 1, no padding, one
 * group (NCHW): W packed at build into 14-row panels times X per image. Microkernel: AVX-512
 * 14x32.
 */
#include "backends/cpu/gemm_tactics.h"

static bool supports(const tc__step_desc *d) { return tc__conv_node_f32_supports(d, false); }

static tc_status pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    return tc__conv_node_f32_pack(d, index, src, dst, err, &tc__gemm_config_f32_avx512);
}

static size_t scratch_bytes(const tc__step_desc *d) {
    return tc__conv_node_f32_scratch_bytes(d, &tc__gemm_config_f32_avx512, false);
}

static tc_status run(const tc__kernel_ctx *ctx) {
    return tc__conv_node_f32_run(ctx, &tc__gemm_config_f32_avx512, false);
}

const tc__tactic tc__tactic_conv1x1_f32_avx512 = {
    .name = "conv1x1_f32_avx512",
    .op_type = "Conv",
    .backend = TC__BACKEND_CPU, .caps = TC__GEMM_ISA_AVX512,
    .flags = TC__TACTIC_FUSES_EPILOGUE,
    .supports = supports,
    .packs_input = tc__conv_node_f32_packs_input,
    .pack = pack,
    .scratch_bytes = scratch_bytes,
    .run = run,
};
