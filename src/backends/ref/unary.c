/*
 * unary.c - reference kernels for shape-preserving elementwise math and
 * activations: Abs Neg Sqrt Exp Log Reciprocal Floor Ceil Round (half to even) Relu LeakyRelu
 * Sigmoid HardSigmoid HardSwish Tanh Erf Gelu Clip.
 *
 * Floats are computed in double and rounded once to the output type (float32
 * reads and writes its buffers directly). Abs, Neg, Relu and Clip also take
 * integer types, computed exactly in 64-bit integers.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "backends/ref/numeric.h"
#include "backends/ref/ref.h"

typedef struct unary_params {
    double alpha, beta;
    double lo, hi; /* Clip bounds */
} unary_params;

typedef double (*unary_fn)(double x, const unary_params *p);

/* Applies f to every element of input 0 (a float tensor) into output 0. */
static tc_status run_float(const tc__kernel_ctx *ctx, unary_fn f, const unary_params *p) {
    const tc__tensor *x = ctx->in[0];
    tc__tensor *y = ctx->out[0];
    int64_t n = tc__tensor_numel(x);
    if (x->dtype == TC_DTYPE_FLOAT32) {
        const float *xs = x->data;
        float *ys = y->data;
        for (int64_t i = 0; i < n; i++) ys[i] = (float)f((double)xs[i], p);
    } else if (x->dtype == TC_DTYPE_FLOAT64) {
        const double *xs = x->data;
        double *ys = y->data;
        for (int64_t i = 0; i < n; i++) ys[i] = f(xs[i], p);
    } else {
        for (int64_t i = 0; i < n; i++) tc__tensor_set_f64(y, i, f(tc__tensor_get_f64(x, i), p));
    }
    return TC_STATUS_OK;
}

/*
 * Runs a unary op: checks the tensors, then floats go through f; signed integers
 * through fi (NULL: unsupported); unsigned integers through fu (NULL: unsupported).
 */
typedef int64_t (*unary_int_fn)(int64_t x, const unary_params *p);
typedef uint64_t (*unary_uint_fn)(uint64_t x, const unary_params *p);

static tc_status run_unary(const tc__kernel_ctx *ctx, unary_fn f, unary_int_fn fi, unary_uint_fn fu,
                           const unary_params *p) {
    if (ctx->n_in < 1 || ctx->in[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "required input 0 is missing");
    const tc__tensor *x = ctx->in[0];
    tc_status st = tc__ref_check_io(ctx, 1, 0, x->dtype, x);
    if (st) return st;
    tc__tensor *y = ctx->out[0];
    int64_t n = tc__tensor_numel(x);
    switch (tc__numclass_of(x->dtype)) {
    case TC__NUM_FLOAT:
        return run_float(ctx, f, p);
    case TC__NUM_SIGNED:
        if (fi == NULL) break;
        for (int64_t i = 0; i < n; i++) tc__tensor_set_i64(y, i, fi(tc__tensor_get_i64(x, i), p));
        return TC_STATUS_OK;
    case TC__NUM_UNSIGNED:
        if (fu == NULL) break;
        for (int64_t i = 0; i < n; i++) tc__set_u64(y, i, fu(tc__get_u64(x, i), p));
        return TC_STATUS_OK;
    default:
        break;
    }
    return tc__ref_unsupported_dtype(ctx, 0, x->dtype);
}

/* ---- element functions ------------------------------------------------------ */

static double f_abs(double x, const unary_params *p) { (void)p; return fabs(x); }
static int64_t i_abs(int64_t x, const unary_params *p) { (void)p; return x < 0 ? (int64_t)(0 - (uint64_t)x) : x; }
static uint64_t u_identity(uint64_t x, const unary_params *p) { (void)p; return x; }
static double f_neg(double x, const unary_params *p) { (void)p; return -x; }
static int64_t i_neg(int64_t x, const unary_params *p) { (void)p; return (int64_t)(0 - (uint64_t)x); }
static double f_sqrt(double x, const unary_params *p) { (void)p; return sqrt(x); }
static double f_exp(double x, const unary_params *p) { (void)p; return exp(x); }
static double f_log(double x, const unary_params *p) { (void)p; return log(x); }
static double f_reciprocal(double x, const unary_params *p) { (void)p; return 1.0 / x; }
static double f_floor(double x, const unary_params *p) { (void)p; return floor(x); }
static double f_ceil(double x, const unary_params *p) { (void)p; return ceil(x); }
static double f_round(double x, const unary_params *p) { (void)p; return nearbyint(x); } /* half to even */
static double f_relu(double x, const unary_params *p) { (void)p; return x > 0.0 ? x : (x == x ? 0.0 : x); }
static int64_t i_relu(int64_t x, const unary_params *p) { (void)p; return x > 0 ? x : 0; }
static double f_leaky_relu(double x, const unary_params *p) { return x >= 0.0 ? x : p->alpha * x; }
static double f_sigmoid(double x, const unary_params *p) {
    (void)p;
    if (x >= 0.0) return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}
static double f_hard_sigmoid(double x, const unary_params *p) {
    double v = p->alpha * x + p->beta;
    if (v != v) return v; /* NaN stays NaN */
    return fmax(0.0, fmin(1.0, v));
}
static double f_hard_swish(double x, const unary_params *p) {
    (void)p;
    double v = x / 6.0 + 0.5;
    if (v != v) return v;
    return x * fmax(0.0, fmin(1.0, v));
}
static double f_tanh(double x, const unary_params *p) { (void)p; return tanh(x); }
static double f_erf(double x, const unary_params *p) { (void)p; return erf(x); }
static double f_gelu(double x, const unary_params *p) {
    (void)p;
    return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440));
}
static double f_gelu_tanh(double x, const unary_params *p) {
    (void)p;
    const double k = 0.79788456080286535588; /* sqrt(2 / pi) */
    return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
}
static double f_clip(double x, const unary_params *p) {
    double v = x;
    if (v < p->lo) v = p->lo;
    if (v > p->hi) v = p->hi;
    return v;
}

