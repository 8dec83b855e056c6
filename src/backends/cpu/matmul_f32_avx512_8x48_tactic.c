/*
 * matmul_f32_avx512_8x48_tactic.c - tactic matmul_f32_avx512_8x48: MatMul with a constant B packed
 * at build into 48-column panels; A at run time, any batch dims. Microkernel: AVX-512 8x48, which
 * tiles BERT's 128 x 768 / 3072 products exactly; the tuner times it against matmul_f32_avx512.
 */
#include "backends/cpu/gemm_tactics.h"

static bool supports(const tc__step_desc *d) { return tc__matmul_node_f32_supports(d, true); }

static tc_status pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    return tc__matmul_node_f32_pack(d, index, src, dst, err, &tc__gemm_config_f32_avx512_8x48);
}

static size_t scratch_bytes(const tc__step_desc *d) {
    return tc__matmul_node_f32_scratch_bytes(d, &tc__gemm_config_f32_avx512_8x48, true);
}

static tc_status run(const tc__kernel_ctx *ctx) {
    return tc__matmul_node_f32_run(ctx, &tc__gemm_config_f32_avx512_8x48, true);
}

const tc__tactic tc__tactic_matmul_f32_avx512_8x48 = {
    .name = "matmul_f32_avx512_8x48",
    .op_type = "MatMul",
    .backend = TC__BACKEND_CPU, .caps = TC__GEMM_ISA_AVX512,
    .flags = TC__TACTIC_FUSES_EPILOGUE,
    .supports = supports,
    .packs_input = tc__matmul_node_f32_packs_input,
    .pack = pack,
    .scratch_bytes = scratch_bytes,
    .run = run,
};
