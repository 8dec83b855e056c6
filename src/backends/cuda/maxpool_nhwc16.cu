/*
 * maxpool_nhwc16.cu - the kernels of maxpool_nhwc16.h: one thread per output element in NHWC order (channels fastest,
 * so FP16 NHWC reads and writes are coalesced), and for the chained case (FP16 NHWC in and out, C a multiple of 8,
 * 16-byte aligned) one thread per 8 channels with 16-byte loads and stores.
 */
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>

#include "backends/cuda/half_io.cuh"
#include "backends/cuda/maxpool_nhwc16.h"
#include "backends/cuda/window_taps.cuh"

namespace {

/* The best of a window so far: NaN inputs are skipped; found says whether any was not NaN. */
__device__ __forceinline__ void take(float x, float *best, bool *found) {
    if (x == x && (!*found || x > *best)) *best = x, *found = true;
}

template <bool IN16, bool OUT16>
__global__ void __launch_bounds__(256) maxpool_any(const tc__cuda_maxpool16 p, int64_t total) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t ch = i % p.c, t = i / p.c, ow = t % p.ow, t2 = t / p.ow, oh = t2 % p.oh, b = t2 / p.oh;
        const int64_t h0 = oh * p.sh - p.ph, w0 = ow * p.sw - p.pw;
        int64_t kh0, kh1, kw0, kw1;
        tc_window_taps(h0, p.dh, p.kh, 0, p.h, &kh0, &kh1);
        tc_window_taps(w0, p.dw, p.kw, 0, p.w, &kw0, &kw1);
        float best = __int_as_float(0x7fc00000);
        bool found = false;
        for (int64_t kh = kh0; kh < kh1; kh++)
            for (int64_t kw = kw0; kw < kw1; kw++) {
                const int64_t ih = h0 + kh * p.dh, iw = w0 + kw * p.dw;
                if (IN16)
                    take(__half2float(((const __half *)p.x)[((b * p.h + ih) * p.w + iw) * p.c + ch]), &best, &found);
                else
                    take(((const float *)p.x)[((b * p.c + ch) * p.h + ih) * p.w + iw], &best, &found);
            }
        const float v = kh0 >= kh1 || kw0 >= kw1 ? -INFINITY : best;
        if (OUT16)
            ((__half *)p.y)[i] = tc_half_sat_finite(v); /* as the chain's casts; an FP16 input's maximum is exact; an FP32 one rounds */
        else
            ((float *)p.y)[((b * p.c + ch) * p.oh + oh) * p.ow + ow] = v;
    }
}

/* FP16 NHWC to FP16 NHWC, 8 channels per thread (c8 = C / 8), 32-bit indices (total8 < 2^31). */
__global__ void __launch_bounds__(256) maxpool_16x8(const tc__cuda_maxpool16 p, int c8, int total8) {
    const uint4 *x = (const uint4 *)p.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total8; i += gridDim.x * blockDim.x) {
        const int cg = i % c8, t = i / c8, ow = t % (int)p.ow, t2 = t / (int)p.ow, oh = t2 % (int)p.oh,
                  b = t2 / (int)p.oh;
        const int64_t h0 = (int64_t)oh * p.sh - p.ph, w0 = (int64_t)ow * p.sw - p.pw;
        int64_t kh0, kh1, kw0, kw1;
        tc_window_taps(h0, p.dh, p.kh, 0, p.h, &kh0, &kh1);
        tc_window_taps(w0, p.dw, p.kw, 0, p.w, &kw0, &kw1);
        float best[8];
        bool found[8];
#pragma unroll
        for (int j = 0; j < 8; j++) best[j] = __int_as_float(0x7fc00000), found[j] = false;
        for (int64_t kh = kh0; kh < kh1; kh++)
            for (int64_t kw = kw0; kw < kw1; kw++) {
                const int64_t ih = h0 + kh * p.dh, iw = w0 + kw * p.dw;
                uint4 raw = __ldg(x + ((b * p.h + ih) * p.w + iw) * c8 + cg);
                const __half2 *h = (const __half2 *)&raw;
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    const float2 f = __half22float2(h[j]);
                    take(f.x, &best[2 * j], &found[2 * j]);
                    take(f.y, &best[2 * j + 1], &found[2 * j + 1]);
                }
            }
        const bool none = kh0 >= kh1 || kw0 >= kw1;
        uint4 out;
        __half2 *o = (__half2 *)&out;
#pragma unroll
        for (int j = 0; j < 4; j++)
            o[j] = none ? __float2half2_rn(-INFINITY) : __floats2half2_rn(best[2 * j], best[2 * j + 1]);
        ((uint4 *)p.y)[i] = out;
    }
}

unsigned blocks_for(int64_t n) {
    const int64_t b = (n + 255) / 256;
    return (unsigned)(b < 65535 * 8 ? (b > 0 ? b : 1) : 65535 * 8);
}

bool aligned16(const void *q) { return ((uintptr_t)q & 15u) == 0; }

} // namespace

extern "C" cudaError_t tc__cuda_maxpool16_run(const tc__cuda_maxpool16 *p, cudaStream_t s) {
    const int64_t total = p->n * p->c * p->oh * p->ow;
    if (total <= 0) return cudaSuccess;
    if (p->in16 && p->out16 && p->c % 8 == 0 && total / 8 <= INT32_MAX && p->oh <= INT32_MAX && p->ow <= INT32_MAX &&
        aligned16(p->x) && aligned16(p->y)) {
        maxpool_16x8<<<blocks_for(total / 8), 256, 0, s>>>(*p, (int)(p->c / 8), (int)(total / 8));
    } else if (p->in16) {
        if (p->out16)
            maxpool_any<true, true><<<blocks_for(total), 256, 0, s>>>(*p, total);
        else
            maxpool_any<true, false><<<blocks_for(total), 256, 0, s>>>(*p, total);
    } else {
        if (p->out16)
            maxpool_any<false, true><<<blocks_for(total), 256, 0, s>>>(*p, total);
        else
            maxpool_any<false, false><<<blocks_for(total), 256, 0, s>>>(*p, total);
    }
    return cudaGetLastError();
}
