/* test_passes_fold.c - the fold_constants pass (constant subgraphs, Shape arithmetic on static
 * shapes, Constant nodes, the size cap) and the fold_batchnorm pass (Conv with and without bias,
 * Gemm with transB 0/1, shared weights, and the cases that must not fold). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pass_test_util.h"

/* ---- fold_constants --------------------------------------------------------------------- */

static void test_fold_constant_subgraph(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "batchx3");
    ptu_init(g, "w", "4x3", 1);
    ptu_init(g, "s", "3x4", 2);
    ptu_node(g, "Transpose", "w", "wt"); /* [3, 4] */
    ptu_node(g, "Mul", "wt,s", "ws");
    ptu_node(g, "MatMul", "x,ws", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fold_constants), 2);
    assert_int_equal(g->n_nodes, 1);
    int32_t ws = tc__graph_find_value(g, "ws");
    assert_non_null(g->values[ws].init);
    assert_ptr_equal(g->values[ws].info.value, g->values[ws].init);
    assert_int_equal(g->values[ws].producer, -1);
    assert_string_equal(ptu_in_name(g, &g->nodes[0], 1), "ws");
    tc__graph_destroy(g);
}

/* Shape -> Gather -> Concat -> Reshape on a static input folds to a constant shape. */
static void test_fold_shape_arithmetic(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "2x3x4");
    const double zero = 0, minus1 = -1;
    ptu_init_i64(g, "i0", "1", &zero);
    ptu_init_i64(g, "m1", "1", &minus1);
    ptu_node(g, "Shape", "x", "s");
    ptu_node(g, "Gather", "s,i0", "b");
    int32_t cat = ptu_node(g, "Concat", "b,m1", "shape");
    ptu_attr_int(g, cat, "axis", 0);
    ptu_node(g, "Reshape", "x,shape", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fold_constants), 3);
    assert_int_equal(g->n_nodes, 1);
    const tc__tensor *shape = g->values[tc__graph_find_value(g, "shape")].init;
    assert_non_null(shape);
    assert_int_equal(tc__tensor_get_i64(shape, 0), 2);
    assert_int_equal(tc__tensor_get_i64(shape, 1), -1);
    tc__graph_destroy(g);
}

/* With a symbolic batch, Shape stays; a Constant node becomes an initializer. */
static void test_fold_symbolic_and_constant_node(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "batchx3");
    ptu_node(g, "Shape", "x", "s");
    ptu_node(g, "ConstantOfShape", "s", "zeros");
    int32_t c = ptu_node(g, "Constant", "", "k");
    tc__tensor t;
    tc__err err = {0};
    int64_t dim = 3;
    assert_int_equal(tc__tensor_alloc(&t, TC_DTYPE_FLOAT32, 1, &dim, &err), TC_STATUS_OK);
    for (int i = 0; i < 3; i++) ((float *)t.data)[i] = 0.5f * (float)(i + 1);
    tc__tensor *tv = tc__arena_alloc(&g->arena, sizeof *tv, 8);
    *tv = t;
    tv->data = tc__arena_alloc(&g->arena, t.nbytes, 64);
    memcpy(tv->data, t.data, t.nbytes);
    tc__tensor_free(&t);
    ptu_attr_slot(g, c, "value", TC__ATTR_TENSOR)->t = tv;
    ptu_node(g, "Add", "zeros,k", "a");
    ptu_node(g, "Mul", "a,x", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fold_constants), 1);
    assert_int_equal(ptu_count(g, "Constant"), 0);
    assert_int_equal(ptu_count(g, "Shape"), 1);
    assert_non_null(g->values[tc__graph_find_value(g, "k")].init);
    tc__graph_destroy(g);
}

/* Outputs above 16 Mi elements are not folded. */
static void test_fold_size_cap(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "1");
    const double big = (double)((16 << 20) + 1), small = 8;
    ptu_init_i64(g, "big", "1", &big);
    ptu_init_i64(g, "small", "1", &small);
    ptu_node(g, "ConstantOfShape", "big", "zb");
    ptu_node(g, "ConstantOfShape", "small", "zs");
    ptu_node(g, "ReduceSum", "zb", "rb");
    ptu_node(g, "Add", "zs,x", "y1");
    ptu_node(g, "Add", "rb,x", "y2");
    ptu_output(g, "y1");
    ptu_output(g, "y2");
    ptu_finish(g);
    assert_int_equal(ptu_apply(g, tc__pass_fold_constants), 1);
    assert_int_equal(ptu_count(g, "ConstantOfShape"), 1);
    assert_int_equal(ptu_count(g, "ReduceSum"), 1);
    tc__graph_destroy(g);
}

