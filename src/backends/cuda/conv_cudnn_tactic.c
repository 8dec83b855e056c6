/*
 * conv_cudnn_tactic.c - tactics cuda_conv_fp16_cudnn and cuda_conv_cudnn: Conv (1-D or 2-D, any groups, strides and
 * dilations, symmetric pads, constant W, optional bias B) through cuDNN's convolution (cudnn.h), FP32 tensors in and
 * out.
 *   - cuda_conv_fp16_cudnn (steps marked tc.fp16 by --fp16): X cast to FP16 NHWC in scratch (conv_cudnn.h), the
 *     weight packed at build to FP16 [K][R][S][C/group] (cuDNN's NHWC filter), cuDNN on Tensor Cores with FP32
 *     accumulation writing FP16 NHWC into scratch, then one pass back to FP32 NCHW that adds the bias and the
 *     residual and applies the activation. It chains (TC__CHAIN_FP16_NHWC, engine/nhwc16_chain.c): with
 *     tc.nhwc16_in X is already FP16 NHWC (no cast), with tc.nhwc16_out cuDNN writes Y's buffer as FP16 NHWC and the
 *     epilogue runs there in place, with tc.nhwc16_res the residual is FP16 NHWC. When Y stays FP16 NHWC the epilogue
 *     is fused: a pointwise convolution is one cuBLASLt GEMM with the bias, residual (C) and ReLU in its epilogue
 *     (pointwise_gemm), any other with a constant bias one cudnnConvolutionBiasActivationForward (convolve_fused); the
 *     FP16 bias for both is packed after the filter. The separate pass remains for what they refuse (other
 *     activations, an FP32 residual, no bias, a library without the call). On the device it is taken untimed
 *     wherever it supports a step (TC__TACTIC_CHAIN_FIRST): alone, the cast and the transpose make it slower than
 *     cuda_conv_fp16_lt at batch 1; chained, both go.
 *   - cuda_conv_cudnn: FP32 NCHW as is, cuDNN restricted to FMA math (no TF32: an FP32 plan computes in FP32), then
 *     the bias, residual and activation in one FP32 pass over Y when the step has any (fp16_lt.h's epilogue pass).
 * The algorithm is cuDNN's heuristic choice (cudnnGetConvolutionForwardAlgorithm_v7), the first that succeeds within
 * the workspace (TC__DNN_WORKSPACE of scratch), remembered per geometry for the process. run() creates cuDNN's
 * descriptors on every call and destroys them before returning (host allocations only: run() is called on the first
 * runs and while capturing into a CUDA graph, not on replays); the process-wide handle is taken under its lock.
 */
#include <stdio.h>
#include <string.h>

#include "backends/cuda/cnn_epi.h"
#include "backends/cuda/conv16_paths.h"
#include "backends/cuda/conv_cudnn.h"
#include "backends/cuda/cudnn.h"
#include "backends/cuda/fp16_lt.h"
#include "backends/cuda/lt_gemm.h"
#include "backends/window.h"
#include "core/quant_attr.h"
#include "core/tensor.h"

#define TC__DNN_WORKSPACE ((size_t)64 << 20)

typedef struct dnn_geom {
    int32_t half;  /* 1: FP16 NHWC (the fp16 tactic), 0: FP32 NCHW */
    int32_t n, c, h, w, k, r, s, oh, ow, ph, pw, sh, sw, dh, dw, groups;
} dnn_geom;

static bool fits_int(int64_t v) { return v >= 1 && v <= INT32_MAX; }

