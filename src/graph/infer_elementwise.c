/*
 * infer_elementwise.c - shape and type inference for elementwise operators:
 * unary math and activations, Clip, broadcasting arithmetic (Add Sub Mul Div
 * Pow Mod), variadic Min Max Sum Mean, comparisons, logic, IsNaN/IsInf, Where and
 * Cast.
 *
 * Besides shapes, small int64 "shape values" (symval) flow through Cast and
 * through Add/Sub/Mul/Div/Mod where the result is known or an identity (x*1, x+0),
 * so that shape arithmetic in exported graphs keeps its symbolic dims.
 */
#include <string.h>

#include "graph/op_schema.h"

static const char *dname(tc_dtype d) { return tc_dtype_name(d) ? tc_dtype_name(d) : "unknown"; }

/* Fails when two known input dtypes differ. */
static tc_status check_same_dtype(tc__infer_ctx *ctx, int i, int j) {
    tc_dtype a = ctx->in[i]->dtype, b = ctx->in[j]->dtype;
    if (a != TC_DTYPE_UNDEFINED && b != TC_DTYPE_UNDEFINED && a != b)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "input %d has data type %s, expected %s like input %d", j,
                        dname(b), dname(a), i);
    return TC_STATUS_OK;
}

/* The first known dtype among inputs i and j. */
static tc_dtype first_known_dtype(const tc__infer_ctx *ctx, int i, int j) {
    return ctx->in[i]->dtype != TC_DTYPE_UNDEFINED ? ctx->in[i]->dtype : ctx->in[j]->dtype;
}

/* ---- symbolic shape values -------------------------------------------------------- */

/* The symbolic contents of a small int64 tensor (from symval, else from a known value); length or -1. */
static int32_t get_symval(const tc__vinfo *v, tc__dim *out) {
    if (v->symval_len >= 0 && v->symval_len <= TC_MAX_RANK) {
        for (int32_t i = 0; i < v->symval_len; i++) out[i] = v->symval[i];
        return v->symval_len;
    }
    if (v->value != NULL && v->value->rank <= 1 &&
        (v->value->dtype == TC_DTYPE_INT64 || v->value->dtype == TC_DTYPE_INT32 || v->value->dtype == TC_DTYPE_BOOL)) {
        int64_t n = tc__tensor_numel(v->value);
        if (n < 0 || n > TC_MAX_RANK) return -1;
        for (int64_t i = 0; i < n; i++) out[i] = tc__dim_literal(tc__tensor_get_i64(v->value, i));
        return (int32_t)n;
    }
    return -1;
}

typedef enum symop { SYM_ADD, SYM_SUB, SYM_MUL, SYM_DIV, SYM_MOD, SYM_FMOD } symop;

static tc__dim sym_apply(symop op, tc__dim a, tc__dim b) {
    bool ka = tc__dim_is_known(a), kb = tc__dim_is_known(b);
    int64_t r = -1;
    switch (op) {
    case SYM_ADD:
        if (ka && kb && !tc__add_overflow_i64(a.value, b.value, &r)) return tc__dim_known(r);
        if (kb && b.value == 0) return a;
        if (ka && a.value == 0) return b;
        break;
    case SYM_SUB:
        if (ka && kb && a.value >= b.value) return tc__dim_known(a.value - b.value);
        if (kb && b.value == 0) return a;
        if (tc__dim_same(a, b)) return tc__dim_known(0);
        break;
    case SYM_MUL:
        if (ka && kb && !tc__mul_overflow_i64(a.value, b.value, &r)) return tc__dim_known(r);
        if ((ka && a.value == 0) || (kb && b.value == 0)) return tc__dim_known(0);
        if (kb && b.value == 1) return a;
        if (ka && a.value == 1) return b;
        break;
    case SYM_DIV:
        if (ka && kb && b.value != 0) return tc__dim_known(a.value / b.value);
        if (kb && b.value == 1) return a;
        if (tc__dim_same(a, b) && !(ka && a.value == 0)) return tc__dim_known(1);
        break;
    case SYM_MOD:  /* the sign of the divisor, as Python's % */
    case SYM_FMOD: /* the sign of the dividend, as C's % */
        if (tc__dim_is_literal(a) && tc__dim_is_literal(b) && b.value != 0) {
            r = b.value == -1 ? 0 : a.value % b.value;
            if (op == SYM_MOD && r != 0 && (r < 0) != (b.value < 0)) r += b.value;
            return tc__dim_literal(r);
        }
        if (tc__dim_is_literal(b) && (b.value == 1 || b.value == -1)) return tc__dim_known(0);
        if (tc__dim_same(a, b) && !(ka && a.value == 0)) return tc__dim_known(0);
        break;
    }
    return tc__dim_unknown();
}

