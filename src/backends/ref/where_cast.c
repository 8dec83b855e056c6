/*
 * where_cast.c - reference kernels for Where (select between two broadcast
 * tensors by a bool condition) and Cast (conversion between every numeric type
 * and bool).
 *
 * Cast conversions: float -> integer truncates toward zero (NaN gives 0, values
 * beyond int64 saturate, narrower integers wrap like C and NumPy on x86);
 * anything -> bool is "not zero" (NaN is true); integer -> integer wraps;
 * float64 -> float16/bfloat16 rounds once (to nearest even) via a float32
 * rounded to odd. String, complex and the 4/8-bit float and integer types are
 * UNSUPPORTED.
 */
#include <math.h>
#include <string.h>

#include "backends/ref/broadcast.h"
#include "backends/ref/numeric.h"
#include "backends/ref/ref.h"

static const char *dname(tc_dtype d) { return tc_dtype_name(d) ? tc_dtype_name(d) : "unknown"; }

tc_status tc__ref_Where(const tc__kernel_ctx *ctx) {
    if (ctx->n_in != 3 || ctx->in[0] == NULL || ctx->in[1] == NULL || ctx->in[2] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects 3 inputs (condition, X, Y), got %d",
                        ctx->n_in);
    const tc__tensor *c = ctx->in[0], *x = ctx->in[1], *w = ctx->in[2];
    if (c->dtype != TC_DTYPE_BOOL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "condition has data type %s, expected bool",
                        dname(c->dtype));
    if (x->dtype != w->dtype)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Y has data type %s, expected %s like X",
                        dname(w->dtype), dname(x->dtype));
    size_t es = tc_dtype_size(x->dtype);
    if (es == 0) return tc__ref_unsupported_dtype(ctx, 1, x->dtype);
    tc_status st = tc__ref_check_io(ctx, 3, 0, x->dtype, NULL);
    if (st) return st;
    tc__tensor *y = ctx->out[0];
    tc__bcast b;
    if ((st = tc__bcast_init_tensors(&b, y, 3, ctx->in, ctx->err))) return st;
    const uint8_t *cs = c->data;
    const unsigned char *xs = x->data, *ws = w->data;
    unsigned char *ys = y->data;
    tc__bcast_iter it;
    tc__bcast_iter_init(&b, &it);
    for (int64_t r = 0; r < b.rows; r++, tc__bcast_iter_next(&b, &it)) {
        for (int64_t j = 0; j < b.inner; j++) {
            int64_t o = r * b.inner + j;
            const unsigned char *src = cs[it.off[0] + j * b.step[0]] ? xs + (size_t)(it.off[1] + j * b.step[1]) * es
                                                                       : ws + (size_t)(it.off[2] + j * b.step[2]) * es;
            memcpy(ys + (size_t)o * es, src, es);
        }
    }
    return TC_STATUS_OK;
}

/* ---- Cast ------------------------------------------------------------------- */

/* Name of an ONNX TensorProto data type number, including the ones tailcut cannot store. */
static const char *onnx_type_name(int64_t t) {
    static const char *const names[] = {
        "UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING", "BOOL", "FLOAT16",
        "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ",
        "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1", "FLOAT8E8M0", "UINT2", "INT2"};
    if (t >= 0 && t < (int64_t)(sizeof names / sizeof names[0])) return names[t];
    return "unknown";
}

/* double -> float rounded to odd: exact when representable, else the neighbour toward zero with its last bit set.
 * Rounding that to a narrower float (to nearest even) then equals rounding the double directly. */
static float f64_to_f32_odd(double d) {
    float f = (float)d;
    if ((double)f == d || isnan(d)) return f;
    if (fabs((double)f) > fabs(d)) f = nextafterf(f, 0.0f);
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u |= 1u;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Stores a double into element i of float tensor y with a single rounding. */
static void store_float(tc__tensor *y, int64_t i, double v) {
    switch (y->dtype) {
    case TC_DTYPE_FLOAT16: ((uint16_t *)y->data)[i] = tc__f32_to_f16(f64_to_f32_odd(v)); return;
    case TC_DTYPE_BFLOAT16: ((uint16_t *)y->data)[i] = tc__f32_to_bf16(f64_to_f32_odd(v)); return;
    default: tc__tensor_set_f64(y, i, v); return;
    }
}

tc_status tc__ref_Cast(const tc__kernel_ctx *ctx) {
    if (ctx->n_in != 1 || ctx->in[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects 1 input, got %d", ctx->n_in);
    const tc__tensor *x = ctx->in[0];
    if (!tc__attr_has(ctx->attrs, "to"))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute 'to' is missing");
    int64_t to = tc__attr_int(ctx->attrs, "to", 0);
    if (to < 0 || to > 64 || !tc__dtype_valid((tc_dtype)to))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "cast to %s (to=%lld) is not supported", onnx_type_name(to),
                        (long long)to);
    tc_dtype dt = (tc_dtype)to;
    tc__numclass scls = tc__numclass_of(x->dtype), dcls = tc__numclass_of(dt);
    if (scls == TC__NUM_NONE) return tc__ref_unsupported_dtype(ctx, 0, x->dtype);
    tc_status st = tc__ref_check_io(ctx, 1, 0, dt, x);
    if (st) return st;
    tc__tensor *y = ctx->out[0];
    int64_t n = tc__tensor_numel(x);
    if (x->dtype == dt) {
        if (n > 0) memcpy(y->data, x->data, (size_t)n * tc_dtype_size(dt));
        return TC_STATUS_OK;
    }
    for (int64_t i = 0; i < n; i++) {
        switch (scls) {
        case TC__NUM_FLOAT: {
            double v = tc__tensor_get_f64(x, i);
            if (dcls == TC__NUM_FLOAT) store_float(y, i, v);
            else if (dcls == TC__NUM_BOOL) ((uint8_t *)y->data)[i] = v != 0.0; /* NaN != 0 */
            else tc__tensor_set_i64(y, i, tc__f64_to_int_bits(v, dt));
            break;
        }
        case TC__NUM_SIGNED:
        case TC__NUM_BOOL: {
            int64_t v = tc__tensor_get_i64(x, i);
            if (dt == TC_DTYPE_FLOAT32) ((float *)y->data)[i] = (float)v;
            else if (dcls == TC__NUM_FLOAT) store_float(y, i, (double)v);
            else tc__tensor_set_i64(y, i, v);
            break;
        }
        case TC__NUM_UNSIGNED: {
            uint64_t v = tc__get_u64(x, i);
            if (dt == TC_DTYPE_FLOAT32) ((float *)y->data)[i] = (float)v;
            else if (dcls == TC__NUM_FLOAT) store_float(y, i, (double)v);
            else tc__set_u64(y, i, v);
            break;
        }
        case TC__NUM_NONE:
            break;
        }
    }
    return TC_STATUS_OK;
}