/* The geometry of a Conv with these attributes and tensors; false when cuDNN's 2-D convolution does not compute it. */
static bool geometry(const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *w, const tc__tensor *y, bool half,
                     dnn_geom *g) {
    memset(g, 0, sizeof *g);
    if (x->rank < 3 || x->rank > 4 || w->rank != x->rank || y->rank != x->rank) return false;
    tc__err err = {0};
    const tc__kernel_ctx kctx = {.attrs = attrs, .err = &err};
    tc__window wg;
    if (tc__window_resolve(&kctx, x, y, w->dims + 2, &wg) != TC_STATUS_OK) return false;
    const int64_t groups = tc__attr_int(attrs, "group", 1);
    for (int d = 0; d < wg.nsp; d++)
        if (wg.pad_begin[d] != wg.pad_end[d] || wg.in[d] < 1 || wg.out[d] < 1 || wg.kernel[d] < 1) return false;
    if (groups < 1 || x->dims[1] % groups != 0 || w->dims[0] % groups != 0 || w->dims[1] * groups != x->dims[1] ||
        y->dims[1] != w->dims[0] || y->dims[0] != x->dims[0])
        return false;
    const bool one = wg.nsp == 1;
    const int64_t v[] = {x->dims[0], x->dims[1], one ? 1 : wg.in[0], wg.in[one ? 0 : 1], w->dims[0],
                         one ? 1 : wg.kernel[0], wg.kernel[one ? 0 : 1], one ? 1 : wg.out[0], wg.out[one ? 0 : 1],
                         one ? 0 : wg.pad_begin[0], wg.pad_begin[one ? 0 : 1],
                         one ? 1 : wg.stride[0], wg.stride[one ? 0 : 1], one ? 1 : wg.dilation[0],
                         wg.dilation[one ? 0 : 1], groups};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (v[i] < 0 || v[i] > INT32_MAX || (i != 9 && i != 10 && v[i] < 1)) return false;
    *g = (dnn_geom){half, (int32_t)v[0], (int32_t)v[1], (int32_t)v[2], (int32_t)v[3], (int32_t)v[4], (int32_t)v[5],
                    (int32_t)v[6], (int32_t)v[7], (int32_t)v[8], (int32_t)v[9], (int32_t)v[10], (int32_t)v[11],
                    (int32_t)v[12], (int32_t)v[13], (int32_t)v[14], (int32_t)v[15]};
    /* cuDNN's output size must be the step's (it is, for symmetric pads) and every tensor's elements an int. */
    if ((g->h + 2 * (int64_t)g->ph - (int64_t)g->dh * (g->r - 1) - 1) / g->sh + 1 != g->oh ||
        (g->w + 2 * (int64_t)g->pw - (int64_t)g->dw * (g->s - 1) - 1) / g->sw + 1 != g->ow)
        return false;
    if (!fits_int((int64_t)g->n * g->c * g->h * g->w) || !fits_int((int64_t)g->n * g->k * g->oh * g->ow) ||
        !fits_int((int64_t)g->k * (g->c / g->groups) * g->r * g->s) || g->n > TC__DNN_MAX_BATCH)
        return false;
    return true;
}

static bool is_f32(const tc__tensor *t) { return t != NULL && t->dtype == TC_DTYPE_FLOAT32; }

/* The step's geometry, for supports() and the packing (reasons through tc__refuse). */
static bool step_geometry(const tc__step_desc *d, bool half, dnn_geom *g) {
    if (strcmp(d->op_type, "Conv") != 0 || d->n_in < 2 || d->n_in > 3 || d->n_out < 1 || d->out[0] == NULL ||
        d->in[0] == NULL || d->in[1] == NULL)
        return tc__refuse(d, "not a Conv step of inputs X, W (, B)");
    const tc__tensor *x = d->in[0], *w = d->in[1], *b = d->n_in > 2 ? d->in[2] : NULL, *y = d->out[0];
    if (!is_f32(x) || !is_f32(w) || !is_f32(y)) return tc__refuse(d, "not float32");
    if (d->n_out > 1 && d->out[1] != NULL) return tc__refuse(d, "more than one output");
    if (d->in_const == NULL || !d->in_const[1]) return tc__refuse(d, "the weight W is not constant");
    if (b != NULL && (!is_f32(b) || b->rank != 1 || b->dims[0] != w->dims[0]))
        return tc__refuse(d, "bias B is not float32 [M]");
    if (!geometry(d->attrs, x, w, y, half, g))
        return tc__refuse(d, "not a 1-D or 2-D convolution with symmetric pads and int-sized tensors");
    return true;
}

static size_t half_bytes(int64_t n) { return tc__lt_round((size_t)n * sizeof(uint16_t)); }
static size_t scratch_of(const dnn_geom *g) {
    size_t s = TC__LT_ALIGN + TC__DNN_WORKSPACE;
    if (g->half) s += half_bytes((int64_t)g->n * g->c * g->h * g->w) + half_bytes((int64_t)g->n * g->k * g->oh * g->ow);
    return s;
}

/* ---- algorithm choice, remembered per geometry ----------------------------------------------------------------- */

#define TC__DNN_CACHE 256
static struct {
    dnn_geom g;
    cudnnConvolutionFwdAlgo_t algo;
    bool used;
} g_cache[TC__DNN_CACHE];
static int g_cache_next;

