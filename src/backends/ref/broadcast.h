/*
 * broadcast.h - NumPy broadcasting for reference kernels: maps each output row
 * to the offsets of up to TC__BCAST_MAX_IN inputs.
 *
 * tc__bcast_init aligns every input to the output shape (strides 0 where an
 * input dim of 1 is broadcast), drops dims of 1 and merges adjacent dims that
 * every input walks contiguously, so a same-shape or scalar operand becomes
 * one long row. Kernels then loop:
 *
 *     tc__bcast_iter it;
 *     tc__bcast_iter_init(&b, &it);
 *     for (int64_t r = 0; r < b.rows; r++, tc__bcast_iter_next(&b, &it))
 *         for (int64_t j = 0; j < b.inner; j++)
 *             out[r * b.inner + j] = f(a[it.off[0] + j * b.step[0]], ...);
 */
#ifndef TC_BACKENDS_REF_BROADCAST_H
#define TC_BACKENDS_REF_BROADCAST_H

#include <stdint.h>

#include "core/error.h"
#include "core/tensor.h"

#define TC__BCAST_MAX_IN 3

typedef struct tc__bcast {
    int n_in;
    int32_t rank;                                   /* collapsed rank, >= 1 */
    int64_t dims[TC_MAX_RANK];                      /* collapsed output dims */
    int64_t strides[TC__BCAST_MAX_IN][TC_MAX_RANK]; /* element strides per input, 0 where broadcast */
    int64_t step[TC__BCAST_MAX_IN];                 /* stride of the innermost dim (0 or 1) */
    int64_t inner;                                  /* length of one row: dims[rank - 1] */
    int64_t rows;                                   /* number of rows (0 for an empty output) */
} tc__bcast;

typedef struct tc__bcast_iter {
    int64_t idx[TC_MAX_RANK];
    int64_t off[TC__BCAST_MAX_IN]; /* offset of the current row's first element in each input */
} tc__bcast_iter;

/*
 * Prepares iteration over an output of shape out_dims[0..out_rank) with n_in
 * (1..TC__BCAST_MAX_IN) inputs of shapes in_rank[k]/in_dims[k]. Fails with
 * TC_STATUS_INVALID_ARGUMENT naming the input when a shape does not broadcast
 * to the output shape.
 */
tc_status tc__bcast_init(tc__bcast *b, int32_t out_rank, const int64_t *out_dims, int n_in,
                         const int32_t *in_rank, const int64_t *const *in_dims, tc__err *err);

/* The same for tensors: the output shape is out's, the input shapes those of in[0..n_in). */
tc_status tc__bcast_init_tensors(tc__bcast *b, const tc__tensor *out, int n_in, const tc__tensor *const *in,
                                 tc__err *err);

void tc__bcast_iter_init(const tc__bcast *b, tc__bcast_iter *it);
/* Advances to the next row (row-major order). */
void tc__bcast_iter_next(const tc__bcast *b, tc__bcast_iter *it);

#endif
