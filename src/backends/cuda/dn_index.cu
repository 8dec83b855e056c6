/*
 * dn_index.cu - Gather, the strided copy (Expand, Slice) and Where of the dense CUDA tactics (dn_index.h): one
 * thread per output element (Gather: per chunk of up to 16 bytes of a row), grid-stride loops, 64-bit offsets.
 */
#include <string.h>

#include "backends/cuda/dn_index.h"
#include "backends/cuda/cuda_report.cuh"
#include "backends/cuda/dn_walk.cuh"

namespace {

constexpr int kThreads = 256;

/* Gather on W-byte chunks: the rows of `inner` elements are inner_c chunks; fill is the out-of-range chunk. */
template <typename T, bool IDX64>
__global__ void gather_kernel(const T *__restrict__ data, const void *__restrict__ indices, T *__restrict__ y,
                              int64_t outer, int64_t dim, int64_t n_idx, int64_t inner_c, T fill,
                              tc__cuda_report report) {
    const int64_t total = outer * n_idx * inner_c;
    for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < total; o += (int64_t)gridDim.x * blockDim.x) {
        const int64_t ic = o % inner_c, t = o / inner_c, j = t % n_idx, oi = t / n_idx;
        int64_t v = IDX64 ? __ldg((const long long *)indices + j) : (int64_t)__ldg((const int *)indices + j);
        if (v < 0) v += dim;
        /* An index out of range: the output gets the fill (NaN or 0) and the run fails after this step. */
        if (v >= 0 && v < dim) {
            y[o] = data[(oi * dim + v) * inner_c + ic];
        } else {
            y[o] = fill;
            tc_cuda_report(report);
        }
    }
}

template <int W>
cudaError_t gather_w(const tc__cuda_gather_args *p, cudaStream_t s) {
    typedef typename tc_dn_uint<W>::type T;
    const int64_t inner_c = p->inner * p->es / W;
    unsigned char pat[16];
    for (int b = 0; b < W; b++) pat[b] = p->fill[b % p->es];
    T fill;
    memcpy(&fill, pat, sizeof fill);
    const unsigned grid = tc_dn_grid(p->outer * p->n_idx * inner_c, kThreads);
    if (p->idx64)
        gather_kernel<T, true><<<grid, kThreads, 0, s>>>((const T *)p->data, p->indices, (T *)p->y, p->outer, p->dim,
                                                         p->n_idx, inner_c, fill, p->report);
    else
        gather_kernel<T, false><<<grid, kThreads, 0, s>>>((const T *)p->data, p->indices, (T *)p->y, p->outer, p->dim,
                                                          p->n_idx, inner_c, fill, p->report);
    return cudaGetLastError();
}

template <typename T>
__global__ void strided_copy_kernel(const tc__dn_walk w, const T *__restrict__ x, T *__restrict__ y) {
    for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < w.numel;
         o += (int64_t)gridDim.x * blockDim.x) {
        int64_t off[1];
        tc_dn_offsets<1>(w, o, off);
        y[o] = x[off[0]];
    }
}

template <typename T>
__global__ void where_kernel(const tc__dn_walk w, const uint8_t *__restrict__ c, const T *__restrict__ a,
                             const T *__restrict__ b, T *__restrict__ y) {
    for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < w.numel;
         o += (int64_t)gridDim.x * blockDim.x) {
        int64_t off[3];
        tc_dn_offsets<3>(w, o, off);
        y[o] = c[off[0]] ? a[off[1]] : b[off[2]];
    }
}

} // namespace

extern "C" cudaError_t tc__cuda_dn_gather(const tc__cuda_gather_args *p, cudaStream_t s) {
    if (p->outer <= 0 || p->n_idx <= 0 || p->inner <= 0) return cudaSuccess;
    /* The widest chunk that divides a row's bytes and both base addresses (rows then stay aligned). */
    const uint64_t row = (uint64_t)p->inner * (uint64_t)p->es;
    const uint64_t al = row | (uint64_t)(uintptr_t)p->data | (uint64_t)(uintptr_t)p->y;
    if (al % 16 == 0) return gather_w<16>(p, s);
    if (al % 8 == 0) return gather_w<8>(p, s);
    if (al % 4 == 0 && p->es <= 4) return gather_w<4>(p, s);
    if (al % 2 == 0 && p->es <= 2) return gather_w<2>(p, s);
    switch (p->es) {
    case 1: return gather_w<1>(p, s);
    case 2: return gather_w<2>(p, s);
    case 4: return gather_w<4>(p, s);
    case 8: return gather_w<8>(p, s);
    default: return cudaErrorInvalidValue;
    }
}

extern "C" cudaError_t tc__cuda_dn_strided_copy(const tc__dn_walk *w, const void *x, void *y, int es, cudaStream_t s) {
    if (w->numel <= 0) return cudaSuccess;
    const unsigned grid = tc_dn_grid(w->numel, kThreads);
    switch (es) {
    case 1: strided_copy_kernel<uint8_t><<<grid, kThreads, 0, s>>>(*w, (const uint8_t *)x, (uint8_t *)y); break;
    case 2: strided_copy_kernel<uint16_t><<<grid, kThreads, 0, s>>>(*w, (const uint16_t *)x, (uint16_t *)y); break;
    case 4: strided_copy_kernel<uint32_t><<<grid, kThreads, 0, s>>>(*w, (const uint32_t *)x, (uint32_t *)y); break;
    case 8:
        strided_copy_kernel<unsigned long long>
            <<<grid, kThreads, 0, s>>>(*w, (const unsigned long long *)x, (unsigned long long *)y);
        break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t tc__cuda_dn_where(const tc__dn_walk *w, const uint8_t *c, const void *a, const void *b, void *y,
                                         int es, cudaStream_t s) {
    if (w->numel <= 0) return cudaSuccess;
    const unsigned grid = tc_dn_grid(w->numel, kThreads);
    switch (es) {
    case 1: where_kernel<uint8_t><<<grid, kThreads, 0, s>>>(*w, c, (const uint8_t *)a, (const uint8_t *)b, (uint8_t *)y); break;
    case 2:
        where_kernel<uint16_t><<<grid, kThreads, 0, s>>>(*w, c, (const uint16_t *)a, (const uint16_t *)b, (uint16_t *)y);
        break;
    case 4:
        where_kernel<uint32_t><<<grid, kThreads, 0, s>>>(*w, c, (const uint32_t *)a, (const uint32_t *)b, (uint32_t *)y);
        break;
    case 8:
        where_kernel<unsigned long long><<<grid, kThreads, 0, s>>>(
            *w, c, (const unsigned long long *)a, (const unsigned long long *)b, (unsigned long long *)y);
        break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
