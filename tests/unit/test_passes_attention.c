/* test_passes_attention.c - pass fuse_attention: the attention chain of exported transformers (Reshape heads,
 * Transpose, scalar Mul, MatMul, mask Add, Softmax with the NaN guard, MatMul, Transpose, Reshape), after
 * fuse_matmul_views and fuse_softmax_mask, becomes one Attention node with the graph's outputs unchanged (reference
 * kernels on random inputs), with and without a mask and a scale; and it must not fire when the output is not merged
 * back into [B, S, H*D], when the probabilities are read elsewhere, or when the Softmax runs over another axis.
 * Pass merge_qkv: an Attention node's Q, K and V projections (MatMuls of one input by constant weights, with biases
 * or without, grouped-query heads, a mask) become one MatMul read as packed Q|K|V, outputs unchanged (the reference
 * Attention kernel reads the packed tensor); not when the inputs differ, a projection is read elsewhere, V's head
 * size differs, the weights' rows differ, or the precision marks differ. */
#include <setjmp.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/fused_attr.h"
#include "core/quant_attr.h"
#include "pass_test_util.h"

enum { NO_MASK = 1, NO_SCALE = 2, NO_MERGE = 4, P_OUT = 8, AXIS2 = 16, GUARD = 32 };

/* q, k, v = Relu(inputs) [2, 5, 12] (L = 6 for k, v), 3 heads of 4. */
static tc__graph *attn_graph(int flags) {
    tc__graph *g = ptu_graph(17);
    ptu_input(g, "qi", TC_DTYPE_FLOAT32, "2x5x12");
    ptu_input(g, "ki", TC_DTYPE_FLOAT32, "2x6x12");
    ptu_input(g, "vi", TC_DTYPE_FLOAT32, "2x6x12");
    const double q4[4] = {2, 5, 3, 4}, k4[4] = {2, 6, 3, 4}, y3[3] = {2, 5, 12};
    ptu_init_i64(g, "q4s", "4", q4);
    ptu_init_i64(g, "k4s", "4", k4);
    ptu_init_i64(g, "y3s", "3", y3);
    ptu_node(g, "Relu", "qi", "q");
    ptu_node(g, "Relu", "ki", "k");
    ptu_node(g, "Relu", "vi", "v");
    ptu_node(g, "Reshape", "q,q4s", "q4");
    ptu_node(g, "Reshape", "k,k4s", "k4");
    ptu_node(g, "Reshape", "v,k4s", "v4");
    const int64_t p0213[4] = {0, 2, 1, 3}, p0231[4] = {0, 2, 3, 1};
    ptu_attr_ints(g, ptu_node(g, "Transpose", "q4", "qt"), "perm", 4, p0213);
    ptu_attr_ints(g, ptu_node(g, "Transpose", "k4", "kt"), "perm", 4, p0231);
    ptu_attr_ints(g, ptu_node(g, "Transpose", "v4", "vt"), "perm", 4, p0213);
    if (!(flags & NO_SCALE)) {
        ptu_scalar(g, "c", 0.5);
        ptu_node(g, "Mul", "qt,c", "qs");
    }
    ptu_node(g, "MatMul", (flags & NO_SCALE) ? "qt,kt" : "qs,kt", "s");
    if (!(flags & NO_MASK)) {
        ptu_input(g, "mi", TC_DTYPE_FLOAT32, "2x1x1x6");
        ptu_node(g, "Neg", "mi", "m");
        ptu_node(g, "Add", "s,m", "sm");
    }
    const int32_t sm = ptu_node(g, "Softmax", (flags & NO_MASK) ? "s" : "sm", "p");
    if (flags & AXIS2) ptu_attr_int(g, sm, "axis", 2);
    ptu_node(g, "MatMul", "p,vt", "o");
    if (flags & NO_MERGE) {
        ptu_output(g, "o");
    } else {
        ptu_attr_ints(g, ptu_node(g, "Transpose", "o", "ot"), "perm", 4, p0213);
        ptu_node(g, "Reshape", "ot,y3s", "y");
        ptu_output(g, "y");
    }
    if (flags & P_OUT) ptu_output(g, "p");
    ptu_finish(g);
    ptu_apply(g, tc__pass_fuse_matmul_views);
    if (!(flags & NO_MASK)) ptu_apply(g, tc__pass_fuse_softmax_mask);
    if (flags & GUARD) {
        const tc__node *sm = ptu_producer(g, "p");
        ptu_attr_float(g, (int32_t)(sm - g->nodes), TC__ATTR_NAN_TO, 0.0f);
    }
    return g;
}

