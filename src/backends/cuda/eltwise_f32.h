/*
 * eltwise_f32.h - the FP32 elementwise kernels of the cuda_{add,sub,mul,div}_f32 tactics (binary_f32.cu: NumPy
 * broadcasting up to rank 8) and of the unary tactics cuda_relu_f32 ... cuda_reciprocal_f32 (unary_f32.cu: one
 * kernel, an op code), all with the fused epilogue; the element formulas are the reference kernels' in float.
 */
#ifndef TC_BACKENDS_CUDA_ELTWISE_F32_H
#define TC_BACKENDS_CUDA_ELTWISE_F32_H

#include "backends/cuda/cnn_epi.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { TC__CUDA_BIN_ADD = 0, TC__CUDA_BIN_SUB, TC__CUDA_BIN_MUL, TC__CUDA_BIN_DIV };

/* A broadcast over an output of rank dims (row-major, dense): element i of the output reads a[sum of coordinate
 * times sa] and b[... sb] (strides 0 along broadcast dims). Collapsed by the caller (size-1 dims dropped, dims merged
 * where both inputs are contiguous across them), so rank is small in the common cases; rank 0 is one element. */
typedef struct tc__cuda_bcast2 {
    int32_t rank;
    int64_t dims[TC__CUDA_MAX_RANK];
    int64_t sa[TC__CUDA_MAX_RANK], sb[TC__CUDA_MAX_RANK];
} tc__cuda_bcast2;

/* y[i] = epi(a op b, i) for the n output elements (n = the product of sh->dims). */
cudaError_t tc__cuda_binary_f32(int op, const float *a, const float *b, float *y, const tc__cuda_bcast2 *sh, int64_t n,
                                tc__cuda_epi epi, cudaStream_t s);

enum {
    TC__CUDA_UN_RELU = 0,
    TC__CUDA_UN_SIGMOID,
    TC__CUDA_UN_TANH,
    TC__CUDA_UN_ERF,
    TC__CUDA_UN_GELU_ERF,
    TC__CUDA_UN_GELU_TANH,
    TC__CUDA_UN_HARDSWISH,
    TC__CUDA_UN_HARDSIGMOID, /* alpha * x + beta, clamped to [0, 1] */
    TC__CUDA_UN_LEAKY_RELU,  /* alpha */
    TC__CUDA_UN_CLIP,        /* [alpha, beta] */
    TC__CUDA_UN_SQRT,
    TC__CUDA_UN_EXP,
    TC__CUDA_UN_NEG,
    TC__CUDA_UN_ABS,
    TC__CUDA_UN_RECIPROCAL,
    TC__CUDA_UN_COUNT_
};

/* y[i] = epi(f(x[i]), i) for i < n. */
cudaError_t tc__cuda_unary_f32(int op, const float *x, float *y, int64_t n, float alpha, float beta, tc__cuda_epi epi,
                               cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
