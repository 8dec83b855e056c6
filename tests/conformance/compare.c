/*
 * compare.c - compares an output tensor with the expected one the way ONNX's
 * backend test runner does (numpy.testing.assert_allclose): equal dtype and
 * shape, floats within atol + rtol * |expected| (NaN matches NaN, infinities
 * must be equal), integers and bools exactly. On a mismatch it describes the
 * first differing element, how many differ and the max abs error.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "conf.h"

static int is_float(tc_dtype dtype) {
    return dtype == TC_DTYPE_FLOAT32 || dtype == TC_DTYPE_FLOAT64 || dtype == TC_DTYPE_FLOAT16 ||
           dtype == TC_DTYPE_BFLOAT16;
}

static int is_signed_int(tc_dtype dtype) {
    return dtype == TC_DTYPE_INT8 || dtype == TC_DTYPE_INT16 || dtype == TC_DTYPE_INT32 ||
           dtype == TC_DTYPE_INT64;
}

static double half_to_double(uint16_t h) {
    int exp = (h >> 10) & 0x1f;
    int mant = h & 0x3ff;
    double v;
    if (exp == 0)
        v = ldexp((double)mant, -24);
    else if (exp == 31)
        v = mant ? NAN : INFINITY;
    else
        v = ldexp((double)(mant + 1024), exp - 25);
    return (h & 0x8000) ? -v : v;
}

static double bfloat16_to_double(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Element i of a float tensor, widened to double. */
static double float_at(const tc_tensor *t, size_t i) {
    const uint8_t *p = (const uint8_t *)t->data;
    switch (t->dtype) {
    case TC_DTYPE_FLOAT32: {
        float f;
        memcpy(&f, p + i * 4, 4);
        return f;
    }
    case TC_DTYPE_FLOAT64: {
        double d;
        memcpy(&d, p + i * 8, 8);
        return d;
    }
    case TC_DTYPE_FLOAT16:
    case TC_DTYPE_BFLOAT16: {
        uint16_t h;
        memcpy(&h, p + i * 2, 2);
        return t->dtype == TC_DTYPE_FLOAT16 ? half_to_double(h) : bfloat16_to_double(h);
    }
    default: return NAN;
    }
}

/* Element i of a signed integer tensor. */
static int64_t sint_at(const tc_tensor *t, size_t i) {
    const uint8_t *p = (const uint8_t *)t->data;
    switch (t->dtype) {
    case TC_DTYPE_INT8: return (int8_t)p[i];
    case TC_DTYPE_INT16: {
        int16_t v;
        memcpy(&v, p + i * 2, 2);
        return v;
    }
    case TC_DTYPE_INT32: {
        int32_t v;
        memcpy(&v, p + i * 4, 4);
        return v;
    }
    case TC_DTYPE_INT64: {
        int64_t v;
        memcpy(&v, p + i * 8, 8);
        return v;
    }
    default: return 0;
    }
}

/* Element i of an unsigned integer or bool tensor. */
static uint64_t uint_at(const tc_tensor *t, size_t i) {
    const uint8_t *p = (const uint8_t *)t->data;
    switch (t->dtype) {
    case TC_DTYPE_UINT8:
    case TC_DTYPE_BOOL: return p[i];
    case TC_DTYPE_UINT16: {
        uint16_t v;
        memcpy(&v, p + i * 2, 2);
        return v;
    }
    case TC_DTYPE_UINT32: {
        uint32_t v;
        memcpy(&v, p + i * 4, 4);
        return v;
    }
    case TC_DTYPE_UINT64: {
        uint64_t v;
        memcpy(&v, p + i * 8, 8);
        return v;
    }
    default: return 0;
    }
}

void conf_format_shape(const tc_tensor *tensor, char *buf, size_t size) {
    size_t n = 0;
    n += (size_t)snprintf(buf, size, "[");
    for (int32_t d = 0; d < tensor->rank && d < TC_MAX_RANK && n < size; d++)
        n += (size_t)snprintf(buf + n, size - n, "%s%" PRId64, d ? "," : "", tensor->dims[d]);
    if (n < size) snprintf(buf + n, size - n, "]");
}

/* Element count of a tensor with a valid rank and non-negative dims, or -1. */
static int64_t element_count(const tc_tensor *t) {
    if (t->rank < 0 || t->rank > TC_MAX_RANK) return -1;
    int64_t count = 1;
    for (int32_t d = 0; d < t->rank; d++) {
        if (t->dims[d] < 0) return -1;
        if (t->dims[d] && count > INT64_MAX / t->dims[d]) return -1;
        count *= t->dims[d];
    }
    return count;
}

