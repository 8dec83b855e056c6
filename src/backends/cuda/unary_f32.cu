/*
 * unary_f32.cu - the FP32 unary ops (eltwise_f32.h: Relu ... Reciprocal, one kernel per op code, grid-stride) with
 * the fused epilogue. The formulas are the reference's (backends/ref/unary.c) in float: NaN propagates through Relu,
 * HardSigmoid and HardSwish; Sigmoid takes the branch that avoids overflow; IEEE sqrt and division.
 */
#include "backends/cuda/cnn_epi.cuh"
#include "backends/cuda/eltwise_f32.h"

#include <stdint.h>

namespace {

template <int OP>
__device__ __forceinline__ float un(float x, float alpha, float beta) {
    switch (OP) {
    case TC__CUDA_UN_RELU: return x > 0.0f ? x : (x == x ? 0.0f : x);
    case TC__CUDA_UN_SIGMOID: {
        if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));
        const float e = expf(x);
        return e / (1.0f + e);
    }
    case TC__CUDA_UN_TANH: return tanhf(x);
    case TC__CUDA_UN_ERF: return erff(x);
    case TC__CUDA_UN_GELU_ERF: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case TC__CUDA_UN_GELU_TANH: return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    case TC__CUDA_UN_HARDSWISH: {
        const float v = x / 6.0f + 0.5f;
        if (v != v) return v;
        return x * fminf(fmaxf(v, 0.0f), 1.0f);
    }
    case TC__CUDA_UN_HARDSIGMOID: {
        const float v = alpha * x + beta;
        if (v != v) return v;
        return fminf(fmaxf(v, 0.0f), 1.0f);
    }
    case TC__CUDA_UN_LEAKY_RELU: return x >= 0.0f ? x : alpha * x;
    case TC__CUDA_UN_CLIP: {
        float v = x;
        if (v < alpha) v = alpha;
        if (v > beta) v = beta;
        return v;
    }
    case TC__CUDA_UN_SQRT: return sqrtf(x);
    case TC__CUDA_UN_EXP: return expf(x);
    case TC__CUDA_UN_NEG: return -x;
    case TC__CUDA_UN_ABS: return fabsf(x);
    default: return 1.0f / x; /* TC__CUDA_UN_RECIPROCAL */
    }
}

template <int OP, typename I>
__global__ void __launch_bounds__(256) unary(const float *x, float *y, I n, float alpha,
                                             float beta, tc__cuda_epi epi) {
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x)
        y[i] = tc_cnn_epi(un<OP>(x[i], alpha, beta), (int64_t)i, epi);
}

template <int OP>
void launch(const float *x, float *y, int64_t n, float alpha, float beta, tc__cuda_epi epi, cudaStream_t s) {
    if (n <= INT32_MAX)
        unary<OP, uint32_t><<<tc_cnn_blocks(n, 256), 256, 0, s>>>(x, y, (uint32_t)n, alpha, beta, epi);
    else
        unary<OP, int64_t><<<tc_cnn_blocks(n, 256), 256, 0, s>>>(x, y, n, alpha, beta, epi);
}

} // namespace

extern "C" cudaError_t tc__cuda_unary_f32(int op, const float *x, float *y, int64_t n, float alpha, float beta,
                                          tc__cuda_epi epi, cudaStream_t s) {
    if (n <= 0) return cudaSuccess;
    switch (op) {
#define TC_UN_CASE(OP) \
    case OP: launch<OP>(x, y, n, alpha, beta, epi, s); break;
    TC_UN_CASE(TC__CUDA_UN_RELU)
    TC_UN_CASE(TC__CUDA_UN_SIGMOID)
    TC_UN_CASE(TC__CUDA_UN_TANH)
    TC_UN_CASE(TC__CUDA_UN_ERF)
    TC_UN_CASE(TC__CUDA_UN_GELU_ERF)
    TC_UN_CASE(TC__CUDA_UN_GELU_TANH)
    TC_UN_CASE(TC__CUDA_UN_HARDSWISH)
    TC_UN_CASE(TC__CUDA_UN_HARDSIGMOID)
    TC_UN_CASE(TC__CUDA_UN_LEAKY_RELU)
    TC_UN_CASE(TC__CUDA_UN_CLIP)
    TC_UN_CASE(TC__CUDA_UN_SQRT)
    TC_UN_CASE(TC__CUDA_UN_EXP)
    TC_UN_CASE(TC__CUDA_UN_NEG)
    TC_UN_CASE(TC__CUDA_UN_ABS)
    TC_UN_CASE(TC__CUDA_UN_RECIPROCAL)
#undef TC_UN_CASE
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
