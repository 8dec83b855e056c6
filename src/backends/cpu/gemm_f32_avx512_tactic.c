/*
 * gemm_f32_avx512_tactic.c - tactic gemm_f32_avx512: Gemm (transA/transB, alpha, beta, C
 * broadcast) with a constant B packed at build into 32-column panels. Microkernel: AVX-512 14x32.
 */
#include "backends/cpu/gemm_tactics.h"

static bool supports(const tc__step_desc *d) { return tc__gemm_node_f32_supports(d, true); }

static tc_status pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    return tc__gemm_node_f32_pack(d, index, src, dst, err, &tc__gemm_config_f32_avx512);
}

static size_t scratch_bytes(const tc__step_desc *d) {
    return tc__gemm_node_f32_scratch_bytes(d, &tc__gemm_config_f32_avx512, true);
}

static tc_status run(const tc__kernel_ctx *ctx) {
    return tc__gemm_node_f32_run(ctx, &tc__gemm_config_f32_avx512, true);
}

const tc__tactic tc__tactic_gemm_f32_avx512 = {
    .name = "gemm_f32_avx512",
    .op_type = "Gemm",
    .backend = TC__BACKEND_CPU, .caps = TC__GEMM_ISA_AVX512,
    .flags = TC__TACTIC_FUSES_EPILOGUE,
    .supports = supports,
    .packs_input = tc__gemm_node_f32_packs_input,
    .pack = pack,
    .scratch_bytes = scratch_bytes,
    .run = run,
};