/* ---- kernels ---------------------------------------------------------------- */

static const unary_params kNoParams = {0.0, 0.0, 0.0, 0.0};

tc_status tc__ref_Abs(const tc__kernel_ctx *ctx) { return run_unary(ctx, f_abs, i_abs, u_identity, &kNoParams); }
tc_status tc__ref_Neg(const tc__kernel_ctx *ctx) { return run_unary(ctx, f_neg, i_neg, NULL, &kNoParams); }
tc_status tc__ref_Sqrt(const tc__kernel_ctx *ctx) { return run_unary(ctx, f_sqrt, NULL, NULL, &kNoParams); }
tc_status tc__ref_Exp(const tc__kernel_ctx *ctx) { return run_unary(ctx, f_exp, NULL, NULL, &kNoParams); }
tc_status tc__ref_Log(const tc__kernel_ctx *ctx) { return run_unary(ctx, f_log, NULL, NULL, &kNoParams); }
tc_status tc__ref_Reciprocal(const tc__kernel_ctx *ctx) {
    return run_unary(ctx, f_reciprocal, NULL, NULL, &kNoParams);
}
tc_status tc__ref_Floor(const tc__kernel_ctx *ctx) { return run_unary(ctx, f_floor, NULL, NULL, &kNoParams); }
tc_status tc__ref_Ceil(const tc__kernel_ctx *ctx) { return run_unary(ctx, f_ceil, NULL, NULL, &kNoParams); }
tc_status tc__ref_Round(const tc__kernel_ctx *ctx) { return run_unary(ctx, f_round, NULL, NULL, &kNoParams); }

tc_status tc__ref_Relu(const tc__kernel_ctx *ctx) {
    if (ctx->n_in >= 1 && ctx->in[0] != NULL && ctx->in[0]->dtype == TC_DTYPE_FLOAT32) {
        tc_status st = tc__ref_check_io(ctx, 1, 0, TC_DTYPE_FLOAT32, ctx->in[0]);
        if (st) return st;
        const float *x = ctx->in[0]->data;
        float *y = ctx->out[0]->data;
        int64_t n = tc__tensor_numel(ctx->in[0]);
        for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : (x[i] == x[i] ? 0.0f : x[i]);
        return TC_STATUS_OK;
    }
    return run_unary(ctx, f_relu, i_relu, u_identity, &kNoParams);
}

tc_status tc__ref_LeakyRelu(const tc__kernel_ctx *ctx) {
    unary_params p = kNoParams;
    p.alpha = tc__attr_float(ctx->attrs, "alpha", 0.01f);
    return run_unary(ctx, f_leaky_relu, NULL, NULL, &p);
}

tc_status tc__ref_Sigmoid(const tc__kernel_ctx *ctx) { return run_unary(ctx, f_sigmoid, NULL, NULL, &kNoParams); }

tc_status tc__ref_HardSigmoid(const tc__kernel_ctx *ctx) {
    unary_params p = kNoParams;
    p.alpha = tc__attr_float(ctx->attrs, "alpha", 0.2f);
    p.beta = tc__attr_float(ctx->attrs, "beta", 0.5f);
    return run_unary(ctx, f_hard_sigmoid, NULL, NULL, &p);
}