/* ---- fold_batchnorm --------------------------------------------------------------------- */

/* Adds BatchNormalization "bn_<out>" on `in` with random positive variance; params prefixed by p. */
static int32_t add_bn(tc__graph *g, const char *in, const char *out, const char *p, int64_t c, uint64_t seed) {
    char shape[16], names[5][64], list[400];
    snprintf(shape, sizeof shape, "%lld", (long long)c);
    const char *suffix[4] = {"scale", "bias", "mean", "var"};
    for (int i = 0; i < 4; i++) snprintf(names[i], sizeof names[i], "%s_%s", p, suffix[i]);
    ptu_init_ex(g, names[0], TC_DTYPE_FLOAT32, shape, NULL, seed, 0.5, 1.5);
    ptu_init_ex(g, names[1], TC_DTYPE_FLOAT32, shape, NULL, seed + 1, -1.0, 1.0);
    ptu_init_ex(g, names[2], TC_DTYPE_FLOAT32, shape, NULL, seed + 2, -0.5, 0.5);
    ptu_init_ex(g, names[3], TC_DTYPE_FLOAT32, shape, NULL, seed + 3, 0.2, 2.0);
    snprintf(list, sizeof list, "%s,%s,%s,%s,%s", in, names[0], names[1], names[2], names[3]);
    int32_t n = ptu_node(g, "BatchNormalization", list, out);
    ptu_attr_float(g, n, "epsilon", 1e-3f);
    return n;
}

static void test_fold_bn_conv(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "batchx3x6x6");
    ptu_init(g, "w1", "4x3x3x3", 1);
    ptu_init(g, "b1", "4", 2);
    ptu_init(g, "w2", "5x4x1x1", 3);
    const int64_t pads[] = {1, 1, 1, 1};
    int32_t c1 = ptu_node(g, "Conv", "x,w1,b1", "c1");
    ptu_attr_ints(g, c1, "pads", 4, pads);
    add_bn(g, "c1", "n1", "bn1", 4, 10);
    ptu_node(g, "Conv", "n1,w2", "c2"); /* no bias: gets one */
    add_bn(g, "c2", "y", "bn2", 5, 20);
    ptu_output(g, "y");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fold_batchnorm), 2);
    assert_int_equal(g->n_nodes, 2);
    const tc__node *a = ptu_producer(g, "n1"), *b = ptu_producer(g, "y");
    assert_string_equal(a->op_type, "Conv");
    assert_string_equal(a->fused, "BatchNormalization");
    assert_string_equal(b->fused, "BatchNormalization");
    assert_int_equal(b->n_in, 3);
    assert_int_equal(b->n_op_in, 3);
    assert_true(tc__epilogue_is_none(&b->epi));
    /* The original weights are untouched. */
    assert_string_not_equal(ptu_in_name(g, a, 1), "w1");
    assert_non_null(g->values[tc__graph_find_value(g, "w1")].init);
    tc__graph_destroy(g);
}

static void test_fold_bn_gemm(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "batchx4");
    ptu_init(g, "w1", "6x4", 1); /* transB = 1 */
    ptu_init(g, "c1", "6", 2);
    ptu_init(g, "w2", "6x3", 3); /* transB = 0, C [1, 3] with beta 0.5 */
    ptu_init(g, "c2", "1x3", 4);
    ptu_init(g, "w3", "3x2", 5); /* no C */
    int32_t g1 = ptu_node(g, "Gemm", "x,w1,c1", "g1");
    ptu_attr_int(g, g1, "transB", 1);
    ptu_attr_float(g, g1, "alpha", 0.7f);
    add_bn(g, "g1", "n1", "bn1", 6, 10);
    int32_t g2 = ptu_node(g, "Gemm", "n1,w2,c2", "g2");
    ptu_attr_float(g, g2, "beta", 0.5f);
    add_bn(g, "g2", "n2", "bn2", 3, 20);
    ptu_node(g, "Gemm", "n2,w3", "g3");
    add_bn(g, "g3", "y", "bn3", 2, 30);
    ptu_output(g, "y");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fold_batchnorm), 3);
    assert_int_equal(g->n_nodes, 3);
    assert_int_equal(ptu_count(g, "Gemm"), 3);
    const tc__node *n2 = ptu_producer(g, "n2"), *y = ptu_producer(g, "y");
    assert_float_equal(tc__attr_float(&n2->attrs, "beta", 0.0f), 1.0f, 0.0f);
    assert_int_equal(y->n_op_in, 3);
    assert_string_equal(y->fused, "BatchNormalization");
    tc__graph_destroy(g);
}

