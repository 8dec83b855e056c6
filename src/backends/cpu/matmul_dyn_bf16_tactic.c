/*
 * matmul_dyn_bf16_tactic.c - tactic matmul_dyn_bf16_avx512bf16: a MatMul whose operands are both computed at run
 * time (attention's Q.K^T and P.V, read through fuse_matmul_views' permutations and scaled by its alpha) in BF16
 * with FP32 sums (matmul_dyn_bf16.h), for the steps the precision pass marked tc.bf16 (--bf16); the tuner keeps it
 * where it is faster than the FP32 tactics. No fused bias, residual or activation.
 */
#include "core/thread_pool.h"
#include <stdint.h>
#include <string.h>

#include "backends/cpu/gemm_tactics.h"
#include "backends/cpu/matmul_dyn_bf16.h"
#include "backends/cpu/vec_isa.h"
#include "core/quant_attr.h"

#define MMB_MAX_ELEMS ((size_t)1 << 22) /* K x N (rounded to 16 columns) at most: 8 MiB of packed B per thread */

static bool mmb_geometry(const tc__step_desc *d, tc__mm_geom *g) {
    if (strcmp(d->op_type, "MatMul") != 0 || d->n_in != 2 || d->n_out < 1) return false;
    const tc__tensor *a = d->in[0], *b = d->in[1], *y = d->out[0];
    if (!tc__gemm_is_f32(a) || !tc__gemm_is_f32(b) || !tc__gemm_is_f32(y) || a->rank < 2 || b->rank < 2) return false;
    if (d->in_const != NULL && (d->in_const[0] || d->in_const[1])) return false; /* a constant B: the hconv tactics */
    if (tc__attr_int(d->attrs, TC__ATTR_BF16, 0) != 1 || !tc__mm_geometry(d->attrs, a, b, y, g)) return false;
    /* the gathers' 32-bit element offsets (15 strides), and a bounded scratch */
    if (g->cs_a > (size_t)INT32_MAX / 16 || g->cs_b > (size_t)INT32_MAX / 16) return false;
    return g->k <= MMB_MAX_ELEMS && (g->n + 15) / 16 * 16 <= MMB_MAX_ELEMS / (g->k + 1);
}

static bool supports(const tc__step_desc *d) {
    tc__mm_geom g;
    return mmb_geometry(d, &g) && (d->epi == NULL || tc__epilogue_is_none(d->epi)) && d->bias == NULL &&
           d->residual == NULL;
}

static size_t scratch_bytes(const tc__step_desc *d) {
    tc__mm_geom g;
    if (!mmb_geometry(d, &g)) return 0;
    return tc__gemm_tactic_max_threads() * tc__mmb_slot_bytes(&g) + 64;
}

static tc_status run(const tc__kernel_ctx *ctx) {
    tc__mm_geom g;
    if (ctx->n_in < 2 || ctx->n_out < 1 || !tc__gemm_is_f32(ctx->in[0]) || !tc__gemm_is_f32(ctx->in[1]) ||
        !tc__gemm_is_f32(ctx->out[0]) || !tc__mm_geometry(ctx->attrs, ctx->in[0], ctx->in[1], ctx->out[0], &g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "MatMul: shapes the bf16 kernel does not take");
    const size_t threads = ctx->exec ? tc__pool_get_threads_count((tc__pool_t)ctx->exec) : 1;
    const size_t slot = tc__mmb_slot_bytes(&g);
    size_t slots = threads ? threads : 1;
    unsigned char *mem = NULL;
    for (; slots >= 1; slots--) /* as many slots as threads, or as fit in the scratch (sized for the CPUs) */
        if ((mem = tc__kernel_alloc(ctx, slots * slot)) != NULL) break;
    if (mem == NULL) return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "MatMul: no scratch for the bf16 operands");
    tc__mmb_run_avx512bf16(&g, ctx->in[0]->data, ctx->in[1]->data, ctx->out[0]->data, ctx->exec, slots, mem);
    tc__kernel_free(ctx, mem);
    return TC_STATUS_OK;
}

const tc__tactic tc__tactic_matmul_dyn_bf16_avx512bf16 = {
    .name = "matmul_dyn_bf16_avx512bf16",
    .op_type = "MatMul",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX512 | (uint64_t)TC__ISA_AVX512BF16,
    .precision = "bf16",
    .supports = supports,
    .scratch_bytes = scratch_bytes,
    .run = run,
};
