/*
 * conv_cudnn.h - the layout kernels around the cuDNN FP16 convolution of tactic cuda_conv_fp16_cudnn (conv_cudnn.cu):
 * an FP32 NCHW activation cast to FP16 NHWC, and cuDNN's FP16 NHWC output written back as FP32 NCHW with the step's
 * epilogue (per-channel bias, residual, activation). Both transpose through 32 x 32 shared-memory tiles per image;
 * they launch on the given stream, return the launch's error and launch nothing for empty sizes.
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

/* y[(b * c + ch) * hw + p] = act(yh[(b * hw + p) * c + ch] + bias[ch] + residual[(b * c + ch) * hw + p]) (bias and
 * residual where non-NULL). */
typedef struct tc__dnn_epi {
    const void *yh; /* FP16 NHWC */
    float *y;       /* FP32 NCHW */
    int64_t n, c, hw;
    const float *bias;
    const float *residual;
    tc__cuda_act act;
} tc__dnn_epi;
cudaError_t tc__dnn_nhwc_f16_to_nchw_epi(const tc__dnn_epi *p, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