/* (called under the cuDNN lock) */
static bool cache_find(const dnn_geom *g, cudnnConvolutionFwdAlgo_t *algo) {
    for (int i = 0; i < TC__DNN_CACHE; i++)
        if (g_cache[i].used && memcmp(&g_cache[i].g, g, sizeof *g) == 0) {
            *algo = g_cache[i].algo;
            return true;
        }
    return false;
}

static void cache_put(const dnn_geom *g, cudnnConvolutionFwdAlgo_t algo) {
    g_cache[g_cache_next].g = *g;
    g_cache[g_cache_next].algo = algo;
    g_cache[g_cache_next].used = true;
    g_cache_next = (g_cache_next + 1) % TC__DNN_CACHE;
}

/* ---- descriptors and the call ---------------------------------------------------------------------------------- */

typedef struct dnn_descs {
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
} dnn_descs;

static void descs_destroy(const tc__cudnn *dn, dnn_descs *d) {
    if (d->conv) dn->DestroyConvolutionDescriptor(d->conv);
    if (d->w) dn->DestroyFilterDescriptor(d->w);
    if (d->y) dn->DestroyTensorDescriptor(d->y);
    if (d->x) dn->DestroyTensorDescriptor(d->x);
}

static cudnnStatus_t descs_make(const tc__cudnn *dn, const dnn_geom *g, dnn_descs *d) {
    memset(d, 0, sizeof *d);
    const cudnnTensorFormat_t fmt = g->half ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    const cudnnDataType_t t = g->half ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    cudnnStatus_t s;
    if ((s = dn->CreateTensorDescriptor(&d->x)) != CUDNN_STATUS_SUCCESS ||
        (s = dn->CreateTensorDescriptor(&d->y)) != CUDNN_STATUS_SUCCESS ||
        (s = dn->CreateFilterDescriptor(&d->w)) != CUDNN_STATUS_SUCCESS ||
        (s = dn->CreateConvolutionDescriptor(&d->conv)) != CUDNN_STATUS_SUCCESS)
        return s;
    if ((s = dn->SetTensor4dDescriptor(d->x, fmt, t, g->n, g->c, g->h, g->w)) != CUDNN_STATUS_SUCCESS ||
        (s = dn->SetTensor4dDescriptor(d->y, fmt, t, g->n, g->k, g->oh, g->ow)) != CUDNN_STATUS_SUCCESS ||
        (s = dn->SetFilter4dDescriptor(d->w, t, fmt, g->k, g->c / g->groups, g->r, g->s)) != CUDNN_STATUS_SUCCESS ||
        (s = dn->SetConvolution2dDescriptor(d->conv, g->ph, g->pw, g->sh, g->sw, g->dh, g->dw, CUDNN_CROSS_CORRELATION,
                                            CUDNN_DATA_FLOAT)) != CUDNN_STATUS_SUCCESS ||
        (s = dn->SetConvolutionGroupCount(d->conv, g->groups)) != CUDNN_STATUS_SUCCESS ||
        (s = dn->SetConvolutionMathType(d->conv, g->half ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH)) !=
            CUDNN_STATUS_SUCCESS)
        return s;
    return CUDNN_STATUS_SUCCESS;
}

/* cuDNN's first heuristic choice that succeeds within the workspace (FMA math only for FP32). */
static cudnnStatus_t choose(const tc__cudnn *dn, const dnn_geom *g, const dnn_descs *d,
                            cudnnConvolutionFwdAlgo_t *algo) {
    if (cache_find(g, algo)) return CUDNN_STATUS_SUCCESS;
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int got = 0;
    cudnnStatus_t s = dn->GetConvolutionForwardAlgorithm_v7(dn->handle, d->x, d->w, d->conv, d->y,
                                                            CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf);
    if (s != CUDNN_STATUS_SUCCESS) return s;
    for (int i = 0; i < got; i++) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > TC__DNN_WORKSPACE) continue;
        if (!g->half && perf[i].mathType != CUDNN_FMA_MATH) continue;
        *algo = perf[i].algo;
        cache_put(g, *algo);
        return CUDNN_STATUS_SUCCESS;
    }
    return CUDNN_STATUS_NOT_SUPPORTED;
}

