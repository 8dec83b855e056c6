/* tensor.c - dtype sizes, element counts, tensor allocation and element conversion. */
#include "core/tensor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

size_t tc_dtype_size(tc_dtype dtype) {
    switch (dtype) {
    case TC_DTYPE_FLOAT32: case TC_DTYPE_INT32: case TC_DTYPE_UINT32: return 4;
    case TC_DTYPE_UINT8: case TC_DTYPE_INT8: case TC_DTYPE_BOOL: return 1;
    case TC_DTYPE_UINT16: case TC_DTYPE_INT16: case TC_DTYPE_FLOAT16: case TC_DTYPE_BFLOAT16: return 2;
    case TC_DTYPE_INT64: case TC_DTYPE_FLOAT64: case TC_DTYPE_UINT64: return 8;
    case TC_DTYPE_UNDEFINED: break;
    }
    return 0;
}

const char *tc_dtype_name(tc_dtype dtype) {
    switch (dtype) {
    case TC_DTYPE_FLOAT32: return "float32";
    case TC_DTYPE_UINT8: return "uint8";
    case TC_DTYPE_INT8: return "int8";
    case TC_DTYPE_UINT16: return "uint16";
    case TC_DTYPE_INT16: return "int16";
    case TC_DTYPE_INT32: return "int32";
    case TC_DTYPE_INT64: return "int64";
    case TC_DTYPE_BOOL: return "bool";
    case TC_DTYPE_FLOAT16: return "float16";
    case TC_DTYPE_FLOAT64: return "float64";
    case TC_DTYPE_UINT32: return "uint32";
    case TC_DTYPE_UINT64: return "uint64";
    case TC_DTYPE_BFLOAT16: return "bfloat16";
    case TC_DTYPE_UNDEFINED: break;
    }
    return NULL;
}

bool tc__dtype_valid(tc_dtype dtype) { return tc_dtype_size(dtype) != 0; }

tc_status tc__check_input_dtype(const char *name, tc_dtype want, tc_dtype got, tc__err *err) {
    if (want == TC_DTYPE_UNDEFINED || want == got) return TC_STATUS_OK;
    const char *w = tc_dtype_name(want), *g = tc_dtype_name(got);
    if (g == NULL)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "input '%s' has an invalid data type %d, the model takes %s",
                        name, (int)got, w ? w : "?");
    if (w == NULL) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "input '%s' has an unsupported data type", name);
    /* NumPy spells every type as tc_dtype_name does except bool (np.bool_); bfloat16 comes from ml_dtypes. */
    const char *cast_mod = want == TC_DTYPE_BFLOAT16 ? "ml_dtypes." : "np.";
    const char *cast_type = want == TC_DTYPE_BOOL ? "bool_" : w;
    return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                    "input '%s' is %s, the model takes %s: cast it (numpy: a.astype(%s%s))", name, g, w, cast_mod,
                    cast_type);
}

int64_t tc__numel(int32_t rank, const int64_t *dims) {
    if (rank < 0 || rank > TC_MAX_RANK) return -1;
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] < 0) return -1;
        if (tc__mul_overflow_i64(n, dims[i], &n) || n > TC__MAX_NUMEL) return -1;
    }
    return n;
}

tc_status tc__tensor_alloc(tc__tensor *t, tc_dtype dtype, int32_t rank, const int64_t *dims, tc__err *err) {
    memset(t, 0, sizeof *t);
    size_t es = tc_dtype_size(dtype);
    if (es == 0) return tc__fail(err, TC_STATUS_UNSUPPORTED, "unsupported data type %d", (int)dtype);
    if (rank < 0 || rank > TC_MAX_RANK)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "rank %d is above the maximum of %d", (int)rank, TC_MAX_RANK);
    int64_t n = tc__numel(rank, dims);
    if (n < 0) {
        char buf[160];
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "invalid or too large tensor shape %s",
                        tc__shape_str(rank, dims, buf, sizeof buf));
    }
    size_t bytes;
    if (tc__mul_overflow_size((size_t)n, es, &bytes))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "tensor byte size overflows");
    void *p = calloc(1, bytes ? bytes : 1);
    if (p == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory allocating %zu bytes", bytes);
    t->dtype = dtype;
    t->rank = rank;
    for (int32_t i = 0; i < rank; i++) t->dims[i] = dims[i];
    t->data = p;
    t->nbytes = bytes;
    return TC_STATUS_OK;
}

void tc__tensor_free(tc__tensor *t) {
    if (t == NULL) return;
    free(t->data);
    memset(t, 0, sizeof *t);
}

