/*
 * layernorm_f32.c - the LayerNormalization operator shared by the AVX-512 and AVX2 tactics:
 * which steps it computes (rows of prod(dims[axis:]) elements, parameters of exactly that
 * shape up to leading 1s, no statistics outputs) and the driver that splits rows over the
 * thread pool.
 */
#include "backends/cpu/layernorm_f32.h"

#include "core/thread_pool.h"

/* Elements per task (whole rows, at least one). */
#define LAYERNORM_TILE 16384

/* True when p is float32 with the dims of x from axis on (aligned to the right; missing leading dims 1). */
static bool param_ok(const tc__tensor *p, const tc__tensor *x, int64_t axis) {
    const int32_t tr = x->rank - (int32_t)axis;
    if (p->dtype != TC_DTYPE_FLOAT32 || p->rank > tr) return false;
    for (int32_t i = 0; i < p->rank; i++)
        if (p->dims[i] != x->dims[x->rank - p->rank + i]) return false;
    return tc__tensor_numel(p) == tc__numel(tr, x->dims + axis);
}

/* Rows and row length; false when the step is not one this operator computes. */
static bool layernorm_rows(const tc__attrs *attrs, int n_in, const tc__tensor *const *in, int n_out,
                           const tc__tensor *const *out, int64_t *rows, int64_t *n) {
    if (n_in < 2 || n_in > 3 || in[0] == NULL || in[1] == NULL || n_out < 1 || out[0] == NULL) return false;
    for (int i = 1; i < n_out; i++)
        if (out[i] != NULL) return false; /* Mean / InvStdDev */
    const tc__tensor *x = in[0], *y = out[0];
    if (x->dtype != TC_DTYPE_FLOAT32 || y->dtype != TC_DTYPE_FLOAT32 || y->rank != x->rank || x->rank < 1) return false;
    for (int32_t i = 0; i < x->rank; i++)
        if (y->dims[i] != x->dims[i]) return false;
    int64_t axis = tc__attr_int(attrs, "axis", -1);
    if (axis < -(int64_t)x->rank || axis >= (int64_t)x->rank) return false;
    if (axis < 0) axis += x->rank;
    if (!param_ok(in[1], x, axis) || (n_in > 2 && in[2] != NULL && !param_ok(in[2], x, axis))) return false;
    *rows = tc__numel((int32_t)axis, x->dims);
    *n = tc__numel(x->rank - (int32_t)axis, x->dims + axis);
    return *rows >= 0 && *n >= 0;
}

bool tc__layernorm_f32_supports(const tc__step_desc *d) {
    int64_t rows, n;
    return layernorm_rows(d->attrs, d->n_in, d->in, d->n_out, d->out, &rows, &n);
}

typedef struct layernorm_job {
    tc__layernorm_f32_ukernel uk;
    const float *x, *scale, *bias;
    float *y;
    int64_t n;
    double eps;
} layernorm_job;

static void layernorm_task(void *arg, size_t r0, size_t count) {
    const layernorm_job *j = arg;
    j->uk(j->x + (int64_t)r0 * j->n, j->y + (int64_t)r0 * j->n, j->scale, j->bias, j->n, (int64_t)count, j->eps);
}

tc_status tc__layernorm_f32_run(const tc__kernel_ctx *ctx, tc__layernorm_f32_ukernel uk) {
    int64_t rows, n;
    if (!layernorm_rows(ctx->attrs, ctx->n_in, ctx->in, ctx->n_out, (const tc__tensor *const *)ctx->out, &rows, &n))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "LayerNormalization this kernel does not compute");
    if (rows == 0 || n == 0) return TC_STATUS_OK;
    const tc__tensor *b = ctx->n_in > 2 ? ctx->in[2] : NULL;
    layernorm_job j = {uk, ctx->in[0]->data, ctx->in[1]->data, b ? b->data : NULL, ctx->out[0]->data, n,
                       (double)tc__attr_float(ctx->attrs, "epsilon", 1e-5f)};
    tc__pool_t pool = ctx->exec;
    size_t tile = (size_t)(LAYERNORM_TILE / n);
    if (tile < 1) tile = 1;
    if (pool == NULL || tile >= (size_t)rows || tc__pool_get_threads_count(pool) <= 1) {
        uk(j.x, j.y, j.scale, j.bias, n, rows, j.eps);
        return TC_STATUS_OK;
    }
    tc__pool_parallelize_1d_tile_1d(pool, layernorm_task, &j, (size_t)rows, tile, 0);
    return TC_STATUS_OK;
}
