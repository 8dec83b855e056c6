/* test_passes_fuse.c - the fusion passes: fuse_gelu (exporter variants of the Erf GELU), fuse_hardswish (HardSwish
 * written as x * Clip(x + 3, 0, 6) / 6),
 * fuse_nan_guard (the Softmax's Where(IsNaN) guard, on rows that are NaN and rows that are not),
 * fuse_matmul_views (attention's Transposes and scale Muls around its MatMuls), fuse_matmul_bias, fuse_residual and fuse_activation (every activation kind, SiLU, a QDQ model's
 * QuantizeLinear -> DequantizeLinear pair) and fold_qdq (a quantized layer takes the pair's scale and
 * zero point), each with the cases where the pattern must not fire. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/fused_attr.h"
#include "pass_test_util.h"

/* ---- fuse_gelu ------------------------------------------------------------------------- */

/* x is Relu'd into "x"-prefixed names so that the pattern input comes from a node. */
static tc__graph *gelu_graph(int64_t opset, int variant) {
    tc__graph *g = ptu_graph(opset);
    ptu_input(g, "in", TC_DTYPE_FLOAT32, variant == 4 ? "?x5" : "batchx5"); /* unknown dims are fine */
    ptu_scalar(g, "sqrt2", 1.41421);      /* 5 digits, as some exporters write it */
    ptu_scalar(g, "rsqrt2", 0.70710678);
    ptu_scalar(g, "one", 1.0);
    ptu_scalar(g, "half", 0.5);
    ptu_scalar(g, "two", 2.0);
    ptu_node(g, "Tanh", "in", "x");
    switch (variant) {
    case 0: /* x * 0.5 * (1 + erf(x / sqrt2)) */
        ptu_node(g, "Div", "x,sqrt2", "d");
        ptu_node(g, "Erf", "d", "e");
        ptu_node(g, "Add", "one,e", "a");
        ptu_node(g, "Mul", "x,half", "h");
        ptu_node(g, "Mul", "h,a", "y");
        break;
    case 1: /* (x * (erf(x * 0.7071) + 1)) * 0.5 */
        ptu_node(g, "Mul", "x,rsqrt2", "d");
        ptu_node(g, "Erf", "d", "e");
        ptu_node(g, "Add", "e,one", "a");
        ptu_node(g, "Mul", "x,a", "m");
        ptu_node(g, "Mul", "m,half", "y");
        break;
    case 2: /* x * ((erf(0.7071 * x) + 1) * 0.5), operands swapped */
        ptu_node(g, "Mul", "rsqrt2,x", "d");
        ptu_node(g, "Erf", "d", "e");
        ptu_node(g, "Add", "e,one", "a");
        ptu_node(g, "Mul", "half,a", "m");
        ptu_node(g, "Mul", "m,x", "y");
        break;
    case 3: /* (a * x) / 2, 0.5 * x first */
        ptu_node(g, "Div", "x,sqrt2", "d");
        ptu_node(g, "Erf", "d", "e");
        ptu_node(g, "Add", "e,one", "a");
        ptu_node(g, "Mul", "a,x", "m");
        ptu_node(g, "Div", "m,two", "y");
        break;
    default: /* (0.5 * x) * a written as Mul(a, h) */
        ptu_node(g, "Div", "x,sqrt2", "d");
        ptu_node(g, "Erf", "d", "e");
        ptu_node(g, "Add", "e,one", "a");
        ptu_node(g, "Mul", "half,x", "h");
        ptu_node(g, "Mul", "a,h", "y");
        break;
    }
    ptu_node(g, "Relu", "y", "out");
    ptu_output(g, "out");
    ptu_finish(g);
    return g;
}

static void test_gelu_variants(void **state) {
    (void)state;
    for (int variant = 0; variant < 5; variant++) {
        tc__graph *g = gelu_graph(variant == 2 ? 13 : 17, variant); /* Gelu works below opset 20 */
        assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_gelu), 1);
        assert_int_equal(g->n_nodes, 3);
        const tc__node *gelu = ptu_producer(g, "y");
        assert_string_equal(gelu->op_type, "Gelu");
        assert_int_equal(gelu->n_in, 1);
        assert_string_equal(ptu_in_name(g, gelu, 0), "x");
        assert_string_equal(tc__attr_string(&gelu->attrs, "approximate", ""), "none");
        tc__graph_destroy(g);
    }
}

