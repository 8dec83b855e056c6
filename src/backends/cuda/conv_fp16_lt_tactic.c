/*
 * conv_fp16_lt_tactic.c - tactic cuda_conv_fp16_lt: Conv (1-D or 2-D NCHW, one group, constant W, any strides, pads or
 * auto_pad, dilations, optional bias B) marked tc.fp16 by the precision pass (--fp16), as an FP16 GEMM on Tensor
 * Cores through cuBLASLt (lt_gemm.h) with FP32 accumulation; FP32 tensors in and out.
 *
 * Per image b, row-major Y_b[Cout, P] (P = OH * OW) = W[Cout, K] . col_b[K, P] (K = Cin * KH * KW), i.e. column-major
 * Y_b^T[P, Cout] = col_b^T[P, K] . W^T[K, Cout]: cuBLASLt's A is col_b (FP16 rows of Pp = P rounded up to 8 halves:
 * column-major [P, K] with ld Pp, batch stride K * Pp), its B the weight packed at build into FP16 rows W16[Cout][Kp]
 * (column-major [K, Cout] with ld Kp = K rounded up to 8; the same for every image: batch stride 0), D is Y (ld P,
 * batch stride Cout * P). col comes from an im2col kernel, or for a 1x1 convolution of stride 1 without padding
 * straight from X (a cast of its rows: X_b is [Cin, P] already).
 *
 * The epilogue: the residual is cuBLASLt's C with beta 1 (added before the activation); the conv bias is per output
 * channel, a bias over the columns of cuBLASLt's D, which its epilogue (a bias over D's rows) cannot express, so the
 * bias and the activation (any but the fake quantization) run in one FP32 pass over Y after the product (fp16_lt.h);
 * without a bias, ReLU is cuBLASLt's. An epilogue bias over the output's last dim is refused (as cuda_conv_f32 does).
 *
 * Scratch: the cuBLASLt workspace (TC__LT_WORKSPACE) and col (N * K * Pp halves).
 * run() creates cuBLASLt's descriptors and asks its heuristic on every call, and destroys them before returning (host
 * allocations only, no device memory or synchronisation, so it may be captured into a CUDA graph; the engine calls
 * run() on the first runs and while capturing, not on replays). Caching them per step is for later.
 */
#include <string.h>

#include "backends/cuda/cnn_epi.h"
#include "backends/cuda/fp16_lt.h"
#include "backends/cuda/lt_gemm.h"
#include "backends/window.h"
#include "core/tensor.h"

typedef struct conv_geom {
    tc__lt_im2col ic; /* sizes (x, col left NULL) */
    int64_t m;        /* Cout */
    int64_t k, kp, p, pp;
    bool direct;      /* 1x1, stride 1, no padding: col_b is X_b cast */
} conv_geom;

/* The geometry of a Conv with these attributes and tensors; false when these kernels do not compute it. */
static bool conv_geometry(const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *w, const tc__tensor *y,
                          conv_geom *g) {
    memset(g, 0, sizeof *g);
    if (x->rank < 3 || x->rank > 4 || w->rank != x->rank || y->rank != x->rank) return false;
    tc__err err = {0};
    const tc__kernel_ctx kctx = {.attrs = attrs, .err = &err};
    tc__window wg;
    if (tc__window_resolve(&kctx, x, y, w->dims + 2, &wg) != TC_STATUS_OK) return false;
    if (tc__attr_int(attrs, "group", 1) != 1) return false;
    if (x->dims[0] < 1 || x->dims[1] < 1 || w->dims[0] < 1 || x->dims[1] != w->dims[1] || y->dims[1] != w->dims[0] ||
        y->dims[0] != x->dims[0])
        return false;
    for (int d = 0; d < wg.nsp; d++)
        if (wg.in[d] < 1 || wg.out[d] < 1 || wg.kernel[d] < 1) return false;
    const bool one = wg.nsp == 1; /* 1-D: a 2-D convolution of height 1 */
    g->ic = (tc__lt_im2col){
        .n = x->dims[0], .c = x->dims[1], .h = one ? 1 : wg.in[0], .w = wg.in[one ? 0 : 1],
        .oh = one ? 1 : wg.out[0], .ow = wg.out[one ? 0 : 1],
        .kh = one ? 1 : wg.kernel[0], .kw = wg.kernel[one ? 0 : 1],
        .sh = one ? 1 : wg.stride[0], .sw = wg.stride[one ? 0 : 1],
        .ph = one ? 0 : wg.pad_begin[0], .pw = wg.pad_begin[one ? 0 : 1],
        .dh = one ? 1 : wg.dilation[0], .dw = wg.dilation[one ? 0 : 1],
    };
    const tc__lt_im2col *c = &g->ic;
    const int64_t lim = (int64_t)1 << 40;
    if (c->c > lim / (c->kh * c->kw) || c->oh > lim / c->ow || c->h > lim / c->w) return false;
    g->m = w->dims[0];
    g->k = c->c * c->kh * c->kw;
    g->kp = tc__lt_kpad(g->k);
    g->p = c->oh * c->ow;
    g->pp = (g->p + 7) / 8 * 8;
    if (g->kp == 0 || g->m > INT32_MAX || g->kp > INT32_MAX || g->pp > INT32_MAX || c->n > INT32_MAX) return false;
    if (g->k > lim / g->pp || g->k * g->pp > lim / c->n || g->m > lim / g->kp || g->m > lim / g->p) return false;
    g->direct = c->kh == 1 && c->kw == 1 && c->sh == 1 && c->sw == 1 && c->ph == 0 && c->pw == 0 &&
                c->oh == c->h && c->ow == c->w;
    g->ic.ld = g->pp;
    return true;
}

