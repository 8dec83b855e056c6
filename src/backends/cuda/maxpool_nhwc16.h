/*
 * maxpool_nhwc16.h - the MaxPool kernel of tactic cuda_maxpool_nhwc16 (maxpool_nhwc16.cu): 2-D windows (1-D as
 * height 1) over an input that is FP16 NHWC (in16: an image of the FP16 NHWC chain, engine/nhwc16_chain.c) or FP32
 * NCHW, to an output of either kind (out16). The maximum is exact in either type (rounding to FP16 is monotonic), so
 * chaining changes no value the neighbouring FP16 convolutions would not; NaN and padding as cuda_maxpool_f32 (NaN
 * inputs skipped, NaN when all are, -inf for a window of padding only).
 */
#ifndef TC_BACKENDS_CUDA_MAXPOOL_NHWC16_H
#define TC_BACKENDS_CUDA_MAXPOOL_NHWC16_H

#include "backends/cuda/cuda_exec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tc__cuda_maxpool16 {
    const void *x;
    void *y;
    int32_t in16, out16;
    int64_t n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
} tc__cuda_maxpool16;

cudaError_t tc__cuda_maxpool16_run(const tc__cuda_maxpool16 *p, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
