/*
 * vbinary_f32.c - the elementwise Add / Sub / Mul / Div operator shared by the AVX-512 and AVX2
 * tactics: the broadcast patterns it accepts (see vbinary_f32.h), and the driver that walks
 * the output in chunks over the thread pool, calling the vector-vector microkernel on rows
 * and the vector-scalar one on blocks that share one element of the smaller operand.
 */
#include "backends/cpu/vbinary_f32.h"

#include "core/thread_pool.h"
#include <string.h>

/* Elements per task: large enough to amortise dispatch, small enough to share the work. */
#define VBIN_TILE 16384

/*
 * The layout of y = op(a, b): operand `full` has y's shape; the other one, P, has mid elements
 * and y[i] pairs with P[(i / inner) % mid] (outer * mid * inner == n).
 */
typedef struct vbin_layout {
    int full;
    int64_t n, outer, mid, inner;
} vbin_layout;

static bool vbin_layout_of(const tc__tensor *a, const tc__tensor *b, const tc__tensor *y, vbin_layout *l) {
    if (a->dtype != TC_DTYPE_FLOAT32 || b->dtype != TC_DTYPE_FLOAT32 || y->dtype != TC_DTYPE_FLOAT32) return false;
    const int32_t r = y->rank;
    if (a->rank > r || b->rank > r) return false;
    /* y must be exactly the broadcast of a and b */
    for (int32_t i = 0; i < r; i++) {
        int32_t ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if ((da != 1 && da != y->dims[i]) || (db != 1 && db != y->dims[i])) return false;
        if (y->dims[i] != (da == 1 ? db : da)) return false;
    }
    const int64_t n = tc__tensor_numel(y);
    if (n < 0) return false;
    l->n = n;
    l->full = tc__tensor_numel(a) == n ? 0 : 1;
    const tc__tensor *p = l->full == 0 ? b : a;
    if (l->full == 1 && tc__tensor_numel(b) != n) return false; /* both operands broadcast */
    if (tc__tensor_numel(p) == n) {
        l->outer = l->inner = 1;
        l->mid = n;
        return true;
    }
    int32_t i0 = -1, i1 = -1;
    for (int32_t i = 0; i < r; i++) {
        int32_t ip = i - (r - p->rank);
        if (ip >= 0 && p->dims[ip] != 1) {
            if (i0 < 0) i0 = i;
            i1 = i;
        }
    }
    l->outer = 1;
    l->mid = 1;
    l->inner = n;
    if (i0 < 0) return true; /* one element */
    for (int32_t i = i0; i <= i1; i++) {
        int32_t ip = i - (r - p->rank);
        if (y->dims[i] != 1 && p->dims[ip] != y->dims[i]) return false; /* a broadcast dim inside the run */
    }
    l->outer = tc__numel(i0, y->dims);
    l->mid = tc__numel(i1 - i0 + 1, y->dims + i0);
    l->inner = tc__numel(r - i1 - 1, y->dims + i1 + 1);
    return l->outer >= 0 && l->mid >= 0 && l->inner >= 0;
}

bool tc__vbinary_f32_supports(const tc__step_desc *d) {
    if (d->n_in != 2 || d->in[0] == NULL || d->in[1] == NULL || d->n_out != 1 || d->out[0] == NULL) return false;
    if (!tc__vact_epilogue_supported(d)) return false;
    vbin_layout l;
    return vbin_layout_of(d->in[0], d->in[1], d->out[0], &l);
}

typedef struct vbin_job {
    const tc__vbinary_f32_ukernels *uk;
    tc__vbinary_op op;
    vbin_layout l;
    const float *f, *p, *res;
    float *y;
    tc__vact act;
} vbin_job;

static void vbin_task(void *arg, size_t start, size_t count) {
    const vbin_job *j = arg;
    const vbin_layout *l = &j->l;
    int64_t i = (int64_t)start;
    const int64_t end = i + (int64_t)count;
    while (i < end) {
        int64_t len;
        const float *res = j->res ? j->res + i : NULL;
        if (l->inner == 1) { /* a row of P against the full operand */
            int64_t k = i % l->mid;
            len = l->mid - k < end - i ? l->mid - k : end - i;
            if (l->full == 0) j->uk->vv(j->op, j->f + i, j->p + k, res, j->y + i, len, &j->act);
            else j->uk->vv(j->op, j->p + k, j->f + i, res, j->y + i, len, &j->act);
        } else { /* a block that shares one element of P */
            int64_t k = i % l->inner;
            len = l->inner - k < end - i ? l->inner - k : end - i;
            j->uk->vs(j->op, l->full == 1, j->f + i, j->p[(i / l->inner) % l->mid], res, j->y + i, len, &j->act);
        }
        i += len;
    }
}

tc_status tc__vbinary_f32_run(const tc__kernel_ctx *ctx, tc__vbinary_op op, const tc__vbinary_f32_ukernels *uk) {
    if (ctx->n_in < 2 || ctx->in[0] == NULL || ctx->in[1] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects 2 inputs and an output");
    vbin_job j = {.uk = uk, .op = op, .y = ctx->out[0]->data, .act = {TC__VACT_NONE, 0.0f, 0.0f, 0.0f}};
    if (!vbin_layout_of(ctx->in[0], ctx->in[1], ctx->out[0], &j.l))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "%s with a broadcast this kernel does not compute",
                        ctx->op_type);
    j.f = ctx->in[j.l.full]->data;
    j.p = ctx->in[1 - j.l.full]->data;
    if (ctx->epi != NULL) {
        if (ctx->epi->bias_input >= 0 || ctx->bias != NULL)
            return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "%s does not fuse an epilogue bias", ctx->op_type);
        tc_status st = tc__vact_residual(ctx, j.l.n, &j.res);
        if (st != TC_STATUS_OK) return st;
        j.act = tc__vact_from_epilogue(ctx->epi);
    }
    if (j.l.n == 0) return TC_STATUS_OK;
    tc__pool_t pool = ctx->exec;
    if (pool == NULL || j.l.n <= VBIN_TILE || tc__pool_get_threads_count(pool) <= 1) {
        vbin_task(&j, 0, (size_t)j.l.n);
        return TC_STATUS_OK;
    }
    tc__pool_parallelize_1d_tile_1d(pool, vbin_task, &j, (size_t)j.l.n, VBIN_TILE, 0);
    return TC_STATUS_OK;
}
