/*
 * infer_einsum.c - shape inference for Einsum: the equation is parsed and
 * validated (core/einsum_eq.c), bound to the inputs' ranks, and every output
 * dim is the size of its subscript; symbolic dims carry over where a subscript
 * (or an ellipsis dim, 1 broadcasting) has one.
 */
#include "core/einsum_eq.h"
#include "graph/op_schema.h"

/* Checks that every known input dtype is numeric and equal to the others; returns it (or undefined). */
static tc_status common_dtype(tc__infer_ctx *ctx, tc_dtype *out) {
    *out = TC_DTYPE_UNDEFINED;
    for (int k = 0; k < ctx->n_in; k++) {
        const tc_dtype t = ctx->in[k]->dtype;
        if (t == TC_DTYPE_UNDEFINED) continue;
        const char *n = tc_dtype_name(t);
        if (!tc__dtype_is_float(t) && !tc__dtype_is_int(t))
            return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "input %d has data type %s, expected a number type", k,
                            n ? n : "?");
        if (*out != TC_DTYPE_UNDEFINED && t != *out) {
            const char *m = tc_dtype_name(*out);
            return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "input %d has data type %s but another input has %s", k,
                            n ? n : "?", m ? m : "?");
        }
        *out = t;
    }
    return TC_STATUS_OK;
}

/* The output rank when some input rank is unknown: known without ellipses, else -1. */
static int32_t rank_without_ranks(const tc__einsum_eq *eq) {
    if (eq->explicit_out) return eq->out.ellipsis_at < 0 ? eq->out.n : -1;
    int count[TC__EINSUM_LETTERS] = {0}, r = 0;
    for (int k = 0; k < eq->n_ops; k++) {
        if (eq->op[k].ellipsis_at >= 0) return -1;
        for (int j = 0; j < eq->op[k].n; j++) count[eq->op[k].letter[j]]++;
    }
    for (int l = 0; l < TC__EINSUM_LETTERS; l++) r += count[l] == 1;
    return r <= TC_MAX_RANK ? r : -1;
}

/* The dim of label l: its known size, else a symbolic dim some input has there (for an ellipsis dim, only when
 * every other input's dim there is 1 or the same symbol). */
static tc__dim label_dim(const tc__infer_ctx *ctx, const tc__einsum_bound *b, int l, int64_t size) {
    if (size >= 0 && (l < TC__EINSUM_LETTERS || size != 1)) return tc__dim_known(size);
    tc__dim got = tc__dim_known(1); /* an ellipsis dim that is 1 wherever known stays 1 only if known everywhere */
    bool have = false;
    for (int k = 0; k < b->n_ops; k++)
        for (int a = 0; a < b->rank[k]; a++) {
            if (b->axis[k][a] != l) continue;
            const tc__dim d = ctx->in[k]->shape.dims[a];
            if (tc__dim_is_known(d) && d.value == 1) continue; /* (only ellipsis dims reach here with a 1) */
            if (!have) got = d; /* (an ellipsis dim of size 1 elsewhere broadcasts to d) */
            else if (!tc__dim_same(got, d)) return tc__dim_unknown();
            have = true;
        }
    return got;
}

tc_status tc__infer_Einsum(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 1, TC__EINSUM_MAX_OPS, 1);
    if (st != TC_STATUS_OK) return st;
    for (int k = 0; k < ctx->n_in; k++)
        if (ctx->in[k] == NULL) return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "input %d is missing", k);
    const tc__attr *a = tc__attr_find(ctx->attrs, "equation");
    if (a == NULL || a->kind != TC__ATTR_STRING)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute equation (a string) is required");
    tc__einsum_eq eq;
    if ((st = tc__einsum_parse(a->s, ctx->n_in, &eq, ctx->err)) != TC_STATUS_OK) return st;
    if ((st = common_dtype(ctx, &ctx->out[0].dtype)) != TC_STATUS_OK) return st;

    int32_t rank[TC__EINSUM_MAX_OPS];
    bool ranks_known = true;
    for (int k = 0; k < ctx->n_in; k++) {
        rank[k] = ctx->in[k]->shape.rank;
        ranks_known = ranks_known && rank[k] >= 0;
    }
    tc__shape *y = &ctx->out[0].shape;
    if (!ranks_known) {
        y->rank = rank_without_ranks(&eq);
        if (y->rank < 0) y->rank = TC__RANK_UNKNOWN;
        for (int32_t i = 0; i < y->rank; i++) y->dims[i] = tc__dim_unknown();
        return TC_STATUS_OK;
    }
    tc__einsum_bound b;
    if ((st = tc__einsum_bind(&eq, rank, &b, ctx->err)) != TC_STATUS_OK) return st;
    int64_t dims[TC__EINSUM_MAX_OPS][TC_MAX_RANK];
    const int64_t *dp[TC__EINSUM_MAX_OPS];
    for (int k = 0; k < ctx->n_in; k++) {
        for (int i = 0; i < rank[k]; i++) {
            const tc__dim d = ctx->in[k]->shape.dims[i];
            dims[k][i] = tc__dim_is_known(d) ? d.value : -1;
        }
        dp[k] = dims[k];
    }
    int64_t size[TC__EINSUM_LABELS];
    if ((st = tc__einsum_sizes(&b, dp, size, ctx->err)) != TC_STATUS_OK) return st;
    y->rank = b.out_rank;
    for (int i = 0; i < b.out_rank; i++) y->dims[i] = label_dim(ctx, &b, b.out_axis[i], size[b.out_axis[i]]);
    return TC_STATUS_OK;
}
