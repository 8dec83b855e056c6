/*
 * mmi_s16_tactic.c - tactic matmul_integer_s16_avx2: MatMulInteger as onnxruntime's quantize_dynamic writes it
 * (A [..., M, K] uint8/int8 with one zero point, B [K, N] uint8/int8, constant or computed, with one zero point or
 * one per column), exact int32 results through mmi_s16_avx2.c. Per run: B and A shifted by their zero points into the
 * 16-bit pair layouts of mmi_s16.h (scratch), then blocks of rows threaded over the context's pool.
 */
#include <pthreadpool.h>
#include <string.h>

#include "backends/cpu/mmi_s16.h"
#include "backends/cpu/vec_isa.h"
#include "backends/tactic.h"

#define MMI_ROWS 16 /* rows per threaded task */

static bool is8(tc_dtype d) { return d == TC_DTYPE_UINT8 || d == TC_DTYPE_INT8; }

static bool supports(const tc__step_desc *d) {
    if (strcmp(d->op_type, "MatMulInteger") != 0 || d->n_in < 2 || d->n_in > 4 || d->n_out != 1 || !d->in[0] ||
        !d->in[1] || !d->out[0])
        return false;
    const tc__tensor *a = d->in[0], *b = d->in[1], *za = d->n_in > 2 ? d->in[2] : NULL, *zb = d->n_in > 3 ? d->in[3] : NULL;
    if (!is8(a->dtype) || !is8(b->dtype) || d->out[0]->dtype != TC_DTYPE_INT32)
        return tc__refuse(d, "operands must be uint8/int8 and Y int32");
    if (b->rank != 2 || a->rank < 2 || b->dims[0] < 1 || a->dims[a->rank - 1] != b->dims[0])
        return tc__refuse(d, "only A of rank >= 2 by a 2-D B, K >= 1");
    if (b->dims[0] > TC__MMI_MAX_K) return tc__refuse(d, "K above %d could overflow the int32 sums", TC__MMI_MAX_K);
    if (za && (za->dtype != a->dtype || tc__tensor_numel(za) != 1))
        return tc__refuse(d, "only one zero point for A");
    if (zb && (zb->dtype != b->dtype || !(tc__tensor_numel(zb) == 1 || (zb->rank == 1 && zb->dims[0] == b->dims[1]))))
        return tc__refuse(d, "B's zero point must be one value or one per column");
    if (!tc__epilogue_is_none(d->epi) || tc__attr_has(d->attrs, "tc.layout_in") || tc__attr_has(d->attrs, "tc.layout_out"))
        return tc__refuse(d, "no epilogue or blocked layout");
    return true;
}

static int64_t kpairs(const tc__tensor *b) { return (b->dims[0] + 1) / 2; }

static int64_t rows_of(const tc__tensor *a) { return tc__tensor_numel(a) / a->dims[a->rank - 1]; }

static size_t scratch_bytes(const tc__step_desc *d) {
    const int64_t kp = kpairs(d->in[1]), n = d->in[1]->dims[1], m = rows_of(d->in[0]);
    return (size_t)(kp * n * 4 + 64) + (size_t)(m * kp * 4 + 64);
}

/* Element i of an 8-bit tensor's bytes as an integer. */
static int32_t at8(const void *p, bool s, int64_t i) { return s ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i]; }

typedef struct mmi_job {
    const int32_t *ap;
    const int16_t *bp;
    int32_t *y;
    int64_t m, kp, n;
} mmi_job;

static void mmi_task(void *arg, size_t t) {
    const mmi_job *j = arg;
    const int64_t r0 = (int64_t)t * MMI_ROWS, r1 = r0 + MMI_ROWS < j->m ? r0 + MMI_ROWS : j->m;
    tc__mmi_s16_rows_avx2(j->ap, j->bp, j->y, r0, r1, j->kp, j->n);
}

static tc_status run(const tc__kernel_ctx *ctx) {
    const tc__tensor *a = ctx->in[0], *b = ctx->in[1], *za = ctx->n_in > 2 ? ctx->in[2] : NULL;
    const tc__tensor *zb = ctx->n_in > 3 ? ctx->in[3] : NULL;
    tc__tensor *y = ctx->out[0];
    const int64_t k = b->dims[0], n = b->dims[1], kp = kpairs(b);
    if (a->rank < 2 || b->rank != 2 || k < 1 || a->dims[a->rank - 1] != k || k > TC__MMI_MAX_K)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "MatMulInteger: shapes this tactic was not built for");
    const int64_t m = rows_of(a);
    if (tc__tensor_numel(y) != m * n)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "MatMulInteger: shapes this tactic was not built for");
    const bool as = a->dtype == TC_DTYPE_INT8, bs = b->dtype == TC_DTYPE_INT8;
    const int32_t zav = za ? at8(za->data, as, 0) : 0;
    int16_t *bp = tc__kernel_alloc(ctx, (size_t)(kp * n * 4 + 64));
    int32_t *ap = tc__kernel_alloc(ctx, (size_t)(m * kp * 4 + 64));
    if (!bp || !ap) {
        tc__kernel_free(ctx, ap);
        tc__kernel_free(ctx, bp);
        return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "MatMulInteger: scratch too small");
    }
    const bool zb_col = zb && tc__tensor_numel(zb) > 1;
    for (int64_t p = 0; p < kp; p++)
        for (int64_t j = 0; j < n; j++) {
            const int32_t z = zb ? at8(zb->data, bs, zb_col ? j : 0) : 0;
            bp[(p * n + j) * 2] = (int16_t)(at8(b->data, bs, 2 * p * n + j) - z);
            bp[(p * n + j) * 2 + 1] = (int16_t)(2 * p + 1 < k ? at8(b->data, bs, (2 * p + 1) * n + j) - z : 0);
        }
    for (int64_t i = 0; i < m; i++)
        for (int64_t p = 0; p < kp; p++) {
            const uint16_t lo = (uint16_t)(int16_t)(at8(a->data, as, i * k + 2 * p) - zav);
            const uint16_t hi = (uint16_t)(int16_t)(2 * p + 1 < k ? at8(a->data, as, i * k + 2 * p + 1) - zav : 0);
            ap[i * kp + p] = (int32_t)((uint32_t)lo | (uint32_t)hi << 16);
        }
    mmi_job j = {.ap = ap, .bp = bp, .y = y->data, .m = m, .kp = kp, .n = n};
    const size_t tasks = (size_t)((m + MMI_ROWS - 1) / MMI_ROWS);
    if (ctx->exec == NULL || tasks < 2)
        for (size_t t = 0; t < tasks; t++) mmi_task(&j, t);
    else pthreadpool_parallelize_1d(ctx->exec, mmi_task, &j, tasks, 0);
    tc__kernel_free(ctx, ap);
    tc__kernel_free(ctx, bp);
    return TC_STATUS_OK;
}

const tc__tactic tc__tactic_matmul_integer_s16_avx2 = {
    .name = "matmul_integer_s16_avx2",
    .op_type = "MatMulInteger",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2,
    .supports = supports,
    .scratch_bytes = scratch_bytes,
    .run = run,
};
