/*
 * gavgpool_f32_avx2_tactic.c - tactic gavgpool_f32_avx2: AVX2 GlobalAveragePool; microkernel in
 * gavgpool_f32_avx2.c.
 */
#include "backends/cpu/gavgpool_f32.h"
#include "backends/cpu/vec_isa.h"

static tc_status run(const tc__kernel_ctx *ctx) { return tc__gavgpool_f32_run(ctx, tc__gavgpool_f32_avx2); }

const tc__tactic tc__tactic_gavgpool_f32_avx2 = {
    .name = "gavgpool_f32_avx2",
    .op_type = "GlobalAveragePool",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2,
    .supports = tc__gavgpool_f32_supports,
    .run = run,
};