/* y = conv(x, w) on the stream (data in the layout and type of g). */
static tc_status convolve(const tc__kernel_ctx *ctx, const dnn_geom *g, const void *x, const void *w, void *y,
                          void *ws) {
    const tc__cudnn *dn = tc__cudnn_get(ctx->err);
    if (dn == NULL) return TC_STATUS_UNSUPPORTED;
    dnn_descs d;
    tc__cudnn_lock();
    const char *what = "cuDNN descriptors";
    cudnnStatus_t s = descs_make(dn, g, &d);
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    if (s == CUDNN_STATUS_SUCCESS) what = "cuDNN algorithm choice", s = choose(dn, g, &d, &algo);
    if (s == CUDNN_STATUS_SUCCESS) what = "cudnnSetStream", s = dn->SetStream(dn->handle, tc__cuda_stream(ctx));
    const float one = 1.0f, zero = 0.0f;
    if (s == CUDNN_STATUS_SUCCESS)
        what = "cudnnConvolutionForward",
        s = dn->ConvolutionForward(dn->handle, &one, d.x, x, d.w, w, d.conv, algo, ws, TC__DNN_WORKSPACE, &zero, d.y, y);
    tc__cudnn_unlock();
    descs_destroy(dn, &d);
    return tc__cudnn_fail(s, ctx->err, what);
}

/*
 * y = act(conv(x, w) + bias + z) in one cuDNN call (cudnnConvolutionBiasActivationForward; FP16 NHWC, g->half): bias
 * the packed FP16 [K], z an FP16 NHWC residual or NULL, act ReLU or none (none only with the implicit precomputed GEMM,
 * as cuDNN requires). TC_STATUS_UNSUPPORTED, err untouched, when the library lacks the call or refuses this
 * convolution (CUDNN_STATUS_NOT_SUPPORTED): the caller convolves and runs the epilogue pass.
 */
