/* test_passes_pipeline.c - the whole pass pipeline (tc__passes_run) on a small ResNet-style
 * block and a small BERT-style layer: expected fused steps, unchanged outputs, off switches,
 * and the pass list itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pass_test_util.h"

/* Adds BatchNormalization on `in` writing `out`, parameters named after out. */

/* The index of the pass named name in the report's changes (passes.inc order). */
static int pass_index(const char *name) {
    for (int i = 0; i < tc__pass_count(); i++)
        if (strcmp(tc__pass_name(i), name) == 0) return i;
    fail_msg("no pass %s", name);
    return -1;
}
static void add_bn(tc__graph *g, const char *in, const char *out, int64_t c, uint64_t seed) {
    char shape[16], p[4][64], list[400];
    snprintf(shape, sizeof shape, "%lld", (long long)c);
    const char *suffix[4] = {"scale", "bias", "mean", "var"};
    const double lo[4] = {0.5, -0.5, -0.3, 0.3}, hi[4] = {1.5, 0.5, 0.3, 1.5};
    for (int i = 0; i < 4; i++) {
        snprintf(p[i], sizeof p[i], "%s_%s", out, suffix[i]);
        ptu_init_ex(g, p[i], TC_DTYPE_FLOAT32, shape, NULL, seed + (uint64_t)i, lo[i], hi[i]);
    }
    snprintf(list, sizeof list, "%s,%s,%s,%s,%s", in, p[0], p[1], p[2], p[3]);
    ptu_node(g, "BatchNormalization", list, out);
}

static int32_t conv(tc__graph *g, const char *ins, const char *out, int64_t k, int64_t stride) {
    int32_t n = ptu_node(g, "Conv", ins, out);
    const int64_t pads[] = {k / 2, k / 2, k / 2, k / 2}, strides[] = {stride, stride}, ks[] = {k, k};
    ptu_attr_ints(g, n, "pads", 4, pads);
    ptu_attr_ints(g, n, "strides", 2, strides);
    ptu_attr_ints(g, n, "kernel_shape", 2, ks);
    return n;
}

/* Conv-BN-Relu, Conv-BN, downsample Conv-BN, Add, Relu, then an Identity and a Flatten. */
static tc__graph *resnet_block(void) {
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "batchx4x8x8");
    ptu_init(g, "w1", "8x4x3x3", 1);
    ptu_init(g, "w2", "8x8x3x3", 2);
    ptu_init(g, "wd", "8x4x1x1", 3);
    conv(g, "x,w1", "c1", 3, 2);
    add_bn(g, "c1", "n1", 8, 10);
    ptu_node(g, "Relu", "n1", "r1");
    conv(g, "r1,w2", "c2", 3, 1);
    add_bn(g, "c2", "n2", 8, 20);
    conv(g, "x,wd", "cd", 1, 2);
    add_bn(g, "cd", "nd", 8, 30);
    ptu_node(g, "Add", "n2,nd", "sum");
    ptu_node(g, "Relu", "sum", "r");
    ptu_node(g, "Identity", "r", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    return g;
}

static int run_pipeline(tc__graph *g, uint32_t disabled, tc__pass_report *report) {
    tc__tensor before[PTU_MAX_IO], after[PTU_MAX_IO];
    ptu_run(g, 3, before);
    tc__err err = {0};
    tc_status st = tc__passes_run(g, disabled, tc__ref_eval, &g->opset, report, &err);
    if (st != TC_STATUS_OK) fail_msg("passes: %s", err.msg);
    assert_int_equal(tc__graph_verify(g, false, &err), TC_STATUS_OK);
    ptu_run(g, 3, after);
    ptu_compare(before, after, g->n_outputs, 1e-5);
    ptu_free_all(before, g->n_outputs);
    ptu_free_all(after, g->n_outputs);
    return g->n_nodes;
}