static void test_attention_fused(void **state) {
    (void)state;
    const int variants[] = {0, NO_MASK, NO_SCALE, NO_MASK | NO_SCALE, GUARD};
    for (size_t k = 0; k < sizeof variants / sizeof variants[0]; k++) {
        tc__graph *g = attn_graph(variants[k]);
        assert_int_equal(ptu_apply_checked(g, tc__pass_fuse_attention), 1);
        const tc__node *a = ptu_producer(g, "y");
        assert_string_equal(a->op_type, "Attention");
        assert_int_equal(a->n_op_in, (variants[k] & NO_MASK) ? 3 : 4);
        assert_int_equal(tc__attr_int(&a->attrs, "q_num_heads", 0), 3);
        assert_int_equal(tc__attr_int(&a->attrs, "kv_num_heads", 0), 3);
        assert_float_equal(tc__attr_float(&a->attrs, "scale", -1.0f), (variants[k] & NO_SCALE) ? 1.0f : 0.5f, 1e-7);
        assert_int_equal(tc__attr_has(&a->attrs, TC__ATTR_NAN_TO), (variants[k] & GUARD) != 0);
        assert_int_equal(ptu_count(g, "MatMul"), 0);
        assert_int_equal(ptu_count(g, "Softmax"), 0);
        assert_int_equal(ptu_apply(g, tc__pass_fuse_attention), 0); /* once */
        tc__graph_destroy(g);
    }
}

static void test_attention_not_fused(void **state) {
    (void)state;
    const int variants[] = {NO_MERGE, P_OUT, AXIS2, AXIS2 | NO_MASK};
    for (size_t k = 0; k < sizeof variants / sizeof variants[0]; k++) {
        tc__graph *g = attn_graph(variants[k]);
        assert_int_equal(ptu_apply(g, tc__pass_fuse_attention), 0);
        assert_int_equal(ptu_count(g, "Attention"), 0);
        tc__graph_destroy(g);
    }
}

enum { QKV_NO_BIAS = 1, QKV_GQA = 2, QKV_MASK = 4, QKV_TWO_X = 8, QKV_K_OUT = 16, QKV_DV = 32, QKV_MARK = 64 };

/* y = Attention(Relu(x) Wq + bq, Relu(x) Wk + bk, Relu(x) Wv + bv [, mask]) with x [2, 5, 8]; 4 query heads of 3, 4
 * (QKV_GQA: 2) KV heads; the biases fused as fuse_matmul_bias does. */
