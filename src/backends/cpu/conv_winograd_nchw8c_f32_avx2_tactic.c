/*
 * conv_winograd_nchw8c_f32_avx2_tactic.c - tactic conv_winograd_nchw8c_f32_avx2: Conv (2-D, 3x3, stride 1,
 * dilation 1, one group, any pads) by Winograd F(4x4, 3x3) from NCHW8c to NCHW8c, with the AVX2 6x16
 * GEMM microkernel (conv_winograd_f32.h). This file is the baseline-ISA part: which steps it takes,
 * the GEMM problem and the scratch; the transforms and run() are in conv_winograd_nchw8c_f32_avx2.c.
 * The weights are used as is (the filter is transformed in scratch at run time, as the NCHW form does).
 */
#include <string.h>

#include "backends/cpu/blocked_f32.h"
#include "backends/cpu/conv_winograd_f32.h"
#include "backends/cpu/vec_isa.h"

tc__gemm_f32_problem tc__conv_winograd_nchw8c_f32_problem(const tc__wino_geom *g) {
    tc__gemm_f32_problem p = tc__gemm_f32_problem_init(g->tiles, g->cout, g->cin);
    p.rs_a = g->cin;
    p.cs_a = 1;
    p.b_packed = true;
    p.ldc = g->cout;
    p.nb = 1;
    p.bdims[0] = 36;
    p.a_bs[0] = g->tiles * g->cin;
    p.b_bs[0] = g->cin * g->cout;
    p.c_bs[0] = g->tiles * g->cout;
    return p;
}

bool tc__conv_winograd_nchw8c_f32_supports(const tc__step_desc *d) {
    if (strcmp(d->op_type, "Conv") != 0 || d->n_in < 2 || d->n_in > 3 || d->n_out < 1) return false;
    if (!tc__blk_block_is(d->attrs, TC__LAYOUT_BLOCK_AVX2)) return false;
    const tc__tensor *x = d->in[0], *wt = d->in[1], *b = d->n_in > 2 ? d->in[2] : NULL, *y = d->out[0];
    if (x == NULL || wt == NULL || y == NULL || !tc__gemm_is_f32(wt)) return false;
    if (!tc__blk_is_blockable(x, TC__LAYOUT_BLOCK_AVX2) || !tc__blk_is_blockable(y, TC__LAYOUT_BLOCK_AVX2))
        return false;
    if (b != NULL && (!tc__gemm_is_f32(b) || b->rank != 1 || b->dims[0] != wt->dims[0])) return false;
    tc__wino_geom g;
    if (!tc__conv_winograd_f32_geometry(d->attrs, x, wt, y, &g)) return false;
    /* The epilogue: an activation and a residual of Y's shape, blocked as Y; X blocked; Y blocked. */
    if (!tc__vact_epilogue_supported(d) || (d->residual != NULL && d->epi == NULL)) return false;
    return tc__blk_layout_is(d->attrs, tc__blk_with_residual(1, d->epi), true);
}

size_t tc__conv_winograd_nchw8c_f32_scratch_bytes(const tc__step_desc *d) {
    tc__wino_geom g;
    if (!tc__conv_winograd_f32_geometry(d->attrs, d->in[0], d->in[1], d->out[0], &g)) return 0;
    const tc__gemm_f32_problem p = tc__conv_winograd_nchw8c_f32_problem(&g);
    const size_t buf = (tc__conv_winograd_f32_buffer_floats(&g) * sizeof(float) + 63) / 64 * 64;
    return buf + 64 + tc__gemm_f32_scratch_bytes(&p, &tc__gemm_config_f32_avx2, tc__gemm_tactic_max_threads()) + 64;
}

const tc__tactic tc__tactic_conv_winograd_nchw8c_f32_avx2 = {
    .name = "conv_winograd_nchw8c_f32_avx2",
    .op_type = "Conv",
    .backend = TC__BACKEND_CPU, .caps = TC__GEMM_ISA_AVX2,
    .flags = TC__TACTIC_FUSES_EPILOGUE | TC__TACTIC_BLOCKED | TC__TACTIC_BLOCK8,
    .supports = tc__conv_winograd_nchw8c_f32_supports,
    .packs_input = NULL,
    .pack = NULL,
    .scratch_bytes = tc__conv_winograd_nchw8c_f32_scratch_bytes,
    .run = tc__conv_winograd_nchw8c_f32_run_avx2,
};
