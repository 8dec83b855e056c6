/*
 * binary.c - reference kernels for broadcasting arithmetic: Add Sub Mul Div Pow
 * Mod (two inputs) and the variadic Min Max Sum Mean.
 *
 * Floats are computed in double and rounded once (float32 Add/Sub/Mul/Div/Pow
 * use float buffers directly: one IEEE operation rounds the same either way).
 * Integers are exact in 64 bits with wrap-around on overflow; integer Div
 * truncates toward zero and fails on division by zero. Pow keeps the base's
 * type; an integer base with a float exponent truncates the result. Integer Mod
 * gives the remainder the divisor's sign (fmod=0, Python's %) or the dividend's
 * (fmod=1, C's %) and fails on zero; float Mod is C's fmod (as the ONNX reference
 * computes it whatever the attribute says).
 */
#include <math.h>
#include <stdlib.h>

#include "backends/ref/broadcast.h"
#include "backends/ref/numeric.h"
#include "backends/ref/ref.h"

typedef enum binop { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_POW, OP_MIN, OP_MAX, OP_MOD, OP_FMOD } binop;

static double f_apply(binop op, double a, double b) {
    switch (op) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
    case OP_DIV: return a / b;
    case OP_POW: return pow(a, b);
    case OP_MIN: return (a != a || b != b) ? a + b : (a < b ? a : b); /* NaN propagates */
    case OP_MAX: return (a != a || b != b) ? a + b : (a > b ? a : b);
    case OP_MOD:
    case OP_FMOD: return fmod(a, b);
    }
    return 0.0;
}

/* base^e modulo 2^64 by repeated squaring (the same bits for signed and unsigned bases). */
static uint64_t ipow_wrap(uint64_t base, uint64_t e) {
    uint64_t r = 1;
    while (e) {
        if (e & 1u) r *= base;
        base *= base;
        e >>= 1;
    }
    return r;
}

static tc_status div_by_zero(const tc__kernel_ctx *ctx) {
    return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "integer division by zero");
}

static tc_status mod_by_zero(const tc__kernel_ctx *ctx) {
    return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "integer Mod by zero");
}

static tc_status i_apply(const tc__kernel_ctx *ctx, binop op, int64_t a, int64_t b, int64_t *r) {
    switch (op) {
    case OP_ADD: *r = (int64_t)((uint64_t)a + (uint64_t)b); break;
    case OP_SUB: *r = (int64_t)((uint64_t)a - (uint64_t)b); break;
    case OP_MUL: *r = (int64_t)((uint64_t)a * (uint64_t)b); break;
    case OP_DIV:
        if (b == 0) return div_by_zero(ctx);
        *r = (a == INT64_MIN && b == -1) ? INT64_MIN : a / b;
        break;
    case OP_POW:
        if (b >= 0) *r = (int64_t)ipow_wrap((uint64_t)a, (uint64_t)b);
        else if (a == 1) *r = 1;
        else if (a == -1) *r = (b & 1) ? -1 : 1;
        else if (a == 0)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "integer zero raised to the negative power %lld",
                            (long long)b);
        else *r = 0; /* |a| > 1: the exact result is a fraction that truncates to 0 */
        break;
    case OP_MIN: *r = a < b ? a : b; break;
    case OP_MAX: *r = a > b ? a : b; break;
    case OP_MOD:
    case OP_FMOD:
        if (b == 0) return mod_by_zero(ctx);
        *r = b == -1 ? 0 : a % b; /* INT64_MIN % -1 overflows in C; the remainder is 0 */
        if (op == OP_MOD && *r != 0 && (*r < 0) != (b < 0)) *r += b;
        break;
    }
    return TC_STATUS_OK;
}

