/*
 * attention_fp16_tactic.c - tactic cuda_attention_fp16_mma: ONNX Attention (and the chains fuse_attention turns into
 * it) on FP16 Tensor Cores (attention_fp16.cu) for steps the --fp16 build marked tc.fp16 (engine_build.c marks the
 * fused attention nodes; --layer-precision NAME:fp32 keeps one FP32): equal head sizes 16..128 in steps of 16, float
 * or boolean masks, causal, scale, the NaN guard to 0; no softcap, no epilogue. The tuner times it against
 * cuda_attention_f32. It chains (TC__CHAIN_FP16_ROWS, engine/row16_chain.c): Q, K, V and Y may be FP16 row images.
 */
#include "backends/cuda/attention_fp16.h"
#include "backends/cuda/attention_step.h"
#include "backends/cuda/dn_common.h"
#include "backends/cuda/row16.h"
#include "core/quant_attr.h"

/* The geometry of a step's tensors; false (with why through tc__refuse when d is given) when the kernel does not
 * take it. */
static bool geometry(const tc__step_desc *d, const tc__attrs *attrs, int n_in, const tc__tensor *const *in, int n_out,
                     const tc__tensor *const *out, tc__attn_geom *g) {
    if (!tc__cuda_attn_step_geometry(d, attrs, n_in, in, n_out, out, g)) return false;
    if (!tc__cuda_attn16_shape_ok(g->d, g->dv))
        return d ? tc__refuse(d, "head sizes %lld / %lld: equal, 16..%d in steps of 16 only", (long long)g->d,
                              (long long)g->dv, TC__ATTN16_MAX_D)
                 : false;
    if (g->softcap > 0.0f || (g->nan_guard && g->nan_to != 0.0f))
        return d ? tc__refuse(d, "no softcap, no NaN guard other than to 0") : false;
    return true;
}

static bool supports(const tc__step_desc *d) {
    if (tc__attr_int(d->attrs, TC__ATTR_FP16, 0) != 1)
        return tc__refuse(d, "not marked FP16 by the --fp16 build (or the layer kept FP32)");
    if (!tc__epilogue_is_none(d->epi)) return tc__refuse(d, "no fused epilogue");
    if (!tc__row16_ok(d->attrs, 7u, true)) return tc__refuse(d, "FP16 row images only as Q, K, V and Y");
    tc__attn_geom g;
    return geometry(d, d->attrs, d->n_in, d->in, d->n_out, (const tc__tensor *const *)d->out, &g);
}

static tc_status run(const tc__kernel_ctx *ctx) {
    tc__cuda_attn_args a;
    tc_status st = tc__cuda_attn_step_args(ctx, "cuda_attention_fp16_mma", &a);
    if (st != TC_STATUS_OK) return st;
    if (!geometry(NULL, ctx->attrs, ctx->n_in, ctx->in, ctx->n_out, (const tc__tensor *const *)ctx->out, &a.g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "cuda_attention_fp16_mma: a step it does not take");
    const cudaError_t e = tc__cuda_attention_fp16(&a, tc__cuda_stream(ctx));
    return e == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(e, ctx->err, "FP16 attention launch");
}

const tc__tactic tc__tactic_cuda_attention_fp16_mma = {
    .name = "cuda_attention_fp16_mma",
    .op_type = "Attention",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = 0,
    .chain = TC__CHAIN_FP16_ROWS,
    .precision = "fp16",
    .supports = supports,
    .run = run,
};
