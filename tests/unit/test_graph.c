/* test_graph.c - graph IR construction, topological sort (stable, cycle and undefined-input
 * errors), verifier errors, symbol interning, and declared output shapes that inference overrides with a warning. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "graph/graph.h"

static int32_t value(tc__graph *g, const char *name) {
    int32_t v;
    tc__err err = {0};
    assert_int_equal(tc__graph_value_by_name(g, name, &v, &err), TC_STATUS_OK);
    return v;
}

/* Adds a one-output node reading the named inputs. */
static int32_t node(tc__graph *g, const char *name, const char *op, const char *in0, const char *in1, const char *out) {
    tc__err err = {0};
    int32_t n;
    int n_in = in1 ? 2 : 1;
    assert_int_equal(tc__graph_add_node(g, name, op, "", n_in, 1, &n, &err), TC_STATUS_OK);
    g->nodes[n].in[0] = value(g, in0);
    if (in1) g->nodes[n].in[1] = value(g, in1);
    g->nodes[n].out[0] = value(g, out);
    return n;
}

static tc__graph *graph_with_input(void) {
    tc__graph *g = tc__graph_create();
    assert_non_null(g);
    g->opset = 17;
    int32_t x = value(g, "x");
    g->values[x].is_input = true;
    g->inputs = tc__arena_alloc(&g->arena, sizeof(int32_t) * 4, 4);
    g->inputs[g->n_inputs++] = x;
    g->outputs = tc__arena_alloc(&g->arena, sizeof(int32_t) * 4, 4);
    return g;
}

static void set_output(tc__graph *g, const char *name) {
    int32_t v = value(g, name);
    g->values[v].is_output = true;
    g->outputs[g->n_outputs++] = v;
}

static void test_toposort_reorders_stably(void **state) {
    (void)state;
    tc__graph *g = graph_with_input();
    /* Given out of order: d needs b and c; b and c need a; a needs x. */
    node(g, "d", "Add", "b", "c", "d");
    node(g, "c", "Relu", "a", NULL, "c");
    node(g, "b", "Relu", "a", NULL, "b");
    node(g, "a", "Relu", "x", NULL, "a");
    set_output(g, "d");
    tc__err err = {0};
    assert_int_equal(tc__graph_toposort(g, &err), TC_STATUS_OK);
    const char *order[] = {"a", "c", "b", "d"}; /* ready nodes keep their model order (c before b) */
    for (int i = 0; i < 4; i++) assert_string_equal(g->nodes[i].name, order[i]);
    assert_int_equal(g->values[tc__graph_find_value(g, "d")].producer, 3);
    assert_int_equal(g->values[tc__graph_find_value(g, "x")].producer, -1);
    assert_int_equal(tc__graph_verify(g, false, &err), TC_STATUS_OK);
    tc__graph_destroy(g);
}

static void test_cycle_is_an_error(void **state) {
    (void)state;
    tc__graph *g = graph_with_input();
    node(g, "p", "Add", "x", "q", "p");
    node(g, "q", "Relu", "p", NULL, "q");
    set_output(g, "q");
    tc__err err = {0};
    assert_int_equal(tc__graph_toposort(g, &err), TC_STATUS_INVALID_GRAPH);
    assert_non_null(strstr(err.msg, "cycle"));
    tc__graph_destroy(g);
}

static void test_undefined_input_and_double_producer(void **state) {
    (void)state;
    tc__graph *g = graph_with_input();
    node(g, "r", "Relu", "nowhere", NULL, "y");
    set_output(g, "y");
    tc__err err = {0};
    assert_int_equal(tc__graph_toposort(g, &err), TC_STATUS_INVALID_GRAPH);
    assert_non_null(strstr(err.msg, "'nowhere'"));
    assert_non_null(strstr(err.msg, "'r'"));
    tc__graph_destroy(g);

    g = graph_with_input();
    node(g, "r1", "Relu", "x", NULL, "y");
    node(g, "r2", "Relu", "x", NULL, "y");
    set_output(g, "y");
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__graph_toposort(g, &err), TC_STATUS_INVALID_GRAPH);
    assert_non_null(strstr(err.msg, "produced by both"));
    tc__graph_destroy(g);

    g = graph_with_input();
    node(g, "w", "Relu", "x", NULL, "x"); /* writes a graph input */
    set_output(g, "x");
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__graph_toposort(g, &err), TC_STATUS_INVALID_GRAPH);
    tc__graph_destroy(g);
}

