/*
 * reorder_nchw16c_to_nchw_tactic.c - tactics reorder_nchw16c_to_nchw (AVX-512) and
 * reorder_nchw8c_to_nchw (AVX2): the Identity node the layout pass inserts where a blocked tensor
 * meets a consumer that reads NCHW (tc.layout_in = 1, no tc.layout_out; tc.layout_block 8 for
 * NCHW8c). Which steps they take and the driver that splits (image, channel block, pixel run) over
 * the thread pool; the transposes are in reorder_nchw16c_avx512.c and reorder_nchw8c_avx2.c. A
 * channel count that is not a multiple of the block is padded (core/layout.h): the padding lanes
 * are not copied.
 */
#include "core/thread_pool.h"
#include <string.h>

#include "backends/cpu/blocked_f32.h"
#include "backends/cpu/vec_isa.h"

/* Pixels per task when the planes alone do not give every thread several tasks (a multiple of 16). */
#define RO_MIN_TILE 256

/* x [N, C, H, W] blocked in blocks of `block` (C padded up to one) and y of the same float32 shape. */
static bool ro_shapes(const tc__tensor *x, const tc__tensor *y, int64_t block) {
    return tc__blk_is_blockable_padded(x, block) && tc__vact_same_f32_shape(y, x);
}

static bool ro_supports(const tc__step_desc *d, int64_t block) {
    if (strcmp(d->op_type, "Identity") != 0 || d->n_in != 1 || d->in[0] == NULL || d->n_out != 1 || d->out[0] == NULL)
        return false;
    return tc__blk_block_is(d->attrs, block) && tc__blk_layout_is(d->attrs, 1, false) &&
           ro_shapes(d->in[0], d->out[0], block);
}

bool tc__reorder_nchw16c_supports(const tc__step_desc *d) { return ro_supports(d, TC__LAYOUT_BLOCK); }
static bool reorder_nchw8c_supports(const tc__step_desc *d) { return ro_supports(d, TC__LAYOUT_BLOCK_AVX2); }

typedef struct ro_job {
    const tc__blk_kernels *k;
    const float *x;
    float *y;
    int64_t cb, hw, c; /* channel blocks per image, pixels per plane, channels */
} ro_job;

static void ro_task(void *arg, size_t plane, size_t p0, size_t count) {
    const ro_job *j = arg;
    const int64_t B = j->k->block, n = (int64_t)plane / j->cb, cb = (int64_t)plane % j->cb;
    const int64_t lanes = j->c - cb * B < B ? j->c - cb * B : B;
    j->k->reorder_to_nchw(j->x + n * j->cb * B * j->hw, j->y + n * j->c * j->hw, j->hw, cb, lanes, (int64_t)p0,
                          (int64_t)(p0 + count));
}

tc_status tc__reorder_nchw16c_run(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 1 || ctx->in[0] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects input X and output Y");
    const tc__blk_kernels *k = tc__blk_kernels_for(tc__layout_block(ctx->attrs));
    if (!tc__layout_in_blocked(ctx->attrs, 0) || tc__layout_out_blocked(ctx->attrs) || k == NULL)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "reorder needs X in NCHW16c or NCHW8c and Y in NCHW");
    const tc__tensor *x = ctx->in[0];
    tc__tensor *y = ctx->out[0];
    if (!ro_shapes(x, y, k->block))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "reorder expects float32 [N, C, H, W] in and out");
    if (!tc__blk_bytes_ok(x, k->block) || y->nbytes < (size_t)tc__tensor_numel(y) * sizeof(float))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "reorder buffers are smaller than their layouts need");
    ro_job j = {k, x->data, y->data, tc__blk_count(x->dims[1], k->block), x->dims[2] * x->dims[3], x->dims[1]};
    const int64_t planes = x->dims[0] * j.cb;
    if (planes == 0 || j.hw == 0) return TC_STATUS_OK;
    tc__pool_t pool = ctx->exec;
    size_t threads = pool ? tc__pool_get_threads_count(pool) : 1;
    size_t tile = (size_t)j.hw;
    if (threads > 1 && (size_t)planes < 4 * threads) {
        size_t parts = (4 * threads + (size_t)planes - 1) / (size_t)planes;
        tile = ((size_t)j.hw + parts - 1) / parts;
        tile = (tile + 15) & ~(size_t)15;
        if (tile < RO_MIN_TILE) tile = RO_MIN_TILE;
    }
    if (threads <= 1) {
        for (int64_t p = 0; p < planes; p++) ro_task(&j, (size_t)p, 0, (size_t)j.hw);
        return TC_STATUS_OK;
    }
    tc__pool_parallelize_2d_tile_1d(pool, ro_task, &j, (size_t)planes, (size_t)j.hw, tile, 0);
    return TC_STATUS_OK;
}

const tc__tactic tc__tactic_reorder_nchw16c_to_nchw = {
    .name = "reorder_nchw16c_to_nchw",
    .op_type = "Identity",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX512,
    .flags = TC__TACTIC_BLOCKED,
    .supports = tc__reorder_nchw16c_supports,
    .run = tc__reorder_nchw16c_run,
};

const tc__tactic tc__tactic_reorder_nchw8c_to_nchw = {
    .name = "reorder_nchw8c_to_nchw",
    .op_type = "Identity",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2,
    .flags = TC__TACTIC_BLOCKED | TC__TACTIC_BLOCK8,
    .supports = reorder_nchw8c_supports,
    .run = tc__reorder_nchw16c_run,
};
