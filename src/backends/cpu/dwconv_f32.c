/*
 * dwconv_f32.c - the depthwise convolution operator shared by the AVX-512 and AVX2 tactics:
 * which Conv steps it computes, their geometry (resolved exactly as the reference kernel
 * resolves it), and the driver that splits planes and rows over the thread pool.
 */
#include "backends/cpu/dwconv_f32.h"

#include "core/thread_pool.h"

#include "backends/window.h"

/* Bound on every spatial size and offset, so that int32 lane indices cannot overflow. */
#define DW_MAX_EXTENT ((int64_t)1 << 28)

/*
 * Fills g from the Conv attributes and the shapes of x [N, C, H, W], w [C, 1, K, K] and
 * y [N, C, OH, OW]; false (with a reason in err) when this operator cannot compute the step.
 */
static bool dw_geom(const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *w, const tc__tensor *y,
                    tc__dwconv_f32_geom *g, tc__err *err) {
    if (x->dtype != TC_DTYPE_FLOAT32 || w->dtype != TC_DTYPE_FLOAT32 || y->dtype != TC_DTYPE_FLOAT32) return false;
    if (x->rank != 4 || w->rank != 4 || y->rank != 4) return false;
    const int64_t c = x->dims[1], k = w->dims[2];
    if (tc__attr_int(attrs, "group", 1) != c || w->dims[0] != c || w->dims[1] != 1 || y->dims[1] != c ||
        y->dims[0] != x->dims[0])
        return false;
    if (w->dims[3] != k || (k != 3 && k != 5 && k != 7)) return false;
    tc__kernel_ctx kc = {.node_name = "", .op_type = "Conv", .attrs = attrs, .err = err};
    tc__window rw;
    if (tc__window_resolve(&kc, x, y, w->dims + 2, &rw) != TC_STATUS_OK) return false;
    for (int d = 0; d < 2; d++) {
        if (rw.dilation[d] != 1 || (rw.stride[d] != 1 && rw.stride[d] != 2)) return false;
        if (rw.in[d] > DW_MAX_EXTENT || rw.out[d] > DW_MAX_EXTENT || rw.pad_begin[d] > DW_MAX_EXTENT) return false;
    }
    *g = (tc__dwconv_f32_geom){.H = rw.in[0], .W = rw.in[1], .OH = rw.out[0], .OW = rw.out[1], .K = (int32_t)k,
                               .sh = (int32_t)rw.stride[0], .sw = (int32_t)rw.stride[1], .pt = rw.pad_begin[0],
                               .pl = rw.pad_begin[1], .act = {TC__VACT_NONE, 0.0f, 0.0f, 0.0f}};
    return true;
}

bool tc__dwconv_f32_supports(const tc__step_desc *d) {
    if (d->n_in < 2 || d->n_in > 3 || d->in[0] == NULL || d->in[1] == NULL || d->n_out != 1 || d->out[0] == NULL)
        return false;
    const tc__tensor *b = d->n_in > 2 ? d->in[2] : NULL;
    if (b != NULL && (b->dtype != TC_DTYPE_FLOAT32 || b->rank != 1 || b->dims[0] != d->in[1]->dims[0])) return false;
    if (!tc__vact_epilogue_supported(d)) return false;
    tc__err err = {0};
    tc__dwconv_f32_geom g;
    return dw_geom(d->attrs, d->in[0], d->in[1], d->out[0], &g, &err);
}

typedef struct dw_job {
    const tc__dwconv_f32_geom *g;
    tc__dwconv_f32_ukernel uk;
    const float *x, *w, *b, *res;
    float *y;
    int64_t c;
} dw_job;

static void dw_task(void *arg, size_t plane, size_t oy0, size_t rows) {
    const dw_job *j = arg;
    const tc__dwconv_f32_geom *g = j->g;
    const int64_t ch = (int64_t)plane % j->c, isp = g->H * g->W, osp = g->OH * g->OW;
    tc__dwconv_f32_plane p = {
        .x = j->x + (int64_t)plane * isp,
        .w = j->w + ch * g->K * g->K,
        .bias = j->b ? j->b[ch] : 0.0f,
        .res = j->res ? j->res + (int64_t)plane * osp : NULL,
        .y = j->y + (int64_t)plane * osp,
    };
    j->uk(g, &p, (int64_t)oy0, (int64_t)(oy0 + rows));
}

tc_status tc__dwconv_f32_run(const tc__kernel_ctx *ctx, tc__dwconv_f32_ukernel uk) {
    if (ctx->n_in < 2 || ctx->in[0] == NULL || ctx->in[1] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects inputs X, W (and optional B) and output Y");
    const tc__tensor *x = ctx->in[0], *w = ctx->in[1];
    /* B is input 2 unless that slot is the epilogue's residual. */
    const tc__tensor *b = ctx->n_in > 2 && ctx->in[2] != NULL && ctx->in[2] != ctx->residual ? ctx->in[2] : NULL;
    tc__tensor *y = ctx->out[0];
    tc__dwconv_f32_geom g;
    if (!dw_geom(ctx->attrs, x, w, y, &g, ctx->err))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "Conv is not a depthwise convolution this kernel computes");
    if (b != NULL && (b->dtype != TC_DTYPE_FLOAT32 || tc__tensor_numel(b) != w->dims[0]))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "bias B must be float32 [%lld]", (long long)w->dims[0]);
    const int64_t planes = y->dims[0] * y->dims[1];
    const float *res = NULL;
    if (ctx->epi != NULL) {
        if (ctx->epi->bias_input >= 0 || ctx->bias != NULL)
            return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "depthwise Conv does not fuse an epilogue bias");
        tc_status st = tc__vact_residual(ctx, planes * g.OH * g.OW, &res);
        if (st != TC_STATUS_OK) return st;
        g.act = tc__vact_from_epilogue(ctx->epi);
    }
    if (planes == 0 || g.OH == 0 || g.OW == 0) return TC_STATUS_OK;
    dw_job j = {&g, uk, x->data, w->data, b ? b->data : NULL, res, y->data, y->dims[1]};
    tc__pool_t pool = ctx->exec;
    size_t threads = pool ? tc__pool_get_threads_count(pool) : 1;
    size_t tile = (size_t)g.OH;
    if (threads > 1 && (size_t)planes < 4 * threads) {
        size_t parts = (4 * threads + (size_t)planes - 1) / (size_t)planes;
        tile = ((size_t)g.OH + parts - 1) / parts;
    }
    if (threads <= 1) {
        for (int64_t p = 0; p < planes; p++) dw_task(&j, (size_t)p, 0, (size_t)g.OH);
        return TC_STATUS_OK;
    }
    tc__pool_parallelize_2d_tile_1d(pool, dw_task, &j, (size_t)planes, (size_t)g.OH, tile, 0);
    return TC_STATUS_OK;
}
