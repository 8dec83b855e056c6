/*
 * shape_ops.c - reference kernels for the shape-manipulating operators: Shape, Size,
 * Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout (inference), Expand, Tile,
 * ConstantOfShape, Range and Constant. Data is copied by element size, so every dtype
 * works. Kernels check the output shape they were given against their inputs and fail
 * rather than read or write out of bounds.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backends/ref/ref.h"

/* Fails with INTERNAL when output o does not have the expected dtype and shape. */
static tc_status check_out(const tc__kernel_ctx *ctx, int o, tc_dtype dtype, int32_t rank, const int64_t *dims) {
    const tc__tensor *t = ctx->out[o];
    bool ok = t->dtype == dtype && t->rank == rank && t->data != NULL;
    for (int32_t i = 0; ok && i < rank; i++) ok = t->dims[i] == dims[i];
    if (ok) return TC_STATUS_OK;
    char a[160], b[160];
    return tc__fail(ctx->err, TC_STATUS_INTERNAL, "output %d was given shape %s (%s) but the inputs give %s (%s)", o,
                    tc__shape_str(t->rank, t->dims, a, sizeof a),
                    tc_dtype_name(t->dtype) ? tc_dtype_name(t->dtype) : "?", tc__shape_str(rank, dims, b, sizeof b),
                    tc_dtype_name(dtype) ? tc_dtype_name(dtype) : "?");
}

/* Copies input 0 to output o unchanged (the output's shape may differ, its size may not). */
static tc_status copy_input(const tc__kernel_ctx *ctx, int o) {
    const tc__tensor *in = ctx->in[0];
    const tc__tensor *out = ctx->out[o];
    if (out->dtype != in->dtype || tc__tensor_numel(out) != tc__tensor_numel(in) || out->nbytes < in->nbytes ||
        out->data == NULL) {
        char a[160], b[160];
        return tc__fail(ctx->err, TC_STATUS_INTERNAL, "output %d was given shape %s but the input is %s", o,
                        tc__shape_str(out->rank, out->dims, a, sizeof a),
                        tc__shape_str(in->rank, in->dims, b, sizeof b));
    }
    if (in->nbytes > 0) memcpy(out->data, in->data, in->nbytes);
    return TC_STATUS_OK;
}

/* ---- Shape, Size -------------------------------------------------------------------- */

tc_status tc__ref_Shape(const tc__kernel_ctx *ctx) {
    const tc__tensor *in = ctx->in[0];
    int64_t r = in->rank, start = 0, end = r;
    if (ctx->opset >= 15) {
        start = tc__attr_int(ctx->attrs, "start", 0);
        end = tc__attr_int(ctx->attrs, "end", r);
    }
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = start < 0 ? 0 : start > r ? r : start;
    end = end < 0 ? 0 : end > r ? r : end;
    int64_t len = end > start ? end - start : 0;
    tc_status st = check_out(ctx, 0, TC_DTYPE_INT64, 1, &len);
    if (st) return st;
    int64_t *o = ctx->out[0]->data;
    for (int64_t i = 0; i < len; i++) o[i] = in->dims[start + i];
    return TC_STATUS_OK;
}

tc_status tc__ref_Size(const tc__kernel_ctx *ctx) {
    tc_status st = check_out(ctx, 0, TC_DTYPE_INT64, 0, NULL);
    if (st) return st;
    *(int64_t *)ctx->out[0]->data = tc__tensor_numel(ctx->in[0]);
    return TC_STATUS_OK;
}

/* ---- Copies: Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout --------------------- */

tc_status tc__ref_Reshape(const tc__kernel_ctx *ctx) { return copy_input(ctx, 0); }
tc_status tc__ref_Flatten(const tc__kernel_ctx *ctx) { return copy_input(ctx, 0); }
tc_status tc__ref_Squeeze(const tc__kernel_ctx *ctx) { return copy_input(ctx, 0); }
tc_status tc__ref_Unsqueeze(const tc__kernel_ctx *ctx) { return copy_input(ctx, 0); }
tc_status tc__ref_Identity(const tc__kernel_ctx *ctx) { return copy_input(ctx, 0); }

/* Inference-mode Dropout is the identity with an all-true mask. Training mode with a
 * ratio above 0 drops random elements, which the reference backend does not do. */
