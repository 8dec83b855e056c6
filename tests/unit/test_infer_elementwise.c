/*
 * test_infer_elementwise.c - static shape inference of the elementwise,
 * normalisation and reduction ops with symbolic and unknown dims: broadcasting
 * of symbols, unknown ranks, dtype rules (compare -> bool, Pow keeps the base
 * type, Cast), symbolic shape values through Cast and arithmetic, Reduce axes
 * known/unknown with keepdims and noop_with_empty_axes, LayerNormalization's
 * statistics shapes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "elem_test_util.h"

/* Dim spec for vinfo(): >= 0 known, U unknown, S(k) symbol k. */
#define U (-1)
#define S(k) (-10 - (k))

static tc__dim spec_dim(int64_t s) {
    if (s >= 0) return tc__dim_known(s);
    if (s == U) return tc__dim_unknown();
    return (tc__dim){-1, (int32_t)(-10 - s)};
}

static tc__vinfo vinfo(tc_dtype dt, int32_t rank, const int64_t *spec) {
    tc__vinfo v;
    tc__vinfo_init(&v);
    v.dtype = dt;
    v.shape.rank = rank;
    for (int32_t i = 0; i < rank; i++) v.shape.dims[i] = spec_dim(spec[i]);
    return v;
}

static void assert_dim(tc__dim d, int64_t spec) {
    tc__dim w = spec_dim(spec);
    if (spec >= 0) {
        assert_int_equal(d.value, spec);
    } else if (spec == U) {
        assert_true(d.value < 0);
        assert_int_equal(d.sym, TC__SYM_UNKNOWN);
    } else {
        assert_true(d.value < 0);
        assert_int_equal(d.sym, w.sym);
    }
}

static void assert_shape(const tc__vinfo *v, int32_t rank, const int64_t *spec) {
    assert_int_equal(v->shape.rank, rank);
    for (int32_t i = 0; i < rank; i++) assert_dim(v->shape.dims[i], spec[i]);
}