/* Sets out[0].symval for int64 arithmetic on two shape values of length 1 or L. */
static void propagate_symval(tc__infer_ctx *ctx, symop op) {
    const tc__vinfo *a = ctx->in[0], *b = ctx->in[1];
    tc__vinfo *y = &ctx->out[0];
    if (a->dtype != TC_DTYPE_INT64 || b->dtype != TC_DTYPE_INT64 || y->shape.rank < 0 || y->shape.rank > 1) return;
    tc__dim va[TC_MAX_RANK], vb[TC_MAX_RANK];
    int32_t la = get_symval(a, va), lb = get_symval(b, vb);
    if (la < 0 || lb < 0) return;
    int32_t len = la > lb ? la : lb;
    if ((la != len && la != 1) || (lb != len && lb != 1)) return;
    if (y->shape.rank == 1 && y->shape.dims[0].value != len) return;
    if (y->shape.rank == 0 && len != 1) return;
    for (int32_t i = 0; i < len; i++) y->symval[i] = sym_apply(op, va[la == 1 ? 0 : i], vb[lb == 1 ? 0 : i]);
    y->symval_len = len;
}

/* ---- unary ---------------------------------------------------------------------------- */

static tc_status infer_unary(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 1, 1, 1);
    if (st) return st;
    return tc__infer_same_as_input0(ctx);
}

tc_status tc__infer_Abs(tc__infer_ctx *ctx) { return infer_unary(ctx); }
tc_status tc__infer_Neg(tc__infer_ctx *ctx) { return infer_unary(ctx); }
tc_status tc__infer_Sqrt(tc__infer_ctx *ctx) { return infer_unary(ctx); }
tc_status tc__infer_Exp(tc__infer_ctx *ctx) { return infer_unary(ctx); }
tc_status tc__infer_Log(tc__infer_ctx *ctx) { return infer_unary(ctx); }
tc_status tc__infer_Reciprocal(tc__infer_ctx *ctx) { return infer_unary(ctx); }
tc_status tc__infer_Floor(tc__infer_ctx *ctx) { return infer_unary(ctx); }
tc_status tc__infer_Ceil(tc__infer_ctx *ctx) { return infer_unary(ctx); }
tc_status tc__infer_Round(tc__infer_ctx *ctx) { return infer_unary(ctx); }
tc_status tc__infer_Relu(tc__infer_ctx *ctx) { return infer_unary(ctx); }
tc_status tc__infer_LeakyRelu(tc__infer_ctx *ctx) { return infer_unary(ctx); }
tc_status tc__infer_Sigmoid(tc__infer_ctx *ctx) { return infer_unary(ctx); }
tc_status tc__infer_HardSigmoid(tc__infer_ctx *ctx) { return infer_unary(ctx); }
tc_status tc__infer_HardSwish(tc__infer_ctx *ctx) { return infer_unary(ctx); }
tc_status tc__infer_Tanh(tc__infer_ctx *ctx) { return infer_unary(ctx); }
tc_status tc__infer_Erf(tc__infer_ctx *ctx) { return infer_unary(ctx); }

tc_status tc__infer_Gelu(tc__infer_ctx *ctx) {
    const char *approx = tc__attr_string(ctx->attrs, "approximate", "none");
    if (strcmp(approx, "none") != 0 && strcmp(approx, "tanh") != 0)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED,
                        "attribute approximate='%s' is not supported (expected none or tanh)", approx);
    return infer_unary(ctx);
}

