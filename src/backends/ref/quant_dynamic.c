/*
 * quant_dynamic.c - reference DynamicQuantizeLinear (float32 -> uint8 with a scale and zero point computed from
 * the input's range), in float32 arithmetic exactly as the ONNX reference and onnxruntime write it:
 *   lo = min(0, min(x)), hi = max(0, max(x)), scale = hi == lo ? 1 : (hi - lo) / 255
 *   zero_point = round_half_even(clamp(0 - lo / scale, 0, 255))
 *   y = clamp(round_half_even(x / scale) + zero_point, 0, 255)
 * A NaN or an infinity in x has no such range: the kernel fails naming the node instead of guessing.
 */
#include <math.h>

#include "backends/ref/ref.h"
#include "core/tensor.h"

tc_status tc__ref_DynamicQuantizeLinear(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 1 || ctx->in[0] == NULL || ctx->n_out != 3 || !ctx->out[0] || !ctx->out[1] || !ctx->out[2])
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects input x and outputs y, y_scale, y_zero_point");
    const tc__tensor *x = ctx->in[0];
    tc__tensor *y = ctx->out[0], *ys = ctx->out[1], *yz = ctx->out[2];
    if (x->dtype != TC_DTYPE_FLOAT32) return tc__ref_unsupported_dtype(ctx, 0, x->dtype);
    const int64_t n = tc__tensor_numel(x);
    if (y->dtype != TC_DTYPE_UINT8 || tc__tensor_numel(y) != n || ys->dtype != TC_DTYPE_FLOAT32 ||
        tc__tensor_numel(ys) != 1 || yz->dtype != TC_DTYPE_UINT8 || tc__tensor_numel(yz) != 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "outputs must be uint8 like x, a float32 scalar and a uint8 scalar");
    const float *xv = x->data;
    float lo = 0.0f, hi = 0.0f;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(xv[i]))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                            "input element %lld is %g: no quantization range exists for NaN or infinity",
                            (long long)i, (double)xv[i]);
        lo = xv[i] < lo ? xv[i] : lo;
        hi = xv[i] > hi ? xv[i] : hi;
    }
    const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    if (!(scale > 0.0f) || !isfinite(scale)) /* a range beyond float32 (e.g. -FLT_MAX..FLT_MAX) */
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "the input's range %g..%g gives no finite scale",
                        (double)lo, (double)hi);
    float zp = 0.0f - lo / scale;
    zp = zp < 0.0f ? 0.0f : zp > 255.0f ? 255.0f : zp;
    const float zpr = nearbyintf(zp);
    uint8_t *yv = y->data;
    for (int64_t i = 0; i < n; i++) {
        float v = nearbyintf(xv[i] / scale) + zpr;
        v = v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v;
        yv[i] = (uint8_t)v;
    }
    *(float *)ys->data = scale;
    *(uint8_t *)yz->data = (uint8_t)zpr;
    return TC_STATUS_OK;
}
