/*
 * ref.h - the reference backend: plain, obviously correct C kernels for every
 * operator in ops.inc, with wide (double) accumulation for floats. Every fast
 * kernel is tested against these. Kernels depend only on core types.
 */
#ifndef TC_BACKENDS_REF_REF_H
#define TC_BACKENDS_REF_REF_H

#include "core/attr.h"
#include "core/epilogue.h"
#include "core/error.h"
#include "core/tensor.h"

/* Preallocated scratch memory a context lends its kernels (bump allocation, reset after each step). */
typedef struct tc__scratch {
    unsigned char *base;
    size_t cap, used;
} tc__scratch;

typedef struct tc__kernel_ctx {
    const char *node_name;
    const char *op_type;
    int64_t opset;
    const tc__attrs *attrs;
    int n_in;
    const tc__tensor *const *in; /* in[i] is NULL for an absent optional input */
    int n_out;
    tc__tensor *const *out;      /* dtype/rank/dims set by shape inference and data allocated
                                    (zeroed) by the executor; out[i] NULL for an absent output */
    tc__err *err;
    tc__scratch *scratch;        /* NULL: kernels may malloc (reference executor); else they must use it */
    /* For fast tactics that fuse the epilogue (y = act(op + bias + residual)); NULL/none otherwise. */
    const tc__epilogue *epi;
    const tc__tensor *bias;      /* 1-D over the output's last dim, or NULL */
    const tc__tensor *residual;  /* same shape as out[0], or NULL */
    void *pool;                  /* pthreadpool_t of the context, or NULL (single thread) */
} tc__kernel_ctx;

/*
 * Scratch memory for a kernel: from ctx->scratch when the caller lent one (64-byte aligned,
 * NULL when it does not fit: fail with TC_STATUS_OUT_OF_MEMORY), else from malloc.
 * Release with tc__kernel_free in reverse order of allocation.
 */
void *tc__kernel_alloc(const tc__kernel_ctx *ctx, size_t bytes);
void tc__kernel_free(const tc__kernel_ctx *ctx, void *p);
/* True for the reference kernels that take scratch memory (the others need none). */
bool tc__ref_uses_scratch(const char *op_type);

typedef tc_status (*tc__ref_fn)(const tc__kernel_ctx *ctx);

#define TC_OP(name) tc_status tc__ref_##name(const tc__kernel_ctx *ctx);
#include "core/ops.inc"
#undef TC_OP

/* The reference kernel for an op type, or NULL. */
tc__ref_fn tc__ref_find(const char *op_type);

/* An activation on one value (double precision), as fused epilogues apply it. */
double tc__ref_act(tc__act act, double x, double alpha, double beta);
/* Applies y = act(y + bias + residual) in place; bias/residual may be NULL. */
tc_status tc__ref_apply_epilogue(const tc__epilogue *e, tc__tensor *y, const tc__tensor *bias,
                                 const tc__tensor *residual, tc__err *err);

/* Fails with a message naming the node and the dtype of input i. */
tc_status tc__ref_unsupported_dtype(const tc__kernel_ctx *ctx, int input, tc_dtype dtype);

/* Row-major element strides of a shape (movement.c). */
void tc__ref_row_strides(int32_t rank, const int64_t *dims, int64_t *strides);
/* Copies a strided view of src into the dense dst (elements of es bytes): the dst element with multi-index c over dims
 * comes from src element offset + sum(c[i] * src_strides[i]) (movement.c: Transpose, Slice; MatMul's views). */
void tc__ref_strided_copy(void *dst, const void *src, int32_t rank, const int64_t *dims, const int64_t *src_strides,
                          int64_t offset, size_t es);

#endif
