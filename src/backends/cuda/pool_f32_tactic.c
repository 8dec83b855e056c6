/*
 * pool_f32_tactic.c - tactics cuda_maxpool_f32, cuda_avgpool_f32 (1-D and 2-D windows: kernel_shape, strides,
 * pads or auto_pad, dilations, ceil_mode through the output size, count_include_pad; MaxPool without its Indices
 * output) and cuda_globalavgpool_f32 (any rank >= 2): FP32, NCHW, with the whole epilogue fused. Kernels in
 * pool_f32.cu.
 */
#include <string.h>

#include "backends/cuda/pool_f32.h"
#include "backends/window.h"

/* The launch record of a MaxPool (is_max) or AveragePool step (pointers left NULL); false when not computed. */
bool tc__cuda_pool_geom(const tc__attrs *attrs, bool is_max, const tc__tensor *x, const tc__tensor *y,
                        tc__cuda_pool2d *p) {
    memset(p, 0, sizeof *p);
    if (!tc__cnn_is_f32(x) || !tc__cnn_is_f32(y) || x->rank < 3 || x->rank > 4 || y->rank != x->rank) return false;
    if (x->dims[0] < 0 || x->dims[1] < 0 || y->dims[1] != x->dims[1]) return false;
    if (is_max) {
        const int64_t so = tc__attr_int(attrs, "storage_order", 0);
        if (so != 0 && so != 1) return false;
    } else {
        const int64_t cip = tc__attr_int(attrs, "count_include_pad", 0);
        if (cip != 0 && cip != 1) return false;
        p->count_include_pad = cip == 1;
    }
    tc__err err = {0};
    const tc__kernel_ctx kctx = {.attrs = attrs, .err = &err};
    tc__window g;
    if (tc__window_resolve(&kctx, x, y, NULL, &g) != TC_STATUS_OK) return false;
    for (int d = 0; d < g.nsp; d++)
        if (g.in[d] < 0 || g.out[d] < 0 || g.kernel[d] > INT32_MAX) return false;
    const bool one = g.nsp == 1; /* 1-D: planes of height 1 */
    const int i = one ? 0 : 1;
    p->is_max = is_max;
    p->planes = x->dims[0] * x->dims[1];
    p->h = one ? 1 : g.in[0];
    p->w_in = g.in[i];
    p->oh = one ? 1 : g.out[0];
    p->ow = g.out[i];
    p->kh = one ? 1 : g.kernel[0];
    p->kw = g.kernel[i];
    p->sh = one ? 1 : g.stride[0];
    p->sw = g.stride[i];
    p->ph = one ? 0 : g.pad_begin[0];
    p->pw = g.pad_begin[i];
    p->ph_end = one ? 0 : g.pad_end[0];
    p->pw_end = g.pad_end[i];
    p->dh = one ? 1 : g.dilation[0];
    p->dw = g.dilation[i];
    return true;
}

static bool pool_supports(const tc__step_desc *d, bool is_max) {
    if (d->n_in != 1 || d->in[0] == NULL || d->n_out < 1 || d->out[0] == NULL)
        return tc__refuse(d, "expects one input X and output Y");
    if (d->n_out > 1 && d->out[1] != NULL) return tc__refuse(d, "MaxPool's Indices output is not computed on CUDA");
    tc__cuda_pool2d p;
    if (!tc__cuda_pool_geom(d->attrs, is_max, d->in[0], d->out[0], &p))
        return tc__refuse(d, "not a float32 1-D or 2-D pooling these kernels take");
    return tc__cnn_epi_ok(d, true);
}

static tc_status pool_run(const tc__kernel_ctx *ctx, bool is_max) {
    if (ctx->n_in < 1 || ctx->in[0] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects input X and output Y");
    if (ctx->n_out > 1 && ctx->out[1] != NULL)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "MaxPool's Indices output is not computed on CUDA");
    tc__cuda_pool2d p;
    if (!tc__cuda_pool_geom(ctx->attrs, is_max, ctx->in[0], ctx->out[0], &p))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "%s: a pooling this tactic does not compute", ctx->op_type);
    tc_status st = tc__cnn_epi_of(ctx, true, &p.epi);
    if (st != TC_STATUS_OK) return st;
    p.x = ctx->in[0]->data;
    p.y = ctx->out[0]->data;
    return tc__cuda_fail(tc__cuda_pool2d_f32(&p, tc__cuda_stream(ctx)), ctx->err, "cuda pooling launch");
}

static bool maxpool_supports(const tc__step_desc *d) { return pool_supports(d, true); }
static bool avgpool_supports(const tc__step_desc *d) { return pool_supports(d, false); }
static tc_status maxpool_run(const tc__kernel_ctx *ctx) { return pool_run(ctx, true); }
static tc_status avgpool_run(const tc__kernel_ctx *ctx) { return pool_run(ctx, false); }

/* GlobalAveragePool: X [N, C, spatial...] float32 to Y [N, C, 1, ...]. */
static bool gap_ok(const tc__tensor *x, const tc__tensor *y) {
    if (!tc__cnn_is_f32(x) || !tc__cnn_is_f32(y) || x->rank < 2 || y->rank != x->rank) return false;
    if (y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1] || x->dims[0] < 0 || x->dims[1] < 0) return false;
    for (int32_t i = 2; i < y->rank; i++)
        if (y->dims[i] != 1) return false;
    return tc__numel(x->rank - 2, x->dims + 2) >= 0;
}

static bool gap_supports(const tc__step_desc *d) {
    if (d->n_in != 1 || d->in[0] == NULL || d->n_out != 1 || d->out[0] == NULL)
        return tc__refuse(d, "expects one input X and output Y");
    if (!gap_ok(d->in[0], d->out[0])) return tc__refuse(d, "not a float32 [N, C, ...] to [N, C, 1, ...] pooling");
    return tc__cnn_epi_ok(d, true);
}

static tc_status gap_run(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 1 || ctx->in[0] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects input X and output Y");
    const tc__tensor *x = ctx->in[0];
    tc__tensor *y = ctx->out[0];
    if (!gap_ok(x, y)) return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "GlobalAveragePool: shapes not computed here");
    tc__cuda_epi epi;
    tc_status st = tc__cnn_epi_of(ctx, true, &epi);
    if (st != TC_STATUS_OK) return st;
    const int64_t planes = x->dims[0] * x->dims[1], isp = tc__numel(x->rank - 2, x->dims + 2);
    return tc__cuda_fail(tc__cuda_global_avgpool_f32(x->data, y->data, planes, isp, epi, tc__cuda_stream(ctx)),
                         ctx->err, "cuda_globalavgpool_f32 launch");
}

const tc__tactic tc__tactic_cuda_maxpool_f32 = {
    .name = "cuda_maxpool_f32",
    .op_type = "MaxPool",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = TC__TACTIC_FUSES_EPILOGUE,
    .supports = maxpool_supports,
    .run = maxpool_run,
};

const tc__tactic tc__tactic_cuda_avgpool_f32 = {
    .name = "cuda_avgpool_f32",
    .op_type = "AveragePool",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = TC__TACTIC_FUSES_EPILOGUE,
    .supports = avgpool_supports,
    .run = avgpool_run,
};

const tc__tactic tc__tactic_cuda_globalavgpool_f32 = {
    .name = "cuda_globalavgpool_f32",
    .op_type = "GlobalAveragePool",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = TC__TACTIC_FUSES_EPILOGUE,
    .supports = gap_supports,
    .run = gap_run,
};