/* Writes the multi-index of flat element i, e.g. "[0,2,1]". */
static void format_index(const tc_tensor *t, size_t i, char *buf, size_t size) {
    int64_t idx[TC_MAX_RANK] = {0};
    for (int32_t d = t->rank - 1; d >= 0; d--) {
        int64_t dim = t->dims[d] ? t->dims[d] : 1;
        idx[d] = (int64_t)(i % (uint64_t)dim);
        i /= (uint64_t)dim;
    }
    tc_tensor tmp = *t;
    memcpy(tmp.dims, idx, sizeof idx);
    conf_format_shape(&tmp, buf, size);
}

static void format_value(const tc_tensor *t, size_t i, char *buf, size_t size) {
    if (is_float(t->dtype))
        snprintf(buf, size, t->dtype == TC_DTYPE_FLOAT64 ? "%.17g" : "%.9g", float_at(t, i));
    else if (is_signed_int(t->dtype))
        snprintf(buf, size, "%" PRId64, sint_at(t, i));
    else
        snprintf(buf, size, "%" PRIu64, uint_at(t, i));
}

/* Whether element i matches; *abs_err gets |got - expected| (INFINITY for a NaN/Inf mismatch). */
static int element_matches(const tc_tensor *got, const tc_tensor *exp, size_t i, conf_tolerance tol,
                           double *abs_err) {
    if (is_float(exp->dtype)) {
        double g = float_at(got, i), e = float_at(exp, i);
        if (isnan(e) || isnan(g)) {
            *abs_err = (isnan(e) && isnan(g)) ? 0.0 : INFINITY;
            return isnan(e) && isnan(g);
        }
        if (isinf(e) || isinf(g)) {
            *abs_err = g == e ? 0.0 : INFINITY;
            return g == e;
        }
        *abs_err = fabs(g - e);
        return *abs_err <= tol.atol + tol.rtol * fabs(e);
    }
    if (is_signed_int(exp->dtype)) {
        int64_t g = sint_at(got, i), e = sint_at(exp, i);
        *abs_err = fabs((double)g - (double)e);
        return g == e;
    }
    uint64_t g = uint_at(got, i), e = uint_at(exp, i);
    *abs_err = fabs((double)g - (double)e);
    return g == e;
}

int conf_compare(const tc_tensor *got, const tc_tensor *expected, conf_tolerance tol, char *msg,
                 size_t msg_size) {
    msg[0] = '\0';
    if (got->dtype != expected->dtype) {
        const char *g = tc_dtype_name(got->dtype), *e = tc_dtype_name(expected->dtype);
        snprintf(msg, msg_size, "dtype: got %s (%d), expected %s (%d)", g ? g : "?",
                 (int)got->dtype, e ? e : "?", (int)expected->dtype);
        return 0;
    }
    char gs[160], es[160];
    conf_format_shape(got, gs, sizeof gs);
    conf_format_shape(expected, es, sizeof es);
    int64_t count = element_count(expected);
    if (count < 0) {
        snprintf(msg, msg_size, "expected tensor has an invalid shape %s (rank %d)", es,
                 (int)expected->rank);
        return 0;
    }
    int same_shape = got->rank == expected->rank;
    for (int32_t d = 0; same_shape && d < got->rank; d++)
        same_shape = got->dims[d] == expected->dims[d];
    if (!same_shape) {
        snprintf(msg, msg_size, "shape: got %s, expected %s", gs, es);
        return 0;
    }
    size_t esize = tc_dtype_size(expected->dtype);
    size_t want = (size_t)count * esize;
    if (esize == 0 || expected->nbytes < want || (want && !expected->data)) {
        snprintf(msg, msg_size, "expected tensor %s has %zu bytes, %zu needed", es,
                 expected->nbytes, want);
        return 0;
    }
    if (got->nbytes != want || (want && !got->data)) {
        snprintf(msg, msg_size, "output tensor %s of %s has %zu bytes%s, expected %zu", gs,
                 tc_dtype_name(got->dtype), got->nbytes, got->data ? "" : " (data NULL)", want);
        return 0;
    }

    size_t first = 0, differ = 0;
    double max_err = 0.0;
    for (size_t i = 0; i < (size_t)count; i++) {
        double err;
        if (!element_matches(got, expected, i, tol, &err)) {
            if (differ++ == 0) first = i;
        }
        if (err > max_err || isnan(err)) max_err = err;
    }
    if (differ == 0) return 1;

    char idx[160], gv[64], ev[64];
    format_index(expected, first, idx, sizeof idx);
    format_value(got, first, gv, sizeof gv);
    format_value(expected, first, ev, sizeof ev);
    if (is_float(expected->dtype))
        snprintf(msg, msg_size,
                 "element %zu %s: got %s, expected %s; %zu of %" PRId64
                 " elements differ, max abs error %.3g (rtol %g, atol %g)",
                 first, idx, gv, ev, differ, count, max_err, tol.rtol, tol.atol);
    else
        snprintf(msg, msg_size,
                 "element %zu %s: got %s, expected %s; %zu of %" PRId64
                 " elements differ, max abs error %.17g",
                 first, idx, gv, ev, differ, count, max_err);
    return 0;
}
