/*
 * pool_f32.c - the 2-D MaxPool / AveragePool operator shared by the AVX-512 and AVX2
 * tactics: which steps it computes, their geometry (resolved by the reference window code),
 * the driver that splits planes and rows over the thread pool, and the scalar NaN fix-up of
 * max windows.
 */
#include "backends/cpu/pool_f32.h"

#include <math.h>
#include "core/thread_pool.h"
#include <string.h>

#include "backends/window.h"

/* Bound on every spatial size, offset and window, so that int32 lane indices cannot overflow. */
#define POOL_MAX_EXTENT ((int64_t)1 << 28)

/* Fills g for a pooling node with input x and output y; false when this operator cannot compute it. */
static bool pool_geom(const char *op_type, const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *y,
                      tc__pool_f32_geom *g, tc__err *err) {
    if (x->dtype != TC_DTYPE_FLOAT32 || y->dtype != TC_DTYPE_FLOAT32 || x->rank != 4 || y->rank != 4) return false;
    if (y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1]) return false;
    bool is_max = strcmp(op_type, "MaxPool") == 0;
    int64_t cip = tc__attr_int(attrs, "count_include_pad", 0);
    int64_t so = tc__attr_int(attrs, "storage_order", 0);
    if (is_max ? (so != 0 && so != 1) : (cip != 0 && cip != 1)) return false;
    tc__kernel_ctx kc = {.node_name = "", .op_type = op_type, .attrs = attrs, .err = err};
    tc__window rw;
    if (tc__window_resolve(&kc, x, y, NULL, &rw) != TC_STATUS_OK) return false;
    for (int d = 0; d < 2; d++) {
        if (rw.dilation[d] != 1) return false;
        if (rw.in[d] > POOL_MAX_EXTENT || rw.out[d] > POOL_MAX_EXTENT || rw.kernel[d] > POOL_MAX_EXTENT ||
            rw.stride[d] > POOL_MAX_EXTENT || rw.pad_begin[d] > POOL_MAX_EXTENT || rw.pad_end[d] > POOL_MAX_EXTENT)
            return false;
        /* the last window's start and end must stay within int32 too */
        if ((rw.out[d] > 0 ? rw.out[d] - 1 : 0) * rw.stride[d] + rw.kernel[d] + 16 * rw.stride[d] > ((int64_t)1 << 30))
            return false;
    }
    *g = (tc__pool_f32_geom){.H = rw.in[0], .W = rw.in[1], .OH = rw.out[0], .OW = rw.out[1], .kh = rw.kernel[0],
                             .kw = rw.kernel[1], .sh = rw.stride[0], .sw = rw.stride[1], .pt = rw.pad_begin[0],
                             .pl = rw.pad_begin[1], .pb = rw.pad_end[0], .pr = rw.pad_end[1],
                             .count_include_pad = cip == 1};
    return true;
}

static bool pool_supports(const tc__step_desc *d, const char *op_type) {
    if (strcmp(d->op_type, op_type) != 0) return false;
    if (d->n_in != 1 || d->in[0] == NULL || d->n_out < 1 || d->out[0] == NULL) return false;
    for (int i = 1; i < d->n_out; i++)
        if (d->out[i] != NULL) return false; /* MaxPool's Indices */
    tc__err err = {0};
    tc__pool_f32_geom g;
    return pool_geom(op_type, d->attrs, d->in[0], d->out[0], &g, &err);
}

bool tc__maxpool_f32_supports(const tc__step_desc *d) { return pool_supports(d, "MaxPool"); }
bool tc__avgpool_f32_supports(const tc__step_desc *d) { return pool_supports(d, "AveragePool"); }

float tc__maxpool_f32_neg_inf_fixup(const tc__pool_f32_geom *g, const float *x, int64_t oy, int64_t ox) {
    int64_t iy0 = oy * g->sh - g->pt, ix0 = ox * g->sw - g->pl, ky0, ky1, kx0, kx1;
    tc__window_taps(iy0, 1, g->kh, 0, g->H, &ky0, &ky1);
    tc__window_taps(ix0, 1, g->kw, 0, g->W, &kx0, &kx1);
    if (ky0 >= ky1 || kx0 >= kx1) return -INFINITY;
    for (int64_t ky = ky0; ky < ky1; ky++)
        for (int64_t kx = kx0; kx < kx1; kx++)
            if (!isnan(x[(iy0 + ky) * g->W + ix0 + kx])) return -INFINITY;
    return NAN;
}

typedef struct pool_job {
    const tc__pool_f32_geom *g;
    tc__pool_f32_ukernel uk;
    const float *x;
    float *y;
} pool_job;

static void pool_task(void *arg, size_t plane, size_t oy0, size_t rows) {
    const pool_job *j = arg;
    const tc__pool_f32_geom *g = j->g;
    j->uk(g, j->x + (int64_t)plane * g->H * g->W, j->y + (int64_t)plane * g->OH * g->OW, (int64_t)oy0,
          (int64_t)(oy0 + rows));
}

void tc__pool_parallelize_planes(void *pool, void (*task)(void *, size_t, size_t, size_t), void *job, size_t planes,
                                 size_t rows) {
    size_t threads = pool ? tc__pool_get_threads_count(pool) : 1;
    if (threads <= 1) {
        for (size_t p = 0; p < planes; p++) task(job, p, 0, rows);
        return;
    }
    size_t tile = rows;
    if (planes < 4 * threads) { /* few planes: split their rows too, about four tasks per thread */
        size_t parts = (4 * threads + planes - 1) / planes;
        tile = (rows + parts - 1) / parts;
    }
    tc__pool_parallelize_2d_tile_1d(pool, task, job, planes, rows, tile, 0);
}

tc_status tc__pool_f32_run(const tc__kernel_ctx *ctx, tc__pool_f32_ukernel uk) {
    if (ctx->n_in < 1 || ctx->in[0] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects input X and output Y");
    if (ctx->n_out > 1 && ctx->out[1] != NULL)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "this pooling kernel does not produce Indices");
    const tc__tensor *x = ctx->in[0];
    tc__tensor *y = ctx->out[0];
    tc__pool_f32_geom g;
    if (!pool_geom(ctx->op_type, ctx->attrs, x, y, &g, ctx->err))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "%s is not a pooling this kernel computes", ctx->op_type);
    const int64_t planes = y->dims[0] * y->dims[1];
    if (planes == 0 || g.OH == 0 || g.OW == 0) return TC_STATUS_OK;
    pool_job j = {&g, uk, x->data, y->data};
    tc__pool_parallelize_planes(ctx->exec, pool_task, &j, (size_t)planes, (size_t)g.OH);
    return TC_STATUS_OK;
}