tc_status tc__ref_Dropout(const tc__kernel_ctx *ctx) {
    if (ctx->opset >= 12) {
        const tc__tensor *ratio = ctx->n_in > 1 ? ctx->in[1] : NULL;
        const tc__tensor *mode = ctx->n_in > 2 ? ctx->in[2] : NULL;
        if ((ratio && tc__tensor_numel(ratio) != 1) || (mode && tc__tensor_numel(mode) != 1))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "ratio and training_mode must be scalars");
        double r = ratio ? tc__tensor_get_f64(ratio, 0) : 0.5;
        if (mode && tc__tensor_get_i64(mode, 0) != 0 && r != 0.0)
            return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED,
                            "training_mode is true with ratio %g: random dropout is not supported", r);
    }
    tc_status st = copy_input(ctx, 0);
    if (st) return st;
    if (ctx->n_out > 1 && ctx->out[1] != NULL) {
        tc__tensor *m = ctx->out[1];
        st = check_out(ctx, 1, TC_DTYPE_BOOL, ctx->in[0]->rank, ctx->in[0]->dims);
        if (st) return st;
        memset(m->data, 1, m->nbytes);
    }
    return TC_STATUS_OK;
}

/* ---- Expand, Tile ------------------------------------------------------------------- */

tc_status tc__ref_Expand(const tc__kernel_ctx *ctx) {
    const tc__tensor *in = ctx->in[0];
    tc__tensor *out = ctx->out[0];
    if (out->dtype != in->dtype || out->rank < in->rank || out->data == NULL)
        return tc__fail(ctx->err, TC_STATUS_INTERNAL, "output has type %s and rank %d for an input of %s and rank %d",
                        tc_dtype_name(out->dtype) ? tc_dtype_name(out->dtype) : "?", (int)out->rank,
                        tc_dtype_name(in->dtype) ? tc_dtype_name(in->dtype) : "?", (int)in->rank);
    int32_t r = out->rank, lead = out->rank - in->rank;
    int64_t strides[TC_MAX_RANK], s = 1;
    for (int32_t i = r - 1; i >= 0; i--) {
        int64_t d = i >= lead ? in->dims[i - lead] : 1;
        if (d != 1 && d != out->dims[i]) {
            char a[160], b[160];
            return tc__fail(ctx->err, TC_STATUS_INTERNAL, "output shape %s is not a broadcast of the input shape %s",
                            tc__shape_str(out->rank, out->dims, a, sizeof a),
                            tc__shape_str(in->rank, in->dims, b, sizeof b));
        }
        strides[i] = d == 1 ? 0 : s;
        s *= d;
    }
    int64_t n = tc__tensor_numel(out);
    size_t es = tc_dtype_size(in->dtype);
    int64_t c[TC_MAX_RANK] = {0}, pos = 0;
    char *dst = out->data;
    const char *src = in->data;
    for (int64_t k = 0; k < n; k++) {
        memcpy(dst + (size_t)k * es, src + (size_t)pos * es, es);
        for (int32_t i = r - 1; i >= 0; i--) {
            pos += strides[i];
            if (++c[i] < out->dims[i]) break;
            pos -= strides[i] * out->dims[i];
            c[i] = 0;
        }
    }
    return TC_STATUS_OK;
}

tc_status tc__ref_Tile(const tc__kernel_ctx *ctx) {
    const tc__tensor *in = ctx->in[0], *rep = ctx->in[1];
    if (rep->dtype != TC_DTYPE_INT64 && rep->dtype != TC_DTYPE_INT32)
        return tc__ref_unsupported_dtype(ctx, 1, rep->dtype);
    int32_t r = in->rank;
    if (rep->rank != 1 || rep->dims[0] != r)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "repeats must be 1-D with %d elements (the input rank)",
                        (int)r);
    int64_t dims[TC_MAX_RANK] = {0};
    for (int32_t i = 0; i < r; i++) {
        int64_t k = tc__tensor_get_i64(rep, i);
        if (k < 0 || tc__mul_overflow_i64(in->dims[i], k, &dims[i]))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "repeats[%d] = %lld is invalid for a dim of %lld",
                            (int)i, (long long)k, (long long)in->dims[i]);
    }
    tc_status st = check_out(ctx, 0, in->dtype, r, dims);
    if (st) return st;
    int64_t n = tc__tensor_numel(ctx->out[0]);
    int64_t in_strides[TC_MAX_RANK], s = 1, c[TC_MAX_RANK] = {0};
    for (int32_t i = r - 1; i >= 0; i--) {
        in_strides[i] = s;
        s *= in->dims[i];
    }
    size_t es = tc_dtype_size(in->dtype);
    char *dst = ctx->out[0]->data;
    const char *src = in->data;
    for (int64_t k = 0; k < n; k++) {
        int64_t off = 0;
        for (int32_t i = 0; i < r; i++) off += (c[i] % in->dims[i]) * in_strides[i];
        memcpy(dst + (size_t)k * es, src + (size_t)off * es, es);
        for (int32_t i = r - 1; i >= 0; i--) {
            if (++c[i] < dims[i]) break;
            c[i] = 0;
        }
    }
    return TC_STATUS_OK;
}

