/* reduce.cuh - float sums across a warp (shuffles) and across a block (a warp's partials through shared memory), for
 * the row kernels (LayerNorm, the embedding LayerNorm, Softmax). */
#ifndef TC_BACKENDS_CUDA_REDUCE_CUH
#define TC_BACKENDS_CUDA_REDUCE_CUH

/* The sum of v over the 32 lanes of a full warp, in every lane. */
__device__ __forceinline__ float tc_warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* The sum of v over the block (blockDim.x a multiple of 32, at most 1024), in every thread; sh: 32 floats of shared
 * memory, reusable by the next call (the first barrier waits for the previous reduction's reads). */
__device__ __forceinline__ float tc_block_sum(float v, float *sh) {
    v = tc_warp_sum(v);
    const int lane = (int)(threadIdx.x & 31u), w = (int)(threadIdx.x / 32);
    __syncthreads();
    if (lane == 0) sh[w] = v;
    __syncthreads();
    v = lane < (int)(blockDim.x / 32) ? sh[lane] : 0.0f;
    return tc_warp_sum(v);
}

#endif
