/*
 * dn_index.h - the indexing and data movement kernels of the dense CUDA tactics (dn_index.cu): Gather, the strided
 * copy behind Expand and Slice, and Where. Elements move by size (1, 2, 4 or 8 bytes), so any dtype works.
 */
#ifndef TC_BACKENDS_CUDA_DN_INDEX_H
#define TC_BACKENDS_CUDA_DN_INDEX_H

#include "backends/cuda/dn_common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tc__cuda_gather_args {
    const void *data;
    const void *indices; /* int32 or int64 */
    void *y;
    int32_t idx64;       /* 1: int64 indices */
    int32_t es;          /* element bytes */
    int64_t outer, dim, n_idx, inner; /* data viewed [outer, dim, inner]; y [outer, n_idx, inner] */
    unsigned char fill[8]; /* the element written for an index out of range (es bytes) */
    tc__cuda_report report; /* where an index out of range is reported (TC__CUDA_BAD_INDEX) */
} tc__cuda_gather_args;

/* Gather along the middle dim; an index outside [-dim, dim) writes `fill` (never reads out of bounds) and is
 * reported. */
cudaError_t tc__cuda_dn_gather(const tc__cuda_gather_args *args, cudaStream_t stream);

/* y[o] = x[w.base[0] + offset of o's multi-index through w.st[0]], es-byte elements, w.numel of them. */
cudaError_t tc__cuda_dn_strided_copy(const tc__dn_walk *w, const void *x, void *y, int es, cudaStream_t stream);

/* y[o] = cond[..] ? a[..] : b[..] through w's three inputs (cond, a, b), es-byte elements. */
cudaError_t tc__cuda_dn_where(const tc__dn_walk *w, const uint8_t *cond, const void *a, const void *b, void *y, int es,
                              cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
