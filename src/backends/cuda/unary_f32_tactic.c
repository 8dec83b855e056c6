/*
 * unary_f32_tactic.c - the FP32 unary tactics cuda_relu_f32, cuda_sigmoid_f32, cuda_tanh_f32, cuda_erf_f32,
 * cuda_gelu_f32 (approximate none / tanh), cuda_hardswish_f32, cuda_hardsigmoid_f32, cuda_leakyrelu_f32,
 * cuda_clip_f32 (bounds from constant inputs 1 / 2, or the min / max attributes before opset 11), cuda_sqrt_f32,
 * cuda_exp_f32, cuda_neg_f32, cuda_abs_f32, cuda_reciprocal_f32: one kernel with an op code (unary_f32.cu), the
 * whole epilogue fused.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "backends/cuda/eltwise_f32.h"

/* Clip's bound input i as the step sees it: absent, empty (also absent) or one constant float32 element. */
static bool clip_bound_ok(const tc__step_desc *d, int i) {
    if (i >= d->n_in || d->in[i] == NULL) return true;
    const int64_t n = tc__tensor_numel(d->in[i]);
    if (d->in[i]->dtype != TC_DTYPE_FLOAT32 || n < 0 || n > 1) return false;
    return n == 0 || (d->in_const != NULL && d->in_const[i]);
}

/* The kernel op code and parameters of op_type (Gelu's approximate attribute); -1 when not computed here. */
static int op_code(const char *op, const tc__attrs *attrs, float *alpha, float *beta) {
    *alpha = *beta = 0.0f;
    if (strcmp(op, "Relu") == 0) return TC__CUDA_UN_RELU;
    if (strcmp(op, "Sigmoid") == 0) return TC__CUDA_UN_SIGMOID;
    if (strcmp(op, "Tanh") == 0) return TC__CUDA_UN_TANH;
    if (strcmp(op, "Erf") == 0) return TC__CUDA_UN_ERF;
    if (strcmp(op, "Gelu") == 0) {
        const char *approx = tc__attr_string(attrs, "approximate", "none");
        if (strcmp(approx, "none") == 0) return TC__CUDA_UN_GELU_ERF;
        if (strcmp(approx, "tanh") == 0) return TC__CUDA_UN_GELU_TANH;
        return -1;
    }
    if (strcmp(op, "HardSwish") == 0) return TC__CUDA_UN_HARDSWISH;
    if (strcmp(op, "HardSigmoid") == 0) {
        *alpha = tc__attr_float(attrs, "alpha", 0.2f);
        *beta = tc__attr_float(attrs, "beta", 0.5f);
        return TC__CUDA_UN_HARDSIGMOID;
    }
    if (strcmp(op, "LeakyRelu") == 0) {
        *alpha = tc__attr_float(attrs, "alpha", 0.01f);
        return TC__CUDA_UN_LEAKY_RELU;
    }
    if (strcmp(op, "Clip") == 0) return TC__CUDA_UN_CLIP; /* bounds: clip_bounds */
    if (strcmp(op, "Sqrt") == 0) return TC__CUDA_UN_SQRT;
    if (strcmp(op, "Exp") == 0) return TC__CUDA_UN_EXP;
    if (strcmp(op, "Neg") == 0) return TC__CUDA_UN_NEG;
    if (strcmp(op, "Abs") == 0) return TC__CUDA_UN_ABS;
    if (strcmp(op, "Reciprocal") == 0) return TC__CUDA_UN_RECIPROCAL;
    return -1;
}

static bool supports(const tc__step_desc *d) {
    if (d->n_in < 1 || d->in[0] == NULL || d->n_out != 1 || d->out[0] == NULL)
        return tc__refuse(d, "expects input X and one output");
    const bool clip = strcmp(d->op_type, "Clip") == 0;
    if (clip ? d->n_in > (d->opset < 11 ? 1 : 3) : d->n_in != 1) return tc__refuse(d, "unexpected inputs");
    if (!tc__cnn_is_f32(d->in[0]) || !tc__cnn_is_f32(d->out[0]) || !tc__cnn_same_shape(d->in[0], d->out[0]) ||
        d->out[0]->rank > TC_MAX_RANK)
        return tc__refuse(d, "X and Y are not float32 of one shape");
    float alpha, beta;
    if (op_code(d->op_type, d->attrs, &alpha, &beta) < 0) return tc__refuse(d, "op or attributes not computed here");
    if (clip && (!clip_bound_ok(d, 1) || !clip_bound_ok(d, 2)))
        return tc__refuse(d, "Clip bounds that are not constant float32 scalars");
    return tc__cnn_epi_ok(d, true);
}

