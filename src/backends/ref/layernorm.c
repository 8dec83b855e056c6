/*
 * layernorm.c - reference kernel for LayerNormalization (opset 17).
 *
 * X is viewed as [outer, n] with n = prod(dims[axis:]). Each row is normalised
 * with its mean and biased variance (two passes in double):
 *     Y = (X - mean) / sqrt(var + epsilon) * Scale + B
 * Scale and the optional B broadcast to dims[axis:]. The optional outputs Mean
 * and InvStdDev (type stash_type) have X's leading dims and 1s after axis.
 */
#include <math.h>
#include <stdlib.h>

#include "backends/ref/broadcast.h"
#include "backends/ref/numeric.h"
#include "backends/ref/ref.h"

/* Expands a Scale/B tensor broadcast to the normalised shape dims[0..rank) into prod(dims) doubles. */
static tc_status expand_param(const tc__kernel_ctx *ctx, const tc__tensor *p, int32_t rank, const int64_t *dims,
                              double *out) {
    if (tc__numclass_of(p->dtype) != TC__NUM_FLOAT) return tc__ref_unsupported_dtype(ctx, p == ctx->in[1] ? 1 : 2, p->dtype);
    tc__bcast b;
    int32_t prank = p->rank;
    const int64_t *pdims = p->dims;
    tc_status st = tc__bcast_init(&b, rank, dims, 1, &prank, &pdims, ctx->err);
    if (st) return st;
    tc__bcast_iter it;
    tc__bcast_iter_init(&b, &it);
    for (int64_t r = 0; r < b.rows; r++, tc__bcast_iter_next(&b, &it))
        for (int64_t j = 0; j < b.inner; j++)
            out[r * b.inner + j] = tc__tensor_get_f64(p, it.off[0] + j * b.step[0]);
    return TC_STATUS_OK;
}

tc_status tc__ref_LayerNormalization(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 2 || ctx->in[0] == NULL || ctx->in[1] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects inputs X and Scale (and optional B)");
    const tc__tensor *x = ctx->in[0], *scale = ctx->in[1];
    const tc__tensor *bias = ctx->n_in >= 3 ? ctx->in[2] : NULL;
    tc_status st = tc__ref_check_io(ctx, 2, 0, x->dtype, x);
    if (st) return st;
    if (tc__numclass_of(x->dtype) != TC__NUM_FLOAT) return tc__ref_unsupported_dtype(ctx, 0, x->dtype);
    int32_t rank = x->rank;
    int64_t axis = tc__attr_int(ctx->attrs, "axis", -1);
    if (axis < -(int64_t)rank || axis >= (int64_t)rank)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                        (long long)axis, (int)rank);
    if (axis < 0) axis += rank;
    double eps = tc__attr_float(ctx->attrs, "epsilon", 1e-5f);

    /* Optional statistics outputs: stash_type dtype, dims[:axis] followed by 1s. */
    tc__tensor *stats[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        if (ctx->n_out <= k + 1 || ctx->out[k + 1] == NULL) continue;
        tc__tensor *t = ctx->out[k + 1];
        if (tc__numclass_of(t->dtype) != TC__NUM_FLOAT)
            return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "output %d has data type %s; stash_type must be a float type",
                            k + 1, tc_dtype_name(t->dtype) ? tc_dtype_name(t->dtype) : "unknown");
        bool ok = t->rank == rank;
        for (int32_t i = 0; ok && i < rank; i++) ok = t->dims[i] == (i < axis ? x->dims[i] : 1);
        if (!ok) {
            char a[160];
            return tc__fail(ctx->err, TC_STATUS_INTERNAL, "output %d has shape %s, which does not match X and axis", k + 1,
                            tc__shape_str(t->rank, t->dims, a, sizeof a));
        }
        stats[k] = t;
    }

    int64_t outer = 1, n = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (i < axis) outer *= x->dims[i];
        else n *= x->dims[i];
    }
    double *sc = tc__kernel_alloc(ctx, (size_t)(n ? n : 1) * 2 * sizeof *sc);
    if (sc == NULL) return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of memory for %lld parameters", (long long)n);
    double *bi = sc + n;
    for (int64_t j = 0; j < n; j++) bi[j] = 0.0;
    st = expand_param(ctx, scale, rank - (int32_t)axis, x->dims + axis, sc);
    if (st == TC_STATUS_OK && bias != NULL) st = expand_param(ctx, bias, rank - (int32_t)axis, x->dims + axis, bi);
    if (st) {
        tc__kernel_free(ctx, sc);
        return st;
    }

    bool f32 = x->dtype == TC_DTYPE_FLOAT32;
    const float *xs = x->data;
    float *ys = ctx->out[0]->data;
    for (int64_t o = 0; o < outer; o++) {
        int64_t base = o * n;
        double sum = 0.0;
        for (int64_t j = 0; j < n; j++) sum += f32 ? (double)xs[base + j] : tc__tensor_get_f64(x, base + j);
        double mean = sum / (double)n;
        double ss = 0.0;
        for (int64_t j = 0; j < n; j++) {
            double d = (f32 ? (double)xs[base + j] : tc__tensor_get_f64(x, base + j)) - mean;
            ss += d * d;
        }
        double inv = 1.0 / sqrt(ss / (double)n + eps);
        for (int64_t j = 0; j < n; j++) {
            double v = f32 ? (double)xs[base + j] : tc__tensor_get_f64(x, base + j);
            double r = (v - mean) * inv * sc[j] + bi[j];
            if (f32) ys[base + j] = (float)r;
            else tc__tensor_set_f64(ctx->out[0], base + j, r);
        }
        if (stats[0]) tc__tensor_set_f64(stats[0], o, mean);
        if (stats[1]) tc__tensor_set_f64(stats[1], o, inv);
    }
    tc__kernel_free(ctx, sc);
    return TC_STATUS_OK;
}
