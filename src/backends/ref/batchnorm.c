/*
 * batchnorm.c - reference BatchNormalization over [N, C, ...]:
 * inference mode y = scale * (x - mean) / sqrt(var + epsilon) + B, and from
 * opset 14 training mode (batch statistics, population variance) with the
 * optional running_mean / running_var outputs updated with momentum.
 */
#include <math.h>

#include "backends/ref/dense_util.h"
#include "backends/ref/ref.h"

static tc_status bn_check(const tc__kernel_ctx *ctx, int64_t *c_out) {
    if (ctx->n_in < 5 || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects inputs X, scale, B, mean, var and output Y");
    for (int i = 0; i < 5; i++)
        if (ctx->in[i] == NULL) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input %d is missing", i);
    const tc__tensor *x = ctx->in[0];
    if (!tc__dtype_is_float(x->dtype)) return tc__ref_unsupported_dtype(ctx, 0, x->dtype);
    if (x->rank < 2)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input X has rank %d, expected at least 2", (int)x->rank);
    int64_t c = x->dims[1];
    for (int i = 1; i < 5; i++) {
        const tc__tensor *p = ctx->in[i];
        if (!tc__dtype_is_float(p->dtype)) return tc__ref_unsupported_dtype(ctx, i, p->dtype);
        if (p->rank != 1 || p->dims[0] != c)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input %d must have shape [%lld]", i, (long long)c);
    }
    const tc__tensor *y = ctx->out[0];
    if (y->dtype != x->dtype || y->rank != x->rank || tc__tensor_numel(y) != tc__tensor_numel(x))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output Y must have the type and shape of X");
    for (int i = 1; i < ctx->n_out; i++) {
        const tc__tensor *o = ctx->out[i];
        if (o != NULL && (!tc__dtype_is_float(o->dtype) || o->rank != 1 || o->dims[0] != c))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output %d must be a float tensor of shape [%lld]", i,
                            (long long)c);
    }
    *c_out = c;
    return TC_STATUS_OK;
}

tc_status tc__ref_BatchNormalization(const tc__kernel_ctx *ctx) {
    int64_t c = 0;
    tc_status st = bn_check(ctx, &c);
    if (st != TC_STATUS_OK) return st;
    const tc__tensor *x = ctx->in[0];
    tc__tensor *y = ctx->out[0];
    int64_t training = ctx->opset >= 14 ? tc__attr_int(ctx->attrs, "training_mode", 0) : 0;
    if (training != 0 && training != 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute training_mode is %lld, expected 0 or 1",
                        (long long)training);
    if (!training && ctx->n_out > 1) {
        for (int i = 1; i < ctx->n_out; i++)
            if (ctx->out[i] != NULL)
                return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED,
                                "output %d is only produced in training mode (opset >= 14 with training_mode = 1)", i);
    }
    const double eps = tc__attr_float(ctx->attrs, "epsilon", 1e-5f);
    const double momentum = tc__attr_float(ctx->attrs, "momentum", 0.9f);
    const int64_t n = x->dims[0];
    const int64_t inner = tc__numel(x->rank - 2, x->dims + 2);
    if (inner < 0) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "invalid input shape");

    double *row = tc__ref_alloc_f64(ctx, inner), *mean = tc__ref_alloc_f64(ctx, c), *var = tc__ref_alloc_f64(ctx, c);
    if (!row || !mean || !var) {
        st = tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of memory for BatchNormalization buffers");
        goto done;
    }
    if (training) {
        /* Batch mean and population variance per channel, in two passes. */
        double count = (double)n * (double)inner;
        for (int64_t ch = 0; ch < c; ch++) {
            double sum = 0.0;
            for (int64_t b = 0; b < n; b++) {
                tc__ref_load_f64(x, (b * c + ch) * inner, inner, row);
                for (int64_t i = 0; i < inner; i++) sum += row[i];
            }
            double mu = sum / count, sq = 0.0;
            for (int64_t b = 0; b < n; b++) {
                tc__ref_load_f64(x, (b * c + ch) * inner, inner, row);
                for (int64_t i = 0; i < inner; i++) sq += (row[i] - mu) * (row[i] - mu);
            }
            mean[ch] = mu;
            var[ch] = sq / count;
        }
        for (int o = 1; o < 3 && o < ctx->n_out; o++) {
            tc__tensor *r = ctx->out[o];
            if (r == NULL) continue;
            const tc__tensor *prev = ctx->in[o == 1 ? 3 : 4];
            const double *batch = o == 1 ? mean : var;
            for (int64_t ch = 0; ch < c; ch++)
                tc__tensor_set_f64(r, ch, tc__tensor_get_f64(prev, ch) * momentum + batch[ch] * (1.0 - momentum));
        }
    } else {
        for (int64_t ch = 0; ch < c; ch++) {
            mean[ch] = tc__tensor_get_f64(ctx->in[3], ch);
            var[ch] = tc__tensor_get_f64(ctx->in[4], ch);
        }
    }
    for (int64_t ch = 0; ch < c; ch++) {
        const double s = tc__tensor_get_f64(ctx->in[1], ch) / sqrt(var[ch] + eps);
        const double bias = tc__tensor_get_f64(ctx->in[2], ch);
        const double mu = mean[ch];
        for (int64_t b = 0; b < n; b++) {
            const int64_t off = (b * c + ch) * inner;
            tc__ref_load_f64(x, off, inner, row);
            for (int64_t i = 0; i < inner; i++) row[i] = (row[i] - mu) * s + bias;
            tc__ref_store_f64(y, off, inner, row);
        }
    }
    st = TC_STATUS_OK;
done:
    tc__kernel_free(ctx, var);
    tc__kernel_free(ctx, mean);
    tc__kernel_free(ctx, row);
    return st;
}
