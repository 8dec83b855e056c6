/* test_cuda_nhwc16_chain.c - FP16 NHWC images between the CUDA cuDNN convolutions and MaxPools (engine/nhwc16_chain.c):
 * a small residual network built with --fp16 on the CUDA backend chains a value read by two convolutions (as input and
 * as fused residual) and values read by one, through every in/out combination of the MaxPool and the pointwise GEMM
 * path with and without a residual; the outputs match the reference within FP16's
 * accuracy at several batch sizes of one dynamic profile. Skipped where there is no CUDA device. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "engine_test_model.h"

/* x[N,8,12,12] -> mp0 MaxPool 3x3 p1 = x0 (FP32 in, image out) -> convA 3x3 (8->16) +relu = a -> mp1 MaxPool 3x3 s2
 * p1 = m [N,16,6,6] (image in and out, 8 channels a thread) -> convB 1x1 +bias, relu = bv (one cuBLASLt GEMM with its
 * bias and ReLU epilogue) -> convC 3x3 +relu = c2 -> convE 1x1 +bias + m, relu = d (the GEMM with m as its C: the
 * residual, as ResNet's last convolution of a block) -> convD 1x1 stride 2 (16->8) = e -> mp2 MaxPool 2x2 = f (image
 * in, FP32 out) -> GlobalAveragePool = y[N,8,1,1]. m is read by convB (input) and convE (residual). */
