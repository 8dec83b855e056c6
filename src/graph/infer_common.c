/* infer_common.c - helpers shared by the per-family shape inference functions. */
#include <stdio.h>
#include <string.h>

#include "graph/op_schema.h"

tc_status tc__infer_check_arity(tc__infer_ctx *ctx, int min_in, int max_in, int max_out) {
    int present = ctx->n_in;
    while (present > 0 && ctx->in[present - 1] == NULL) present--;
    if (present < min_in || ctx->n_in > max_in)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "expects %d to %d inputs, got %d", min_in, max_in,
                        ctx->n_in);
    for (int i = 0; i < min_in; i++)
        if (ctx->in[i] == NULL)
            return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "required input %d is missing", i);
    if (ctx->n_out < 1 || ctx->n_out > max_out)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "expects 1 to %d outputs, got %d", max_out, ctx->n_out);
    return TC_STATUS_OK;
}

tc_status tc__infer_broadcast(tc__infer_ctx *ctx, const tc__shape *a, const tc__shape *b, tc__shape *out) {
    if (a->rank < 0 || b->rank < 0) {
        out->rank = TC__RANK_UNKNOWN;
        return TC_STATUS_OK;
    }
    int32_t r = a->rank > b->rank ? a->rank : b->rank;
    out->rank = r;
    for (int32_t i = 0; i < r; i++) {
        int32_t ia = i - (r - a->rank), ib = i - (r - b->rank);
        tc__dim da = ia >= 0 ? a->dims[ia] : tc__dim_known(1);
        tc__dim db = ib >= 0 ? b->dims[ib] : tc__dim_known(1);
        tc__dim d;
        if (da.value == 1) d = db;
        else if (db.value == 1) d = da;
        else if (da.value >= 0 && db.value >= 0) {
            if (da.value != db.value)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                                "shapes cannot broadcast: dim %d is %lld vs %lld", (int)i, (long long)da.value,
                                (long long)db.value);
            d = da;
        } else if (da.value >= 0) d = da; /* the other is symbolic: it must equal this (or be 1) */
        else if (db.value >= 0) d = db;
        else if (tc__dim_same(da, db)) d = da;
        else d = tc__dim_unknown();
        out->dims[i] = d;
    }
    return TC_STATUS_OK;
}

tc_status tc__infer_axis(tc__infer_ctx *ctx, int64_t axis, int32_t rank, int32_t *out) {
    if (axis < -(int64_t)rank || axis >= (int64_t)rank)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                        (long long)axis, (int)rank);
    *out = (int32_t)(axis < 0 ? axis + rank : axis);
    return TC_STATUS_OK;
}

tc_status tc__infer_same_as_input0(tc__infer_ctx *ctx) {
    if (ctx->n_in < 1 || ctx->in[0] == NULL || ctx->n_out < 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "expects an input and an output");
    ctx->out[0].dtype = ctx->in[0]->dtype;
    ctx->out[0].shape = ctx->in[0]->shape;
    return TC_STATUS_OK;
}

int64_t tc__infer_const_ints(const tc__vinfo *v, int64_t *out, int64_t cap) {
    if (v == NULL) return -1;
    if (v->value != NULL) {
        const tc__tensor *t = v->value;
        if (t->dtype != TC_DTYPE_INT64 && t->dtype != TC_DTYPE_INT32) return -1;
        if (t->rank > 1) return -1;
        int64_t n = tc__tensor_numel(t);
        if (n < 0 || n > cap) return -1;
        for (int64_t i = 0; i < n; i++) out[i] = tc__tensor_get_i64(t, i);
        return n;
    }
    if (v->symval_len >= 0 && v->symval_len <= cap) {
        for (int32_t i = 0; i < v->symval_len; i++) {
            if (!tc__dim_is_literal(v->symval[i])) return -1;
            out[i] = v->symval[i].value;
        }
        return v->symval_len;
    }
    return -1;
}
