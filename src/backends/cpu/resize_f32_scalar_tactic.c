/* resize_f32_scalar_tactic.c - tactic resize_f32_scalar: scalar float32 Resize of the last two dims (nearest,
 * bilinear); operator in resize_f32.c, row microkernels in resize_f32.c. */
#include "backends/cpu/resize_f32.h"
#include "backends/cpu/vec_isa.h"

static tc_status run(const tc__kernel_ctx *ctx) { return tc__resize_f32_run(ctx, &tc__resize_f32_scalar); }

const tc__tactic tc__tactic_resize_f32_scalar = {
    .name = "resize_f32_scalar",
    .op_type = "Resize",
    .backend = TC__BACKEND_CPU, .caps = 0,
    .supports = tc__resize_f32_supports,
    .scratch_bytes = tc__resize_f32_scratch_bytes,
    .run = run,
};
