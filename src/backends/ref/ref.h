/*
 * ref.h - the reference backend: plain, obviously correct C kernels for every
 * operator in ops.inc, with wide (double) accumulation for floats. Every fast
 * kernel is tested against these. Kernels depend only on core types.
 */
#ifndef TC_BACKENDS_REF_REF_H
#define TC_BACKENDS_REF_REF_H

#include "backends/epilogue.h"
#include "backends/kernel.h"

/* True for the reference kernels that take scratch memory (the others need none). */
bool tc__ref_uses_scratch(const char *op_type);

typedef tc__kernel_fn tc__ref_fn;

#define TC_OP(name) tc_status tc__ref_##name(const tc__kernel_ctx *ctx);
#include "core/ops.inc"
#undef TC_OP

/* The reference kernel for an op type, or NULL. */
tc__ref_fn tc__ref_find(const char *op_type);


/* Fails with a message naming the node and the dtype of input i. */
tc_status tc__ref_unsupported_dtype(const tc__kernel_ctx *ctx, int input, tc_dtype dtype);

/* Row-major element strides of a shape (movement.c). */
void tc__ref_row_strides(int32_t rank, const int64_t *dims, int64_t *strides);
/* Copies a strided view of src into the dense dst (elements of es bytes): the dst element with multi-index c over dims
 * comes from src element offset + sum(c[i] * src_strides[i]) (movement.c: Transpose, Slice; MatMul's views). */
void tc__ref_strided_copy(void *dst, const void *src, int32_t rank, const int64_t *dims, const int64_t *src_strides,
                          int64_t offset, size_t es);

#endif
