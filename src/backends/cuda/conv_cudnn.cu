/*
 * conv_cudnn.cu - the layout kernels of conv_cudnn.h: NCHW <-> NHWC transposes of one image's [C, HW] plane through a
 * 32 x 33 shared-memory tile (reads and writes coalesced), casting FP32 to FP16 on the way in and applying the
 * epilogue on the way out.
 */
#include <cuda_fp16.h>

#include "backends/cuda/conv_cudnn.h"
#include "backends/cuda/cuda_act.cuh"
#include "backends/cuda/half_io.cuh"

namespace {

constexpr int kTile = 32, kRows = 8;

/* FP32 to FP16: round to nearest even, finite values saturated, infinities kept (half_io.cuh). */
__device__ __forceinline__ __half to_half(float v) { return tc_half_sat_finite(v); }

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

/* Few channels (c <= 8, the network's input): one thread per pixel reads its c planes (coalesced along the pixels)
 * and writes its c halves (contiguous along the pixels); the tile would leave most of its lanes idle. */
__global__ void nchw_to_nhwc_f16_narrow(const float *__restrict__ x, int c, int64_t hw, int64_t total,
                                        __half *__restrict__ y) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t b = i / hw, p = i - b * hw;
        const float *xb = x + b * c * hw + p;
        for (int ch = 0; ch < c; ch++) y[i * c + ch] = to_half(__ldg(xb + ch * hw));
    }
}

/* To FP32 NCHW through the tile; an FP16 NHWC residual is added while reading (coalesced there), an FP32 NCHW one
 * while writing. */
template <bool RES16>
__global__ void nhwc_f16_to_nchw_epi(const __half *__restrict__ yh, float *__restrict__ y, int64_t c, int64_t hw,
                                     const float *__restrict__ bias, const void *__restrict__ residual,
                                     tc__cuda_act act) {
    __shared__ float tile[kTile][kTile + 1];
    const int64_t b = blockIdx.z, p0 = (int64_t)blockIdx.x * kTile, c0 = (int64_t)blockIdx.y * kTile;
    const __half *hb = yh + b * hw * c;
    const __half *rb = RES16 && residual != nullptr ? (const __half *)residual + b * hw * c : nullptr;
    for (int i = threadIdx.y; i < kTile; i += kRows) { /* read rows of pixels, channels along x */
        const int64_t p = p0 + i, ch = c0 + threadIdx.x;
        if (ch < c && p < hw) {
            float v = __half2float(hb[p * c + ch]);
            if (RES16 && rb != nullptr) v += __half2float(rb[p * c + ch]);
            tile[threadIdx.x][i] = v;
        }
    }
    __syncthreads();
    const int64_t base = b * c * hw;
    const float *r32 = RES16 ? nullptr : (const float *)residual;
    for (int i = threadIdx.y; i < kTile; i += kRows) { /* write rows of channels, pixels along x */
        const int64_t ch = c0 + i, p = p0 + threadIdx.x;
        if (ch >= c || p >= hw) continue;
        const int64_t o = base + ch * hw + p;
        float v = tile[i][threadIdx.x];
        if (bias != nullptr) v += bias[ch];
        if (r32 != nullptr) v += r32[o];
        y[o] = tc_cuda_act(v, act);
    }
}

/* FP16 NHWC in place (or into another FP16 NHWC buffer), one thread per element. */
template <bool RES16>
__global__ void nhwc_f16_epi(const __half *yh, __half *y, int64_t c, int64_t hw, int64_t total,
                             const float *__restrict__ bias, const void *__restrict__ residual, tc__cuda_act act) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t ch = i % c;
        float v = __half2float(yh[i]);
        if (bias != nullptr) v += bias[ch];
        if (residual != nullptr) {
            if (RES16) {
                v += __half2float(((const __half *)residual)[i]);
            } else {
                const int64_t t = i / c, p = t % hw, b = t / hw;
                v += ((const float *)residual)[(b * c + ch) * hw + p];
            }
        }
        y[i] = to_half(tc_cuda_act(v, act));
    }
}

/* The same over 8 channels per thread (c a multiple of 8, every pointer 16-byte aligned): one 16-byte load of Y (and
 * of an FP16 residual) and one 16-byte store per thread, 32-bit indices (total / 8 < 2^31). */