/* ---- ConstantOfShape, Range, Constant --------------------------------------------------- */

tc_status tc__ref_ConstantOfShape(const tc__kernel_ctx *ctx) {
    const tc__tensor *shape = ctx->in[0];
    if (shape->dtype != TC_DTYPE_INT64 && shape->dtype != TC_DTYPE_INT32)
        return tc__ref_unsupported_dtype(ctx, 0, shape->dtype);
    int64_t r = tc__tensor_numel(shape);
    if (shape->rank != 1 || r > TC_MAX_RANK)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input must be 1-D with at most %d elements",
                        TC_MAX_RANK);
    int64_t dims[TC_MAX_RANK] = {0};
    for (int64_t i = 0; i < r; i++) dims[i] = tc__tensor_get_i64(shape, i);
    const tc__tensor *val = tc__attr_tensor(ctx->attrs, "value");
    if (val != NULL && (tc__tensor_numel(val) != 1 || !tc__dtype_valid(val->dtype) || val->data == NULL))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute 'value' must be a 1-element tensor");
    tc_status st = check_out(ctx, 0, val ? val->dtype : TC_DTYPE_FLOAT32, (int32_t)r, dims);
    if (st) return st;
    if (val == NULL) return TC_STATUS_OK; /* float 0: the output comes zeroed */
    size_t es = tc_dtype_size(val->dtype);
    int64_t n = tc__tensor_numel(ctx->out[0]);
    char *dst = ctx->out[0]->data;
    for (int64_t k = 0; k < n; k++) memcpy(dst + (size_t)k * es, val->data, es);
    return TC_STATUS_OK;
}

/* Element count of Range: max(ceil((limit - start) / delta), 0), overflow-checked.
 * (Shape inference in graph/infer_shape_ops.c computes the same.) */
static tc_status range_count(const tc__kernel_ctx *ctx, tc_dtype dt, const tc__tensor *const *in, int64_t *n) {
    if (dt == TC_DTYPE_FLOAT32 || dt == TC_DTYPE_FLOAT64) {
        double fs = tc__tensor_get_f64(in[0], 0), fl = tc__tensor_get_f64(in[1], 0), fd = tc__tensor_get_f64(in[2], 0);
        if (fd == 0.0 || isnan(fs) || isnan(fl) || isnan(fd))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                            "delta must be non-zero and no input NaN (start %g, limit %g, delta %g)", fs, fl, fd);
        double diff = fl - fs;
        if (dt == TC_DTYPE_FLOAT32) diff = (float)diff;
        double c = ceil(diff / fd);
        if (!(c <= (double)TC__MAX_NUMEL))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "range from %g to %g by %g has too many elements", fs,
                            fl, fd);
        *n = c > 0 ? (int64_t)c : 0;
        return TC_STATUS_OK;
    }
    int64_t is = tc__tensor_get_i64(in[0], 0), il = tc__tensor_get_i64(in[1], 0), id = tc__tensor_get_i64(in[2], 0);
    if (id == 0) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "delta must be non-zero");
    int64_t diff;
    if (__builtin_sub_overflow(il, is, &diff))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "limit %lld - start %lld overflows", (long long)il,
                        (long long)is);
    int64_t c = 0;
    if ((id > 0 && diff > 0) || (id < 0 && diff < 0)) {
        if (id == -1 && diff == INT64_MIN)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "range has too many elements");
        c = diff / id + (diff % id != 0);
    }
    if (c > TC__MAX_NUMEL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "range from %lld to %lld by %lld has too many elements",
                        (long long)is, (long long)il, (long long)id);
    *n = c;
    return TC_STATUS_OK;
}

