/*
 * einsum.c - reference Einsum: a plain loop over every combination of the
 * output's subscripts and, inside, of the summed ones; each term is the product
 * of one element per operand (repeated subscripts in an operand walk its
 * diagonal; an ellipsis dim of size 1 broadcasts). Floats accumulate in double,
 * integers in wrapping 64-bit arithmetic. The work (the product of all
 * subscript sizes) is overflow-checked and bounded.
 */
#include <string.h>

#include "backends/ref/ref.h"
#include "core/einsum_eq.h"

#define EINSUM_MAX_WORK ((int64_t)1 << 40) /* multiply-adds the reference kernel accepts */

/* Element i of t as a double (float32 and float64 read directly). */
static inline double get_f(const tc__tensor *t, int64_t i) {
    if (t->dtype == TC_DTYPE_FLOAT32) return ((const float *)t->data)[i];
    if (t->dtype == TC_DTYPE_FLOAT64) return ((const double *)t->data)[i];
    return tc__tensor_get_f64(t, i);
}

/* The loop: labels in order (the output's, then the summed ones), their sizes and each operand's stride per label. */
typedef struct einsum_loop {
    int n_labels, n_out;
    int64_t size[TC__EINSUM_LABELS];
    int64_t stride[TC__EINSUM_MAX_OPS][TC__EINSUM_LABELS];
} einsum_loop;

/* Checks the tensors against the equation and fills the loop; *work = the product of all sizes. */
static tc_status einsum_setup(const tc__kernel_ctx *ctx, einsum_loop *lp, int64_t *work) {
    if (ctx->n_in < 1 || ctx->n_in > TC__EINSUM_MAX_OPS || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects 1 to %d inputs and an output", TC__EINSUM_MAX_OPS);
    const tc__tensor *y = ctx->out[0];
    for (int k = 0; k < ctx->n_in; k++) {
        if (ctx->in[k] == NULL) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input %d is missing", k);
        const tc_dtype t = ctx->in[k]->dtype;
        if (!tc__dtype_is_float(t) && t != TC_DTYPE_INT32 && t != TC_DTYPE_INT64) return tc__ref_unsupported_dtype(ctx, k, t);
        if (t != y->dtype)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input %d and output Y must have one data type", k);
    }
    const tc__attr *a = tc__attr_find(ctx->attrs, "equation");
    if (a == NULL || a->kind != TC__ATTR_STRING)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute equation (a string) is required");
    tc__einsum_eq eq;
    tc__einsum_bound b;
    int32_t rank[TC__EINSUM_MAX_OPS];
    const int64_t *dims[TC__EINSUM_MAX_OPS];
    for (int k = 0; k < ctx->n_in; k++) {
        rank[k] = ctx->in[k]->rank;
        dims[k] = ctx->in[k]->dims;
    }
    tc_status st = tc__einsum_parse(a->s, ctx->n_in, &eq, ctx->err);
    if (st == TC_STATUS_OK) st = tc__einsum_bind(&eq, rank, &b, ctx->err);
    int64_t size[TC__EINSUM_LABELS];
    if (st == TC_STATUS_OK) st = tc__einsum_sizes(&b, dims, size, ctx->err);
    if (st != TC_STATUS_OK) return st;
    if (y->rank != b.out_rank)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output Y has rank %d, expected %d", (int)y->rank, b.out_rank);
    int8_t order[TC__EINSUM_LABELS];
    bool in_out[TC__EINSUM_LABELS] = {false};
    int n = 0;
    for (int i = 0; i < b.out_rank; i++) {
        const int l = b.out_axis[i];
        const int64_t want = size[l] < 0 ? 1 : size[l]; /* (an output-only ellipsis dim has size 1) */
        if (y->dims[i] != want)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output Y's dim %d is %lld, expected %lld", i,
                            (long long)y->dims[i], (long long)want);
        order[n++] = (int8_t)l;
        in_out[l] = true;
    }
    lp->n_out = n;
    for (int l = 0; l < TC__EINSUM_LABELS; l++)
        if (b.used[l] && !in_out[l]) order[n++] = (int8_t)l;
    lp->n_labels = n;
    *work = 1;
    memset(lp->stride, 0, sizeof lp->stride);
    for (int j = 0; j < n; j++) {
        const int l = order[j];
        lp->size[j] = size[l] < 0 ? 1 : size[l];
        if (*work > 0 && tc__mul_overflow_i64(*work, lp->size[j], work))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "the product of all subscript sizes overflows");
        for (int k = 0; k < ctx->n_in; k++) {
            int64_t s[TC_MAX_RANK];
            tc__ref_row_strides(rank[k], dims[k], s);
            for (int ax = 0; ax < rank[k]; ax++)
                if (b.axis[k][ax] == l && dims[k][ax] != 1) lp->stride[k][j] += s[ax]; /* size 1: broadcast */
        }
    }
    return TC_STATUS_OK;
}

/* Advances idx over labels [from, to) and every operand's offset; false after the last combination. */
static bool step(const einsum_loop *lp, int n_ops, int from, int to, int64_t *idx, int64_t *off) {
    for (int j = to - 1; j >= from; j--) {
        for (int k = 0; k < n_ops; k++) off[k] += lp->stride[k][j];
        if (++idx[j] < lp->size[j]) return true;
        for (int k = 0; k < n_ops; k++) off[k] -= lp->size[j] * lp->stride[k][j];
        idx[j] = 0;
    }
    return false;
}

tc_status tc__ref_Einsum(const tc__kernel_ctx *ctx) {
    einsum_loop lp;
    int64_t work = 0;
    tc_status st = einsum_setup(ctx, &lp, &work);
    if (st != TC_STATUS_OK) return st;
    tc__tensor *y = ctx->out[0];
    const int64_t yn = tc__tensor_numel(y);
    const int n_ops = ctx->n_in;
    const bool is_float = tc__dtype_is_float(y->dtype);
    if (work > EINSUM_MAX_WORK)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED,
                        "the equation needs %lld multiply-adds, more than the reference kernel's bound of 2^40",
                        (long long)work);
    int64_t idx[TC__EINSUM_LABELS] = {0}, off[TC__EINSUM_MAX_OPS] = {0};
    bool empty_sum = false;
    for (int j = lp.n_out; j < lp.n_labels; j++) empty_sum = empty_sum || lp.size[j] == 0;
    for (int64_t o = 0; o < yn; o++) {
        double acc = 0.0;
        uint64_t iacc = 0;
        if (!empty_sum) do {
                if (is_float) {
                    double p = 1.0;
                    for (int k = 0; k < n_ops; k++) p *= get_f(ctx->in[k], off[k]);
                    acc += p;
                } else {
                    uint64_t p = 1;
                    for (int k = 0; k < n_ops; k++) p *= (uint64_t)tc__tensor_get_i64(ctx->in[k], off[k]);
                    iacc += p;
                }
            } while (step(&lp, n_ops, lp.n_out, lp.n_labels, idx, off));
        if (y->dtype == TC_DTYPE_FLOAT32) ((float *)y->data)[o] = (float)acc;
        else if (y->dtype == TC_DTYPE_FLOAT64) ((double *)y->data)[o] = acc;
        else if (is_float) tc__tensor_set_f64(y, o, acc);
        else tc__tensor_set_i64(y, o, (int64_t)iacc);
        step(&lp, n_ops, 0, lp.n_out, idx, off); /* the summed labels are back at 0 */
    }
    return TC_STATUS_OK;
}
