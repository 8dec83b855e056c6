/*
 * softmax_f32.cu - FP32 Softmax / LogSoftmax (softmax_f32.h). Rows of up to 1024 elements: one warp per row, the
 * row (plus its mask, a float add as the reference's) held in registers; longer rows: one block of 512 threads per
 * row, three passes over global memory (max, sum of exponentials, outputs). As the reference: the maximum is
 * subtracted first; a NaN anywhere in a row, a +inf, or a row of only -inf makes the whole row NaN (then the guard's
 * value when tc.nan_to is set). Sums are in float (the reference's are in double: differences of a few ulps).
 */
#include <math.h>

#include "backends/cuda/reduce.cuh"
#include "backends/cuda/softmax_f32.h"

namespace {

constexpr float kNegInf = -INFINITY;

/* The mask's offset for x's element at linear offset off (mode 2). */
__device__ __forceinline__ int64_t mask_off_full(const tc__cuda_softmax_args &p, int64_t off) {
    int64_t m = 0;
    for (int d = p.rank - 1; d >= 0; d--) {
        const int64_t c = off % p.dims[d];
        off /= p.dims[d];
        m += c * p.mst[d];
    }
    return m;
}

/* The mask's offset of row r's first element in mode 1 (rows are x's last dim). */
__device__ __forceinline__ int64_t mask_row_base(const tc__cuda_softmax_args &p, int64_t r) {
    int64_t m = 0;
    for (int d = p.rank - 2; d >= 0; d--) {
        const int64_t c = r % p.dims[d];
        r /= p.dims[d];
        m += c * p.mst[d];
    }
    return m;
}

/* Input value of element k of the row whose element 0 is at x offset base (mask row base mbase). */
__device__ __forceinline__ float load_x(const tc__cuda_softmax_args &p, int64_t base, int64_t mbase, int64_t k) {
    const int64_t off = base + k * p.inner;
    const float v = __ldg(p.x + off);
    if (p.mask_mode == 0) return v;
    const int64_t mo = p.mask_mode == 1 ? mbase + k * p.mst[p.rank - 1] : mask_off_full(p, off);
    return v + __ldg(p.mask + mo);
}

__device__ __forceinline__ float finish(const tc__cuda_softmax_args &p, float v, float mx, float sum, float lsum) {
    float r;
    if (mx == kNegInf) r = NAN; /* only -inf (or NaN): exp(-inf - -inf) is NaN in the reference too */
    else r = p.log_out ? v - mx - lsum : expf(v - mx) / sum;
    if (p.guard && r != r) r = p.nan_to;
    return r;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ void row_start(const tc__cuda_softmax_args &p, int64_t r, int64_t *base, int64_t *mbase) {
    const int64_t o = r / p.inner, in = r - o * p.inner;
    *base = o * p.n * p.inner + in;
    *mbase = p.mask_mode == 1 ? mask_row_base(p, r) : 0;
}

/* One warp per row, ITEMS elements per lane (n <= 32 * ITEMS). */
template <int ITEMS>
__global__ void __launch_bounds__(128) softmax_warp(const tc__cuda_softmax_args p) {
    const int lane = (int)(threadIdx.x & 31u);
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
    for (int64_t r = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; r < p.rows; r += warps) {
        int64_t base, mbase;
        row_start(p, r, &base, &mbase);
        float v[ITEMS];
        float mx = kNegInf;
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int64_t k = lane + 32 * i;
            v[i] = k < p.n ? load_x(p, base, mbase, k) : kNegInf;
            mx = fmaxf(mx, v[i]);
        }
        mx = warp_max(mx);
        float sum = 0.0f;
#pragma unroll
        for (int i = 0; i < ITEMS; i++)
            if (lane + 32 * i < p.n) sum += expf(v[i] - mx);
        sum = tc_warp_sum(sum);
        const float lsum = logf(sum);
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int64_t k = lane + 32 * i;
            if (k < p.n) p.y[base + k * p.inner] = finish(p, v[i], mx, sum, lsum);
        }
    }
}

constexpr int kBlock = 512;

/* Block-wide reduction (max or sum); every thread gets the result. */
template <bool MAX>
__device__ __forceinline__ float block_reduce(float v, float *sh) {
    v = MAX ? warp_max(v) : tc_warp_sum(v);
    const int lane = (int)(threadIdx.x & 31u), w = (int)(threadIdx.x / 32);
    __syncthreads(); /* sh may still be read by a previous reduction */
    if (lane == 0) sh[w] = v;
    __syncthreads();
    v = lane < (int)(blockDim.x / 32) ? sh[lane] : (MAX ? kNegInf : 0.0f);
    return MAX ? warp_max(v) : tc_warp_sum(v);
}

/* One block per row, any n. */
__global__ void __launch_bounds__(kBlock) softmax_block(const tc__cuda_softmax_args p) {
    __shared__ float sh[32];
    for (int64_t r = blockIdx.x; r < p.rows; r += gridDim.x) {
        int64_t base, mbase;
        row_start(p, r, &base, &mbase);
        float mx = kNegInf;
        for (int64_t k = threadIdx.x; k < p.n; k += blockDim.x) mx = fmaxf(mx, load_x(p, base, mbase, k));
        mx = block_reduce<true>(mx, sh);
        float sum = 0.0f;
        for (int64_t k = threadIdx.x; k < p.n; k += blockDim.x) sum += expf(load_x(p, base, mbase, k) - mx);
        sum = block_reduce<false>(sum, sh);
        const float lsum = logf(sum);
        for (int64_t k = threadIdx.x; k < p.n; k += blockDim.x)
            p.y[base + k * p.inner] = finish(p, load_x(p, base, mbase, k), mx, sum, lsum);
    }
}

template <int ITEMS>
cudaError_t launch_warp(const tc__cuda_softmax_args *p, cudaStream_t s) {
    const int64_t blocks = (p->rows + 3) / 4;
    const unsigned grid = (unsigned)(blocks < (1 << 20) ? blocks : (1 << 20));
    softmax_warp<ITEMS><<<grid, 128, 0, s>>>(*p);
    return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t tc__cuda_softmax_f32(const tc__cuda_softmax_args *p, cudaStream_t s) {
    if (p->rows <= 0 || p->n <= 0 || p->inner <= 0) return cudaSuccess;
    if (p->n <= 32) return launch_warp<1>(p, s);
    if (p->n <= 64) return launch_warp<2>(p, s);
    if (p->n <= 128) return launch_warp<4>(p, s);
    if (p->n <= 256) return launch_warp<8>(p, s);
    if (p->n <= 512) return launch_warp<16>(p, s);
    if (p->n <= 1024) return launch_warp<32>(p, s);
    const unsigned grid = (unsigned)(p->rows < (1 << 20) ? p->rows : (1 << 20));
    softmax_block<<<grid, kBlock, 0, s>>>(*p);
    return cudaGetLastError();
}
