/*
 * compare_logic.c - reference kernels that produce bool (uint8 0/1) tensors:
 * the broadcasting comparisons Equal Less LessOrEqual Greater GreaterOrEqual,
 * the logic ops And Or Xor Not, and the float tests IsNaN IsInf.
 *
 * Comparisons are exact: floats in double, signed integers in int64, unsigned
 * integers and bool in uint64. NaN compares unequal and unordered, as in IEEE.
 */
#include <math.h>

#include "backends/ref/broadcast.h"
#include "backends/ref/numeric.h"
#include "backends/ref/ref.h"

typedef enum cmpop { CMP_EQ, CMP_LT, CMP_LE, CMP_GT, CMP_GE } cmpop;
typedef enum logicop { LOGIC_AND, LOGIC_OR, LOGIC_XOR } logicop;

static const char *dname(tc_dtype d) { return tc_dtype_name(d) ? tc_dtype_name(d) : "unknown"; }

/* The comparison from an ordering: c < 0, c == 0, c > 0; unordered (NaN) makes every test false. */
static bool cmp_test(cmpop op, int c, bool unordered) {
    if (unordered) return false;
    switch (op) {
    case CMP_EQ: return c == 0;
    case CMP_LT: return c < 0;
    case CMP_LE: return c <= 0;
    case CMP_GT: return c > 0;
    case CMP_GE: return c >= 0;
    }
    return false;
}

/* Checks two inputs of one dtype and a bool output, and prepares the broadcast. */
static tc_status prepare_pair(const tc__kernel_ctx *ctx, tc__bcast *b) {
    if (ctx->n_in != 2 || ctx->in[0] == NULL || ctx->in[1] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects 2 inputs, got %d", ctx->n_in);
    if (ctx->in[0]->dtype != ctx->in[1]->dtype)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input 1 has data type %s, expected %s like input 0",
                        dname(ctx->in[1]->dtype), dname(ctx->in[0]->dtype));
    tc_status st = tc__ref_check_io(ctx, 2, 0, TC_DTYPE_BOOL, NULL);
    if (st) return st;
    return tc__bcast_init_tensors(b, ctx->out[0], 2, ctx->in, ctx->err);
}

static tc_status run_compare(const tc__kernel_ctx *ctx, cmpop op) {
    tc__bcast b;
    tc_status st = prepare_pair(ctx, &b);
    if (st) return st;
    const tc__tensor *x = ctx->in[0], *w = ctx->in[1];
    tc__numclass cls = tc__numclass_of(x->dtype);
    if (cls == TC__NUM_NONE) return tc__ref_unsupported_dtype(ctx, 0, x->dtype);
    uint8_t *y = ctx->out[0]->data;
    tc__bcast_iter it;
    tc__bcast_iter_init(&b, &it);
    for (int64_t r = 0; r < b.rows; r++, tc__bcast_iter_next(&b, &it)) {
        for (int64_t j = 0; j < b.inner; j++) {
            int64_t ia = it.off[0] + j * b.step[0], ib = it.off[1] + j * b.step[1];
            bool v;
            if (cls == TC__NUM_FLOAT) {
                double a = tc__tensor_get_f64(x, ia), c = tc__tensor_get_f64(w, ib);
                v = cmp_test(op, (a > c) - (a < c), isnan(a) || isnan(c));
            } else if (cls == TC__NUM_SIGNED) {
                int64_t a = tc__tensor_get_i64(x, ia), c = tc__tensor_get_i64(w, ib);
                v = cmp_test(op, (a > c) - (a < c), false);
            } else {
                uint64_t a = tc__get_u64(x, ia), c = tc__get_u64(w, ib);
                v = cmp_test(op, (a > c) - (a < c), false);
            }
            y[r * b.inner + j] = v ? 1 : 0;
        }
    }
    return TC_STATUS_OK;
}