static tc_status convolve_fused(const tc__kernel_ctx *ctx, const dnn_geom *g, const void *x, const void *w, void *y,
                                void *ws, const void *bias16, const void *z, tc__act act) {
    tc__err lerr = {0};
    const tc__cudnn *dn = tc__cudnn_get(&lerr);
    if (dn == NULL || dn->ConvolutionBiasActivationForward == NULL || !g->half || bias16 == NULL ||
        (act != TC__ACT_RELU && act != TC__ACT_NONE))
        return TC_STATUS_UNSUPPORTED;
    dnn_descs d;
    cudnnTensorDescriptor_t bd = NULL;
    cudnnActivationDescriptor_t ad = NULL;
    tc__cudnn_lock();
    const char *what = "cuDNN descriptors";
    cudnnStatus_t s = descs_make(dn, g, &d);
    if (s == CUDNN_STATUS_SUCCESS) s = dn->CreateTensorDescriptor(&bd);
    if (s == CUDNN_STATUS_SUCCESS) s = dn->SetTensor4dDescriptor(bd, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, 1, g->k, 1, 1);
    if (s == CUDNN_STATUS_SUCCESS) s = dn->CreateActivationDescriptor(&ad);
    if (s == CUDNN_STATUS_SUCCESS)
        s = dn->SetActivationDescriptor(ad, act == TC__ACT_RELU ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
                                        CUDNN_NOT_PROPAGATE_NAN, 0.0);
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    if (s == CUDNN_STATUS_SUCCESS) what = "cuDNN algorithm choice", s = choose(dn, g, &d, &algo);
    if (s == CUDNN_STATUS_SUCCESS && act == TC__ACT_NONE && algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
        s = CUDNN_STATUS_NOT_SUPPORTED;
    if (s == CUDNN_STATUS_SUCCESS) what = "cudnnSetStream", s = dn->SetStream(dn->handle, tc__cuda_stream(ctx));
    const float one = 1.0f, alpha2 = z != NULL ? 1.0f : 0.0f;
    if (s == CUDNN_STATUS_SUCCESS)
        what = "cudnnConvolutionBiasActivationForward",
        s = dn->ConvolutionBiasActivationForward(dn->handle, &one, d.x, x, d.w, w, d.conv, algo, ws, TC__DNN_WORKSPACE,
                                                 &alpha2, d.y, z != NULL ? z : y, bd, bias16, ad, d.y, y);
    tc__cudnn_unlock();
    if (ad) dn->DestroyActivationDescriptor(ad);
    if (bd) dn->DestroyTensorDescriptor(bd);
    descs_destroy(dn, &d);
    if (s == CUDNN_STATUS_NOT_SUPPORTED) return TC_STATUS_UNSUPPORTED;
    return tc__cudnn_fail(s, ctx->err, what);
}

/* ---- the tactics ----------------------------------------------------------------------------------------------- */

/* Whether cuDNN has an algorithm for g within the workspace (and remembers it). */
static bool has_algorithm(const dnn_geom *g, char *why, size_t why_size) {
    tc__err err = {0};
    const tc__cudnn *dn = tc__cudnn_get(&err);
    if (dn == NULL) {
        snprintf(why, why_size, "%.200s", err.msg);
        return false;
    }
    dnn_descs d;
    cudnnConvolutionFwdAlgo_t algo;
    tc__cudnn_lock();
    cudnnStatus_t s = descs_make(dn, g, &d);
    if (s == CUDNN_STATUS_SUCCESS) s = choose(dn, g, &d, &algo);
    tc__cudnn_unlock();
    descs_destroy(dn, &d);
    if (s != CUDNN_STATUS_SUCCESS)
        snprintf(why, why_size, "cuDNN has no %s algorithm for it within %zu MiB of workspace (%s)",
                 g->half ? "FP16 Tensor Core" : "FP32 (FMA)", TC__DNN_WORKSPACE >> 20, dn->GetErrorString(s));
    return s == CUDNN_STATUS_SUCCESS;
}

static bool supports_common(const tc__step_desc *d, bool half) {
    dnn_geom g;
    if (!step_geometry(d, half, &g) || !tc__cnn_epi_ok(d, false)) return false;
    if (!tc__cudnn_available()) return tc__refuse(d, "cuDNN (libcudnn.so.9) cannot be loaded");
    char why[400];
    if (!has_algorithm(&g, why, sizeof why)) return tc__refuse(d, "%s", why);
    return true;
}
static bool supports_f16(const tc__step_desc *d) { return tc__lt_fp16_marked(d) && supports_common(d, true); }
static bool supports_f32(const tc__step_desc *d) { return supports_common(d, false); }

static bool packs_input(const tc__step_desc *d, int index) {
    (void)d;
    return index == 1;
}

/* Bytes of the FP16 filter, and where the packed weight keeps the FP16 copy of the bias after it (the pointwise GEMM's
 * cuBLASLt bias has D's type): 0 when it does not fit within the FP32 source's bytes. */
static size_t filter16_bytes(const dnn_geom *g) { return (size_t)g->k * (size_t)(g->c / g->groups) * (size_t)(g->r * g->s) * 2; }
static size_t bias16_at(const dnn_geom *g) {
    const size_t at = tc__lt_round(filter16_bytes(g));
    return at + (size_t)g->k * 2 <= filter16_bytes(g) * 2 ? at : 0;
}

/* Whether the step's bias B is constant float32 [K] with data: then the packing appends its FP16 copy (when it fits). */
static bool const_bias(const tc__step_desc *d) {
    return d->n_in > 2 && d->in[2] != NULL && d->in_const != NULL && d->in_const[2] && d->in[2]->data != NULL &&
           is_f32(d->in[2]);
}

static size_t packed_bytes(const tc__step_desc *d, int index) {
    dnn_geom g;
    if (index != 1 || !step_geometry(d, true, &g)) return 0;
    const size_t at = const_bias(d) ? bias16_at(&g) : 0;
    return at != 0 ? at + (size_t)g.k * 2 : filter16_bytes(&g);
}

/* W16[k][i][j][ci] = fp16(W[k, ci, i, j]): cuDNN's NHWC filter. */
static tc_status pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    dnn_geom g;
    if (index != 1 || !step_geometry(d, true, &g))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "cuda_conv_fp16_cudnn packs only the weight of a step it takes");
    const float *w = src;
    uint16_t *o = dst;
    const int64_t cg = g.c / g.groups, rs = (int64_t)g.r * g.s;
    for (int64_t k = 0; k < g.k; k++)
        for (int64_t ci = 0; ci < cg; ci++)
            for (int64_t q = 0; q < rs; q++) o[(k * rs + q) * cg + ci] = tc__f32_to_f16(w[(k * cg + ci) * rs + q]);
    const size_t at = const_bias(d) ? bias16_at(&g) : 0; /* the FP16 bias (the gap before it zeroed) */
    if (at != 0) {
        memset((unsigned char *)dst + filter16_bytes(&g), 0, at - filter16_bytes(&g));
        uint16_t *b16 = (uint16_t *)((unsigned char *)dst + at);
        const float *b = d->in[2]->data;
        for (int64_t k = 0; k < g.k; k++) b16[k] = tc__f32_to_f16(b[k]);
    }
    return TC_STATUS_OK;
}

static size_t scratch_f16(const tc__step_desc *d) {
    dnn_geom g;
    return step_geometry(d, true, &g) ? scratch_of(&g) : 0;
}
static size_t scratch_f32(const tc__step_desc *d) {
    dnn_geom g;
    return step_geometry(d, false, &g) ? scratch_of(&g) : 0;
}

