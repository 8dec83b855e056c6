/*
 * div_f32_avx512_tactic.c - tactic div_f32_avx512: AVX-512 elementwise Div (same shape, scalar,
 * per-channel and row broadcasts, fused epilogue); microkernels in vbinary_f32_avx512.c.
 */
#include "backends/cpu/vbinary_f32.h"
#include "backends/cpu/vec_isa.h"

static tc_status run(const tc__kernel_ctx *ctx) {
    return tc__vbinary_f32_run(ctx, TC__VBINARY_DIV, &tc__vbinary_f32_ukernels_avx512);
}

const tc__tactic tc__tactic_div_f32_avx512 = {
    .name = "div_f32_avx512",
    .op_type = "Div",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX512,
    .flags = TC__TACTIC_FUSES_EPILOGUE,
    .supports = tc__vbinary_f32_supports,
    .run = run,
};
