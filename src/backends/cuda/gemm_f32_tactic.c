/*
 * gemm_f32_tactic.c - tactic cuda_gemm_f32: FP32 Gemm (transA, transB as strides, alpha, beta, the optional C
 * broadcast one way to [M, N] as a strided addend) on the GEMM of gemm_f32.cu, with the step's whole epilogue fused.
 */
#include "backends/cuda/dn_common.h"
#include "backends/cuda/gemm_f32.h"

static bool is_f32(const tc__tensor *t) { return t != NULL && t->dtype == TC_DTYPE_FLOAT32; }

/* The GEMM arguments (pointers excepted); false when the shapes do not match or C does not broadcast to [M, N]. */
static bool gemm_args(const tc__attrs *attrs, const tc__tensor *a, const tc__tensor *b, const tc__tensor *c,
                      const tc__tensor *y, tc__cuda_gemm_args *g) {
    memset(g, 0, sizeof *g);
    if (a->rank != 2 || b->rank != 2 || y->rank != 2) return false;
    const bool ta = tc__attr_int(attrs, "transA", 0) != 0, tb = tc__attr_int(attrs, "transB", 0) != 0;
    g->m = a->dims[ta ? 1 : 0];
    g->k = a->dims[ta ? 0 : 1];
    g->n = b->dims[tb ? 0 : 1];
    if (b->dims[tb ? 1 : 0] != g->k || y->dims[0] != g->m || y->dims[1] != g->n) return false;
    if (g->m < 0 || g->n < 0 || g->k < 0) return false;
    /* A stored [M, K] (or [K, M] with transA); B stored [K, N] (or [N, K]). */
    g->rs_a = ta ? 1 : a->dims[1];
    g->cs_a = ta ? a->dims[1] : 1;
    g->rs_b = tb ? 1 : b->dims[1];
    g->cs_b = tb ? b->dims[1] : 1;
    g->rs_y = g->n;
    g->cs_y = 1;
    g->cs_bias = 1; /* the bias runs along Y's last dim, N */
    g->alpha = tc__attr_float(attrs, "alpha", 1.0f);
    g->beta = tc__attr_float(attrs, "beta", 1.0f);
    g->nb = 0;
    g->n_batch = 1;
    if (c != NULL) {
        if (c->rank > 2) return false;
        const int64_t want[2] = {g->m, g->n};
        int64_t st[2] = {0, 0}, s = 1;
        for (int32_t i = c->rank - 1; i >= 0; i--) {
            const int od = 2 - c->rank + i; /* the output dim this dim of C lines up with */
            if (c->dims[i] != 1 && c->dims[i] != want[od]) return false;
            st[od] = c->dims[i] == 1 ? 0 : s;
            s *= c->dims[i];
        }
        g->rs_add = st[0];
        g->cs_add = st[1];
    }
    return true;
}

static bool supports(const tc__step_desc *d) {
    if (d->n_in < 2 || d->n_in > 3 || d->n_out < 1 || d->out[0] == NULL || d->in[0] == NULL || d->in[1] == NULL)
        return tc__refuse(d, "expects inputs A, B (optional C) and output Y");
    const tc__tensor *c = d->n_in > 2 ? d->in[2] : NULL;
    if (!is_f32(d->in[0]) || !is_f32(d->in[1]) || !is_f32(d->out[0]) || (c != NULL && !is_f32(c)))
        return tc__refuse(d, "float32 only");
    tc__cuda_gemm_args g;
    if (!gemm_args(d->attrs, d->in[0], d->in[1], c, d->out[0], &g)) return tc__refuse(d, "shapes do not match");
    return tc__dn_epilogue_ok(d);
}

static tc_status run(const tc__kernel_ctx *ctx) {
    const tc__tensor *c = ctx->n_in > 2 ? ctx->in[2] : NULL;
    if (ctx->n_in < 2 || ctx->n_out < 1 || !is_f32(ctx->in[0]) || !is_f32(ctx->in[1]) || !is_f32(ctx->out[0]) ||
        (c != NULL && !is_f32(c)))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Gemm expects float32 A, B (C) and Y");
    tc__cuda_gemm_args g;
    if (!gemm_args(ctx->attrs, ctx->in[0], ctx->in[1], c, ctx->out[0], &g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Gemm shapes do not match");
    if (tc__tensor_numel(ctx->out[0]) <= 0) return TC_STATUS_OK;
    const tc__epilogue *e = ctx->epi;
    g.a = ctx->in[0]->data;
    g.b = ctx->in[1]->data;
    g.y = ctx->out[0]->data;
    /* beta = 0 ignores C (even NaN or Inf in it), as the reference does. */
    g.addend = c != NULL && g.beta != 0.0f && tc__tensor_numel(c) > 0 ? c->data : NULL;
    g.bias = e != NULL && e->bias_input >= 0 && ctx->bias != NULL ? ctx->bias->data : NULL;
    g.residual = e != NULL && e->residual_input >= 0 && ctx->residual != NULL ? ctx->residual->data : NULL;
    g.act = tc__cuda_act_of(e);
    const tc__cuda_exec *x = ctx->exec;
    cudaError_t err = tc__cuda_gemm_f32(&g, x != NULL ? x->n_sm : 0, tc__cuda_stream(ctx));
    return err == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(err, ctx->err, "cuda_gemm_f32 launch");
}

const tc__tactic tc__tactic_cuda_gemm_f32 = {
    .name = "cuda_gemm_f32",
    .op_type = "Gemm",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = TC__TACTIC_FUSES_EPILOGUE,
    .supports = supports,
    .run = run,
};
