/*
 * cnn_epi.h - the fused epilogue (core/epilogue.h: y = act(op + bias + residual)) as the convolution, pooling and
 * elementwise CUDA kernels take it (tc__cuda_epi, passed by value to their launchers), and the host helpers their
 * tactics share: which epilogues a step may carry (tc__cnn_epi_ok), the record of a context's epilogue
 * (tc__cnn_epi_of), and the common float32 / layout checks. Plain C; the device side is cnn_epi.cuh.
 */
#ifndef TC_BACKENDS_CUDA_CNN_EPI_H
#define TC_BACKENDS_CUDA_CNN_EPI_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/cuda/cuda_exec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A kernel's epilogue: bias (bias_len elements, over the output's last dim; NULL: none), residual (the output's
 * shape; NULL: none) and activation. Element i of the output gets bias[i % bias_len] and residual[i]. */
typedef struct tc__cuda_epi {
    const float *bias;
    int64_t bias_len;
    const float *residual;
    tc__cuda_act act;
} tc__cuda_epi;

#ifdef __cplusplus
}
#endif

#ifndef __CUDACC__
#include "backends/tactic.h"
#include "core/layout.h"

static inline bool tc__cnn_is_f32(const tc__tensor *t) { return t != NULL && t->dtype == TC_DTYPE_FLOAT32; }

static inline bool tc__cnn_same_shape(const tc__tensor *a, const tc__tensor *b) {
    if (a->rank != b->rank) return false;
    for (int32_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

/* The last dim of t (1 for a scalar): the length of an epilogue bias. */
static inline int64_t tc__cnn_last_dim(const tc__tensor *t) { return t->rank > 0 ? t->dims[t->rank - 1] : 1; }

/* Whether a CUDA kernel of this family applies step d's epilogue: any activation but the fake quantization, a
 * float32 residual of the output's element count, and (when allow_bias) a float32 bias over the output's last dim.
 * Also refuses blocked layouts (these kernels read NCHW only). Writes the reason through tc__refuse. */
static inline bool tc__cnn_epi_ok(const tc__step_desc *d, bool allow_bias) {
    if (d->attrs != NULL && tc__layout_any_blocked(d->attrs)) return tc__refuse(d, "blocked (NCHW16c) tensors");
    const tc__epilogue *e = d->epi;
    if (e == NULL) {
        if (d->bias != NULL || d->residual != NULL) return tc__refuse(d, "epilogue operands without an epilogue");
        return true;
    }
    if (tc__epilogue_is_none(e) && d->bias == NULL && d->residual == NULL) return true;
    if (d->n_out < 1 || !tc__cnn_is_f32(d->out[0])) return tc__refuse(d, "fused epilogue on a non-float32 output");
    if (e->act >= TC__ACT_COUNT_ || e->act == TC__ACT_FAKE_QUANT)
        return tc__refuse(d, "activation %d is not fused on CUDA", (int)e->act);
    const tc__tensor *y = d->out[0];
    if (e->bias_input >= 0 || d->bias != NULL) {
        if (!allow_bias) return tc__refuse(d, "an epilogue bias over the last dim is not fused by %s", d->op_type);
        if (!tc__cnn_is_f32(d->bias) || tc__tensor_numel(d->bias) != tc__cnn_last_dim(y))
            return tc__refuse(d, "epilogue bias is not float32 over the output's last dim");
    }
    if (e->residual_input >= 0 || d->residual != NULL) {
        if (!tc__cnn_is_f32(d->residual) || tc__tensor_numel(d->residual) != tc__tensor_numel(y))
            return tc__refuse(d, "epilogue residual is not float32 of the output's size");
    }
    return true;
}

/* The epilogue record of a context's step (none when ctx->epi is NULL); fails when its operands are not there. */
static inline tc_status tc__cnn_epi_of(const tc__kernel_ctx *ctx, bool allow_bias, tc__cuda_epi *out) {
    *out = (tc__cuda_epi){NULL, 1, NULL, {TC__ACT_NONE, 0.0f, 0.0f}};
    const tc__epilogue *e = ctx->epi;
    if (e == NULL) return TC_STATUS_OK;
    if (e->act >= TC__ACT_COUNT_ || e->act == TC__ACT_FAKE_QUANT)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "%s: activation %d is not fused on CUDA", ctx->op_type,
                        (int)e->act);
    const tc__tensor *y = ctx->out[0];
    const int64_t n = tc__tensor_numel(y);
    if (e->bias_input >= 0 || ctx->bias != NULL) {
        const tc__tensor *b = ctx->bias;
        if (!allow_bias || !tc__cnn_is_f32(b) || tc__tensor_numel(b) != tc__cnn_last_dim(y) || (b->data == NULL && n > 0))
            return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "%s: this epilogue bias is not fused on CUDA", ctx->op_type);
        out->bias = (const float *)b->data;
        out->bias_len = tc__cnn_last_dim(y) > 0 ? tc__cnn_last_dim(y) : 1;
    }
    if (e->residual_input >= 0 || ctx->residual != NULL) {
        const tc__tensor *r = ctx->residual;
        if (!tc__cnn_is_f32(r) || tc__tensor_numel(r) != n || (r->data == NULL && n > 0))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: fused residual does not match the output",
                            ctx->op_type);
        out->residual = (const float *)r->data;
    }
    out->act = tc__cuda_act_of(e);
    return TC_STATUS_OK;
}
#endif

#endif
