/*
 * layernorm_f32_avx512_tactic.c - tactic layernorm_f32_avx512: AVX-512 LayerNormalization
 * without statistics outputs; microkernel in layernorm_f32_avx512.c.
 */
#include "backends/cpu/layernorm_f32.h"
#include "backends/cpu/vec_isa.h"

static tc_status run(const tc__kernel_ctx *ctx) { return tc__layernorm_f32_run(ctx, tc__layernorm_f32_avx512); }

const tc__tactic tc__tactic_layernorm_f32_avx512 = {
    .name = "layernorm_f32_avx512",
    .op_type = "LayerNormalization",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX512,
    .supports = tc__layernorm_f32_supports,
    .run = run,
};
