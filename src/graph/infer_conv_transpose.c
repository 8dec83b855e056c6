/*
 * infer_conv_transpose.c - shape inference for ConvTranspose: X [N, C, in...],
 * W [C, M/group, k...], optional B [M] -> Y [N, M, out...]. The spatial sizes and
 * every attribute check come from core/convt_geom.c (shared with the kernels).
 */
#include "core/convt_geom.h"
#include "graph/op_schema.h"

static tc__dim dim_at(const tc__vinfo *v, int d) {
    return v != NULL && v->shape.rank > d ? v->shape.dims[d] : tc__dim_unknown();
}

/* Fails when input i has a known data type other than want. */
static tc_status check_dtype(tc__infer_ctx *ctx, int i, tc_dtype want) {
    tc_dtype t = ctx->in[i]->dtype;
    if (want != TC_DTYPE_UNDEFINED && t != TC_DTYPE_UNDEFINED && t != want) {
        const char *a = tc_dtype_name(t), *b = tc_dtype_name(want);
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "input %d has data type %s, expected %s like X", i,
                        a ? a : "?", b ? b : "?");
    }
    return TC_STATUS_OK;
}

/* Checks channels: X's C equals W's dim 0 and is a multiple of group; B has M = W's dim 1 * group values. */
static tc_status check_channels(tc__infer_ctx *ctx, int64_t group, tc__dim *m_out) {
    const tc__vinfo *x = ctx->in[0], *w = ctx->in[1], *b = tc__infer_input(ctx, 2);
    tc__dim c = dim_at(x, 1), wc = dim_at(w, 0), wm = dim_at(w, 1);
    *m_out = tc__dim_unknown();
    if (tc__dim_is_known(c) && tc__dim_is_known(wc) && c.value != wc.value)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input X has %lld channels but weight W's dim 0 is %lld",
                        (long long)c.value, (long long)wc.value);
    tc__dim cc = tc__dim_is_known(c) ? c : wc;
    if (tc__dim_is_known(cc) && cc.value % group != 0)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "input X has %lld channels, which is not a multiple of group = %lld", (long long)cc.value,
                        (long long)group);
    if (tc__dim_is_known(wm)) {
        if (wm.value < 1 || wm.value > ((int64_t)1 << 40) / group)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "weight W's dim 1 is %lld, expected 1 to 2^40 / group",
                            (long long)wm.value);
        *m_out = tc__dim_known(wm.value * group);
    }
    if (b != NULL && b->shape.rank >= 0) {
        if (b->shape.rank != 1)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "bias B has rank %d, expected 1", (int)b->shape.rank);
        if (tc__dim_is_known(b->shape.dims[0]) && tc__dim_is_known(*m_out) && b->shape.dims[0].value != m_out->value)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                            "bias B has %lld elements, expected %lld (weight's dim 1 times group)",
                            (long long)b->shape.dims[0].value, (long long)m_out->value);
    }
    return TC_STATUS_OK;
}

tc_status tc__infer_ConvTranspose(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 2, 3, 1);
    if (st != TC_STATUS_OK) return st;
    const tc__vinfo *x = ctx->in[0], *w = ctx->in[1], *b = tc__infer_input(ctx, 2);
    tc_dtype dt = x->dtype != TC_DTYPE_UNDEFINED ? x->dtype : w->dtype;
    if ((st = check_dtype(ctx, 1, dt)) != TC_STATUS_OK) return st;
    if (b != NULL && (st = check_dtype(ctx, 2, dt)) != TC_STATUS_OK) return st;
    ctx->out[0].dtype = dt;

    int32_t rank = x->shape.rank >= 0 ? x->shape.rank : w->shape.rank;
    if (rank < 0) {
        ctx->out[0].shape.rank = TC__RANK_UNKNOWN;
        return TC_STATUS_OK;
    }
    if (rank < 3 || rank > TC_MAX_RANK)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "input X has rank %d, expected 3 to %d (N, C and spatial dims)", (int)rank, TC_MAX_RANK);
    if (x->shape.rank >= 0 && w->shape.rank >= 0 && x->shape.rank != w->shape.rank)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input X has rank %d but weight W has rank %d",
                        (int)x->shape.rank, (int)w->shape.rank);
    const int nsp = rank - 2;
    int64_t in[TC_MAX_RANK], wk[TC_MAX_RANK];
    for (int d = 0; d < nsp; d++) {
        in[d] = dim_at(x, 2 + d).value >= 0 ? dim_at(x, 2 + d).value : -1;
        wk[d] = dim_at(w, 2 + d).value >= 0 ? dim_at(w, 2 + d).value : -1;
    }
    tc__convt_geom g;
    if ((st = tc__convt_geom_resolve(ctx->attrs, nsp, in, wk, &g, ctx->err)) != TC_STATUS_OK) return st;
    tc__dim m;
    if ((st = check_channels(ctx, g.group, &m)) != TC_STATUS_OK) return st;

    tc__shape *y = &ctx->out[0].shape;
    y->rank = rank;
    y->dims[0] = dim_at(x, 0);
    y->dims[1] = m;
    for (int d = 0; d < nsp; d++) y->dims[2 + d] = g.out[d] >= 0 ? tc__dim_known(g.out[d]) : tc__dim_unknown();
    return TC_STATUS_OK;
}
