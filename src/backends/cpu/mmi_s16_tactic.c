/*
 * mmi_s16_tactic.c - tactics matmul_integer_s16_avx512 and _avx2: MatMulInteger as onnxruntime's quantize_dynamic writes it
 * (A [..., M, K] uint8/int8 with one zero point, B [K, N] uint8/int8, constant or computed, with one zero point or
 * one per column), exact int32 results through mmi_s16_avx512.c / mmi_s16_avx2.c. Per run: B's bytes into column blocks, its zero points
 * and A's pairs shifted by A's zero point into the layouts of mmi_s16.h (scratch), then blocks of rows threaded over
 * the context's pool.
 */
#include "core/thread_pool.h"
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

static int64_t cols_w(const tc__tensor *b, int64_t w) { return (b->dims[1] + w - 1) / w * w; }

static int64_t rows_of(const tc__tensor *a) { return tc__tensor_numel(a) / a->dims[a->rank - 1]; }

/* Scratch of the three layouts of mmi_s16.h, each 64-byte aligned. */
static size_t bytes_b(int64_t kp, int64_t n8) { return (size_t)(kp * n8 * 2 + 64); }
static size_t bytes_z(int64_t n8) { return (size_t)(n8 * 4 + 64); }
static size_t bytes_a(int64_t m, int64_t kp) { return (size_t)(m * kp * 4 + 64); }

static size_t scratch_bytes(const tc__step_desc *d) { /* for W = 16, which covers W = 8 */
    const int64_t kp = kpairs(d->in[1]), nb = cols_w(d->in[1], 16), m = rows_of(d->in[0]);
    return bytes_b(kp, nb) + bytes_z(nb) + bytes_a(m, kp);
}

/* Element i of an 8-bit tensor's bytes as an integer. */
static int32_t at8(const void *p, bool s, int64_t i) { return s ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i]; }

typedef struct mmi_job {
    const int32_t *ap;
    const uint8_t *bb;
    const int16_t *bz;
    bool b_signed;
    tc__mmi_rows_fn rows;
    int32_t *y;
    int64_t m, kp, n;
} mmi_job;

static void mmi_task(void *arg, size_t t) {
    const mmi_job *j = arg;
    const int64_t r0 = (int64_t)t * MMI_ROWS, r1 = r0 + MMI_ROWS < j->m ? r0 + MMI_ROWS : j->m;
    j->rows(j->ap, j->bb, j->bz, j->b_signed, j->y, r0, r1, j->kp, j->n);
}

/* B's bytes into [NB / W][kp][W][2] (zeros past K and N). */
static void pack_b(const uint8_t *b, int64_t k, int64_t n, int64_t kp, int64_t nb, int64_t w, uint8_t *bb) {
    for (int64_t jb = 0; jb < nb; jb += w) { /* written in order: one column block after the other */
        uint8_t *dst = bb + (jb / w) * kp * 2 * w;
        const int64_t cols = n - jb < w ? n - jb : w;
        for (int64_t p = 0; p < kp; p++, dst += 2 * w) {
            const uint8_t *r0 = b + 2 * p * n + jb, *r1 = 2 * p + 1 < k ? r0 + n : NULL;
            for (int64_t c = 0; c < w; c++) {
                dst[2 * c] = c < cols ? r0[c] : 0;
                dst[2 * c + 1] = c < cols && r1 ? r1[c] : 0;
            }
        }
    }
}

static tc_status run_with(const tc__kernel_ctx *ctx, int64_t w, tc__mmi_rows_fn rows) {
    const tc__tensor *a = ctx->in[0], *b = ctx->in[1], *za = ctx->n_in > 2 ? ctx->in[2] : NULL;
    const tc__tensor *zb = ctx->n_in > 3 ? ctx->in[3] : NULL;
    tc__tensor *y = ctx->out[0];
    if (a->rank < 2 || b->rank != 2 || b->dims[0] < 1 || a->dims[a->rank - 1] != b->dims[0] || b->dims[0] > TC__MMI_MAX_K)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "MatMulInteger: shapes this tactic was not built for");
    const int64_t k = b->dims[0], n = b->dims[1], kp = kpairs(b), nb = cols_w(b, w), m = rows_of(a);
    if (tc__tensor_numel(y) != m * n)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "MatMulInteger: shapes this tactic was not built for");
    const bool as = a->dtype == TC_DTYPE_INT8, bs = b->dtype == TC_DTYPE_INT8;
    const int32_t zav = za ? at8(za->data, as, 0) : 0;
    uint8_t *bb = tc__kernel_alloc(ctx, bytes_b(kp, nb));
    int16_t *bz = tc__kernel_alloc(ctx, bytes_z(nb));
    int32_t *ap = tc__kernel_alloc(ctx, bytes_a(m, kp));
    if (!bb || !bz || !ap) {
        tc__kernel_free(ctx, ap);
        tc__kernel_free(ctx, bz);
        tc__kernel_free(ctx, bb);
        return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "MatMulInteger: scratch too small");
    }
    pack_b(b->data, k, n, kp, nb, w, bb);
    const bool zb_col = zb && tc__tensor_numel(zb) > 1;
    for (int64_t j = 0; j < nb; j++) {
        const int16_t z = (int16_t)(zb && j < n ? at8(zb->data, bs, zb_col ? j : 0) : 0);
        bz[2 * j] = bz[2 * j + 1] = z;
    }
    for (int64_t i = 0; i < m; i++) {
        const void *ar = (const uint8_t *)a->data + i * k;
        for (int64_t p = 0; p < kp; p++) {
            const uint16_t lo = (uint16_t)(int16_t)(at8(ar, as, 2 * p) - zav);
            const uint16_t hi = (uint16_t)(int16_t)(2 * p + 1 < k ? at8(ar, as, 2 * p + 1) - zav : 0);
            ap[i * kp + p] = (int32_t)((uint32_t)lo | (uint32_t)hi << 16);
        }
    }
    mmi_job j = {.ap = ap, .bb = bb, .bz = bz, .b_signed = bs, .rows = rows, .y = y->data, .m = m, .kp = kp, .n = n};
    const size_t tasks = (size_t)((m + MMI_ROWS - 1) / MMI_ROWS);
    if (ctx->exec == NULL || tasks < 2)
        for (size_t t = 0; t < tasks; t++) mmi_task(&j, t);
    else tc__pool_parallelize_1d(ctx->exec, mmi_task, &j, tasks, 0);
    tc__kernel_free(ctx, ap);
    tc__kernel_free(ctx, bz);
    tc__kernel_free(ctx, bb);
    return TC_STATUS_OK;
}

static tc_status run_avx2(const tc__kernel_ctx *ctx) { return run_with(ctx, 8, tc__mmi_s16_rows_avx2); }
static tc_status run_avx512(const tc__kernel_ctx *ctx) { return run_with(ctx, 16, tc__mmi_s16_rows_avx512); }

const tc__tactic tc__tactic_matmul_integer_s16_avx512 = {
    .name = "matmul_integer_s16_avx512",
    .op_type = "MatMulInteger",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX512,
    .supports = supports,
    .scratch_bytes = scratch_bytes,
    .run = run_avx512,
};

const tc__tactic tc__tactic_matmul_integer_s16_avx2 = {
    .name = "matmul_integer_s16_avx2",
    .op_type = "MatMulInteger",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2,
    .supports = supports,
    .scratch_bytes = scratch_bytes,
    .run = run_avx2,
};
