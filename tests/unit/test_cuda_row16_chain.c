/* test_cuda_row16_chain.c - FP16 row images between the CUDA FP16 dense layers, LayerNorms and attention
 * (engine/row16_chain.c): a transformer encoder layer (LayerNorm, Q/K/V projections (one step: merge_qkv), ONNX
 * Attention (causal), output projection with the residual, LayerNorm, a GELU feed-forward with the residual,
 * LayerNorm) built with --fp16 on the CUDA backend keeps its inner values as FP16 images (the graph output stays
 * FP32) and matches the reference within FP16's accuracy at several batch sizes of one dynamic profile, on plain
 * launches, the captured graph and its replays.
 * Skipped where there is no CUDA device. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "engine_test_model.h"

/* S = 72: the attention kernels' partial query-row blocks and a second, partial key tile */
enum { S = 72, E = 64, F = 128, HEADS = 4 };

static void dense(B *b, const char *name, const char *in, const char *w, int64_t k, int64_t n, const char *out) {
    char wn[64], bn[64], mm[64], mo[64], io[128];
    snprintf(wn, sizeof wn, "%s_w", name);
    snprintf(bn, sizeof bn, "%s_b", name);
    snprintf(mm, sizeof mm, "%s_mm", name);
    snprintf(mo, sizeof mo, "%s_mmo", name);
    etm_weight(b, wn, 2, (int64_t[]){k, n}, 0.0f);
    etm_weight(b, bn, 1, (int64_t[]){n}, 0.0f);
    snprintf(io, sizeof io, "%s,%s", in, wn);
    b_node(b, mm, "MatMul", io, mo);
    snprintf(io, sizeof io, "%s,%s", mo, bn);
    char an[64];
    snprintf(an, sizeof an, "%s_add", name);
    b_node(b, an, "Add", io, out);
    (void)w;
}

static void layernorm(B *b, const char *name, const char *in, const char *out) {
    char sn[64], bn[64], io[160];
    snprintf(sn, sizeof sn, "%s_scale", name);
    snprintf(bn, sizeof bn, "%s_bias", name);
    etm_weight(b, sn, 1, (int64_t[]){E}, 1.0f);
    etm_weight(b, bn, 1, (int64_t[]){E}, 0.0f);
    snprintf(io, sizeof io, "%s,%s,%s", in, sn, bn);
    b_node(b, name, "LayerNormalization", io, out);
}