static void test_resnet_block(void **state) {
    (void)state;
    tc__graph *g = resnet_block();
    assert_int_equal(g->n_nodes, 10);
    tc__pass_report report;
    assert_int_equal(run_pipeline(g, 0, &report), 3);
    assert_int_equal(ptu_count(g, "Conv"), 3);
    const tc__node *c1 = ptu_producer(g, "r1"), *c2 = ptu_producer(g, "y");
    assert_string_equal(c1->fused, "BatchNormalization+Relu");
    assert_int_equal(c1->epi.act, TC__ACT_RELU);
    assert_string_equal(c2->op_type, "Conv");
    assert_string_equal(c2->fused, "BatchNormalization+Add+Relu");
    assert_int_equal(c2->epi.act, TC__ACT_RELU);
    assert_true(c2->epi.residual_input >= 0);
    assert_string_equal(ptu_in_name(g, c2, c2->epi.residual_input), "nd");
    assert_string_equal(ptu_producer(g, "nd")->fused, "BatchNormalization");
    assert_string_equal(g->values[g->outputs[0]].name, "y");
    assert_true(report.rounds >= 2);
    assert_int_equal(report.changes[pass_index("eliminate_noops")], 1); /* Identity */
    assert_int_equal(report.changes[pass_index("fold_batchnorm")], 3); /* three BatchNormalizations */
    assert_int_equal(report.changes[pass_index("fuse_residual")], 1); /* residual */
    assert_int_equal(report.changes[pass_index("fuse_activation")], 2); /* two Relus */
    /* The original conv weights and BN parameters are no longer stored. */
    assert_null(g->values[tc__graph_find_value(g, "w1")].init);
    assert_null(g->values[tc__graph_find_value(g, "n1_var")].init);
    tc__graph_destroy(g);
}

/* Off switches: without BN folding nothing downstream of a BN fuses into the Conv. */
static void test_resnet_block_switches(void **state) {
    (void)state;
    tc__graph *g = resnet_block();
    assert_int_equal(run_pipeline(g, TC_PASS_FOLD_BATCHNORM, NULL), 8); /* 3 Conv, 3 BN, Relu, Add{Relu} */
    assert_int_equal(ptu_count(g, "BatchNormalization"), 3);
    assert_int_equal(ptu_count(g, "Identity"), 0);
    tc__graph_destroy(g);
    g = resnet_block();
    assert_int_equal(run_pipeline(g, 0xffffffffu, NULL), 10);
    tc__graph_destroy(g);
}

/* MatMul+Add, Erf GELU, MatMul+Add, residual Add, LayerNormalization; Shape arithmetic around
 * a Reshape that turns out to be a no-op, and an inference Dropout. */
static tc__graph *bert_layer(void) {
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "batchxseqx8");
    ptu_init(g, "w1", "8x16", 1);
    ptu_init(g, "b1", "16", 2);
    ptu_init(g, "w2", "16x8", 3);
    ptu_init(g, "b2", "8", 4);
    ptu_init(g, "gamma", "8", 5);
    ptu_init(g, "beta", "8", 6);
    ptu_scalar(g, "sqrt2", 1.4142135381698608);
    ptu_scalar(g, "one", 1.0);
    ptu_scalar(g, "half", 0.5);
    const double last[] = {8}, zero[] = {0}, one[] = {1};
    ptu_init_i64(g, "hidden", "1", last);
    ptu_init_i64(g, "i0", "1", zero);
    ptu_init_i64(g, "i1", "1", one);
    ptu_node(g, "MatMul", "x,w1", "m1");
    ptu_node(g, "Add", "b1,m1", "h");
    ptu_node(g, "Div", "h,sqrt2", "d");
    ptu_node(g, "Erf", "d", "e");
    ptu_node(g, "Add", "e,one", "a");
    ptu_node(g, "Mul", "h,a", "hm");
    ptu_node(g, "Mul", "hm,half", "gelu");
    ptu_node(g, "MatMul", "gelu,w2", "m2");
    ptu_node(g, "Add", "m2,b2", "o");
    /* Reshape(o, [dim0, dim1, 8]) from Shape(x): symbolic here, so it stays. */
    ptu_node(g, "Shape", "x", "sx");
    ptu_node(g, "Gather", "sx,i0", "s0");
    ptu_node(g, "Gather", "sx,i1", "s1");
    int32_t cat = ptu_node(g, "Concat", "s0,s1,hidden", "shape");
    ptu_attr_int(g, cat, "axis", 0);
    ptu_node(g, "Reshape", "o,shape", "or");
    ptu_node(g, "Dropout", "or", "od");
    ptu_node(g, "Add", "od,x", "res");
    int32_t ln = ptu_node(g, "LayerNormalization", "res,gamma,beta", "y");
    ptu_attr_float(g, ln, "epsilon", 1e-5f);
    ptu_output(g, "y");
    ptu_finish(g);
    return g;
}

