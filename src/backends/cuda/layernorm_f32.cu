/*
 * layernorm_f32.cu - FP32 LayerNormalization (layernorm_f32.h), two passes as the reference (the mean, then the
 * biased variance of the deviations), in float (the reference sums in double). Rows of up to 256 elements: one warp
 * per row held in registers; up to 4096 (BERT's 768): one block of 256 threads per row held in registers (a warp per
 * row of 768 ran at 7.8 us for BERT-base's 128 rows on the H200: 239 registers a thread, 32 blocks); longer rows: one
 * block of 512 threads per row, three passes over global memory. Every kernel is a template over X's and Y's element
 * types (float, or __half for the FP16 row images: half_io.cuh). Rows of 257..1024 elements, a multiple of 8, with
 * X, Y, scale and bias aligned for 16-byte loads (BERT's 768 between FP16 images): one warp per row again, but with
 * 8 elements per load (24 values of the row a lane for 768) and warp shuffles only.
 */
#include <math.h>

#include "backends/cuda/half_io.cuh"
#include "backends/cuda/reduce.cuh"
#include "backends/cuda/layernorm_f32.h"

namespace {


__device__ __forceinline__ float out_of(const tc__cuda_layernorm_args &p, float v, float mean, float inv, int64_t k) {
    float r = (v - mean) * inv * __ldg(p.scale + k * p.scale_stride);
    if (p.bias != nullptr) r += __ldg(p.bias + k * p.bias_stride);
    return r;
}

template <int ITEMS, typename XT, typename YT>
__global__ void __launch_bounds__(128) layernorm_warp(const tc__cuda_layernorm_args p) {
    const int lane = (int)(threadIdx.x & 31u);
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
    const float fn = (float)p.n;
    for (int64_t r = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; r < p.rows; r += warps) {
        const XT *x = (const XT *)p.x + r * p.n;
        float v[ITEMS], sum = 0.0f;
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int64_t k = lane + 32 * i;
            v[i] = k < p.n ? tc_ld(x + k) : 0.0f;
            sum += v[i];
        }
        const float mean = tc_warp_sum(sum) / fn;
        float ss = 0.0f;
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const float dv = v[i] - mean;
            if (lane + 32 * i < p.n) ss = fmaf(dv, dv, ss);
        }
        const float inv = 1.0f / sqrtf(tc_warp_sum(ss) / fn + p.epsilon);
        YT *y = (YT *)p.y + r * p.n;
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int64_t k = lane + 32 * i;
            if (k < p.n) tc_st(y + k, out_of(p, v[i], mean, inv, k));
        }
    }
}

constexpr int kBlock = 512;


template <typename XT, typename YT>
__global__ void __launch_bounds__(kBlock) layernorm_block(const tc__cuda_layernorm_args p) {
    __shared__ float sh[32];
    const float fn = (float)p.n;
    for (int64_t r = blockIdx.x; r < p.rows; r += gridDim.x) {
        const XT *x = (const XT *)p.x + r * p.n;
        float sum = 0.0f;
        for (int64_t k = threadIdx.x; k < p.n; k += blockDim.x) sum += tc_ld(x + k);
        const float mean = tc_block_sum(sum, sh) / fn;
        float ss = 0.0f;
        for (int64_t k = threadIdx.x; k < p.n; k += blockDim.x) {
            const float dv = tc_ld(x + k) - mean;
            ss = fmaf(dv, dv, ss);
        }
        const float inv = 1.0f / sqrtf(tc_block_sum(ss, sh) / fn + p.epsilon);
        YT *y = (YT *)p.y + r * p.n;
        for (int64_t k = threadIdx.x; k < p.n; k += blockDim.x) tc_st(y + k, out_of(p, tc_ld(x + k), mean, inv, k));
    }
}

/* Rows of 257..4096 elements: one block of kRowBlock threads per row, the row in registers (ITEMS per thread). */
constexpr int kRowBlock = 256;