static tc_model *layer_model(void) {
    etm_rng = 0x9E3779B97F4A7C15ull;
    B *b = b_new(23);
    b_input(b, b_vi(b, "x", 1, 3, (const char *[]){"batch", "72", "64"}));
    b_output(b, b_vi(b, "y", 1, 3, (const char *[]){"batch", "72", "64"}));
    layernorm(b, "ln0", "x", "h0");
    dense(b, "q", "h0", NULL, E, E, "q");
    dense(b, "k", "h0", NULL, E, E, "k");
    dense(b, "v", "h0", NULL, E, E, "v");
    Onnx__NodeProto *at = b_node(b, "attn", "Attention", "q,k,v", "att");
    Onnx__AttributeProto *qh = b_attr(b, at, "q_num_heads", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    qh->has_i = 1;
    qh->i = HEADS;
    Onnx__AttributeProto *kh = b_attr(b, at, "kv_num_heads", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    kh->has_i = 1;
    kh->i = HEADS;
    Onnx__AttributeProto *causal = b_attr(b, at, "is_causal", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    causal->has_i = 1;
    causal->i = 1;
    dense(b, "o", "att", NULL, E, E, "o");
    b_node(b, "res1", "Add", "o,h0", "r1");
    layernorm(b, "ln1", "r1", "h1");
    dense(b, "ff1", "h1", NULL, E, F, "f1");
    b_node(b, "gelu", "Gelu", "f1", "g1");
    dense(b, "ff2", "g1", NULL, F, E, "f2");
    b_node(b, "res2", "Add", "f2,h1", "r2");
    layernorm(b, "ln2", "r2", "y");
    return etm_load(b);
}

static void run_batch(tc_context *c, const tc_model *m, int64_t batch) {
    tc_tensor x;
    const int64_t dims[3] = {batch, S, E};
    assert_int_equal(tc_tensor_alloc(TC_DTYPE_FLOAT32, 3, dims, &x, NULL), TC_STATUS_OK);
    for (size_t i = 0; i < x.nbytes / 4; i++) ((float *)x.data)[i] = 2.0f * etm_uniform();
    tc_tensor want = etm_reference(m, &x);
    const int64_t n = batch * S * E;
    float *y = malloc(sizeof(float) * (size_t)n);
    assert_non_null(y);
    assert_int_equal(tc_context_set_input_shape(c, "x", 3, x.dims), TC_STATUS_OK);
    assert_int_equal(tc_context_set_tensor(c, "x", x.data, x.nbytes), TC_STATUS_OK);
    assert_int_equal(tc_context_set_tensor(c, "y", y, sizeof(float) * (size_t)n), TC_STATUS_OK);
    for (int r = 0; r < 3; r++) { /* plain launches, capture, replay */
        memset(y, 0xff, sizeof(float) * (size_t)n);
        if (tc_context_run(c) != TC_STATUS_OK) fail_msg("run: %s", tc_context_error(c));
        const float *w = want.data;
        double worst = 0, dot = 0, nw = 0, ny = 0;
        for (int64_t i = 0; i < n; i++) {
            const double d = fabs((double)y[i] - w[i]);
            if (!(d <= worst)) worst = d; /* NaN sticks */
            dot += (double)y[i] * w[i];
            nw += (double)w[i] * w[i];
            ny += (double)y[i] * y[i];
        }
        const double cosine = dot / sqrt(nw * ny + 1e-30);
        print_message("batch %lld run %d: max abs error %.3g, cosine %.6f\n", (long long)batch, r, worst, cosine);
        /* LayerNorm outputs are O(1): FP16 images (10-bit mantissa) through three layers stay within a few 1e-2 */
        if (!(worst <= 6e-2) || !(cosine >= 0.9995))
            fail_msg("batch %lld: max abs error %g, cosine %g against the reference", (long long)batch, worst, cosine);
    }
    free(y);
    tc_tensor_free(&want);
    tc_tensor_free(&x);
}

static void test_chained_encoder_layer(void **state) {
    (void)state;
    tc__err perr = {0};
    if (tc__backend_find("cuda", &perr) == NULL) {
        print_message("CUDA not tested: %s\n", perr.msg);
        skip();
    }
    tc_model *m = layer_model();
    tc_input_range r = {.name = "x", .rank = 3, .min = {1, S, E}, .opt = {2, S, E}, .max = {3, S, E}};
    tc_profile p = {1, &r};
    /* untimed (the first tactic that takes a step: the FP16 ones for the marked layers), so that the chain does not
     * depend on which precision wins at these small sizes */
    tc_build_options o = {.struct_size = sizeof o, .num_profiles = 1, .profiles = &p, .backend = "cuda",
                          .flags = TC_BUILD_FP16 | TC_BUILD_TACTICS_FIXED};
    tc_engine *e = NULL;
    tc_error err;
    if (tc_engine_build(m, &o, &e, &err)) fail_msg("cuda --fp16 build: %s", err.message);
    int chained = 0, ln_chained = 0, attn_chained = 0, qkv_merged = 0;
    for (int k = 0; k < tc_engine_num_steps(e); k++) {
        tc_step_info si;
        assert_int_equal(tc_engine_step_info(e, k, &si), TC_STATUS_OK);
        print_message("%s (%s): %s %s %s\n", si.name, si.ops, si.tactic, si.precision, si.layout);
        const bool row16 = strcmp(si.layout, "row16") == 0;
        chained += row16;
        if (strstr(si.ops, "LayerNormalization") != NULL) ln_chained += row16;
        if (strstr(si.ops, "Attention") != NULL) attn_chained += row16;
        if (strstr(si.ops, "MatMul+Add+MatMul+Add+MatMul+Add") != NULL) qkv_merged += row16; /* merge_qkv */
        /* a GELU fused into ff1 writes an FP16 image: cuBLASLt's GELU_BIAS epilogue runs (checked by the outputs) */
        if (strstr(si.ops, "MatMul") != NULL && strstr(si.ops, "Gelu") != NULL) assert_true(row16);
        if (strcmp(si.output, "y") == 0) assert_false(row16); /* a graph output stays FP32 */
    }
    assert_int_equal(ln_chained, 2);   /* ln0, ln1 (ln2 writes the graph output) */
    assert_int_equal(attn_chained, 1); /* read by the output projection */
    assert_int_equal(qkv_merged, 1);   /* q, k and v in one step, read by the attention as packed Q|K|V */
    assert_true(chained >= 6);         /* + qkv, o, ff2 at least (ff1's GELU may be a step of its own) */
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
        cmocka_unit_test(test_chained_encoder_layer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
