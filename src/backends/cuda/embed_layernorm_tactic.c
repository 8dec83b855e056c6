/*
 * embed_layernorm_tactic.c - tactic cuda_embed_layernorm: TcEmbedLayerNorm (ids int32/int64, table [V, D], addend
 * [S, D] or none, scale [D], bias [D], all float32; D <= TC__EMBED_LN_MAX_D) in one kernel (embed_layernorm.h), the
 * embedding layer of a transformer: the gather, the position / token-type addend and the LayerNorm. It chains
 * (TC__CHAIN_FP16_ROWS, engine/row16_chain.c): Y may be an FP16 row image (the first layer's QKV GEMM reads it as is).
 */
#include <string.h>

#include "backends/cuda/dn_common.h"
#include "backends/cuda/embed_layernorm.h"
#include "backends/cuda/row16.h"

static bool is_f32(const tc__tensor *t) { return t != NULL && t->dtype == TC_DTYPE_FLOAT32; }

static bool args_of(const tc__attrs *attrs, int n_in, const tc__tensor *const *in, int n_out,
                    const tc__tensor *const *out, tc__cuda_embed_ln_args *p) {
    memset(p, 0, sizeof *p);
    if (n_in < 4 || n_in > 5 || n_out < 1 || in[0] == NULL || in[1] == NULL || in[2] == NULL || in[3] == NULL ||
        out[0] == NULL)
        return false;
    const tc__tensor *ids = in[0], *table = in[1], *add = n_in > 4 ? in[4] : NULL, *y = out[0];
    if ((ids->dtype != TC_DTYPE_INT64 && ids->dtype != TC_DTYPE_INT32) || !is_f32(table) || !is_f32(in[2]) ||
        !is_f32(in[3]) || (add != NULL && !is_f32(add)) || !is_f32(y))
        return false;
    if (table->rank != 2 || ids->rank < 1 || y->rank != ids->rank + 1) return false;
    const int64_t d = table->dims[1], s = ids->dims[ids->rank - 1];
    for (int32_t i = 0; i < ids->rank; i++)
        if (y->dims[i] != ids->dims[i]) return false;
    if (y->dims[ids->rank] != d || d < 1 || d > TC__EMBED_LN_MAX_D || table->dims[0] < 1 ||
        tc__tensor_numel(in[2]) != d || tc__tensor_numel(in[3]) != d ||
        (add != NULL && (add->rank != 2 || add->dims[0] != s || add->dims[1] != d)))
        return false;
    p->ids64 = ids->dtype == TC_DTYPE_INT64;
    p->rows = tc__tensor_numel(ids);
    p->d = d, p->v = table->dims[0], p->s = s;
    p->epsilon = tc__attr_float(attrs, "epsilon", 1e-5f);
    return true;
}

static bool supports(const tc__step_desc *d) {
    if (!tc__epilogue_is_none(d->epi)) return tc__refuse(d, "no fused epilogue");
    if (!tc__row16_ok(d->attrs, 0u, true)) return tc__refuse(d, "an FP16 row image only as Y");
    tc__cuda_embed_ln_args p;
    if (!args_of(d->attrs, d->n_in, d->in, d->n_out, d->out, &p))
        return tc__refuse(d, "int32 / int64 ids, float32 table [V, D] (D <= %d), addend [S, D], scale and bias [D]",
                          TC__EMBED_LN_MAX_D);
    return true;
}

static tc_status run(const tc__kernel_ctx *ctx) {
    tc__cuda_embed_ln_args p;
    if (!args_of(ctx->attrs, ctx->n_in, ctx->in, ctx->n_out, (const tc__tensor *const *)ctx->out, &p))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "TcEmbedLayerNorm: a step this kernel does not compute");
    if (p.rows == 0) return TC_STATUS_OK;
    p.ids = ctx->in[0]->data;
    p.table = ctx->in[1]->data;
    p.scale = ctx->in[2]->data;
    p.bias = ctx->in[3]->data;
    p.addend = ctx->n_in > 4 && ctx->in[4] != NULL ? ctx->in[4]->data : NULL;
    p.y = ctx->out[0]->data;
    p.y16 = tc__row16_out(ctx->attrs);
    p.report = tc__cuda_report_of(ctx, TC__CUDA_BAD_INDEX);
    const cudaError_t e = tc__cuda_embed_layernorm(&p, tc__cuda_stream(ctx));
    return e == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(e, ctx->err, "embedding LayerNorm launch");
}

const tc__tactic tc__tactic_cuda_embed_layernorm = {
    .name = "cuda_embed_layernorm",
    .op_type = "TcEmbedLayerNorm",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = 0,
    .chain = TC__CHAIN_FP16_ROWS,
    .supports = supports,
    .run = run,
};