static tc_status u_apply(const tc__kernel_ctx *ctx, binop op, uint64_t a, uint64_t b, uint64_t *r) {
    switch (op) {
    case OP_ADD: *r = a + b; break;
    case OP_SUB: *r = a - b; break;
    case OP_MUL: *r = a * b; break;
    case OP_DIV:
        if (b == 0) return div_by_zero(ctx);
        *r = a / b;
        break;
    case OP_POW: *r = ipow_wrap(a, b); break;
    case OP_MIN: *r = a < b ? a : b; break;
    case OP_MAX: *r = a > b ? a : b; break;
    case OP_MOD:
    case OP_FMOD:
        if (b == 0) return mod_by_zero(ctx);
        *r = a % b;
        break;
    }
    return TC_STATUS_OK;
}

static const char *dname(tc_dtype d) { return tc_dtype_name(d) ? tc_dtype_name(d) : "unknown"; }

/* ---- two-input ops ------------------------------------------------------------ */

static void f32_row(binop op, const float *a, int64_t sa, const float *b, int64_t sb, float *y, int64_t n) {
    switch (op) {
    case OP_ADD:
        if (sa && sb) for (int64_t j = 0; j < n; j++) y[j] = a[j] + b[j];
        else for (int64_t j = 0; j < n; j++) y[j] = a[j * sa] + b[j * sb];
        break;
    case OP_SUB:
        if (sa && sb) for (int64_t j = 0; j < n; j++) y[j] = a[j] - b[j];
        else for (int64_t j = 0; j < n; j++) y[j] = a[j * sa] - b[j * sb];
        break;
    case OP_MUL:
        if (sa && sb) for (int64_t j = 0; j < n; j++) y[j] = a[j] * b[j];
        else for (int64_t j = 0; j < n; j++) y[j] = a[j * sa] * b[j * sb];
        break;
    case OP_DIV:
        if (sa && sb) for (int64_t j = 0; j < n; j++) y[j] = a[j] / b[j];
        else for (int64_t j = 0; j < n; j++) y[j] = a[j * sa] / b[j * sb];
        break;
    default:
        for (int64_t j = 0; j < n; j++) y[j] = (float)f_apply(op, a[j * sa], b[j * sb]);
        break;
    }
}

/* One output element of the generic path: y[o] = op(x[ia], w[ib]). */
static tc_status generic_elem(const tc__kernel_ctx *ctx, binop op, tc__numclass cls, const tc__tensor *x,
                              const tc__tensor *w, tc__tensor *y, int64_t ia, int64_t ib, int64_t o) {
    tc__numclass wcls = tc__numclass_of(w->dtype);
    if (cls == TC__NUM_FLOAT) {
        tc__tensor_set_f64(y, o, f_apply(op, tc__tensor_get_f64(x, ia), tc__tensor_get_f64(w, ib)));
        return TC_STATUS_OK;
    }
    if (op == OP_POW && wcls == TC__NUM_FLOAT) { /* integer base, float exponent */
        double v = pow(tc__tensor_get_f64(x, ia), tc__tensor_get_f64(w, ib));
        tc__tensor_set_i64(y, o, tc__f64_to_int_bits(v, y->dtype));
        return TC_STATUS_OK;
    }
    tc_status st;
    if (cls == TC__NUM_SIGNED) {
        int64_t r = 0, b = tc__tensor_get_i64(w, ib);
        if (op == OP_POW && wcls == TC__NUM_UNSIGNED) /* exponent may exceed INT64_MAX */
            r = (int64_t)ipow_wrap((uint64_t)tc__tensor_get_i64(x, ia), (uint64_t)b);
        else if ((st = i_apply(ctx, op, tc__tensor_get_i64(x, ia), b, &r))) return st;
        tc__tensor_set_i64(y, o, r);
    } else {
        uint64_t r = 0;
        int64_t b = tc__tensor_get_i64(w, ib);
        if (op == OP_POW && wcls == TC__NUM_SIGNED && b < 0) { /* unsigned base, negative exponent */
            uint64_t a = tc__get_u64(x, ia);
            if (a == 0)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                                "integer zero raised to the negative power %lld", (long long)b);
            r = a == 1 ? 1 : 0;
        } else if ((st = u_apply(ctx, op, tc__get_u64(x, ia), (uint64_t)b, &r))) {
            return st;
        }
        tc__set_u64(y, o, r);
    }
    return TC_STATUS_OK;
}

