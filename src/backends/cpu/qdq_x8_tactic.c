/*
 * qdq_x8_tactic.c - tactics quantize_x8_avx512, dequantize_x8_avx512 and their AVX2 twins: per-tensor QuantizeLinear
 * and DequantizeLinear between float32 and uint8 / int8 (qdq_x8.h), threaded over chunks of the tensor.
 */
#include "core/thread_pool.h"
#include <string.h>

#include "backends/cpu/qdq_x8.h"
#include "backends/cpu/vec_isa.h"

#define QDQ_CHUNK 16384

/* Per tensor: a one-element float32 scale, an optional one-element uint8/int8 zero point, no block size. */
static bool qdq_params_ok(const tc__step_desc *d) {
    if (d->n_in < 2 || d->n_in > 3 || d->n_out != 1 || d->in[0] == NULL || d->in[1] == NULL || d->out[0] == NULL)
        return false;
    const tc__tensor *s = d->in[1], *z = d->n_in > 2 ? d->in[2] : NULL;
    if (s->dtype != TC_DTYPE_FLOAT32 || tc__tensor_numel(s) != 1 || tc__attr_int(d->attrs, "block_size", 0) != 0)
        return false;
    if (z != NULL && (tc__tensor_numel(z) != 1 || (z->dtype != TC_DTYPE_UINT8 && z->dtype != TC_DTYPE_INT8)))
        return false;
    return tc__epilogue_is_none(d->epi) && !tc__attr_has(d->attrs, "tc.layout_in") &&
           !tc__attr_has(d->attrs, "tc.layout_out");
}

static bool q_supports(const tc__step_desc *d) {
    return strcmp(d->op_type, "QuantizeLinear") == 0 && qdq_params_ok(d) && d->in[0]->dtype == TC_DTYPE_FLOAT32 &&
           (d->out[0]->dtype == TC_DTYPE_UINT8 || d->out[0]->dtype == TC_DTYPE_INT8);
}

static bool dq_supports(const tc__step_desc *d) {
    return strcmp(d->op_type, "DequantizeLinear") == 0 && qdq_params_ok(d) && d->out[0]->dtype == TC_DTYPE_FLOAT32 &&
           (d->in[0]->dtype == TC_DTYPE_UINT8 || d->in[0]->dtype == TC_DTYPE_INT8);
}

typedef struct qdq_job {
    const void *x;
    void *y;
    int64_t n;
    float scale;
    int32_t zp;
    bool is_signed, quantize, avx2;
} qdq_job;

static void qdq_chunk(void *arg, size_t c) {
    const qdq_job *j = arg;
    const int64_t i = (int64_t)c * QDQ_CHUNK, m = j->n - i < QDQ_CHUNK ? j->n - i : QDQ_CHUNK;
    const float *xf = (const float *)j->x + i;
    const uint8_t *xq = (const uint8_t *)j->x + i;
    if (j->quantize) (j->avx2 ? tc__quantize_x8_avx2 : tc__quantize_x8_avx512)(xf, (uint8_t *)j->y + i, m, j->scale, j->zp, j->is_signed);
    else (j->avx2 ? tc__dequantize_x8_avx2 : tc__dequantize_x8_avx512)(xq, (float *)j->y + i, m, j->scale, j->zp, j->is_signed);
}

static tc_status qdq_run(const tc__kernel_ctx *ctx, bool quantize, bool avx2) {
    if (ctx->n_in < 2 || ctx->in[0] == NULL || ctx->in[1] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s expects x, scale and an output", ctx->op_type);
    const tc__tensor *x = ctx->in[0], *s = ctx->in[1], *z = ctx->n_in > 2 ? ctx->in[2] : NULL;
    tc__tensor *y = ctx->out[0];
    if (s->dtype != TC_DTYPE_FLOAT32 || tc__tensor_numel(s) != 1 || (z != NULL && tc__tensor_numel(z) != 1) ||
        tc__tensor_numel(x) != tc__tensor_numel(y))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: not a per-tensor step of this tactic", ctx->op_type);
    const tc_dtype q = quantize ? y->dtype : x->dtype;
    qdq_job j = {.x = x->data, .y = y->data, .n = tc__tensor_numel(x), .scale = *(const float *)s->data,
                 .zp = z == NULL ? 0 : z->dtype == TC_DTYPE_INT8 ? *(const int8_t *)z->data : *(const uint8_t *)z->data,
                 .is_signed = q == TC_DTYPE_INT8, .quantize = quantize, .avx2 = avx2};
    const size_t chunks = (size_t)((j.n + QDQ_CHUNK - 1) / QDQ_CHUNK);
    if (ctx->exec == NULL || chunks < 2)
        for (size_t c = 0; c < chunks; c++) qdq_chunk(&j, c);
    else tc__pool_parallelize_1d(ctx->exec, qdq_chunk, &j, chunks, 0);
    return TC_STATUS_OK;
}

static tc_status q_run(const tc__kernel_ctx *ctx) { return qdq_run(ctx, true, false); }
static tc_status dq_run(const tc__kernel_ctx *ctx) { return qdq_run(ctx, false, false); }
static tc_status q_run_avx2(const tc__kernel_ctx *ctx) { return qdq_run(ctx, true, true); }
static tc_status dq_run_avx2(const tc__kernel_ctx *ctx) { return qdq_run(ctx, false, true); }

const tc__tactic tc__tactic_quantize_x8_avx512 = {.name = "quantize_x8_avx512", .op_type = "QuantizeLinear",
                                                  .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX512, .supports = q_supports, .run = q_run};
const tc__tactic tc__tactic_dequantize_x8_avx512 = {.name = "dequantize_x8_avx512", .op_type = "DequantizeLinear",
                                                    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX512, .supports = dq_supports, .run = dq_run};
const tc__tactic tc__tactic_quantize_x8_avx2 = {.name = "quantize_x8_avx2", .op_type = "QuantizeLinear",
                                                .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2, .supports = q_supports, .run = q_run_avx2};
const tc__tactic tc__tactic_dequantize_x8_avx2 = {.name = "dequantize_x8_avx2", .op_type = "DequantizeLinear",
                                                  .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2, .supports = dq_supports, .run = dq_run_avx2};