/* The checks both run()s share: inputs, geometry, epilogue, scratch. */
static tc_status run_prepare(const tc__kernel_ctx *ctx, bool half, dnn_geom *g, tc__cuda_epi *e, unsigned char **sc) {
    if (ctx->n_in < 2 || ctx->n_in > 3 || ctx->in[0] == NULL || ctx->in[1] == NULL || ctx->n_out < 1 ||
        ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects inputs X, W (and optional B) and output Y");
    const tc__tensor *x = ctx->in[0], *w = ctx->in[1], *b = ctx->n_in > 2 ? ctx->in[2] : NULL;
    const tc__tensor *y = ctx->out[0];
    if (!is_f32(x) || !is_f32(w) || !is_f32(y) || (b != NULL && !is_f32(b)) || !geometry(ctx->attrs, x, w, y, half, g))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "cuDNN convolution: a convolution it does not compute");
    if (b != NULL && (b->rank != 1 || b->dims[0] != g->k))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "bias B must have shape [%d]", g->k);
    const size_t wbytes = half ? filter16_bytes(g) : filter16_bytes(g) * 2;
    if (w->nbytes < wbytes)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "cuDNN convolution: the weight is not packed for it");
    tc_status st = tc__cnn_epi_of(ctx, false, e);
    if (st != TC_STATUS_OK) return st;
    *sc = tc__lt_scratch(ctx, scratch_of(g) - TC__LT_ALIGN);
    if (*sc == NULL) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "cuDNN convolution: scratch too small");
    return TC_STATUS_OK;
}

static bool attr_on(const tc__attrs *a, const char *name) { return a != NULL && tc__attr_int(a, name, 0) == 1; }

/*
 * A pointwise convolution (1x1, stride 1, no padding, one group, C and K multiples of 8) whose output stays FP16 NHWC
 * is one GEMM: column-major D[K, N*H*W] = W16[C, K]^T . X[C, N*H*W] (an NHWC image is a column-major [C, pixels]
 * matrix), with cuBLASLt's epilogue doing the rest in the same kernel: the FP16 bias over D's rows (packed after the
 * filter), an FP16 NHWC residual as C with beta 1, then ReLU. Returns TC_STATUS_UNSUPPORTED (err untouched) when it
 * does not apply or cuBLASLt has no algorithm: the caller takes cuDNN.
 */
static tc_status pointwise_gemm(const tc__kernel_ctx *ctx, const dnn_geom *g, const tc__cuda_epi *e, bool res16,
                                const void *bias16, const void *xh, void *y, void *ws) {
    const tc__tensor *w = ctx->in[1], *b = ctx->n_in > 2 ? ctx->in[2] : NULL;
    if ((b != NULL && bias16 == NULL) || g->r != 1 || g->s != 1 || g->sh != 1 || g->sw != 1 || g->ph != 0 || g->pw != 0 || g->groups != 1 ||
        g->c % 8 != 0 || g->k % 8 != 0 || (e->residual != NULL && !res16) ||
        (e->act.act != TC__ACT_NONE && e->act.act != TC__ACT_RELU))
        return TC_STATUS_UNSUPPORTED;
    const tc__lt_gemm lg = {.m = g->k, .n = (int64_t)g->n * g->h * g->w, .k = g->c, .batch = 1, .a = w->data,
                            .lda = g->c, .trans_a = true, .b = xh, .ldb = g->c, .c = e->residual, .d = y, .d16 = true,
                            .ldd = g->k, .alpha = 1.0f, .beta = 1.0f,
                            .bias = bias16,
                            .relu = e->act.act == TC__ACT_RELU, .workspace = ws, .workspace_bytes = TC__LT_WORKSPACE};
    tc__err lerr = {0};
    bool epi_done = false;
    const tc_status st = tc__lt_gemm_run(&lg, tc__cuda_stream(ctx), &epi_done, &lerr);
    if (st == TC_STATUS_UNSUPPORTED) return st;
    if (st != TC_STATUS_OK) return tc__fail(ctx->err, st, "%s", lerr.msg);
    if (epi_done) return TC_STATUS_OK;
    /* cuBLASLt had no algorithm with the bias / ReLU epilogue: the residual is in (C), the pass does the rest */
    const tc__dnn_epi pe = {.yh = y, .y = y, .out_nhwc16 = 1, .n = g->n, .c = g->k, .hw = (int64_t)g->h * g->w,
                            .bias = b != NULL ? b->data : NULL, .act = e->act};
    const cudaError_t ce = tc__dnn_epilogue(&pe, tc__cuda_stream(ctx));
    return ce == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(ce, ctx->err, "epilogue pass");
}