static void test_gelu_negative(void **state) {
    (void)state;
    /* An intermediate read outside the pattern. */
    tc__graph *g = gelu_graph(17, 0);
    ptu_output(g, "e");
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_gelu), 0);
    tc__graph_destroy(g);
    /* The halved x read elsewhere too. */
    g = gelu_graph(17, 0);
    ptu_node(g, "Relu", "h", "h2");
    ptu_output(g, "h2");
    ptu_settle(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_gelu), 0);
    tc__graph_destroy(g);
    /* Wrong constant: x / 1.5. */
    g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "4");
    ptu_scalar(g, "c", 1.5);
    ptu_scalar(g, "one", 1.0);
    ptu_scalar(g, "half", 0.5);
    ptu_node(g, "Div", "x,c", "d");
    ptu_node(g, "Erf", "d", "e");
    ptu_node(g, "Add", "e,one", "a");
    ptu_node(g, "Mul", "x,a", "m");
    ptu_node(g, "Mul", "m,half", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_gelu), 0);
    tc__graph_destroy(g);
    /* Multiplied by a different value than the Erf's input. */
    g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "4");
    ptu_input(g, "z", TC_DTYPE_FLOAT32, "4");
    ptu_scalar(g, "c", 1.4142135);
    ptu_scalar(g, "one", 1.0);
    ptu_scalar(g, "half", 0.5);
    ptu_node(g, "Div", "x,c", "d");
    ptu_node(g, "Erf", "d", "e");
    ptu_node(g, "Add", "e,one", "a");
    ptu_node(g, "Mul", "z,a", "m");
    ptu_node(g, "Mul", "m,half", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_gelu), 0);
    tc__graph_destroy(g);
}

/* ---- fuse_hardswish -------------------------------------------------------------------- */

/* x = in * 4 (spanning the Clip's bounds at -3 and 3), then HardSwish as exporters write it. */
static tc__graph *hardswish_graph(int64_t opset, int variant) {
    tc__graph *g = ptu_graph(opset);
    ptu_input(g, "in", TC_DTYPE_FLOAT32, "2x7");
    ptu_scalar(g, "four", 4.0);
    ptu_scalar(g, "three", 3.0);
    ptu_scalar(g, "zero", 0.0);
    ptu_scalar(g, "six", 6.0);
    ptu_scalar(g, "sixth", 1.0 / 6.0);
    ptu_node(g, "Mul", "in,four", "x");
    ptu_node(g, "Add", variant % 2 ? "three,x" : "x,three", "a");
    ptu_node(g, "Clip", "a,zero,six", "c");
    switch (variant) {
    case 0: /* (x * c) / 6: Paddle's export */
    case 1:
        ptu_node(g, "Mul", "x,c", "m");
        ptu_node(g, "Div", "m,six", "y");
        break;
    case 2: /* (c * x) * (1/6) */
        ptu_node(g, "Mul", "c,x", "m");
        ptu_node(g, "Mul", "sixth,m", "y");
        break;
    case 3: /* x * (c / 6) */
        ptu_node(g, "Div", "c,six", "m");
        ptu_node(g, "Mul", "x,m", "y");
        break;
    default: /* (c * (1/6)) * x */
        ptu_node(g, "Mul", "c,sixth", "m");
        ptu_node(g, "Mul", "m,x", "y");
        break;
    }
    ptu_node(g, "Relu", "y", "out");
    ptu_output(g, "out");
    ptu_finish(g);
    return g;
}

static void test_hardswish_variants(void **state) {
    (void)state;
    for (int variant = 0; variant < 5; variant++) {
        tc__graph *g = hardswish_graph(13, variant); /* HardSwish runs below its opset 14 too */
        assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_hardswish), 1);
        assert_int_equal(ptu_count(g, "Clip"), 0);
        const tc__node *h = ptu_producer(g, "y");
        assert_string_equal(h->op_type, "HardSwish");
        assert_int_equal(h->n_in, 1);
        assert_string_equal(ptu_in_name(g, h, 0), "x");
        tc__graph_destroy(g);
    }
}

