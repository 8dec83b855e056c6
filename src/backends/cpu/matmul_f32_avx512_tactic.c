/*
 * matmul_f32_avx512_tactic.c - tactic matmul_f32_avx512: MatMul with a constant B packed at build
 * into 32-column panels; A at run time, any batch dims. Microkernel: AVX-512 14x32. Its configurations are the
 * GEMM's MC / NC blockings (tc__gemm_blocking: the cache-derived caps halved 0-3 times), which the tuner times as
 * separate candidates; results do not depend on them.
 */
#include "backends/cpu/gemm_tactics.h"

static bool supports(const tc__step_desc *d) { return tc__matmul_node_f32_supports(d, true); }

static tc_status pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    return tc__matmul_node_f32_pack(d, index, src, dst, err, &tc__gemm_config_f32_avx512);
}

static size_t scratch_bytes(const tc__step_desc *d) {
    return tc__matmul_node_f32_scratch_bytes(d, &tc__gemm_config_f32_avx512, true);
}

static tc_status run(const tc__kernel_ctx *ctx) {
    return tc__matmul_node_f32_run(ctx, &tc__gemm_config_f32_avx512, true);
}

static int configs(const tc__step_desc *d, void *out, int cap) {
    return tc__matmul_node_f32_configs(d, &tc__gemm_config_f32_avx512, true, out, cap);
}

const tc__tactic tc__tactic_matmul_f32_avx512 = {
    .name = "matmul_f32_avx512",
    .op_type = "MatMul",
    .backend = TC__BACKEND_CPU, .caps = TC__GEMM_ISA_AVX512,
    .flags = TC__TACTIC_FUSES_EPILOGUE,
    .supports = supports,
    .packs_input = tc__matmul_node_f32_packs_input,
    .pack = pack,
    .scratch_bytes = scratch_bytes,
    .run = run,
    .config_bytes = sizeof(tc__gemm_blocking),
    .configs = configs,
    .check_config = tc__gemm_blocking_check,
};
