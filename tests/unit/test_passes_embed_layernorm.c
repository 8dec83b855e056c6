/* test_passes_embed_layernorm.c - pass fuse_embed_layernorm: a transformer's embedding layer (Gather of a constant
 * table by the ids, Adds of constant position / token-type rows, LayerNormalization over the last axis) becomes one
 * TcEmbedLayerNorm node (domain "tailcut") with the graph's output unchanged (reference kernels on random ids), with
 * two, one or no Adds and addends of shapes [1, S, D], [S, D] and [D]; it must not fire when an addend is computed,
 * an intermediate value is read elsewhere, the LayerNorm runs over two axes, or the table is computed. An ONNX model
 * cannot name the op: the schema is found only in the tailcut domain. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pass_test_util.h"

enum { ONE_ADD = 1, NO_ADD = 2, COMPUTED_ADD = 4, SHARED = 8, TWO_AXES = 16, ROW_ADDEND = 32, TABLE_COMPUTED = 64 };

/* ids [2, 6] int64 (values 0..4) -> Gather(table [7, 10]) -> + pos [1, 6, 10] -> + typ [6, 10] (ROW_ADDEND: [10]) ->
 * LayerNormalization(scale [10], bias [10]) = y. */
static tc__graph *embed_graph(int flags) {
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "ids", TC_DTYPE_INT64, "2x6");
    if (flags & TABLE_COMPUTED) {
        ptu_input(g, "ti", TC_DTYPE_FLOAT32, "7x10");
        ptu_node(g, "Relu", "ti", "table");
    } else {
        ptu_init_ex(g, "table", TC_DTYPE_FLOAT32, "7x10", NULL, 3, -2.0, 2.0);
    }
    ptu_init(g, "pos", "1x6x10", 4);
    ptu_init(g, "typ", (flags & ROW_ADDEND) ? "10" : "6x10", 5);
    ptu_init_ex(g, "scale", TC_DTYPE_FLOAT32, (flags & TWO_AXES) ? "6x10" : "10", NULL, 6, 0.5, 1.5);
    ptu_init(g, "bias", (flags & TWO_AXES) ? "6x10" : "10", 7);
    ptu_node(g, "Gather", "table,ids", "e0");
    const char *x = "e0";
    if (!(flags & NO_ADD)) {
        if (flags & COMPUTED_ADD) {
            ptu_input(g, "pi", TC_DTYPE_FLOAT32, "1x6x10");
            ptu_node(g, "Neg", "pi", "pc");
            ptu_node(g, "Add", "e0,pc", "e1");
        } else {
            ptu_node(g, "Add", "pos,e0", "e1"); /* (the constant first) */
        }
        x = "e1";
        if (!(flags & ONE_ADD)) {
            ptu_node(g, "Add", "e1,typ", "e2");
            x = "e2";
        }
    }
    char ins[64];
    snprintf(ins, sizeof ins, "%s,scale,bias", x);
    const int32_t ln = ptu_node(g, "LayerNormalization", ins, "y");
    ptu_attr_float(g, ln, "epsilon", 1e-6f);
    if (flags & TWO_AXES) ptu_attr_int(g, ln, "axis", -2);
    ptu_output(g, "y");
    if (flags & SHARED) ptu_output(g, x);
    ptu_finish(g);
    return g;
}

static void test_embed_fused(void **state) {
    (void)state;
    const int variants[] = {0, ONE_ADD, NO_ADD, ROW_ADDEND};
    for (size_t k = 0; k < sizeof variants / sizeof variants[0]; k++) {
        tc__graph *g = embed_graph(variants[k]);
        assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_embed_layernorm), 1);
        const tc__node *e = ptu_producer(g, "y");
        assert_string_equal(e->op_type, "TcEmbedLayerNorm");
        assert_string_equal(e->domain, TC__DOMAIN_INTERNAL);
        assert_int_equal(e->n_in, (variants[k] & NO_ADD) ? 4 : 5);
        assert_float_equal(tc__attr_float(&e->attrs, "epsilon", 0.0f), 1e-6f, 1e-12);
        assert_int_equal(ptu_count(g, "Gather"), 0);
        assert_int_equal(ptu_count(g, "Add"), 0);
        assert_int_equal(ptu_count(g, "LayerNormalization"), 0);
        assert_int_equal(ptu_apply(g, tc__pass_fuse_embed_layernorm), 0); /* once */
        tc__graph_destroy(g);
    }
}

static void test_embed_not_fused(void **state) {
    (void)state;
    const int variants[] = {COMPUTED_ADD, SHARED, TWO_AXES, TABLE_COMPUTED};
    for (size_t k = 0; k < sizeof variants / sizeof variants[0]; k++) {
        tc__graph *g = embed_graph(variants[k]);
        assert_int_equal(ptu_apply(g, tc__pass_fuse_embed_layernorm), 0);
        assert_int_equal(ptu_count(g, "TcEmbedLayerNorm"), 0);
        tc__graph_destroy(g);
    }
}

static void test_internal_op_domain(void **state) {
    (void)state;
    assert_null(tc__op_schema_find("", "TcEmbedLayerNorm"));
    assert_null(tc__op_schema_find("ai.onnx", "TcEmbedLayerNorm"));
    assert_non_null(tc__op_schema_find(TC__DOMAIN_INTERNAL, "TcEmbedLayerNorm"));
    assert_null(tc__op_schema_find(TC__DOMAIN_INTERNAL, "LayerNormalization"));
    assert_non_null(tc__op_schema_find("", "LayerNormalization"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_embed_fused),
        cmocka_unit_test(test_embed_not_fused),
        cmocka_unit_test(test_internal_op_domain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
