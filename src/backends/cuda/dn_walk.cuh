/* dn_walk.cuh - device side of the strided walks of dn_common.h (tc__dn_walk): input offsets of an output element,
 * and the grid size of the grid-stride loops of the dn_* kernels. */
#ifndef TC_BACKENDS_CUDA_DN_WALK_CUH
#define TC_BACKENDS_CUDA_DN_WALK_CUH

#include "backends/cuda/dn_common.h"

/* off[k] = the offset in input k of output element o (row-major over w.dims), for the first NIN inputs. */
template <int NIN>
__device__ __forceinline__ void tc_dn_offsets(const tc__dn_walk &w, int64_t o, int64_t *off) {
#pragma unroll
    for (int k = 0; k < NIN; k++) off[k] = w.base[k];
    for (int d = w.rank - 1; d > 0; d--) {
        const int64_t c = o % w.dims[d];
        o /= w.dims[d];
#pragma unroll
        for (int k = 0; k < NIN; k++) off[k] += c * w.st[k][d];
    }
#pragma unroll
    for (int k = 0; k < NIN; k++) off[k] += o * w.st[k][0]; /* o < dims[0] now */
}

/* Blocks of `threads` for a grid-stride loop over n items (n > 0). */
static inline unsigned tc_dn_grid(int64_t n, int threads) {
    const int64_t b = (n + threads - 1) / threads;
    return (unsigned)(b < (1 << 20) ? b : (1 << 20));
}

/* The unsigned type of B bytes. */
template <int B> struct tc_dn_uint;
template <> struct tc_dn_uint<1> { typedef uint8_t type; };
template <> struct tc_dn_uint<2> { typedef uint16_t type; };
template <> struct tc_dn_uint<4> { typedef uint32_t type; };
template <> struct tc_dn_uint<8> { typedef unsigned long long type; };
template <> struct tc_dn_uint<16> { typedef uint4 type; };

#endif