/* The FP16 copy of the step's bias packed after the filter, or NULL (no bias, or one the packing left FP32). */
static const void *packed_bias16(const tc__kernel_ctx *ctx, const dnn_geom *g) {
    const size_t at = bias16_at(g);
    const tc__tensor *w = ctx->in[1];
    return ctx->n_in > 2 && ctx->in[2] != NULL && at != 0 && w->nbytes == at + (size_t)g->k * 2
               ? (const unsigned char *)w->data + at
               : NULL;
}

/* ---- configurations (conv16_paths.h): for a step whose output stays FP16 NHWC ---------------------------------- */

/* The paths' view of a chained step: false when only the default computes it (output not FP16 NHWC, groups, an FP32
 * residual, an activation other than ReLU, a bias the packing left FP32). */
static bool conv16_geom_of(const dnn_geom *g, bool out16, bool has_bias, bool bias16, bool has_res, bool res16,
                           tc__act act, tc__conv16_geom *o) {
    memset(o, 0, sizeof *o);
    if (!out16 || !g->half || g->groups != 1 || (has_bias && !bias16) || (has_res && !res16) ||
        (act != TC__ACT_NONE && act != TC__ACT_RELU))
        return false;
    /* (field by field: the memset's zero padding stays, and the paths' memo compares these bytes whole) */
    o->n = g->n, o->c = g->c, o->h = g->h, o->w = g->w, o->k = g->k, o->r = g->r, o->s = g->s, o->oh = g->oh;
    o->ow = g->ow, o->ph = g->ph, o->pw = g->pw, o->sh = g->sh, o->sw = g->sw, o->dh = g->dh, o->dw = g->dw;
    o->bias = has_bias, o->residual = has_res, o->relu = act == TC__ACT_RELU;
    return true;
}

static int configs_f16(const tc__step_desc *d, void *out, int cap) {
    dnn_geom g;
    if (cap < 1 || !tc__lt_fp16_marked(d) || !step_geometry(d, true, &g)) return 0;
    const tc__epilogue *e = d->epi;
    const bool has_bias = d->n_in > 2 && d->in[2] != NULL;
    const bool has_res = e != NULL && (e->residual_input >= 0 || d->residual != NULL);
    tc__conv16_geom cg;
    if (!conv16_geom_of(&g, attr_on(d->attrs, TC__ATTR_NHWC16_OUT), has_bias, const_bias(d) && bias16_at(&g) != 0,
                        has_res, attr_on(d->attrs, TC__ATTR_NHWC16_RES), e != NULL ? e->act : TC__ACT_NONE, &cg)) {
        memset(out, 0, sizeof(tc__conv16_cfg));
        return 1; /* the default alone */
    }
    return tc__conv16_configs(&cg, TC__DNN_WORKSPACE, out, cap);
}