static void test_verify_names_unsupported_op(void **state) {
    (void)state;
    tc__graph *g = graph_with_input();
    node(g, "mystery_node", "NoSuchOp", "x", NULL, "y");
    set_output(g, "y");
    tc__err err = {0};
    assert_int_equal(tc__graph_toposort(g, &err), TC_STATUS_OK);
    assert_int_equal(tc__graph_verify(g, false, &err), TC_STATUS_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "mystery_node"));
    assert_non_null(strstr(err.msg, "NoSuchOp"));
    assert_non_null(strstr(err.msg, "17"));
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__graph_verify(g, true, &err), TC_STATUS_OK);
    tc__graph_destroy(g);

    g = graph_with_input();
    set_output(g, "dangling");
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__graph_toposort(g, &err), TC_STATUS_OK);
    assert_int_equal(tc__graph_verify(g, false, &err), TC_STATUS_INVALID_GRAPH);
    assert_non_null(strstr(err.msg, "dangling"));
    tc__graph_destroy(g);
}

static void test_symbols_and_shape_strings(void **state) {
    (void)state;
    tc__graph *g = tc__graph_create();
    int32_t b = tc__graph_symbol(g, "batch");
    int32_t s = tc__graph_symbol(g, "seq");
    assert_int_equal(tc__graph_symbol(g, "batch"), b);
    assert_int_not_equal(b, s);
    tc__shape sh = {.rank = 3, .dims = {{-1, b}, {-1, s}, {768, -1}}};
    char buf[64];
    assert_string_equal(tc__graph_shape_str(g, &sh, buf, sizeof buf), "batchxseqx768");
    sh.dims[1] = tc__dim_unknown();
    assert_string_equal(tc__graph_shape_str(g, &sh, buf, sizeof buf), "batchx?x768");
    sh.rank = TC__RANK_UNKNOWN;
    assert_string_equal(tc__graph_shape_str(g, &sh, buf, sizeof buf), "?");
    assert_false(tc__shape_is_concrete(&sh));
    tc__graph_destroy(g);
}

static void test_duplicate_value_name(void **state) {
    (void)state;
    tc__graph *g = tc__graph_create();
    int32_t v;
    tc__err err = {0};
    assert_int_equal(tc__graph_add_value(g, "t", &v, &err), TC_STATUS_OK);
    assert_int_equal(tc__graph_add_value(g, "t", &v, &err), TC_STATUS_INVALID_GRAPH);
    assert_non_null(strstr(err.msg, "'t'"));
    tc__graph_destroy(g);
}

/* y = Relu(x [2, 3]) declared with the given dtype and shape [2, d1]. */
static tc__graph *relu_declared(tc_dtype dtype, int64_t d1) {
    tc__graph *g = graph_with_input();
    tc__vinfo *x = &g->values[g->inputs[0]].info;
    x->dtype = TC_DTYPE_FLOAT32;
    x->shape = (tc__shape){.rank = 2, .dims = {tc__dim_known(2), tc__dim_known(3)}};
    node(g, "act", "Relu", "x", NULL, "y");
    set_output(g, "y");
    tc__vinfo *y = &g->values[g->outputs[0]].info;
    y->dtype = dtype;
    y->shape = (tc__shape){.rank = 2, .dims = {tc__dim_known(2), tc__dim_known(d1)}};
    tc__err err = {0};
    assert_int_equal(tc__graph_toposort(g, &err), TC_STATUS_OK);
    assert_int_equal(tc__graph_verify(g, false, &err), TC_STATUS_OK);
    return g;
}

static void test_wrong_declared_output_shape_warns(void **state) {
    (void)state;
    tc__graph *g = relu_declared(TC_DTYPE_FLOAT32, 4);
    tc__err err = {0};
    for (int round = 0; round < 2; round++) { /* inferred again: still one warning */
        assert_int_equal(tc__graph_infer_shapes(g, false, NULL, NULL, &err), TC_STATUS_OK);
        const tc__shape *y = &g->values[g->outputs[0]].info.shape;
        assert_int_equal(y->rank, 2);
        assert_int_equal(y->dims[1].value, 3);
        assert_int_equal(g->n_warnings, 1);
        assert_string_equal(g->warnings[0],
                            "graph output 'y' is declared with shape 2x4 but node 'act' (Relu) computes 2x3: using 2x3");
    }
    tc__graph_destroy(g);

    g = relu_declared(TC_DTYPE_FLOAT32, 3); /* agrees: no warning */
    assert_int_equal(tc__graph_infer_shapes(g, false, NULL, NULL, &err), TC_STATUS_OK);
    assert_int_equal(g->n_warnings, 0);
    tc__graph_destroy(g);

    g = relu_declared(TC_DTYPE_INT64, 3); /* another dtype is still refused */
    assert_int_equal(tc__graph_infer_shapes(g, false, NULL, NULL, &err), TC_STATUS_INVALID_GRAPH);
    assert_non_null(strstr(err.msg, "output 'y' is declared int64 but computes float32"));
    tc__graph_destroy(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_toposort_reorders_stably),
        cmocka_unit_test(test_cycle_is_an_error),
        cmocka_unit_test(test_undefined_input_and_double_producer),
        cmocka_unit_test(test_verify_names_unsupported_op),
        cmocka_unit_test(test_symbols_and_shape_strings),
        cmocka_unit_test(test_duplicate_value_name),
        cmocka_unit_test(test_wrong_declared_output_shape_warns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