static void test_hardswish_negative(void **state) {
    (void)state;
    tc__graph *g = hardswish_graph(13, 0); /* the Clip read outside the pattern */
    ptu_output(g, "c");
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_hardswish), 0);
    tc__graph_destroy(g);
    g = hardswish_graph(13, 3); /* c / 6 read elsewhere */
    ptu_output(g, "m");
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_hardswish), 0);
    tc__graph_destroy(g);
    const char *bad[] = {"x,four", "x,six"}; /* x + 4; and the Clip to [0, 3] below */
    for (int k = 0; k < 2; k++) {
        g = ptu_graph(13);
        ptu_input(g, "x", TC_DTYPE_FLOAT32, "9");
        ptu_scalar(g, "four", 4.0);
        ptu_scalar(g, "three", 3.0);
        ptu_scalar(g, "zero", 0.0);
        ptu_scalar(g, "six", 6.0);
        ptu_node(g, "Add", k == 0 ? bad[0] : "x,three", "a");
        ptu_node(g, "Clip", k == 0 ? "a,zero,six" : "a,zero,three", "c");
        ptu_node(g, "Mul", "x,c", "m");
        ptu_node(g, "Div", "m,six", "y");
        ptu_output(g, "y");
        ptu_finish(g);
        assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_hardswish), 0);
        tc__graph_destroy(g);
    }
    /* multiplied by another value than the Add's input */
    g = ptu_graph(13);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "9");
    ptu_input(g, "z", TC_DTYPE_FLOAT32, "9");
    ptu_scalar(g, "three", 3.0);
    ptu_scalar(g, "zero", 0.0);
    ptu_scalar(g, "six", 6.0);
    ptu_node(g, "Add", "x,three", "a");
    ptu_node(g, "Clip", "a,zero,six", "c");
    ptu_node(g, "Mul", "z,c", "m");
    ptu_node(g, "Div", "m,six", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_hardswish), 0);
    tc__graph_destroy(g);
}

/* ---- fuse_nan_guard -------------------------------------------------------------------- */

/* x = in * Sqrt(r) (rows where r < 0 are NaN), s = Softmax(x), y = Where(IsNaN(s), c, s), as exporters write
 * the attention Softmax's guard. variant 0: the pattern; 1: s read elsewhere too; 2: Where(IsNaN(s), s, c)
 * (the other branch); 3: c an input, not a constant; 4: c of rank 3, so y broadcasts wider than s; 5: the
 * IsNaN read elsewhere too; 6: IsNaN of another value. */
static tc__graph *nan_guard_graph(int variant) {
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "in", TC_DTYPE_FLOAT32, "8x5");
    ptu_input(g, "r", TC_DTYPE_FLOAT32, "8x1");
    if (variant == 3) ptu_input(g, "c", TC_DTYPE_FLOAT32, "");
    else if (variant == 4) ptu_init_f(g, "c", "2x1x1", (const double[]){-1.5, 2.5});
    else ptu_scalar(g, "c", -1.5);
    ptu_node(g, "Sqrt", "r", "sr");
    ptu_node(g, "Mul", "in,sr", "x");
    ptu_node(g, "Softmax", "x", "s");
    ptu_node(g, "IsNaN", variant == 6 ? "x" : "s", "n");
    ptu_node(g, "Where", variant == 2 ? "n,s,c" : "n,c,s", "y");
    ptu_output(g, "y");
    if (variant == 1) ptu_output(g, "s");
    if (variant == 5) ptu_output(g, "n");
    ptu_finish(g);
    return g;
}

static void test_nan_guard(void **state) {
    (void)state;
    tc__graph *g = nan_guard_graph(0);
    tc__tensor before[1];
    ptu_run(g, 1, before);
    /* the inputs give rows of both kinds: guarded (all c) and plain softmax rows */
    int guarded = 0;
    for (int64_t i = 0; i < 40; i++) guarded += ((const float *)before[0].data)[i] == -1.5f;
    assert_true(guarded % 5 == 0 && guarded > 0 && guarded < 40);
    ptu_free_all(before, 1);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_nan_guard), 1);
    assert_int_equal(ptu_count(g, "IsNaN"), 0);
    assert_int_equal(ptu_count(g, "Where"), 0);
    const tc__node *sm = ptu_producer(g, "y");
    assert_string_equal(sm->op_type, "Softmax");
    assert_float_equal(tc__attr_float(&sm->attrs, TC__ATTR_NAN_TO, 0.0f), -1.5f, 0);
    assert_string_equal(sm->fused, "IsNaN+Where");
    assert_int_equal(ptu_apply(g, tc__pass_fuse_nan_guard), 0); /* once */
    tc__graph_destroy(g);
    for (int variant = 1; variant <= 6; variant++) {
        g = nan_guard_graph(variant);
        assert_int_equal(ptu_apply(g, tc__pass_fuse_nan_guard), 0); /* (some outputs hold NaN: no checked run) */
        assert_int_equal(ptu_count(g, "Where"), 1);
        tc__graph_destroy(g);
    }
}

/* ---- fuse_matmul_views ----------------------------------------------------------------- */

/* Attention as exporters write it: q, k, v [b, s, h, d] -> Transpose -> Mul(scale) -> MatMul -> Softmax ->
 * MatMul(., Transpose(v)) -> Transpose -> Reshape. variant 0: that; 1: the transposed q read elsewhere too;
 * 2: the output Transpose moves the last dim; 3: K a constant (a weight MatMul: left alone); 4: Mul by a
 * vector, not a scalar. */
