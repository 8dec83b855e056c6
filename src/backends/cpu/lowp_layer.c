/* lowp_layer.c - the layer shape and step checks shared by the reduced-precision tactics (lowp_layer.h). */
#include "backends/cpu/lowp_layer.h"

#include <string.h>

#include "backends/cpu/blocked_f32.h"
#include "backends/cpu/conv2d_window.h"
#include "backends/cpu/gemm_tactics.h"
#include "backends/cpu/vact_f32.h"
#include "backends/window.h"
#include "core/fused_attr.h"

#define LOWP_MAX_EXTENT ((int64_t)1 << 24)

static bool lp_is_f32(const tc__tensor *t) { return t != NULL && t->dtype == TC_DTYPE_FLOAT32; }

static bool lp_conv(const tc__step_desc *d, bool depthwise, tc__lowp_shape *s) {
    const tc__tensor *x = d->in[0], *w = d->in[1], *y = d->out[0];
    tc__window rw;
    if (!(depthwise ? tc__conv2d_window_dw : tc__conv2d_window)(d->attrs, x, w, y, LOWP_MAX_EXTENT, &rw) ||
        rw.pad_begin[0] < 0 || rw.pad_begin[1] < 0)
        return false;
    *s = (tc__lowp_shape){.batch = (size_t)x->dims[0],
                          .cin = (size_t)x->dims[1],
                          .cout = (size_t)w->dims[0],
                          .ih = (size_t)rw.in[0],
                          .iw = (size_t)rw.in[1],
                          .oh = (size_t)rw.out[0],
                          .ow = (size_t)rw.out[1],
                          .kh = (size_t)rw.kernel[0],
                          .kw = (size_t)rw.kernel[1],
                          .sh = (size_t)rw.stride[0],
                          .sw = (size_t)rw.stride[1],
                          .dh = (size_t)rw.dilation[0],
                          .dw = (size_t)rw.dilation[1],
                          .pt = (size_t)rw.pad_begin[0],
                          .pl = (size_t)rw.pad_begin[1]};
    /* The padded image covers the input and every tap of every output. */
    size_t need_h = (s->oh - 1) * s->sh + (s->kh - 1) * s->dh + 1, need_w = (s->ow - 1) * s->sw + (s->kw - 1) * s->dw + 1;
    s->hp = need_h > s->ih + s->pt ? need_h : s->ih + s->pt;
    s->wp = need_w > s->iw + s->pl ? need_w : s->iw + s->pl;
    const bool x_blocked = tc__layout_in_blocked(d->attrs, 0), y_blocked = tc__layout_out_blocked(d->attrs);
    if (x_blocked && s->cin % 16 != 0) return false;
    if (y_blocked && s->cout % 16 != 0) return false;
    s->in_layout = x_blocked ? TC__LOWP_NCHW16C : TC__LOWP_NCHW;
    s->out_layout = y_blocked ? TC__LOWP_NCHW16C : TC__LOWP_NCHW;
    return true;
}

static bool lp_dense(const tc__step_desc *d, bool gemm, tc__lowp_shape *s) {
    const tc__tensor *a = d->in[0], *b = d->in[1], *y = d->out[0];
    if (!lp_is_f32(a) || !lp_is_f32(b) || !lp_is_f32(y) || a->rank < 2 || b->rank != 2) return false;
    const bool tb = gemm && tc__attr_int(d->attrs, "transB", 0) != 0;
    if (gemm && (a->rank != 2 || tc__attr_int(d->attrs, "transA", 0) != 0 ||
                 tc__attr_float(d->attrs, "alpha", 1.0f) != 1.0f))
        return false;
    const int64_t k = a->dims[a->rank - 1], n = tb ? b->dims[0] : b->dims[1];
    if ((tb ? b->dims[1] : b->dims[0]) != k || k < 1 || n < 1 || k > LOWP_MAX_EXTENT || n > LOWP_MAX_EXTENT) return false;
    const int64_t numel = tc__tensor_numel(a);
    if (numel < 1 || numel > ((int64_t)1 << 31) || tc__tensor_numel(y) != numel / k * n || y->dims[y->rank - 1] != n)
        return false;
    *s = (tc__lowp_shape){.batch = 1, .cin = (size_t)k, .cout = (size_t)n, .ih = (size_t)(numel / k), .iw = 1,
                          .kh = 1, .kw = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
                          .in_layout = TC__LOWP_ROWS, .out_layout = TC__LOWP_ROWS};
    /* the rows as an image of M rows of one pixel: the conversion pass (a task per padded row) splits over the threads;
     * as one row of M pixels, one thread converted all of BERT-base's 128 x 768 inputs while the other waited */
    s->oh = s->hp = s->ih;
    s->ow = s->wp = 1;
    return true;
}