/* Runs an inference function on vinfos; outputs preinitialised as the graph does. */
static tc_status infer(tc__infer_fn fn, const char *op, int64_t opset, const tc__attr *attrs, int n_attrs, int n_in,
                       const tc__vinfo *const *in, int n_out, tc__vinfo *out, tc__err *err) {
    tc__attrs as = {n_attrs, attrs};
    for (int i = 0; i < n_out; i++) tc__vinfo_init(&out[i]);
    tc__infer_ctx ctx = {"n", op, opset, &as, n_in, in, n_out, out, err};
    return fn(&ctx);
}
#define INFER_OK(Op, opset, attrs, n_attrs, n_in, in, n_out, out)                                         \
    do {                                                                                                \
        tc__err e_ = {0};                                                                               \
        tc_status s_ = infer(tc__infer_##Op, #Op, opset, attrs, n_attrs, n_in, in, n_out, out, &e_);    \
        if (s_) fail_msg("%s failed (%d): %s", #Op, (int)s_, e_.msg);                                   \
    } while (0)

static void test_broadcast_symbolic(void **state) {
    (void)state;
    /* [batch, 1, 5] + [seq, 5] -> [batch, seq, 5] */
    int64_t a[3] = {S(0), 1, 5}, b[2] = {S(1), 5};
    tc__vinfo va = vinfo(TC_DTYPE_FLOAT32, 3, a), vb = vinfo(TC_DTYPE_FLOAT32, 2, b);
    const tc__vinfo *in[2] = {&va, &vb};
    tc__vinfo out[1];
    INFER_OK(Add, 14, NULL, 0, 2, in, 1, out);
    int64_t w1[3] = {S(0), S(1), 5};
    assert_shape(&out[0], 3, w1);
    assert_int_equal(out[0].dtype, TC_DTYPE_FLOAT32);
    /* Same symbol stays; different symbols become unknown; a known dim wins over a symbol. */
    int64_t c[3] = {S(0), S(1), S(2)}, d[3] = {S(0), S(3), 7};
    va = vinfo(TC_DTYPE_FLOAT32, 3, c);
    vb = vinfo(TC_DTYPE_FLOAT32, 3, d);
    INFER_OK(Mul, 14, NULL, 0, 2, in, 1, out);
    int64_t w2[3] = {S(0), U, 7};
    assert_shape(&out[0], 3, w2);
    /* Unknown dim against 1 stays unknown; unknown against known gives the known. */
    int64_t e[2] = {U, U}, f[2] = {1, 4};
    va = vinfo(TC_DTYPE_FLOAT32, 2, e);
    vb = vinfo(TC_DTYPE_FLOAT32, 2, f);
    INFER_OK(Sub, 14, NULL, 0, 2, in, 1, out);
    int64_t w3[2] = {U, 4};
    assert_shape(&out[0], 2, w3);
    /* Unknown rank propagates. */
    va.shape.rank = TC__RANK_UNKNOWN;
    INFER_OK(Div, 14, NULL, 0, 2, in, 1, out);
    assert_int_equal(out[0].shape.rank, TC__RANK_UNKNOWN);
    /* Incompatible known dims fail with both sizes in the message. */
    int64_t g[1] = {3}, h[1] = {4};
    va = vinfo(TC_DTYPE_FLOAT32, 1, g);
    vb = vinfo(TC_DTYPE_FLOAT32, 1, h);
    tc__err err = {0};
    assert_int_not_equal(infer(tc__infer_Add, "Add", 14, NULL, 0, 2, in, 1, out, &err), TC_STATUS_OK);
    assert_non_null(strstr(err.msg, "3"));
    assert_non_null(strstr(err.msg, "4"));
    /* Mismatched dtypes are an invalid graph. */
    vb = vinfo(TC_DTYPE_INT64, 1, g);
    memset(&err, 0, sizeof err);
    assert_int_equal(infer(tc__infer_Add, "Add", 14, NULL, 0, 2, in, 1, out, &err), TC_STATUS_INVALID_GRAPH);
}

static void test_dtypes(void **state) {
    (void)state;
    int64_t a[2] = {S(0), 3};
    tc__vinfo vf = vinfo(TC_DTYPE_FLOAT32, 2, a), vi = vinfo(TC_DTYPE_INT64, 1, a + 1);
    tc__vinfo out[1];
    /* Pow: output has the base's type. */
    const tc__vinfo *pw[2] = {&vi, &vf};
    INFER_OK(Pow, 15, NULL, 0, 2, pw, 1, out);
    assert_int_equal(out[0].dtype, TC_DTYPE_INT64);
    int64_t w[2] = {S(0), 3};
    assert_shape(&out[0], 2, w);
    /* Comparisons give bool; IsNaN/IsInf give bool of the input's shape. */
    tc__vinfo vf2 = vinfo(TC_DTYPE_FLOAT32, 1, a + 1);
    const tc__vinfo *cmp[2] = {&vf, &vf2};
    INFER_OK(Less, 13, NULL, 0, 2, cmp, 1, out);
    assert_int_equal(out[0].dtype, TC_DTYPE_BOOL);
    assert_shape(&out[0], 2, w);
    const tc__vinfo *one[1] = {&vf};
    INFER_OK(IsInf, 20, NULL, 0, 1, one, 1, out);
    assert_int_equal(out[0].dtype, TC_DTYPE_BOOL);
    assert_shape(&out[0], 2, w);
    /* And of non-bool is invalid. */
    tc__err err = {0};
    assert_int_equal(infer(tc__infer_And, "And", 7, NULL, 0, 2, cmp, 1, out, &err), TC_STATUS_INVALID_GRAPH);
    /* Cast: dtype from 'to'; unsupported target types name themselves. */
    tc__attr to = etu_attr_int("to", TC_DTYPE_FLOAT16);
    INFER_OK(Cast, 13, &to, 1, 1, one, 1, out);
    assert_int_equal(out[0].dtype, TC_DTYPE_FLOAT16);
    assert_shape(&out[0], 2, w);
    to = etu_attr_int("to", 8);
    memset(&err, 0, sizeof err);
    assert_int_equal(infer(tc__infer_Cast, "Cast", 13, &to, 1, 1, one, 1, out, &err), TC_STATUS_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "STRING"));
    memset(&err, 0, sizeof err);
    assert_int_equal(infer(tc__infer_Cast, "Cast", 13, NULL, 0, 1, one, 1, out, &err), TC_STATUS_INVALID_GRAPH);
    /* Unknown input dtype stays unknown for unary ops, and the shape is kept. */
    tc__vinfo vu = vinfo(TC_DTYPE_UNDEFINED, 2, a);
    const tc__vinfo *un[1] = {&vu};
    INFER_OK(Relu, 14, NULL, 0, 1, un, 1, out);
    assert_int_equal(out[0].dtype, TC_DTYPE_UNDEFINED);
    assert_shape(&out[0], 2, w);
}

static void test_variadic_and_where(void **state) {
    (void)state;
    int64_t a[3] = {S(0), 1, 1}, b[2] = {S(1), 1}, c[1] = {9};
    tc__vinfo va = vinfo(TC_DTYPE_FLOAT32, 3, a), vb = vinfo(TC_DTYPE_FLOAT32, 2, b), vc = vinfo(TC_DTYPE_FLOAT32, 1, c);
    const tc__vinfo *in[3] = {&va, &vb, &vc};
    tc__vinfo out[1];
    INFER_OK(Max, 13, NULL, 0, 3, in, 1, out);
    int64_t w[3] = {S(0), S(1), 9};
    assert_shape(&out[0], 3, w);
    INFER_OK(Sum, 13, NULL, 0, 1, in, 1, out);
    assert_shape(&out[0], 3, a);
    /* Where: bool condition and two values broadcast three ways; dtype of X. */
    tc__vinfo cond = vinfo(TC_DTYPE_BOOL, 3, a);
    const tc__vinfo *win[3] = {&cond, &vb, &vc};
    INFER_OK(Where, 16, NULL, 0, 3, win, 1, out);
    assert_int_equal(out[0].dtype, TC_DTYPE_FLOAT32);
    assert_shape(&out[0], 3, w);
    /* A non-bool condition is invalid. */
    const tc__vinfo *bad[3] = {&va, &vb, &vc};
    tc__err err = {0};
    assert_int_equal(infer(tc__infer_Where, "Where", 16, NULL, 0, 3, bad, 1, out, &err), TC_STATUS_INVALID_GRAPH);
}

static void test_symval(void **state) {
    (void)state;
    /* Shape of [batch, seq, 768] as int64 symval, cast int64 -> int32 -> int64 keeps it. */
    int64_t d3[1] = {3};
    tc__vinfo s = vinfo(TC_DTYPE_INT64, 1, d3);
    s.symval_len = 3;
    s.symval[0] = spec_dim(S(0));
    s.symval[1] = spec_dim(S(1));
    s.symval[2] = tc__dim_known(768);
    const tc__vinfo *in[1] = {&s};
    tc__vinfo o32[1], o64[1];
    tc__attr to32 = etu_attr_int("to", TC_DTYPE_INT32), to64 = etu_attr_int("to", TC_DTYPE_INT64);
    INFER_OK(Cast, 13, &to32, 1, 1, in, 1, o32);
    const tc__vinfo *in2[1] = {&o32[0]};
    INFER_OK(Cast, 13, &to64, 1, 1, in2, 1, o64);
    assert_int_equal(o64[0].symval_len, 3);
    assert_dim(o64[0].symval[0], S(0));
    assert_dim(o64[0].symval[1], S(1));
    assert_dim(o64[0].symval[2], 768);
    /* A cast to float drops it. */
    tc__attr tof = etu_attr_int("to", TC_DTYPE_FLOAT32);
    INFER_OK(Cast, 13, &tof, 1, 1, in, 1, o32);
    assert_int_equal(o32[0].symval_len, -1);
    /* Arithmetic on shape values: [batch, seq, 768] * [1, 1, 2] keeps symbols (x*1) and computes knowns;
     * + a known constant tensor value works too. */
    int64_t mv[3] = {1, 1, 2};
    tc__tensor mt = etu_from_i64(TC_DTYPE_INT64, 1, d3, mv);
    tc__vinfo m = vinfo(TC_DTYPE_INT64, 1, d3);
    m.value = &mt;
    const tc__vinfo *ab[2] = {&s, &m};
    tc__vinfo out[1];
    INFER_OK(Mul, 14, NULL, 0, 2, ab, 1, out);
    assert_int_equal(out[0].symval_len, 3);
    assert_dim(out[0].symval[0], S(0));
    assert_dim(out[0].symval[1], S(1));
    assert_dim(out[0].symval[2], 1536);
    INFER_OK(Add, 14, NULL, 0, 2, ab, 1, out);
    assert_int_equal(out[0].symval_len, 3);
    assert_dim(out[0].symval[0], U); /* batch + 1 is not a known symbol */
    assert_dim(out[0].symval[2], 770);
    /* A scalar divisor broadcasts: [batch, seq, 768] / 12 -> [?, ?, 64]; x / x is 1. */
    tc__tensor twelve = etu_scalar_i64(TC_DTYPE_INT64, 12);
    tc__vinfo t = vinfo(TC_DTYPE_INT64, 0, NULL);
    t.value = &twelve;
    const tc__vinfo *dv[2] = {&s, &t};
    INFER_OK(Div, 14, NULL, 0, 2, dv, 1, out);
    assert_int_equal(out[0].symval_len, 3);
    assert_dim(out[0].symval[2], 64);
    const tc__vinfo *same[2] = {&s, &s};
    INFER_OK(Div, 14, NULL, 0, 2, same, 1, out);
    for (int i = 0; i < 3; i++) assert_dim(out[0].symval[i], 1);
    /* Mod: [batch, seq, 768] % 12 -> [?, ?, 0]; x % x is 0; -7 % 12 is 5 (fmod 0) or -7 (fmod 1); fmod 2 is refused. */
    INFER_OK(Mod, 13, NULL, 0, 2, dv, 1, out);
    assert_int_equal(out[0].symval_len, 3);
    assert_dim(out[0].symval[0], U);
    assert_dim(out[0].symval[2], 0);
    INFER_OK(Mod, 13, NULL, 0, 2, same, 1, out);
    for (int i = 0; i < 3; i++) assert_dim(out[0].symval[i], 0);
    tc__tensor minus7 = etu_scalar_i64(TC_DTYPE_INT64, -7);
    tc__vinfo n7 = vinfo(TC_DTYPE_INT64, 0, NULL);
    n7.value = &minus7;
    const tc__vinfo *neg[2] = {&n7, &t};
    INFER_OK(Mod, 13, NULL, 0, 2, neg, 1, out);
    assert_int_equal(out[0].symval_len, 1);
    assert_true(out[0].symval[0].value == 5);
    tc__attr fm1 = etu_attr_int("fmod", 1), fm2 = etu_attr_int("fmod", 2);
    INFER_OK(Mod, 13, &fm1, 1, 2, neg, 1, out);
    assert_true(out[0].symval[0].value == -7);
    tc__err err = {0};
    assert_int_equal(infer(tc__infer_Mod, "Mod", 13, &fm2, 1, 2, neg, 1, out, &err), TC_STATUS_INVALID_GRAPH);
    assert_non_null(strstr(err.msg, "fmod"));
    tc__tensor_free(&minus7);
    tc__tensor_free(&twelve);
    tc__tensor_free(&mt);
}

static void test_reduce(void **state) {
    (void)state;
    int64_t a[3] = {S(0), S(1), 768};
    tc__vinfo x = vinfo(TC_DTYPE_FLOAT32, 3, a);
    tc__vinfo out[1];
    /* Known axes as attribute (opset 13) and as input (opset 18), keepdims both ways. */
    int64_t ax[1] = {-1};
    tc__attr at[2] = {etu_attr_ints("axes", ax, 1), etu_attr_int("keepdims", 1)};
    const tc__vinfo *in1[1] = {&x};
    INFER_OK(ReduceMean, 13, at, 2, 1, in1, 1, out);
    int64_t w1[3] = {S(0), S(1), 1};
    assert_shape(&out[0], 3, w1);
    int64_t d1[1] = {1};
    tc__tensor axt = etu_from_i64(TC_DTYPE_INT64, 1, d1, ax);
    tc__vinfo va = vinfo(TC_DTYPE_INT64, 1, d1);
    va.value = &axt;
    const tc__vinfo *in2[2] = {&x, &va};
    tc__attr k0 = etu_attr_int("keepdims", 0);
    INFER_OK(ReduceMean, 18, &k0, 1, 2, in2, 1, out);
    int64_t w2[2] = {S(0), S(1)};
    assert_shape(&out[0], 2, w2);
    /* ReduceSum reads axes from the input at opset 13. */
    INFER_OK(ReduceSum, 13, &k0, 1, 2, in2, 1, out);
    assert_shape(&out[0], 2, w2);
    /* Unknown axes value: keepdims=1 keeps the rank with unknown dims (known 1s stay 1). */
    int64_t b[3] = {S(0), 1, 768};
    tc__vinfo xb = vinfo(TC_DTYPE_FLOAT32, 3, b);
    tc__vinfo vunk = vinfo(TC_DTYPE_INT64, 1, d1);
    const tc__vinfo *in3[2] = {&xb, &vunk};
    INFER_OK(ReduceMax, 18, NULL, 0, 2, in3, 1, out);
    int64_t w3[3] = {U, 1, U};
    assert_shape(&out[0], 3, w3);
    /* keepdims=0 with unknown values but a known count of axes: the rank is known. */
    INFER_OK(ReduceMax, 18, &k0, 1, 2, in3, 1, out);
    int64_t w4[2] = {U, U};
    assert_shape(&out[0], 2, w4);
    /* ... and with an unknown count, the rank is unknown. */
    int64_t du[1] = {U};
    vunk = vinfo(TC_DTYPE_INT64, 1, du);
    INFER_OK(ReduceMax, 18, &k0, 1, 2, in3, 1, out);
    assert_int_equal(out[0].shape.rank, TC__RANK_UNKNOWN);
    /* No axes: every axis (keepdims default 1 gives all 1s); noop_with_empty_axes keeps the input. */
    INFER_OK(ReduceL2, 18, NULL, 0, 1, in1, 1, out);
    int64_t w5[3] = {1, 1, 1};
    assert_shape(&out[0], 3, w5);
    INFER_OK(ReduceProd, 18, &k0, 1, 1, in1, 1, out);
    assert_int_equal(out[0].shape.rank, 0);
    tc__attr noop = etu_attr_int("noop_with_empty_axes", 1);
    int64_t d0[1] = {0};
    tc__vinfo vempty = vinfo(TC_DTYPE_INT64, 1, d0);
    const tc__vinfo *in4[2] = {&x, &vempty};
    INFER_OK(ReduceSumSquare, 18, &noop, 1, 2, in4, 1, out);
    assert_shape(&out[0], 3, a);
    /* Unknown input rank: unknown output rank. */
    tc__vinfo xu = vinfo(TC_DTYPE_FLOAT32, 0, NULL);
    xu.shape.rank = TC__RANK_UNKNOWN;
    const tc__vinfo *in5[1] = {&xu};
    INFER_OK(ReduceMin, 13, at, 2, 1, in5, 1, out);
    assert_int_equal(out[0].shape.rank, TC__RANK_UNKNOWN);
    assert_int_equal(out[0].dtype, TC_DTYPE_FLOAT32);
    /* Errors: axis out of range, duplicate axes, axes input before opset 18. */
    int64_t bad[1] = {3};
    tc__attr atb = etu_attr_ints("axes", bad, 1);
    tc__err err = {0};
    assert_int_equal(infer(tc__infer_ReduceMean, "ReduceMean", 13, &atb, 1, 1, in1, 1, out, &err),
                     TC_STATUS_INVALID_ARGUMENT);
    int64_t dup[2] = {0, -3};
    tc__attr atd = etu_attr_ints("axes", dup, 2);
    memset(&err, 0, sizeof err);
    assert_int_equal(infer(tc__infer_ReduceMean, "ReduceMean", 13, &atd, 1, 1, in1, 1, out, &err),
                     TC_STATUS_INVALID_ARGUMENT);
    memset(&err, 0, sizeof err);
    assert_int_equal(infer(tc__infer_ReduceMean, "ReduceMean", 13, NULL, 0, 2, in2, 1, out, &err),
                     TC_STATUS_INVALID_GRAPH);
    tc__tensor_free(&axt);
}

static void test_normalization(void **state) {
    (void)state;
    int64_t a[3] = {S(0), S(1), 768}, s[1] = {768};
    tc__vinfo x = vinfo(TC_DTYPE_FLOAT16, 3, a), sc = vinfo(TC_DTYPE_FLOAT16, 1, s);
    const tc__vinfo *in[2] = {&x, &sc};
    tc__vinfo out[3];
    INFER_OK(LayerNormalization, 17, NULL, 0, 2, in, 3, out);
    assert_int_equal(out[0].dtype, TC_DTYPE_FLOAT16);
    assert_shape(&out[0], 3, a);
    int64_t ws[3] = {S(0), S(1), 1};
    assert_int_equal(out[1].dtype, TC_DTYPE_FLOAT32); /* stash_type default */
    assert_shape(&out[1], 3, ws);
    assert_shape(&out[2], 3, ws);
    tc__attr ax = etu_attr_int("axis", 1);
    INFER_OK(LayerNormalization, 17, &ax, 1, 2, in, 2, out);
    int64_t ws1[3] = {S(0), 1, 1};
    assert_shape(&out[1], 3, ws1);
    tc__attr bad = etu_attr_int("axis", 3);
    tc__err err = {0};
    assert_int_equal(infer(tc__infer_LayerNormalization, "LayerNormalization", 17, &bad, 1, 2, in, 1, out, &err),
                     TC_STATUS_INVALID_ARGUMENT);
    /* Softmax: shape kept; axis checked against a known rank, not against an unknown one. */
    const tc__vinfo *one[1] = {&x};
    INFER_OK(Softmax, 13, NULL, 0, 1, one, 1, out);
    assert_shape(&out[0], 3, a);
    memset(&err, 0, sizeof err);
    assert_int_equal(infer(tc__infer_LogSoftmax, "LogSoftmax", 13, &bad, 1, 1, one, 1, out, &err),
                     TC_STATUS_INVALID_ARGUMENT);
    INFER_OK(Softmax, 11, &bad, 1, 1, one, 1, out); /* opset < 13: axis == rank is allowed */
    x.shape.rank = TC__RANK_UNKNOWN;
    INFER_OK(LogSoftmax, 13, &bad, 1, 1, one, 1, out);
    assert_int_equal(out[0].shape.rank, TC__RANK_UNKNOWN);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_broadcast_symbolic), cmocka_unit_test(test_dtypes),
        cmocka_unit_test(test_variadic_and_where), cmocka_unit_test(test_symval),
        cmocka_unit_test(test_reduce),             cmocka_unit_test(test_normalization),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