static tc__graph *attention_graph(int variant) {
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "q", TC_DTYPE_FLOAT32, "1x5x3x4");
    if (variant == 3) ptu_init(g, "k", "1x5x3x4", 7);
    else ptu_input(g, "k", TC_DTYPE_FLOAT32, "1x5x3x4");
    ptu_input(g, "v", TC_DTYPE_FLOAT32, "1x5x3x4");
    ptu_scalar(g, "c", 0.7071);
    if (variant == 4) ptu_init_f(g, "cv", "4", (const double[]){0.5, 0.25, 2.0, 1.0});
    ptu_init_i64(g, "shape", "3", (const double[]){1, 5, 12});
    int32_t t;
    t = ptu_node(g, "Transpose", "q", "qt");
    ptu_attr_ints(g, t, "perm", 4, (const int64_t[]){0, 2, 1, 3});
    t = ptu_node(g, "Transpose", "k", "kt");
    ptu_attr_ints(g, t, "perm", 4, (const int64_t[]){0, 2, 3, 1});
    t = ptu_node(g, "Transpose", "v", "vt");
    ptu_attr_ints(g, t, "perm", 4, (const int64_t[]){0, 2, 1, 3});
    ptu_node(g, "Mul", variant == 4 ? "qt,cv" : "qt,c", "qs");
    ptu_node(g, "Mul", "c,kt", "ks");
    ptu_node(g, "MatMul", "qs,ks", "scores");
    ptu_node(g, "Softmax", "scores", "p");
    ptu_node(g, "MatMul", "p,vt", "o");
    t = ptu_node(g, "Transpose", "o", "ot");
    ptu_attr_ints(g, t, "perm", 4, variant == 2 ? (const int64_t[]){0, 2, 3, 1} : (const int64_t[]){0, 2, 1, 3});
    ptu_node(g, "Reshape", "ot,shape", "y");
    ptu_output(g, "y");
    if (variant == 1) {
        ptu_node(g, "Relu", "qt", "qr");
        ptu_output(g, "qr");
    }
    ptu_finish(g);
    return g;
}

static void test_matmul_views(void **state) {
    (void)state;
    tc__graph *g = attention_graph(0);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_matmul_views), 6); /* 3 Transposes and 2 Muls in, 1 out */
    assert_int_equal(ptu_count(g, "Transpose"), 0);
    assert_int_equal(ptu_count(g, "Mul"), 0);
    const tc__node *s = ptu_producer(g, "scores"), *o = ptu_producer(g, "ot");
    assert_string_equal(ptu_in_name(g, s, 0), "q");
    assert_string_equal(ptu_in_name(g, s, 1), "k");
    assert_float_equal(tc__attr_float(&s->attrs, TC__ATTR_MM_ALPHA, 0.0f), 0.7071f * 0.7071f, 1e-7);
    const int64_t *p;
    assert_int_equal(tc__attr_ints(&s->attrs, TC__ATTR_MM_B_PERM, &p), 4);
    assert_true(p[0] == 0 && p[1] == 2 && p[2] == 3 && p[3] == 1);
    assert_string_equal(o->op_type, "MatMul");
    assert_string_equal(ptu_in_name(g, o, 1), "v");
    assert_int_equal(tc__attr_ints(&o->attrs, TC__ATTR_MM_Y_PERM, &p), 4);
    assert_false(tc__attr_has(&o->attrs, TC__ATTR_MM_A_PERM) || tc__attr_has(&o->attrs, TC__ATTR_MM_ALPHA));
    assert_int_equal(ptu_apply(g, tc__pass_fuse_matmul_views), 0); /* once */
    tc__graph_destroy(g);
    /* q's Transpose read elsewhere: stays, its Mul still goes; the output Transpose moving the last dim stays;
     * a constant K: nothing on that MatMul (its operand is a known constant); a vector Mul stays, and so does
     * the Transpose behind it. */
    static const struct {
        int transposes, muls, changes;
    } kLeft[5] = {{0}, {1, 0, 5}, {1, 0, 5}, {2, 2, 2}, {1, 1, 4}};
    for (int variant = 1; variant <= 4; variant++) {
        g = attention_graph(variant);
        assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_matmul_views), kLeft[variant].changes);
        assert_int_equal(ptu_count(g, "Transpose"), kLeft[variant].transposes);
        assert_int_equal(ptu_count(g, "Mul"), kLeft[variant].muls);
        tc__graph_destroy(g);
    }
}

/* ---- fuse_matmul_bias ------------------------------------------------------------------ */

