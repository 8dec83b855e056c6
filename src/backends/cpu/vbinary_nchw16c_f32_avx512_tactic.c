/*
 * vbinary_nchw16c_f32_avx512_tactic.c - tactics add_/sub_/mul_/div_nchw16c_f32_avx512 and their
 * NCHW8c twins add_/sub_/mul_/div_nchw8c_f32_avx2: Add, Sub, Mul and Div whose inputs and output
 * are blocked (tc.layout_in bits 0 and 1, plus the fused residual's bit; tc.layout_out = 1;
 * tc.layout_block the block), each input either of the output's shape [N, C, H, W] or
 * a per-channel vector [N, C, 1, 1] / [1, C, 1, 1] broadcast over the pixels (the
 * squeeze-excite multiply), with the fused epilogue (activation, residual) as the NCHW
 * tactics. Which steps they take and the driver that splits (image, channel block, pixel
 * run) over the thread pool; the microkernel is vbinary_nchwc_f32_kernel.h (per ISA). A channel
 * count that is not a multiple of the block is padded (core/layout.h): the driver writes zeros into
 * the output's padding lanes (0 / 0 and an activation of 0 need not be 0).
 */
#include "core/thread_pool.h"
#include <string.h>

#include "backends/cpu/blocked_f32.h"
#include "backends/cpu/vec_isa.h"

/* Pixels per task (16K floats in NCHW16c): large enough to amortise dispatch, small enough to share the work. */
#define VBIN_TILE_PIXELS 1024

/* How an input is read: as the output's shape, as a per-channel vector of each image or of image 0. */
typedef enum vbin_form { VBIN_NONE, VBIN_FULL, VBIN_PER_IMAGE, VBIN_SHARED } vbin_form;

static vbin_form vbin_form_of(const tc__tensor *t, const tc__tensor *y) {
    if (t->dtype != TC_DTYPE_FLOAT32 || t->rank != 4) return VBIN_NONE;
    if (tc__vact_same_f32_shape(t, y)) return VBIN_FULL;
    if (t->dims[1] != y->dims[1] || t->dims[2] != 1 || t->dims[3] != 1) return VBIN_NONE;
    if (t->dims[0] == y->dims[0]) return VBIN_PER_IMAGE;
    return t->dims[0] == 1 ? VBIN_SHARED : VBIN_NONE;
}

/* The forms of a and b for output y; false unless y is blocked-able and one input has its shape. */
static bool vbin_forms(const tc__tensor *a, const tc__tensor *b, const tc__tensor *y, int64_t block, vbin_form f[2]) {
    if (!tc__blk_is_blockable_padded(y, block)) return false;
    f[0] = vbin_form_of(a, y);
    f[1] = vbin_form_of(b, y);
    return f[0] != VBIN_NONE && f[1] != VBIN_NONE && (f[0] == VBIN_FULL || f[1] == VBIN_FULL);
}

static bool vbin_supports(const tc__step_desc *d, int64_t block) {
    const char *op = d->op_type;
    if (!tc__blk_block_is(d->attrs, block)) return false;
    if (strcmp(op, "Add") != 0 && strcmp(op, "Sub") != 0 && strcmp(op, "Mul") != 0 && strcmp(op, "Div") != 0)
        return false;
    if (d->n_in != 2 || d->in[0] == NULL || d->in[1] == NULL || d->n_out != 1 || d->out[0] == NULL) return false;
    if (!tc__vact_epilogue_supported(d)) return false;
    if (!tc__blk_layout_is(d->attrs, tc__blk_with_residual(3, d->epi), true)) return false;
    vbin_form f[2];
    return vbin_forms(d->in[0], d->in[1], d->out[0], block, f);
}

bool tc__vbinary_nchw16c_f32_supports(const tc__step_desc *d) { return vbin_supports(d, TC__LAYOUT_BLOCK); }
static bool vbin8_supports(const tc__step_desc *d) { return vbin_supports(d, TC__LAYOUT_BLOCK_AVX2); }

