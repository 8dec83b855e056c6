/*
 * test_passes_layout.c - the NCHW16c layout pass (and its NCHW8c form) on small graphs: which nodes it marks blocked
 * (tc.layout_in bits, tc.layout_out), where it puts reorders (Identity marked blocked-in) and
 * where it must leave NCHW alone: an activation whose channels are not a multiple of the block, a
 * convolution that nothing blocked reads, a residual from an NCHW value, broadcasts other than
 * per-channel vectors, constant operands, graph outputs (which keep their names and stay NCHW).
 * Channel counts that are not a multiple of the block (24, 40, 3, 1 on blocks of 16 and 8) are
 * blocked padded through Conv, depthwise Conv, Add, MaxPool and GlobalAveragePool, never through an
 * activation. Numerical agreement of blocked engines with the reference is tested in
 * test_engine_layout.c. NCHW8c: every blocked node and reorder says tc.layout_block 8 (NCHW16c graphs
 * carry no such attribute), and a block other than 16 or 8 is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/layout.h"
#include "core/quant_attr.h"
#include "pass_test_util.h"

static int64_t attr_of(const tc__node *n, const char *name) { return tc__attr_int(&n->attrs, name, 0); }

/* Conv(x, w) with a 3x3 kernel and pads 1 -> out. */
static int32_t conv3x3(tc__graph *g, const char *ins, const char *out) {
    int32_t n = ptu_node(g, "Conv", ins, out);
    ptu_attr_ints(g, n, "pads", 4, (int64_t[]){1, 1, 1, 1});
    return n;
}

static int reorders(const tc__graph *g) {
    int c = 0;
    for (int n = 0; n < g->n_nodes; n++)
        c += !g->nodes[n].removed && strcmp(g->nodes[n].op_type, "Identity") == 0 &&
             tc__layout_in_blocked(&g->nodes[n].attrs, 0);
    return c;
}

/* A ResNet-like chain: the stem reads NCHW, everything up to the pooled features stays blocked and
 * one reorder sits in front of Flatten. */
static void test_resnet_chain(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "batchx3x16x16");
    ptu_init(g, "w1", "16x3x3x3", 1);
    ptu_init(g, "w2", "32x16x1x1", 2);
    ptu_init(g, "w3", "32x32x3x3", 3);
    ptu_init(g, "fc", "32x10", 4);
    conv3x3(g, "x,w1", "c1");
    ptu_node(g, "Relu", "c1", "r1");
    int32_t mp = ptu_node(g, "MaxPool", "r1", "p1");
    ptu_attr_ints(g, mp, "kernel_shape", 2, (int64_t[]){2, 2});
    ptu_attr_ints(g, mp, "strides", 2, (int64_t[]){2, 2});
    ptu_node(g, "Conv", "p1,w2", "c2");
    conv3x3(g, "c2,w3", "c3");
    ptu_node(g, "Add", "c3,c2", "s");
    ptu_node(g, "GlobalAveragePool", "s", "gap");
    ptu_node(g, "Flatten", "gap", "f");
    ptu_node(g, "MatMul", "f,fc", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    assert_true(ptu_apply(g, tc__pass_layout_nchw16c) > 0);
    const tc__node *stem = ptu_producer(g, "c1");
    assert_int_equal(attr_of(stem, TC__ATTR_LAYOUT_OUT), 1);
    assert_int_equal(attr_of(stem, TC__ATTR_LAYOUT_IN), 0); /* reads the NCHW input directly */
    const char *blocked[] = {"r1", "p1", "c2", "c3", "s", "gap"};
    for (size_t i = 0; i < sizeof blocked / sizeof blocked[0]; i++) {
        const tc__node *n = ptu_producer(g, blocked[i]);
        assert_int_equal(attr_of(n, TC__ATTR_LAYOUT_OUT), 1);
        assert_int_equal(attr_of(n, TC__ATTR_LAYOUT_IN) & 1, 1);
    }
    assert_int_equal(attr_of(ptu_producer(g, "s"), TC__ATTR_LAYOUT_IN), 3);
    assert_int_equal(reorders(g), 1);
    const tc__node *flat = ptu_producer(g, "f");
    assert_false(tc__layout_any_blocked(&flat->attrs));
    const tc__node *reorder = ptu_producer(g, ptu_in_name(g, flat, 0));
    assert_string_equal(reorder->op_type, "Identity");
    assert_string_equal(ptu_in_name(g, reorder, 0), "gap");
    assert_false(tc__layout_any_blocked(&ptu_producer(g, "y")->attrs));
    tc__graph_destroy(g);
}

