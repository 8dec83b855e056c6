/*
 * softmax_f32.c - the Softmax / LogSoftmax operator shared by the AVX-512 and AVX2 tactics:
 * the axis rules of the reference kernel reduced to rows of contiguous elements (steps whose
 * axis is not innermost are rejected), and the driver that splits rows over the thread pool and
 * points each row at its row of a fused mask.
 */
#include "backends/cpu/softmax_f32.h"

#include "core/thread_pool.h"

/* Elements per task (whole rows, at least one). */
#define SOFTMAX_TILE 16384

/* Rows and row length of x for this opset and axis; false unless each row is contiguous. */
static bool softmax_rows(const tc__tensor *x, const tc__tensor *y, int64_t opset, const tc__attrs *attrs, int64_t *rows,
                         int64_t *n) {
    if (x->dtype != TC_DTYPE_FLOAT32 || y->dtype != TC_DTYPE_FLOAT32 || y->rank != x->rank) return false;
    for (int32_t i = 0; i < x->rank; i++)
        if (y->dims[i] != x->dims[i]) return false;
    const int32_t rank = x->rank, arank = rank == 0 ? 1 : rank;
    const bool legacy = opset < 13;
    int64_t axis = tc__attr_int(attrs, "axis", legacy ? 1 : -1);
    if (axis < -(int64_t)arank || axis > (int64_t)arank - (legacy ? 0 : 1)) return false;
    if (axis < 0) axis += arank;
    int64_t outer = 1, len = 1, inner = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (i < axis) outer *= x->dims[i];
        else if (i == axis || legacy) len *= x->dims[i];
        else inner *= x->dims[i];
    }
    if (inner != 1 || outer < 0 || len < 0) return false;
    *rows = outer;
    *n = len;
    return true;
}

/* With TC__ATTR_SOFTMAX_ADD: the float32 mask m broadcasts to x (NumPy rules) with its last dim n (not broadcast along
 * a row), x's rows being its last dim (rank >= 1); stride[i] is m's element stride along x's dim i (0 where m
 * broadcasts). */
static bool mask_rows(const tc__tensor *x, const tc__tensor *m, int64_t n, int64_t *stride) {
    if (m == NULL || m->dtype != TC_DTYPE_FLOAT32 || x->rank < 1 || m->rank < 1) return false;
    if (m->dims[m->rank - 1] != n || x->dims[x->rank - 1] != n) return false;
    return tc__bcast_strides(m, x->rank, x->dims, stride);
}

bool tc__softmax_f32_supports(const tc__step_desc *d) {
    const bool adds = tc__softmax_adds(d->attrs);
    if (d->n_in != (adds ? 2 : 1) || d->in[0] == NULL || d->n_out != 1 || d->out[0] == NULL) return false;
    int64_t rows, n, stride[TC_MAX_RANK];
    if (!softmax_rows(d->in[0], d->out[0], d->opset, d->attrs, &rows, &n)) return false;
    return !adds || mask_rows(d->in[0], d->in[1], n, stride);
}

typedef struct softmax_job {
    tc__softmax_f32_ukernel uk;
    const float *x;
    float *y;
    int64_t n;
    tc__softmax_opts o;
    /* the mask (o.mask NULL): its rows' strides along x's dims before the last (rank - 1 of them) */
    const float *mask;
    const int64_t *xdims;
    int32_t outer_rank;
    int64_t stride[TC_MAX_RANK];
} softmax_job;

static void softmax_task(void *arg, size_t r0, size_t count) {
    const softmax_job *j = arg;
    if (j->mask == NULL) {
        j->uk(j->x + (int64_t)r0 * j->n, j->y + (int64_t)r0 * j->n, j->n, (int64_t)count, &j->o);
        return;
    }
    /* runs of rows along x's dim rank - 2, whose mask rows are mask_stride apart (BERT: 128 rows of one head) */
    const int32_t last = j->outer_rank - 1;
    int64_t idx[TC_MAX_RANK], q = (int64_t)r0;
    for (int32_t i = last; i >= 0; i--) {
        idx[i] = q % j->xdims[i];
        q /= j->xdims[i];
    }
    tc__softmax_opts o = j->o;
    o.mask_stride = j->stride[last];
    for (int64_t r = (int64_t)r0, end = (int64_t)(r0 + count); r < end;) {
        int64_t off = 0;
        for (int32_t i = 0; i <= last; i++) off += idx[i] * j->stride[i];
        const int64_t run = end - r < j->xdims[last] - idx[last] ? end - r : j->xdims[last] - idx[last];
        o.mask = j->mask + off;
        j->uk(j->x + r * j->n, j->y + r * j->n, j->n, run, &o);
        r += run;
        idx[last] += run; /* the next multi-index: carry */
        for (int32_t i = last; i > 0 && idx[i] == j->xdims[i]; i--) idx[i] = 0, idx[i - 1]++;
    }
}

tc_status tc__softmax_f32_run(const tc__kernel_ctx *ctx, tc__softmax_f32_ukernel uk, bool log_out) {
    if (ctx->n_in < 1 || ctx->in[0] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects input X and output Y");
    int64_t rows, n;
    if (!softmax_rows(ctx->in[0], ctx->out[0], ctx->opset, ctx->attrs, &rows, &n))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "%s over an axis this kernel does not compute", ctx->op_type);
    if (rows == 0 || n == 0) return TC_STATUS_OK;
    const bool guard = tc__attr_has(ctx->attrs, TC__ATTR_NAN_TO);
    softmax_job j = {uk, ctx->in[0]->data, ctx->out[0]->data, n,
                     {log_out, guard, guard ? tc__attr_float(ctx->attrs, TC__ATTR_NAN_TO, 0.0f) : 0.0f, NULL, 0},
                     NULL, ctx->in[0]->dims, ctx->in[0]->rank - 1, {0}};
    if (tc__softmax_adds(ctx->attrs)) {
        if (ctx->n_in < 2 || ctx->in[1] == NULL || !mask_rows(ctx->in[0], ctx->in[1], n, j.stride))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: a fused mask this kernel does not take",
                            ctx->op_type);
        j.mask = ctx->in[1]->data;
        if (j.outer_rank == 0) { /* one row: no dims to walk */
            j.o.mask = j.mask;
            j.mask = NULL;
        }
    }
    tc__pool_t pool = ctx->exec;
    size_t tile = (size_t)(SOFTMAX_TILE / n);
    if (tile < 1) tile = 1;
    if (pool == NULL || tile >= (size_t)rows || tc__pool_get_threads_count(pool) <= 1) {
        softmax_task(&j, 0, (size_t)rows);
        return TC_STATUS_OK;
    }
    tc__pool_parallelize_1d_tile_1d(pool, softmax_task, &j, (size_t)rows, tile, 0);
    return TC_STATUS_OK;
}
