/*
 * fp16_lt.cu - the kernels of fp16_lt.h: grid-stride loops, one element per thread and step (memory-bound).
 */
#include <cuda_fp16.h>

#include "backends/cuda/cnn_epi.cuh"
#include "backends/cuda/fp16_lt.h"

namespace {

constexpr int kThreads = 256;

/* FP32 to FP16, round to nearest even, finite values saturated to the largest finite half. */
__device__ __forceinline__ __half to_half(float v) {
    if (v > 65504.0f) v = 65504.0f;       /* NaN compares false: kept */
    else if (v < -65504.0f) v = -65504.0f;
    return __float2half_rn(v);
}

__global__ void cast_rows(const float *__restrict__ src, int64_t rows, int64_t cols, int64_t src_ld,
                          __half *__restrict__ dst, int64_t dst_ld) {
    const int64_t total = rows * cols;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / cols, c = i - r * cols;
        dst[r * dst_ld + c] = to_half(src[r * src_ld + c]);
    }
}

/* Rows of 4 floats where everything is 16-byte aligned (cols, src_ld a multiple of 4, dst_ld of 4, pointers). */
__global__ void cast_rows4(const float4 *__restrict__ src, int64_t rows, int64_t cols4, int64_t src_ld4,
                           __half2 *__restrict__ dst, int64_t dst_ld2) {
    const int64_t total = rows * cols4;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / cols4, c = i - r * cols4;
        const float4 v = src[r * src_ld4 + c];
        __half2 *d = dst + r * dst_ld2 + 2 * c;
        d[0] = __halves2half2(to_half(v.x), to_half(v.y));
        d[1] = __halves2half2(to_half(v.z), to_half(v.w));
    }
}

__global__ void im2col(const tc__lt_im2col p) {
    const float *__restrict__ x = p.x;
    __half *__restrict__ col = (__half *)p.col;
    const int64_t P = p.oh * p.ow, khw = p.kh * p.kw, K = p.c * khw, total = p.n * K * P;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t pix = i % P, row = i / P; /* row = b * K + k */
        const int64_t k = row % K, b = row / K;
        const int64_t ci = k / khw, t = k - ci * khw, ki = t / p.kw, kj = t - ki * p.kw;
        const int64_t oy = pix / p.ow, ox = pix - oy * p.ow;
        const int64_t iy = oy * p.sh - p.ph + ki * p.dh, ix = ox * p.sw - p.pw + kj * p.dw;
        float v = 0.0f;
        if (iy >= 0 && iy < p.h && ix >= 0 && ix < p.w) v = x[((b * p.c + ci) * p.h + iy) * p.w + ix];
        col[row * p.ld + pix] = to_half(v);
    }
}

__global__ void bias_combine(const float *__restrict__ c, int64_t c_stride, float beta, const float *__restrict__ bias,
                             int64_t n, float *__restrict__ out) {
    for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < n; j += (int64_t)gridDim.x * blockDim.x) {
        float v = 0.0f;
        if (c != nullptr) v = beta * c[j * c_stride];
        if (bias != nullptr) v += bias[j];
        out[j] = v;
    }
}

__global__ void epilogue(const tc__lt_epi p) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.total; i += (int64_t)gridDim.x * blockDim.x) {
        float v = p.y16 ? __half2float(((const __half *)p.y)[i]) : ((const float *)p.y)[i];
        if (p.chan_bias != nullptr) v += p.chan_bias[(i / p.inner) % p.channels];
        if (p.last_bias != nullptr) v += p.last_bias[i % p.last_len];
        if (p.residual != nullptr)
            v += p.res16 ? __half2float(((const __half *)p.residual)[i]) : ((const float *)p.residual)[i];
        v = tc_cuda_act(v, p.act);
        if (p.y16) ((__half *)p.y)[i] = to_half(v);
        else ((float *)p.y)[i] = v;
    }
}

bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

} // namespace

extern "C" cudaError_t tc__lt_cast_rows(const float *src, int64_t rows, int64_t cols, int64_t src_ld, void *dst,
                                        int64_t dst_ld, cudaStream_t s) {
    if (rows <= 0 || cols <= 0) return cudaSuccess;
    if (cols % 4 == 0 && src_ld % 4 == 0 && dst_ld % 4 == 0 && aligned16(src) && ((uintptr_t)dst & 7u) == 0) {
        const int64_t n = rows * (cols / 4);
        cast_rows4<<<tc_cnn_blocks(n, kThreads), kThreads, 0, s>>>((const float4 *)src, rows, cols / 4, src_ld / 4,
                                                                   (__half2 *)dst, dst_ld / 2);
    } else {
        cast_rows<<<tc_cnn_blocks(rows * cols, kThreads), kThreads, 0, s>>>(src, rows, cols, src_ld, (__half *)dst,
                                                                            dst_ld);
    }
    return cudaGetLastError();
}

extern "C" cudaError_t tc__lt_im2col_f16(const tc__lt_im2col *p, cudaStream_t s) {
    const int64_t total = p->n * p->c * p->kh * p->kw * p->oh * p->ow;
    if (total <= 0) return cudaSuccess;
    im2col<<<tc_cnn_blocks(total, kThreads), kThreads, 0, s>>>(*p);
    return cudaGetLastError();
}

extern "C" cudaError_t tc__lt_bias_combine(const float *c, int64_t c_stride, float beta, const float *bias, int64_t n,
                                           float *out, cudaStream_t s) {
    if (n <= 0) return cudaSuccess;
    bias_combine<<<tc_cnn_blocks(n, kThreads), kThreads, 0, s>>>(c, c_stride, beta, bias, n, out);
    return cudaGetLastError();
}

extern "C" cudaError_t tc__lt_epilogue(const tc__lt_epi *p, cudaStream_t s) {
    if (p->total <= 0) return cudaSuccess;
    tc__lt_epi q = *p;
    if (q.inner < 1) q.inner = 1;
    if (q.channels < 1) q.channels = 1;
    if (q.last_len < 1) q.last_len = 1;
    epilogue<<<tc_cnn_blocks(q.total, kThreads), kThreads, 0, s>>>(q);
    return cudaGetLastError();
}