typedef struct vbin_job {
    const tc__blk_kernels *k;
    tc__vbinary_op op;
    vbin_form form[2];
    const float *in[2], *res;
    float *y;
    int64_t cb, hw, c; /* channel blocks per image, pixels per plane, channels */
    tc__vact act;
} vbin_job;

/* Input i of the job at pixel p0 of plane (image, channel block). */
static tc__vbinary_nchw16c_operand vbin_operand(const vbin_job *j, int i, int64_t plane, int64_t p0) {
    const int64_t B = j->k->block;
    switch (j->form[i]) {
    case VBIN_FULL: return (tc__vbinary_nchw16c_operand){j->in[i] + (plane * j->hw + p0) * B, B};
    case VBIN_PER_IMAGE: return (tc__vbinary_nchw16c_operand){j->in[i] + plane * B, 0};
    default: return (tc__vbinary_nchw16c_operand){j->in[i] + plane % j->cb * B, 0};
    }
}

static void vbin_task(void *arg, size_t plane, size_t p0, size_t count) {
    const vbin_job *j = arg;
    const int64_t at = ((int64_t)plane * j->hw + (int64_t)p0) * j->k->block;
    j->k->vbinary(j->op, vbin_operand(j, 0, (int64_t)plane, (int64_t)p0),
                                   vbin_operand(j, 1, (int64_t)plane, (int64_t)p0), j->res ? j->res + at : NULL,
                                   j->y + at, (int64_t)count, &j->act);
    if ((int64_t)plane % j->cb == j->cb - 1) tc__blk_zero_pad(j->y + at, (int64_t)count, j->k->block, j->k->block, j->c % j->k->block);
}

tc_status tc__vbinary_nchw16c_f32_run(const tc__kernel_ctx *ctx, tc__vbinary_op op) {
    if (ctx->n_in < 2 || ctx->in[0] == NULL || ctx->in[1] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects 2 inputs and an output");
    const tc__blk_kernels *k = tc__blk_kernels_for(tc__layout_block(ctx->attrs));
    if (!tc__layout_in_blocked(ctx->attrs, 0) || !tc__layout_in_blocked(ctx->attrs, 1) ||
        !tc__layout_out_blocked(ctx->attrs) || k == NULL)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "blocked %s needs A, B and C in NCHW16c or NCHW8c",
                        ctx->op_type);
    const tc__tensor *y = ctx->out[0];
    vbin_job j = {.k = k, .op = op, .in = {ctx->in[0]->data, ctx->in[1]->data}, .y = ctx->out[0]->data,
                  .act = {TC__VACT_NONE, 0.0f, 0.0f, 0.0f}};
    if (!vbin_forms(ctx->in[0], ctx->in[1], y, k->block, j.form))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "%s with a broadcast this blocked kernel does not compute",
                        ctx->op_type);
    for (int i = 0; i < 2; i++) /* a per-channel vector is [N or 1, C, 1, 1], padded as Y */
        if (!tc__blk_bytes_ok(ctx->in[i], k->block))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s input %d is smaller than its blocked layout needs",
                            ctx->op_type, i);
    if (!tc__blk_bytes_ok(y, k->block) || (ctx->residual != NULL && !tc__blk_bytes_ok(ctx->residual, k->block)))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s buffers are smaller than their blocked layout needs",
                        ctx->op_type);
    j.cb = tc__blk_count(y->dims[1], k->block);
    j.hw = y->dims[2] * y->dims[3];
    j.c = y->dims[1];
    if (ctx->epi != NULL) {
        if (ctx->epi->bias_input >= 0 || ctx->bias != NULL)
            return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "%s does not fuse an epilogue bias", ctx->op_type);
        tc_status st = tc__vact_residual(ctx, tc__tensor_numel(y), &j.res);
        if (st != TC_STATUS_OK) return st;
        j.act = tc__vact_from_epilogue(ctx->epi);
    }
    const int64_t planes = y->dims[0] * j.cb;
    if (planes == 0 || j.hw == 0) return TC_STATUS_OK;
    tc__pool_t pool = ctx->exec;
    if (pool == NULL || tc__pool_get_threads_count(pool) <= 1 || planes * j.hw <= VBIN_TILE_PIXELS) {
        for (int64_t p = 0; p < planes; p++) vbin_task(&j, (size_t)p, 0, (size_t)j.hw);
        return TC_STATUS_OK;
    }
    tc__pool_parallelize_2d_tile_1d(pool, vbin_task, &j, (size_t)planes, (size_t)j.hw, VBIN_TILE_PIXELS, 0);
    return TC_STATUS_OK;
}