static tc_status run_binary(const tc__kernel_ctx *ctx, binop op) {
    if (ctx->n_in != 2 || ctx->in[0] == NULL || ctx->in[1] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects 2 inputs, got %d", ctx->n_in);
    const tc__tensor *x = ctx->in[0], *w = ctx->in[1];
    tc__numclass cls = tc__numclass_of(x->dtype);
    tc__numclass wcls = tc__numclass_of(w->dtype);
    if (cls == TC__NUM_NONE || cls == TC__NUM_BOOL) return tc__ref_unsupported_dtype(ctx, 0, x->dtype);
    if (op == OP_POW) {
        if (wcls == TC__NUM_NONE || wcls == TC__NUM_BOOL) return tc__ref_unsupported_dtype(ctx, 1, w->dtype);
    } else if (w->dtype != x->dtype) {
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input 1 has data type %s, expected %s like input 0",
                        dname(w->dtype), dname(x->dtype));
    }
    tc_status st = tc__ref_check_io(ctx, 2, 0, x->dtype, NULL);
    if (st) return st;
    tc__tensor *y = ctx->out[0];
    tc__bcast b;
    if ((st = tc__bcast_init_tensors(&b, y, 2, ctx->in, ctx->err))) return st;
    tc__bcast_iter it;
    tc__bcast_iter_init(&b, &it);
    if (x->dtype == TC_DTYPE_FLOAT32 && w->dtype == TC_DTYPE_FLOAT32) {
        const float *a = x->data, *c = w->data;
        float *ys = y->data;
        for (int64_t r = 0; r < b.rows; r++, tc__bcast_iter_next(&b, &it))
            f32_row(op, a + it.off[0], b.step[0], c + it.off[1], b.step[1], ys + r * b.inner, b.inner);
        return TC_STATUS_OK;
    }
    for (int64_t r = 0; r < b.rows; r++, tc__bcast_iter_next(&b, &it))
        for (int64_t j = 0; j < b.inner; j++)
            if ((st = generic_elem(ctx, op, cls, x, w, y, it.off[0] + j * b.step[0], it.off[1] + j * b.step[1],
                                   r * b.inner + j)))
                return st;
    return TC_STATUS_OK;
}

tc_status tc__ref_Add(const tc__kernel_ctx *ctx) { return run_binary(ctx, OP_ADD); }
tc_status tc__ref_Sub(const tc__kernel_ctx *ctx) { return run_binary(ctx, OP_SUB); }
tc_status tc__ref_Mul(const tc__kernel_ctx *ctx) { return run_binary(ctx, OP_MUL); }
tc_status tc__ref_Div(const tc__kernel_ctx *ctx) { return run_binary(ctx, OP_DIV); }
tc_status tc__ref_Pow(const tc__kernel_ctx *ctx) { return run_binary(ctx, OP_POW); }
tc_status tc__ref_Mod(const tc__kernel_ctx *ctx) {
    return run_binary(ctx, tc__attr_int(ctx->attrs, "fmod", 0) ? OP_FMOD : OP_MOD);
}

/* ---- variadic ops ------------------------------------------------------------- */

/*
 * Folds every input (broadcast to the output shape) into a 64-bit accumulator per
 * output element with op (OP_ADD for Sum and Mean), then divides by the input
 * count for Mean and writes the output.
 */
