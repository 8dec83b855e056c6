/*
 * int8_test_model.h - a small CNN whose layers all fit the INT8 tactics, built as an ONNX model in memory:
 * x[1,3,12,12] -> 3x3 stem (bias) -> Relu -> 3x3 -> Relu -> 1x1 + residual -> Relu -> GAP -> Flatten ->
 * MatMul -> y[1,10], 32 channels (or another count); and random inputs for it. Include after cmocka.h.
 */
#ifndef TC_TEST_INT8_TEST_MODEL_H
#define TC_TEST_INT8_TEST_MODEL_H

#include "engine_test_model.h"

#define CH 32
#define HW 12
#define CLASSES 10

static inline void itm_ints_attr(B *b, Onnx__NodeProto *n, const char *name, int count, const int64_t *v) {
    Onnx__AttributeProto *a = b_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->n_ints = (size_t)count;
    a->ints = b_dup(b, v, sizeof(int64_t) * (size_t)count);
}

static inline void itm_conv(B *b, const char *name, const char *ins, const char *out, int64_t k) {
    Onnx__NodeProto *n = b_node(b, name, "Conv", ins, out);
    itm_ints_attr(b, n, "pads", 4, (int64_t[]){k / 2, k / 2, k / 2, k / 2});
}

/* x[1,3,HW,HW] -> stem 3x3 -> relu -> 3x3 -> relu -> 1x1 + residual -> relu -> GAP -> flatten -> MatMul -> y[1,10],
 * ch channels. seed changes the weights (another model). */
static inline tc_model *itm_model_ch(uint64_t seed, int64_t ch) {
    etm_rng = seed;
    B *b = b_new(17);
    char hw[16];
    snprintf(hw, sizeof hw, "%d", HW);
    b_input(b, b_vi(b, "x", 1, 4, (const char *[]){"1", "3", hw, hw}));
    b_output(b, b_vi(b, "y", 1, 2, (const char *[]){"1", "10"}));
    etm_weight(b, "w1", 4, (int64_t[]){ch, 3, 3, 3}, 0.0f);
    etm_weight(b, "b1", 1, (int64_t[]){ch}, 0.0f);
    etm_weight(b, "w2", 4, (int64_t[]){ch, ch, 3, 3}, 0.0f);
    etm_weight(b, "w3", 4, (int64_t[]){ch, ch, 1, 1}, 0.0f);
    etm_weight(b, "fc", 2, (int64_t[]){ch, CLASSES}, 0.0f);
    itm_conv(b, "stem", "x,w1,b1", "c1", 3);
    b_node(b, "stem_relu", "Relu", "c1", "r1");
    itm_conv(b, "mid", "r1,w2", "c2", 3);
    b_node(b, "mid_relu", "Relu", "c2", "r2");
    itm_conv(b, "proj", "r2,w3", "c3", 1);
    b_node(b, "res", "Add", "c3,r1", "a3");
    b_node(b, "res_relu", "Relu", "a3", "r3");
    b_node(b, "gap", "GlobalAveragePool", "r3", "g");
    b_node(b, "flat", "Flatten", "g", "f");
    b_node(b, "classifier", "MatMul", "f,fc", "y");
    return etm_load(b);
}
static inline tc_model *itm_model(uint64_t seed) { return itm_model_ch(seed, CH); }

static inline tc_tensor itm_input(void) {
    tc_tensor x;
    assert_int_equal(tc_tensor_alloc(TC_DTYPE_FLOAT32, 4, (int64_t[]){1, 3, HW, HW}, &x, NULL), TC_STATUS_OK);
    for (size_t k = 0; k < x.nbytes / 4; k++) ((float *)x.data)[k] = 2.0f * etm_uniform();
    return x;
}

#endif
