/*
 * softmax_f32_avx2_tactic.c - tactic softmax_f32_avx2: AVX2 Softmax over contiguous rows;
 * microkernel in softmax_f32_avx2.c.
 */
#include "backends/cpu/softmax_f32.h"
#include "backends/cpu/vec_isa.h"

static tc_status run(const tc__kernel_ctx *ctx) { return tc__softmax_f32_run(ctx, tc__softmax_f32_avx2, false); }

const tc__tactic tc__tactic_softmax_f32_avx2 = {
    .name = "softmax_f32_avx2",
    .op_type = "Softmax",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2,
    .supports = tc__softmax_f32_supports,
    .run = run,
};