double tc__tensor_get_f64(const tc__tensor *t, int64_t i) {
    const void *p = t->data;
    switch (t->dtype) {
    case TC_DTYPE_FLOAT32: return ((const float *)p)[i];
    case TC_DTYPE_FLOAT64: return ((const double *)p)[i];
    case TC_DTYPE_FLOAT16: return tc__f16_to_f32(((const uint16_t *)p)[i]);
    case TC_DTYPE_BFLOAT16: return tc__bf16_to_f32(((const uint16_t *)p)[i]);
    case TC_DTYPE_INT8: return ((const int8_t *)p)[i];
    case TC_DTYPE_UINT8: return ((const uint8_t *)p)[i];
    case TC_DTYPE_INT16: return ((const int16_t *)p)[i];
    case TC_DTYPE_UINT16: return ((const uint16_t *)p)[i];
    case TC_DTYPE_INT32: return ((const int32_t *)p)[i];
    case TC_DTYPE_UINT32: return ((const uint32_t *)p)[i];
    case TC_DTYPE_INT64: return (double)((const int64_t *)p)[i];
    case TC_DTYPE_UINT64: return (double)((const uint64_t *)p)[i];
    case TC_DTYPE_BOOL: return ((const uint8_t *)p)[i] ? 1.0 : 0.0;
    case TC_DTYPE_UNDEFINED: break;
    }
    return 0.0;
}

/* Float to integer conversion that stays defined (saturates, NaN -> 0). */
static int64_t f64_to_i64(double v) {
    if (isnan(v)) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

int64_t tc__tensor_get_i64(const tc__tensor *t, int64_t i) {
    const void *p = t->data;
    switch (t->dtype) {
    case TC_DTYPE_INT8: return ((const int8_t *)p)[i];
    case TC_DTYPE_UINT8: return ((const uint8_t *)p)[i];
    case TC_DTYPE_INT16: return ((const int16_t *)p)[i];
    case TC_DTYPE_UINT16: return ((const uint16_t *)p)[i];
    case TC_DTYPE_INT32: return ((const int32_t *)p)[i];
    case TC_DTYPE_UINT32: return ((const uint32_t *)p)[i];
    case TC_DTYPE_INT64: return ((const int64_t *)p)[i];
    case TC_DTYPE_UINT64: return (int64_t)((const uint64_t *)p)[i];
    case TC_DTYPE_BOOL: return ((const uint8_t *)p)[i] ? 1 : 0;
    default: return f64_to_i64(tc__tensor_get_f64(t, i));
    }
}

void tc__tensor_set_f64(tc__tensor *t, int64_t i, double v) {
    void *p = t->data;
    switch (t->dtype) {
    case TC_DTYPE_FLOAT32: ((float *)p)[i] = (float)v; return;
    case TC_DTYPE_FLOAT64: ((double *)p)[i] = v; return;
    case TC_DTYPE_FLOAT16: ((uint16_t *)p)[i] = tc__f32_to_f16((float)v); return;
    case TC_DTYPE_BFLOAT16: ((uint16_t *)p)[i] = tc__f32_to_bf16((float)v); return;
    case TC_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0.0; return;
    default: tc__tensor_set_i64(t, i, f64_to_i64(v)); return;
    }
}

void tc__tensor_set_i64(tc__tensor *t, int64_t i, int64_t v) {
    void *p = t->data;
    switch (t->dtype) {
    case TC_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)v; return;
    case TC_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; return;
    case TC_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)v; return;
    case TC_DTYPE_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; return;
    case TC_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)v; return;
    case TC_DTYPE_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; return;
    case TC_DTYPE_INT64: ((int64_t *)p)[i] = v; return;
    case TC_DTYPE_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; return;
    case TC_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; return;
    default: tc__tensor_set_f64(t, i, (double)v); return;
    }
}

float tc__f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t u;
    if (exp == 0) {
        if (man == 0) {
            u = sign;
        } else { /* subnormal: value = man * 2^-24 */
            float f = (float)man * 5.9604644775390625e-8f;
            return sign ? -f : f;
        }
    } else if (exp == 31) {
        u = sign | 0x7f800000u | (man << 13);
    } else {
        u = sign | ((exp + 112u) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

uint16_t tc__f32_to_f16(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t exp = (u >> 23) & 0xffu;
    uint32_t man = u & 0x7fffffu;
    if (exp == 255) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
    int32_t e = (int32_t)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10) return (uint16_t)sign;
        man |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t half = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1u))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = sign | ((uint32_t)e << 10) | (man >> 13);
    uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) half++; /* may carry into exp: correct */
    return (uint16_t)half;
}

uint16_t tc__f32_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

const char *tc__shape_str(int32_t rank, const int64_t *dims, char *buf, size_t size) {
    if (size == 0) return buf;
    buf[0] = '\0';
    if (rank == 0) {
        snprintf(buf, size, "scalar");
        return buf;
    }
    size_t off = 0;
    for (int32_t i = 0; i < rank && i < TC_MAX_RANK && off < size; i++) {
        int w = snprintf(buf + off, size - off, "%s%lld", i ? "x" : "", (long long)dims[i]);
        if (w < 0) break;
        off += (size_t)w;
    }
    return buf;
}

/* Public wrappers. */
tc_status tc_tensor_alloc(tc_dtype dtype, int32_t rank, const int64_t *dims, tc_tensor *tensor, tc_error *error) {
    tc__err err = {0};
    if (tensor == NULL || (rank > 0 && dims == NULL)) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "tc_tensor_alloc: NULL argument");
        tc__err_export(&err, error);
        return err.status;
    }
    tc_status st = tc__tensor_alloc(tensor, dtype, rank, dims, &err);
    if (st) tc__err_export(&err, error);
    return st;
}

void tc_tensor_free(tc_tensor *tensor) { tc__tensor_free(tensor); }
