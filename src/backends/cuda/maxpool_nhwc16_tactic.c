/*
 * maxpool_nhwc16_tactic.c - tactic cuda_maxpool_nhwc16: MaxPool (1-D or 2-D windows as cuda_maxpool_f32 takes them,
 * no Indices output, no fused epilogue) of a device FP16 build (the step marked tc.fp16, engine_build.c) as a member
 * of the FP16 NHWC chain (TC__CHAIN_FP16_NHWC, engine/nhwc16_chain.c): with tc.nhwc16_in it reads the FP16 NHWC image
 * the convolution before it wrote, with tc.nhwc16_out it writes one for the convolutions after it, otherwise FP32
 * NCHW (maxpool_nhwc16.h). Without it ResNet's stem convolution went back to FP32 NCHW and the layer after it cast
 * again. Taken untimed where it supports a step (TC__TACTIC_CHAIN_FIRST), as the convolution of its family.
 */
#include "backends/cuda/maxpool_nhwc16.h"
#include "backends/cuda/pool_f32.h"
#include "core/quant_attr.h"

static bool attr_on(const tc__attrs *a, const char *name) { return a != NULL && tc__attr_int(a, name, 0) == 1; }

/* The kernel's record for these tensors (pointers and chain flags left empty); false when it does not compute it. */
static bool geom16(const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *y, tc__cuda_maxpool16 *m) {
    tc__cuda_pool2d p;
    if (!tc__cuda_pool_geom(attrs, true, x, y, &p) || x->dims[1] < 1) return false;
    *m = (tc__cuda_maxpool16){.n = x->dims[0], .c = x->dims[1], .h = p.h, .w = p.w_in, .oh = p.oh, .ow = p.ow,
                              .kh = p.kh, .kw = p.kw, .sh = p.sh, .sw = p.sw, .ph = p.ph, .pw = p.pw, .dh = p.dh,
                              .dw = p.dw};
    return true;
}

static bool supports(const tc__step_desc *d) {
    if (!attr_on(d->attrs, TC__ATTR_FP16)) return tc__refuse(d, "not marked FP16 (a device --fp16 build marks MaxPool)");
    if (d->n_in != 1 || d->in[0] == NULL || d->n_out < 1 || d->out[0] == NULL)
        return tc__refuse(d, "expects one input X and output Y");
    if (d->n_out > 1 && d->out[1] != NULL) return tc__refuse(d, "MaxPool's Indices output is not computed on CUDA");
    if (d->epi != NULL && (!tc__epilogue_is_none(d->epi) || d->bias != NULL || d->residual != NULL))
        return tc__refuse(d, "a fused epilogue (cuda_maxpool_f32 takes it)");
    tc__cuda_maxpool16 m;
    if (!geom16(d->attrs, d->in[0], d->out[0], &m)) return tc__refuse(d, "not a float32 1-D or 2-D MaxPool");
    return true;
}

static tc_status run(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 1 || ctx->in[0] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects input X and output Y");
    if ((ctx->n_out > 1 && ctx->out[1] != NULL) ||
        (ctx->epi != NULL && (!tc__epilogue_is_none(ctx->epi) || ctx->bias != NULL || ctx->residual != NULL)))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "cuda_maxpool_nhwc16: Indices or a fused epilogue");
    tc__cuda_maxpool16 m;
    if (!geom16(ctx->attrs, ctx->in[0], ctx->out[0], &m))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "cuda_maxpool_nhwc16: a pooling it does not compute");
    m.x = ctx->in[0]->data;
    m.y = ctx->out[0]->data;
    m.in16 = attr_on(ctx->attrs, TC__ATTR_NHWC16_IN);
    m.out16 = attr_on(ctx->attrs, TC__ATTR_NHWC16_OUT);
    return tc__cuda_fail(tc__cuda_maxpool16_run(&m, tc__cuda_stream(ctx)), ctx->err, "cuda_maxpool_nhwc16 launch");
}

const tc__tactic tc__tactic_cuda_maxpool_nhwc16 = {
    .name = "cuda_maxpool_nhwc16",
    .op_type = "MaxPool",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = TC__TACTIC_CHAIN_FIRST,
    .chain = TC__CHAIN_FP16_NHWC,
    .supports = supports,
    .run = run,
};