template <int ITEMS, typename XT, typename YT>
__global__ void __launch_bounds__(kRowBlock) layernorm_rowblock(const tc__cuda_layernorm_args p) {
    __shared__ float sh[32];
    const float fn = (float)p.n;
    const int n = (int)p.n;
    for (int64_t r = blockIdx.x; r < p.rows; r += gridDim.x) {
        const XT *x = (const XT *)p.x + r * p.n;
        float v[ITEMS], sum = 0.0f;
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int k = (int)threadIdx.x + kRowBlock * i;
            v[i] = k < n ? tc_ld(x + k) : 0.0f;
            sum += v[i];
        }
        const float mean = tc_block_sum(sum, sh) / fn;
        float ss = 0.0f;
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const float dv = v[i] - mean;
            if ((int)threadIdx.x + kRowBlock * i < n) ss = fmaf(dv, dv, ss);
        }
        const float inv = 1.0f / sqrtf(tc_block_sum(ss, sh) / fn + p.epsilon);
        YT *y = (YT *)p.y + r * p.n;
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int k = (int)threadIdx.x + kRowBlock * i;
            if (k < n) tc_st(y + k, out_of(p, v[i], mean, inv, k));
        }
    }
}

/* Eight consecutive elements as floats (p aligned to 8 elements: 16 bytes FP16, 32 bytes float). */
__device__ __forceinline__ void ld8(const __half *p, float (&v)[8]) {
    const uint4 u = __ldg((const uint4 *)p);
    const __half2 *h = (const __half2 *)&u;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const float2 f = __half22float2(h[i]);
        v[2 * i] = f.x, v[2 * i + 1] = f.y;
    }
}
__device__ __forceinline__ void ld8(const float *p, float (&v)[8]) {
    const float4 a = __ldg((const float4 *)p), b = __ldg((const float4 *)p + 1);
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
}
__device__ __forceinline__ void st8(__half *p, const float (&v)[8]) {
    union {
        uint4 u;
        __half h[8];
    } x;
#pragma unroll
    for (int i = 0; i < 8; i++) x.h[i] = tc_half_sat(v[i]);
    *(uint4 *)p = x.u;
}
__device__ __forceinline__ void st8(float *p, const float (&v)[8]) {
    *(float4 *)p = make_float4(v[0], v[1], v[2], v[3]);
    *((float4 *)p + 1) = make_float4(v[4], v[5], v[6], v[7]);
}

/* Rows of n <= 256 * C elements, n a multiple of 8, everything aligned (see the top): one warp per row, lane l
 * holding chunks l, l + 32, ... of 8 elements. */
template <int C, typename XT, typename YT>
__global__ void __launch_bounds__(128) layernorm_warp8(const tc__cuda_layernorm_args p) {
    const int lane = (int)(threadIdx.x & 31u), chunks = (int)(p.n / 8);
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
    const float fn = (float)p.n;
    for (int64_t r = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; r < p.rows; r += warps) {
        const XT *x = (const XT *)p.x + r * p.n;
        float v[C][8], sum = 0.0f;
#pragma unroll
        for (int c = 0; c < C; c++) {
            const int q = lane + 32 * c;
            if (q < chunks) ld8(x + q * 8, v[c]);
            else
#pragma unroll
                for (int i = 0; i < 8; i++) v[c][i] = 0.0f;
#pragma unroll
            for (int i = 0; i < 8; i++) sum += v[c][i];
        }
        const float mean = tc_warp_sum(sum) / fn;
        float ss = 0.0f;
#pragma unroll
        for (int c = 0; c < C; c++)
            if (lane + 32 * c < chunks)
#pragma unroll
                for (int i = 0; i < 8; i++) {
                    const float dv = v[c][i] - mean;
                    ss = fmaf(dv, dv, ss);
                }
        const float inv = 1.0f / sqrtf(tc_warp_sum(ss) / fn + p.epsilon);
        YT *y = (YT *)p.y + r * p.n;
#pragma unroll
        for (int c = 0; c < C; c++) {
            const int q = lane + 32 * c;
            if (q >= chunks) continue;
            float g[8], b[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f}, o[8];
            ld8(p.scale + q * 8, g);
            if (p.bias != nullptr) ld8(p.bias + q * 8, b);
#pragma unroll
            for (int i = 0; i < 8; i++) o[i] = (v[c][i] - mean) * inv * g[i] + b[i];
            st8(y + q * 8, o);
        }
    }
}

