/*
 * tensor.h - the internal tensor (same layout as the public tc_tensor) and
 * helpers for element counts, byte sizes and FP16/BF16 conversion.
 */
#ifndef TC_CORE_TENSOR_H
#define TC_CORE_TENSOR_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "tailcut/tailcut.h"

/* Internal code uses the public struct directly: dense, row-major. */
typedef tc_tensor tc__tensor;

/* Upper bound on the number of elements of any tensor the library creates (2^40). */
#define TC__MAX_NUMEL ((int64_t)1 << 40)

/* Element count of dims[0..rank); -1 if a dim is negative or the product overflows TC__MAX_NUMEL. */
int64_t tc__numel(int32_t rank, const int64_t *dims);
static inline int64_t tc__tensor_numel(const tc__tensor *t) { return tc__numel(t->rank, t->dims); }

/* Strides (in elements) of tensor t seen through NumPy broadcasting to an output of rank r and dims out_dims (0 on the
 * dims it broadcasts along); false when t does not broadcast to that shape. */
static inline bool tc__bcast_strides(const tc__tensor *t, int32_t r, const int64_t *out_dims, int64_t *strides) {
    if (t->rank > r) return false;
    int64_t s = 1;
    for (int32_t i = r - 1; i >= 0; i--) {
        int32_t ti = i - (r - t->rank);
        if (ti < 0) {
            strides[i] = 0;
            continue;
        }
        if (t->dims[ti] != out_dims[i] && t->dims[ti] != 1) return false;
        strides[i] = t->dims[ti] == 1 ? 0 : s;
        s *= t->dims[ti];
    }
    return true;
}

/* True for dtypes the library can store (sizes known). */
bool tc__dtype_valid(tc_dtype dtype);
/*
 * The one check of a caller's tensor type against a graph input's: OK when they match (or the input's type is
 * unknown), else TC_STATUS_INVALID_ARGUMENT with a reason naming the input, both types and the cast to apply
 * ("input 'x' is float64, the model takes float32: cast it (numpy: a.astype(np.float32))"). The bytes of
 * another type are never reinterpreted.
 */
tc_status tc__check_input_dtype(const char *name, tc_dtype want, tc_dtype got, tc__err *err);
static inline bool tc__dtype_is_float(tc_dtype d) {
    return d == TC_DTYPE_FLOAT32 || d == TC_DTYPE_FLOAT64 || d == TC_DTYPE_FLOAT16 ||
           d == TC_DTYPE_BFLOAT16;
}
static inline bool tc__dtype_is_int(tc_dtype d) {
    return d == TC_DTYPE_INT8 || d == TC_DTYPE_UINT8 || d == TC_DTYPE_INT16 || d == TC_DTYPE_UINT16 ||
           d == TC_DTYPE_INT32 || d == TC_DTYPE_UINT32 || d == TC_DTYPE_INT64 || d == TC_DTYPE_UINT64;
}

/*
 * Allocates (calloc) a tensor's buffer for dtype/rank/dims with overflow checks.
 * At least one byte is allocated so that data is never NULL, even for 0 elements.
 */
tc_status tc__tensor_alloc(tc__tensor *t, tc_dtype dtype, int32_t rank, const int64_t *dims, tc__err *err);
void tc__tensor_free(tc__tensor *t);

/* Reads element i of any numeric/bool tensor as double / int64 (conversion as C casts). */
double tc__tensor_get_f64(const tc__tensor *t, int64_t i);
int64_t tc__tensor_get_i64(const tc__tensor *t, int64_t i);
/* Writes element i, converting from double / int64 (float types round to nearest even). */
void tc__tensor_set_f64(tc__tensor *t, int64_t i, double v);
void tc__tensor_set_i64(tc__tensor *t, int64_t i, int64_t v);

/* IEEE half and bfloat16 conversions (round to nearest even; NaN/Inf preserved). */
float tc__f16_to_f32(uint16_t h);
uint16_t tc__f32_to_f16(float f);
static inline float tc__bf16_to_f32(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
uint16_t tc__f32_to_bf16(float f);

/* Formats a shape as "1x3x224x224" ("scalar" for rank 0) into buf; returns buf. */
const char *tc__shape_str(int32_t rank, const int64_t *dims, char *buf, size_t size);

#endif
