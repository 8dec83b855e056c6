/*
 * attention_f32_tactic.c - tactic cuda_attention_f32: ONNX Attention (and the attention chains fuse_attention turns
 * into it) in one FP32 kernel (attention_f32.cu): float32 Q, K, V and Y, a float32 or boolean mask, every feature of
 * core/attention_geom.h that fits the kernel's shared memory (head size and KV length: TC__ATTN_SMEM_MAX). No
 * epilogue. It chains (TC__CHAIN_FP16_ROWS, engine/row16_chain.c): Q, K, V and Y may be FP16 row images.
 */
#include "backends/cuda/attention_f32.h"
#include "backends/cuda/attention_step.h"
#include "backends/cuda/dn_common.h"
#include "backends/cuda/row16.h"

/* The geometry of a step's tensors; false (with why through tc__refuse when d is given) when the kernel does not
 * take it. */
static bool geometry(const tc__step_desc *d, const tc__attrs *attrs, int n_in, const tc__tensor *const *in, int n_out,
                     const tc__tensor *const *out, tc__attn_geom *g) {
    if (!tc__cuda_attn_step_geometry(d, attrs, n_in, in, n_out, out, g)) return false;
    if (g->dv > TC__ATTN_MAX_DV) return d ? tc__refuse(d, "V head size above %d", TC__ATTN_MAX_DV) : false;
    if (tc__cuda_attn_smem(g->d, g->dv, g->l) > TC__ATTN_SMEM_MAX)
        return d ? tc__refuse(d, "head size %lld with %lld keys exceeds the kernel's shared memory", (long long)g->d,
                              (long long)g->l)
                 : false;
    return true;
}

static bool supports(const tc__step_desc *d) {
    if (!tc__epilogue_is_none(d->epi)) return tc__refuse(d, "no fused epilogue");
    if (!tc__row16_ok(d->attrs, 7u, true)) return tc__refuse(d, "FP16 row images only as Q, K, V and Y");
    tc__attn_geom g;
    return geometry(d, d->attrs, d->n_in, d->in, d->n_out, (const tc__tensor *const *)d->out, &g);
}

static tc_status run(const tc__kernel_ctx *ctx) {
    tc__cuda_attn_args a;
    tc_status st = tc__cuda_attn_step_args(ctx, "cuda_attention_f32", &a);
    if (st != TC_STATUS_OK) return st;
    if (!geometry(NULL, ctx->attrs, ctx->n_in, ctx->in, ctx->n_out, (const tc__tensor *const *)ctx->out, &a.g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "cuda_attention_f32: a step it does not take");
    const cudaError_t e = tc__cuda_attention_f32(&a, tc__cuda_stream(ctx));
    return e == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(e, ctx->err, "attention launch");
}

const tc__tactic tc__tactic_cuda_attention_f32 = {
    .name = "cuda_attention_f32",
    .op_type = "Attention",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = 0,
    .chain = TC__CHAIN_FP16_ROWS,
    .supports = supports,
    .run = run,
};