/* cuBLASLt's view (pointers left NULL). */
static tc__lt_gemm lt_args(const conv_geom *g) {
    return (tc__lt_gemm){.m = g->p, .n = g->m, .k = g->k, .batch = g->ic.n, .lda = g->pp, .stride_a = g->k * g->pp,
                         .ldb = g->kp, .stride_b = 0, .ldd = g->p, .stride_d = g->m * g->p, .alpha = 1.0f,
                         .beta = 1.0f, .workspace_bytes = TC__LT_WORKSPACE};
}

static bool is_f32(const tc__tensor *t) { return t != NULL && t->dtype == TC_DTYPE_FLOAT32; }

/* The step's geometry, for supports() and the packing (reasons through tc__refuse). */
static bool step_geometry(const tc__step_desc *d, conv_geom *g) {
    if (strcmp(d->op_type, "Conv") != 0 || d->n_in < 2 || d->n_in > 3 || d->n_out < 1 || d->out[0] == NULL ||
        d->in[0] == NULL || d->in[1] == NULL)
        return tc__refuse(d, "not a Conv step of inputs X, W (, B)");
    const tc__tensor *x = d->in[0], *w = d->in[1], *b = d->n_in > 2 ? d->in[2] : NULL, *y = d->out[0];
    if (!is_f32(x) || !is_f32(w) || !is_f32(y)) return tc__refuse(d, "not float32");
    if (d->n_out > 1 && d->out[1] != NULL) return tc__refuse(d, "more than one output");
    if (d->in_const == NULL || !d->in_const[1]) return tc__refuse(d, "the weight W is not constant");
    if (b != NULL && (!is_f32(b) || b->rank != 1 || b->dims[0] != w->dims[0]))
        return tc__refuse(d, "bias B is not float32 [M]");
    if (!conv_geometry(d->attrs, x, w, y, g))
        return tc__refuse(d, "not a one-group 1-D or 2-D convolution with K >= 4 these kernels take");
    return true;
}

static bool supports(const tc__step_desc *d) {
    conv_geom g;
    if (!tc__lt_fp16_marked(d) || !step_geometry(d, &g)) return false;
    if (!tc__cnn_epi_ok(d, false)) return false;
    char why[256];
    const tc__lt_gemm lg = lt_args(&g);
    if (!tc__lt_gemm_possible(&lg, why, sizeof why)) return tc__refuse(d, "%s", why);
    return true;
}

static bool packs_input(const tc__step_desc *d, int index) {
    (void)d;
    return index == 1;
}

static size_t packed_bytes(const tc__step_desc *d, int index) {
    conv_geom g;
    return index == 1 && step_geometry(d, &g) ? (size_t)(g.m * g.kp) * sizeof(uint16_t) : 0;
}

/* W16[o][k] = fp16(W[o, k]) for k < K (W's [Cin, KH, KW] flattened, im2col's order), zero for K <= k < Kp. */
static tc_status pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    conv_geom g;
    if (index != 1 || !step_geometry(d, &g))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "cuda_conv_fp16_lt packs only the weight of a step it takes");
    const float *w = src;
    uint16_t *o = dst;
    for (int64_t m = 0; m < g.m; m++) {
        for (int64_t k = 0; k < g.k; k++) o[m * g.kp + k] = tc__f32_to_f16(w[m * g.k + k]);
        for (int64_t k = g.k; k < g.kp; k++) o[m * g.kp + k] = 0;
    }
    return TC_STATUS_OK;
}

