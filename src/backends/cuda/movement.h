/*
 * movement.h - the data movement kernels (movement.cu) of the cuda_transpose and cuda_concat tactics, for elements of
 * 1, 2, 4 or 8 bytes (any dtype: they move bytes).
 */
#ifndef TC_BACKENDS_CUDA_MOVEMENT_H
#define TC_BACKENDS_CUDA_MOVEMENT_H

#include <stddef.h>
#include <stdint.h>

#include "backends/cuda/cuda_exec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A strided gather: y (dense, dims) element i at coordinates c reads x[sum of c[d] * src[d]]. The caller collapses it
 * (size-1 dims dropped, output dims merged where the source is contiguous across them). */
typedef struct tc__cuda_gather {
    int32_t rank;
    int64_t dims[TC__CUDA_MAX_RANK];
    int64_t src[TC__CUDA_MAX_RANK];
} tc__cuda_gather;

/* y = the gather g of x, es-byte elements (1, 2, 4, 8); a copy when g is the identity; nothing when empty. A tiled
 * shared-memory kernel for the (batched) 2-D transposes, an elementwise one for the rest. */
cudaError_t tc__cuda_gather_copy(const void *x, void *y, size_t es, const tc__cuda_gather *g, cudaStream_t s);

/* One input of a concatenation: dst viewed as outer rows of row elements receives src (outer rows of len
 * elements) at element offset off of each row; es-byte elements (any size; moved in the widest aligned units). */
cudaError_t tc__cuda_concat_part(const void *src, void *dst, size_t es, int64_t outer, int64_t len, int64_t row,
                                 int64_t off, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
