/* test_passes_noops_dead.c - the eliminate_noops pass (Identity, Dropout, Reshape/Flatten,
 * Cast, Transpose; graph outputs keep their names) and the eliminate_dead pass (dead nodes,
 * unused optional outputs, unused initializers). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pass_test_util.h"

/* ---- eliminate_noops ------------------------------------------------------------------- */

static void test_identity_chain(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "2x3");
    ptu_node(g, "Relu", "x", "a");
    ptu_node(g, "Identity", "a", "b");
    ptu_node(g, "Identity", "b", "c");
    ptu_node(g, "Tanh", "c", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_eliminate_noops), 2);
    assert_int_equal(g->n_nodes, 2);
    assert_string_equal(ptu_in_name(g, ptu_nth(g, "Tanh", 0), 0), "a");
    tc__graph_destroy(g);
}

static void test_dropout(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(13);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "2x3");
    ptu_input(g, "train", TC_DTYPE_BOOL, "");
    ptu_scalar(g, "ratio", 0.1);
    double f = 0.0;
    ptu_init_ex(g, "off", TC_DTYPE_BOOL, "", &f, 0, 0, 0);
    ptu_node(g, "Relu", "x", "a");
    ptu_node(g, "Dropout", "a", "d1");                  /* no ratio: inference copy */
    ptu_node(g, "Dropout", "d1,ratio,off", "d2,mask2"); /* training_mode false, mask unused */
    ptu_node(g, "Dropout", "d2,ratio,off", "d3,mask3"); /* mask is a graph output: kept */
    ptu_node(g, "Dropout", "d3,ratio,train", "d4");     /* training_mode not known: kept */
    ptu_node(g, "Tanh", "d4", "y");
    ptu_output(g, "y");
    ptu_output(g, "mask3");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_eliminate_noops), 2);
    assert_int_equal(ptu_count(g, "Dropout"), 2);
    assert_string_equal(ptu_in_name(g, ptu_nth(g, "Dropout", 0), 0), "a");
    tc__graph_destroy(g);
}

static void test_reshape_flatten(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "batchx3x4");
    ptu_input(g, "x2", TC_DTYPE_FLOAT32, "2x12");
    const double same[] = {0, 3, 4}, other[] = {0, 12};
    ptu_init_i64(g, "same", "3", same);
    ptu_init_i64(g, "other", "2", other);
    ptu_node(g, "Relu", "x", "a");
    ptu_node(g, "Reshape", "a,same", "b"); /* batchx3x4 -> batchx3x4: removed */
    ptu_node(g, "Reshape", "b,other", "c"); /* -> batchx12: kept */
    ptu_node(g, "Relu", "c", "y");
    ptu_node(g, "Relu", "x2", "e");
    int32_t fl = ptu_node(g, "Flatten", "e", "f"); /* 2x12 -> 2x12: removed */
    ptu_attr_int(g, fl, "axis", 1);
    ptu_node(g, "Tanh", "f", "z");
    ptu_output(g, "y");
    ptu_output(g, "z");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_eliminate_noops), 2);
    assert_int_equal(ptu_count(g, "Reshape"), 1);
    assert_int_equal(ptu_count(g, "Flatten"), 0);
    assert_string_equal(ptu_in_name(g, ptu_nth(g, "Reshape", 0), 0), "a");
    tc__graph_destroy(g);
}

static void test_cast_transpose(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "2x3x4");
    ptu_node(g, "Relu", "x", "a");
    int32_t c1 = ptu_node(g, "Cast", "a", "b"); /* float -> float: removed */
    ptu_attr_int(g, c1, "to", TC_DTYPE_FLOAT32);
    int32_t c2 = ptu_node(g, "Cast", "b", "c"); /* float -> double: kept */
    ptu_attr_int(g, c2, "to", TC_DTYPE_FLOAT64);
    int32_t c3 = ptu_node(g, "Cast", "c", "d"); /* back to float: kept */
    ptu_attr_int(g, c3, "to", TC_DTYPE_FLOAT32);
    const int64_t id[] = {0, 1, 2}, swap[] = {0, 2, 1};
    int32_t t1 = ptu_node(g, "Transpose", "d", "e"); /* identity: removed */
    ptu_attr_ints(g, t1, "perm", 3, id);
    int32_t t2 = ptu_node(g, "Transpose", "e", "f"); /* swaps: kept */
    ptu_attr_ints(g, t2, "perm", 3, swap);
    ptu_node(g, "Transpose", "f", "y"); /* default perm reverses: kept */
    ptu_output(g, "y");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_eliminate_noops), 2);
    assert_int_equal(ptu_count(g, "Cast"), 2);
    assert_int_equal(ptu_count(g, "Transpose"), 2);
    tc__graph_destroy(g);
}

