/*
 * avgpool_f32_avx512_tactic.c - tactic avgpool_f32_avx512: AVX-512 2-D AveragePool; microkernel
 * in pool2d_f32_avx512.c.
 */
#include "backends/cpu/pool_f32.h"
#include "backends/cpu/vec_isa.h"

static tc_status run(const tc__kernel_ctx *ctx) { return tc__pool_f32_run(ctx, tc__avgpool_f32_rows_avx512); }

const tc__tactic tc__tactic_avgpool_f32_avx512 = {
    .name = "avgpool_f32_avx512",
    .op_type = "AveragePool",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX512,
    .supports = tc__avgpool_f32_supports,
    .run = run,
};