bool tc__lowp_shape_of(const tc__step_desc *d, tc__lowp_shape *s) {
    memset(s, 0, sizeof *s);
    if (d->n_in < 2 || d->n_out < 1 || d->in[0] == NULL || d->in[1] == NULL || d->out[0] == NULL) return false;
    if (strcmp(d->op_type, "Conv") == 0) return d->n_in <= 3 && lp_conv(d, false, s);
    if (strcmp(d->op_type, "MatMul") == 0) return d->n_in == 2 && !tc__mm_has_views(d->attrs) && lp_dense(d, false, s);
    if (strcmp(d->op_type, "Gemm") == 0) return d->n_in <= 3 && lp_dense(d, true, s);
    return false;
}

bool tc__lowp_dw_shape_of(const tc__step_desc *d, tc__lowp_shape *s) {
    memset(s, 0, sizeof *s);
    if (d->n_in < 2 || d->n_in > 3 || d->n_out < 1 || d->in[0] == NULL || d->in[1] == NULL || d->out[0] == NULL)
        return false;
    return strcmp(d->op_type, "Conv") == 0 && lp_conv(d, true, s);
}

bool tc__lowp_weight_k_major(const tc__step_desc *d) {
    return strcmp(d->op_type, "MatMul") == 0 ||
           (strcmp(d->op_type, "Gemm") == 0 && tc__attr_int(d->attrs, "transB", 0) == 0);
}

/* The per-channel bias input (Conv B, Gemm C) of the step: index 2, unless absent. */
static const tc__tensor *lp_own_bias(const tc__step_desc *d) { return d->n_in > 2 ? d->in[2] : NULL; }

static bool lp_bias_ok(const tc__tensor *b, size_t cout) {
    return b == NULL || (lp_is_f32(b) && tc__tensor_numel(b) == (int64_t)cout && b->dims[b->rank - 1] == (int64_t)cout);
}

bool tc__lowp_step_ok(const tc__step_desc *d, const tc__lowp_shape *s, bool blocked) {
    if (d->in_const == NULL || !d->in_const[1] || d->in[1]->data == NULL)
        return tc__refuse(d, "the weight is not a constant");
    const bool conv = strcmp(d->op_type, "Conv") == 0;
    if (!lp_bias_ok(lp_own_bias(d), s->cout)) return tc__refuse(d, "the bias is not FP32 over the output channels");
    if (conv) {
        if (!tc__vact_epilogue_supported(d)) return tc__refuse(d, "its fused activation is not one the kernels apply");
    } else {
        if (!tc__gemm_epilogue_ok(d, (int64_t)s->cout)) return tc__refuse(d, "its fused epilogue is not one the kernels apply");
        if (lp_own_bias(d) != NULL && (d->bias != NULL || tc__attr_float(d->attrs, "beta", 1.0f) != 1.0f))
            return tc__refuse(d, "a Gemm bias with beta != 1 or a second bias");
    }
    if (!blocked) return !tc__layout_any_blocked(d->attrs) || tc__refuse(d, "NCHW16c tensors (a plain-layout kernel)");
    if (!conv || s->out_layout != TC__LOWP_NCHW16C) return tc__refuse(d, "plain tensors (an NCHW16c kernel)");
    const uint64_t x_bit = s->in_layout == TC__LOWP_NCHW16C ? 1 : 0;
    return tc__blk_layout_is(d->attrs, tc__blk_with_residual(x_bit, d->epi), true);
}

