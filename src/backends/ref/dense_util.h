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
