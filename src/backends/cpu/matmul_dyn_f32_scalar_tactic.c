/*
 * matmul_dyn_f32_scalar_tactic.c - tactic matmul_dyn_f32_scalar: MatMul with B at run time (e.g.
 * attention Q.K^T), NumPy batch broadcasting; B tiles packed into scratch. Microkernel: portable
 * scalar 4x8.
 */
#include "backends/cpu/gemm_tactics.h"

static bool supports(const tc__step_desc *d) { return tc__matmul_node_f32_supports(d, false); }

static size_t scratch_bytes(const tc__step_desc *d) {
    return tc__matmul_node_f32_scratch_bytes(d, &tc__gemm_config_f32_scalar, false);
}

static tc_status run(const tc__kernel_ctx *ctx) {
    return tc__matmul_node_f32_run(ctx, &tc__gemm_config_f32_scalar, false);
}

const tc__tactic tc__tactic_matmul_dyn_f32_scalar = {
    .name = "matmul_dyn_f32_scalar",
    .op_type = "MatMul",
    .backend = TC__BACKEND_CPU, .caps = 0,
    .flags = TC__TACTIC_FUSES_EPILOGUE,
    .supports = supports,
    .scratch_bytes = scratch_bytes,
    .run = run,
};
