/*
 * matmul_node_f32.c - MatMul (NumPy matmul semantics: 1-D promotion, batch broadcasting) on the
 * FP32 GEMM operator, shared by the matmul_f32_<isa> (constant B packed at build) and
 * matmul_dyn_f32_<isa> (B at run time) tactics. When B has no batch dims of its own and A is not
 * broadcast, the batch folds into M (one larger GEMM).
 */
#include <string.h>

#include "backends/cpu/gemm_tactics.h"
#include "backends/cpu/matmul_geom.h"
#include "core/fused_attr.h"

/* True when the batch can fold into M: B is shared by every batch matrix, A is not broadcast, and
 * nothing is read or written through a view. */
static bool mm_folds(const tc__mm_geom *g) {
    if (g->nb == 0 || g->bias_rows || g->views) return false;
    for (int i = 0; i < g->nb; i++)
        if (g->b_bs[i] != 0 || (g->batch[i] > 1 && g->a_bs[i] == 0)) return false;
    return true;
}

bool tc__matmul_node_f32_supports(const tc__step_desc *d, bool packed_b) {
    if (strcmp(d->op_type, "MatMul") != 0 || d->n_in != 2 || d->n_out < 1) return false;
    const tc__tensor *a = d->in[0], *b = d->in[1], *y = d->out[0];
    if (!tc__gemm_is_f32(a) || !tc__gemm_is_f32(b) || !tc__gemm_is_f32(y)) return false;
    const bool b_const = d->in_const != NULL && d->in_const[1];
    if (packed_b && !b_const) return false;
    tc__mm_geom g;
    if (!tc__mm_geometry(d->attrs, a, b, y, &g)) return false;
    /* A constant B is packed at build time from its storage as is: no view of it. */
    const bool b_view = tc__attr_has(d->attrs, TC__ATTR_MM_B_PERM);
    if (packed_b && b_view) return false;
    const int64_t last = y->rank > 0 ? y->dims[y->rank - 1] : 1;
    if (!tc__gemm_epilogue_ok(d, last)) return false;
    /* A run-time-B tactic on a constant B that its packed twin (the same microkernel: matmul_f32_<isa>) takes would
     * pack the same panels into scratch on every run. The tuner, timing one step with its weight hot in the caches,
     * cannot see that cost when the weights stream from memory in the model (BERT-base at 16 tokens: static plans
     * that chose it ran 0.77x as fast as packed ones): leave the step to the twin. */
    if (!packed_b && b_const && !b_view)
        return tc__refuse(d, "B is constant: the packed tactic of this microkernel packs it once at build time");
    return true;
}

bool tc__matmul_node_f32_packs_input(const tc__step_desc *d, int index) { return index == 1; }

tc_status tc__matmul_node_f32_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err,
                                   const tc__gemm_config *cfg) {
    const tc__tensor *b = d->in[1];
    if (index != 1 || !tc__gemm_is_f32(b))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "MatMul packs only a float32 input B");
    const int rb = b->rank;
    const size_t k = rb == 1 ? (size_t)b->dims[0] : (size_t)b->dims[rb - 2], n = rb == 1 ? 1 : (size_t)b->dims[rb - 1];
    size_t mats = 1;
    for (int i = 0; i + 2 < rb; i++)
        mats *= (size_t)b->dims[i];
    for (size_t t = 0; t < mats; t++)
        tc__gemm_pack_b_f32(k, n, cfg->nr, (const float *)src + t * k * n, n, 1, (float *)dst + t * k * n);
    return TC_STATUS_OK;
}