tc_status tc__infer_Clip(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 1, ctx->opset < 11 ? 1 : 3, 1);
    if (st) return st;
    for (int i = 1; i < ctx->n_in; i++) {
        if (ctx->in[i] == NULL) continue;
        if ((st = check_same_dtype(ctx, 0, i))) return st;
        const tc__shape *s = &ctx->in[i]->shape;
        if (s->rank > 1 || (s->rank == 1 && s->dims[0].value > 1))
            return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "input %d (%s) must be a scalar, got rank %d", i,
                            i == 1 ? "min" : "max", (int)s->rank);
    }
    return tc__infer_same_as_input0(ctx);
}

/* ---- broadcasting binary ------------------------------------------------------------ */

/* Two inputs broadcast; out dtype = out_dtype, or input 0's when TC_DTYPE_UNDEFINED is passed and same_types. */
static tc_status infer_binary(tc__infer_ctx *ctx, bool same_types, tc_dtype out_dtype) {
    tc_status st = tc__infer_check_arity(ctx, 2, 2, 1);
    if (st) return st;
    if (same_types && (st = check_same_dtype(ctx, 0, 1))) return st;
    if ((st = tc__infer_broadcast(ctx, &ctx->in[0]->shape, &ctx->in[1]->shape, &ctx->out[0].shape))) return st;
    ctx->out[0].dtype = out_dtype != TC_DTYPE_UNDEFINED ? out_dtype
                        : same_types                    ? first_known_dtype(ctx, 0, 1)
                                                        : ctx->in[0]->dtype;
    return TC_STATUS_OK;
}

static tc_status infer_arith(tc__infer_ctx *ctx, symop op) {
    tc_status st = infer_binary(ctx, true, TC_DTYPE_UNDEFINED);
    if (st) return st;
    propagate_symval(ctx, op);
    return TC_STATUS_OK;
}

tc_status tc__infer_Add(tc__infer_ctx *ctx) { return infer_arith(ctx, SYM_ADD); }
tc_status tc__infer_Sub(tc__infer_ctx *ctx) { return infer_arith(ctx, SYM_SUB); }
tc_status tc__infer_Mul(tc__infer_ctx *ctx) { return infer_arith(ctx, SYM_MUL); }
tc_status tc__infer_Div(tc__infer_ctx *ctx) { return infer_arith(ctx, SYM_DIV); }
/* Mod: fmod is 0 (integers: the remainder takes the divisor's sign) or 1 (the dividend's sign, as C's fmod). */
tc_status tc__infer_Mod(tc__infer_ctx *ctx) {
    int64_t fmod = tc__attr_int(ctx->attrs, "fmod", 0);
    if (fmod != 0 && fmod != 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "attribute fmod is %lld, expected 0 or 1", (long long)fmod);
    tc_status st = infer_binary(ctx, true, TC_DTYPE_UNDEFINED);
    if (st) return st;
    if (ctx->out[0].dtype == TC_DTYPE_BOOL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "input 0 has data type bool, expected a number");
    propagate_symval(ctx, fmod ? SYM_FMOD : SYM_MOD);
    return TC_STATUS_OK;
}
/* Pow: the exponent may have another type; the output has the base's. */
tc_status tc__infer_Pow(tc__infer_ctx *ctx) { return infer_binary(ctx, false, TC_DTYPE_UNDEFINED); }

static tc_status infer_compare(tc__infer_ctx *ctx) { return infer_binary(ctx, true, TC_DTYPE_BOOL); }

/* Equality of two symval elements: 1, 0, or -1 when it cannot be told. A symbolic dim is a size,
 * so it never equals a negative literal (exporters compare shapes against -1 to implement expand). */
static int sym_equal(tc__dim a, tc__dim b) {
    if (tc__dim_is_literal(a) && tc__dim_is_literal(b)) return a.value == b.value;
    if (a.value < 0 && a.sym >= 0 && b.value < 0 && b.sym == a.sym) return 1;
    if ((a.sym >= 0 && a.value < 0 && b.sym == TC__SYM_LITERAL) || (b.sym >= 0 && b.value < 0 && a.sym == TC__SYM_LITERAL))
        return 0;
    return -1;
}