/* Two Convs share a weight; only one is followed by BN. The shared weight must stay intact. */
static void test_fold_bn_shared_weight(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "1x3x5x5");
    int32_t w = ptu_init(g, "w", "3x3x1x1", 1);
    ptu_init(g, "b", "3", 2);
    ptu_node(g, "Conv", "x,w,b", "c1");
    add_bn(g, "c1", "y1", "bn", 3, 10);
    ptu_node(g, "Conv", "x,w,b", "y2");
    ptu_output(g, "y1");
    ptu_output(g, "y2");
    ptu_finish(g);
    float before[9];
    memcpy(before, g->values[w].init->data, sizeof before);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fold_batchnorm), 1);
    assert_int_equal(memcmp(before, g->values[w].init->data, sizeof before), 0);
    const tc__node *other = ptu_producer(g, "y2");
    assert_string_equal(ptu_in_name(g, other, 1), "w");
    assert_string_equal(ptu_in_name(g, other, 2), "b");
    assert_string_not_equal(ptu_in_name(g, ptu_producer(g, "y1"), 1), "w");
    tc__graph_destroy(g);
}

/* Must not fold: Conv output read twice, BN mean not constant, Conv with an epilogue,
 * Conv weight not constant, BN in training mode. */
static void test_fold_bn_negative(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "1x3x4x4");
    ptu_input(g, "mean", TC_DTYPE_FLOAT32, "3");
    ptu_input(g, "wx", TC_DTYPE_FLOAT32, "3x3x1x1");
    ptu_init(g, "w", "3x3x1x1", 1);
    ptu_init(g, "scale", "3", 2);
    ptu_init(g, "bias", "3", 3);
    ptu_init_ex(g, "var", TC_DTYPE_FLOAT32, "3", NULL, 4, 0.5, 1.5);
    ptu_init(g, "mean_c", "3", 5);
    /* 1: conv output also a graph output */
    ptu_node(g, "Conv", "x,w", "c1");
    ptu_node(g, "BatchNormalization", "c1,scale,bias,mean_c,var", "y1");
    /* 2: non-constant mean */
    ptu_node(g, "Conv", "x,w", "c2");
    ptu_node(g, "BatchNormalization", "c2,scale,bias,mean,var", "y2");
    /* 3: conv with a fused Relu */
    int32_t c3 = ptu_node(g, "Conv", "x,w", "c3");
    g->nodes[c3].epi.act = TC__ACT_RELU;
    ptu_node(g, "BatchNormalization", "c3,scale,bias,mean_c,var", "y3");
    /* 4: weight is a graph input */
    ptu_node(g, "Conv", "x,wx", "c4");
    ptu_node(g, "BatchNormalization", "c4,scale,bias,mean_c,var", "y4");
    ptu_output(g, "c1");
    ptu_output(g, "y1");
    ptu_output(g, "y2");
    ptu_output(g, "y3");
    ptu_output(g, "y4");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_fold_batchnorm), 0);
    assert_int_equal(ptu_count(g, "BatchNormalization"), 4);
    /* 5: training mode (structure only: the reference does not run training BN here) */
    tc__graph *h = ptu_graph(15);
    ptu_input(h, "x", TC_DTYPE_FLOAT32, "2x3x4x4");
    ptu_init(h, "w", "3x3x1x1", 1);
    ptu_init(h, "scale", "3", 2);
    ptu_init(h, "bias", "3", 3);
    ptu_init(h, "mean", "3", 4);
    ptu_init_ex(h, "var", TC_DTYPE_FLOAT32, "3", NULL, 4, 0.5, 1.5);
    ptu_node(h, "Conv", "x,w", "c");
    int32_t bn = ptu_node(h, "BatchNormalization", "c,scale,bias,mean,var", "y");
    ptu_attr_int(h, bn, "training_mode", 1);
    ptu_output(h, "y");
    ptu_finish(h);
    assert_int_equal(ptu_apply(h, tc__pass_fold_batchnorm), 0);
    tc__graph_destroy(h);
    tc__graph_destroy(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fold_constant_subgraph),
        cmocka_unit_test(test_fold_shape_arithmetic),
        cmocka_unit_test(test_fold_symbolic_and_constant_node),
        cmocka_unit_test(test_fold_size_cap),
        cmocka_unit_test(test_fold_bn_conv),
        cmocka_unit_test(test_fold_bn_gemm),
        cmocka_unit_test(test_fold_bn_shared_weight),
        cmocka_unit_test(test_fold_bn_negative),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
