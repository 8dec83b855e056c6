/*
 * movement.cu - data movement kernels (movement.h): strided gathers (Transpose) with a 32 x 32 shared-memory tile
 * for batched 2-D transposes and an elementwise kernel otherwise, and the row copies of Concat in the widest unit
 * (16 / 8 / 4 / 2 / 1 bytes) that sizes, offsets and pointers allow. Grid-stride loops throughout.
 */
#include "backends/cuda/cnn_epi.cuh"
#include "backends/cuda/movement.h"

#include <stdint.h>

namespace {

template <int ES> struct unit_of;
template <> struct unit_of<1> { typedef uint8_t type; };
template <> struct unit_of<2> { typedef uint16_t type; };
template <> struct unit_of<4> { typedef uint32_t type; };
template <> struct unit_of<8> { typedef unsigned long long type; };
template <> struct unit_of<16> { typedef uint4 type; };

template <typename T, typename I>
__global__ void __launch_bounds__(256) gather(const T *__restrict__ x, T *__restrict__ y, I n, tc__cuda_gather g) {
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x) {
        I r = i, off = 0;
        for (int d = g.rank - 1; d >= 0; d--) {
            const I dim = (I)g.dims[d];
            off += (r % dim) * (I)g.src[d];
            r /= dim;
        }
        y[i] = x[off];
    }
}

/* y[b][r][c] = x[b][c][r] for b < nb, r < R, c < C: 32 x 32 tiles through shared memory, 32 x 8 threads. */
template <typename T>
__global__ void __launch_bounds__(256) transpose_tiles(const T *__restrict__ x, T *__restrict__ y, int64_t nb,
                                                       int64_t R, int64_t C) {
    __shared__ T tile[32][33];
    const int64_t tr = (R + 31) / 32, tcn = (C + 31) / 32, tiles = nb * tr * tcn;
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const int64_t c0 = (t % tcn) * 32, r0 = ((t / tcn) % tr) * 32, b = t / (tcn * tr);
        const T *xb = x + b * R * C;
        T *yb = y + b * R * C;
        /* read x rows c (contiguous along r) */
        for (int k = ty; k < 32; k += 8) {
            const int64_t c = c0 + k, r = r0 + tx;
            if (c < C && r < R) tile[k][tx] = xb[c * R + r];
        }
        __syncthreads();
        /* write y rows r (contiguous along c) */
        for (int k = ty; k < 32; k += 8) {
            const int64_t r = r0 + k, c = c0 + tx;
            if (r < R && c < C) yb[r * C + c] = tile[tx][k];
        }
        __syncthreads();
    }
}

template <int ES>
cudaError_t gather_es(const void *x, void *y, const tc__cuda_gather *g, int64_t n, cudaStream_t s) {
    typedef typename unit_of<ES>::type T;
    const T *xs = (const T *)x;
    T *ys = (T *)y;
    /* batched 2-D transpose: y dims [nb,] R, C with source strides [R * C,] 1, R */
    const int r = g->rank;
    if (r >= 2 && r <= 3 && g->src[r - 2] == 1 && g->src[r - 1] == g->dims[r - 2] &&
        (r == 2 || g->src[0] == g->dims[1] * g->dims[2])) {
        const int64_t nb = r == 3 ? g->dims[0] : 1, R = g->dims[r - 2], C = g->dims[r - 1];
        const int64_t tiles = nb * ((R + 31) / 32) * ((C + 31) / 32);
        transpose_tiles<T><<<tc_cnn_blocks(tiles, 1), dim3(32, 8), 0, s>>>(xs, ys, nb, R, C);
    } else if (n <= INT32_MAX) {
        gather<T, uint32_t><<<tc_cnn_blocks(n, 256), 256, 0, s>>>(xs, ys, (uint32_t)n, *g);
    } else {
        gather<T, int64_t><<<tc_cnn_blocks(n, 256), 256, 0, s>>>(xs, ys, n, *g);
    }
    return cudaGetLastError();
}

template <typename T, typename I>
__global__ void __launch_bounds__(256) rows_copy(const T *__restrict__ src, T *__restrict__ dst, I total, I len,
                                                 I row, I off) {
    for (I j = (I)blockIdx.x * blockDim.x + threadIdx.x; j < total; j += (I)gridDim.x * blockDim.x) {
        const I o = j / len, c = j - o * len;
        dst[o * row + off + c] = src[j];
    }
}

template <int U>
cudaError_t rows_u(const void *src, void *dst, int64_t outer, int64_t len, int64_t row, int64_t off, cudaStream_t s) {
    typedef typename unit_of<U>::type T;
    const int64_t total = outer * len;
    if (outer * row <= INT32_MAX)
        rows_copy<T, uint32_t><<<tc_cnn_blocks(total, 256), 256, 0, s>>>((const T *)src, (T *)dst, (uint32_t)total,
                                                                         (uint32_t)len, (uint32_t)row, (uint32_t)off);
    else
        rows_copy<T, int64_t><<<tc_cnn_blocks(total, 256), 256, 0, s>>>((const T *)src, (T *)dst, total, len, row, off);
    return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t tc__cuda_gather_copy(const void *x, void *y, size_t es, const tc__cuda_gather *g,
                                            cudaStream_t s) {
    int64_t n = 1;
    for (int d = 0; d < g->rank; d++) n *= g->dims[d];
    if (n <= 0) return cudaSuccess;
    if (g->rank == 0 || (g->rank == 1 && g->src[0] == 1)) /* the identity */
        return x == y ? cudaSuccess : cudaMemcpyAsync(y, x, (size_t)n * es, cudaMemcpyDeviceToDevice, s);
    switch (es) {
    case 1: return gather_es<1>(x, y, g, n, s);
    case 2: return gather_es<2>(x, y, g, n, s);
    case 4: return gather_es<4>(x, y, g, n, s);
    case 8: return gather_es<8>(x, y, g, n, s);
    default: return cudaErrorInvalidValue;
    }
}

extern "C" cudaError_t tc__cuda_concat_part(const void *src, void *dst, size_t es, int64_t outer, int64_t len,
                                            int64_t row, int64_t off, cudaStream_t s) {
    if (outer <= 0 || len <= 0) return cudaSuccess;
    char *d = (char *)dst + (size_t)off * es;
    if (outer == 1 || len == row) /* one contiguous block */
        return cudaMemcpyAsync(d, src, (size_t)(outer * len) * es, cudaMemcpyDeviceToDevice, s);
    /* widest unit dividing every byte size and offset and both addresses */
    const uint64_t lb = (uint64_t)len * es, rb = (uint64_t)row * es, ob = (uint64_t)off * es;
    const uint64_t bits = lb | rb | ob | (uint64_t)(uintptr_t)src | (uint64_t)(uintptr_t)dst;
    int u = 16;
    while (u > 1 && (bits & (uint64_t)(u - 1)) != 0) u >>= 1;
    const int64_t lu = (int64_t)(lb / u), ru = (int64_t)(rb / u), ou = (int64_t)(ob / u);
    switch (u) {
    case 16: return rows_u<16>(src, dst, outer, lu, ru, ou, s);
    case 8: return rows_u<8>(src, dst, outer, lu, ru, ou, s);
    case 4: return rows_u<4>(src, dst, outer, lu, ru, ou, s);
    case 2: return rows_u<2>(src, dst, outer, lu, ru, ou, s);
    default: return rows_u<1>(src, dst, outer, lu, ru, ou, s);
    }
}
