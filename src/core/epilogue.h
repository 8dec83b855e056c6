/*
 * epilogue.h - what a fused step applies to its output while it is still hot:
 *   y = act(op(x) + bias + residual)
 * bias is broadcast along the output's last dim; residual has the output's shape.
 * Shared by the graph layer (fusion passes record it on nodes) and backends (apply it).
 */
#ifndef TC_CORE_EPILOGUE_H
#define TC_CORE_EPILOGUE_H

#include <stdint.h>

typedef enum tc__act {
    TC__ACT_NONE = 0,
    TC__ACT_RELU,
    TC__ACT_CLIP,        /* alpha = min, beta = max */
    TC__ACT_SIGMOID,
    TC__ACT_SILU,        /* x * sigmoid(x) */
    TC__ACT_HARDSWISH,
    TC__ACT_HARDSIGMOID, /* alpha, beta as ONNX */
    TC__ACT_GELU_ERF,
    TC__ACT_GELU_TANH,
    TC__ACT_LEAKY_RELU,  /* alpha */
    TC__ACT_TANH,
    /* A QDQ model's QuantizeLinear -> DequantizeLinear pair on the output (per tensor): alpha = scale,
     * beta = qmin, the lowest code minus the zero point; y = clamp(rne(x * (1 / alpha)), qmin, qmin + 255) *
     * alpha, NaN -> 0 (see tc__fake_quant). QuantizeLinear divides; the product differs only where x / alpha
     * is within an ulp of a tie. */
    TC__ACT_FAKE_QUANT,
    TC__ACT_COUNT_
} tc__act;

typedef struct tc__epilogue {
    int8_t bias_input;     /* node input index of a 1-D bias over the last dim, or -1 */
    int8_t residual_input; /* node input index of a same-shape addend, or -1 */
    uint8_t act;           /* tc__act */
    uint8_t reserved_;
    float alpha, beta;
} tc__epilogue;

static inline tc__epilogue tc__epilogue_none(void) { return (tc__epilogue){-1, -1, TC__ACT_NONE, 0, 0.0f, 0.0f}; }
static inline int tc__epilogue_is_none(const tc__epilogue *e) {
    return e->bias_input < 0 && e->residual_input < 0 && e->act == TC__ACT_NONE;
}

/* The fake quantization of one value in float: x times the reciprocal of scale, rounded to even. */
static inline float tc__fake_quant(float x, float scale, float qmin) {
    float q = __builtin_nearbyintf(x * (1.0f / scale)); /* a product, as the vector kernels (no division) */
    if (q != q) return 0.0f; /* NaN: QuantizeLinear gives the zero point, i.e. 0 */
    q = q < qmin ? qmin : (q > qmin + 255.0f ? qmin + 255.0f : q);
    return (q + 0.0f) * scale; /* + 0: a code is never -0 */
}

/* Name of an activation ("Relu", "Clip", ...), as used in fused-op descriptions. */
const char *tc__act_name(tc__act act);

#endif
