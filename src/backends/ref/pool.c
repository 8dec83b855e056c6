/*
 * pool.c - reference MaxPool (with optional Indices), AveragePool,
 * GlobalAveragePool and GlobalMaxPool over N-d inputs [N, C, spatial...].
 * Windows follow kernel_shape, strides, dilations, pads/auto_pad and the output
 * size chosen by shape inference (which applies ceil_mode). Values are read
 * into double; NaN inputs are skipped by the max.
 */
#include <math.h>
#include <string.h>

#include "backends/ref/dense_util.h"
#include "backends/ref/ref.h"
#include "backends/window.h"

typedef enum pool_kind { POOL_MAX, POOL_AVG } pool_kind;

typedef struct pool_args {
    pool_kind kind;
    bool count_include_pad;
    bool column_major; /* MaxPool storage_order = 1 */
} pool_args;

/*
 * One output element of the plane xd: the max (with the input index, within the
 * plane, of the first maximum) or the average of the window starting at o.
 */
static double pool_one(const tc__window *g, const pool_args *a, const double *xd, const int64_t *o,
                       const int64_t *istr, const int64_t *cstr, int64_t *arg) {
    const int nsp = g->nsp;
    int64_t start[TC_MAX_RANK], k0[TC_MAX_RANK], k1[TC_MAX_RANK], k[TC_MAX_RANK];
    double count = 1.0; /* window size counted in the average (double: no overflow) */
    for (int d = 0; d < nsp; d++) {
        start[d] = o[d] * g->stride[d] - g->pad_begin[d];
        tc__window_taps(start[d], g->dilation[d], g->kernel[d], 0, g->in[d], &k0[d], &k1[d]);
        if (a->kind == POOL_AVG) {
            int64_t c0 = k0[d], c1 = k1[d];
            if (a->count_include_pad)
                tc__window_taps(start[d], g->dilation[d], g->kernel[d], -g->pad_begin[d], g->in[d] + g->pad_end[d],
                                    &c0, &c1);
            count *= (double)(c1 - c0);
        }
        k[d] = k0[d];
    }
    for (int d = 0; d < nsp; d++)
        if (k0[d] >= k1[d]) { /* the window holds no input element, only padding */
            *arg = -1;
            if (a->kind == POOL_MAX) return -INFINITY;
            return count > 0 && a->count_include_pad ? 0.0 : NAN;
        }
    double best = NAN, sum = 0.0;
    int64_t best_i = -1;
    for (;;) {
        int64_t off = 0, coff = 0;
        for (int d = 0; d < nsp; d++) {
            int64_t i = start[d] + k[d] * g->dilation[d];
            off += i * istr[d];
            coff += i * cstr[d];
        }
        double v = xd[off];
        if (a->kind == POOL_AVG) {
            sum += v;
        } else if (!isnan(v) && (best_i < 0 || v > best)) {
            best = v;
            best_i = a->column_major ? coff : off;
        }
        int d = nsp - 1;
        for (; d >= 0; d--) {
            if (++k[d] < k1[d]) break;
            k[d] = k0[d];
        }
        if (d < 0) break;
    }
    if (a->kind == POOL_AVG) return sum / count;
    if (best_i < 0) { /* every element was NaN: report the first one */
        int64_t off = 0, coff = 0;
        for (int d = 0; d < nsp; d++) {
            off += (start[d] + k0[d] * g->dilation[d]) * istr[d];
            coff += (start[d] + k0[d] * g->dilation[d]) * cstr[d];
        }
        best_i = a->column_major ? coff : off;
    }
    *arg = best_i;
    return best;
}

