/*
 * conv_cudnn.cu - the layout kernels of conv_cudnn.h: NCHW <-> NHWC transposes of one image's [C, HW] plane through a
 * 32 x 33 shared-memory tile (reads and writes coalesced), casting FP32 to FP16 on the way in and applying the
 * epilogue on the way out.
 */
#include <cuda_fp16.h>

#include "backends/cuda/conv_cudnn.h"
#include "backends/cuda/cuda_act.cuh"

namespace {

constexpr int kTile = 32, kRows = 8;

/* FP32 to FP16, round to nearest even, finite values saturated to the largest finite half. */
__device__ __forceinline__ __half to_half(float v) {
    if (v > 65504.0f && v <= 3.402823466e38f) v = 65504.0f;
    if (v < -65504.0f && v >= -3.402823466e38f) v = -65504.0f;
    return __float2half_rn(v);
}

/* Block (32, 8) over a tile of channels [c0, c0 + 32) x pixels [p0, p0 + 32) of image blockIdx.z. */
__global__ void nchw_to_nhwc_f16(const float *__restrict__ x, int64_t c, int64_t hw, __half *__restrict__ y) {
    __shared__ float tile[kTile][kTile + 1];
    const int64_t b = blockIdx.z, p0 = (int64_t)blockIdx.x * kTile, c0 = (int64_t)blockIdx.y * kTile;
    const float *xb = x + b * c * hw;
    for (int i = threadIdx.y; i < kTile; i += kRows) { /* read rows of channels, pixels along x */
        const int64_t ch = c0 + i, p = p0 + threadIdx.x;
        if (ch < c && p < hw) tile[i][threadIdx.x] = xb[ch * hw + p];
    }
    __syncthreads();
    __half *yb = y + b * hw * c;
    for (int i = threadIdx.y; i < kTile; i += kRows) { /* write rows of pixels, channels along x */
        const int64_t p = p0 + i, ch = c0 + threadIdx.x;
        if (ch < c && p < hw) yb[p * c + ch] = to_half(tile[threadIdx.x][i]);
    }
}

__global__ void nhwc_f16_to_nchw_epi(const __half *__restrict__ yh, float *__restrict__ y, int64_t c, int64_t hw,
                                     const float *__restrict__ bias, const float *__restrict__ residual,
                                     tc__cuda_act act) {
    __shared__ float tile[kTile][kTile + 1];
    const int64_t b = blockIdx.z, p0 = (int64_t)blockIdx.x * kTile, c0 = (int64_t)blockIdx.y * kTile;
    const __half *hb = yh + b * hw * c;
    for (int i = threadIdx.y; i < kTile; i += kRows) { /* read rows of pixels, channels along x */
        const int64_t p = p0 + i, ch = c0 + threadIdx.x;
        if (ch < c && p < hw) tile[threadIdx.x][i] = __half2float(hb[p * c + ch]);
    }
    __syncthreads();
    const int64_t base = b * c * hw;
    for (int i = threadIdx.y; i < kTile; i += kRows) { /* write rows of channels, pixels along x */
        const int64_t ch = c0 + i, p = p0 + threadIdx.x;
        if (ch >= c || p >= hw) continue;
        const int64_t o = base + ch * hw + p;
        float v = tile[i][threadIdx.x];
        if (bias != nullptr) v += bias[ch];
        if (residual != nullptr) v += residual[o];
        y[o] = tc_cuda_act(v, act);
    }
}

dim3 grid_of(int64_t n, int64_t c, int64_t hw) {
    return dim3((unsigned)((hw + kTile - 1) / kTile), (unsigned)((c + kTile - 1) / kTile), (unsigned)n);
}

bool grid_ok(int64_t n, int64_t c, int64_t hw) {
    return n <= TC__DNN_MAX_BATCH && (c + kTile - 1) / kTile <= 65535 && (hw + kTile - 1) / kTile <= 0x7fffffff;
}

} // namespace

extern "C" cudaError_t tc__dnn_nchw_to_nhwc_f16(const float *x, int64_t n, int64_t c, int64_t hw, void *y,
                                                cudaStream_t s) {
    if (n <= 0 || c <= 0 || hw <= 0) return cudaSuccess;
    if (!grid_ok(n, c, hw)) return cudaErrorInvalidValue;
    nchw_to_nhwc_f16<<<grid_of(n, c, hw), dim3(kTile, kRows), 0, s>>>(x, c, hw, (__half *)y);
    return cudaGetLastError();
}

extern "C" cudaError_t tc__dnn_nhwc_f16_to_nchw_epi(const tc__dnn_epi *p, cudaStream_t s) {
    if (p->n <= 0 || p->c <= 0 || p->hw <= 0) return cudaSuccess;
    if (!grid_ok(p->n, p->c, p->hw)) return cudaErrorInvalidValue;
    nhwc_f16_to_nchw_epi<<<grid_of(p->n, p->c, p->hw), dim3(kTile, kRows), 0, s>>>(
        (const __half *)p->yh, p->y, p->c, p->hw, p->bias, p->residual, p->act);
    return cudaGetLastError();
}