/* Clip's bounds for the kernel: opset < 11 attributes, else the host copies of inputs 1 and 2. */
static tc_status clip_bounds(const tc__kernel_ctx *ctx, float *lo, float *hi) {
    if (ctx->opset < 11) {
        *lo = tc__attr_float(ctx->attrs, "min", -FLT_MAX);
        *hi = tc__attr_float(ctx->attrs, "max", FLT_MAX);
        return TC_STATUS_OK;
    }
    *lo = -INFINITY;
    *hi = INFINITY;
    for (int i = 1; i <= 2 && i < ctx->n_in; i++) {
        if (ctx->in[i] == NULL) continue;
        const int64_t n = tc__tensor_numel(ctx->in[i]);
        if (n == 0) continue;
        const tc__tensor *h = ctx->host_in != NULL ? ctx->host_in[i] : NULL;
        if (n != 1 || ctx->in[i]->dtype != TC_DTYPE_FLOAT32 || h == NULL || h->data == NULL ||
            h->dtype != TC_DTYPE_FLOAT32 || tc__tensor_numel(h) != 1)
            return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "Clip: bound input %d is not a float32 scalar known "
                            "before the run", i);
        *(i == 1 ? lo : hi) = *(const float *)h->data;
    }
    return TC_STATUS_OK;
}

static tc_status run(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 1 || ctx->in[0] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects input X and output Y");
    const tc__tensor *x = ctx->in[0];
    tc__tensor *y = ctx->out[0];
    if (!tc__cnn_is_f32(x) || !tc__cnn_is_f32(y) || !tc__cnn_same_shape(x, y))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "X and Y must be float32 of one shape");
    float alpha, beta;
    const int op = op_code(ctx->op_type, ctx->attrs, &alpha, &beta);
    if (op < 0) return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "%s: not computed here", ctx->op_type);
    tc_status st;
    if (op == TC__CUDA_UN_CLIP && (st = clip_bounds(ctx, &alpha, &beta)) != TC_STATUS_OK) return st;
    tc__cuda_epi epi;
    if ((st = tc__cnn_epi_of(ctx, true, &epi)) != TC_STATUS_OK) return st;
    return tc__cuda_fail(tc__cuda_unary_f32(op, x->data, y->data, tc__tensor_numel(x), alpha, beta, epi,
                                            tc__cuda_stream(ctx)),
                         ctx->err, "cuda unary launch");
}

#define TC_CUDA_UNARY_TACTIC(lower, Op)                 \
    const tc__tactic tc__tactic_cuda_##lower##_f32 = { \
        .name = "cuda_" #lower "_f32",                 \
        .op_type = #Op,                                \
        .backend = TC__BACKEND_CUDA,                   \
        .caps = 0,                                     \
        .flags = TC__TACTIC_FUSES_EPILOGUE,            \
        .supports = supports,                          \
        .run = run,                                    \
    };

TC_CUDA_UNARY_TACTIC(relu, Relu)
TC_CUDA_UNARY_TACTIC(sigmoid, Sigmoid)
TC_CUDA_UNARY_TACTIC(tanh, Tanh)
TC_CUDA_UNARY_TACTIC(erf, Erf)
TC_CUDA_UNARY_TACTIC(gelu, Gelu)
TC_CUDA_UNARY_TACTIC(hardswish, HardSwish)
TC_CUDA_UNARY_TACTIC(hardsigmoid, HardSigmoid)
TC_CUDA_UNARY_TACTIC(leakyrelu, LeakyRelu)
TC_CUDA_UNARY_TACTIC(clip, Clip)
TC_CUDA_UNARY_TACTIC(sqrt, Sqrt)
TC_CUDA_UNARY_TACTIC(exp, Exp)
TC_CUDA_UNARY_TACTIC(neg, Neg)
TC_CUDA_UNARY_TACTIC(abs, Abs)
TC_CUDA_UNARY_TACTIC(reciprocal, Reciprocal)
