/*
 * vact_f32.h - the activation a vectorized float32 kernel applies to its results: a fused
 * epilogue's activation (core/epilogue.h) or a standalone unary op (Relu, Erf, ...), with
 * the NaN behaviour of the matching reference kernel. The ISA-specific evaluation lives in
 * vact_f32_avx512.h / vact_f32_avx2.h; this header is baseline C.
 */
#ifndef TC_BACKENDS_CPU_VACT_F32_H
#define TC_BACKENDS_CPU_VACT_F32_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/tactic.h"

typedef enum tc__vact_kind {
    TC__VACT_NONE = 0,
    TC__VACT_RELU,        /* x > 0 ? x : 0 (NaN -> 0, as the reference epilogue) */
    TC__VACT_RELU_NAN,    /* x > 0 ? x : 0 with NaN kept (the Relu op) */
    TC__VACT_CLIP,        /* x < alpha ? alpha : (x > beta ? beta : x) */
    TC__VACT_SIGMOID,
    TC__VACT_SILU,        /* x * sigmoid(x) */
    TC__VACT_HARDSWISH,   /* x * clamp(x / 6 + 1/2, 0, 1) */
    TC__VACT_HARDSIGMOID, /* clamp(alpha * x + beta, 0, 1) */
    TC__VACT_GELU_ERF,    /* x / 2 * (1 + erf(x / sqrt 2)) */
    TC__VACT_GELU_TANH,   /* x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) */
    TC__VACT_LEAKY_RELU,  /* x >= 0 ? x : alpha * x */
    TC__VACT_TANH,
    TC__VACT_ERF,
    TC__VACT_FAKE_QUANT,  /* clamp(rne(x * (1 / alpha)), beta, beta + 255) * alpha, NaN -> 0 (tc__fake_quant) */
} tc__vact_kind;

typedef struct tc__vact {
    uint8_t kind; /* tc__vact_kind */
    float alpha, beta;
    float inv;    /* FAKE_QUANT: 1 / alpha, computed once (tc__vact_from_epilogue) */
} tc__vact;

/* The activation of a fused epilogue (every tc__act maps to one). */
tc__vact tc__vact_from_epilogue(const tc__epilogue *e);

/*
 * True when a vector kernel can fuse the step's epilogue itself: a known activation, no
 * bias (conv and elementwise steps never get one from the fusion passes), and a residual,
 * if any, of float32 with out[0]'s shape.
 */
bool tc__vact_epilogue_supported(const tc__step_desc *d);

/*
 * The residual of a fused epilogue at run time as a float32 array of n elements (NULL when
 * there is none); fails when it does not have n float32 elements.
 */
tc_status tc__vact_residual(const tc__kernel_ctx *ctx, int64_t n, const float **res);

/* True when t is float32 with exactly the dims of ref. */
bool tc__vact_same_f32_shape(const tc__tensor *t, const tc__tensor *ref);

#endif
