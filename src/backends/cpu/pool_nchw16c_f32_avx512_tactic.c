/*
 * pool_nchw16c_f32_avx512_tactic.c - tactics maxpool_/avgpool_/gavgpool_nchw16c_f32_avx512 and
 * their NCHW8c twins maxpool_/avgpool_/gavgpool_nchw8c_f32_avx2: 2-D MaxPool (without Indices),
 * AveragePool and GlobalAveragePool from a blocked input to a blocked output (tc.layout_in = 1,
 * tc.layout_out = 1, tc.layout_block the block). Which steps they take, their geometry (the
 * reference window resolution) and the drivers that split planes and rows over the thread pool;
 * the microkernels are in pool_nchw16c_f32_avx512.c and pool_nchw8c_f32_avx2.c. None fuses an
 * epilogue (as the NCHW pooling tactics). A channel count that is not a multiple of the block is
 * padded (core/layout.h): the drivers write zeros into the output's padding lanes.
 */
#include "core/thread_pool.h"
#include <string.h>

#include "backends/cpu/blocked_f32.h"
#include "backends/cpu/pool_f32.h"
#include "backends/cpu/vec_isa.h"

/* Fills g for a MaxPool / AveragePool node with input x and output y; false when these tactics cannot compute it. */
static bool pool_geom(const char *op_type, const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *y,
                      tc__blk_window *g) {
    const int64_t block = tc__layout_block(attrs);
    if (!tc__blk_is_blockable_padded(x, block) || !tc__blk_is_blockable_padded(y, block)) return false;
    if (strcmp(op_type, "MaxPool") == 0) {
        int64_t so = tc__attr_int(attrs, "storage_order", 0);
        if (so != 0 && so != 1) return false;
    } else {
        int64_t cip = tc__attr_int(attrs, "count_include_pad", 0);
        if (cip != 0 && cip != 1) return false;
    }
    return tc__blk_window_of(op_type, attrs, x, y, NULL, g);
}

static bool pool_supports(const tc__step_desc *d, const char *op_type, int64_t block) {
    if (strcmp(d->op_type, op_type) != 0 || !tc__blk_block_is(d->attrs, block)) return false;
    if (d->n_in != 1 || d->in[0] == NULL || d->n_out < 1 || d->out[0] == NULL) return false;
    for (int i = 1; i < d->n_out; i++)
        if (d->out[i] != NULL) return false; /* MaxPool's Indices */
    if (!tc__blk_layout_is(d->attrs, 1, true)) return false;
    tc__blk_window g;
    return pool_geom(op_type, d->attrs, d->in[0], d->out[0], &g);
}

bool tc__maxpool_nchw16c_f32_supports(const tc__step_desc *d) { return pool_supports(d, "MaxPool", TC__LAYOUT_BLOCK); }
bool tc__avgpool_nchw16c_f32_supports(const tc__step_desc *d) {
    return pool_supports(d, "AveragePool", TC__LAYOUT_BLOCK);
}
static bool maxpool8_supports(const tc__step_desc *d) { return pool_supports(d, "MaxPool", TC__LAYOUT_BLOCK_AVX2); }
static bool avgpool8_supports(const tc__step_desc *d) { return pool_supports(d, "AveragePool", TC__LAYOUT_BLOCK_AVX2); }

typedef struct pool_job {
    const tc__blk_window *g;
    const tc__blk_kernels *k;
    bool max, cip;
    const float *x;
    float *y;
    int64_t c, cb; /* channels, channel blocks per image */
} pool_job;

static void pool_task(void *arg, size_t plane, size_t oy0, size_t rows) {
    const pool_job *j = arg;
    const tc__blk_window *g = j->g;
    const int64_t B = j->k->block;
    const float *x = j->x + (int64_t)plane * g->H * g->W * B;
    float *y = j->y + (int64_t)plane * g->OH * g->OW * B;
    if (j->max) j->k->maxpool_rows(g, x, y, (int64_t)oy0, (int64_t)(oy0 + rows));
    else j->k->avgpool_rows(g, j->cip, x, y, (int64_t)oy0, (int64_t)(oy0 + rows));
    if ((int64_t)plane % j->cb == j->cb - 1)
        tc__blk_zero_pad(y + (int64_t)oy0 * g->OW * B, (int64_t)rows * g->OW, B, B, j->c % B);
}

