/*
 * infer_dense.c - shape inference for MatMul (NumPy matmul semantics), Gemm
 * and BatchNormalization.
 */
#include <stdio.h>
#include <string.h>

#include "core/fused_attr.h"
#include "graph/op_schema.h"

/* Fails when inputs ia and ib both have known, different dtypes. */
static tc_status check_dtype_same(tc__infer_ctx *ctx, int ia, int ib) {
    tc_dtype a = ctx->in[ia]->dtype, b = ctx->in[ib]->dtype;
    if (a != TC_DTYPE_UNDEFINED && b != TC_DTYPE_UNDEFINED && a != b) {
        const char *na = tc_dtype_name(a), *nb = tc_dtype_name(b);
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "input %d has data type %s, expected %s like input %d",
                        ib, nb ? nb : "?", na ? na : "?", ia);
    }
    return TC_STATUS_OK;
}

/* Fails when two dims are known and differ; what names the pair. */
static tc_status check_dim_match(tc__infer_ctx *ctx, tc__dim a, tc__dim b, const char *what) {
    if (tc__dim_is_known(a) && tc__dim_is_known(b) && a.value != b.value)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: %lld vs %lld", what, (long long)a.value,
                        (long long)b.value);
    return TC_STATUS_OK;
}

/* Of two dims that must be equal, the better known one. */
static tc__dim dim_merge(tc__dim a, tc__dim b) {
    if (tc__dim_is_known(a)) return a;
    if (tc__dim_is_known(b)) return b;
    return a.sym >= 0 ? a : b;
}

/* The shape of a MatMul operand seen through the view attribute `name` (fused_attr.h) into *view. */
static tc_status view_shape(tc__infer_ctx *ctx, const tc__shape *s, const char *name, tc__shape *view) {
    int64_t perm[TC_MAX_RANK];
    int has;
    tc_status st = tc__mm_perm_checked(ctx->attrs, name, s->rank, perm, &has, ctx->err);
    if (st) return st;
    view->rank = s->rank;
    for (int32_t i = 0; i < s->rank; i++) view->dims[i] = s->dims[perm[i]];
    return TC_STATUS_OK;
}

tc_status tc__infer_MatMul(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 2, 2, 1);
    if (st != TC_STATUS_OK) return st;
    if ((st = check_dtype_same(ctx, 0, 1)) != TC_STATUS_OK) return st;
    ctx->out[0].dtype = ctx->in[0]->dtype != TC_DTYPE_UNDEFINED ? ctx->in[0]->dtype : ctx->in[1]->dtype;
    tc__shape *out = &ctx->out[0].shape;
    if (ctx->in[0]->shape.rank < 0 || ctx->in[1]->shape.rank < 0) {
        out->rank = TC__RANK_UNKNOWN;
        return TC_STATUS_OK;
    }
    /* Operands and result as the product sees them (the view attributes of fuse_matmul_views). */
    tc__vinfo va = *ctx->in[0], vb = *ctx->in[1];
    const tc__vinfo *a = &va, *b = &vb;
    if ((st = view_shape(ctx, &ctx->in[0]->shape, TC__ATTR_MM_A_PERM, &va.shape)) != TC_STATUS_OK ||
        (st = view_shape(ctx, &ctx->in[1]->shape, TC__ATTR_MM_B_PERM, &vb.shape)) != TC_STATUS_OK)
        return st;
    int32_t ra = a->shape.rank, rb = b->shape.rank;
    if (ra < 1 || rb < 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "inputs have ranks %d and %d; MatMul needs rank >= 1",
                        (int)ra, (int)rb);
    /* K of A is its last dim; K of B is its second-to-last dim (its only dim when 1-D). */
    tc__dim ka = a->shape.dims[ra - 1];
    tc__dim kb = rb == 1 ? b->shape.dims[0] : b->shape.dims[rb - 2];
    if ((st = check_dim_match(ctx, ka, kb, "inner dimensions of A and B differ")) != TC_STATUS_OK) return st;

    tc__shape ba = {.rank = ra > 2 ? ra - 2 : 0}, bb = {.rank = rb > 2 ? rb - 2 : 0}, batch;
    for (int32_t i = 0; i < ba.rank; i++) ba.dims[i] = a->shape.dims[i];
    for (int32_t i = 0; i < bb.rank; i++) bb.dims[i] = b->shape.dims[i];
    if ((st = tc__infer_broadcast(ctx, &ba, &bb, &batch)) != TC_STATUS_OK) return st;
    int32_t r = batch.rank + (ra > 1) + (rb > 1);
    if (r > TC_MAX_RANK)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "output rank %d is above the maximum %d", (int)r, TC_MAX_RANK);
    out->rank = r;
    int32_t k = 0;
    for (int32_t i = 0; i < batch.rank; i++) out->dims[k++] = batch.dims[i];
    if (ra > 1) out->dims[k++] = a->shape.dims[ra - 2];
    if (rb > 1) out->dims[k++] = b->shape.dims[rb - 1];
    /* Written through the output view: dim i of Y is dim perm[i] of the product. */
    const tc__shape product = *out;
    int64_t perm[TC_MAX_RANK];
    int has;
    if ((st = tc__mm_perm_checked(ctx->attrs, TC__ATTR_MM_Y_PERM, r, perm, &has, ctx->err)) != TC_STATUS_OK) return st;
    for (int32_t i = 0; i < r; i++) out->dims[i] = product.dims[perm[i]];
    return TC_STATUS_OK;
}

