/*
 * conv_transpose.c - reference ConvTranspose: N-d, groups, strides, dilations,
 * pads, output_padding, output_shape, auto_pad, optional bias. Computes in
 * double by scattering: input element x[n, c, i] times tap W[c, m, k] adds to
 * y[n, group(c) * M/group + m, i * stride + k * dilation - pad_begin] when that
 * output index lies inside Y. Geometry from core/convt_geom.c.
 */
#include "backends/ref/dense_util.h"
#include "backends/ref/ref.h"
#include "core/convt_geom.h"

/* Checks inputs, output and their shapes; resolves the geometry. */
static tc_status convt_check(const tc__kernel_ctx *ctx, tc__convt_geom *g) {
    tc_status st = tc__ref_check_conv_io(ctx);
    if (st) return st;
    const tc__tensor *x = ctx->in[0], *w = ctx->in[1], *b = ctx->n_in > 2 ? ctx->in[2] : NULL, *y = ctx->out[0];
    if (x->rank < 3 || x->rank > TC_MAX_RANK || w->rank != x->rank || y->rank != x->rank)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "X, W and Y have ranks %d, %d and %d, expected equal ranks >= 3",
                        (int)x->rank, (int)w->rank, (int)y->rank);
    const int nsp = x->rank - 2;
    st = tc__convt_geom_resolve(ctx->attrs, nsp, x->dims + 2, w->dims + 2, g, ctx->err);
    if (st != TC_STATUS_OK) return st;
    const int64_t group = g->group, m_out = w->dims[1] * group;
    if (x->dims[1] != w->dims[0] || x->dims[1] % group != 0 || w->dims[1] < 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "X has %lld channels and W is %lldx%lld..., inconsistent with group = %lld", (long long)x->dims[1],
                        (long long)w->dims[0], (long long)w->dims[1], (long long)group);
    if (y->dims[0] != x->dims[0] || y->dims[1] != m_out)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output Y is %lldx%lld..., expected %lldx%lld...",
                        (long long)y->dims[0], (long long)y->dims[1], (long long)x->dims[0], (long long)m_out);
    for (int d = 0; d < nsp; d++)
        if (y->dims[2 + d] != g->out[d])
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output Y has spatial dim %d of size %lld, expected %lld",
                            d + 2, (long long)y->dims[2 + d], (long long)g->out[d]);
    if (b && (b->rank != 1 || b->dims[0] != m_out))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "bias B must have shape [%lld]", (long long)m_out);
    return TC_STATUS_OK;
}

/* Advances the row-major multi-index idx over dims[0..n); false after the last. */
static bool next_index(int n, const int64_t *dims, int64_t *idx) {
    for (int d = n - 1; d >= 0; d--) {
        if (++idx[d] < dims[d]) return true;
        idx[d] = 0;
    }
    return false;
}

/* acc[o] += v * wk[k] for every kernel tap k whose output o = i * stride + k * dilation - pad_begin is inside Y. */
static void scatter(const tc__convt_geom *g, const int64_t *i, double v, const double *wk, double *acc) {
    int64_t k[TC_MAX_RANK] = {0};
    int64_t t = 0;
    do {
        int64_t o = 0;
        bool inside = true;
        for (int d = 0; d < g->nsp && inside; d++) {
            int64_t od = i[d] * g->stride[d] + k[d] * g->dilation[d] - g->pad_begin[d];
            inside = od >= 0 && od < g->out[d];
            o = o * g->out[d] + od;
        }
        if (inside) acc[o] += v * wk[t];
        t++;
    } while (next_index(g->nsp, g->kernel, k));
}

tc_status tc__ref_ConvTranspose(const tc__kernel_ctx *ctx) {
    tc__convt_geom g;
    tc_status st = convt_check(ctx, &g);
    if (st != TC_STATUS_OK) return st;
    const tc__tensor *x = ctx->in[0], *w = ctx->in[1], *b = ctx->n_in > 2 ? ctx->in[2] : NULL;
    tc__tensor *y = ctx->out[0];
    const int nsp = g.nsp;
    const int64_t n_batch = x->dims[0], c_in = x->dims[1], mg = w->dims[1], m_out = mg * g.group;
    const int64_t cg = c_in / g.group;
    const int64_t isp = tc__numel(nsp, g.in), osp = tc__numel(nsp, g.out), ksp = tc__numel(nsp, g.kernel);
    const int64_t wn = tc__tensor_numel(w);
    int64_t xn, yn;
    if (isp < 0 || osp < 0 || ksp < 0 || wn < 0 || tc__mul_overflow_i64(c_in, isp, &xn) ||
        tc__mul_overflow_i64(m_out, osp, &yn))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "tensor sizes are invalid or too large");
    if (n_batch == 0 || yn == 0) return TC_STATUS_OK;

    double *xd = tc__ref_alloc_f64(ctx, xn), *wd = tc__ref_alloc_f64(ctx, wn), *acc = tc__ref_alloc_f64(ctx, yn);
    if (!xd || !wd || !acc) {
        st = tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of memory for ConvTranspose work buffers");
        goto done;
    }
    tc__ref_load_f64(w, 0, wn, wd);
    for (int64_t n = 0; n < n_batch; n++) {
        tc__ref_load_f64(x, n * xn, xn, xd);
        for (int64_t m = 0; m < m_out; m++) {
            const double bias = b ? tc__tensor_get_f64(b, m) : 0.0;
            for (int64_t o = 0; o < osp; o++) acc[m * osp + o] = bias;
        }
        for (int64_t c = 0; c < c_in; c++) {
            const int64_t grp = c / cg;
            for (int64_t ml = 0; ml < mg; ml++) {
                const double *wk = wd + (c * mg + ml) * ksp;
                double *ay = acc + (grp * mg + ml) * osp;
                int64_t i[TC_MAX_RANK] = {0};
                int64_t p = 0;
                if (isp > 0) do {
                        scatter(&g, i, xd[c * isp + p], wk, ay);
                        p++;
                    } while (next_index(nsp, g.in, i));
            }
        }
        tc__ref_store_f64(y, n * yn, yn, acc);
    }
    st = TC_STATUS_OK;
done:
    tc__kernel_free(ctx, acc);
    tc__kernel_free(ctx, wd);
    tc__kernel_free(ctx, xd);
    return st;
}
