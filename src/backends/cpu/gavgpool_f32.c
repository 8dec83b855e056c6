/* gavgpool_f32.c - the GlobalAveragePool operator shared by its AVX-512 and AVX2 tactics:
 * which steps it computes and the driver that splits planes over the thread pool. */
#include "backends/cpu/gavgpool_f32.h"

#include "core/thread_pool.h"

/* x [N, C, spatial...] and y [N, C, 1, ...], both float32; sets the plane count and size. */
static bool gap_shapes(const tc__tensor *x, const tc__tensor *y, int64_t *planes, int64_t *n) {
    if (x->dtype != TC_DTYPE_FLOAT32 || y->dtype != TC_DTYPE_FLOAT32 || x->rank < 2 || y->rank != x->rank) return false;
    if (y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1]) return false;
    for (int32_t d = 2; d < y->rank; d++)
        if (y->dims[d] != 1) return false;
    *planes = x->dims[0] * x->dims[1];
    *n = tc__numel(x->rank - 2, x->dims + 2);
    return *n >= 0;
}

bool tc__gavgpool_f32_supports(const tc__step_desc *d) {
    if (d->n_in != 1 || d->in[0] == NULL || d->n_out != 1 || d->out[0] == NULL) return false;
    int64_t planes, n;
    return gap_shapes(d->in[0], d->out[0], &planes, &n);
}

typedef struct gap_job {
    tc__gavgpool_f32_ukernel uk;
    const float *x;
    float *y;
    int64_t n;
} gap_job;

static void gap_task(void *arg, size_t p0, size_t count) {
    const gap_job *j = arg;
    j->uk(j->x + (int64_t)p0 * j->n, j->y + p0, j->n, (int64_t)count);
}

tc_status tc__gavgpool_f32_run(const tc__kernel_ctx *ctx, tc__gavgpool_f32_ukernel uk) {
    if (ctx->n_in < 1 || ctx->in[0] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects input X and output Y");
    int64_t planes, n;
    if (!gap_shapes(ctx->in[0], ctx->out[0], &planes, &n))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "GlobalAveragePool shapes this kernel does not compute");
    if (planes == 0) return TC_STATUS_OK;
    gap_job j = {uk, ctx->in[0]->data, ctx->out[0]->data, n};
    tc__pool_t pool = ctx->exec;
    size_t threads = pool ? tc__pool_get_threads_count(pool) : 1;
    /* about 16K elements per task, at least one plane */
    size_t tile = n > 0 ? (size_t)(16384 / n) : (size_t)planes;
    if (tile < 1) tile = 1;
    if (threads <= 1 || tile >= (size_t)planes) {
        uk(j.x, j.y, n, planes);
        return TC_STATUS_OK;
    }
    tc__pool_parallelize_1d_tile_1d(pool, gap_task, &j, (size_t)planes, tile, 0);
    return TC_STATUS_OK;
}