/* The GEMM problem of a MatMul (pointers from the tensors, which may be shape-only for sizing). */
static tc__gemm_f32_problem mm_problem(const tc__mm_geom *g, const tc__tensor *a, const tc__tensor *b, tc__tensor *y,
                                       const tc__tensor *bias, const tc__tensor *res, bool packed_b) {
    tc__gemm_f32_problem p = tc__gemm_f32_problem_init(g->m, g->n, g->k);
    p.a = a->data;
    p.b = b->data;
    p.b_packed = packed_b;
    p.c = y->data;
    p.epi.alpha = g->alpha;
    if (bias != NULL) {
        if (g->bias_rows)
            p.epi.bias_m = bias->data;
        else
            p.epi.bias_n = bias->data;
    }
    if (res != NULL) { /* the residual has Y's shape: it is read where C is written */
        p.epi.res = res->data;
        p.epi.ld_res = g->ldc;
    }
    if (mm_folds(g)) {
        p.m = g->m * g->n_batch;
        return p;
    }
    p.rs_a = g->rs_a;
    p.cs_a = g->cs_a;
    if (!packed_b) {
        p.rs_b = g->rs_b;
        p.cs_b = g->cs_b;
    }
    p.ldc = g->ldc;
    p.nb = g->nb;
    for (int i = 0; i < g->nb; i++) {
        p.bdims[i] = g->batch[i];
        p.a_bs[i] = g->a_bs[i];
        p.b_bs[i] = g->b_bs[i]; /* (a packed B has its storage's size and batch strides) */
        p.c_bs[i] = p.res_bs[i] = g->c_bs[i];
    }
    return p;
}

size_t tc__matmul_node_f32_scratch_bytes(const tc__step_desc *d, const tc__gemm_config *cfg, bool packed_b) {
    tc__mm_geom g;
    if (!tc__mm_geometry(d->attrs, d->in[0], d->in[1], d->out[0], &g)) return 0;
    tc__gemm_f32_problem p = mm_problem(&g, d->in[0], d->in[1], (tc__tensor *)d->out[0], NULL, NULL, packed_b);
    return tc__gemm_f32_scratch_bytes(&p, cfg, tc__gemm_tactic_max_threads());
}

tc_status tc__matmul_node_f32_run(const tc__kernel_ctx *ctx, const tc__gemm_config *cfg, bool packed_b) {
    if (ctx->n_in < 2 || ctx->n_out < 1 || !tc__gemm_is_f32(ctx->in[0]) || !tc__gemm_is_f32(ctx->in[1]) ||
        !tc__gemm_is_f32(ctx->out[0]))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "MatMul expects float32 A, B and Y");
    tc__mm_geom g;
    if (!tc__mm_geometry(ctx->attrs, ctx->in[0], ctx->in[1], ctx->out[0], &g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "MatMul shapes do not match");
    tc__gemm_f32_problem p = mm_problem(&g, ctx->in[0], ctx->in[1], ctx->out[0], ctx->bias, ctx->residual, packed_b);
    const tc__gemm_epi e = tc__gemm_epi_from_ctx(ctx);
    p.epi.act = e.act;
    p.epi.act_alpha = e.act_alpha;
    p.epi.act_beta = e.act_beta;
    tc__gemm_blocking_apply(&p, ctx->config);
    return tc__gemm_f32_run(&p, cfg, ctx);
}

int tc__matmul_node_f32_configs(const tc__step_desc *d, const tc__gemm_config *cfg, bool packed_b, void *out, int cap) {
    tc__mm_geom g;
    if (!tc__mm_geometry(d->attrs, d->in[0], d->in[1], d->out[0], &g)) return 0;
    const tc__gemm_f32_problem p = mm_problem(&g, d->in[0], d->in[1], (tc__tensor *)d->out[0], NULL, NULL, packed_b);
    tc__gemm_blocking b[TC__TACTIC_MAX_CONFIGS];
    const int n = tc__gemm_f32_blockings(&p, cfg, b, cap < TC__TACTIC_MAX_CONFIGS ? cap : TC__TACTIC_MAX_CONFIGS);
    memcpy(out, b, sizeof b[0] * (size_t)(n > 0 ? n : 0));
    return n;
}