static tc__graph *qkv_graph(int flags) {
    tc__graph *g = ptu_graph(23);
    const int64_t hk = (flags & QKV_GQA) ? 2 : 4, dv = (flags & QKV_DV) ? 2 : 3;
    char ks[16], vs[16], kb[16], vb[16];
    snprintf(ks, sizeof ks, "8x%d", (int)(hk * 3));
    snprintf(vs, sizeof vs, "8x%d", (int)(hk * dv));
    snprintf(kb, sizeof kb, "%d", (int)(hk * 3));
    snprintf(vb, sizeof vb, "%d", (int)(hk * dv));
    ptu_input(g, "xi", TC_DTYPE_FLOAT32, "2x5x8");
    ptu_node(g, "Relu", "xi", "x");
    if (flags & QKV_TWO_X) {
        ptu_input(g, "x2i", TC_DTYPE_FLOAT32, "2x5x8");
        ptu_node(g, "Relu", "x2i", "x2");
    }
    ptu_init(g, "wq", "8x12", 11);
    ptu_init(g, "wk", ks, 12);
    ptu_init(g, "wv", vs, 13);
    ptu_init(g, "bq", "12", 14);
    ptu_init(g, "bk", kb, 15);
    ptu_init(g, "bv", vb, 16);
    const bool bias = !(flags & QKV_NO_BIAS);
    ptu_node(g, "MatMul", "x,wq", bias ? "q0" : "q");
    ptu_node(g, "MatMul", (flags & QKV_TWO_X) ? "x2,wk" : "x,wk", bias ? "k0" : "k");
    const int32_t mv = ptu_node(g, "MatMul", "x,wv", bias ? "v0" : "v");
    if (flags & QKV_MARK) ptu_attr_int(g, mv, TC__ATTR_FP16, 1);
    if (bias) {
        ptu_node(g, "Add", "q0,bq", "q");
        ptu_node(g, "Add", "k0,bk", "k");
        ptu_node(g, "Add", "v0,bv", "v");
    }
    int32_t a;
    if (flags & QKV_MASK) {
        ptu_input(g, "m", TC_DTYPE_FLOAT32, "2x1x5x5");
        a = ptu_node(g, "Attention", "q,k,v,m", "y");
    } else {
        a = ptu_node(g, "Attention", "q,k,v", "y");
    }
    ptu_attr_int(g, a, "q_num_heads", 4);
    ptu_attr_int(g, a, "kv_num_heads", hk);
    ptu_output(g, "y");
    if (flags & QKV_K_OUT) ptu_output(g, "k");
    ptu_finish(g);
    if (bias) ptu_apply(g, tc__pass_fuse_matmul_bias);
    return g;
}

static void test_qkv_merged(void **state) {
    (void)state;
    const int variants[] = {0, QKV_NO_BIAS, QKV_GQA, QKV_MASK, QKV_GQA | QKV_MASK | QKV_NO_BIAS};
    for (size_t k = 0; k < sizeof variants / sizeof variants[0]; k++) {
        tc__graph *g = qkv_graph(variants[k]);
        assert_int_equal(ptu_count(g, "MatMul"), 3);
        assert_int_equal(ptu_apply_checked(g, tc__pass_merge_qkv), 1);
        assert_int_equal(ptu_count(g, "MatMul"), 1);
        const tc__node *a = ptu_producer(g, "y"), *mm = ptu_nth(g, "MatMul", 0);
        assert_int_equal(tc__attr_int(&a->attrs, TC__ATTR_QKV_PACKED, 0), 1);
        assert_true(a->in[0] == a->in[1] && a->in[0] == a->in[2] && a->in[0] == mm->out[0]);
        const tc__shape *qs = &g->values[mm->out[0]].info.shape;
        assert_int_equal(qs->dims[2].value, (variants[k] & QKV_GQA) ? 12 + 2 * 6 : 36);
        assert_int_equal(mm->epi.bias_input >= 0, !(variants[k] & QKV_NO_BIAS));
        assert_int_equal(ptu_apply(g, tc__pass_merge_qkv), 0); /* once */
        tc__graph_destroy(g);
    }
}

static void test_qkv_not_merged(void **state) {
    (void)state;
    const int variants[] = {QKV_TWO_X, QKV_K_OUT, QKV_DV, QKV_MARK};
    for (size_t k = 0; k < sizeof variants / sizeof variants[0]; k++) {
        tc__graph *g = qkv_graph(variants[k]);
        assert_int_equal(ptu_apply(g, tc__pass_merge_qkv), 0);
        assert_int_equal(ptu_count(g, "MatMul"), 3);
        tc__graph_destroy(g);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attention_fused),
        cmocka_unit_test(test_attention_not_fused),
        cmocka_unit_test(test_qkv_merged),
        cmocka_unit_test(test_qkv_not_merged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
