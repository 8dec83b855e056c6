/*
 * where_x32_tactic.c - tactic where_x32: Where(cond, x, y) on 4-byte values with NumPy
 * broadcasting, walking the output with per-input strides (0 on broadcast dims); the last dim
 * is a tight loop. Portable C.
 */
#include "core/tensor.h"
#include "backends/tactic.h"

static bool supports(const tc__step_desc *d) {
    if (d->n_in != 3 || d->n_out != 1 || !tc__epilogue_is_none(d->epi)) return false;
    for (int i = 0; i < 3; i++)
        if (d->in[i] == NULL) return false;
    const tc__tensor *y = d->out[0];
    if (d->in[0]->dtype != TC_DTYPE_BOOL || tc_dtype_size(d->in[1]->dtype) != 4 || d->in[2]->dtype != d->in[1]->dtype ||
        y->rank < 1)
        return false;
    int64_t s[TC_MAX_RANK];
    for (int i = 0; i < 3; i++)
        if (!tc__bcast_strides(d->in[i], y->rank, y->dims, s)) return false;
    return true;
}

static tc_status run(const tc__kernel_ctx *ctx) {
    tc__tensor *out = ctx->out[0];
    int32_t r = out->rank;
    int64_t sc[TC_MAX_RANK], sx[TC_MAX_RANK], sy[TC_MAX_RANK], idx[TC_MAX_RANK] = {0};
    if (!tc__bcast_strides(ctx->in[0], r, out->dims, sc) || !tc__bcast_strides(ctx->in[1], r, out->dims, sx) ||
        !tc__bcast_strides(ctx->in[2], r, out->dims, sy))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "inputs do not broadcast to the output");
    int64_t total = tc__tensor_numel(out);
    if (total <= 0) return TC_STATUS_OK;
    const uint8_t *c = ctx->in[0]->data;
    const uint32_t *x = ctx->in[1]->data, *y = ctx->in[2]->data;
    uint32_t *o = out->data;
    const int64_t inner = out->dims[r - 1], lc = sc[r - 1], lx = sx[r - 1], ly = sy[r - 1];
    int64_t oc = 0, ox = 0, oy = 0;
    for (int64_t base = 0; base < total; base += inner) {
        for (int64_t j = 0; j < inner; j++) o[base + j] = c[oc + j * lc] ? x[ox + j * lx] : y[oy + j * ly];
        for (int32_t i = r - 2; i >= 0; i--) {
            oc += sc[i], ox += sx[i], oy += sy[i];
            if (++idx[i] < out->dims[i]) break;
            oc -= sc[i] * out->dims[i], ox -= sx[i] * out->dims[i], oy -= sy[i] * out->dims[i];
            idx[i] = 0;
        }
    }
    return TC_STATUS_OK;
}

const tc__tactic tc__tactic_where_x32 = {
    .name = "where_x32",
    .op_type = "Where",
    .backend = TC__BACKEND_CPU, .caps = 0,
    .supports = supports,
    .run = run,
};
