/*
 * conv.c - reference Conv and ConvInteger: N-d, groups (incl. depthwise), strides, dilations,
 * explicit pads or auto_pad, optional bias (Conv) or zero points (ConvInteger). Computes in double: per output
 * channel it accumulates a whole output plane, one kernel tap at a time, over
 * the range of outputs whose input index is in bounds (no checks in the inner loop).
 */
#include <string.h>

#include "backends/ref/dense_util.h"
#include "backends/ref/ref.h"
#include "backends/window.h"

/* acc[o] += w * x[o * stride + offset] over every output o whose input is inside x (one kernel tap). */
static void accumulate_tap(const tc__window *g, const int64_t *k, double w, const double *x, double *acc,
                           const int64_t *istr, const int64_t *ostr, int64_t osp) {
    const int nsp = g->nsp, last = nsp - 1;
    int64_t off[TC_MAX_RANK], o0[TC_MAX_RANK], o1[TC_MAX_RANK];
    bool flat = true;
    for (int d = 0; d < nsp; d++) {
        off[d] = k[d] * g->dilation[d] - g->pad_begin[d];
        tc__window_outputs(off[d], g->stride[d], g->in[d], g->out[d], &o0[d], &o1[d]);
        if (o0[d] >= o1[d]) return;
        flat = flat && g->stride[d] == 1 && off[d] == 0 && o0[d] == 0 && o1[d] == g->out[d] && g->out[d] == g->in[d];
    }
    if (flat) { /* input and output planes coincide (e.g. 1x1 kernel, stride 1, no padding) */
        for (int64_t i = 0; i < osp; i++) acc[i] += w * x[i];
        return;
    }
    const int64_t n = o1[last] - o0[last], s = g->stride[last];
    int64_t o[TC_MAX_RANK];
    for (int d = 0; d < last; d++) o[d] = o0[d];
    for (;;) {
        int64_t ib = (o0[last] * s + off[last]) * istr[last], ob = o0[last];
        for (int d = 0; d < last; d++) {
            ib += (o[d] * g->stride[d] + off[d]) * istr[d];
            ob += o[d] * ostr[d];
        }
        const double *xr = x + ib;
        double *ar = acc + ob;
        if (s == 1)
            for (int64_t j = 0; j < n; j++) ar[j] += w * xr[j];
        else
            for (int64_t j = 0; j < n; j++) ar[j] += w * xr[j * s];
        int d = last - 1;
        for (; d >= 0; d--) {
            if (++o[d] < o1[d]) break;
            o[d] = o0[d];
        }
        if (d < 0) break;
    }
}

/* Checks the shapes of X, W, the bias b (may be NULL) and Y; fills the group count. */
static tc_status conv_check_shapes(const tc__kernel_ctx *ctx, const tc__tensor *b, int64_t *group_out) {
    const tc__tensor *x = ctx->in[0], *w = ctx->in[1], *y = ctx->out[0];
    if (w->rank != x->rank || x->rank < 3)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "X has rank %d and W rank %d, expected equal ranks >= 3",
                        (int)x->rank, (int)w->rank);
    int64_t group = tc__attr_int(ctx->attrs, "group", 1);
    if (group < 1 || group > ((int64_t)1 << 40))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute group is %lld, expected 1 to 2^40",
                        (long long)group);
    if (x->dims[1] != w->dims[1] * group || w->dims[0] % group != 0)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "X has %lld channels and W is %lldx%lld..., inconsistent with group = %lld",
                        (long long)x->dims[1], (long long)w->dims[0], (long long)w->dims[1], (long long)group);
    if (y->rank != x->rank || y->dims[1] != w->dims[0])
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output has rank %d and %lld channels, expected %d and %lld",
                        (int)y->rank, (long long)(y->rank > 1 ? y->dims[1] : -1), (int)x->rank, (long long)w->dims[0]);
    if (b && (b->rank != 1 || b->dims[0] != w->dims[0]))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "bias B must have shape [%lld]", (long long)w->dims[0]);
    *group_out = group;
    return TC_STATUS_OK;
}

/* Checks the inputs and output of a Conv node; fills the group count. */
static tc_status conv_check(const tc__kernel_ctx *ctx, int64_t *group_out) {
    tc_status st = tc__ref_check_conv_io(ctx);
    return st ? st : conv_check_shapes(ctx, ctx->n_in > 2 ? ctx->in[2] : NULL, group_out);
}

/*
 * Y = conv(X - x_shift, W - w_shift[m]) + B: b, xz (one value) and wz (one value or one per output channel) may be
 * NULL. Sums are exact in double for 8-bit integers; an int32 Y refuses a sum it cannot hold.
 */