/* An activation over 24 channels is not blocked in blocks of 16 (its tactics would write f(0) into the padding
 * lanes); the Conv in front of it, which reads NCHW and which nothing blocked reads, is left alone. */
static void test_left_alone(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "1x8x5x5");
    ptu_init(g, "w1", "24x8x3x3", 1);
    conv3x3(g, "x,w1", "c1");
    ptu_node(g, "Sigmoid", "c1", "s");
    ptu_node(g, "Flatten", "s", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    assert_int_equal(ptu_apply(g, tc__pass_layout_nchw16c), 0);
    assert_int_equal(reorders(g), 0);
    tc__graph_destroy(g);
}

static tc_status pass_nchw8c(tc__pass_ctx *ctx);

/*
 * C channels in blocks of B, C % B != 0 for most: Conv (NCHW in), depthwise Conv, Add, Relu, MaxPool,
 * GlobalAveragePool. Conv, depthwise Conv and Add are blocked padded; Relu and what follows it are blocked only
 * when C % B == 0; either way one reorder.
 */
static void check_padded(int64_t c, int64_t block) {
    char shape[64];
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "1x4x6x6");
    snprintf(shape, sizeof shape, "%lldx4x3x3", (long long)c);
    ptu_init(g, "w1", shape, 1);
    snprintf(shape, sizeof shape, "%lldx1x3x3", (long long)c);
    ptu_init(g, "w2", shape, 2);
    conv3x3(g, "x,w1", "c1");
    ptu_attr_int(g, conv3x3(g, "c1,w2", "d1"), "group", c);
    ptu_node(g, "Add", "d1,c1", "s");
    ptu_node(g, "Relu", "s", "r");
    int32_t mp = ptu_node(g, "MaxPool", "r", "p");
    ptu_attr_ints(g, mp, "kernel_shape", 2, (int64_t[]){2, 2});
    ptu_node(g, "GlobalAveragePool", "p", "gap");
    ptu_node(g, "Flatten", "gap", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    assert_true(ptu_apply(g, block == TC__LAYOUT_BLOCK ? tc__pass_layout_nchw16c : pass_nchw8c) > 0);
    const bool whole = c % block == 0;
    const char *names[] = {"c1", "d1", "s", "r", "p", "gap"};
    const int64_t in_bits[] = {0, 1, 3, 1, 1, 1};
    for (int i = 0; i < 6; i++) {
        const tc__node *n = ptu_producer(g, names[i]);
        const bool blocked = i < 3 || whole;
        assert_int_equal(attr_of(n, TC__ATTR_LAYOUT_OUT), blocked ? 1 : 0);
        assert_int_equal(attr_of(n, TC__ATTR_LAYOUT_IN), blocked ? in_bits[i] : 0);
        if (blocked) assert_int_equal(tc__layout_block(&n->attrs), block);
    }
    assert_int_equal(reorders(g), 1);
    tc__graph_destroy(g);
}

/* A reduced-precision (INT8) layer keeps whole blocks: its 24-channel output is not blocked in blocks of 16, and a
 * 24-channel value it reads is not blocked either (it reads NCHW); its 32-channel output from that input is, for an
 * FP32 Conv that reads it blocked. */
static void test_padded_lowp(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "1x4x6x6");
    ptu_init(g, "w1", "24x4x3x3", 1);
    ptu_init(g, "w2", "32x24x3x3", 2);
    ptu_init(g, "w3", "24x32x3x3", 3);
    ptu_init(g, "w4", "32x32x3x3", 4);
    conv3x3(g, "x,w1", "c1");
    ptu_attr_float(g, conv3x3(g, "c1,w2", "c2"), TC__ATTR_INT8_SCALE, 0.1f);
    conv3x3(g, "c2,w4", "c4");
    ptu_attr_float(g, conv3x3(g, "c4,w3", "c3"), TC__ATTR_INT8_SCALE, 0.1f);
    ptu_node(g, "Flatten", "c3", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    assert_true(ptu_apply(g, tc__pass_layout_nchw16c) > 0);
    assert_false(tc__layout_any_blocked(&ptu_producer(g, "c1")->attrs)); /* read by an INT8 layer: NCHW */
    assert_int_equal(attr_of(ptu_producer(g, "c2"), TC__ATTR_LAYOUT_OUT), 1);
    assert_int_equal(attr_of(ptu_producer(g, "c2"), TC__ATTR_LAYOUT_IN), 0);
    assert_int_equal(attr_of(ptu_producer(g, "c4"), TC__ATTR_LAYOUT_IN), 1);
    assert_false(tc__layout_any_blocked(&ptu_producer(g, "c3")->attrs)); /* INT8, 24 channels out: NCHW */
    assert_int_equal(reorders(g), 1);                                    /* c4 -> c3 */
    tc__graph_destroy(g);
}