template <bool RES>
__global__ void nhwc_f16_epi8(const uint4 *yh, uint4 *y, int c8, int total8, const float *__restrict__ bias,
                              const uint4 *__restrict__ residual, tc__cuda_act act) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total8; i += gridDim.x * blockDim.x) {
        const int ch = (i % c8) * 8;
        uint4 raw = yh[i], rr = make_uint4(0, 0, 0, 0);
        if (RES) rr = __ldg(residual + i);
        __half2 *h = (__half2 *)&raw;
        const __half2 *r = (const __half2 *)&rr;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            float2 v = __half22float2(h[j]);
            if (bias != nullptr) v.x += __ldg(bias + ch + 2 * j), v.y += __ldg(bias + ch + 2 * j + 1);
            if (RES) {
                const float2 q = __half22float2(r[j]);
                v.x += q.x, v.y += q.y;
            }
            h[j] = __halves2half2(to_half(tc_cuda_act(v.x, act)), to_half(tc_cuda_act(v.y, act)));
        }
        y[i] = raw;
    }
}

bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

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
    if (c <= 8) {
        const int64_t total = n * hw;
        int64_t blocks = (total + 255) / 256;
        if (blocks > 65535 * 8) blocks = 65535 * 8;
        nchw_to_nhwc_f16_narrow<<<(unsigned)blocks, 256, 0, s>>>(x, (int)c, hw, total, (__half *)y);
        return cudaGetLastError();
    }
    if (!grid_ok(n, c, hw)) return cudaErrorInvalidValue;
    nchw_to_nhwc_f16<<<grid_of(n, c, hw), dim3(kTile, kRows), 0, s>>>(x, c, hw, (__half *)y);
    return cudaGetLastError();
}

extern "C" cudaError_t tc__dnn_epilogue(const tc__dnn_epi *p, cudaStream_t s) {
    if (p->n <= 0 || p->c <= 0 || p->hw <= 0) return cudaSuccess;
    const __half *yh = (const __half *)p->yh;
    if (p->out_nhwc16) {
        const int64_t total = p->n * p->c * p->hw;
        if (p->c % 8 == 0 && total / 8 <= INT32_MAX && aligned16(p->yh) && aligned16(p->y) &&
            (p->residual == nullptr || (p->res_nhwc16 && aligned16(p->residual)))) {
            const int total8 = (int)(total / 8);
            int blocks8 = (total8 + 255) / 256;
            if (blocks8 > 65535 * 8) blocks8 = 65535 * 8;
            if (p->residual != nullptr)
                nhwc_f16_epi8<true><<<blocks8, 256, 0, s>>>((const uint4 *)yh, (uint4 *)p->y, (int)(p->c / 8), total8,
                                                            p->bias, (const uint4 *)p->residual, p->act);
            else
                nhwc_f16_epi8<false><<<blocks8, 256, 0, s>>>((const uint4 *)yh, (uint4 *)p->y, (int)(p->c / 8), total8,
                                                             p->bias, nullptr, p->act);
            return cudaGetLastError();
        }
        int64_t blocks = (total + 255) / 256;
        if (blocks > 65535 * 8) blocks = 65535 * 8;
        if (p->res_nhwc16)
            nhwc_f16_epi<true><<<(unsigned)blocks, 256, 0, s>>>(yh, (__half *)p->y, p->c, p->hw, total, p->bias,
                                                                p->residual, p->act);
        else
            nhwc_f16_epi<false><<<(unsigned)blocks, 256, 0, s>>>(yh, (__half *)p->y, p->c, p->hw, total, p->bias,
                                                                 p->residual, p->act);
        return cudaGetLastError();
    }
    if (!grid_ok(p->n, p->c, p->hw)) return cudaErrorInvalidValue;
    if (p->res_nhwc16)
        nhwc_f16_to_nchw_epi<true><<<grid_of(p->n, p->c, p->hw), dim3(kTile, kRows), 0, s>>>(
            yh, (float *)p->y, p->c, p->hw, p->bias, p->residual, p->act);
    else
        nhwc_f16_to_nchw_epi<false><<<grid_of(p->n, p->c, p->hw), dim3(kTile, kRows), 0, s>>>(
            yh, (float *)p->y, p->c, p->hw, p->bias, p->residual, p->act);
    return cudaGetLastError();
}
