/*
 * movement_tactic.c - data movement tactics for any dtype of 1, 2, 4 or 8-byte elements, no epilogue:
 * cuda_identity, cuda_flatten, cuda_reshape, cuda_squeeze, cuda_unsqueeze (a device-to-device copy on the stream:
 * they are steps only where the engine could not make them views), cuda_transpose (any perm up to rank 8) and
 * cuda_concat (any axis, 1 to 64 inputs). Kernels in movement.cu.
 */
#include <string.h>

#include "backends/cuda/movement.h"
#include "backends/tactic.h"
#include "core/layout.h"

#define TC_CUDA_CONCAT_MAX_IN 64

static bool es_ok(tc_dtype dt) {
    const size_t es = tc_dtype_size(dt);
    return es == 1 || es == 2 || es == 4 || es == 8;
}

/* No epilogue, plain layout: what every movement tactic asks of a step. */
static bool plain_step(const tc__step_desc *d) {
    if (d->attrs != NULL && tc__layout_any_blocked(d->attrs)) return tc__refuse(d, "blocked (NCHW16c) tensors");
    if ((d->epi != NULL && !tc__epilogue_is_none(d->epi)) || d->bias != NULL || d->residual != NULL)
        return tc__refuse(d, "data movement fuses no epilogue");
    return true;
}

static tc_status no_epilogue(const tc__kernel_ctx *ctx) {
    if ((ctx->epi != NULL && !tc__epilogue_is_none(ctx->epi)) || ctx->bias != NULL || ctx->residual != NULL)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "%s: data movement fuses no epilogue", ctx->op_type);
    return TC_STATUS_OK;
}

/* ---- Identity, Flatten, Reshape, Squeeze, Unsqueeze: the bytes of input 0 ------------------------------------- */

static bool copy_ok(const tc__tensor *x, const tc__tensor *y) {
    return x != NULL && y != NULL && x->dtype == y->dtype && es_ok(x->dtype) && tc__tensor_numel(x) >= 0 &&
           tc__tensor_numel(x) == tc__tensor_numel(y);
}

static bool copy_supports(const tc__step_desc *d) {
    if (d->n_in < 1 || d->n_out != 1 || !copy_ok(d->in[0], d->out[0]))
        return tc__refuse(d, "output is not input 0's elements (dtype of 1, 2, 4 or 8 bytes)");
    return plain_step(d);
}

static tc_status copy_run(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 1 || ctx->n_out < 1 || !copy_ok(ctx->in[0], ctx->out[0]))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: output is not input 0's elements", ctx->op_type);
    tc_status st = no_epilogue(ctx);
    if (st != TC_STATUS_OK) return st;
    const tc__tensor *x = ctx->in[0];
    tc__tensor *y = ctx->out[0];
    const size_t bytes = (size_t)tc__tensor_numel(x) * tc_dtype_size(x->dtype);
    if (bytes == 0 || x->data == y->data) return TC_STATUS_OK;
    if (bytes > x->nbytes || bytes > y->nbytes)
        return tc__fail(ctx->err, TC_STATUS_INTERNAL, "%s: buffers smaller than the tensors", ctx->op_type);
    return tc__cuda_fail(cudaMemcpyAsync(y->data, x->data, bytes, cudaMemcpyDeviceToDevice, tc__cuda_stream(ctx)),
                         ctx->err, "device copy");
}

/* ---- Transpose ---------------------------------------------------------------------------------------------- */

/* The collapsed gather of a Transpose of x into y; false when perm or shapes do not fit. */
static bool transpose_of(const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *y, tc__cuda_gather *g) {
    memset(g, 0, sizeof *g);
    if (x == NULL || y == NULL || x->dtype != y->dtype || !es_ok(x->dtype)) return false;
    const int32_t r = x->rank;
    if (r < 0 || r > TC__CUDA_MAX_RANK || y->rank != r) return false;
    const int64_t *perm = NULL;
    const size_t np = tc__attr_ints(attrs, "perm", &perm);
    const bool has_perm = tc__attr_has(attrs, "perm");
    if (has_perm && np != (size_t)r) return false;
    int64_t xs[TC__CUDA_MAX_RANK], s = 1;
    for (int32_t i = r - 1; i >= 0; i--) {
        if (x->dims[i] < 0) return false;
        xs[i] = s;
        s *= x->dims[i];
    }
    bool used[TC__CUDA_MAX_RANK] = {false};
    int32_t k = 0;
    for (int32_t i = 0; i < r; i++) {
        const int64_t p = has_perm ? perm[i] : r - 1 - i;
        if (p < 0 || p >= r || used[p] || y->dims[i] != x->dims[p]) return false;
        used[p] = true;
        const int64_t dim = x->dims[p], src = xs[p];
        if (dim == 1) continue;
        if (k > 0 && g->src[k - 1] == src * dim) { /* contiguous in x across the two: one dim */
            g->dims[k - 1] *= dim;
            g->src[k - 1] = src;
            continue;
        }
        g->dims[k] = dim;
        g->src[k] = src;
        k++;
    }
    if (tc__tensor_numel(x) == 0) { /* nothing to move */
        g->rank = 1;
        g->dims[0] = 0;
        g->src[0] = 1;
        return true;
    }
    g->rank = k;
    return true;
}