tc_status tc__ref_Range(const tc__kernel_ctx *ctx) {
    if (ctx->n_in != 3) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects 3 inputs, got %d", ctx->n_in);
    tc_dtype dt = ctx->in[0]->dtype;
    for (int i = 0; i < 3; i++) {
        if (ctx->in[i]->dtype != dt)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "inputs must have one type, input %d differs", i);
        if (tc__tensor_numel(ctx->in[i]) != 1)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input %d must be a scalar", i);
    }
    if (dt != TC_DTYPE_FLOAT32 && dt != TC_DTYPE_FLOAT64 && dt != TC_DTYPE_INT16 && dt != TC_DTYPE_INT32 &&
        dt != TC_DTYPE_INT64)
        return tc__ref_unsupported_dtype(ctx, 0, dt);
    int64_t n = 0;
    tc_status st = range_count(ctx, dt, ctx->in, &n);
    if (st) return st;
    st = check_out(ctx, 0, dt, 1, &n);
    if (st) return st;
    tc__tensor *out = ctx->out[0];
    if (dt == TC_DTYPE_FLOAT32 || dt == TC_DTYPE_FLOAT64) {
        double s = tc__tensor_get_f64(ctx->in[0], 0), d = tc__tensor_get_f64(ctx->in[2], 0);
        for (int64_t i = 0; i < n; i++) tc__tensor_set_f64(out, i, s + (double)i * d);
    } else {
        int64_t s = tc__tensor_get_i64(ctx->in[0], 0), d = tc__tensor_get_i64(ctx->in[2], 0);
        for (int64_t i = 0; i < n; i++) tc__tensor_set_i64(out, i, s + i * d);
    }
    return TC_STATUS_OK;
}

tc_status tc__ref_Constant(const tc__kernel_ctx *ctx) {
    tc__tensor *out = ctx->out[0];
    const tc__attr *a;
    if ((a = tc__attr_find(ctx->attrs, "value")) != NULL && a->kind == TC__ATTR_TENSOR && a->t != NULL) {
        tc_status st = check_out(ctx, 0, a->t->dtype, a->t->rank, a->t->dims);
        if (st) return st;
        if (a->t->nbytes != out->nbytes || (out->nbytes > 0 && a->t->data == NULL))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "tensor holds %zu bytes, its shape needs %zu",
                            a->t->nbytes, out->nbytes);
        if (out->nbytes > 0) memcpy(out->data, a->t->data, out->nbytes);
        return TC_STATUS_OK;
    }
    if ((a = tc__attr_find(ctx->attrs, "value_float")) != NULL && a->kind == TC__ATTR_FLOAT) {
        tc_status st = check_out(ctx, 0, TC_DTYPE_FLOAT32, 0, NULL);
        if (st) return st;
        *(float *)out->data = a->f;
        return TC_STATUS_OK;
    }
    if ((a = tc__attr_find(ctx->attrs, "value_int")) != NULL && a->kind == TC__ATTR_INT) {
        tc_status st = check_out(ctx, 0, TC_DTYPE_INT64, 0, NULL);
        if (st) return st;
        *(int64_t *)out->data = a->i;
        return TC_STATUS_OK;
    }
    int64_t n = 0;
    if ((a = tc__attr_find(ctx->attrs, "value_floats")) != NULL && a->kind == TC__ATTR_FLOATS) {
        n = (int64_t)a->n;
        tc_status st = check_out(ctx, 0, TC_DTYPE_FLOAT32, 1, &n);
        if (st) return st;
        if (n > 0) memcpy(out->data, a->floats, sizeof(float) * a->n);
        return TC_STATUS_OK;
    }
    if ((a = tc__attr_find(ctx->attrs, "value_ints")) != NULL && a->kind == TC__ATTR_INTS) {
        n = (int64_t)a->n;
        tc_status st = check_out(ctx, 0, TC_DTYPE_INT64, 1, &n);
        if (st) return st;
        if (n > 0) memcpy(out->data, a->ints, sizeof(int64_t) * a->n);
        return TC_STATUS_OK;
    }
    return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED,
                    "no supported value attribute (value, value_float(s), value_int(s)); sparse_value and strings are "
                    "not supported");
}