static void test_matmul_bias(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "batchx3x4");
    ptu_init(g, "w1", "4x5", 1);
    ptu_init(g, "b1", "5", 2);
    ptu_init(g, "w2", "5x6", 3);
    ptu_init(g, "b2", "1x1x6", 4);
    ptu_node(g, "MatMul", "x,w1", "m1");
    ptu_node(g, "Add", "m1,b1", "a1");
    ptu_node(g, "MatMul", "a1,w2", "m2");
    ptu_node(g, "Add", "b2,m2", "y"); /* bias first, rank 3 */
    ptu_output(g, "y");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_matmul_bias), 2);
    assert_int_equal(g->n_nodes, 2);
    const tc__node *m = ptu_producer(g, "y");
    assert_string_equal(m->op_type, "MatMul");
    assert_string_equal(m->fused, "Add");
    assert_int_equal(m->n_op_in, 2);
    assert_int_equal(m->n_in, 3);
    assert_int_equal(m->epi.bias_input, 2);
    const tc__value *bias = &g->values[m->in[2]];
    assert_int_equal(bias->info.shape.rank, 1);
    assert_int_equal(bias->init->rank, 1);
    assert_int_equal(bias->init->dims[0], 6);
    tc__graph_destroy(g);
}

static void test_matmul_bias_negative(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "2x3x4");
    ptu_input(g, "bx", TC_DTYPE_FLOAT32, "5");
    ptu_init(g, "w", "4x5", 1);
    ptu_init(g, "full", "3x5", 2);  /* not a last-dim bias */
    ptu_init(g, "wide", "1x1x1x5", 3); /* rank above the output's */
    ptu_init(g, "b", "5", 4);
    ptu_node(g, "MatMul", "x,w", "m1");
    ptu_node(g, "Add", "m1,full", "y1");
    ptu_node(g, "MatMul", "x,w", "m2");
    ptu_node(g, "Add", "m2,bx", "y2"); /* bias not constant */
    ptu_node(g, "MatMul", "x,w", "m3");
    ptu_node(g, "Add", "m3,wide", "y3");
    ptu_node(g, "MatMul", "x,w", "m4");
    ptu_node(g, "Add", "m4,b", "y4"); /* m4 is also a graph output */
    ptu_output(g, "y1");
    ptu_output(g, "y2");
    ptu_output(g, "y3");
    ptu_output(g, "y4");
    ptu_output(g, "m4");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_matmul_bias), 0);
    tc__graph_destroy(g);
}

/* ---- fuse_residual --------------------------------------------------------------------- */

static void test_residual_conv_and_matmul(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "batchx4x5x5");
    ptu_input(g, "t", TC_DTYPE_FLOAT32, "batchx3x4");
    ptu_init(g, "w", "4x4x3x3", 1);
    ptu_init(g, "b", "4", 2);
    ptu_init(g, "wm", "4x4", 3);
    ptu_init(g, "bm", "4", 4);
    const int64_t pads[] = {1, 1, 1, 1};
    int32_t c = ptu_node(g, "Conv", "x,w,b", "c");
    ptu_attr_ints(g, c, "pads", 4, pads);
    ptu_node(g, "Add", "x,c", "y1"); /* producer second */
    int32_t mm = ptu_node(g, "MatMul", "t,wm", "m");
    ptu_node(g, "Add", "m,t", "y2");
    ptu_output(g, "y1");
    ptu_output(g, "y2");
    ptu_finish(g);
    /* Give the MatMul a bias epilogue first: the residual goes after it. */
    int idx;
    tc__err err = {0};
    assert_int_equal(tc__graph_node_add_input(g, mm, tc__graph_find_value(g, "bm"), &idx, &err), TC_STATUS_OK);
    g->nodes[mm].epi.bias_input = (int8_t)idx;
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_residual), 2);
    assert_int_equal(g->n_nodes, 2);
    const tc__node *conv = ptu_producer(g, "y1");
    assert_string_equal(conv->op_type, "Conv");
    assert_string_equal(conv->fused, "Add");
    assert_int_equal(conv->n_op_in, 3);
    assert_int_equal(conv->epi.residual_input, 3);
    assert_string_equal(ptu_in_name(g, conv, 3), "x");
    const tc__node *m = ptu_producer(g, "y2");
    assert_int_equal(m->epi.bias_input, 2);
    assert_int_equal(m->epi.residual_input, 3);
    assert_string_equal(ptu_in_name(g, m, 3), "t");
    tc__graph_destroy(g);
}

/* An Add that already carries an activation moves it into the producer. */
static void test_residual_carries_activation(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "2x6");
    ptu_input(g, "r", TC_DTYPE_FLOAT32, "2x4");
    ptu_init(g, "w", "4x6", 1);
    int32_t gm = ptu_node(g, "Gemm", "x,w", "gm");
    ptu_attr_int(g, gm, "transB", 1);
    int32_t add = ptu_node(g, "Add", "gm,r", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    g->nodes[add].epi.act = TC__ACT_RELU;
    g->nodes[add].fused = "Relu";
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_residual), 1);
    const tc__node *p = ptu_producer(g, "y");
    assert_string_equal(p->op_type, "Gemm");
    assert_string_equal(p->fused, "Add+Relu");
    assert_int_equal(p->epi.act, TC__ACT_RELU);
    assert_int_equal(p->epi.residual_input, 2);
    tc__graph_destroy(g);
}