tc_status tc__infer_Equal(tc__infer_ctx *ctx) {
    tc_status st = infer_compare(ctx);
    if (st) return st;
    /* Shape values compared element by element give a known bool vector (kept as symval 0/1). */
    tc__dim va[TC_MAX_RANK], vb[TC_MAX_RANK];
    int32_t la = get_symval(ctx->in[0], va), lb = get_symval(ctx->in[1], vb);
    if (la < 0 || lb < 0 || (la != lb && la != 1 && lb != 1)) return TC_STATUS_OK;
    int32_t len = la > lb ? la : lb;
    tc__vinfo *y = &ctx->out[0];
    for (int32_t i = 0; i < len; i++) {
        int e = sym_equal(va[la == 1 ? 0 : i], vb[lb == 1 ? 0 : i]);
        if (e < 0) return TC_STATUS_OK;
        y->symval[i] = tc__dim_known(e);
    }
    y->symval_len = len;
    return TC_STATUS_OK;
}
tc_status tc__infer_Less(tc__infer_ctx *ctx) { return infer_compare(ctx); }
tc_status tc__infer_LessOrEqual(tc__infer_ctx *ctx) { return infer_compare(ctx); }
tc_status tc__infer_Greater(tc__infer_ctx *ctx) { return infer_compare(ctx); }
tc_status tc__infer_GreaterOrEqual(tc__infer_ctx *ctx) { return infer_compare(ctx); }

/* Fails when input i has a known dtype other than bool. */
static tc_status require_bool(tc__infer_ctx *ctx, int i) {
    tc_dtype d = ctx->in[i]->dtype;
    if (d != TC_DTYPE_UNDEFINED && d != TC_DTYPE_BOOL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "input %d has data type %s, expected bool", i, dname(d));
    return TC_STATUS_OK;
}

static tc_status infer_logic(tc__infer_ctx *ctx) {
    tc_status st = infer_binary(ctx, true, TC_DTYPE_BOOL);
    if (st) return st;
    return require_bool(ctx, 0);
}
tc_status tc__infer_And(tc__infer_ctx *ctx) { return infer_logic(ctx); }
tc_status tc__infer_Or(tc__infer_ctx *ctx) { return infer_logic(ctx); }
tc_status tc__infer_Xor(tc__infer_ctx *ctx) { return infer_logic(ctx); }

/* One input, a bool output of the same shape. */
static tc_status infer_to_bool(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 1, 1, 1);
    if (st) return st;
    ctx->out[0].dtype = TC_DTYPE_BOOL;
    ctx->out[0].shape = ctx->in[0]->shape;
    return TC_STATUS_OK;
}

tc_status tc__infer_Not(tc__infer_ctx *ctx) {
    tc_status st = infer_to_bool(ctx);
    if (st) return st;
    return require_bool(ctx, 0);
}
tc_status tc__infer_IsNaN(tc__infer_ctx *ctx) { return infer_to_bool(ctx); }
tc_status tc__infer_IsInf(tc__infer_ctx *ctx) { return infer_to_bool(ctx); }

/* ---- variadic -------------------------------------------------------------------------- */

static tc_status infer_variadic(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 1, 1 << 16, 1);
    if (st) return st;
    tc__shape s = ctx->in[0]->shape;
    tc_dtype dt = ctx->in[0]->dtype;
    for (int i = 1; i < ctx->n_in; i++) {
        if (ctx->in[i] == NULL) return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "input %d is missing", i);
        if ((st = check_same_dtype(ctx, 0, i))) return st;
        if (dt == TC_DTYPE_UNDEFINED) dt = ctx->in[i]->dtype;
        tc__shape next;
        if ((st = tc__infer_broadcast(ctx, &s, &ctx->in[i]->shape, &next))) return st;
        s = next;
    }
    ctx->out[0].dtype = dt;
    ctx->out[0].shape = s;
    return TC_STATUS_OK;
}