static size_t col_bytes(const conv_geom *g) { return tc__lt_round((size_t)(g->ic.n * g->k * g->pp) * sizeof(uint16_t)); }
static size_t scratch_of(const conv_geom *g) { return TC__LT_ALIGN + TC__LT_WORKSPACE + col_bytes(g); }
static size_t scratch_bytes(const tc__step_desc *d) {
    conv_geom g;
    return step_geometry(d, &g) ? scratch_of(&g) : 0;
}

static tc_status run(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 2 || ctx->n_in > 3 || ctx->in[0] == NULL || ctx->in[1] == NULL || ctx->n_out < 1 ||
        ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects inputs X, W (and optional B) and output Y");
    const tc__tensor *x = ctx->in[0], *w = ctx->in[1], *b = ctx->n_in > 2 ? ctx->in[2] : NULL;
    tc__tensor *y = ctx->out[0];
    conv_geom g;
    if (!is_f32(x) || !is_f32(w) || !is_f32(y) || (b != NULL && !is_f32(b)) || !conv_geometry(ctx->attrs, x, w, y, &g))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "cuda_conv_fp16_lt: a convolution it does not compute");
    if (b != NULL && (b->rank != 1 || b->dims[0] != g.m))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "bias B must have shape [%lld]", (long long)g.m);
    if (w->nbytes < (size_t)(g.m * g.kp) * sizeof(uint16_t))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "cuda_conv_fp16_lt: the weight is not packed for it");
    tc__cuda_epi e;
    tc_status st = tc__cnn_epi_of(ctx, false, &e);
    if (st != TC_STATUS_OK) return st;
    unsigned char *sc = tc__lt_scratch(ctx, scratch_of(&g) - TC__LT_ALIGN);
    if (sc == NULL) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "cuda_conv_fp16_lt: scratch too small");
    void *ws = sc, *col = sc + TC__LT_WORKSPACE;
    const cudaStream_t s = tc__cuda_stream(ctx);

    cudaError_t ce;
    if (g.direct) {
        ce = tc__lt_cast_rows(x->data, g.ic.n * g.ic.c, g.p, g.p, col, g.pp, s);
    } else {
        tc__lt_im2col ic = g.ic;
        ic.x = x->data;
        ic.col = col;
        ce = tc__lt_im2col_f16(&ic, s);
    }
    if (ce != cudaSuccess) return tc__cuda_fail(ce, ctx->err, g.direct ? "FP16 cast of X" : "FP16 im2col");

    tc__lt_gemm lg = lt_args(&g);
    lg.a = col;
    lg.b = w->data;
    lg.c = e.residual; /* beta 1: the residual joins the sum before the activation */
    lg.d = y->data;
    lg.relu = b == NULL && e.act.act == TC__ACT_RELU;
    lg.workspace = ws;
    bool epi_done = false;
    st = tc__lt_gemm_run(&lg, s, &epi_done, ctx->err);
    if (st != TC_STATUS_OK) return st;
    const bool post_act = e.act.act != TC__ACT_NONE && !(lg.relu && epi_done);
    if (b != NULL || post_act) {
        const tc__lt_epi pe = {.y = y->data, .total = g.ic.n * g.m * g.p, .chan_bias = b != NULL ? b->data : NULL,
                               .inner = g.p, .channels = g.m,
                               .act = post_act ? e.act : (tc__cuda_act){TC__ACT_NONE, 0.0f, 0.0f}};
        ce = tc__lt_epilogue(&pe, s);
        if (ce != cudaSuccess) return tc__cuda_fail(ce, ctx->err, "FP32 epilogue pass");
    }
    return TC_STATUS_OK;
}

const tc__tactic tc__tactic_cuda_conv_fp16_lt = {
    .name = "cuda_conv_fp16_lt",
    .op_type = "Conv",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = TC__TACTIC_FUSES_EPILOGUE,
    .precision = "fp16",
    .supports = supports,
    .packs_input = packs_input,
    .pack = pack,
    .packed_bytes = packed_bytes,
    .scratch_bytes = scratch_bytes,
    .run = run,
};
