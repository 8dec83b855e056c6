/*
 * engine_test_model.h - a small CNN with a dynamic batch built as an ONNX model in memory
 * (Conv-BN-Relu, 1x1 Conv + residual Add + Relu, GlobalAveragePool, Flatten, Gemm) and helpers
 * to run it through the reference executor and through engines. Include after cmocka.h.
 */
#ifndef TC_TEST_ENGINE_TEST_MODEL_H
#define TC_TEST_ENGINE_TEST_MODEL_H

#include <math.h>

#include "onnx_test_util.h"
#include "tailcut/tailcut.h"

static uint64_t etm_rng = 0x2545F4914F6CDD1Dull;
static inline float etm_uniform(void) {
    etm_rng ^= etm_rng << 13;
    etm_rng ^= etm_rng >> 7;
    etm_rng ^= etm_rng << 17;
    return (float)((etm_rng >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

static inline void etm_weight(B *b, const char *name, int rank, const int64_t *dims, float lo) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    float *w = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) w[i] = lo + etm_uniform() * 0.5f;
    Onnx__TensorProto *t = b_tensor(b, name, 1, rank, dims);
    b_raw(b, t, w, sizeof(float) * (size_t)n);
    b_init(b, t);
    free(w);
}

/* Builds the model; returns its serialized bytes (owned by b). */
static inline uint8_t *etm_build(B *b, size_t *len) {
    static const char *const xdims[] = {"batch", "3", "8", "8"};
    static const char *const ydims[] = {"batch", "5"};
    b_input(b, b_vi(b, "x", 1, 4, xdims));
    b_output(b, b_vi(b, "y", 1, 2, ydims));
    etm_weight(b, "w1", 4, (int64_t[]){4, 3, 3, 3}, 0.0f);
    etm_weight(b, "bn_scale", 1, (int64_t[]){4}, 1.0f);
    etm_weight(b, "bn_bias", 1, (int64_t[]){4}, 0.0f);
    etm_weight(b, "bn_mean", 1, (int64_t[]){4}, 0.0f);
    etm_weight(b, "bn_var", 1, (int64_t[]){4}, 1.0f);
    etm_weight(b, "w2", 4, (int64_t[]){4, 4, 1, 1}, 0.0f);
    etm_weight(b, "b2", 1, (int64_t[]){4}, 0.0f);
    etm_weight(b, "fc_w", 2, (int64_t[]){5, 4}, 0.0f);
    etm_weight(b, "fc_b", 1, (int64_t[]){5}, 0.0f);
    Onnx__NodeProto *c1 = b_node(b, "conv1", "Conv", "x,w1", "c1");
    Onnx__AttributeProto *pads = b_attr(b, c1, "pads", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    pads->n_ints = 4;
    pads->ints = b_dup(b, (int64_t[]){1, 1, 1, 1}, 4 * sizeof(int64_t));
    b_node(b, "bn1", "BatchNormalization", "c1,bn_scale,bn_bias,bn_mean,bn_var", "n1");
    b_node(b, "relu1", "Relu", "n1", "r1");
    b_node(b, "conv2", "Conv", "r1,w2,b2", "c2");
    b_node(b, "add", "Add", "c2,r1", "s");
    b_node(b, "relu2", "Relu", "s", "r2");
    b_node(b, "gap", "GlobalAveragePool", "r2", "p");
    b_node(b, "flat", "Flatten", "p", "f");
    Onnx__NodeProto *fc = b_node(b, "fc", "Gemm", "f,fc_w,fc_b", "y");
    Onnx__AttributeProto *tb = b_attr(b, fc, "transB", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    tb->has_i = 1;
    tb->i = 1;
    return b_pack(b, len);
}

/* Loads the model built in b (frees b). */
static inline tc_model *etm_load(B *b) {
    size_t len;
    uint8_t *bytes = b_pack(b, &len);
    tc_model *m = NULL;
    tc_error err;
    if (tc_model_load_buffer(bytes, len, NULL, NULL, &m, &err)) fail_msg("model load: %s", err.message);
    b_free(b);
    return m;
}

static inline tc_model *etm_model(void) {
    B *b = b_new(17);
    size_t len;
    etm_build(b, &len);
    return etm_load(b);
}

static inline tc_engine *etm_engine_cached(const tc_model *m, int64_t min_b, int64_t opt_b, int64_t max_b,
                                           uint32_t disabled, const char *timing_cache) {
    tc_input_range r = {.name = "x", .rank = 4, .min = {min_b, 3, 8, 8}, .opt = {opt_b, 3, 8, 8}, .max = {max_b, 3, 8, 8}};
    tc_profile p = {1, &r};
    tc_build_options o = {.struct_size = sizeof o, .num_profiles = 1, .profiles = &p, .disabled_passes = disabled,
                          .timing_cache = timing_cache};
    tc_engine *e = NULL;
    tc_error err;
    tc_status st = tc_engine_build(m, &o, &e, &err);
    if (st) fail_msg("build: %s", err.message);
    return e;
}

static inline tc_engine *etm_engine(const tc_model *m, int64_t min_b, int64_t opt_b, int64_t max_b, uint32_t disabled) {
    return etm_engine_cached(m, min_b, opt_b, max_b, disabled, NULL);
}

static inline tc_tensor etm_input(int64_t batch) {
    tc_tensor x;
    int64_t dims[4] = {batch, 3, 8, 8};
    assert_int_equal(tc_tensor_alloc(TC_DTYPE_FLOAT32, 4, dims, &x, NULL), TC_STATUS_OK);
    for (size_t i = 0; i < x.nbytes / 4; i++) ((float *)x.data)[i] = etm_uniform();
    return x;
}

/* Reference output for input x (caller frees). */
static inline tc_tensor etm_reference(const tc_model *m, const tc_tensor *x) {
    const char *names[1] = {"x"};
    tc_tensor y;
    tc_error err;
    if (tc_model_run_reference(m, 1, names, x, &y, &err)) fail_msg("reference: %s", err.message);
    return y;
}

static inline void etm_expect_close(const float *got, const float *want, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (fabsf(got[i] - want[i]) > 1e-4f * (1.0f + fabsf(want[i])))
            fail_msg("element %zu: got %g, want %g", i, (double)got[i], (double)want[i]);
}

/* Runs ctx on x into y_buf (5 * batch floats). */
static inline void etm_run(tc_context *c, const tc_tensor *x, float *y_buf) {
    assert_int_equal(tc_context_set_input_shape(c, "x", 4, x->dims), TC_STATUS_OK);
    assert_int_equal(tc_context_set_tensor(c, "x", x->data, x->nbytes), TC_STATUS_OK);
    assert_int_equal(tc_context_set_tensor(c, "y", y_buf, sizeof(float) * 5 * (size_t)x->dims[0]), TC_STATUS_OK);
    if (tc_context_run(c) != TC_STATUS_OK) fail_msg("run: %s", tc_context_error(c));
}

#endif