tc_status tc__infer_Min(tc__infer_ctx *ctx) { return infer_variadic(ctx); }
tc_status tc__infer_Max(tc__infer_ctx *ctx) { return infer_variadic(ctx); }
tc_status tc__infer_Sum(tc__infer_ctx *ctx) { return infer_variadic(ctx); }
tc_status tc__infer_Mean(tc__infer_ctx *ctx) { return infer_variadic(ctx); }

/* ---- Where, Cast --------------------------------------------------------------------- */

tc_status tc__infer_Where(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 3, 3, 1);
    if (st) return st;
    if ((st = require_bool(ctx, 0)) || (st = check_same_dtype(ctx, 1, 2))) return st;
    tc__shape s;
    if ((st = tc__infer_broadcast(ctx, &ctx->in[0]->shape, &ctx->in[1]->shape, &s))) return st;
    if ((st = tc__infer_broadcast(ctx, &s, &ctx->in[2]->shape, &ctx->out[0].shape))) return st;
    ctx->out[0].dtype = first_known_dtype(ctx, 1, 2);
    /* Where over shape values with a known condition picks their (symbolic) elements. */
    tc__dim vc[TC_MAX_RANK], vx[TC_MAX_RANK], vy[TC_MAX_RANK];
    int32_t lc = get_symval(ctx->in[0], vc), lx = get_symval(ctx->in[1], vx), ly = get_symval(ctx->in[2], vy);
    if (lc < 0 || lx < 0 || ly < 0 || ctx->out[0].dtype != TC_DTYPE_INT64) return TC_STATUS_OK;
    int32_t len = lc > lx ? lc : lx;
    if (ly > len) len = ly;
    if ((lc != len && lc != 1) || (lx != len && lx != 1) || (ly != len && ly != 1)) return TC_STATUS_OK;
    for (int32_t i = 0; i < len; i++) {
        tc__dim c = vc[lc == 1 ? 0 : i];
        if (!tc__dim_is_literal(c)) return TC_STATUS_OK;
        ctx->out[0].symval[i] = c.value != 0 ? vx[lx == 1 ? 0 : i] : vy[ly == 1 ? 0 : i];
    }
    ctx->out[0].symval_len = len;
    return TC_STATUS_OK;
}

/* Name of an ONNX TensorProto data type number, including the ones tailcut cannot store. */
static const char *onnx_type_name(int64_t t) {
    static const char *const names[] = {
        "UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING", "BOOL", "FLOAT16",
        "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ",
        "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1", "FLOAT8E8M0", "UINT2", "INT2"};
    if (t >= 0 && t < (int64_t)(sizeof names / sizeof names[0])) return names[t];
    return "unknown";
}

tc_status tc__infer_Cast(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 1, 1, 1);
    if (st) return st;
    const tc__attr *a = tc__attr_find(ctx->attrs, "to");
    if (a == NULL || a->kind != TC__ATTR_INT)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "attribute 'to' (an int) is missing");
    int64_t to = a->i;
    if (to <= 0 || to > 64 || !tc__dtype_valid((tc_dtype)to))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "cast to %s (to=%lld) is not supported", onnx_type_name(to),
                        (long long)to);
    const tc__vinfo *x = ctx->in[0];
    tc__vinfo *y = &ctx->out[0];
    y->dtype = (tc_dtype)to;
    y->shape = x->shape;
    /* Integer shape values stay the same under a cast between int32 and int64. */
    bool int_src = x->dtype == TC_DTYPE_INT64 || x->dtype == TC_DTYPE_INT32;
    bool int_dst = y->dtype == TC_DTYPE_INT64 || y->dtype == TC_DTYPE_INT32;
    if (int_src && int_dst && x->symval_len >= 0 && x->symval_len <= TC_MAX_RANK) {
        y->symval_len = x->symval_len;
        for (int32_t i = 0; i < x->symval_len; i++) y->symval[i] = x->symval[i];
    }
    return TC_STATUS_OK;
}