static tc_status conv_run(const tc__kernel_ctx *ctx, int64_t group, const tc__tensor *b, const tc__tensor *xz,
                          const tc__tensor *wz) {
    tc_status st;
    const tc__tensor *x = ctx->in[0], *w = ctx->in[1];
    tc__tensor *y = ctx->out[0];
    tc__window g;
    if ((st = tc__window_resolve(ctx, x, y, w->dims + 2, &g)) != TC_STATUS_OK) return st;

    const int nsp = g.nsp;
    const int64_t n_batch = x->dims[0], c_in = x->dims[1], m_out = w->dims[0];
    const int64_t cg = w->dims[1], mg = m_out / group;
    const int64_t isp = tc__numel(nsp, g.in), osp = tc__numel(nsp, g.out), ksp = tc__numel(nsp, g.kernel);
    const int64_t wn = tc__tensor_numel(w);
    int64_t xn;
    if (isp < 0 || osp < 0 || ksp < 0 || wn < 0 || tc__mul_overflow_i64(c_in, isp, &xn))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "tensor sizes are invalid or too large");
    int64_t istr[TC_MAX_RANK], ostr[TC_MAX_RANK];
    istr[nsp - 1] = ostr[nsp - 1] = 1;
    for (int d = nsp - 2; d >= 0; d--) {
        istr[d] = istr[d + 1] * g.in[d + 1];
        ostr[d] = ostr[d + 1] * g.out[d + 1];
    }

    double *xd = tc__ref_alloc_f64(ctx, xn), *wd = tc__ref_alloc_f64(ctx, wn), *acc = tc__ref_alloc_f64(ctx, osp);
    double *bias = tc__ref_alloc_f64(ctx, m_out);
    if (!xd || !wd || !acc || !bias) {
        st = tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of memory for Conv work buffers");
        goto done;
    }
    tc__ref_load_f64(w, 0, wn, wd);
    if (wz != NULL) /* per output channel m (rows of cg * ksp weights), or one value */
        for (int64_t i = 0; i < wn; i++) wd[i] -= tc__tensor_get_f64(wz, tc__tensor_numel(wz) == 1 ? 0 : i / (cg * ksp));
    for (int64_t m = 0; m < m_out; m++) bias[m] = b ? tc__tensor_get_f64(b, m) : 0.0;
    const double x_shift = xz != NULL ? tc__tensor_get_f64(xz, 0) : 0.0;

    for (int64_t n = 0; n < n_batch; n++) {
        tc__ref_load_f64(x, n * xn, xn, xd);
        if (x_shift != 0.0)
            for (int64_t i = 0; i < xn; i++) xd[i] -= x_shift;
        for (int64_t m = 0; m < m_out; m++) {
            const int64_t grp = m / mg;
            for (int64_t i = 0; i < osp; i++) acc[i] = bias[m];
            for (int64_t c = 0; c < cg; c++) {
                const double *xplane = xd + (grp * cg + c) * isp;
                const double *wk = wd + (m * cg + c) * ksp;
                int64_t k[TC_MAX_RANK] = {0};
                for (int64_t t = 0; t < ksp; t++) {
                    accumulate_tap(&g, k, wk[t], xplane, acc, istr, ostr, osp);
                    for (int d = nsp - 1; d >= 0; d--) { /* next kernel position, row-major */
                        if (++k[d] < g.kernel[d]) break;
                        k[d] = 0;
                    }
                }
            }
            if (y->dtype == TC_DTYPE_INT32)
                for (int64_t i = 0; i < osp; i++)
                    if (acc[i] < INT32_MIN || acc[i] > INT32_MAX) {
                        st = tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                                      "the int32 result overflows (%.0f at output channel %lld)", acc[i], (long long)m);
                        goto done;
                    }
            tc__ref_store_f64(y, (n * m_out + m) * osp, osp, acc);
        }
    }
    st = TC_STATUS_OK;
done:
    tc__kernel_free(ctx, bias);
    tc__kernel_free(ctx, acc);
    tc__kernel_free(ctx, wd);
    tc__kernel_free(ctx, xd);
    return st;
}

tc_status tc__ref_Conv(const tc__kernel_ctx *ctx) {
    int64_t group = 1;
    tc_status st = conv_check(ctx, &group);
    if (st != TC_STATUS_OK) return st;
    return conv_run(ctx, group, ctx->n_in > 2 ? ctx->in[2] : NULL, NULL, NULL);
}

/*
 * ConvInteger: Y (int32) = conv(X - x_zero_point, W - w_zero_point), X and W uint8 or int8; x_zero_point one value,
 * w_zero_point one value or one per output channel; padding contributes zero (the zero point before the shift).
 */
tc_status tc__ref_ConvInteger(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 2 || ctx->in[0] == NULL || ctx->in[1] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects inputs X, W (zero points optional) and output Y");
    const tc__tensor *xz = ctx->n_in > 2 ? ctx->in[2] : NULL, *wz = ctx->n_in > 3 ? ctx->in[3] : NULL;
    for (int i = 0; i < 2; i++)
        if (ctx->in[i]->dtype != TC_DTYPE_UINT8 && ctx->in[i]->dtype != TC_DTYPE_INT8)
            return tc__ref_unsupported_dtype(ctx, i, ctx->in[i]->dtype);
    if (ctx->out[0]->dtype != TC_DTYPE_INT32)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output Y is %s, expected int32",
                        tc_dtype_name(ctx->out[0]->dtype));
    if ((xz && (xz->dtype != ctx->in[0]->dtype || tc__tensor_numel(xz) != 1)) ||
        (wz && (wz->dtype != ctx->in[1]->dtype || wz->rank > 1)))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "x_zero_point must be one value of X's type, w_zero_point a scalar or 1-D of W's type");
    int64_t group = 1;
    tc_status st = conv_check_shapes(ctx, NULL, &group);
    if (st) return st;
    if (wz && tc__tensor_numel(wz) != 1 && tc__tensor_numel(wz) != ctx->in[1]->dims[0])
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "w_zero_point has %lld values for %lld output channels",
                        (long long)tc__tensor_numel(wz), (long long)ctx->in[1]->dims[0]);
    return conv_run(ctx, group, NULL, xz, wz);
}