tc_status tc__infer_Gemm(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 2, 3, 1);
    if (st != TC_STATUS_OK) return st;
    const tc__vinfo *a = ctx->in[0], *b = ctx->in[1], *c = tc__infer_input(ctx, 2);
    if ((st = check_dtype_same(ctx, 0, 1)) != TC_STATUS_OK) return st;
    if (c && (st = check_dtype_same(ctx, 0, 2)) != TC_STATUS_OK) return st;
    ctx->out[0].dtype = a->dtype != TC_DTYPE_UNDEFINED ? a->dtype : b->dtype;
    int64_t ta = tc__attr_int(ctx->attrs, "transA", 0), tb = tc__attr_int(ctx->attrs, "transB", 0);
    if ((ta != 0 && ta != 1) || (tb != 0 && tb != 1))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attributes transA=%lld, transB=%lld, expected 0 or 1",
                        (long long)ta, (long long)tb);
    if (a->shape.rank >= 0 && a->shape.rank != 2)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input A has rank %d, expected 2", (int)a->shape.rank);
    if (b->shape.rank >= 0 && b->shape.rank != 2)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input B has rank %d, expected 2", (int)b->shape.rank);
    tc__dim m = tc__dim_unknown(), n = tc__dim_unknown(), ka = tc__dim_unknown(), kb = tc__dim_unknown();
    if (a->shape.rank == 2) {
        m = a->shape.dims[ta ? 1 : 0];
        ka = a->shape.dims[ta ? 0 : 1];
    }
    if (b->shape.rank == 2) {
        kb = b->shape.dims[tb ? 1 : 0];
        n = b->shape.dims[tb ? 0 : 1];
    }
    if ((st = check_dim_match(ctx, ka, kb, "inner dimensions of A and B differ")) != TC_STATUS_OK) return st;
    if (c && c->shape.rank >= 0) {
        /* C must broadcast unidirectionally to (M, N). */
        int32_t rc = c->shape.rank;
        if (rc > 2)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input C has rank %d, expected at most 2", (int)rc);
        tc__dim target[2] = {m, n};
        for (int32_t i = 0; i < rc; i++) {
            tc__dim cd = c->shape.dims[i], td = target[2 - rc + i];
            if (tc__dim_is_known(cd) && cd.value != 1 && tc__dim_is_known(td) && cd.value != td.value)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                                "input C dim %d is %lld, which does not broadcast to %lld", (int)i,
                                (long long)cd.value, (long long)td.value);
            /* A C dim other than 1 pins an unknown M or N. */
            if (tc__dim_is_known(cd) && cd.value != 1 && !tc__dim_is_known(td)) target[2 - rc + i] = cd;
        }
        m = target[0];
        n = target[1];
    }
    ctx->out[0].shape.rank = 2;
    ctx->out[0].shape.dims[0] = m;
    ctx->out[0].shape.dims[1] = n;
    return TC_STATUS_OK;
}

tc_status tc__infer_BatchNormalization(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 5, 5, 5);
    if (st != TC_STATUS_OK) return st;
    const tc__vinfo *x = ctx->in[0];
    int64_t training = ctx->opset >= 14 ? tc__attr_int(ctx->attrs, "training_mode", 0) : 0;
    if (training != 0 && training != 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute training_mode is %lld, expected 0 or 1",
                        (long long)training);
    if (ctx->opset < 14 && ctx->n_out > 1)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED,
                        "training outputs (mean, var, saved_mean, saved_var) of opset %lld BatchNormalization are not "
                        "supported; only the inference output Y",
                        (long long)ctx->opset);
    if (ctx->opset >= 14 && ctx->n_out > (training ? 3 : 1))
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "has %d outputs, expected %s", ctx->n_out,
                        training ? "1 to 3 in training mode" : "1 when training_mode is 0");
    tc__dim c = x->shape.rank >= 2 ? x->shape.dims[1] : tc__dim_unknown();
    if (x->shape.rank >= 0 && x->shape.rank < 2)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input X has rank %d, expected at least 2 (N, C, ...)",
                        (int)x->shape.rank);
    static const char *const names[] = {"X", "scale", "B", "input_mean", "input_var"};
    for (int i = 1; i < 5; i++) {
        const tc__vinfo *p = ctx->in[i];
        if (p->shape.rank < 0) continue;
        if (p->shape.rank != 1)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input %s has rank %d, expected 1 (C)", names[i],
                            (int)p->shape.rank);
        char what[64];
        snprintf(what, sizeof what, "input %s size vs channels of X", names[i]);
        if ((st = check_dim_match(ctx, p->shape.dims[0], c, what)) != TC_STATUS_OK) return st;
        c = dim_merge(c, p->shape.dims[0]);
    }
    if ((st = check_dtype_same(ctx, 1, 2)) != TC_STATUS_OK) return st;
    if ((st = check_dtype_same(ctx, 3, 4)) != TC_STATUS_OK) return st;
    ctx->out[0].dtype = x->dtype;
    ctx->out[0].shape = x->shape;
    if (x->shape.rank >= 2) ctx->out[0].shape.dims[1] = c;
    for (int i = 1; i < ctx->n_out; i++) {
        ctx->out[i].dtype = ctx->in[3]->dtype;
        ctx->out[i].shape.rank = 1;
        ctx->out[i].shape.dims[0] = c;
    }
    return TC_STATUS_OK;
}