static void test_residual_negative(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "1x4x3x3");
    ptu_input(g, "cb", TC_DTYPE_FLOAT32, "1x4x1x1");
    ptu_init(g, "w", "4x4x1x1", 1);
    ptu_node(g, "Conv", "x,w", "c1");
    ptu_node(g, "Add", "c1,cb", "y1"); /* broadcasting */
    ptu_node(g, "Conv", "x,w", "c2");
    ptu_node(g, "Add", "c2,x", "y2"); /* c2 also read by Tanh */
    ptu_node(g, "Tanh", "c2", "y3");
    int32_t c3 = ptu_node(g, "Conv", "x,w", "c3");
    ptu_node(g, "Add", "c3,x", "y4"); /* conv already has an activation */
    ptu_node(g, "Relu", "x", "rx");
    ptu_node(g, "Add", "rx,x", "y5"); /* producer is not Conv/Gemm/MatMul */
    ptu_output(g, "y1");
    ptu_output(g, "y2");
    ptu_output(g, "y3");
    ptu_output(g, "y4");
    ptu_output(g, "y5");
    ptu_finish(g);
    g->nodes[c3].epi.act = TC__ACT_RELU;
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_residual), 0);
    assert_int_equal(ptu_count(g, "Add"), 4);
    tc__graph_destroy(g);
}

/* ---- fuse_activation ------------------------------------------------------------------- */

/* x -> MatMul -> act node (with extra inputs) -> y; returns the graph after fusing. */
static tc__graph *act_graph(int64_t opset, const char *op, const char *extra_inputs, int32_t *act_node) {
    tc__graph *g = ptu_graph(opset);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "batchx3x4");
    ptu_init(g, "w", "4x5", 1);
    ptu_scalar(g, "lo", -0.3);
    ptu_scalar(g, "hi", 0.4);
    ptu_node(g, "MatMul", "x,w", "m");
    char ins[64];
    snprintf(ins, sizeof ins, "m%s", extra_inputs);
    *act_node = ptu_node(g, op, ins, "y");
    ptu_output(g, "y");
    return g;
}

static void check_act(tc__graph *g, int act, float alpha, float beta, const char *fused) {
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_activation), 1);
    assert_int_equal(g->n_nodes, 1);
    const tc__node *p = ptu_producer(g, "y");
    assert_string_equal(p->op_type, "MatMul");
    assert_int_equal(p->epi.act, act);
    assert_float_equal(p->epi.alpha, alpha, 1e-7);
    assert_float_equal(p->epi.beta, beta, 1e-7);
    assert_string_equal(p->fused, fused);
    tc__graph_destroy(g);
}

static void test_activation_kinds(void **state) {
    (void)state;
    int32_t n;
    check_act(act_graph(17, "Relu", "", &n), TC__ACT_RELU, 0, 0, "Relu");
    check_act(act_graph(17, "Sigmoid", "", &n), TC__ACT_SIGMOID, 0, 0, "Sigmoid");
    check_act(act_graph(17, "Tanh", "", &n), TC__ACT_TANH, 0, 0, "Tanh");
    check_act(act_graph(17, "HardSwish", "", &n), TC__ACT_HARDSWISH, 0, 0, "HardSwish");
    tc__graph *g = act_graph(17, "LeakyRelu", "", &n);
    ptu_attr_float(g, n, "alpha", 0.25f);
    check_act(g, TC__ACT_LEAKY_RELU, 0.25f, 0, "LeakyRelu");
    check_act(act_graph(17, "LeakyRelu", "", &n), TC__ACT_LEAKY_RELU, 0.01f, 0, "LeakyRelu");
    g = act_graph(17, "HardSigmoid", "", &n);
    ptu_attr_float(g, n, "alpha", 0.3f);
    check_act(g, TC__ACT_HARDSIGMOID, 0.3f, 0.5f, "HardSigmoid");
    check_act(act_graph(17, "Gelu", "", &n), TC__ACT_GELU_ERF, 0, 0, "Gelu");
    g = act_graph(17, "Gelu", "", &n);
    ptu_attr_string(g, n, "approximate", "tanh");
    check_act(g, TC__ACT_GELU_TANH, 0, 0, "Gelu");
    check_act(act_graph(13, "Clip", ",lo,hi", &n), TC__ACT_CLIP, -0.3f, 0.4f, "Clip");
    check_act(act_graph(13, "Clip", ",lo", &n), TC__ACT_CLIP, -0.3f, INFINITY, "Clip");
    check_act(act_graph(13, "Clip", ",,hi", &n), TC__ACT_CLIP, -INFINITY, 0.4f, "Clip");
    g = act_graph(10, "Clip", "", &n); /* attributes before opset 11 */
    ptu_attr_float(g, n, "min", 0.0f);
    ptu_attr_float(g, n, "max", 0.5f);
    check_act(g, TC__ACT_CLIP, 0.0f, 0.5f, "Clip");
}

