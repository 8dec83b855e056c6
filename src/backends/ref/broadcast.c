/* broadcast.c - NumPy broadcasting iteration for reference kernels (see broadcast.h). */
#include "backends/ref/broadcast.h"

#include <string.h>

tc_status tc__bcast_init(tc__bcast *b, int32_t out_rank, const int64_t *out_dims, int n_in,
                         const int32_t *in_rank, const int64_t *const *in_dims, tc__err *err) {
    memset(b, 0, sizeof *b);
    if (n_in < 1 || n_in > TC__BCAST_MAX_IN)
        return tc__fail(err, TC_STATUS_INTERNAL, "broadcast: %d inputs, expected 1 to %d", n_in, TC__BCAST_MAX_IN);
    if (out_rank < 0 || out_rank > TC_MAX_RANK)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "broadcast: output rank %d is not in [0, %d]",
                        (int)out_rank, TC_MAX_RANK);
    b->n_in = n_in;

    /* Full-rank strides of each input aligned to the output. */
    int64_t full[TC__BCAST_MAX_IN][TC_MAX_RANK];
    for (int k = 0; k < n_in; k++) {
        int32_t r = in_rank[k];
        if (r < 0 || r > out_rank) {
            char bi[160], bo[160];
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "input %d shape %s does not broadcast to output shape %s",
                            k, r < 0 ? "?" : tc__shape_str(r, in_dims[k], bi, sizeof bi),
                            tc__shape_str(out_rank, out_dims, bo, sizeof bo));
        }
        int64_t stride = 1;
        for (int32_t i = out_rank - 1; i >= 0; i--) {
            int32_t j = i - (out_rank - r);
            int64_t d = j >= 0 ? in_dims[k][j] : 1;
            if (d != out_dims[i] && d != 1) {
                char bi[160], bo[160];
                return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                                "input %d shape %s does not broadcast to output shape %s", k,
                                tc__shape_str(r, in_dims[k], bi, sizeof bi),
                                tc__shape_str(out_rank, out_dims, bo, sizeof bo));
            }
            full[k][i] = (d == 1) ? 0 : stride;
            stride *= d; /* bounded: the input is an allocated tensor shape */
        }
    }

    /* Keep dims other than 1, merging each with the previous kept dim when every input allows it. */
    int32_t rank = 0;
    b->rows = 1;
    for (int32_t i = 0; i < out_rank; i++) {
        int64_t d = out_dims[i];
        if (d == 1) continue;
        if (d == 0) b->rows = 0;
        bool merge = rank > 0;
        for (int k = 0; k < n_in && merge; k++)
            if (b->strides[k][rank - 1] != full[k][i] * d) merge = false;
        if (merge) {
            b->dims[rank - 1] *= d;
            for (int k = 0; k < n_in; k++) b->strides[k][rank - 1] = full[k][i];
        } else {
            b->dims[rank] = d;
            for (int k = 0; k < n_in; k++) b->strides[k][rank] = full[k][i];
            rank++;
        }
    }
    if (rank == 0) {
        b->dims[0] = 1;
        for (int k = 0; k < n_in; k++) b->strides[k][0] = 0;
        rank = 1;
    }
    b->rank = rank;
    b->inner = b->dims[rank - 1];
    for (int k = 0; k < n_in; k++) b->step[k] = b->strides[k][rank - 1];
    if (b->rows != 0)
        for (int32_t i = 0; i < rank - 1; i++) b->rows *= b->dims[i];
    return TC_STATUS_OK;
}

tc_status tc__bcast_init_tensors(tc__bcast *b, const tc__tensor *out, int n_in, const tc__tensor *const *in,
                                 tc__err *err) {
    int32_t ranks[TC__BCAST_MAX_IN];
    const int64_t *dims[TC__BCAST_MAX_IN];
    if (n_in < 1 || n_in > TC__BCAST_MAX_IN)
        return tc__fail(err, TC_STATUS_INTERNAL, "broadcast: %d inputs, expected 1 to %d", n_in, TC__BCAST_MAX_IN);
    for (int k = 0; k < n_in; k++) {
        ranks[k] = in[k]->rank;
        dims[k] = in[k]->dims;
    }
    return tc__bcast_init(b, out->rank, out->dims, n_in, ranks, dims, err);
}

void tc__bcast_iter_init(const tc__bcast *b, tc__bcast_iter *it) {
    (void)b;
    memset(it, 0, sizeof *it);
}

void tc__bcast_iter_next(const tc__bcast *b, tc__bcast_iter *it) {
    for (int32_t i = b->rank - 2; i >= 0; i--) {
        it->idx[i]++;
        for (int k = 0; k < b->n_in; k++) it->off[k] += b->strides[k][i];
        if (it->idx[i] < b->dims[i]) return;
        for (int k = 0; k < b->n_in; k++) it->off[k] -= b->strides[k][i] * b->dims[i];
        it->idx[i] = 0;
    }
}