tc_status tc__ref_Equal(const tc__kernel_ctx *ctx) { return run_compare(ctx, CMP_EQ); }
tc_status tc__ref_Less(const tc__kernel_ctx *ctx) { return run_compare(ctx, CMP_LT); }
tc_status tc__ref_LessOrEqual(const tc__kernel_ctx *ctx) { return run_compare(ctx, CMP_LE); }
tc_status tc__ref_Greater(const tc__kernel_ctx *ctx) { return run_compare(ctx, CMP_GT); }
tc_status tc__ref_GreaterOrEqual(const tc__kernel_ctx *ctx) { return run_compare(ctx, CMP_GE); }

static tc_status run_logic(const tc__kernel_ctx *ctx, logicop op) {
    tc__bcast b;
    tc_status st = prepare_pair(ctx, &b);
    if (st) return st;
    if (ctx->in[0]->dtype != TC_DTYPE_BOOL) return tc__ref_unsupported_dtype(ctx, 0, ctx->in[0]->dtype);
    const uint8_t *x = ctx->in[0]->data, *w = ctx->in[1]->data;
    uint8_t *y = ctx->out[0]->data;
    tc__bcast_iter it;
    tc__bcast_iter_init(&b, &it);
    for (int64_t r = 0; r < b.rows; r++, tc__bcast_iter_next(&b, &it)) {
        for (int64_t j = 0; j < b.inner; j++) {
            bool a = x[it.off[0] + j * b.step[0]] != 0, c = w[it.off[1] + j * b.step[1]] != 0;
            bool v = op == LOGIC_AND ? (a && c) : op == LOGIC_OR ? (a || c) : (a != c);
            y[r * b.inner + j] = v ? 1 : 0;
        }
    }
    return TC_STATUS_OK;
}

tc_status tc__ref_And(const tc__kernel_ctx *ctx) { return run_logic(ctx, LOGIC_AND); }
tc_status tc__ref_Or(const tc__kernel_ctx *ctx) { return run_logic(ctx, LOGIC_OR); }
tc_status tc__ref_Xor(const tc__kernel_ctx *ctx) { return run_logic(ctx, LOGIC_XOR); }

tc_status tc__ref_Not(const tc__kernel_ctx *ctx) {
    tc_status st = tc__ref_check_io(ctx, 1, 0, TC_DTYPE_BOOL, ctx->n_in >= 1 ? ctx->in[0] : NULL);
    if (st) return st;
    if (ctx->in[0]->dtype != TC_DTYPE_BOOL) return tc__ref_unsupported_dtype(ctx, 0, ctx->in[0]->dtype);
    const uint8_t *x = ctx->in[0]->data;
    uint8_t *y = ctx->out[0]->data;
    int64_t n = tc__tensor_numel(ctx->in[0]);
    for (int64_t i = 0; i < n; i++) y[i] = x[i] ? 0 : 1;
    return TC_STATUS_OK;
}

/* Writes test(x) for every element of a float input into the bool output. */
static tc_status run_float_test(const tc__kernel_ctx *ctx, bool want_nan, bool pos_inf, bool neg_inf) {
    tc_status st = tc__ref_check_io(ctx, 1, 0, TC_DTYPE_BOOL, ctx->n_in >= 1 ? ctx->in[0] : NULL);
    if (st) return st;
    const tc__tensor *x = ctx->in[0];
    if (tc__numclass_of(x->dtype) != TC__NUM_FLOAT) return tc__ref_unsupported_dtype(ctx, 0, x->dtype);
    uint8_t *y = ctx->out[0]->data;
    int64_t n = tc__tensor_numel(x);
    for (int64_t i = 0; i < n; i++) {
        double v = tc__tensor_get_f64(x, i);
        bool r = want_nan ? isnan(v) : ((pos_inf && v == INFINITY) || (neg_inf && v == -INFINITY));
        y[i] = r ? 1 : 0;
    }
    return TC_STATUS_OK;
}

tc_status tc__ref_IsNaN(const tc__kernel_ctx *ctx) { return run_float_test(ctx, true, false, false); }

tc_status tc__ref_IsInf(const tc__kernel_ctx *ctx) {
    bool pos = tc__attr_int(ctx->attrs, "detect_positive", 1) != 0;
    bool neg = tc__attr_int(ctx->attrs, "detect_negative", 1) != 0;
    return run_float_test(ctx, false, pos, neg);
}