static void test_activation_producers(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "1x3x4x4");
    ptu_input(g, "v", TC_DTYPE_FLOAT32, "2x3");
    ptu_init(g, "w", "3x3x1x1", 1);
    ptu_init(g, "gw", "3x3", 2);
    ptu_node(g, "Conv", "x,w", "c");
    ptu_node(g, "Relu", "c", "y1");
    ptu_node(g, "Gemm", "v,gw", "gm");
    ptu_node(g, "Tanh", "gm", "y2");
    ptu_node(g, "Add", "v,v", "a");
    ptu_node(g, "Sigmoid", "a", "y3");
    ptu_output(g, "y1");
    ptu_output(g, "y2");
    ptu_output(g, "y3");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_activation), 3);
    assert_int_equal(g->n_nodes, 3);
    assert_int_equal(ptu_producer(g, "y1")->epi.act, TC__ACT_RELU);
    assert_int_equal(ptu_producer(g, "y2")->epi.act, TC__ACT_TANH);
    assert_string_equal(ptu_producer(g, "y3")->op_type, "Add");
    assert_int_equal(ptu_producer(g, "y3")->epi.act, TC__ACT_SIGMOID);
    tc__graph_destroy(g);
}

static void test_silu(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "1x3x4x4");
    ptu_init(g, "w", "3x3x1x1", 1);
    ptu_init(g, "w2", "3x3x1x1", 2);
    ptu_node(g, "Conv", "x,w", "c");
    ptu_node(g, "Sigmoid", "c", "s");
    ptu_node(g, "Mul", "c,s", "y1");
    ptu_node(g, "Conv", "y1,w2", "c2");
    ptu_node(g, "Sigmoid", "c2", "s2");
    ptu_node(g, "Mul", "s2,c2", "y2"); /* swapped */
    ptu_output(g, "y2");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_activation), 2);
    assert_int_equal(g->n_nodes, 2);
    const tc__node *p = ptu_producer(g, "y2");
    assert_string_equal(p->op_type, "Conv");
    assert_int_equal(p->epi.act, TC__ACT_SILU);
    assert_string_equal(p->fused, "Sigmoid+Mul");
    assert_int_equal(ptu_producer(g, "y1")->epi.act, TC__ACT_SILU);
    tc__graph_destroy(g);
}

static void test_activation_negative(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "2x4");
    ptu_input(g, "lo", TC_DTYPE_FLOAT32, "");
    ptu_input(g, "i", TC_DTYPE_INT64, "2x4");
    ptu_init(g, "w", "4x4", 1);
    ptu_node(g, "MatMul", "x,w", "m1");
    ptu_node(g, "Relu", "m1", "y1"); /* m1 is a graph output too */
    ptu_node(g, "MatMul", "x,w", "m2");
    ptu_node(g, "Clip", "m2,lo", "y2"); /* non-constant min */
    ptu_node(g, "Tanh", "x", "t");
    ptu_node(g, "Relu", "t", "y3"); /* producer is not fusable */
    ptu_node(g, "Add", "i,i", "ia");
    ptu_node(g, "Relu", "ia", "y4"); /* integer output */
    ptu_node(g, "MatMul", "x,w", "m5");
    ptu_node(g, "Sigmoid", "m5", "s5");
    ptu_node(g, "Mul", "m5,s5", "y5"); /* SiLU whose sigmoid is also an output */
    ptu_output(g, "y1");
    ptu_output(g, "m1");
    ptu_output(g, "y2");
    ptu_output(g, "y3");
    ptu_output(g, "y4");
    ptu_output(g, "y5");
    ptu_output(g, "s5");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_activation), 0);
    tc__graph_destroy(g);
    /* A second activation does not stack on the first. */
    g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "2x4");
    ptu_init(g, "w", "4x4", 1);
    ptu_node(g, "MatMul", "x,w", "m");
    ptu_node(g, "Relu", "m", "r");
    ptu_node(g, "Tanh", "r", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_activation), 1);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_activation), 0);
    assert_int_equal(g->n_nodes, 2);
    tc__graph_destroy(g);
}

