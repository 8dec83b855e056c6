/*
 * embed_layernorm.cu - TcEmbedLayerNorm on the GPU (embed_layernorm.h): one block of 256 threads per row, the row
 * gathered from the table and summed with its addend row into shared memory once, then the mean and the biased
 * variance of the deviations (two block reductions, float) and the normalised output. BERT-base: 128 rows of 768.
 */
#include <math.h>

#include "backends/cuda/cuda_report.cuh"
#include "backends/cuda/embed_layernorm.h"
#include "backends/cuda/half_io.cuh"
#include "backends/cuda/reduce.cuh"

namespace {

constexpr int kThreads = 256;



__device__ __forceinline__ void st_nan(float *p) { *p = __int_as_float(0x7fc00000); }
__device__ __forceinline__ void st_nan(__half *p) { *p = __ushort_as_half((unsigned short)0x7e00u); }

template <typename YT>
__global__ void __launch_bounds__(kThreads) embed_ln(const tc__cuda_embed_ln_args p) {
    extern __shared__ float xs[];
    __shared__ float red[32];
    const int d = (int)p.d;
    const float fd = (float)p.d;
    for (int64_t r = blockIdx.x; r < p.rows; r += gridDim.x) {
        int64_t id = p.ids64 ? (int64_t)__ldg((const long long *)p.ids + r) : (int64_t)__ldg((const int *)p.ids + r);
        if (id < 0) id += p.v;
        YT *y = (YT *)p.y + r * p.d;
        if (id < 0 || id >= p.v) { /* (uniform over the block) */
            for (int k = (int)threadIdx.x; k < d; k += kThreads) st_nan(y + k);
            if (threadIdx.x == 0) tc_cuda_report(p.report);
            continue;
        }
        const float *row = p.table + id * p.d;
        const float *add = p.addend != nullptr ? p.addend + (r % p.s) * p.d : nullptr;
        float sum = 0.0f;
        for (int k = (int)threadIdx.x; k < d; k += kThreads) {
            const float v = add != nullptr ? __ldg(row + k) + __ldg(add + k) : __ldg(row + k);
            xs[k] = v;
            sum += v;
        }
        const float mean = tc_block_sum(sum, red) / fd;
        float ss = 0.0f;
        for (int k = (int)threadIdx.x; k < d; k += kThreads) {
            const float dv = xs[k] - mean;
            ss = fmaf(dv, dv, ss);
        }
        const float inv = 1.0f / sqrtf(tc_block_sum(ss, red) / fd + p.epsilon);
        for (int k = (int)threadIdx.x; k < d; k += kThreads)
            tc_st(y + k, (xs[k] - mean) * inv * __ldg(p.scale + k) + __ldg(p.bias + k));
        __syncthreads(); /* xs is rewritten by the block's next row */
    }
}

} // namespace

extern "C" cudaError_t tc__cuda_embed_layernorm(const tc__cuda_embed_ln_args *p, cudaStream_t s) {
    if (p->rows <= 0 || p->d <= 0) return cudaSuccess;
    if (p->d > TC__EMBED_LN_MAX_D || p->v < 1 || (p->addend != nullptr && p->s < 1)) return cudaErrorInvalidValue;
    const unsigned grid = (unsigned)(p->rows < (1 << 20) ? p->rows : (1 << 20));
    const size_t smem = (size_t)p->d * sizeof(float); /* <= 32 KiB: no opt-in needed */
    if (p->y16) embed_ln<__half><<<grid, kThreads, smem, s>>>(*p);
    else embed_ln<float><<<grid, kThreads, smem, s>>>(*p);
    return cudaGetLastError();
}