static tc_status run_f16(const tc__kernel_ctx *ctx) {
    dnn_geom g;
    tc__cuda_epi e;
    unsigned char *sc;
    tc_status st = run_prepare(ctx, true, &g, &e, &sc);
    if (st != TC_STATUS_OK) return st;
    const bool in16 = attr_on(ctx->attrs, TC__ATTR_NHWC16_IN), out16 = attr_on(ctx->attrs, TC__ATTR_NHWC16_OUT);
    const bool res16 = attr_on(ctx->attrs, TC__ATTR_NHWC16_RES);
    if (res16 && e.residual == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "cuda_conv_fp16_cudnn: an FP16 NHWC residual without one");
    const tc__tensor *b = ctx->n_in > 2 ? ctx->in[2] : NULL;
    const int64_t hw = (int64_t)g.h * g.w, ohw = (int64_t)g.oh * g.ow;
    void *ws = sc, *xh = sc + TC__DNN_WORKSPACE, *yh = sc + TC__DNN_WORKSPACE + half_bytes((int64_t)g.n * g.c * hw);
    const cudaStream_t s = tc__cuda_stream(ctx);
    if (in16) {
        xh = ctx->in[0]->data;
    } else {
        const cudaError_t ce = tc__dnn_nchw_to_nhwc_f16(ctx->in[0]->data, g.n, g.c, hw, xh, s);
        if (ce != cudaSuccess) return tc__cuda_fail(ce, ctx->err, "FP16 NHWC cast of X");
    }
    if (out16) {
        yh = ctx->out[0]->data;
        const void *bias16 = packed_bias16(ctx, &g);
        tc__conv16_cfg cfg;
        tc__conv16_geom cg;
        if (ctx->config != NULL) memcpy(&cfg, ctx->config, sizeof cfg);
        if (ctx->config != NULL && cfg.path != TC__CONV16_DEFAULT &&
            conv16_geom_of(&g, true, b != NULL, bias16 != NULL, e.residual != NULL, res16, e.act.act, &cg)) {
            st = tc__conv16_run(&cg, &cfg, xh, ctx->in[1]->data, bias16, e.residual, yh, ws, TC__DNN_WORKSPACE, s,
                                ctx->err);
            if (st != TC_STATUS_UNSUPPORTED) return st; /* (refused here: the default computes the same) */
        }
        st = pointwise_gemm(ctx, &g, &e, res16, bias16, xh, yh, ws);
        if (st != TC_STATUS_UNSUPPORTED) return st;
        if (bias16 != NULL && (e.residual == NULL || res16)) {
            st = convolve_fused(ctx, &g, xh, ctx->in[1]->data, yh, ws, bias16, e.residual, e.act.act);
            if (st != TC_STATUS_UNSUPPORTED) return st;
        }
    }
    st = convolve(ctx, &g, xh, ctx->in[1]->data, yh, ws);
    if (st != TC_STATUS_OK) return st;
    if (out16 && b == NULL && e.residual == NULL && e.act.act == TC__ACT_NONE) return TC_STATUS_OK;
    const tc__dnn_epi pe = {.yh = yh, .y = ctx->out[0]->data, .out_nhwc16 = out16, .res_nhwc16 = res16, .n = g.n,
                            .c = g.k, .hw = ohw, .bias = b != NULL ? b->data : NULL, .residual = e.residual,
                            .act = e.act};
    const cudaError_t ce = tc__dnn_epilogue(&pe, s);
    return ce == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(ce, ctx->err, "epilogue pass");
}

static tc_status run_f32(const tc__kernel_ctx *ctx) {
    dnn_geom g;
    tc__cuda_epi e;
    unsigned char *sc;
    tc_status st = run_prepare(ctx, false, &g, &e, &sc);
    if (st != TC_STATUS_OK) return st;
    const tc__tensor *b = ctx->n_in > 2 ? ctx->in[2] : NULL;
    tc__tensor *y = ctx->out[0];
    st = convolve(ctx, &g, ctx->in[0]->data, ctx->in[1]->data, y->data, sc);
    if (st != TC_STATUS_OK) return st;
    if (b == NULL && e.residual == NULL && e.act.act == TC__ACT_NONE) return TC_STATUS_OK;
    const int64_t ohw = (int64_t)g.oh * g.ow;
    const tc__lt_epi pe = {.y = y->data, .total = (int64_t)g.n * g.k * ohw, .chan_bias = b != NULL ? b->data : NULL,
                           .inner = ohw, .channels = g.k, .residual = e.residual, .act = e.act};
    const cudaError_t ce = tc__lt_epilogue(&pe, tc__cuda_stream(ctx));
    return ce == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(ce, ctx->err, "FP32 epilogue pass");
}

const tc__tactic tc__tactic_cuda_conv_fp16_cudnn = {
    .name = "cuda_conv_fp16_cudnn",
    .op_type = "Conv",
    .backend = TC__BACKEND_CUDA,
    .flags = TC__TACTIC_FUSES_EPILOGUE | TC__TACTIC_CHAIN_FIRST,
    .chain = TC__CHAIN_FP16_NHWC,
    .precision = "fp16",
    .supports = supports_f16,
    .packs_input = packs_input,
    .pack = pack,
    .packed_bytes = packed_bytes,
    .scratch_bytes = scratch_f16,
    .run = run_f16,
    .config_bytes = sizeof(tc__conv16_cfg),
    .configs = configs_f16,
    .check_config = tc__conv16_cfg_check,
};

const tc__tactic tc__tactic_cuda_conv_cudnn = {
    .name = "cuda_conv_cudnn",
    .op_type = "Conv",
    .backend = TC__BACKEND_CUDA,
    .flags = TC__TACTIC_FUSES_EPILOGUE,
    .supports = supports_f32,
    .scratch_bytes = scratch_f32,
    .run = run_f32,
};