/* x -> Q -> DQ -> Conv(w1) -> Q -> DQ -> Conv(w2) -> y (uint8, zero points 7 and 0; int8 for the second
 * pair when s8): the second pair becomes conv1's FAKE_QUANT epilogue, the first stays; both convs take
 * their input's scale and zero point. Outputs agree before and after. */
static tc__graph *qdq_graph(bool s8, bool second_reader) {
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "1x4x5x5");
    ptu_init(g, "w1", "8x4x3x3", 1);
    ptu_init(g, "w2", "16x8x1x1", 2);
    ptu_scalar(g, "s1", 0.02);
    ptu_scalar(g, "s2", 0.05);
    const double z1 = 7, z2 = 0;
    ptu_init_ex(g, "z1", TC_DTYPE_UINT8, "", &z1, 0, 0, 0);
    ptu_init_ex(g, "z2", s8 ? TC_DTYPE_INT8 : TC_DTYPE_UINT8, "", &z2, 0, 0, 0);
    ptu_node(g, "QuantizeLinear", "x,s1,z1", "xq");
    ptu_node(g, "DequantizeLinear", "xq,s1,z1", "xd");
    int32_t c1 = ptu_node(g, "Conv", "xd,w1", "c1");
    ptu_attr_ints(g, c1, "pads", 4, (const int64_t[]){1, 1, 1, 1});
    ptu_node(g, "QuantizeLinear", "c1,s2,z2", "cq");
    ptu_node(g, "DequantizeLinear", "cq,s2,z2", "cd");
    ptu_node(g, "Conv", "cd,w2", "y");
    ptu_output(g, "y");
    if (second_reader) { /* c1 is also a graph output: the pair cannot move into conv1 */
        ptu_output(g, "c1");
    }
    ptu_finish(g);
    return g;
}

static void test_qdq_pair(void **state) {
    (void)state;
    for (int s8 = 0; s8 < 2; s8++) {
        tc__graph *g = qdq_graph(s8, false);
        assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_activation), 1);
        assert_int_equal(ptu_count(g, "QuantizeLinear"), 1); /* the input's pair stays: no producer */
        const tc__node *c1 = ptu_producer(g, "cd");
        assert_string_equal(c1->op_type, "Conv");
        assert_int_equal(c1->epi.act, TC__ACT_FAKE_QUANT);
        assert_float_equal(c1->epi.alpha, 0.05f, 0);
        assert_float_equal(c1->epi.beta, s8 ? -128.0f : 0.0f, 0); /* lowest code - zero point */
        assert_string_equal(c1->fused, "QuantizeLinear+DequantizeLinear");
        assert_int_equal(ptu_apply_checked(g, tc__pass_fold_qdq), 2);
        const tc__node *a = ptu_producer(g, "cd"), *b = ptu_producer(g, "y"); /* conv1 now writes cd */
        assert_float_equal(tc__attr_float(&a->attrs, "tc.int8_scale", 0), 0.02f, 0);
        assert_int_equal(tc__attr_int(&a->attrs, "tc.int8_zero_point", -1), 7);
        assert_float_equal(tc__attr_float(&b->attrs, "tc.int8_scale", 0), 0.05f, 0);
        assert_int_equal(tc__attr_int(&b->attrs, "tc.int8_zero_point", -1), s8 ? 128 : 0);
        assert_int_equal(ptu_apply(g, tc__pass_fold_qdq), 0); /* once */
        tc__graph_destroy(g);
    }
    /* conv1's output read elsewhere: the pair stays, and the second conv still takes its scale from it. */
    tc__graph *g = qdq_graph(false, true);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_activation), 0);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fold_qdq), 2);
    assert_float_equal(tc__attr_float(&ptu_producer(g, "y")->attrs, "tc.int8_scale", 0), 0.05f, 0);
    tc__graph_destroy(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gelu_variants),
        cmocka_unit_test(test_gelu_negative),
        cmocka_unit_test(test_hardswish_variants),
        cmocka_unit_test(test_hardswish_negative),
        cmocka_unit_test(test_nan_guard),
        cmocka_unit_test(test_matmul_views),
        cmocka_unit_test(test_matmul_bias),
        cmocka_unit_test(test_matmul_bias_negative),
        cmocka_unit_test(test_residual_conv_and_matmul),
        cmocka_unit_test(test_residual_carries_activation),
        cmocka_unit_test(test_residual_negative),
        cmocka_unit_test(test_activation_kinds),
        cmocka_unit_test(test_qdq_pair),
        cmocka_unit_test(test_activation_producers),
        cmocka_unit_test(test_silu),
        cmocka_unit_test(test_activation_negative),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
