/* test_passes_common.c - the eliminate_common pass: a repeated computation goes (BERT's per-layer mask Where on
 * separate constants of equal values; a chain of twins goes in one run), outputs unchanged (the reference executor
 * before and after); what must stay: different constants, attributes or inputs, random ops, a node whose output is a
 * graph output, a node with a fused epilogue, and a random op (Dropout that may be in training mode). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pass_test_util.h"

/* mask -> Where(mask, c0_k, c1_k) for two layers on equal (k = 0, 1) constants, each added to its own scores. */
static void test_mask_where(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "mask", TC_DTYPE_BOOL, "1x4");
    ptu_input(g, "s0", TC_DTYPE_FLOAT32, "2x4");
    ptu_input(g, "s1", TC_DTYPE_FLOAT32, "2x4");
    ptu_scalar(g, "zero_0", 0.0);
    ptu_scalar(g, "zero_1", 0.0);
    ptu_scalar(g, "min_0", -3.4e38);
    ptu_scalar(g, "min_1", -3.4e38);
    ptu_node(g, "Where", "mask,zero_0,min_0", "m0");
    ptu_node(g, "Where", "mask,zero_1,min_1", "m1");
    ptu_node(g, "Add", "s0,m0", "a0");
    ptu_node(g, "Add", "s1,m1", "a1");
    ptu_node(g, "Softmax", "a0", "y0");
    ptu_node(g, "Softmax", "a1", "y1");
    ptu_output(g, "y0");
    ptu_output(g, "y1");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_eliminate_common), 1);
    assert_int_equal(ptu_count(g, "Where"), 1);
    assert_string_equal(ptu_in_name(g, ptu_nth(g, "Add", 1), 1), "m0");
    tc__graph_destroy(g);
}

/* Relu(x) twice, each read by a Tanh: both pairs go in one run; the graph output's name stays. */
static void test_chain(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "3x5");
    ptu_node(g, "Relu", "x", "r0");
    ptu_node(g, "Relu", "x", "r1");
    ptu_node(g, "Tanh", "r0", "t0");
    ptu_node(g, "Tanh", "r1", "t1");
    ptu_node(g, "Add", "t0,t1", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_eliminate_common), 2);
    assert_int_equal(ptu_count(g, "Relu"), 1);
    assert_int_equal(ptu_count(g, "Tanh"), 1);
    const tc__node *add = ptu_nth(g, "Add", 0);
    assert_string_equal(ptu_in_name(g, add, 0), "t0");
    assert_string_equal(ptu_in_name(g, add, 1), "t0");
    tc__graph_destroy(g);
}

/* Twins that must stay: other constant values, another attribute, another input, a graph output, a fused epilogue,
 * a random op (Dropout in training mode). */
static void test_kept(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "2x3");
    ptu_input(g, "z", TC_DTYPE_FLOAT32, "2x3");
    ptu_scalar(g, "c0", 1.0);
    ptu_scalar(g, "c1", 2.0);
    ptu_node(g, "Add", "x,c0", "a0");
    ptu_node(g, "Add", "x,c1", "a1"); /* other constant */
    int32_t s0 = ptu_node(g, "Softmax", "x", "s0");
    int32_t s1 = ptu_node(g, "Softmax", "x", "s1");
    ptu_attr_int(g, s0, "axis", 0);
    ptu_attr_int(g, s1, "axis", 1); /* other attribute */
    ptu_node(g, "Relu", "x", "r0");
    ptu_node(g, "Relu", "z", "r1"); /* other input */
    ptu_node(g, "Sigmoid", "x", "o0");
    ptu_node(g, "Sigmoid", "x", "o1"); /* a graph output: keeps its name */
    int32_t e0 = ptu_node(g, "Tanh", "x", "e0");
    int32_t e1 = ptu_node(g, "Tanh", "x", "e1");
    g->nodes[e1].epi.act = TC__ACT_RELU; /* Tanh + Relu fused */
    (void)e0;
    ptu_input(g, "train", TC_DTYPE_BOOL, "");
    ptu_scalar(g, "ratio", 0.5);
    ptu_node(g, "Dropout", "x,ratio,train", "n0"); /* random in training mode */
    ptu_node(g, "Dropout", "x,ratio,train", "n1");
    ptu_node(g, "Sum", "a0,a1,s0,s1,r0,r1,o0,e0,e1", "y");
    ptu_node(g, "Add", "n0,n1", "noise");
    ptu_output(g, "y");
    ptu_output(g, "o1");
    ptu_finish(g);
    assert_int_equal(ptu_apply(g, tc__pass_eliminate_common), 0); /* (fails on an error status) */
    tc__graph_destroy(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mask_where),
        cmocka_unit_test(test_chain),
        cmocka_unit_test(test_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
