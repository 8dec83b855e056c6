/*
 * import_tensor.c - decodes an ONNX TensorProto (initializer, TENSOR attribute or .pb file) into a
 * dense tensor: data type and shape checks, then the payload from raw_data, the typed repeated
 * fields or an external file. Sizes must match the shape exactly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/import_internal.h"
#include "onnx/onnx_import.h"

const char *tc__onnx_dtype_name(int32_t t) {
    static const char *const names[] = {
        "undefined", "float32", "uint8", "int8", "uint16", "int16", "int32", "int64", "string",
        "bool", "float16", "float64", "uint32", "uint64", "complex64", "complex128", "bfloat16",
        "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4", "int4",
        "float4e2m1", "float8e8m0"};
    if (t < 0 || (size_t)t >= sizeof names / sizeof names[0]) return "unknown";
    return names[t];
}

tc_status tc__onnx_dtype(int32_t t, const char *what, tc_dtype *out, tc__err *err) {
    switch (t) {
    case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 9: case 10: case 11: case 12:
    case 13: case 16:
        *out = (tc_dtype)t;
        return TC_STATUS_OK;
    default:
        *out = TC_DTYPE_UNDEFINED;
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "%s has data type %s (%d), which tailcut does not support",
                        what, tc__onnx_dtype_name(t), (int)t);
    }
}

/* The typed repeated fields of a TensorProto. */
enum field { F_FLOAT, F_INT32, F_STRING, F_INT64, F_DOUBLE, F_UINT64, F_COUNT };
static const char *const k_field_names[F_COUNT] = {"float_data", "int32_data", "string_data",
                                                   "int64_data", "double_data", "uint64_data"};

/* Which typed field carries values of dtype d (ONNX's rules). */
static enum field field_for(tc_dtype d) {
    switch (d) {
    case TC_DTYPE_FLOAT32: return F_FLOAT;
    case TC_DTYPE_FLOAT64: return F_DOUBLE;
    case TC_DTYPE_INT64: return F_INT64;
    case TC_DTYPE_UINT32: case TC_DTYPE_UINT64: return F_UINT64;
    default: return F_INT32;
    }
}

static size_t field_count(const Onnx__TensorProto *tp, enum field f) {
    switch (f) {
    case F_FLOAT: return tp->n_float_data;
    case F_INT32: return tp->n_int32_data;
    case F_STRING: return tp->n_string_data;
    case F_INT64: return tp->n_int64_data;
    case F_DOUBLE: return tp->n_double_data;
    case F_UINT64: return tp->n_uint64_data;
    case F_COUNT: break;
    }
    return 0;
}

tc_status tc__onnx_payload_alloc(const tc__onnx_tensor_ctx *ctx, size_t bytes, const char *what, void **out,
                                 tc__err *err) {
    size_t n = bytes ? bytes : 1;
    void *p = ctx->arena != NULL ? tc__arena_alloc(ctx->arena, n, 64) : calloc(1, n);
    if (p == NULL)
        return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory allocating %zu bytes for %s", bytes, what);
    *out = p;
    return TC_STATUS_OK;
}

/* Uses src (a message buffer of exactly `bytes`) as the payload when it can be adopted, else copies it. */
static tc_status payload_take(const tc__onnx_tensor_ctx *ctx, const void *src, size_t bytes, const char *what,
                              void **out, tc__err *err) {
    if (bytes > 0 && ctx->adopt && ctx->arena != NULL && tc__onnx_alloc_in_arena(src)) {
        *out = (void *)src;
        return TC_STATUS_OK;
    }
    tc_status st = tc__onnx_payload_alloc(ctx, bytes, what, out, err);
    if (st == TC_STATUS_OK && bytes > 0) memcpy(*out, src, bytes);
    return st;
}

