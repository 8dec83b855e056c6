/*
 * hardswish_f32_avx2_tactic.c - tactic hardswish_f32_avx2: AVX2 the HardSwish op as a standalone
 * step; microkernel in vunary_f32_avx2.c.
 */
#include "backends/cpu/vunary_f32.h"
#include "backends/cpu/vec_isa.h"

static tc_status run(const tc__kernel_ctx *ctx) { return tc__vunary_f32_run(ctx, tc__vunary_f32_avx2); }

const tc__tactic tc__tactic_hardswish_f32_avx2 = {
    .name = "hardswish_f32_avx2",
    .op_type = "HardSwish",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2,
    .flags = TC__TACTIC_ANY_LAYOUT,
    .supports = tc__vunary_f32_supports,
    .run = run,
};