static void pads1(B *b, Onnx__NodeProto *n) {
    Onnx__AttributeProto *pa = b_attr(b, n, "pads", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    pa->n_ints = 4;
    pa->ints = b_dup(b, (int64_t[]){1, 1, 1, 1}, 4 * sizeof(int64_t));
}

static void ints2(B *b, Onnx__NodeProto *n, const char *name, int64_t v) {
    Onnx__AttributeProto *a = b_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->n_ints = 2;
    a->ints = b_dup(b, (int64_t[]){v, v}, 2 * sizeof(int64_t));
}

static tc_model *chain_model(void) {
    etm_rng = 0x5DEECE66Dull;
    B *b = b_new(17);
    b_input(b, b_vi(b, "x", 1, 4, (const char *[]){"batch", "8", "12", "12"}));
    b_output(b, b_vi(b, "y", 1, 4, (const char *[]){"batch", "8", "1", "1"}));
    etm_weight(b, "wa", 4, (int64_t[]){16, 8, 3, 3}, 0.0f);
    etm_weight(b, "ba", 1, (int64_t[]){16}, 0.0f);
    etm_weight(b, "wb", 4, (int64_t[]){16, 16, 1, 1}, 0.0f);
    etm_weight(b, "bb", 1, (int64_t[]){16}, 0.0f);
    etm_weight(b, "wc", 4, (int64_t[]){16, 16, 3, 3}, 0.0f);
    etm_weight(b, "we", 4, (int64_t[]){16, 16, 1, 1}, 0.0f);
    etm_weight(b, "be", 1, (int64_t[]){16}, 0.0f);
    etm_weight(b, "wd", 4, (int64_t[]){8, 16, 1, 1}, 0.0f);
    etm_weight(b, "bd", 1, (int64_t[]){8}, 0.0f);
    Onnx__NodeProto *p0 = b_node(b, "mp0", "MaxPool", "x", "x0");
    ints2(b, p0, "kernel_shape", 3);
    pads1(b, p0);
    pads1(b, b_node(b, "convA", "Conv", "x0,wa,ba", "ca"));
    b_node(b, "reluA", "Relu", "ca", "a");
    Onnx__NodeProto *p1 = b_node(b, "mp1", "MaxPool", "a", "m");
    ints2(b, p1, "kernel_shape", 3);
    ints2(b, p1, "strides", 2);
    pads1(b, p1);
    b_node(b, "convB", "Conv", "m,wb,bb", "cb");
    b_node(b, "reluB", "Relu", "cb", "bv");
    pads1(b, b_node(b, "convC", "Conv", "bv,wc", "cc"));
    b_node(b, "reluC", "Relu", "cc", "c2");
    b_node(b, "convE", "Conv", "c2,we,be", "ce");
    b_node(b, "addE", "Add", "ce,m", "se");
    b_node(b, "reluE", "Relu", "se", "d");
    ints2(b, b_node(b, "convD", "Conv", "d,wd,bd", "e"), "strides", 2);
    ints2(b, b_node(b, "mp2", "MaxPool", "e", "f"), "kernel_shape", 2);
    b_node(b, "gap", "GlobalAveragePool", "f", "y");
    return etm_load(b);
}

static void run_batch(tc_context *c, const tc_model *m, int64_t batch) {
    tc_tensor x;
    const int64_t dims[4] = {batch, 8, 12, 12};
    assert_int_equal(tc_tensor_alloc(TC_DTYPE_FLOAT32, 4, dims, &x, NULL), TC_STATUS_OK);
    for (size_t i = 0; i < x.nbytes / 4; i++) ((float *)x.data)[i] = etm_uniform();
    tc_tensor want = etm_reference(m, &x);
    float y[4 * 8];
    assert_int_equal(tc_context_set_input_shape(c, "x", 4, x.dims), TC_STATUS_OK);
    assert_int_equal(tc_context_set_tensor(c, "x", x.data, x.nbytes), TC_STATUS_OK);
    assert_int_equal(tc_context_set_tensor(c, "y", y, sizeof(float) * 8 * (size_t)batch), TC_STATUS_OK);
    for (int r = 0; r < 3; r++) { /* plain launches, capture, replay */
        memset(y, 0xff, sizeof y);
        if (tc_context_run(c) != TC_STATUS_OK) fail_msg("run: %s", tc_context_error(c));
        const float *w = want.data;
        double scale = 0;
        for (int64_t i = 0; i < 8 * batch; i++) scale = fmax(scale, fabs(w[i]));
        assert_true(scale > 0);
        for (int64_t i = 0; i < 8 * batch; i++)
            if (!(fabs(y[i] - w[i]) <= 2e-2 * scale))
                fail_msg("batch %lld element %lld: got %g, want %g", (long long)batch, (long long)i, (double)y[i],
                         (double)w[i]);
    }
    tc_tensor_free(&want);
    tc_tensor_free(&x);
}

static void test_chained_convolutions(void **state) {
    (void)state;
    tc__err perr = {0};
    if (tc__backend_find("cuda", &perr) == NULL) {
        print_message("CUDA not tested: %s\n", perr.msg);
        skip();
    }
    tc_model *m = chain_model();
    tc_input_range r = {.name = "x", .rank = 4, .min = {1, 8, 12, 12}, .opt = {2, 8, 12, 12}, .max = {4, 8, 12, 12}};
    tc_profile p = {1, &r};
    tc_build_options o = {.struct_size = sizeof o, .num_profiles = 1, .profiles = &p, .backend = "cuda",
                          .flags = TC_BUILD_FP16};
    tc_engine *e = NULL;
    tc_error err;
    if (tc_engine_build(m, &o, &e, &err)) fail_msg("cuda --fp16 build: %s", err.message);
    int convs = 0, chained = 0, pools = 0, pools_chained = 0;
    for (int k = 0; k < tc_engine_num_steps(e); k++) {
        tc_step_info si;
        assert_int_equal(tc_engine_step_info(e, k, &si), TC_STATUS_OK);
        print_message("%s (%s): %s %s %s\n", si.name, si.ops, si.tactic, si.precision, si.layout);
        if (strstr(si.ops, "MaxPool") != NULL) {
            pools++;
            assert_string_equal(si.tactic, "cuda_maxpool_nhwc16");
            pools_chained += strcmp(si.layout, "nhwc16") == 0;
        }
        if (strstr(si.ops, "Conv") == NULL) continue;
        convs++;
        assert_string_equal(si.tactic, "cuda_conv_fp16_cudnn");
        chained += strcmp(si.layout, "nhwc16") == 0;
    }
    assert_int_equal(convs, 5);
    assert_int_equal(chained, 5); /* every convolution writes an image (convD's for mp2) */
    assert_int_equal(pools, 3);
    assert_int_equal(pools_chained, 2); /* mp0 and mp1 write images; mp2 writes FP32 for the GlobalAveragePool */
    tc_context *c = NULL;
    assert_int_equal(tc_context_create(e, 0, &c, NULL), TC_STATUS_OK);
    run_batch(c, m, 2);
    run_batch(c, m, 3);
    run_batch(c, m, 1);
    tc_context_destroy(c);
    tc_engine_destroy(e);
    tc_model_destroy(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chained_convolutions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