static tc_status run_add(const tc__kernel_ctx *ctx) { return tc__vbinary_nchw16c_f32_run(ctx, TC__VBINARY_ADD); }
static tc_status run_sub(const tc__kernel_ctx *ctx) { return tc__vbinary_nchw16c_f32_run(ctx, TC__VBINARY_SUB); }
static tc_status run_mul(const tc__kernel_ctx *ctx) { return tc__vbinary_nchw16c_f32_run(ctx, TC__VBINARY_MUL); }
static tc_status run_div(const tc__kernel_ctx *ctx) { return tc__vbinary_nchw16c_f32_run(ctx, TC__VBINARY_DIV); }

const tc__tactic tc__tactic_add_nchw16c_f32_avx512 = {
    .name = "add_nchw16c_f32_avx512",
    .op_type = "Add",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX512,
    .flags = TC__TACTIC_BLOCKED | TC__TACTIC_FUSES_EPILOGUE,
    .supports = tc__vbinary_nchw16c_f32_supports,
    .run = run_add,
};

const tc__tactic tc__tactic_sub_nchw16c_f32_avx512 = {
    .name = "sub_nchw16c_f32_avx512",
    .op_type = "Sub",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX512,
    .flags = TC__TACTIC_BLOCKED | TC__TACTIC_FUSES_EPILOGUE,
    .supports = tc__vbinary_nchw16c_f32_supports,
    .run = run_sub,
};

const tc__tactic tc__tactic_mul_nchw16c_f32_avx512 = {
    .name = "mul_nchw16c_f32_avx512",
    .op_type = "Mul",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX512,
    .flags = TC__TACTIC_BLOCKED | TC__TACTIC_FUSES_EPILOGUE,
    .supports = tc__vbinary_nchw16c_f32_supports,
    .run = run_mul,
};

const tc__tactic tc__tactic_div_nchw16c_f32_avx512 = {
    .name = "div_nchw16c_f32_avx512",
    .op_type = "Div",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX512,
    .flags = TC__TACTIC_BLOCKED | TC__TACTIC_FUSES_EPILOGUE,
    .supports = tc__vbinary_nchw16c_f32_supports,
    .run = run_div,
};

const tc__tactic tc__tactic_add_nchw8c_f32_avx2 = {
    .name = "add_nchw8c_f32_avx2",
    .op_type = "Add",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2,
    .flags = TC__TACTIC_BLOCKED | TC__TACTIC_BLOCK8 | TC__TACTIC_FUSES_EPILOGUE,
    .supports = vbin8_supports,
    .run = run_add,
};

const tc__tactic tc__tactic_sub_nchw8c_f32_avx2 = {
    .name = "sub_nchw8c_f32_avx2",
    .op_type = "Sub",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2,
    .flags = TC__TACTIC_BLOCKED | TC__TACTIC_BLOCK8 | TC__TACTIC_FUSES_EPILOGUE,
    .supports = vbin8_supports,
    .run = run_sub,
};

const tc__tactic tc__tactic_mul_nchw8c_f32_avx2 = {
    .name = "mul_nchw8c_f32_avx2",
    .op_type = "Mul",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2,
    .flags = TC__TACTIC_BLOCKED | TC__TACTIC_BLOCK8 | TC__TACTIC_FUSES_EPILOGUE,
    .supports = vbin8_supports,
    .run = run_mul,
};

const tc__tactic tc__tactic_div_nchw8c_f32_avx2 = {
    .name = "div_nchw8c_f32_avx2",
    .op_type = "Div",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2,
    .flags = TC__TACTIC_BLOCKED | TC__TACTIC_BLOCK8 | TC__TACTIC_FUSES_EPILOGUE,
    .supports = vbin8_supports,
    .run = run_div,
};
