/*
 * conv_winograd_nchwc_f32_tactic.c - tactics conv_winograd_nchw8c_f32_avx2 and conv_wino_nchw16c_f32_avx512:
 * Conv (2-D, 3x3, stride 1, dilation 1, one group, any pads) by Winograd F(4x4, 3x3) from a blocked layout to the
 * same one (NCHW8c with the AVX2 6x16 GEMM microkernel, NCHW16c with the AVX-512 14x32 one), the conv bias, the
 * residual and the activation fused (conv_winograd_f32.h). This file is the baseline-ISA part: which steps they
 * take, the GEMM problem, the scratch and the NCHW16c weight packing; the transforms and run() are in
 * conv_winograd_nchwc_f32_body.h (conv_winograd_nchw8c_f32_avx2.c, conv_wino_nchw16c_f32_avx512.c).
 * The NCHW16c tactic packs the transformed filter U (4x the weight's bytes) into the plan at build; the NCHW8c
 * one uses W as is and transforms it in scratch at every run (as the NCHW form does).
 */
#include <string.h>

#include "backends/cpu/blocked_f32.h"
#include "backends/cpu/conv_winograd_f32.h"
#include "backends/cpu/vec_isa.h"

tc__gemm_f32_problem tc__conv_winograd_nchwc_f32_problem(const tc__wino_geom *g) {
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

size_t tc__conv_winograd_nchwc_f32_u_floats(const tc__wino_geom *g) { return 36 * g->cin * g->cout; }
size_t tc__conv_winograd_nchwc_f32_vm_floats(const tc__wino_geom *g) { return 36 * g->tiles * (g->cin + g->cout); }

/* Packed U of more floats than this (2 MiB, a core's L2) needs at least WC_MIN_TILES_BIG_U tiles per image. */
#define WC_BIG_U_FLOATS (((size_t)2 << 20) / sizeof(float))
#define WC_MIN_TILES_BIG_U 32

/* The step's Conv in blocks of `block` channels, C_in and C_out multiples of it; with a constant W when packed. */
static bool wc_supports(const tc__step_desc *d, int64_t block, bool packs_w) {
    if (strcmp(d->op_type, "Conv") != 0 || d->n_in < 2 || d->n_in > 3 || d->n_out < 1) return false;
    if (!tc__blk_block_is(d->attrs, block)) return false;
    const tc__tensor *x = d->in[0], *wt = d->in[1], *b = d->n_in > 2 ? d->in[2] : NULL, *y = d->out[0];
    if (x == NULL || wt == NULL || y == NULL || !tc__gemm_is_f32(wt)) return false;
    if (packs_w && (d->in_const == NULL || !d->in_const[1] || wt->data == NULL)) return false;
    if (!tc__blk_is_blockable(x, block) || !tc__blk_is_blockable(y, block)) return false;
    if (b != NULL && (!tc__gemm_is_f32(b) || b->rank != 1 || b->dims[0] != wt->dims[0])) return false;
    tc__wino_geom g;
    if (!tc__conv_winograd_f32_geometry(d->attrs, x, wt, y, &g)) return false;
    /* A packed U larger than a core's L2 streams from memory at every run; on a small plane (few tiles) each of its
     * floats then feeds too few multiply-adds to pay for reading 4x the weight's bytes. ResNet-50's 14x14 layers (16
     * tiles, U of 9.4 MB) took 1.30 ms against the direct conv's 1.25 in the model, though the tuner's warm loop
     * (U in cache) timed them faster: refused, as the tuner cannot see it. */
    if (packs_w && g.tiles < WC_MIN_TILES_BIG_U && tc__conv_winograd_nchwc_f32_u_floats(&g) > WC_BIG_U_FLOATS) return false;
    /* The epilogue: an activation and a residual of Y's shape, blocked as Y; X blocked; Y blocked. */
    if (!tc__vact_epilogue_supported(d) || (d->residual != NULL && d->epi == NULL)) return false;
    return tc__blk_layout_is(d->attrs, tc__blk_with_residual(1, d->epi), true);
}

bool tc__conv_winograd_nchw8c_f32_supports(const tc__step_desc *d) {
    return wc_supports(d, TC__LAYOUT_BLOCK_AVX2, false);
}
bool tc__conv_winograd_nchw16c_f32_supports(const tc__step_desc *d) { return wc_supports(d, TC__LAYOUT_BLOCK, true); }

static size_t wc_scratch_bytes(const tc__step_desc *d, const tc__gemm_config *cfg) {
    tc__wino_geom g;
    if (!tc__conv_winograd_f32_geometry(d->attrs, d->in[0], d->in[1], d->out[0], &g)) return 0;
    const tc__gemm_f32_problem p = tc__conv_winograd_nchwc_f32_problem(&g);
    const size_t floats = tc__conv_winograd_nchwc_f32_u_floats(&g) + tc__conv_winograd_nchwc_f32_vm_floats(&g);
    const size_t buf = (floats * sizeof(float) + 63) / 64 * 64;
    return buf + 64 + tc__gemm_f32_scratch_bytes(&p, cfg, tc__gemm_tactic_max_threads()) + 64;
}

size_t tc__conv_winograd_nchw8c_f32_scratch_bytes(const tc__step_desc *d) {
    return wc_scratch_bytes(d, &tc__gemm_config_f32_avx2);
}
size_t tc__conv_wino_nchw16c_f32_buffer_floats(const tc__wino_geom *g) {
    return 36 * tc__gemm_config_f32_avx512.mr * (g->cin + g->cout);
}

/* NCHW16c runs fused per block of tiles: a V and M buffer per thread (conv_wino_nchw16c_f32_avx512.c). */
static size_t wc16_scratch_bytes(const tc__step_desc *d) {
    tc__wino_geom g;
    if (!tc__conv_winograd_f32_geometry(d->attrs, d->in[0], d->in[1], d->out[0], &g)) return 0;
    const size_t floats = tc__gemm_tactic_max_threads() * tc__conv_wino_nchw16c_f32_buffer_floats(&g);
    return (floats * sizeof(float) + 63) / 64 * 64 + 64;
}

/* NCHW16c: W only, as U[e] (C_in x C_out in the AVX-512 GEMM's NR-column panels), e = 0..35. */
static bool wc16_packs_input(const tc__step_desc *d, int index) {
    return index == 1 && wc_supports(d, TC__LAYOUT_BLOCK, true);
}

static size_t wc16_packed_bytes(const tc__step_desc *d, int index) {
    tc__wino_geom g;
    if (index != 1 || !tc__conv_winograd_f32_geometry(d->attrs, d->in[0], d->in[1], d->out[0], &g)) return 0;
    return tc__conv_winograd_nchwc_f32_u_floats(&g) * sizeof(float);
}

static tc_status wc16_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    tc__wino_geom g;
    if (index != 1 || !wc_supports(d, TC__LAYOUT_BLOCK, true) ||
        !tc__conv_winograd_f32_geometry(d->attrs, d->in[0], d->in[1], d->out[0], &g))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                        "conv_wino_nchw16c_f32_avx512 packs only the weight W of a Conv it supports");
    tc__conv_winograd_nchw16c_f32_pack_avx512(&g, src, dst, tc__gemm_config_f32_avx512.nr);
    return TC_STATUS_OK;
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

const tc__tactic tc__tactic_conv_wino_nchw16c_f32_avx512 = {
    .name = "conv_wino_nchw16c_f32_avx512",
    .op_type = "Conv",
    .backend = TC__BACKEND_CPU, .caps = TC__GEMM_ISA_AVX512,
    .flags = TC__TACTIC_FUSES_EPILOGUE | TC__TACTIC_BLOCKED,
    .supports = tc__conv_winograd_nchw16c_f32_supports,
    .packs_input = wc16_packs_input,
    .pack = wc16_pack,
    .packed_bytes = wc16_packed_bytes,
    .scratch_bytes = wc16_scratch_bytes,
    .run = tc__conv_winograd_nchw16c_f32_run_avx512,
};