/* Narrows int32_data into a 1- or 2-byte dtype, checking each value's range. */
static tc_status narrow_int32(const Onnx__TensorProto *tp, tc_dtype dt, void *dst, const char *what,
                              tc__err *err) {
    int32_t lo, hi;
    switch (dt) {
    case TC_DTYPE_INT8: lo = -128; hi = 127; break;
    case TC_DTYPE_UINT8: lo = 0; hi = 255; break;
    case TC_DTYPE_BOOL: lo = 0; hi = 1; break;
    case TC_DTYPE_INT16: lo = -32768; hi = 32767; break;
    case TC_DTYPE_UINT16: lo = 0; hi = 65535; break;
    default: lo = -32768; hi = 65535; break; /* float16/bfloat16 bit patterns, signed or not */
    }
    size_t es = tc_dtype_size(dt);
    for (size_t i = 0; i < tp->n_int32_data; i++) {
        int32_t v = tp->int32_data[i];
        if (v < lo || v > hi)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "%s (%s): int32_data[%zu] = %d is out of range [%d, %d]",
                            what, tc_dtype_name(dt), i, (int)v, (int)lo, (int)hi);
        if (es == 1) {
            ((uint8_t *)dst)[i] = (uint8_t)(v & 0xff);
        } else {
            uint16_t u = (uint16_t)((uint32_t)v & 0xffffu);
            memcpy((unsigned char *)dst + 2 * i, &u, 2);
        }
    }
    return TC_STATUS_OK;
}

/* Fills the payload from the typed field that belongs to dt (count already checked). */
static tc_status decode_typed(const tc__onnx_tensor_ctx *ctx, const Onnx__TensorProto *tp, tc_dtype dt,
                              size_t bytes, const char *what, void **data, tc__err *err) {
    switch (dt) {
    case TC_DTYPE_FLOAT32: return payload_take(ctx, tp->float_data, bytes, what, data, err);
    case TC_DTYPE_FLOAT64: return payload_take(ctx, tp->double_data, bytes, what, data, err);
    case TC_DTYPE_INT64: return payload_take(ctx, tp->int64_data, bytes, what, data, err);
    case TC_DTYPE_INT32: return payload_take(ctx, tp->int32_data, bytes, what, data, err);
    case TC_DTYPE_UINT64: return payload_take(ctx, tp->uint64_data, bytes, what, data, err);
    case TC_DTYPE_UINT32: {
        tc_status st = tc__onnx_payload_alloc(ctx, bytes, what, data, err);
        if (st != TC_STATUS_OK) return st;
        for (size_t i = 0; i < tp->n_uint64_data; i++) {
            uint64_t v = tp->uint64_data[i];
            if (v > UINT32_MAX)
                return tc__fail(err, TC_STATUS_CORRUPT_FILE, "%s (uint32): uint64_data[%zu] = %llu is out of range",
                                what, i, (unsigned long long)v);
            uint32_t u = (uint32_t)v;
            memcpy((unsigned char *)*data + 4 * i, &u, 4);
        }
        return TC_STATUS_OK;
    }
    default: {
        tc_status st = tc__onnx_payload_alloc(ctx, bytes, what, data, err);
        if (st != TC_STATUS_OK) return st;
        return narrow_int32(tp, dt, *data, what, err);
    }
    }
}

/* Reads the element type and shape; fills out's dtype/rank/dims and the byte size. */
static tc_status decode_header(const Onnx__TensorProto *tp, const char *what, tc__tensor *out, size_t *bytes,
                               tc__err *err) {
    if (!tp->has_data_type || tp->data_type == 0)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "%s has no data type", what);
    tc_dtype dt;
    tc_status st = tc__onnx_dtype(tp->data_type, what, &dt, err);
    if (st != TC_STATUS_OK) return st;
    if (tp->n_dims > TC_MAX_RANK)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "%s has rank %zu, above the maximum of %d", what, tp->n_dims,
                        TC_MAX_RANK);
    out->dtype = dt;
    out->rank = (int32_t)tp->n_dims;
    for (size_t i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "%s has a negative dimension %lld (axis %zu)", what,
                            (long long)tp->dims[i], i);
        out->dims[i] = tp->dims[i];
    }
    int64_t numel = tc__numel(out->rank, out->dims);
    char shape[160];
    if (numel < 0)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "%s has shape %s, more than 2^40 elements", what,
                        tc__shape_str(out->rank, out->dims, shape, sizeof shape));
    if (tc__mul_overflow_size((size_t)numel, tc_dtype_size(dt), bytes))
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "%s: byte size of shape %s overflows", what,
                        tc__shape_str(out->rank, out->dims, shape, sizeof shape));
    return TC_STATUS_OK;
}