/* Runs a MaxPool (max) or AveragePool step over ctx->exec: tasks are rows of (image, channel block) planes. */
static tc_status pool_run(const tc__kernel_ctx *ctx, bool max) {
    if (ctx->n_in < 1 || ctx->in[0] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects input X and output Y");
    if (ctx->n_out > 1 && ctx->out[1] != NULL)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "this pooling kernel does not produce Indices");
    const tc__blk_kernels *k = tc__blk_kernels_for(tc__layout_block(ctx->attrs));
    if (!tc__layout_in_blocked(ctx->attrs, 0) || !tc__layout_out_blocked(ctx->attrs) || k == NULL)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "blocked %s needs X and Y in NCHW16c or NCHW8c", ctx->op_type);
    const tc__tensor *x = ctx->in[0];
    tc__tensor *y = ctx->out[0];
    const char *op_type = max ? "MaxPool" : "AveragePool";
    tc__blk_window g;
    if (!pool_geom(op_type, ctx->attrs, x, y, &g))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "%s is not a blocked pooling this kernel computes", op_type);
    if (!tc__blk_bytes_ok(x, k->block) || !tc__blk_bytes_ok(y, k->block))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s buffers are smaller than their blocked layout needs",
                        op_type);
    const int64_t cb = tc__blk_count(y->dims[1], k->block), planes = y->dims[0] * cb;
    if (planes == 0 || g.OH == 0 || g.OW == 0) return TC_STATUS_OK;
    pool_job j = {&g, k, max, tc__attr_int(ctx->attrs, "count_include_pad", 0) == 1, x->data, y->data, y->dims[1], cb};
    tc__pool_parallelize_planes(ctx->exec, pool_task, &j, (size_t)planes, (size_t)g.OH);
    return TC_STATUS_OK;
}

tc_status tc__maxpool_nchw16c_f32_run(const tc__kernel_ctx *ctx) { return pool_run(ctx, true); }
tc_status tc__avgpool_nchw16c_f32_run(const tc__kernel_ctx *ctx) { return pool_run(ctx, false); }

/* x [N, C, H, W] and y [N, C, 1, 1], float32 (C padded up to the block). */
static bool gap_shapes(const tc__tensor *x, const tc__tensor *y, int64_t block) {
    return tc__blk_is_blockable_padded(x, block) && tc__blk_is_blockable_padded(y, block) && y->dims[0] == x->dims[0] &&
           y->dims[1] == x->dims[1] && y->dims[2] == 1 && y->dims[3] == 1;
}

static bool gap_supports(const tc__step_desc *d, int64_t block) {
    if (strcmp(d->op_type, "GlobalAveragePool") != 0 || !tc__blk_block_is(d->attrs, block)) return false;
    if (d->n_in != 1 || d->in[0] == NULL || d->n_out != 1 || d->out[0] == NULL) return false;
    return tc__blk_layout_is(d->attrs, 1, true) && gap_shapes(d->in[0], d->out[0], block);
}

bool tc__gavgpool_nchw16c_f32_supports(const tc__step_desc *d) { return gap_supports(d, TC__LAYOUT_BLOCK); }
static bool gavgpool8_supports(const tc__step_desc *d) { return gap_supports(d, TC__LAYOUT_BLOCK_AVX2); }

typedef struct gap_job {
    const tc__blk_kernels *k;
    const float *x;
    float *y;
    int64_t hw, c, cb; /* pixels per plane, channels, channel blocks per image */
} gap_job;

static void gap_task(void *arg, size_t p0, size_t count) {
    const gap_job *j = arg;
    const int64_t B = j->k->block;
    j->k->gavgpool(j->x + (int64_t)p0 * j->hw * B, j->y + (int64_t)p0 * B, j->hw, (int64_t)count);
    for (int64_t p = (int64_t)p0; p < (int64_t)(p0 + count); p++)
        if (p % j->cb == j->cb - 1) tc__blk_zero_pad(j->y + p * B, 1, B, B, j->c % B);
}