static void test_padded(void **state) {
    (void)state;
    const int64_t cs[] = {24, 40, 3, 1, 32};
    for (int b = 0; b < 2; b++)
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) check_padded(cs[i], b ? TC__LAYOUT_BLOCK_AVX2 : TC__LAYOUT_BLOCK);
}

/* A blocked graph output keeps its name and is written NCHW by a reorder. */
static void test_graph_output(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "1x3x7x7");
    ptu_init(g, "w1", "16x3x3x3", 1);
    ptu_init(g, "w2", "16x16x3x3", 2);
    conv3x3(g, "x,w1", "c1");
    conv3x3(g, "c1,w2", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    assert_true(ptu_apply(g, tc__pass_layout_nchw16c) > 0);
    const tc__node *last = ptu_producer(g, "y");
    assert_string_equal(last->op_type, "Identity");
    assert_true(tc__layout_in_blocked(&last->attrs, 0));
    const tc__node *conv = ptu_producer(g, ptu_in_name(g, last, 0));
    assert_string_equal(conv->op_type, "Conv");
    assert_int_equal(attr_of(conv, TC__ATTR_LAYOUT_IN), 1);
    assert_int_equal(reorders(g), 1);
    tc__graph_destroy(g);
}

/* Squeeze-excite: the per-channel scale is blocked; the 8-channel squeeze reads the pooled vector blocked (padded
 * to 16) and its Relu, 8 channels, reads a reordered copy. */
static void test_squeeze_excite(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "1x3x9x9");
    ptu_init(g, "w1", "32x3x3x3", 1);
    ptu_init(g, "ws", "8x32x1x1", 2);
    ptu_init(g, "we", "32x8x1x1", 3);
    ptu_init(g, "w2", "16x32x1x1", 4);
    conv3x3(g, "x,w1", "c1");
    ptu_node(g, "GlobalAveragePool", "c1", "gap");
    ptu_node(g, "Conv", "gap,ws", "sq");
    ptu_node(g, "Relu", "sq", "sqr");
    ptu_node(g, "Conv", "sqr,we", "ex");
    ptu_node(g, "Sigmoid", "ex", "gate");
    ptu_node(g, "Mul", "c1,gate", "scaled");
    ptu_node(g, "Conv", "scaled,w2", "c2");
    ptu_node(g, "Flatten", "c2", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    assert_true(ptu_apply(g, tc__pass_layout_nchw16c) > 0);
    assert_int_equal(attr_of(ptu_producer(g, "scaled"), TC__ATTR_LAYOUT_IN), 3);
    assert_int_equal(attr_of(ptu_producer(g, "gate"), TC__ATTR_LAYOUT_OUT), 1);
    assert_int_equal(attr_of(ptu_producer(g, "ex"), TC__ATTR_LAYOUT_OUT), 1); /* NCHW in, blocked out */
    assert_int_equal(attr_of(ptu_producer(g, "ex"), TC__ATTR_LAYOUT_IN), 0);
    assert_int_equal(attr_of(ptu_producer(g, "sq"), TC__ATTR_LAYOUT_OUT), 1); /* padded */
    assert_int_equal(attr_of(ptu_producer(g, "sq"), TC__ATTR_LAYOUT_IN), 1);
    assert_false(tc__layout_any_blocked(&ptu_producer(g, "sqr")->attrs));
    assert_int_equal(reorders(g), 2); /* squeeze -> Relu, c2 -> Flatten */
    tc__graph_destroy(g);
}

