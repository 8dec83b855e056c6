/*
 * pool_f32.cu - FP32 pooling kernels (pool_f32.h): windowed MaxPool / AveragePool with one thread per output
 * (grid-stride), and GlobalAveragePool with a warp (small planes) or a block (large planes) per plane reducing in
 * double.
 */
#include "backends/cuda/cnn_epi.cuh"
#include "backends/cuda/pool_f32.h"
#include "backends/cuda/window_taps.cuh"

#include <math.h>
#include <stdint.h>

namespace {

template <typename I>
__global__ void __launch_bounds__(256) pool2d(const tc__cuda_pool2d p, I total) {
    const I OW = (I)p.ow, OH = (I)p.oh;
    for (I idx = (I)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += (I)gridDim.x * blockDim.x) {
        const I ow = idx % OW;
        const I r = idx / OW;
        const I oh = r % OH, plane = r / OH;
        const int64_t h0 = (int64_t)oh * p.sh - p.ph, w0 = (int64_t)ow * p.sw - p.pw;
        int64_t kh0, kh1, kw0, kw1;
        tc_window_taps(h0, p.dh, p.kh, 0, p.h, &kh0, &kh1);
        tc_window_taps(w0, p.dw, p.kw, 0, p.w_in, &kw0, &kw1);
        float v;
        if (p.is_max) {
            if (kh0 >= kh1 || kw0 >= kw1) {
                v = -INFINITY;
            } else {
                const float *xp = p.x + (int64_t)plane * p.h * p.w_in;
                float best = __int_as_float(0x7fc00000);
                bool found = false;
                for (int64_t kh = kh0; kh < kh1; kh++) {
                    const int64_t row = (h0 + kh * p.dh) * p.w_in + w0;
                    for (int64_t kw = kw0; kw < kw1; kw++) {
                        const float x = xp[row + kw * p.dw];
                        if (x == x && (!found || x > best)) {
                            best = x;
                            found = true;
                        }
                    }
                }
                v = best;
            }
        } else {
            double count;
            if (p.count_include_pad) {
                int64_t c0, c1, d0, d1;
                tc_window_taps(h0, p.dh, p.kh, -p.ph, p.h + p.ph_end, &c0, &c1);
                tc_window_taps(w0, p.dw, p.kw, -p.pw, p.w_in + p.pw_end, &d0, &d1);
                count = (double)(c1 - c0) * (double)(d1 - d0);
            } else {
                count = (double)(kh1 - kh0) * (double)(kw1 - kw0);
            }
            if (kh0 >= kh1 || kw0 >= kw1) {
                v = count > 0 && p.count_include_pad ? 0.0f : __int_as_float(0x7fc00000);
            } else {
                const float *xp = p.x + (int64_t)plane * p.h * p.w_in;
                double sum = 0.0;
                for (int64_t kh = kh0; kh < kh1; kh++) {
                    const int64_t row = (h0 + kh * p.dh) * p.w_in + w0;
                    for (int64_t kw = kw0; kw < kw1; kw++) sum += (double)xp[row + kw * p.dw];
                }
                v = (float)(sum / count);
            }
        }
        p.y[idx] = tc_cnn_epi(v, (int64_t)idx, p.epi);
    }
}

/* G lanes per plane (32: a warp; 256: the block), 256 / G planes per block, grid-stride over planes. */
template <int G>
__global__ void __launch_bounds__(256) global_avg(const float *x, float *y, int64_t planes, int64_t isp,
                                                  tc__cuda_epi epi) {
    constexpr int PER_BLOCK = 256 / G;
    __shared__ double part[8];
    const int lane = (int)threadIdx.x % G, sub = (int)threadIdx.x / G;
    for (int64_t base = (int64_t)blockIdx.x * PER_BLOCK; base < planes; base += (int64_t)gridDim.x * PER_BLOCK) {
        const int64_t plane = base + sub;
        double s = 0.0;
        if (plane < planes) {
            const float *xp = x + plane * isp;
            for (int64_t i = lane; i < isp; i += G) s += (double)xp[i];
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
        if (G == 256) {
            if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
            __syncthreads();
            if (threadIdx.x == 0) {
                double t = 0.0;
                for (int w = 0; w < 8; w++) t += part[w];
                s = t;
            }
            __syncthreads(); /* part is rewritten by the next plane */
        }
        if (lane == 0 && plane < planes) y[plane] = tc_cnn_epi((float)(s / (double)isp), plane, epi);
    }
}

} // namespace

extern "C" cudaError_t tc__cuda_pool2d_f32(const tc__cuda_pool2d *p, cudaStream_t s) {
    const int64_t total = p->planes * p->oh * p->ow;
    if (total <= 0) return cudaSuccess;
    if (total <= INT32_MAX)
        pool2d<uint32_t><<<tc_cnn_blocks(total, 256), 256, 0, s>>>(*p, (uint32_t)total);
    else
        pool2d<int64_t><<<tc_cnn_blocks(total, 256), 256, 0, s>>>(*p, total);
    return cudaGetLastError();
}

extern "C" cudaError_t tc__cuda_global_avgpool_f32(const float *x, float *y, int64_t planes, int64_t isp,
                                                   tc__cuda_epi epi, cudaStream_t s) {
    if (planes <= 0) return cudaSuccess;
    if (isp >= 4096 || planes < 64) /* few or large planes: a block each */
        global_avg<256><<<tc_cnn_blocks(planes, 1), 256, 0, s>>>(x, y, planes, isp, epi);
    else
        global_avg<32><<<tc_cnn_blocks(planes, 8), 256, 0, s>>>(x, y, planes, isp, epi);
    return cudaGetLastError();
}
