/*
 * test_engine_convt.c - ConvTranspose through the whole pipeline: an ONNX model built in memory
 * (dynamic batch; ConvTranspose with groups, stride, asymmetric pads, output_padding and bias, Relu,
 * then a dilated stride-2 ConvTranspose with output_shape, as decoders stack them) built into an
 * engine whose profile spans batch 1 to 3; every step gets a fast tactic (no "ref"), and contexts with
 * one and two threads give the reference executor's results at batch 1, 2 and 3.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "engine_test_model.h"

static void ints_attr(B *b, Onnx__NodeProto *n, const char *name, const int64_t *v, size_t count) {
    Onnx__AttributeProto *a = b_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->n_ints = count;
    a->ints = b_dup(b, v, count * sizeof(int64_t));
}

static void int_attr(B *b, Onnx__NodeProto *n, const char *name, int64_t v) {
    Onnx__AttributeProto *a = b_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1;
    a->i = v;
}

/*
 * x [batch, 6, 5, 7] -> up1 [batch, 4, 11, 13] (H: 2*4 + 1 + 2 + 1 - 1, W: 2*6 + 1 + 1 - 1) -> Relu -> up2
 * [batch, 3, 24, 33] (H: full 25, one row of padding at the begin; W: full 27, extended at the end).
 */
static tc_model *convt_model(void) {
    B *b = b_new(17);
    static const char *const xdims[] = {"batch", "6", "5", "7"};
    static const char *const ydims[] = {"batch", "3", "24", "33"};
    b_input(b, b_vi(b, "x", 1, 4, xdims));
    b_output(b, b_vi(b, "y", 1, 4, ydims));
    etm_weight(b, "w1", 4, (int64_t[]){6, 2, 3, 2}, -0.25f);
    etm_weight(b, "b1", 1, (int64_t[]){4}, -0.25f);
    etm_weight(b, "w2", 4, (int64_t[]){4, 3, 3, 3}, -0.25f);
    Onnx__NodeProto *up1 = b_node(b, "up1", "ConvTranspose", "x,w1,b1", "u1");
    int_attr(b, up1, "group", 2);
    ints_attr(b, up1, "strides", (int64_t[]){2, 2}, 2);
    ints_attr(b, up1, "pads", (int64_t[]){1, 0, 0, 1}, 4);
    ints_attr(b, up1, "output_padding", (int64_t[]){1, 0}, 2);
    b_node(b, "relu", "Relu", "u1", "r1");
    Onnx__NodeProto *up2 = b_node(b, "up2", "ConvTranspose", "r1,w2", "y");
    ints_attr(b, up2, "strides", (int64_t[]){2, 2}, 2);
    ints_attr(b, up2, "dilations", (int64_t[]){2, 1}, 2);
    ints_attr(b, up2, "output_shape", (int64_t[]){24, 33}, 2);
    return etm_load(b);
}

static tc_tensor convt_input(int64_t batch) {
    tc_tensor x;
    int64_t dims[4] = {batch, 6, 5, 7};
    assert_int_equal(tc_tensor_alloc(TC_DTYPE_FLOAT32, 4, dims, &x, NULL), TC_STATUS_OK);
    for (size_t i = 0; i < x.nbytes / 4; i++) ((float *)x.data)[i] = etm_uniform();
    return x;
}

static void test_convt_engine_matches_reference(void **state) {
    (void)state;
    tc_model *m = convt_model();
    tc_input_range r = {.name = "x", .rank = 4, .min = {1, 6, 5, 7}, .opt = {2, 6, 5, 7}, .max = {3, 6, 5, 7}};
    tc_profile p = {1, &r};
    tc_build_options o = {.struct_size = sizeof o, .num_profiles = 1, .profiles = &p, .flags = TC_BUILD_TACTICS_FIXED};
    tc_engine *e = NULL;
    tc_error err;
    if (tc_engine_build(m, &o, &e, &err)) fail_msg("build: %s", err.message);
    int convts = 0;
    for (int s = 0; s < tc_engine_num_steps(e); s++) {
        tc_step_info info;
        assert_int_equal(tc_engine_step_info(e, s, &info), TC_STATUS_OK);
        if (strstr(info.ops, "ConvTranspose") == NULL) continue;
        convts++;
        if (strcmp(info.tactic, "ref") == 0) fail_msg("step %s runs the reference kernel", info.name);
    }
    assert_int_equal(convts, 2);
    for (int threads = 1; threads <= 2; threads++) {
        tc_context *c = NULL;
        if (tc_context_create(e, 0, &c, &err)) fail_msg("context: %s", err.message);
        assert_int_equal(tc_context_set_threads(c, threads), TC_STATUS_OK);
        for (int64_t batch = 1; batch <= 3; batch++) {
            tc_tensor x = convt_input(batch), want = etm_reference(m, &x);
            assert_int_equal(want.rank, 4);
            assert_int_equal(want.dims[2], 24);
            assert_int_equal(want.dims[3], 33);
            const size_t n = want.nbytes / sizeof(float);
            float *got = malloc(want.nbytes);
            assert_int_equal(tc_context_set_input_shape(c, "x", 4, x.dims), TC_STATUS_OK);
            assert_int_equal(tc_context_set_tensor(c, "x", x.data, x.nbytes), TC_STATUS_OK);
            assert_int_equal(tc_context_set_tensor(c, "y", got, want.nbytes), TC_STATUS_OK);
            if (tc_context_run(c) != TC_STATUS_OK) fail_msg("run: %s", tc_context_error(c));
            etm_expect_close(got, want.data, n);
            free(got);
            tc_tensor_free(&x);
            tc_tensor_free(&want);
        }
        tc_context_destroy(c);
    }
    tc_engine_destroy(e);
    tc_model_destroy(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_convt_engine_matches_reference)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
