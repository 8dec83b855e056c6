/*
 * layernorm_f32_tactic.c - tactic cuda_layernorm_f32: FP32 LayerNormalization over dims[axis:] (negative axis
 * allowed), epsilon, Scale and optional B each either of the normalised size (broadcast with equal sizes) or one
 * value; kernel in layernorm_f32.cu. Refuses the optional Mean / InvStdDev outputs, other broadcasts of Scale / B,
 * and epilogues. It chains (TC__CHAIN_FP16_ROWS, engine/row16_chain.c): X and Y may be FP16 row images.
 */
#include <string.h>

#include "backends/cuda/dn_common.h"
#include "backends/cuda/layernorm_f32.h"
#include "backends/cuda/row16.h"

/* The stride of parameter t over the normalised dims (1: one value per element, 0: one value); -1 otherwise. */
static int64_t param_stride(const tc__tensor *t, int32_t nrank, const int64_t *ndims, int64_t n) {
    int64_t st[TC_MAX_RANK];
    if (t == NULL || t->dtype != TC_DTYPE_FLOAT32 || !tc__bcast_strides(t, nrank, ndims, st)) return -1;
    const int64_t c = tc__tensor_numel(t);
    if (c == n) return 1; /* equal sizes: the broadcast is the identity */
    if (c == 1) return 0;
    return -1;
}

static bool ln_args(const tc__attrs *attrs, int n_in, const tc__tensor *const *in, int n_out,
                    const tc__tensor *const *out, tc__cuda_layernorm_args *p) {
    memset(p, 0, sizeof *p);
    if (n_in < 2 || n_in > 3 || in[0] == NULL || in[1] == NULL || n_out < 1 || out[0] == NULL) return false;
    for (int o = 1; o < n_out; o++)
        if (out[o] != NULL) return false; /* Mean / InvStdDev */
    const tc__tensor *x = in[0], *y = out[0];
    if (x->dtype != TC_DTYPE_FLOAT32 || y->dtype != TC_DTYPE_FLOAT32 || y->rank != x->rank) return false;
    const int32_t rank = x->rank;
    if (rank > TC_MAX_RANK) return false;
    for (int32_t i = 0; i < rank; i++)
        if (y->dims[i] != x->dims[i] || x->dims[i] < 0) return false;
    int64_t axis = tc__attr_int(attrs, "axis", -1);
    if (axis < -(int64_t)rank || axis >= (int64_t)rank) return false;
    if (axis < 0) axis += rank;
    int64_t outer = 1, n = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (i < axis) outer *= x->dims[i];
        else n *= x->dims[i];
    }
    const int32_t nrank = rank - (int32_t)axis;
    const int64_t ss = param_stride(in[1], nrank, x->dims + axis, n);
    const tc__tensor *b = n_in > 2 ? in[2] : NULL;
    const int64_t bs = b != NULL ? param_stride(b, nrank, x->dims + axis, n) : 0;
    if (ss < 0 || bs < 0) return false;
    p->rows = outer;
    p->n = n;
    p->scale_stride = ss;
    p->bias_stride = bs;
    p->epsilon = tc__attr_float(attrs, "epsilon", 1e-5f);
    return true;
}

static bool supports(const tc__step_desc *d) {
    if (!tc__epilogue_is_none(d->epi)) return tc__refuse(d, "no fused epilogue");
    if (!tc__row16_ok(d->attrs, 1u, true)) return tc__refuse(d, "FP16 row images only as X and Y");
    tc__cuda_layernorm_args p;
    if (!ln_args(d->attrs, d->n_in, d->in, d->n_out, d->out, &p))
        return tc__refuse(d, "float32 X and Y only, Scale / B of the normalised size or one value, no Mean or "
                             "InvStdDev outputs");
    return true;
}

static tc_status run(const tc__kernel_ctx *ctx) {
    tc__cuda_layernorm_args p;
    if (!ln_args(ctx->attrs, ctx->n_in, ctx->in, ctx->n_out, (const tc__tensor *const *)ctx->out, &p))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "LayerNormalization: a step this kernel does not compute");
    if (p.rows <= 0 || p.n <= 0) return TC_STATUS_OK;
    p.x = ctx->in[0]->data;
    p.scale = ctx->in[1]->data;
    p.bias = ctx->n_in > 2 && ctx->in[2] != NULL ? ctx->in[2]->data : NULL;
    p.y = ctx->out[0]->data;
    p.x16 = tc__row16_in(ctx->attrs, 0);
    p.y16 = tc__row16_out(ctx->attrs);
    cudaError_t e = tc__cuda_layernorm_f32(&p, tc__cuda_stream(ctx));
    return e == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(e, ctx->err, "layernorm launch");
}

const tc__tactic tc__tactic_cuda_layernorm_f32 = {
    .name = "cuda_layernorm_f32",
    .op_type = "LayerNormalization",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = 0,
    .chain = TC__CHAIN_FP16_ROWS,
    .supports = supports,
    .run = run,
};
