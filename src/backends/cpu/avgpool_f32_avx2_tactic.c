/*
 * avgpool_f32_avx2_tactic.c - tactic avgpool_f32_avx2: AVX2 2-D AveragePool; microkernel in
 * pool2d_f32_avx2.c.
 */
#include "backends/cpu/pool_f32.h"
#include "backends/cpu/vec_isa.h"

static tc_status run(const tc__kernel_ctx *ctx) { return tc__pool_f32_run(ctx, tc__avgpool_f32_rows_avx2); }

const tc__tactic tc__tactic_avgpool_f32_avx2 = {
    .name = "avgpool_f32_avx2",
    .op_type = "AveragePool",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2,
    .supports = tc__avgpool_f32_supports,
    .run = run,
};
