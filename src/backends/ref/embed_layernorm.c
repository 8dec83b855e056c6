/*
 * embed_layernorm.c - reference kernel for TcEmbedLayerNorm (tailcut's own op, made by fuse_embed_layernorm on device
 * backends): row r of the flattened ids [R = prod(ids dims)] is x = table[ids[r]] + addend[r % S] (float32 sums, as
 * the Gather and Adds it replaces computed them; no addend: x is the table row), then LayerNormalization over its D
 * elements in double as tc__ref_LayerNormalization: y = (x - mean) / sqrt(var + epsilon) * scale + bias.
 * An index outside [-V, V) fails the run (a negative one counts from the end, as Gather's).
 */
#include <math.h>

#include "backends/ref/ref.h"

tc_status tc__ref_TcEmbedLayerNorm(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 4 || ctx->n_in > 5 || ctx->in[0] == NULL || ctx->in[1] == NULL || ctx->in[2] == NULL ||
        ctx->in[3] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects ids, table, scale, bias (and an addend)");
    const tc__tensor *ids = ctx->in[0], *table = ctx->in[1], *scale = ctx->in[2], *bias = ctx->in[3];
    const tc__tensor *add = ctx->n_in > 4 ? ctx->in[4] : NULL;
    tc__tensor *y = ctx->out[0];
    if (ids->dtype != TC_DTYPE_INT64 && ids->dtype != TC_DTYPE_INT32) return tc__ref_unsupported_dtype(ctx, 0, ids->dtype);
    const tc__tensor *fl[4] = {table, scale, bias, add};
    for (int i = 0; i < 4; i++)
        if (fl[i] != NULL && fl[i]->dtype != TC_DTYPE_FLOAT32) return tc__ref_unsupported_dtype(ctx, i + 1, fl[i]->dtype);
    if (y->dtype != TC_DTYPE_FLOAT32 || table->rank != 2 || ids->rank < 1 || y->rank != ids->rank + 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "TcEmbedLayerNorm: shapes do not match");
    const int64_t v = table->dims[0], d = table->dims[1], s = ids->dims[ids->rank - 1];
    for (int32_t i = 0; i < ids->rank; i++)
        if (y->dims[i] != ids->dims[i])
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "TcEmbedLayerNorm: the output does not match ids");
    if (y->dims[ids->rank] != d || tc__tensor_numel(scale) != d || tc__tensor_numel(bias) != d ||
        (add != NULL && (add->rank != 2 || add->dims[0] != s || add->dims[1] != d)))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "TcEmbedLayerNorm: the table is [%lld, %lld]: scale and bias must be [%lld], the addend [%lld, %lld]",
                        (long long)v, (long long)d, (long long)d, (long long)s, (long long)d);
    const int64_t rows = tc__tensor_numel(ids);
    const float *tb = table->data, *ad = add != NULL ? add->data : NULL, *g = scale->data, *b = bias->data;
    float *out = y->data;
    const double eps = tc__attr_float(ctx->attrs, "epsilon", 1e-5f);
    for (int64_t r = 0; r < rows; r++) {
        int64_t id = ids->dtype == TC_DTYPE_INT64 ? ((const int64_t *)ids->data)[r] : ((const int32_t *)ids->data)[r];
        if (id < -v || id >= v)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                            "index %lld (at position %lld of ids) is out of range [%lld, %lld] for a table of %lld rows",
                            (long long)id, (long long)r, (long long)-v, (long long)(v - 1), (long long)v);
        if (id < 0) id += v;
        const float *row = tb + id * d, *arow = ad != NULL ? ad + (r % s) * d : NULL;
        float *yr = out + r * d;
        for (int64_t j = 0; j < d; j++) yr[j] = arow != NULL ? row[j] + arow[j] : row[j]; /* x, in y's row */
        double sum = 0.0, ss = 0.0;
        for (int64_t j = 0; j < d; j++) sum += yr[j];
        const double mean = d > 0 ? sum / (double)d : 0.0;
        for (int64_t j = 0; j < d; j++) ss += ((double)yr[j] - mean) * ((double)yr[j] - mean);
        const double inv = 1.0 / sqrt(ss / (double)(d > 0 ? d : 1) + eps);
        for (int64_t j = 0; j < d; j++) yr[j] = (float)(((double)yr[j] - mean) * inv * g[j] + b[j]);
    }
    return TC_STATUS_OK;
}