tc_status tc__gavgpool_nchw16c_f32_run(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 1 || ctx->in[0] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects input X and output Y");
    const tc__blk_kernels *k = tc__blk_kernels_for(tc__layout_block(ctx->attrs));
    if (!tc__layout_in_blocked(ctx->attrs, 0) || !tc__layout_out_blocked(ctx->attrs) || k == NULL)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "blocked %s needs X and Y in NCHW16c or NCHW8c", ctx->op_type);
    if (!gap_shapes(ctx->in[0], ctx->out[0], k->block))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED,
                        "GlobalAveragePool shapes this blocked kernel does not compute");
    const tc__tensor *x = ctx->in[0];
    if (!tc__blk_bytes_ok(x, k->block) || !tc__blk_bytes_ok(ctx->out[0], k->block))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "GlobalAveragePool buffers are smaller than their blocked layout needs");
    const int64_t cb = tc__blk_count(x->dims[1], k->block), planes = x->dims[0] * cb;
    gap_job j = {k, x->data, ctx->out[0]->data, x->dims[2] * x->dims[3], x->dims[1], cb};
    if (planes == 0) return TC_STATUS_OK;
    tc__pool_t pool = ctx->exec;
    size_t threads = pool ? tc__pool_get_threads_count(pool) : 1;
    /* about 1024 pixels (16K floats) per task, at least one plane */
    size_t tile = j.hw > 0 ? (size_t)(1024 / j.hw) : (size_t)planes;
    if (tile < 1) tile = 1;
    if (threads <= 1 || tile >= (size_t)planes) {
        gap_task(&j, 0, (size_t)planes);
        return TC_STATUS_OK;
    }
    tc__pool_parallelize_1d_tile_1d(pool, gap_task, &j, (size_t)planes, tile, 0);
    return TC_STATUS_OK;
}

const tc__tactic tc__tactic_maxpool_nchw16c_f32_avx512 = {
    .name = "maxpool_nchw16c_f32_avx512",
    .op_type = "MaxPool",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX512,
    .flags = TC__TACTIC_BLOCKED,
    .supports = tc__maxpool_nchw16c_f32_supports,
    .run = tc__maxpool_nchw16c_f32_run,
};

const tc__tactic tc__tactic_avgpool_nchw16c_f32_avx512 = {
    .name = "avgpool_nchw16c_f32_avx512",
    .op_type = "AveragePool",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX512,
    .flags = TC__TACTIC_BLOCKED,
    .supports = tc__avgpool_nchw16c_f32_supports,
    .run = tc__avgpool_nchw16c_f32_run,
};

const tc__tactic tc__tactic_gavgpool_nchw16c_f32_avx512 = {
    .name = "gavgpool_nchw16c_f32_avx512",
    .op_type = "GlobalAveragePool",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX512,
    .flags = TC__TACTIC_BLOCKED,
    .supports = tc__gavgpool_nchw16c_f32_supports,
    .run = tc__gavgpool_nchw16c_f32_run,
};

const tc__tactic tc__tactic_maxpool_nchw8c_f32_avx2 = {
    .name = "maxpool_nchw8c_f32_avx2",
    .op_type = "MaxPool",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2,
    .flags = TC__TACTIC_BLOCKED | TC__TACTIC_BLOCK8,
    .supports = maxpool8_supports,
    .run = tc__maxpool_nchw16c_f32_run,
};

const tc__tactic tc__tactic_avgpool_nchw8c_f32_avx2 = {
    .name = "avgpool_nchw8c_f32_avx2",
    .op_type = "AveragePool",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2,
    .flags = TC__TACTIC_BLOCKED | TC__TACTIC_BLOCK8,
    .supports = avgpool8_supports,
    .run = tc__avgpool_nchw16c_f32_run,
};

const tc__tactic tc__tactic_gavgpool_nchw8c_f32_avx2 = {
    .name = "gavgpool_nchw8c_f32_avx2",
    .op_type = "GlobalAveragePool",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2,
    .flags = TC__TACTIC_BLOCKED | TC__TACTIC_BLOCK8,
    .supports = gavgpool8_supports,
    .run = tc__gavgpool_nchw16c_f32_run,
};