static tc_status run_variadic(const tc__kernel_ctx *ctx, binop op, bool mean) {
    if (ctx->n_in < 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects at least 1 input, got %d", ctx->n_in);
    for (int k = 0; k < ctx->n_in; k++)
        if (ctx->in[k] == NULL)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input %d is missing", k);
    tc_dtype dt = ctx->in[0]->dtype;
    tc__numclass cls = tc__numclass_of(dt);
    if (cls == TC__NUM_NONE || cls == TC__NUM_BOOL) return tc__ref_unsupported_dtype(ctx, 0, dt);
    for (int k = 1; k < ctx->n_in; k++)
        if (ctx->in[k]->dtype != dt)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input %d has data type %s, expected %s like input 0",
                            k, dname(ctx->in[k]->dtype), dname(dt));
    tc_status st = tc__ref_check_io(ctx, ctx->n_in, 0, dt, NULL);
    if (st) return st;
    tc__tensor *y = ctx->out[0];
    int64_t n = tc__tensor_numel(y);
    if (n < 0) return tc__fail(ctx->err, TC_STATUS_INTERNAL, "invalid output shape");
    double *accf = NULL;
    int64_t *acci = NULL;
    if (cls == TC__NUM_FLOAT) accf = tc__kernel_alloc(ctx, (size_t)(n ? n : 1) * sizeof *accf);
    else acci = tc__kernel_alloc(ctx, (size_t)(n ? n : 1) * sizeof *acci);
    if (accf == NULL && acci == NULL)
        return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of memory for %lld accumulators", (long long)n);

    for (int k = 0; k < ctx->n_in && st == TC_STATUS_OK; k++) {
        const tc__tensor *x = ctx->in[k];
        tc__bcast b;
        if ((st = tc__bcast_init_tensors(&b, y, 1, &ctx->in[k], ctx->err))) break;
        tc__bcast_iter it;
        tc__bcast_iter_init(&b, &it);
        for (int64_t r = 0; r < b.rows && st == TC_STATUS_OK; r++, tc__bcast_iter_next(&b, &it)) {
            for (int64_t j = 0; j < b.inner; j++) {
                int64_t o = r * b.inner + j, i = it.off[0] + j * b.step[0];
                if (cls == TC__NUM_FLOAT) {
                    double v = tc__tensor_get_f64(x, i);
                    accf[o] = k == 0 ? v : f_apply(op, accf[o], v);
                } else if (k == 0) {
                    acci[o] = tc__tensor_get_i64(x, i);
                } else if (cls == TC__NUM_SIGNED) {
                    if ((st = i_apply(ctx, op, acci[o], tc__tensor_get_i64(x, i), &acci[o]))) break;
                } else {
                    uint64_t r64 = 0;
                    if ((st = u_apply(ctx, op, (uint64_t)acci[o], tc__get_u64(x, i), &r64))) break;
                    acci[o] = (int64_t)r64;
                }
            }
        }
    }
    if (st == TC_STATUS_OK) {
        int64_t cnt = ctx->n_in;
        for (int64_t o = 0; o < n; o++) {
            if (cls == TC__NUM_FLOAT) {
                tc__tensor_set_f64(y, o, mean ? accf[o] / (double)cnt : accf[o]);
            } else if (cls == TC__NUM_SIGNED) {
                tc__tensor_set_i64(y, o, mean ? acci[o] / cnt : acci[o]);
            } else {
                uint64_t v = (uint64_t)acci[o];
                tc__set_u64(y, o, mean ? v / (uint64_t)cnt : v);
            }
        }
    }
    tc__kernel_free(ctx, accf);
    tc__kernel_free(ctx, acci);
    return st;
}

tc_status tc__ref_Min(const tc__kernel_ctx *ctx) { return run_variadic(ctx, OP_MIN, false); }
tc_status tc__ref_Max(const tc__kernel_ctx *ctx) { return run_variadic(ctx, OP_MAX, false); }
tc_status tc__ref_Sum(const tc__kernel_ctx *ctx) { return run_variadic(ctx, OP_ADD, false); }
tc_status tc__ref_Mean(const tc__kernel_ctx *ctx) { return run_variadic(ctx, OP_ADD, true); }
