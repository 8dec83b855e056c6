/*
 * layernorm_f32.h - the FP32 LayerNormalization kernel of the CUDA backend (layernorm_f32.cu): rows of n contiguous
 * elements, y = (x - mean) / sqrt(var + epsilon) * scale + bias, scale and bias per element of the row (stride 1) or
 * one value (stride 0). X and Y are FP32, or FP16 row images (engine/row16_chain.c) where x16 / y16 say so; the
 * statistics are computed in float either way.
 */
#ifndef TC_BACKENDS_CUDA_LAYERNORM_F32_H
#define TC_BACKENDS_CUDA_LAYERNORM_F32_H

#include <stdbool.h>

#include "backends/cuda/cuda_exec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tc__cuda_layernorm_args {
    const void *x;                 /* float, or FP16 when x16 */
    const float *scale, *bias;     /* bias may be NULL */
    void *y;                       /* float, or FP16 when y16 */
    bool x16, y16;
    int64_t rows, n;
    int64_t scale_stride, bias_stride;
    float epsilon;
} tc__cuda_layernorm_args;

/* Launches on stream (nothing when there is no element). */
cudaError_t tc__cuda_layernorm_f32(const tc__cuda_layernorm_args *args, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
