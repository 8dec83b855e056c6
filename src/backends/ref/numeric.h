/*
 * numeric.h - element classes and exact conversions shared by the elementwise
 * and reduction reference kernels.
 *
 * Kernels compute in one of three domains chosen by the dtype: floats in double,
 * signed integers in int64, unsigned integers (and bool) in uint64. Values move
 * between a tensor and a domain with tc__tensor_get/set_* (uint64 round-trips
 * bit-exactly through the int64 accessors).
 */
#ifndef TC_BACKENDS_REF_NUMERIC_H
#define TC_BACKENDS_REF_NUMERIC_H

#include <math.h>
#include <stdint.h>

#include "backends/ref/ref.h"
#include "core/tensor.h"

typedef enum tc__numclass {
    TC__NUM_NONE = 0, /* not a numeric type the kernels handle */
    TC__NUM_FLOAT,    /* float32, float64, float16, bfloat16: computed in double */
    TC__NUM_SIGNED,   /* int8..int64: computed in int64 */
    TC__NUM_UNSIGNED, /* uint8..uint64: computed in uint64 */
    TC__NUM_BOOL,     /* bool: 0/1 */
} tc__numclass;

static inline tc__numclass tc__numclass_of(tc_dtype d) {
    switch (d) {
    case TC_DTYPE_FLOAT32: case TC_DTYPE_FLOAT64: case TC_DTYPE_FLOAT16: case TC_DTYPE_BFLOAT16:
        return TC__NUM_FLOAT;
    case TC_DTYPE_INT8: case TC_DTYPE_INT16: case TC_DTYPE_INT32: case TC_DTYPE_INT64:
        return TC__NUM_SIGNED;
    case TC_DTYPE_UINT8: case TC_DTYPE_UINT16: case TC_DTYPE_UINT32: case TC_DTYPE_UINT64:
        return TC__NUM_UNSIGNED;
    case TC_DTYPE_BOOL:
        return TC__NUM_BOOL;
    case TC_DTYPE_UNDEFINED:
        break;
    }
    return TC__NUM_NONE;
}

static inline uint64_t tc__get_u64(const tc__tensor *t, int64_t i) { return (uint64_t)tc__tensor_get_i64(t, i); }
static inline void tc__set_u64(tc__tensor *t, int64_t i, uint64_t v) { tc__tensor_set_i64(t, i, (int64_t)v); }

/* Smallest / largest value of a signed integer dtype, and largest of an unsigned one or bool. */
static inline int64_t tc__dtype_min_i64(tc_dtype d) {
    switch (d) {
    case TC_DTYPE_INT8: return INT8_MIN;
    case TC_DTYPE_INT16: return INT16_MIN;
    case TC_DTYPE_INT32: return INT32_MIN;
    default: return INT64_MIN;
    }
}
static inline int64_t tc__dtype_max_i64(tc_dtype d) {
    switch (d) {
    case TC_DTYPE_INT8: return INT8_MAX;
    case TC_DTYPE_INT16: return INT16_MAX;
    case TC_DTYPE_INT32: return INT32_MAX;
    default: return INT64_MAX;
    }
}
static inline uint64_t tc__dtype_max_u64(tc_dtype d) {
    switch (d) {
    case TC_DTYPE_BOOL: return 1;
    case TC_DTYPE_UINT8: return UINT8_MAX;
    case TC_DTYPE_UINT16: return UINT16_MAX;
    case TC_DTYPE_UINT32: return UINT32_MAX;
    default: return UINT64_MAX;
    }
}

/*
 * Converts a double to the integer domain of dtype d as C and NumPy's astype do
 * on x86 for in-range values: truncation toward zero. Defined everywhere:
 * NaN gives 0, values beyond int64 (uint64 for UINT64) saturate, and narrower
 * types wrap modulo 2^bits after truncation to int64. Returns the bit pattern
 * for tc__tensor_set_i64.
 */
static inline int64_t tc__f64_to_int_bits(double v, tc_dtype d) {
    if (isnan(v)) return 0;
    if (d == TC_DTYPE_UINT64 && v >= 9223372036854775808.0) {
        if (v >= 18446744073709551616.0) return (int64_t)UINT64_MAX;
        return (int64_t)(uint64_t)v;
    }
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

/* Writes a double into element i of an integer/bool/float tensor with the conversion above. */
static inline void tc__set_from_f64(tc__tensor *t, int64_t i, double v) {
    if (tc__dtype_is_int(t->dtype)) tc__tensor_set_i64(t, i, tc__f64_to_int_bits(v, t->dtype));
    else tc__tensor_set_f64(t, i, v);
}

/*
 * Checks that a kernel's input i is present and output o exists with dtype and, when
 * same_shape_as is not NULL, that tensor's shape. Shape inference guarantees this;
 * the check keeps a mismatched call from touching memory out of bounds.
 */
static inline tc_status tc__ref_check_io(const tc__kernel_ctx *ctx, int n_required_in, int o, tc_dtype dtype,
                                         const tc__tensor *same_shape_as) {
    for (int i = 0; i < n_required_in; i++)
        if (i >= ctx->n_in || ctx->in[i] == NULL ||
            (ctx->in[i]->data == NULL && tc__tensor_numel(ctx->in[i]) != 0))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "required input %d is missing", i);
    if (o >= ctx->n_out || ctx->out[o] == NULL ||
        (ctx->out[o]->data == NULL && tc__tensor_numel(ctx->out[o]) != 0))
        return tc__fail(ctx->err, TC_STATUS_INTERNAL, "output %d is not allocated", o);
    const tc__tensor *y = ctx->out[o];
    if (y->dtype != dtype)
        return tc__fail(ctx->err, TC_STATUS_INTERNAL, "output %d has data type %s, expected %s", o,
                        tc_dtype_name(y->dtype) ? tc_dtype_name(y->dtype) : "?",
                        tc_dtype_name(dtype) ? tc_dtype_name(dtype) : "?");
    if (same_shape_as != NULL) {
        bool same = y->rank == same_shape_as->rank;
        for (int32_t i = 0; same && i < y->rank; i++) same = y->dims[i] == same_shape_as->dims[i];
        if (!same) {
            char a[160], b[160];
            return tc__fail(ctx->err, TC_STATUS_INTERNAL, "output %d has shape %s, expected %s", o,
                            tc__shape_str(y->rank, y->dims, a, sizeof a),
                            tc__shape_str(same_shape_as->rank, same_shape_as->dims, b, sizeof b));
        }
    }
    return TC_STATUS_OK;
}

#endif
