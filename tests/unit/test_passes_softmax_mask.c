/* test_passes_softmax_mask.c - pass fuse_softmax_mask: Softmax(Add(x, m)) over the last axis becomes one Softmax that
 * adds m (TC__ATTR_SOFTMAX_ADD), with the graph's outputs unchanged (the reference kernels on random inputs), for masks
 * of every broadcast along the rows and either operand order; with the NaN guard on fully masked (-inf) rows; and the
 * cases where it must not fire: a mask broadcast along the row, a constant addend (a bias), a sum read elsewhere,
 * another axis, operands that both widen to the sum's shape. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/fused_attr.h"
#include "pass_test_util.h"

/* x = Relu(in) (computed, [2, 3, 5, 7]), m = Neg(min) of shape mshape, y = Softmax(Add(x, m)) (operands swapped
 * when swap; Softmax over axis (99: none given)); with sum_out, the Add's output is a graph output too; with const_m,
 * m is an initializer. */
static tc__graph *mask_graph(const char *mshape, bool swap, int64_t axis, bool sum_out, bool const_m) {
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "in", TC_DTYPE_FLOAT32, "2x3x5x7");
    ptu_node(g, "Relu", "in", "x");
    if (const_m) ptu_init(g, "m", mshape, 5);
    else {
        ptu_input(g, "min", TC_DTYPE_FLOAT32, mshape);
        ptu_node(g, "Neg", "min", "m");
    }
    ptu_node(g, "Add", swap ? "m,x" : "x,m", "s");
    int32_t sm = ptu_node(g, "Softmax", "s", "y");
    if (axis != 99) ptu_attr_int(g, sm, "axis", axis);
    ptu_output(g, "y");
    if (sum_out) ptu_output(g, "s");
    ptu_finish(g);
    return g;
}

/* named: x must be the Softmax's input 0 (not when m has x's shape: then either order is the same sum). */
static void check_fused(tc__graph *g, bool named) {
    assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_softmax_mask), 1);
    assert_int_equal(ptu_count(g, "Add"), 0);
    const tc__node *sm = ptu_producer(g, "y");
    assert_string_equal(sm->op_type, "Softmax");
    assert_int_equal(sm->n_op_in, 2);
    assert_true(tc__softmax_adds(&sm->attrs));
    if (named) {
        assert_string_equal(ptu_in_name(g, sm, 0), "x");
        assert_string_equal(ptu_in_name(g, sm, 1), "m");
    }
    assert_string_equal(sm->fused, "Add");
    assert_int_equal(ptu_apply(g, tc__pass_fuse_softmax_mask), 0); /* once */
}

static void test_softmax_mask(void **state) {
    (void)state;
    const char *masks[] = {"2x1x5x7", "1x1x5x7", "7", "3x1x7", "2x3x5x7", "1x7"};
    for (size_t k = 0; k < sizeof masks / sizeof masks[0]; k++)
        for (int swap = 0; swap < 2; swap++) {
            tc__graph *g = mask_graph(masks[k], swap, 99, false, false);
            check_fused(g, strcmp(masks[k], "2x3x5x7") != 0);
            tc__graph_destroy(g);
        }
    tc__graph *g = mask_graph("1x1x5x7", false, 3, false, false); /* axis 3 = the last */
    check_fused(g, true);
    tc__graph_destroy(g);
}

static void test_softmax_mask_negative(void **state) {
    (void)state;
    struct {
        const char *mshape;
        int64_t axis;
        bool sum_out, const_m;
    } cases[] = {
        {"2x3x5x1", 99, false, false}, /* broadcast along the row */
        {"1x1x5x7", 2, false, false},  /* another axis */
        {"1x1x5x7", 99, true, false},  /* the sum read elsewhere */
        {"1x1x5x7", 99, false, true},  /* a constant addend */
        {"4x1x1x1x7", 99, false, false}, /* both widen: neither operand has the sum's shape */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tc__graph *g = mask_graph(cases[k].mshape, false, cases[k].axis, cases[k].sum_out, cases[k].const_m);
        assert_int_equal(ptu_apply(g, tc__pass_fuse_softmax_mask), 0);
        assert_int_equal(ptu_count(g, "Add"), 1);
        tc__graph_destroy(g);
    }
}

/* The attention Softmax with padding: m = Log(Relu(r)) x ones, so rows where r < 0 are all -inf (NaN after the
 * Softmax), then the exporters' guard Where(IsNaN(s), 0, s). Both passes fused, the outputs are the same bits. */
static void test_softmax_mask_guard(void **state) {
    (void)state;
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "2x3x6x9");
    ptu_input(g, "r", TC_DTYPE_FLOAT32, "2x1x6x1");
    ptu_init_f(g, "ones", "9", (const double[]){1, 1, 1, 1, 1, 1, 1, 1, 1});
    ptu_scalar(g, "c", 0.0);
    ptu_node(g, "Relu", "r", "rr");
    ptu_node(g, "Log", "rr", "lr");
    ptu_node(g, "Mul", "lr,ones", "m");
    ptu_node(g, "Add", "x,m", "a");
    ptu_node(g, "Softmax", "a", "s");
    ptu_node(g, "IsNaN", "s", "n");
    ptu_node(g, "Where", "n,c,s", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    tc__tensor before[1], after[1];
    ptu_run(g, 3, before);
    int masked = 0;
    for (int64_t i = 0; i < tc__tensor_numel(&before[0]); i++) masked += ((const float *)before[0].data)[i] == 0.0f;
    assert_true(masked > 0 && masked % 27 == 0); /* whole rows of 9 in 3 heads */
    assert_int_equal(ptu_apply(g, tc__pass_fuse_nan_guard), 1);
    assert_int_equal(ptu_apply(g, tc__pass_fuse_softmax_mask), 1);
    assert_int_equal(ptu_count(g, "Add") + ptu_count(g, "Where") + ptu_count(g, "IsNaN"), 0);
    ptu_run(g, 3, after);
    assert_memory_equal(before[0].data, after[0].data, before[0].nbytes);
    ptu_free_all(before, 1);
    ptu_free_all(after, 1);
    tc__graph_destroy(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_softmax_mask),
        cmocka_unit_test(test_softmax_mask_negative),
        cmocka_unit_test(test_softmax_mask_guard),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
