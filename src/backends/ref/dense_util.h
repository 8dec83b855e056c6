/*
 * dense_util.h - conversions between tensor elements and double buffers for
 * the dense and spatial reference kernels (which compute in double), with
 * direct loops for float32 and float64 and the generic accessors otherwise,
 * and their scratch buffers.
 */
#ifndef TC_BACKENDS_REF_DENSE_UTIL_H
#define TC_BACKENDS_REF_DENSE_UTIL_H

#include <math.h>

#include "backends/ref/ref.h"
#include "core/tensor.h"

/* dst[0..n) = elements off..off+n of t as doubles. */
static inline void tc__ref_load_f64(const tc__tensor *t, int64_t off, int64_t n, double *dst) {
    if (t->dtype == TC_DTYPE_FLOAT32) {
        const float *p = (const float *)t->data + off;
        for (int64_t i = 0; i < n; i++) dst[i] = p[i];
    } else if (t->dtype == TC_DTYPE_FLOAT64) {
        const double *p = (const double *)t->data + off;
        for (int64_t i = 0; i < n; i++) dst[i] = p[i];
    } else {
        for (int64_t i = 0; i < n; i++) dst[i] = tc__tensor_get_f64(t, off + i);
    }
}

/* Elements off..off+n of t = src (float types round to nearest even; integers truncate). */
static inline void tc__ref_store_f64(tc__tensor *t, int64_t off, int64_t n, const double *src) {
    if (t->dtype == TC_DTYPE_FLOAT32) {
        float *p = (float *)t->data + off;
        for (int64_t i = 0; i < n; i++) p[i] = (float)src[i];
    } else if (t->dtype == TC_DTYPE_FLOAT64) {
        double *p = (double *)t->data + off;
        for (int64_t i = 0; i < n; i++) p[i] = src[i];
    } else {
        for (int64_t i = 0; i < n; i++) tc__tensor_set_f64(t, off + i, src[i]);
    }
}

/* Checks a convolution's operands (Conv, ConvTranspose): X, W (optional B) and Y present, X float, W, B and Y of X's
 * type. */
static inline tc_status tc__ref_check_conv_io(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 2 || ctx->in[0] == NULL || ctx->in[1] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects inputs X, W (and optional B) and output Y");
    const tc__tensor *x = ctx->in[0], *w = ctx->in[1], *b = ctx->n_in > 2 ? ctx->in[2] : NULL, *y = ctx->out[0];
    if (!tc__dtype_is_float(x->dtype)) return tc__ref_unsupported_dtype(ctx, 0, x->dtype);
    if (w->dtype != x->dtype || (b && b->dtype != x->dtype) || y->dtype != x->dtype)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "W, B and Y must have the data type of X (%s)",
                        tc_dtype_name(x->dtype));
    return TC_STATUS_OK;
}

/*
 * Allocates n doubles (at least one) of kernel scratch memory, or NULL; overflow-checked.
 * Release with tc__kernel_free(ctx, p) in reverse order of allocation.
 */
static inline double *tc__ref_alloc_f64(const tc__kernel_ctx *ctx, int64_t n) {
    size_t bytes;
    if (n < 0 || tc__mul_overflow_size((size_t)(n > 0 ? n : 1), sizeof(double), &bytes)) return NULL;
    return (double *)tc__kernel_alloc(ctx, bytes);
}

#endif