static void test_bert_layer(void **state) {
    (void)state;
    tc__graph *g = bert_layer();
    assert_int_equal(g->n_nodes, 17);
    tc__pass_report report;
    /* Symbolic inference proves Reshape(o, [batch, seq, 8]) a no-op; its Shape arithmetic dies. */
    assert_int_equal(run_pipeline(g, 0, &report), 3);
    const tc__node *m1 = ptu_nth(g, "MatMul", 0), *m2 = ptu_nth(g, "MatMul", 1);
    assert_string_equal(m1->fused, "Add+Gelu");
    assert_int_equal(m1->epi.act, TC__ACT_GELU_ERF);
    assert_true(m1->epi.bias_input >= 0);
    assert_int_equal(m1->epi.residual_input, -1);
    assert_string_equal(m2->fused, "Add+Add");
    assert_true(m2->epi.bias_input >= 0);
    assert_true(m2->epi.residual_input >= 0);
    assert_string_equal(ptu_in_name(g, m2, m2->epi.residual_input), "x");
    assert_int_equal(m2->epi.act, TC__ACT_NONE);
    assert_int_equal(ptu_count(g, "LayerNormalization"), 1);
    assert_int_equal(report.changes[pass_index("eliminate_noops")], 2); /* Reshape, Dropout */
    assert_int_equal(report.changes[pass_index("fold_constants")], 0); /* nothing constant with symbolic dims */
    assert_int_equal(report.changes[pass_index("fuse_gelu")], 1); /* GELU */
    assert_int_equal(report.changes[pass_index("fuse_matmul_bias")], 2); /* two biases */
    assert_int_equal(report.changes[pass_index("fuse_residual")], 1); /* residual */
    assert_int_equal(report.changes[pass_index("fuse_activation")], 1); /* Gelu into MatMul */
    tc__graph_destroy(g);
}

/* With concrete dims (as an engine build at a fixed shape sees them) the Shape arithmetic folds
 * to constants first; the result is the same three steps. */
static void test_bert_layer_static(void **state) {
    (void)state;
    tc__graph *g = bert_layer();
    int32_t x = tc__graph_find_value(g, "x");
    g->values[x].info.shape.dims[0] = tc__dim_known(2);
    g->values[x].info.shape.dims[1] = tc__dim_known(3);
    ptu_settle(g);
    tc__pass_report report;
    assert_int_equal(run_pipeline(g, 0, &report), 3);
    assert_int_equal(report.changes[pass_index("fold_constants")], 4); /* Shape, Gather x2, Concat */
    const tc__node *m2 = ptu_nth(g, "MatMul", 1);
    assert_string_equal(m2->fused, "Add+Add");
    assert_string_equal(ptu_in_name(g, m2, m2->epi.residual_input), "x");
    assert_null(g->values[tc__graph_find_value(g, "shape")].init); /* folded, then unused */
    tc__graph_destroy(g);
}

static void test_pass_list(void **state) {
    (void)state;
    assert_int_equal(tc__pass_count(), 14);
    assert_string_equal(tc__pass_name(0), "eliminate_noops");
    assert_string_equal(tc__pass_name(2), "eliminate_common");
    assert_int_equal(pass_index("fuse_hardswish"), 5);
    assert_int_equal(pass_index("fuse_nan_guard"), 6);
    assert_int_equal(pass_index("fuse_matmul_views"), 7);
    assert_string_equal(tc__pass_name(11), "fuse_softmax_mask");
    assert_string_equal(tc__pass_name(12), "fold_qdq");
    assert_string_equal(tc__pass_name(13), "eliminate_dead");
    assert_non_null(tc__pass_description(3));
    assert_null(tc__pass_name(14));
    /* The public list (TC_PASS_LIST) names every pass once, with a distinct bit and a description; each graph pass
     * that runs is on it under the same name, and its description comes from there. */
    uint32_t seen = 0;
    for (int k = 0; k < tc_pass_count(); k++) {
        assert_non_null(tc_pass_name(k));
        assert_non_null(tc_pass_description(k));
        assert_int_equal(__builtin_popcount(tc_pass_flag(k)), 1);
        assert_int_equal(seen & tc_pass_flag(k), 0);
        seen |= tc_pass_flag(k);
    }
    assert_null(tc_pass_name(tc_pass_count()));
    assert_int_equal(tc_pass_flag(-1), 0);
    for (int i = 0; i < tc__pass_count(); i++) {
        int k = 0;
        while (k < tc_pass_count() && strcmp(tc_pass_name(k), tc__pass_name(i)) != 0) k++;
        if (k == tc_pass_count()) fail_msg("pass %s is not in TC_PASS_LIST", tc__pass_name(i));
        assert_ptr_equal(tc__pass_description(i), tc_pass_description(k));
    }
    assert_int_equal(tc_pass_count(), 22); /* the 14 graph passes and layout, lowp_chain, qdq_elide, the two images,
                                            * fuse_attention, merge_qkv and fuse_embed_layernorm (device backends) */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resnet_block),
        cmocka_unit_test(test_resnet_block_switches),
        cmocka_unit_test(test_bert_layer),
        cmocka_unit_test(test_bert_layer_static),
        cmocka_unit_test(test_pass_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