/* A no-op writing a graph output: the producer of its input takes the output's name. */
static void test_noop_on_graph_output(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "2x3");
    ptu_node(g, "Relu", "x", "a");
    ptu_node(g, "Identity", "a", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_eliminate_noops), 1);
    assert_int_equal(g->n_nodes, 1);
    assert_string_equal(g->values[g->outputs[0]].name, "y");
    assert_string_equal(ptu_producer(g, "y")->op_type, "Relu");
    tc__graph_destroy(g);
}

/* Kept when the input has another use, or is a graph input, initializer or output. */
static void test_noop_on_graph_output_kept(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "2x3");
    ptu_init(g, "w", "2x3", 1);
    ptu_node(g, "Relu", "x", "a");
    ptu_node(g, "Identity", "a", "y1"); /* a also read by Add */
    ptu_node(g, "Add", "a,a", "y2");
    ptu_node(g, "Identity", "x", "y3"); /* graph input */
    ptu_node(g, "Identity", "w", "y4"); /* initializer */
    ptu_node(g, "Tanh", "x", "t");
    ptu_node(g, "Identity", "t", "y5"); /* t is a graph output itself */
    ptu_output(g, "y1");
    ptu_output(g, "y2");
    ptu_output(g, "y3");
    ptu_output(g, "y4");
    ptu_output(g, "y5");
    ptu_output(g, "t");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_eliminate_noops), 0);
    assert_int_equal(ptu_count(g, "Identity"), 4);
    tc__graph_destroy(g);
}

/* ---- eliminate_dead -------------------------------------------------------------------- */

static void test_dead_nodes_and_initializers(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "2x3");
    int32_t w = ptu_init(g, "w", "2x3", 1);
    int32_t unused = ptu_init(g, "unused", "4", 2);
    ptu_init(g, "kept", "2x3", 3);
    ptu_node(g, "Add", "x,kept", "y");
    ptu_node(g, "Mul", "x,w", "d1"); /* dead chain: d1 -> d2 */
    ptu_node(g, "Tanh", "d1", "d2");
    ptu_output(g, "y");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_eliminate_dead), 4); /* 2 nodes, 2 initializers */
    assert_int_equal(g->n_nodes, 1);
    assert_null(g->values[w].init);
    assert_null(g->values[unused].init);
    assert_non_null(g->values[tc__graph_find_value(g, "kept")].init);
    assert_int_equal(ptu_apply(g, tc__pass_eliminate_dead), 0);
    tc__graph_destroy(g);
}

static void test_dead_optional_outputs(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "2x3x4");
    ptu_init(g, "scale", "4", 1);
    ptu_init(g, "bias", "4", 2);
    ptu_node(g, "LayerNormalization", "x,scale,bias", "ln,mean,inv");
    ptu_node(g, "Dropout", "ln", "d,mask");
    ptu_node(g, "Relu", "d", "y");
    ptu_node(g, "Tanh", "inv", "t"); /* reads InvStdDev, but t is dead */
    ptu_output(g, "y");
    ptu_finish(g);
    assert_int_equal(ptu_apply_checked(g, tc__pass_eliminate_dead), 4); /* Tanh, mean, inv, mask */
    const tc__node *ln = ptu_nth(g, "LayerNormalization", 0);
    assert_int_equal(ln->out[1], -1);
    assert_int_equal(ln->out[2], -1);
    assert_int_equal(ptu_nth(g, "Dropout", 0)->out[1], -1);
    assert_int_equal(g->n_nodes, 3);
    tc__graph_destroy(g);
}

/* A node with no outputs is dead; a node feeding only it is dead too. */
static void test_dead_without_outputs(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "2");
    ptu_node(g, "Relu", "x", "y");
    ptu_node(g, "Tanh", "x", "t");
    ptu_node(g, "Relu", "t", "");
    ptu_output(g, "y");
    tc__err err = {0};
    assert_int_equal(tc__graph_toposort(g, &err), TC_STATUS_OK);
    tc__pass_ctx ctx = {.g = g, .eval = NULL, .eval_user = NULL, .changes = 0, .err = &err};
    assert_int_equal(tc__pass_eliminate_dead(&ctx), TC_STATUS_OK);
    assert_int_equal(ctx.changes, 2);
    tc__graph_compact(g);
    assert_int_equal(g->n_nodes, 1);
    assert_string_equal(g->nodes[0].name, "Relu_y");
    tc__graph_destroy(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identity_chain),
        cmocka_unit_test(test_dropout),
        cmocka_unit_test(test_reshape_flatten),
        cmocka_unit_test(test_cast_transpose),
        cmocka_unit_test(test_noop_on_graph_output),
        cmocka_unit_test(test_noop_on_graph_output_kept),
        cmocka_unit_test(test_dead_nodes_and_initializers),
        cmocka_unit_test(test_dead_optional_outputs),
        cmocka_unit_test(test_dead_without_outputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