tc_status tc__ref_HardSwish(const tc__kernel_ctx *ctx) {
    return run_unary(ctx, f_hard_swish, NULL, NULL, &kNoParams);
}
tc_status tc__ref_Tanh(const tc__kernel_ctx *ctx) { return run_unary(ctx, f_tanh, NULL, NULL, &kNoParams); }
tc_status tc__ref_Erf(const tc__kernel_ctx *ctx) { return run_unary(ctx, f_erf, NULL, NULL, &kNoParams); }

tc_status tc__ref_Gelu(const tc__kernel_ctx *ctx) {
    const char *approx = tc__attr_string(ctx->attrs, "approximate", "none");
    if (strcmp(approx, "none") == 0) return run_unary(ctx, f_gelu, NULL, NULL, &kNoParams);
    if (strcmp(approx, "tanh") == 0) return run_unary(ctx, f_gelu_tanh, NULL, NULL, &kNoParams);
    return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "attribute approximate='%s' is not supported (expected none or tanh)",
                    approx);
}

/* ---- Clip ------------------------------------------------------------------- */

/* Reads an optional single-element bound tensor; *out is NULL when it is absent or empty. */
static tc_status clip_bound(const tc__kernel_ctx *ctx, int i, const tc__tensor **out) {
    *out = NULL;
    if (i >= ctx->n_in || ctx->in[i] == NULL) return TC_STATUS_OK;
    const tc__tensor *t = ctx->in[i];
    if (t->dtype != ctx->in[0]->dtype)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input %d (%s) has data type %s, expected %s like the input",
                        i, i == 1 ? "min" : "max", tc_dtype_name(t->dtype) ? tc_dtype_name(t->dtype) : "?",
                        tc_dtype_name(ctx->in[0]->dtype) ? tc_dtype_name(ctx->in[0]->dtype) : "?");
    int64_t n = tc__tensor_numel(t);
    if (n == 0) return TC_STATUS_OK; /* an empty tensor stands for an absent bound */
    if (n != 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input %d (%s) must be a scalar, got %lld elements", i,
                        i == 1 ? "min" : "max", (long long)n);
    *out = t;
    return TC_STATUS_OK;
}

tc_status tc__ref_Clip(const tc__kernel_ctx *ctx) {
    tc_status st = tc__ref_check_io(ctx, 1, 0, ctx->n_in >= 1 && ctx->in[0] ? ctx->in[0]->dtype : TC_DTYPE_UNDEFINED,
                                    ctx->n_in >= 1 ? ctx->in[0] : NULL);
    if (st) return st;
    const tc__tensor *x = ctx->in[0];
    tc__tensor *y = ctx->out[0];
    int64_t n = tc__tensor_numel(x);
    const tc__tensor *tmin = NULL, *tmax = NULL;
    unary_params p = kNoParams;
    if (ctx->opset < 11) {
        p.lo = tc__attr_float(ctx->attrs, "min", -FLT_MAX);
        p.hi = tc__attr_float(ctx->attrs, "max", FLT_MAX);
        if (tc__numclass_of(x->dtype) != TC__NUM_FLOAT) return tc__ref_unsupported_dtype(ctx, 0, x->dtype);
        return run_float(ctx, f_clip, &p);
    }
    if ((st = clip_bound(ctx, 1, &tmin)) || (st = clip_bound(ctx, 2, &tmax))) return st;
    switch (tc__numclass_of(x->dtype)) {
    case TC__NUM_FLOAT:
        p.lo = tmin ? tc__tensor_get_f64(tmin, 0) : -INFINITY;
        p.hi = tmax ? tc__tensor_get_f64(tmax, 0) : INFINITY;
        return run_float(ctx, f_clip, &p);
    case TC__NUM_SIGNED: {
        int64_t lo = tmin ? tc__tensor_get_i64(tmin, 0) : INT64_MIN;
        int64_t hi = tmax ? tc__tensor_get_i64(tmax, 0) : INT64_MAX;
        for (int64_t i = 0; i < n; i++) {
            int64_t v = tc__tensor_get_i64(x, i);
            if (v < lo) v = lo;
            if (v > hi) v = hi;
            tc__tensor_set_i64(y, i, v);
        }
        return TC_STATUS_OK;
    }
    case TC__NUM_UNSIGNED: {
        uint64_t lo = tmin ? tc__get_u64(tmin, 0) : 0;
        uint64_t hi = tmax ? tc__get_u64(tmax, 0) : UINT64_MAX;
        for (int64_t i = 0; i < n; i++) {
            uint64_t v = tc__get_u64(x, i);
            if (v < lo) v = lo;
            if (v > hi) v = hi;
            tc__set_u64(y, i, v);
        }
        return TC_STATUS_OK;
    }
    default:
        return tc__ref_unsupported_dtype(ctx, 0, x->dtype);
    }
}