/* The op's own inputs of a kernel context: the epilogue's operands come after them. */
static int lp_op_inputs(const tc__kernel_ctx *ctx) {
    int n = ctx->n_in;
    if (ctx->epi != NULL && ctx->epi->bias_input >= 0 && ctx->epi->bias_input < n) n = ctx->epi->bias_input;
    if (ctx->epi != NULL && ctx->epi->residual_input >= 0 && ctx->epi->residual_input < n) n = ctx->epi->residual_input;
    return n;
}

const tc__tensor *tc__lowp_bias(const tc__kernel_ctx *ctx, size_t cout) {
    const tc__tensor *b = lp_op_inputs(ctx) > 2 && ctx->in[2] != NULL ? ctx->in[2] : ctx->bias;
    return b != NULL && lp_bias_ok(b, cout) && b->data != NULL ? b : NULL;
}

tc_status tc__lowp_io_of(const tc__kernel_ctx *ctx, size_t cout, tc__lowp_io *io) {
    const tc__tensor *x = ctx->in[0], *w = ctx->in[1];
    tc__tensor *y = ctx->out[0];
    if (x->data == NULL || w->data == NULL || y->data == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: tensors need data", ctx->op_type);
    *io = (tc__lowp_io){.x = x->data, .w = w->data, .y = y->data, .act = {TC__VACT_NONE, 0, 0, 0}};
    const tc__tensor *b = tc__lowp_bias(ctx, cout);
    io->bias = b ? b->data : NULL;
    if (ctx->epi != NULL) {
        tc_status st = tc__vact_residual(ctx, tc__tensor_numel(y), &io->res);
        if (st != TC_STATUS_OK) return st;
        io->act = tc__vact_from_epilogue(ctx->epi);
    }
    return TC_STATUS_OK;
}

bool tc__lowp_ctx_desc(const tc__kernel_ctx *ctx, const tc__tensor *in[3], bool in_const[3], const tc__tensor *out[1],
                       tc__epilogue *none, tc__step_desc *d) {
    const int n_op = lp_op_inputs(ctx);
    if (n_op < 2 || n_op > 3 || ctx->n_out < 1 || ctx->out[0] == NULL) return false;
    in[0] = ctx->in[0], in[1] = ctx->in[1], in[2] = n_op > 2 ? ctx->in[2] : NULL;
    in_const[0] = false, in_const[1] = true, in_const[2] = true;
    out[0] = ctx->out[0];
    *none = tc__epilogue_none();
    *d = (tc__step_desc){.op_type = ctx->op_type, .opset = ctx->opset, .attrs = ctx->attrs, .n_in = n_op, .in = in,
                         .in_const = in_const, .n_out = 1, .out = out, .epi = ctx->epi ? ctx->epi : none,
                         .bias = ctx->bias, .residual = ctx->residual};
    return true;
}

int tc__lowp_out_image(const tc__step_desc *d, const char *attr, int n_extra, size_t align, size_t elem, size_t batch,
                       size_t oh, size_t ow, size_t cout, tc__lowp_image *img, int64_t *extra) {
    const int64_t *v = NULL;
    const size_t n = tc__attr_ints(d->attrs, attr, &v);
    if (n == 0) return 0;
    if (n != (size_t)(5 + n_extra)) return -1;
    for (size_t i = 0; i < n; i++)
        if (v[i] < 0 || v[i] > ((int64_t)1 << 24)) return -1;
    *img = (tc__lowp_image){(size_t)v[0], (size_t)v[1], (size_t)v[2], (size_t)v[3], (size_t)v[4]};
    for (int i = 0; i < n_extra; i++) extra[i] = v[5 + i];
    if (img->cp % align != 0 || img->cp < cout || img->hp < img->pt + oh || img->wp < img->pl + ow) return -1;
    const size_t lim = (size_t)1 << 31, plane = img->hp * img->wp;
    return plane <= lim / img->cp && plane * img->cp <= lim / batch &&
                   batch * plane * img->cp * elem <= (size_t)tc__tensor_numel(d->out[0]) * 4
               ? 1
               : -1;
}

bool tc__lowp_in_image_fits(const tc__step_desc *d, size_t batch, size_t hp, size_t wp, size_t cp, size_t elem) {
    return batch * hp * wp * cp * elem <= (size_t)tc__tensor_numel(d->in[0]) * 4;
}