static tc_status pool_run(const tc__kernel_ctx *ctx, const pool_args *a) {
    if (ctx->n_in < 1 || ctx->in[0] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects input X and output Y");
    const tc__tensor *x = ctx->in[0];
    tc__tensor *y = ctx->out[0], *ind = ctx->n_out > 1 ? ctx->out[1] : NULL;
    bool dtype_ok = tc__dtype_is_float(x->dtype) ||
                    (a->kind == POOL_MAX && (x->dtype == TC_DTYPE_INT8 || x->dtype == TC_DTYPE_UINT8));
    if (!dtype_ok) return tc__ref_unsupported_dtype(ctx, 0, x->dtype);
    if (y->dtype != x->dtype)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output Y has data type %s, expected %s",
                        tc_dtype_name(y->dtype) ? tc_dtype_name(y->dtype) : "?", tc_dtype_name(x->dtype));
    tc__window g;
    tc_status st = tc__window_resolve(ctx, x, y, NULL, &g);
    if (st != TC_STATUS_OK) return st;
    if (y->dims[1] != x->dims[1])
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output has %lld channels, expected %lld",
                        (long long)y->dims[1], (long long)x->dims[1]);
    if (ind != NULL) {
        if (ind->dtype != TC_DTYPE_INT64 || ind->rank != y->rank || memcmp(ind->dims, y->dims, sizeof(int64_t) * (size_t)y->rank) != 0)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output Indices must be int64 with the shape of Y");
    }
    const int nsp = g.nsp;
    const int64_t planes = x->dims[0] * x->dims[1];
    const int64_t isp = tc__numel(nsp, g.in), osp = tc__numel(nsp, g.out);
    if (isp < 0 || osp < 0) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "invalid spatial sizes");
    int64_t istr[TC_MAX_RANK], cstr[TC_MAX_RANK];
    istr[nsp - 1] = 1;
    for (int d = nsp - 2; d >= 0; d--) istr[d] = istr[d + 1] * g.in[d + 1];
    cstr[0] = 1;
    for (int d = 1; d < nsp; d++) cstr[d] = cstr[d - 1] * g.in[d - 1];

    double *xd = tc__ref_alloc_f64(ctx, isp), *yd = tc__ref_alloc_f64(ctx, osp);
    if (!xd || !yd) {
        tc__kernel_free(ctx, yd);
        tc__kernel_free(ctx, xd);
        return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of memory for pooling work buffers");
    }
    int64_t *ip = ind ? (int64_t *)ind->data : NULL;
    for (int64_t p = 0; p < planes; p++) {
        tc__ref_load_f64(x, p * isp, isp, xd);
        int64_t o[TC_MAX_RANK] = {0};
        for (int64_t i = 0; i < osp; i++) {
            int64_t arg = -1;
            yd[i] = pool_one(&g, a, xd, o, istr, cstr, &arg);
            if (ip) ip[p * osp + i] = arg < 0 ? -1 : p * isp + arg;
            for (int d = nsp - 1; d >= 0; d--) {
                if (++o[d] < g.out[d]) break;
                o[d] = 0;
            }
        }
        tc__ref_store_f64(y, p * osp, osp, yd);
    }
    tc__kernel_free(ctx, yd);
    tc__kernel_free(ctx, xd);
    return TC_STATUS_OK;
}

tc_status tc__ref_MaxPool(const tc__kernel_ctx *ctx) {
    int64_t so = tc__attr_int(ctx->attrs, "storage_order", 0);
    if (so != 0 && so != 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute storage_order is %lld, expected 0 or 1",
                        (long long)so);
    pool_args a = {.kind = POOL_MAX, .column_major = so == 1};
    return pool_run(ctx, &a);
}

tc_status tc__ref_AveragePool(const tc__kernel_ctx *ctx) {
    int64_t cip = tc__attr_int(ctx->attrs, "count_include_pad", 0);
    if (cip != 0 && cip != 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute count_include_pad is %lld, expected 0 or 1",
                        (long long)cip);
    pool_args a = {.kind = POOL_AVG, .count_include_pad = cip == 1};
    return pool_run(ctx, &a);
}

/* Global pools reduce each [n, c] plane of X to one value. */
static tc_status global_pool(const tc__kernel_ctx *ctx, pool_kind kind) {
    if (ctx->n_in < 1 || ctx->in[0] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects input X and output Y");
    const tc__tensor *x = ctx->in[0];
    tc__tensor *y = ctx->out[0];
    if (!tc__dtype_is_float(x->dtype)) return tc__ref_unsupported_dtype(ctx, 0, x->dtype);
    if (x->rank < 2 || y->dtype != x->dtype || y->rank != x->rank || y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1])
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects X of rank >= 2 and Y [N, C, 1, ...] of its type");
    for (int32_t d = 2; d < y->rank; d++)
        if (y->dims[d] != 1)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output dim %d is %lld, expected 1", (int)d,
                            (long long)y->dims[d]);
    const int64_t planes = x->dims[0] * x->dims[1];
    const int64_t isp = tc__numel(x->rank - 2, x->dims + 2);
    if (isp < 0) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "invalid spatial sizes");
    double *xd = tc__ref_alloc_f64(ctx, isp);
    if (!xd) return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of memory for pooling work buffer");
    for (int64_t p = 0; p < planes; p++) {
        tc__ref_load_f64(x, p * isp, isp, xd);
        double r;
        if (kind == POOL_AVG) {
            double sum = 0.0;
            for (int64_t i = 0; i < isp; i++) sum += xd[i];
            r = sum / (double)isp;
        } else {
            r = NAN;
            for (int64_t i = 0; i < isp; i++)
                if (!isnan(xd[i]) && (isnan(r) || xd[i] > r)) r = xd[i];
        }
        tc__ref_store_f64(y, p, 1, &r);
    }
    tc__kernel_free(ctx, xd);
    return TC_STATUS_OK;
}

tc_status tc__ref_GlobalAveragePool(const tc__kernel_ctx *ctx) { return global_pool(ctx, POOL_AVG); }
tc_status tc__ref_GlobalMaxPool(const tc__kernel_ctx *ctx) { return global_pool(ctx, POOL_MAX); }
