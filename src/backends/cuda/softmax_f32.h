/*
 * softmax_f32.h - the FP32 Softmax / LogSoftmax kernels of the CUDA backend (softmax_f32.cu): rows of n elements
 * (element k of row r at (r / inner) * n * inner + k * inner + r % inner), an optional additive mask read through
 * its broadcast strides over x's dims (tc.softmax_add), and the NaN guard (tc.nan_to).
 */
#ifndef TC_BACKENDS_CUDA_SOFTMAX_F32_H
#define TC_BACKENDS_CUDA_SOFTMAX_F32_H

#include "backends/cuda/cuda_exec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tc__cuda_softmax_args {
    const float *x;
    const float *mask; /* or NULL */
    float *y;
    int64_t rows, n, inner;
    int32_t log_out, guard;
    float nan_to;
    /* The mask: mode 1 when rows are x's last dim (inner 1, n = dims[rank - 1]): row r's mask starts at the offset of
     * its multi-index over dims[0..rank-2] and steps by mst[rank - 1]; mode 2 otherwise: each element's offset from
     * its full multi-index. mst[i] is the mask's stride along x's dim i (0 where it broadcasts). */
    int32_t mask_mode, rank;
    int64_t dims[TC__CUDA_MAX_RANK], mst[TC__CUDA_MAX_RANK];
} tc__cuda_softmax_args;

/* Launches on stream (nothing when there is no element). */
cudaError_t tc__cuda_softmax_f32(const tc__cuda_softmax_args *args, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