/* True when a launch takes layernorm_warp8: see the top of the file. */
bool warp8_ok(const tc__cuda_layernorm_args *p) {
    const uintptr_t xa = p->x16 ? 15u : 31u, ya = p->y16 ? 15u : 31u;
    return p->n > 256 && p->n <= 1024 && p->n % 8 == 0 && p->scale_stride == 1 &&
           (p->bias == nullptr || p->bias_stride == 1) && ((uintptr_t)p->x & xa) == 0 &&
           ((uintptr_t)p->y & ya) == 0 && ((uintptr_t)p->scale & 31u) == 0 && ((uintptr_t)p->bias & 31u) == 0;
}

template <int C, typename XT, typename YT>
cudaError_t launch_warp8(const tc__cuda_layernorm_args *p, cudaStream_t s) {
    const int64_t blocks = (p->rows + 3) / 4;
    const unsigned grid = (unsigned)(blocks < (1 << 20) ? blocks : (1 << 20));
    layernorm_warp8<C, XT, YT><<<grid, 128, 0, s>>>(*p);
    return cudaGetLastError();
}

template <int ITEMS, typename XT, typename YT>
cudaError_t launch_rowblock(const tc__cuda_layernorm_args *p, cudaStream_t s) {
    const unsigned grid = (unsigned)(p->rows < (1 << 20) ? p->rows : (1 << 20));
    layernorm_rowblock<ITEMS, XT, YT><<<grid, kRowBlock, 0, s>>>(*p);
    return cudaGetLastError();
}

template <int ITEMS, typename XT, typename YT>
cudaError_t launch_warp(const tc__cuda_layernorm_args *p, cudaStream_t s) {
    const int64_t blocks = (p->rows + 3) / 4;
    const unsigned grid = (unsigned)(blocks < (1 << 20) ? blocks : (1 << 20));
    layernorm_warp<ITEMS, XT, YT><<<grid, 128, 0, s>>>(*p);
    return cudaGetLastError();
}

template <typename XT, typename YT>
cudaError_t launch(const tc__cuda_layernorm_args *p, cudaStream_t s) {
    if (p->n <= 32) return launch_warp<1, XT, YT>(p, s);
    if (p->n <= 64) return launch_warp<2, XT, YT>(p, s);
    if (p->n <= 128) return launch_warp<4, XT, YT>(p, s);
    if (p->n <= 256) return launch_warp<8, XT, YT>(p, s);
    if (warp8_ok(p)) {
        if (p->n <= 512) return launch_warp8<2, XT, YT>(p, s);
        if (p->n <= 768) return launch_warp8<3, XT, YT>(p, s);
        return launch_warp8<4, XT, YT>(p, s);
    }
    if (p->n <= 512) return launch_rowblock<2, XT, YT>(p, s);
    if (p->n <= 1024) return launch_rowblock<4, XT, YT>(p, s);
    if (p->n <= 2048) return launch_rowblock<8, XT, YT>(p, s);
    if (p->n <= 4096) return launch_rowblock<16, XT, YT>(p, s);
    const unsigned grid = (unsigned)(p->rows < (1 << 20) ? p->rows : (1 << 20));
    layernorm_block<XT, YT><<<grid, kBlock, 0, s>>>(*p);
    return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t tc__cuda_layernorm_f32(const tc__cuda_layernorm_args *p, cudaStream_t s) {
    if (p->rows <= 0 || p->n <= 0) return cudaSuccess;
    if (p->x16) return p->y16 ? launch<__half, __half>(p, s) : launch<__half, float>(p, s);
    return p->y16 ? launch<float, __half>(p, s) : launch<float, float>(p, s);
}
