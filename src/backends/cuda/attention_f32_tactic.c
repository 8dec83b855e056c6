/*
 * attention_f32_tactic.c - tactic cuda_attention_f32: ONNX Attention (and the attention chains fuse_attention turns
 * into it) in one FP32 kernel (attention_f32.cu): float32 Q, K, V and Y, a float32 or boolean mask, every feature of
 * core/attention_geom.h that fits the kernel's shared memory (head size and KV length: TC__ATTN_SMEM_MAX). No
 * epilogue. It chains (TC__CHAIN_FP16_ROWS, engine/row16_chain.c): Q, K, V and Y may be FP16 row images.
 */
#include "backends/cuda/attention_f32.h"
#include "backends/cuda/dn_common.h"
#include "backends/cuda/row16.h"

/* The geometry of a step's tensors; false (with why through tc__refuse when d is given) when the kernel does not
 * take it. */
static bool geometry(const tc__step_desc *d, const tc__attrs *attrs, int n_in, const tc__tensor *const *in, int n_out,
                     const tc__tensor *const *out, tc__attn_geom *g) {
    if (n_in < 3 || n_in > 4 || n_out != 1 || out[0] == NULL || in[0] == NULL || in[1] == NULL || in[2] == NULL)
        return d ? tc__refuse(d, "expects Q, K, V, an optional mask and the one output Y") : false;
    const tc__tensor *q = in[0], *k = in[1], *v = in[2], *m = n_in > 3 ? in[3] : NULL, *y = out[0];
    if (q->dtype != TC_DTYPE_FLOAT32 || k->dtype != TC_DTYPE_FLOAT32 || v->dtype != TC_DTYPE_FLOAT32 ||
        y->dtype != TC_DTYPE_FLOAT32 || (m != NULL && m->dtype != TC_DTYPE_FLOAT32 && m->dtype != TC_DTYPE_BOOL))
        return d ? tc__refuse(d, "float32 Q, K, V and Y, a float32 or boolean mask") : false;
    tc__err err = {0};
    if (tc__attn_geometry(attrs, q->rank, q->dims, k->rank, k->dims, v->rank, v->dims, m ? m->rank : 0,
                          m ? m->dims : NULL, m != NULL && m->dtype == TC_DTYPE_BOOL, g, &err) != TC_STATUS_OK)
        return d ? tc__refuse(d, "%s", err.msg) : false;
    if (g->dv > TC__ATTN_MAX_DV) return d ? tc__refuse(d, "V head size above %d", TC__ATTN_MAX_DV) : false;
    if (tc__cuda_attn_smem(g->d, g->dv, g->l) > TC__ATTN_SMEM_MAX)
        return d ? tc__refuse(d, "head size %lld with %lld keys exceeds the kernel's shared memory", (long long)g->d,
                              (long long)g->l)
                 : false;
    if (g->b * g->hq > 65535) return d ? tc__refuse(d, "more than 65535 batch x heads") : false;
    return true;
}

static bool supports(const tc__step_desc *d) {
    if (!tc__epilogue_is_none(d->epi)) return tc__refuse(d, "no fused epilogue");
    if (!tc__row16_ok(d->attrs, 7u, true)) return tc__refuse(d, "FP16 row images only as Q, K, V and Y");
    tc__attn_geom g;
    return geometry(d, d->attrs, d->n_in, d->in, d->n_out, (const tc__tensor *const *)d->out, &g);
}

static tc_status run(const tc__kernel_ctx *ctx) {
    tc__cuda_attn_args a = {0};
    if (!geometry(NULL, ctx->attrs, ctx->n_in, ctx->in, ctx->n_out, (const tc__tensor *const *)ctx->out, &a.g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "cuda_attention_f32: a step it does not take");
    a.q = ctx->in[0]->data;
    a.k = ctx->in[1]->data;
    a.v = ctx->in[2]->data;
    a.mask = ctx->n_in > 3 && ctx->in[3] != NULL ? ctx->in[3]->data : NULL;
    a.y = ctx->out[0]->data;
    a.q16 = tc__row16_in(ctx->attrs, 0);
    a.k16 = tc__row16_in(ctx->attrs, 1);
    a.v16 = tc__row16_in(ctx->attrs, 2);
    a.y16 = tc__row16_out(ctx->attrs);
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