/* Picks the payload source and checks that sizes agree with the shape; then fills out->data. */
static tc_status decode_payload(const tc__onnx_tensor_ctx *ctx, const Onnx__TensorProto *tp, const char *what,
                                tc__tensor *out, size_t bytes, tc__err *err) {
    const tc_dtype dt = out->dtype;
    char shape[160];
    tc__shape_str(out->rank, out->dims, shape, sizeof shape);
    const size_t numel = bytes / tc_dtype_size(dt);
    const enum field want = field_for(dt);
    size_t typed_total = 0;
    for (int f = 0; f < F_COUNT; f++) {
        size_t n = field_count(tp, (enum field)f);
        typed_total += n; /* each count is bounded by the message size, no overflow */
        if (n > 0 && f != (int)want)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "%s (%s) carries %zu values in %s, which is not the field for %s",
                            what, tc_dtype_name(dt), n, k_field_names[f], tc_dtype_name(dt));
    }
    if (tp->segment != NULL)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "%s is segmented (split across several TensorProtos)", what);

    int location = tp->has_data_location ? (int)tp->data_location : 0;
    void *data = NULL;
    tc_status st;
    if (location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        if (tp->has_raw_data || typed_total > 0)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "%s has external data and also inline data", what);
        if (!ctx->external_ok)
            return tc__fail(err, TC_STATUS_UNSUPPORTED, "%s refers to external data, which a standalone tensor file cannot use",
                            what);
        st = tc__onnx_external_read(ctx, tp, what, bytes, &data, err);
    } else if (location != ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT) {
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "%s has an unknown data_location %d", what, location);
    } else if (tp->has_raw_data) {
        if (typed_total > 0)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "%s has both raw_data and %s", what, k_field_names[want]);
        if (tp->raw_data.len != bytes)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "%s: raw_data has %zu bytes, expected %zu (%s, shape %s)",
                            what, tp->raw_data.len, bytes, tc_dtype_name(dt), shape);
        st = payload_take(ctx, tp->raw_data.data, bytes, what, &data, err);
    } else {
        size_t n = field_count(tp, want);
        if (n != numel)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "%s: %s has %zu values, expected %zu (%s, shape %s)", what,
                            k_field_names[want], n, numel, tc_dtype_name(dt), shape);
        st = decode_typed(ctx, tp, dt, bytes, what, &data, err);
    }
    if (st == TC_STATUS_OK && dt == TC_DTYPE_BOOL) {
        unsigned char *b = data;
        for (size_t i = 0; i < bytes; i++) b[i] = b[i] != 0;
    }
    if (st != TC_STATUS_OK) {
        if (ctx->arena == NULL) free(data);
        return st;
    }
    out->data = data;
    out->nbytes = bytes;
    return TC_STATUS_OK;
}

tc_status tc__onnx_tensor_decode(const tc__onnx_tensor_ctx *ctx, const Onnx__TensorProto *tp, const char *what,
                                 tc__tensor *out, tc__err *err) {
    memset(out, 0, sizeof *out);
    size_t bytes = 0;
    tc_status st = decode_header(tp, what, out, &bytes, err);
    if (st == TC_STATUS_OK) st = decode_payload(ctx, tp, what, out, bytes, err);
    if (st != TC_STATUS_OK) memset(out, 0, sizeof *out);
    return st;
}

tc_status tc__onnx_tensor_from_pb(const void *data, size_t size, tc__tensor *out, char *name, size_t name_size,
                                  tc__err *err) {
    if (out == NULL) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "tensor_from_pb: out is NULL");
    memset(out, 0, sizeof *out);
    if (name != NULL && name_size > 0) name[0] = '\0';
    if (data == NULL && size > 0) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "tensor_from_pb: data is NULL");
    if (size == 0)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "not a valid ONNX TensorProto: the input is empty (0 bytes)");
    /* No arena: small blocks and payloads alike come from malloc; the payload is copied out. */
    tc__onnx_alloc alloc;
    tc__onnx_alloc_init(&alloc, NULL);
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(&alloc.pc, size, data);
    if (tp == NULL) {
        if (alloc.failed)
            return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory parsing a TensorProto of %zu bytes", size);
        return tc__fail(err, TC_STATUS_CORRUPT_FILE,
                        "not a valid ONNX TensorProto: protobuf parsing failed (%zu bytes)", size);
    }
    const char *tname = tc__onnx_str(tp->name);
    char what[300];
    snprintf(what, sizeof what, "tensor '%s'", tname);
    tc__onnx_tensor_ctx ctx = {.arena = NULL, .adopt = false, .external_ok = false, .base_dir = NULL};
    tc_status st = tc__onnx_tensor_decode(&ctx, tp, what, out, err);
    if (st == TC_STATUS_OK && name != NULL && name_size > 0) snprintf(name, name_size, "%s", tname);
    onnx__tensor_proto__free_unpacked(tp, &alloc.pc);
    return st;
}
