/*
 * conv_f32_tactic.c - tactic cuda_conv_f32: FP32 Conv on NCHW, 1-D or 2-D, any group, strides, pads or auto_pad,
 * dilations, W constant or computed, optional bias B; fuses a residual and any activation but the fake
 * quantization (not an epilogue bias over the last dim). Kernels in conv_f32.cu.
 */
#include <string.h>

#include "backends/cuda/conv_f32.h"
#include "backends/window.h"

/* The launch record of a Conv with these attributes and tensors (pointers left NULL); false when not computed. */
static bool conv_geom(const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *w, const tc__tensor *y,
                      tc__cuda_conv2d *p) {
    memset(p, 0, sizeof *p);
    if (x->rank < 3 || x->rank > 4 || w->rank != x->rank || y->rank != x->rank) return false;
    tc__err err = {0};
    const tc__kernel_ctx kctx = {.attrs = attrs, .err = &err};
    tc__window g;
    if (tc__window_resolve(&kctx, x, y, w->dims + 2, &g) != TC_STATUS_OK) return false;
    const int64_t group = tc__attr_int(attrs, "group", 1);
    if (group < 1 || x->dims[0] < 0 || x->dims[1] < 0 || w->dims[0] < 0 || w->dims[1] < 0) return false;
    if (x->dims[1] != w->dims[1] * group || w->dims[0] % group != 0 || y->dims[1] != w->dims[0]) return false;
    for (int d = 0; d < g.nsp; d++)
        if (g.in[d] < 0 || g.out[d] < 0) return false;
    const bool one = g.nsp == 1; /* 1-D: a 2-D convolution of height 1 */
    *p = (tc__cuda_conv2d){
        .n = x->dims[0], .c = x->dims[1], .m = w->dims[0], .group = group,
        .h = one ? 1 : g.in[0], .w_in = g.in[one ? 0 : 1],
        .oh = one ? 1 : g.out[0], .ow = g.out[one ? 0 : 1],
        .kh = one ? 1 : g.kernel[0], .kw = g.kernel[one ? 0 : 1],
        .sh = one ? 1 : g.stride[0], .sw = g.stride[one ? 0 : 1],
        .ph = one ? 0 : g.pad_begin[0], .pw = g.pad_begin[one ? 0 : 1],
        .dh = one ? 1 : g.dilation[0], .dw = g.dilation[one ? 0 : 1],
    };
    return tc__cuda_conv2d_f32_fits(p);
}

static bool supports(const tc__step_desc *d) {
    if (strcmp(d->op_type, "Conv") != 0 || d->n_in < 2 || d->n_in > 3 || d->n_out < 1 || d->out[0] == NULL)
        return tc__refuse(d, "not a Conv step of inputs X, W (, B)");
    const tc__tensor *x = d->in[0], *w = d->in[1], *b = d->n_in > 2 ? d->in[2] : NULL, *y = d->out[0];
    if (!tc__cnn_is_f32(x) || !tc__cnn_is_f32(w) || !tc__cnn_is_f32(y)) return tc__refuse(d, "not float32");
    if (d->n_out > 1 && d->out[1] != NULL) return tc__refuse(d, "more than one output");
    if (b != NULL && (!tc__cnn_is_f32(b) || b->rank != 1 || b->dims[0] != w->dims[0]))
        return tc__refuse(d, "bias B is not float32 [M]");
    tc__cuda_conv2d p;
    if (!conv_geom(d->attrs, x, w, y, &p)) return tc__refuse(d, "not a 1-D or 2-D convolution these kernels take");
    return tc__cnn_epi_ok(d, false);
}

static tc_status run(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 2 || ctx->in[0] == NULL || ctx->in[1] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects inputs X, W (and optional B) and output Y");
    const tc__tensor *x = ctx->in[0], *w = ctx->in[1], *b = ctx->n_in > 2 ? ctx->in[2] : NULL;
    tc__tensor *y = ctx->out[0];
    tc__cuda_conv2d p;
    if (!tc__cnn_is_f32(x) || !tc__cnn_is_f32(w) || !tc__cnn_is_f32(y) || (b != NULL && !tc__cnn_is_f32(b)) ||
        !conv_geom(ctx->attrs, x, w, y, &p))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "cuda_conv_f32: a convolution it does not compute");
    if (b != NULL && (b->rank != 1 || b->dims[0] != p.m))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "bias B must have shape [%lld]", (long long)p.m);
    tc_status st = tc__cnn_epi_of(ctx, false, &p.epi);
    if (st != TC_STATUS_OK) return st;
    p.x = x->data;
    p.w = w->data;
    p.b = b != NULL ? b->data : NULL;
    p.y = y->data;
    return tc__cuda_fail(tc__cuda_conv2d_f32(&p, tc__cuda_stream(ctx)), ctx->err, "cuda_conv_f32 launch");
}

const tc__tactic tc__tactic_cuda_conv_f32 = {
    .name = "cuda_conv_f32",
    .op_type = "Conv",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = TC__TACTIC_FUSES_EPILOGUE,
    .supports = supports,
    .run = run,
};
