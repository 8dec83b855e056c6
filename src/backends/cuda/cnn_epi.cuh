/* cnn_epi.cuh - device side of cnn_epi.h: the fused epilogue of one output element, and the launch geometry helper
 * the convolution, pooling, elementwise and movement kernels share. */
#ifndef TC_BACKENDS_CUDA_CNN_EPI_CUH
#define TC_BACKENDS_CUDA_CNN_EPI_CUH

#include "backends/cuda/cnn_epi.h"
#include "backends/cuda/cuda_act.cuh"

/* y[i] = act(v + bias[i % bias_len] + residual[i]) (the operands that are there). */
__device__ __forceinline__ float tc_cnn_epi(float v, int64_t i, const tc__cuda_epi &e) {
    if (e.bias != nullptr) v += e.bias[i % e.bias_len];
    if (e.residual != nullptr) v += e.residual[i];
    return tc_cuda_act(v, e.act);
}

/* Blocks for a grid-stride loop over n items with `threads` per block (at least 1, at most 2^20: gridDim.x allows
 * 2^31 - 1; the loops cover the rest). */
static inline unsigned tc_cnn_blocks(int64_t n, int threads) {
    int64_t b = (n + threads - 1) / threads;
    if (b < 1) b = 1;
    if (b > ((int64_t)1 << 20)) b = (int64_t)1 << 20;
    return (unsigned)b;
}

#endif
