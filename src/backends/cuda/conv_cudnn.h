/*
 * conv_cudnn.h - the layout kernels around the cuDNN FP16 convolution of tactic cuda_conv_fp16_cudnn (conv_cudnn.cu):
 * an FP32 NCHW activation cast to FP16 NHWC, and the step's epilogue (per-channel bias, residual, activation) over
 * cuDNN's FP16 NHWC output, written back as FP32 NCHW or kept FP16 NHWC (an image chained to the next convolutions,
 * engine/nhwc16_chain.c). The NCHW <-> NHWC passes transpose through 32 x 32 shared-memory tiles per image; all
 * launch on the given stream, return the launch's error and launch nothing for empty sizes.
 */
#ifndef TC_BACKENDS_CUDA_CONV_CUDNN_H
#define TC_BACKENDS_CUDA_CONV_CUDNN_H

#include "backends/cuda/cuda_exec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest batch these kernels take (the grid's z dimension). */
#define TC__DNN_MAX_BATCH 65535

/* y[(b * hw + p) * c + ch] = fp16(x[(b * c + ch) * hw + p]) (finite values beyond FP16 saturate to +-65504). */
cudaError_t tc__dnn_nchw_to_nhwc_f16(const float *x, int64_t n, int64_t c, int64_t hw, void *y, cudaStream_t s);

/* y = act(yh + bias[ch] + residual) at every (b, ch, p) (bias and residual where non-NULL): yh FP16 NHWC; y FP32 NCHW,
 * or FP16 NHWC when out_nhwc16 (then y may be yh: in place); residual FP32 NCHW, or FP16 NHWC when res_nhwc16. */
typedef struct tc__dnn_epi {
    const void *yh;
    void *y;
    int32_t out_nhwc16, res_nhwc16;
    int64_t n, c, hw;
    const float *bias;
    const void *residual;
    tc__cuda_act act;
} tc__dnn_epi;
cudaError_t tc__dnn_epilogue(const tc__dnn_epi *p, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
