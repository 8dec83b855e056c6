/* resize_f32_avx2_tactic.c - tactic resize_f32_avx2: avx2 float32 Resize of the last two dims (nearest,
 * bilinear); operator in resize_f32.c, row microkernels in resize_f32_avx2.c. */
#include "backends/cpu/resize_f32.h"
#include "backends/cpu/vec_isa.h"

static tc_status run(const tc__kernel_ctx *ctx) { return tc__resize_f32_run(ctx, &tc__resize_f32_avx2); }

const tc__tactic tc__tactic_resize_f32_avx2 = {
    .name = "resize_f32_avx2",
    .op_type = "Resize",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2,
    .supports = tc__resize_f32_supports,
    .scratch_bytes = tc__resize_f32_scratch_bytes,
    .run = run,
};