/* A residual from an NCHW value, a constant operand and a broadcast over W keep their nodes NCHW. */
static void test_constraints(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "1x16x6x6");
    ptu_input(g, "row", TC_DTYPE_FLOAT32, "1x16x1x6");
    ptu_init(g, "w1", "16x16x3x3", 1);
    ptu_init(g, "w2", "16x16x3x3", 2);
    ptu_init(g, "k", "1x16x6x6", 3);
    conv3x3(g, "x,w1", "c1");
    conv3x3(g, "c1,w2", "c2");
    ptu_node(g, "Add", "c2,x", "s");   /* x is NCHW: s stays NCHW */
    ptu_node(g, "Mul", "c1,k", "m");   /* constant operand */
    ptu_node(g, "Mul", "c1,row", "r"); /* broadcast over W */
    ptu_node(g, "Add", "s,m", "t");
    ptu_node(g, "Add", "t,r", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    assert_true(ptu_apply(g, tc__pass_layout_nchw16c) > 0);
    assert_int_equal(attr_of(ptu_producer(g, "c2"), TC__ATTR_LAYOUT_OUT), 1);
    assert_false(tc__layout_any_blocked(&ptu_producer(g, "s")->attrs));
    assert_false(tc__layout_any_blocked(&ptu_producer(g, "m")->attrs));
    assert_false(tc__layout_any_blocked(&ptu_producer(g, "r")->attrs));
    assert_int_equal(reorders(g), 2); /* c1 (read by the Muls) and c2 */
    tc__graph_destroy(g);
}

static tc_status pass_nchw8c(tc__pass_ctx *ctx) { return tc__pass_layout_nchwc(ctx, TC__LAYOUT_BLOCK_AVX2); }

/* The graph of test_left_alone in blocks of 8: 24 channels are whole blocks, and every marked node says so. */
static void test_block8(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "1x8x5x5");
    ptu_init(g, "w1", "24x8x3x3", 1);
    conv3x3(g, "x,w1", "c1");
    ptu_node(g, "Sigmoid", "c1", "c2");
    ptu_node(g, "Flatten", "c2", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    assert_true(ptu_apply(g, pass_nchw8c) > 0);
    const char *blocked[] = {"c1", "c2"};
    for (size_t i = 0; i < 2; i++) {
        const tc__node *n = ptu_producer(g, blocked[i]);
        assert_int_equal(attr_of(n, TC__ATTR_LAYOUT_OUT), 1);
        assert_int_equal(tc__layout_block(&n->attrs), 8);
    }
    assert_int_equal(attr_of(ptu_producer(g, "c1"), TC__ATTR_LAYOUT_IN), 0);
    assert_int_equal(attr_of(ptu_producer(g, "c2"), TC__ATTR_LAYOUT_IN), 1);
    assert_int_equal(reorders(g), 1);
    const tc__node *reorder = ptu_producer(g, ptu_in_name(g, ptu_producer(g, "y"), 0));
    assert_string_equal(reorder->op_type, "Identity");
    assert_int_equal(tc__layout_block(&reorder->attrs), 8);
    tc__graph_destroy(g);
    /* NCHW16c marks carry no tc.layout_block (plans keep their bytes) */
    g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "1x3x7x7");
    ptu_init(g, "w1", "16x3x3x3", 1);
    ptu_init(g, "w2", "16x16x3x3", 2);
    conv3x3(g, "x,w1", "c1");
    conv3x3(g, "c1,w2", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    assert_true(ptu_apply(g, tc__pass_layout_nchw16c) > 0);
    for (int n = 0; n < g->n_nodes; n++) assert_false(tc__attr_has(&g->nodes[n].attrs, TC__ATTR_LAYOUT_BLOCK));
    /* a block the backend has no kernels for is refused */
    tc__err err = {0};
    tc__pass_ctx pc = {.g = g, .err = &err};
    assert_int_not_equal(tc__pass_layout_nchwc(&pc, 4), TC_STATUS_OK);
    assert_true(strlen(err.msg) > 0);
    tc__graph_destroy(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resnet_chain),   cmocka_unit_test(test_left_alone),
        cmocka_unit_test(test_graph_output),   cmocka_unit_test(test_squeeze_excite),
        cmocka_unit_test(test_constraints),    cmocka_unit_test(test_block8),
        cmocka_unit_test(test_padded),         cmocka_unit_test(test_padded_lowp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
