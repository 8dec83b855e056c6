/*
 * binary_f32.cu - FP32 Add / Sub / Mul / Div with NumPy broadcasting (eltwise_f32.h): one thread per output element
 * (grid-stride); the same-shape / scalar case (collapsed rank <= 1) without coordinate arithmetic, the others
 * unravelling the output index over the collapsed dims, in 32-bit arithmetic when the output allows. No __restrict__:
 * the output may be an input (in place; each element is read and written by one thread).
 */
#include "backends/cuda/cnn_epi.cuh"
#include "backends/cuda/eltwise_f32.h"

#include <stdint.h>

namespace {

template <int OP>
__device__ __forceinline__ float bin(float a, float b) {
    if (OP == TC__CUDA_BIN_ADD) return a + b;
    if (OP == TC__CUDA_BIN_SUB) return a - b;
    if (OP == TC__CUDA_BIN_MUL) return a * b;
    return a / b; /* IEEE division (no -prec-div=false) */
}

/* Collapsed rank <= 1: a[i * sa0], b[i * sb0]. */
template <int OP, typename I>
__global__ void __launch_bounds__(256) bin_flat(const float *a, const float *b,
                                                float *y, I n, I sa, I sb, tc__cuda_epi epi) {
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x)
        y[i] = tc_cnn_epi(bin<OP>(a[i * sa], b[i * sb]), (int64_t)i, epi);
}

template <int OP, typename I>
__global__ void __launch_bounds__(256) bin_nd(const float *a, const float *b,
                                              float *y, I n, tc__cuda_bcast2 sh, tc__cuda_epi epi) {
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x) {
        I r = i, ia = 0, ib = 0;
        for (int d = sh.rank - 1; d >= 0; d--) {
            const I dim = (I)sh.dims[d];
            const I c = r % dim;
            r /= dim;
            ia += c * (I)sh.sa[d];
            ib += c * (I)sh.sb[d];
        }
        y[i] = tc_cnn_epi(bin<OP>(a[ia], b[ib]), (int64_t)i, epi);
    }
}

template <int OP, typename I>
void launch(const float *a, const float *b, float *y, const tc__cuda_bcast2 *sh, int64_t n, tc__cuda_epi epi,
            cudaStream_t s) {
    const unsigned blocks = tc_cnn_blocks(n, 256);
    if (sh->rank <= 1)
        bin_flat<OP, I><<<blocks, 256, 0, s>>>(a, b, y, (I)n, sh->rank == 1 ? (I)sh->sa[0] : 0,
                                               sh->rank == 1 ? (I)sh->sb[0] : 0, epi);
    else
        bin_nd<OP, I><<<blocks, 256, 0, s>>>(a, b, y, (I)n, *sh, epi);
}

template <int OP>
void launch_op(const float *a, const float *b, float *y, const tc__cuda_bcast2 *sh, int64_t n, tc__cuda_epi epi,
               cudaStream_t s) {
    if (n <= INT32_MAX) launch<OP, uint32_t>(a, b, y, sh, n, epi, s);
    else launch<OP, int64_t>(a, b, y, sh, n, epi, s);
}

} // namespace

extern "C" cudaError_t tc__cuda_binary_f32(int op, const float *a, const float *b, float *y, const tc__cuda_bcast2 *sh,
                                           int64_t n, tc__cuda_epi epi, cudaStream_t s) {
    if (n <= 0) return cudaSuccess;
    switch (op) {
    case TC__CUDA_BIN_ADD: launch_op<TC__CUDA_BIN_ADD>(a, b, y, sh, n, epi, s); break;
    case TC__CUDA_BIN_SUB: launch_op<TC__CUDA_BIN_SUB>(a, b, y, sh, n, epi, s); break;
    case TC__CUDA_BIN_MUL: launch_op<TC__CUDA_BIN_MUL>(a, b, y, sh, n, epi, s); break;
    case TC__CUDA_BIN_DIV: launch_op<TC__CUDA_BIN_DIV>(a, b, y, sh, n, epi, s); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