static bool transpose_supports(const tc__step_desc *d) {
    tc__cuda_gather g;
    if (d->n_in != 1 || d->n_out != 1 || !transpose_of(d->attrs, d->in[0], d->out[0], &g))
        return tc__refuse(d, "not a Transpose of rank <= 8 with elements of 1, 2, 4 or 8 bytes");
    return plain_step(d);
}

static tc_status transpose_run(const tc__kernel_ctx *ctx) {
    tc__cuda_gather g;
    if (ctx->n_in < 1 || ctx->n_out < 1 || !transpose_of(ctx->attrs, ctx->in[0], ctx->out[0], &g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Transpose: perm, shapes or dtype not computed here");
    tc_status st = no_epilogue(ctx);
    if (st != TC_STATUS_OK) return st;
    return tc__cuda_fail(tc__cuda_gather_copy(ctx->in[0]->data, ctx->out[0]->data, tc_dtype_size(ctx->in[0]->dtype),
                                              &g, tc__cuda_stream(ctx)),
                         ctx->err, "cuda_transpose launch");
}

/* ---- Concat ------------------------------------------------------------------------------------------------- */

/* The axis of a Concat of in[0..n) into y (-1 when the shapes or types do not fit). */
static int32_t concat_axis(const tc__attrs *attrs, int n, const tc__tensor *const *in, const tc__tensor *y) {
    if (n < 1 || n > TC_CUDA_CONCAT_MAX_IN || in[0] == NULL || y == NULL) return -1;
    const int32_t r = in[0]->rank;
    if (r < 1 || r > TC_MAX_RANK || y->rank != r || y->dtype != in[0]->dtype || !es_ok(y->dtype)) return -1;
    int64_t ax = tc__attr_int(attrs, "axis", 0);
    if (ax < -(int64_t)r || ax >= r) return -1;
    if (ax < 0) ax += r;
    int64_t sum = 0;
    for (int i = 0; i < n; i++) {
        const tc__tensor *t = in[i];
        if (t == NULL || t->dtype != y->dtype || t->rank != r) return -1;
        for (int32_t d = 0; d < r; d++)
            if (t->dims[d] < 0 || (d != ax && t->dims[d] != y->dims[d])) return -1;
        sum += t->dims[ax];
    }
    return sum == y->dims[ax] ? (int32_t)ax : -1;
}

static bool concat_supports(const tc__step_desc *d) {
    if (d->n_out != 1 || concat_axis(d->attrs, d->n_in, d->in, d->out[0]) < 0)
        return tc__refuse(d, "not a Concat of 1 to 64 inputs these kernels take");
    return plain_step(d);
}

static tc_status concat_run(const tc__kernel_ctx *ctx) {
    const int32_t ax = ctx->n_out >= 1 ? concat_axis(ctx->attrs, ctx->n_in, ctx->in, ctx->out[0]) : -1;
    if (ax < 0) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Concat: inputs and output do not fit");
    tc_status st = no_epilogue(ctx);
    if (st != TC_STATUS_OK) return st;
    const tc__tensor *y = ctx->out[0];
    const size_t es = tc_dtype_size(y->dtype);
    const int64_t outer = tc__numel(ax, y->dims), inner = tc__numel(y->rank - ax - 1, y->dims + ax + 1);
    const int64_t row = y->dims[ax] * inner;
    int64_t off = 0;
    for (int i = 0; i < ctx->n_in; i++) {
        const int64_t len = ctx->in[i]->dims[ax] * inner;
        cudaError_t e = tc__cuda_concat_part(ctx->in[i]->data, y->data, es, outer, len, row, off, tc__cuda_stream(ctx));
        if (e != cudaSuccess) return tc__cuda_fail(e, ctx->err, "cuda_concat launch");
        off += len;
    }
    return TC_STATUS_OK;
}

#define TC_CUDA_MOVE_TACTIC(lower, Op, sup, fn)   \
    const tc__tactic tc__tactic_cuda_##lower = { \
        .name = "cuda_" #lower,                  \
        .op_type = #Op,                          \
        .backend = TC__BACKEND_CUDA,             \
        .caps = 0,                               \
        .flags = 0,                              \
        .supports = sup,                         \
        .run = fn,                               \
    };

TC_CUDA_MOVE_TACTIC(identity, Identity, copy_supports, copy_run)
TC_CUDA_MOVE_TACTIC(flatten, Flatten, copy_supports, copy_run)
TC_CUDA_MOVE_TACTIC(reshape, Reshape, copy_supports, copy_run)
TC_CUDA_MOVE_TACTIC(squeeze, Squeeze, copy_supports, copy_run)
TC_CUDA_MOVE_TACTIC(unsqueeze, Unsqueeze, copy_supports, copy_run)
TC_CUDA_MOVE_TACTIC(transpose, Transpose, transpose_supports, transpose_run)
TC_CUDA_MOVE_TACTIC(concat, Concat, concat_supports, concat_run)
