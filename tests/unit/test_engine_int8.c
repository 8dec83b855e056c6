/*
 * test_engine_int8.c - INT8 end to end through the public API: a small CNN with a classifier is
 * calibrated (tc_calibrator, all three methods) on random samples, built with TC_BUILD_INT8 (heuristic
 * and tuned tactics, with and without the layout pass, 1 and 2 threads), saved and loaded, and run:
 * its outputs must stay close to the FP32 reference (cosine and a bound relative to the output's
 * range). Also: heuristic builds run the convolutions and the classifier in INT8, FP32 layers named in
 * the build options stay FP32, and bad calibration input (no cache, another model's cache, an unknown
 * layer, samples of the wrong count or shape, saving before any sample) is refused with a reason.
 * The reduced-precision chain (consecutive INT8, FP16 or BF16 convolutions hand each other their input
 * images) gives outputs bit-identical to the unchained engine's, also across the AVX2 variants and through a
 * depthwise layer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/cpu.h"
#include "core/quant_attr.h"
#include "engine/engine.h"
#include "int8_test_model.h"
#include "plan_test_util.h"

#define SAMPLES 32

static bool have_vnni(void) { return (tc__cpu_get()->isa & TC__ISA_AVX512VNNI) != 0; }
/* An INT8 tactic runs here: VNNI, or the AVX2 variant. */
static bool have_int8(void) {
    const uint64_t avx2 = (uint64_t)(TC__ISA_AVX2 | TC__ISA_FMA);
    return have_vnni() || (tc__cpu_get()->isa & avx2) == avx2;
}

/* Calibrates m on SAMPLES random inputs and writes the cache to path by method. */
static void calibrate(const tc_model *m, tc_calib_method method, const char *path) {
    tc_calibrator *c = NULL;
    tc_error err;
    assert_int_equal(tc_calibrator_create(m, &c, &err), TC_STATUS_OK);
    const char *names[1] = {"x"};
    for (int s = 0; s < SAMPLES; s++) {
        tc_tensor x = itm_input();
        if (tc_calibrator_add(c, 1, names, &x, &err)) fail_msg("calibrate: %s", err.message);
        tc_tensor_free(&x);
    }
    assert_int_equal(tc_calibrator_num_samples(c), SAMPLES);
    assert_int_equal(tc_calibrator_num_tensors(c), 4); /* x, r1, r2, f */
    for (int i = 0; i < tc_calibrator_num_tensors(c); i++) {
        tc_calib_tensor_info a, b, p;
        assert_int_equal(tc_calibrator_tensor(c, i, TC_CALIB_MINMAX, 0, &a, &err), TC_STATUS_OK);
        assert_int_equal(tc_calibrator_tensor(c, i, TC_CALIB_ENTROPY, 0, &b, &err), TC_STATUS_OK);
        assert_int_equal(tc_calibrator_tensor(c, i, TC_CALIB_PERCENTILE, 99.9, &p, &err), TC_STATUS_OK);
        const char *name = a.name;
        const double mm = a.amax, ent = b.amax, pct = p.amax;
        /* Each tensor is read by one layer here; SQNR is finite and positive for an INT8 range. */
        assert_int_equal(a.num_layers, 1);
        const char *reader = strcmp(name, "x") == 0 ? "stem" : strcmp(name, "r1") == 0 ? "mid"
                             : strcmp(name, "r2") == 0 ? "proj" : "classifier";
        assert_string_equal(a.layers[0], reader);
        assert_true(a.sqnr_db > 20.0 && a.sqnr_db < 80.0 && b.sqnr_db > 20.0);
        assert_true(mm > 0 && ent > 0 && pct > 0 && ent <= mm * 1.0001 && pct <= mm * 1.0001);
        if (strcmp(name, "x") == 0) assert_true(mm <= 2.0 && mm > 1.9); /* inputs uniform in [-2, 2) */
        if (getenv("TC_TEST_VERBOSE")) printf("%s minmax %g entropy %g p99.9 %g\n", name, mm, ent, pct);
    }
    if (tc_calibrator_save(c, method, 99.99, path, &err)) fail_msg("save: %s", err.message);
    /* unknown export flags are refused before anything is read or written */
    assert_int_equal(tc_calibrator_export_qdq_flags(c, method, 99.99, "/nonexistent.onnx", "/nonexistent.qdq.onnx",
                                                    TC_EXPORT_QDQ_REDUCE_RANGE << 1, &err),
                     TC_STATUS_INVALID_ARGUMENT);
    tc_calibrator_destroy(c);
}

static tc_engine *build_int8(const tc_model *m, const char *cache, uint32_t flags, uint32_t disabled, int threads,
                             int n_fp32, const char *const *fp32) {
    tc_build_options o = {.struct_size = sizeof o, .threads = threads, .disabled_passes = disabled,
                          .flags = flags | TC_BUILD_INT8, .calib_cache = cache, .num_fp32_layers = n_fp32,
                          .fp32_layers = fp32};
    tc_engine *e = NULL;
    tc_error err;
    if (tc_engine_build(m, &o, &e, &err)) fail_msg("int8 build: %s", err.message);
    return e;
}

/* Precision of the step named name ("" when absent). */
static const char *step_precision(const tc_engine *e, const char *name) {
    for (int k = 0; k < tc_engine_num_steps(e); k++) {
        tc_step_info si;
        assert_int_equal(tc_engine_step_info(e, k, &si), TC_STATUS_OK);
        if (strcmp(si.name, name) == 0) return si.precision;
    }
    return "";
}

/* Ops (what = 0) or tactic (what = 1) of the step named name ("" when absent). */
static const char *step_field(const tc_engine *e, const char *name, int what) {
    for (int k = 0; k < tc_engine_num_steps(e); k++) {
        tc_step_info si;
        assert_int_equal(tc_engine_step_info(e, k, &si), TC_STATUS_OK);
        if (strcmp(si.name, name) == 0) return what ? si.tactic : si.ops;
    }
    return "";
}
static const char *step_ops(const tc_engine *e, const char *name) { return step_field(e, name, 0); }

/* Without VNNI, step name of e must run the AVX2 tactic want (the u7 variant where its input is non-negative). */
static void expect_avx2_tactic(const tc_engine *e, const char *name, const char *want) {
    if (!have_vnni() && strcmp(step_field(e, name, 1), want) != 0)
        fail_msg("%s runs %s, not %s", name, step_field(e, name, 1), want);
}

/* Runs e on x; y must be close to want: cosine >= 0.995 and every element within 5% of the output's range. */
static void check_close(const tc_engine *e, const tc_tensor *x, const tc_tensor *want, const char *what) {
    tc_context *ctx = NULL;
    assert_int_equal(tc_context_create(e, 0, &ctx, NULL), TC_STATUS_OK);
    assert_int_equal(tc_context_set_tensor(ctx, "x", x->data, x->nbytes), TC_STATUS_OK);
    if (tc_context_run(ctx) != TC_STATUS_OK) fail_msg("%s: run: %s", what, tc_context_error(ctx));
    tc_tensor got;
    assert_int_equal(tc_context_tensor(ctx, "y", &got), TC_STATUS_OK);
    assert_int_equal(got.nbytes, want->nbytes);
    const float *g = got.data, *w = want->data;
    double dot = 0, gg = 0, ww = 0, range = 0;
    for (size_t i = 0; i < want->nbytes / 4; i++) {
        dot += (double)g[i] * w[i], gg += (double)g[i] * g[i], ww += (double)w[i] * w[i];
        range = fmax(range, fabs(w[i]));
    }
    const double cosine = dot / sqrt(gg * ww);
    if (!(cosine >= 0.995)) fail_msg("%s: cosine %.6f", what, cosine);
    size_t bad = SIZE_MAX;
    for (size_t i = 0; i < want->nbytes / 4; i++) {
        if (getenv("TC_TEST_VERBOSE")) printf("%zu %g %g\n", i, (double)g[i], (double)w[i]);
        if (fabs(g[i] - w[i]) > 0.05 * range && bad == SIZE_MAX) bad = i;
    }
    if (bad != SIZE_MAX) fail_msg("%s: y[%zu] = %g, want %g", what, bad, (double)g[bad], (double)w[bad]);
    tc_context_destroy(ctx);
}

static void temp_path(char *buf, size_t size, const char *what) {
    snprintf(buf, size, "/tmp/tc_test_int8_%d_%s", (int)getpid(), what);
}

static void test_int8_end_to_end(void **state) {
    (void)state;
    if (!have_int8()) skip();
    tc_model *m = itm_model(0x1234);
    char cache[128], plan[128];
    temp_path(cache, sizeof cache, "cache");
    temp_path(plan, sizeof plan, "plan");
    const tc_calib_method methods[3] = {TC_CALIB_ENTROPY, TC_CALIB_MINMAX, TC_CALIB_PERCENTILE};
    tc_tensor x = itm_input(), want;
    const char *names[1] = {"x"};
    tc_error err;
    if (tc_model_run_reference(m, 1, names, &x, &want, &err)) fail_msg("reference: %s", err.message);
    for (int mi = 0; mi < 3; mi++) {
        calibrate(m, methods[mi], cache);
        for (int threads = 1; threads <= 2; threads++) {
            char what[96];
            snprintf(what, sizeof what, "method %d, %d thread(s)", mi, threads);
            tc_engine *e = build_int8(m, cache, TC_BUILD_TACTICS_FIXED, 0, threads, 0, NULL);
            assert_string_equal(step_precision(e, "mid"), "int8");
            assert_string_equal(step_precision(e, "proj"), "int8");
            assert_string_equal(step_precision(e, "stem"), "int8");
            assert_string_equal(step_precision(e, "classifier"), "int8");
            check_close(e, &x, &want, what);
            /* The plan keeps the INT8 steps. */
            assert_int_equal(tc_engine_save(e, plan, &err), TC_STATUS_OK);
            tc_engine_destroy(e);
            assert_int_equal(tc_engine_load(plan, &e, &err), TC_STATUS_OK);
            assert_string_equal(step_precision(e, "mid"), "int8");
            check_close(e, &x, &want, what);
            tc_engine_destroy(e);
            e = build_int8(m, cache, 0, 0, threads, 0, NULL); /* tuned: INT8 or FP32 per layer */
            check_close(e, &x, &want, what);
            tc_engine_destroy(e);
            e = build_int8(m, cache, TC_BUILD_TACTICS_FIXED, TC_PASS_LAYOUT, threads, 0, NULL);
            assert_string_equal(step_precision(e, "mid"), "int8");
            check_close(e, &x, &want, what);
            tc_engine_destroy(e);
        }
    }
    /* FP32 layers by name. */
    const char *fp32[2] = {"mid", "classifier"};
    tc_engine *e = build_int8(m, cache, TC_BUILD_TACTICS_FIXED, 0, 1, 2, fp32);
    assert_string_equal(step_precision(e, "mid"), "fp32");
    assert_string_equal(step_precision(e, "classifier"), "fp32");
    assert_string_equal(step_precision(e, "proj"), "int8");
    check_close(e, &x, &want, "fp32 layers");
    tc_engine_destroy(e);
    unlink(cache);
    unlink(plan);
    tc_tensor_free(&x);
    tc_tensor_free(&want);
    tc_model_destroy(m);
}

static void expect_build_error(const tc_model *m, const char *cache, int n_fp32, const char *const *fp32,
                               const char *needle) {
    tc_build_options o = {.struct_size = sizeof o, .flags = TC_BUILD_INT8 | TC_BUILD_TACTICS_FIXED,
                          .calib_cache = cache, .num_fp32_layers = n_fp32, .fp32_layers = fp32};
    tc_engine *e = NULL;
    tc_error err;
    assert_int_not_equal(tc_engine_build(m, &o, &e, &err), TC_STATUS_OK);
    assert_null(e);
    if (strstr(err.message, needle) == NULL) fail_msg("error '%s' lacks '%s'", err.message, needle);
}

static void test_int8_errors(void **state) {
    (void)state;
    tc_model *m = itm_model(0x1234), *other = itm_model(0x9999);
    char cache[128];
    temp_path(cache, sizeof cache, "cache_err");
    tc_calibrator *c = NULL;
    tc_error err;
    assert_int_equal(tc_calibrator_create(m, &c, &err), TC_STATUS_OK);
    /* Nothing observed yet. */
    assert_int_not_equal(tc_calibrator_save(c, TC_CALIB_ENTROPY, 0, cache, &err), TC_STATUS_OK);
    assert_non_null(strstr(err.message, "no calibration samples"));
    tc_tensor x = itm_input();
    const char *names[2] = {"x", "x2"};
    assert_int_not_equal(tc_calibrator_add(c, 2, names, &x, &err), TC_STATUS_OK); /* 2 inputs for a 1-input model */
    assert_int_equal(tc_calibrator_add(c, 1, names, &x, &err), TC_STATUS_OK);
    tc_tensor small;
    assert_int_equal(tc_tensor_alloc(TC_DTYPE_FLOAT32, 4, (int64_t[]){1, 3, HW - 1, HW}, &small, NULL), TC_STATUS_OK);
    ((float *)small.data)[0] = 1.0f;
    /* Another shape where the model fixes it: refused with the model's reason; the calibrator goes on. */
    for (size_t k = 0; k < small.nbytes / 4; k++) ((float *)small.data)[k] = etm_uniform();
    assert_int_not_equal(tc_calibrator_add(c, 1, names, &small, &err), TC_STATUS_OK);
    assert_non_null(strstr(err.message, "fixed at"));
    assert_int_equal(tc_calibrator_add(c, 1, names, &x, &err), TC_STATUS_OK);
    tc_tensor wrong;
    assert_int_equal(tc_tensor_alloc(TC_DTYPE_FLOAT32, 3, (int64_t[]){1, 3, HW}, &wrong, NULL), TC_STATUS_OK);
    assert_int_not_equal(tc_calibrator_add(c, 1, names, &wrong, &err), TC_STATUS_OK); /* wrong rank: refused */
    assert_non_null(strstr(err.message, "rank"));
    assert_int_equal(tc_calibrator_num_samples(c), 2);
    tc_tensor_free(&wrong);
    assert_int_not_equal(tc_calibrator_save(c, TC_CALIB_PERCENTILE, 0.0, cache, &err), TC_STATUS_OK);
    assert_int_equal(tc_calibrator_save(c, TC_CALIB_ENTROPY, 0, cache, &err), TC_STATUS_OK);
    tc_calibrator_destroy(c);
    expect_build_error(m, NULL, 0, NULL, "calibration cache");
    expect_build_error(other, cache, 0, NULL, "fingerprint"); /* the cache of another model */
    const char *bad[1] = {"no_such_layer"};
    expect_build_error(m, cache, 1, bad, "no_such_layer");
    expect_build_error(m, "/nonexistent/dir/cache", 0, NULL, "/nonexistent/dir/cache");
    unlink(cache);
    tc_tensor_free(&small);
    tc_tensor_free(&x);
    tc_model_destroy(other);
    tc_model_destroy(m);
}

/* The output y of engine e on x (a copy). */
static tc_tensor run_copy(const tc_engine *e, const tc_tensor *x) {
    tc_context *ctx = NULL;
    assert_int_equal(tc_context_create(e, 0, &ctx, NULL), TC_STATUS_OK);
    assert_int_equal(tc_context_set_tensor(ctx, "x", x->data, x->nbytes), TC_STATUS_OK);
    assert_int_equal(tc_context_run(ctx), TC_STATUS_OK);
    tc_tensor y, copy;
    assert_int_equal(tc_context_tensor(ctx, "y", &y), TC_STATUS_OK);
    assert_int_equal(tc_tensor_alloc(y.dtype, y.rank, y.dims, &copy, NULL), TC_STATUS_OK);
    memcpy(copy.data, y.data, y.nbytes);
    tc_context_destroy(ctx);
    return copy;
}

/* True when the engine's node `name` has attribute attr. */
static bool node_has(const tc_engine *e, const char *name, const char *attr) {
    for (int k = 0; k < e->g->n_nodes; k++)
        if (strcmp(e->g->nodes[k].name, name) == 0) return tc__attr_has(&e->g->nodes[k].attrs, attr);
    return false;
}

/* Consecutive INT8 convolutions (mid -> proj: proj is the only reader of mid's output) hand u8 images to
 * each other: mid writes proj's input image, proj skips its quantization pass. The outputs equal the
 * unchained engine's bit for bit (same codes), in both layouts, with 1 and 2 threads, and after a plan
 * round trip; stem's output has two readers (mid and the residual Add) and is not chained (without residual
 * images: test_residual_image_chain). The same holds for
 * the AVX2 variant's 16-bit images on CPUs without VNNI (tests/cli/test_int8.sh covers it on VNNI CPUs). */
static void test_int8_chain(void **state) {
    (void)state;
    if (!have_int8()) skip(); /* VNNI: u8 codes; the AVX2 variant: 16-bit centred codes */
    tc_model *m = itm_model(0x777);
    char cache[128], plan[128];
    temp_path(cache, sizeof cache, "chain_cache");
    temp_path(plan, sizeof plan, "chain_plan");
    calibrate(m, TC_CALIB_MINMAX, cache);
    tc_tensor x = itm_input();
    tc_error err;
    for (int layout = 0; layout < 2; layout++)
        for (int threads = 1; threads <= 2; threads++) {
            const uint32_t off = layout ? 0 : TC_PASS_LAYOUT;
            tc_engine *plain = build_int8(m, cache, TC_BUILD_TACTICS_FIXED, off | TC_PASS_LOWP_CHAIN, threads, 0, NULL);
            /* (residual images, which quantize the residual, have their own test) */
            tc_engine *chained =
                build_int8(m, cache, TC_BUILD_TACTICS_FIXED, off | TC_PASS_INT8_RESIDUAL_IMAGE, threads, 0, NULL);
            assert_false(node_has(plain, "mid", TC__ATTR_INT8_OUT_IMAGE));
            assert_true(node_has(chained, "mid", TC__ATTR_INT8_OUT_IMAGE));
            assert_true(node_has(chained, "proj", TC__ATTR_INT8_IN_IMAGE));
            assert_false(node_has(chained, "stem", TC__ATTR_INT8_OUT_IMAGE));
            /* the precision pass marks the layers whose input cannot be negative: after a Relu, or a Relu pooled
             * and flattened (classifier); not the stem, which reads the graph input */
            assert_false(node_has(chained, "stem", TC__ATTR_INT8_NONNEG));
            assert_true(node_has(chained, "mid", TC__ATTR_INT8_NONNEG));
            assert_true(node_has(chained, "proj", TC__ATTR_INT8_NONNEG));
            assert_true(node_has(chained, "classifier", TC__ATTR_INT8_NONNEG));
            expect_avx2_tactic(chained, "stem", "conv_int8_avx2");
            expect_avx2_tactic(chained, "mid", "conv_int8_u7_avx2");
            expect_avx2_tactic(chained, "proj", "conv_int8_u7_avx2");
            tc_tensor a = run_copy(plain, &x), b = run_copy(chained, &x);
            if (memcmp(a.data, b.data, a.nbytes) != 0) fail_msg("layout %d, %d thread(s): chained output differs", layout, threads);
            assert_int_equal(tc_engine_save(chained, plan, &err), TC_STATUS_OK);
            tc_engine_destroy(chained);
            assert_int_equal(tc_engine_load(plan, &chained, &err), TC_STATUS_OK);
            tc_tensor c = run_copy(chained, &x);
            if (memcmp(a.data, c.data, a.nbytes) != 0) fail_msg("layout %d: the loaded chained plan differs", layout);
            tc_tensor_free(&a), tc_tensor_free(&b), tc_tensor_free(&c);
            tc_engine_destroy(plain);
            tc_engine_destroy(chained);
        }
    unlink(cache);
    unlink(plan);
    tc_tensor_free(&x);
    tc_model_destroy(m);
}

/* The FP16 and BF16 chain: mid writes proj's 16-bit input image; outputs bit-identical to the unchained
 * engine's, in both layouts, with 1 and 2 threads. */
static void test_half_chain(void **state) {
    (void)state;
    tc_model *m = itm_model(0x999);
    tc_tensor x = itm_input();
    const struct {
        uint32_t flag;
        uint64_t isa;
    } kinds[2] = {{TC_BUILD_FP16, TC__ISA_AVX512FP16}, {TC_BUILD_BF16, TC__ISA_AVX512BF16}};
    for (int kind = 0; kind < 2; kind++) {
        if (!(tc__cpu_get()->isa & kinds[kind].isa)) continue;
        for (int layout = 0; layout < 2; layout++)
            for (int threads = 1; threads <= 2; threads++) {
                tc_build_options o = {.struct_size = sizeof o, .threads = threads,
                                      .flags = kinds[kind].flag | TC_BUILD_TACTICS_FIXED,
                                      .disabled_passes = layout ? 0 : TC_PASS_LAYOUT};
                tc_engine *chained = NULL, *plain = NULL;
                tc_error err;
                if (tc_engine_build(m, &o, &chained, &err)) fail_msg("build: %s", err.message);
                o.disabled_passes |= TC_PASS_LOWP_CHAIN;
                if (tc_engine_build(m, &o, &plain, &err)) fail_msg("build: %s", err.message);
                assert_true(node_has(chained, "mid", TC__ATTR_HALF_OUT_IMAGE));
                assert_true(node_has(chained, "proj", TC__ATTR_HALF_IN_IMAGE));
                assert_false(node_has(plain, "mid", TC__ATTR_HALF_OUT_IMAGE));
                tc_tensor a = run_copy(plain, &x), b = run_copy(chained, &x);
                if (memcmp(a.data, b.data, a.nbytes) != 0)
                    fail_msg("%s, layout %d, %d thread(s): chained output differs", kind ? "bf16" : "fp16", layout, threads);
                tc_tensor_free(&a), tc_tensor_free(&b);
                tc_engine_destroy(plain);
                tc_engine_destroy(chained);
            }
    }
    tc_tensor_free(&x);
    tc_model_destroy(m);
}

/* Runs both engines on x; their outputs must be the same bits (what names the case); destroys both. */
static void expect_same_and_destroy(tc_engine *plain, tc_engine *chained, const tc_tensor *x, const char *what) {
    tc_tensor a = run_copy(plain, x), b = run_copy(chained, x);
    if (memcmp(a.data, b.data, a.nbytes) != 0) fail_msg("%s: chained output differs", what);
    tc_tensor_free(&a), tc_tensor_free(&b);
    tc_engine_destroy(plain);
    tc_engine_destroy(chained);
}

/* Step name of e runs tactic want. */
static void expect_tactic(const tc_engine *e, const char *name, const char *want, const char *what) {
    if (strcmp(step_field(e, name, 1), want) != 0) fail_msg("%s: %s runs %s, not %s", what, name, step_field(e, name, 1), want);
}

/* With AMX (or its emulation, `make emulated`) the AMX tactics take the layers whose kernel rows are at least 64 bytes,
 * after matching their VNNI / AVX512-BF16 twins on this machine (tactic.h's proof), chained or not: with 64 channels
 * the INT8 rows are 64 (1x1, MatMul) and 192 bytes (3x3), the BF16 ones twice that; with 80 channels they end in a
 * shorter chunk (INT8 80 and 240 bytes, BF16 160 and 480); the stem (3 channels: 12-byte rows) stays with the twin.
 * Outputs close to the reference; chained bit-identical to unchained (without residual images); with the stem's output
 * as proj's residual image (the AMX epilogue reading u8 codes, BF16 values) close to the reference too. */
static void test_amx_chosen(void **state) {
    (void)state;
    const uint64_t isa = tc__cpu_get()->isa;
    if (!(isa & (TC__ISA_AMX_INT8 | TC__ISA_AMX_BF16))) skip();
    for (int64_t ch = 64; ch <= 80; ch += 16) {
        tc_model *m = itm_model_ch(0xa3 + (uint64_t)ch, ch);
        char cache[128];
        temp_path(cache, sizeof cache, "amx_cache");
        calibrate(m, TC_CALIB_MINMAX, cache);
        tc_tensor x = itm_input(), want;
        const char *names[1] = {"x"};
        tc_error err;
        if (tc_model_run_reference(m, 1, names, &x, &want, &err)) fail_msg("reference: %s", err.message);
        const struct {
            uint32_t flag;
            uint64_t isa;
            const char *conv[2], *matmul;
        } kinds[2] = {{TC_BUILD_INT8, TC__ISA_AMX_INT8, {"conv_int8_amx", "conv_nchw16c_int8_amx"}, "matmul_int8_amx"},
                      {TC_BUILD_BF16, TC__ISA_AMX_BF16, {"conv_bf16_amx", "conv_nchw16c_bf16_amx"}, "matmul_bf16_amx"}};
        for (int kind = 0; kind < 2; kind++) {
            if (!(isa & kinds[kind].isa)) continue;
            for (int layout = 0; layout < 2; layout++) {
                char what[64];
                snprintf(what, sizeof what, "%s, layout %d, %d channels", kind ? "bf16" : "int8", layout, (int)ch);
                /* (the residual image, which quantizes (rounds) the stem's output that proj adds, checked apart) */
                tc_build_options o = {.struct_size = sizeof o, .threads = 2,
                                      .flags = kinds[kind].flag | TC_BUILD_TACTICS_FIXED,
                                      .calib_cache = kind == 0 ? cache : NULL,
                                      .disabled_passes = layout ? 0 : TC_PASS_LAYOUT};
                tc_engine *chained = NULL, *plain = NULL;
                if (tc_engine_build(m, &o, &chained, &err)) fail_msg("%s: build: %s", what, err.message);
                expect_tactic(chained, "proj", kinds[kind].conv[layout], what);
                if (!node_has(chained, "proj", kind == 0 ? TC__ATTR_INT8_RES_IMAGE : TC__ATTR_HALF_RES_IMAGE))
                    fail_msg("%s: no residual image", what);
                check_close(chained, &x, &want, what);
                tc_engine_destroy(chained);
                o.disabled_passes |= kind == 0 ? TC_PASS_INT8_RESIDUAL_IMAGE : TC_PASS_HALF_RESIDUAL_IMAGE;
                if (tc_engine_build(m, &o, &chained, &err)) fail_msg("%s: build: %s", what, err.message);
                o.disabled_passes |= TC_PASS_LOWP_CHAIN;
                if (tc_engine_build(m, &o, &plain, &err)) fail_msg("%s: build: %s", what, err.message);
                const tc_engine *both[2] = {plain, chained};
                for (int e = 0; e < 2; e++) {
                    expect_tactic(both[e], "mid", kinds[kind].conv[layout], what);
                    expect_tactic(both[e], "proj", kinds[kind].conv[layout], what);
                    expect_tactic(both[e], "classifier", kinds[kind].matmul, what);
                    if (strstr(step_field(both[e], "stem", 1), "_amx") != NULL) fail_msg("%s: the stem runs AMX", what);
                }
                check_close(chained, &x, &want, what);
                expect_same_and_destroy(plain, chained, &x, what);
            }
        }
        unlink(cache);
        tc_tensor_free(&x), tc_tensor_free(&want);
        tc_model_destroy(m);
    }
}

/* Calibrates m (one input, "x") on 4 copies of x and writes a min-max cache to path. */
static void calibrate_on(const tc_model *m, const tc_tensor *x, const char *path) {
    tc_calibrator *cal = NULL;
    tc_error err;
    assert_int_equal(tc_calibrator_create(m, &cal, &err), TC_STATUS_OK);
    const char *names[1] = {"x"};
    for (int s = 0; s < 4; s++) assert_int_equal(tc_calibrator_add(cal, 1, names, x, &err), TC_STATUS_OK);
    assert_int_equal(tc_calibrator_save(cal, TC_CALIB_MINMAX, 0, path, &err), TC_STATUS_OK);
    tc_calibrator_destroy(cal);
}

/* x[1, c, h, w] uniform in [-1, 1), and a min-max calibration cache of m on it at a temp path named after tag. */
static tc_tensor calibrated_input(const tc_model *m, int64_t c, int64_t h, int64_t w, char *cache, size_t size,
                                  const char *tag) {
    tc_tensor x;
    assert_int_equal(tc_tensor_alloc(TC_DTYPE_FLOAT32, 4, (int64_t[]){1, c, h, w}, &x, NULL), TC_STATUS_OK);
    for (size_t k = 0; k < x.nbytes / 4; k++) ((float *)x.data)[k] = 2.0f * etm_uniform() - 1.0f;
    temp_path(cache, size, tag);
    calibrate_on(m, &x, cache);
    return x;
}

/* x[1,6,20] -> q, k, v = x.Wq, x.Wk, x.Wv [1,6,16] -> scores = q.k^T (Transpose [0,2,1]) [1,6,6] -> Softmax ->
 * y = scores.v [1,6,16]: attention's two MatMuls of run-time operands. */
static tc_model *attention_model(void) {
    etm_rng = 0xa77e;
    B *b = b_new(17);
    b_input(b, b_vi(b, "x", 1, 3, (const char *[]){"1", "6", "20"}));
    b_output(b, b_vi(b, "y", 1, 3, (const char *[]){"1", "6", "16"}));
    etm_weight(b, "wq", 2, (int64_t[]){20, 16}, 0.0f);
    etm_weight(b, "wk", 2, (int64_t[]){20, 16}, 0.0f);
    etm_weight(b, "wv", 2, (int64_t[]){20, 16}, 0.0f);
    b_node(b, "q", "MatMul", "x,wq", "q");
    b_node(b, "k", "MatMul", "x,wk", "k");
    b_node(b, "v", "MatMul", "x,wv", "v");
    Onnx__NodeProto *t = b_node(b, "kt", "Transpose", "k", "kt");
    Onnx__AttributeProto *a = b_attr(b, t, "perm", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->n_ints = 3;
    a->ints = b_dup(b, (int64_t[]){0, 2, 1}, sizeof(int64_t) * 3);
    b_node(b, "scores", "MatMul", "q,kt", "s");
    b_node(b, "softmax", "Softmax", "s", "p");
    b_node(b, "ctx", "MatMul", "p,v", "y");
    return etm_load(b);
}

/* --bf16 gives attention's MatMuls of run-time operands the BF16 tactic (--tactics-fixed: the first that takes them),
 * with K^T read through its view; the output stays close to the FP32 engine's, with 1 and 2 threads. Without --bf16
 * they stay FP32. */
static void test_bf16_attention(void **state) {
    (void)state;
    if (!(tc__cpu_get()->isa & TC__ISA_AVX512BF16)) skip();
    tc_model *m = attention_model();
    tc_tensor x;
    assert_int_equal(tc_tensor_alloc(TC_DTYPE_FLOAT32, 3, (int64_t[]){1, 6, 20}, &x, NULL), TC_STATUS_OK);
    for (size_t i = 0; i < x.nbytes / 4; i++) ((float *)x.data)[i] = 2.0f * etm_uniform();
    tc_build_options o = {.struct_size = sizeof o, .threads = 1, .flags = TC_BUILD_TACTICS_FIXED};
    tc_engine *fp32 = NULL;
    tc_error err;
    if (tc_engine_build(m, &o, &fp32, &err)) fail_msg("build: %s", err.message);
    assert_string_equal(step_precision(fp32, "scores"), "fp32");
    tc_tensor want = run_copy(fp32, &x);
    for (int threads = 1; threads <= 2; threads++) {
        o.threads = threads;
        o.flags = TC_BUILD_BF16 | TC_BUILD_TACTICS_FIXED;
        tc_engine *e = NULL;
        if (tc_engine_build(m, &o, &e, &err)) fail_msg("build: %s", err.message);
        expect_tactic(e, "scores", "matmul_dyn_bf16_avx512bf16", "Q.K^T");
        expect_tactic(e, "ctx", "matmul_dyn_bf16_avx512bf16", "P.V");
        assert_string_equal(step_precision(e, "scores"), "bf16");
        check_close(e, &x, &want, "bf16 attention");
        tc_engine_destroy(e);
    }
    tc_tensor_free(&want);
    tc_tensor_free(&x);
    tc_engine_destroy(fp32);
    tc_model_destroy(m);
}

/* x[1,6,20] -> Relu -> MatMul [20,48] -> Relu -> MatMul [48,16] -> y[1,6,16]: a feed-forward pair (both inputs
 * non-negative: on AVX2 the u7 variant). */
static tc_model *mlp_model(void) {
    etm_rng = 0x5151;
    B *b = b_new(17);
    b_input(b, b_vi(b, "x", 1, 3, (const char *[]){"1", "6", "20"}));
    b_output(b, b_vi(b, "y", 1, 3, (const char *[]){"1", "6", "16"}));
    etm_weight(b, "fc1", 2, (int64_t[]){20, 48}, 0.0f);
    etm_weight(b, "fc2", 2, (int64_t[]){48, 16}, 0.0f);
    b_node(b, "in_relu", "Relu", "x", "xr");
    b_node(b, "ffn1", "MatMul", "xr,fc1", "h");
    b_node(b, "ffn1_relu", "Relu", "h", "hr");
    b_node(b, "ffn2", "MatMul", "hr,fc2", "y");
    return etm_load(b);
}

/* The chain between two MatMuls (the image is the rows): INT8 (calibrated), FP16 and BF16, bit-identical to
 * the unchained engines. */
static void test_dense_chain(void **state) {
    (void)state;
    tc_model *m = mlp_model();
    tc_tensor x;
    assert_int_equal(tc_tensor_alloc(TC_DTYPE_FLOAT32, 3, (int64_t[]){1, 6, 20}, &x, NULL), TC_STATUS_OK);
    for (size_t k = 0; k < x.nbytes / 4; k++) ((float *)x.data)[k] = 2.0f * etm_uniform();
    char cache[128];
    temp_path(cache, sizeof cache, "mlp_cache");
    calibrate_on(m, &x, cache);
    tc_error err;
    const struct {
        uint32_t flag;
        uint64_t isa;
        const char *attr;
    } kinds[3] = {{TC_BUILD_INT8, TC__ISA_AVX512VNNI, TC__ATTR_INT8_OUT_IMAGE},
                  {TC_BUILD_FP16, TC__ISA_AVX512FP16, TC__ATTR_HALF_OUT_IMAGE},
                  {TC_BUILD_BF16, TC__ISA_AVX512BF16, TC__ATTR_HALF_OUT_IMAGE}};
    for (int kind = 0; kind < 3; kind++) {
        if (kind == 0 ? !have_int8() : !(tc__cpu_get()->isa & kinds[kind].isa)) continue;
        tc_build_options o = {.struct_size = sizeof o, .threads = 2, .flags = kinds[kind].flag | TC_BUILD_TACTICS_FIXED,
                              .calib_cache = cache};
        tc_engine *chained = NULL, *plain = NULL;
        if (tc_engine_build(m, &o, &chained, &err)) fail_msg("build: %s", err.message);
        o.disabled_passes = TC_PASS_LOWP_CHAIN;
        if (tc_engine_build(m, &o, &plain, &err)) fail_msg("build: %s", err.message);
        assert_true(node_has(chained, "ffn1", kinds[kind].attr));
        if (kind == 0) expect_avx2_tactic(chained, "ffn1", "matmul_int8_u7_avx2");
        if (kind == 0) expect_avx2_tactic(chained, "ffn2", "matmul_int8_u7_avx2");
        assert_false(node_has(plain, "ffn1", kinds[kind].attr));
        expect_same_and_destroy(plain, chained, &x, kind == 0 ? "int8 MatMul" : kind == 1 ? "fp16 MatMul" : "bf16 MatMul");
    }
    unlink(cache);
    tc_tensor_free(&x);
    tc_model_destroy(m);
}

/* x[1,16,9,9] -> 3x3 Conv + x (residual) -> 1x1 Conv -> y[1,24,9,9]: a chained producer whose epilogue adds a
 * residual (in NCHW, lanes a plane apart); no input is known non-negative (on AVX2: the 16-bit variant). */
static tc_model *residual_model(void) {
    etm_rng = 0x4242;
    B *b = b_new(17);
    b_input(b, b_vi(b, "x", 1, 4, (const char *[]){"1", "16", "9", "9"}));
    b_output(b, b_vi(b, "y", 1, 4, (const char *[]){"1", "24", "9", "9"}));
    etm_weight(b, "w1", 4, (int64_t[]){16, 16, 3, 3}, 0.0f);
    etm_weight(b, "w2", 4, (int64_t[]){24, 16, 1, 1}, 0.0f);
    itm_conv(b, "c1", "x,w1", "c", 3);
    b_node(b, "add", "Add", "c,x", "a");
    itm_conv(b, "c2", "a,w2", "y", 1);
    return etm_load(b);
}

/* The INT8 chain from a Conv with a fused residual Add: bit-identical to the unchained engine, both layouts. */
static void test_residual_chain(void **state) {
    (void)state;
    if (!have_int8()) skip();
    tc_model *m = residual_model();
    char cache[128];
    tc_tensor x = calibrated_input(m, 16, 9, 9, cache, sizeof cache, "res_cache");
    for (int layout = 0; layout < 2; layout++) {
        const uint32_t off = layout ? 0 : TC_PASS_LAYOUT;
        tc_engine *plain = build_int8(m, cache, TC_BUILD_TACTICS_FIXED, off | TC_PASS_LOWP_CHAIN, 2, 0, NULL);
        tc_engine *chained = build_int8(m, cache, TC_BUILD_TACTICS_FIXED, off, 2, 0, NULL);
        assert_true(node_has(chained, "c1", TC__ATTR_INT8_OUT_IMAGE));
        assert_true(strstr(step_ops(chained, "c1"), "Add") != NULL);
        assert_false(node_has(chained, "c2", TC__ATTR_INT8_NONNEG)); /* conv + residual, no activation */
        expect_avx2_tactic(chained, "c1", "conv_int8_avx2");
        expect_avx2_tactic(chained, "c2", "conv_int8_avx2");
        expect_same_and_destroy(plain, chained, &x, layout ? "residual, layout pass" : "residual, NCHW");
    }
    unlink(cache);
    tc_tensor_free(&x);
    tc_model_destroy(m);
}

/* x[1,16,11,11] -> 1x1 Conv (16 -> 48) -> Relu -> depthwise 3x3 (group 48, stride dw_stride) -> Relu -> 1x1 Conv
 * (48 -> 16) -> y: a MobileNetV2 block. On AVX2 the expansion reads a signed input (16-bit variant), the depthwise
 * and projection layers non-negative ones (u7 variant). */
static tc_model *inverted_residual_model(int64_t dw_stride) {
    etm_rng = 0x2727;
    const int64_t o = dw_stride == 1 ? 11 : 6;
    char oc[8];
    snprintf(oc, sizeof oc, "%d", (int)o);
    B *b = b_new(17);
    b_input(b, b_vi(b, "x", 1, 4, (const char *[]){"1", "16", "11", "11"}));
    b_output(b, b_vi(b, "y", 1, 4, (const char *[]){"1", "16", oc, oc}));
    etm_weight(b, "we", 4, (int64_t[]){48, 16, 1, 1}, 0.0f);
    etm_weight(b, "wd", 4, (int64_t[]){48, 1, 3, 3}, 0.0f);
    etm_weight(b, "wp", 4, (int64_t[]){16, 48, 1, 1}, 0.0f);
    itm_conv(b, "expand", "x,we", "e", 1);
    b_node(b, "expand_relu", "Relu", "e", "er");
    Onnx__NodeProto *n = b_node(b, "dw", "Conv", "er,wd", "d");
    itm_ints_attr(b, n, "pads", 4, (int64_t[]){1, 1, 1, 1});
    itm_ints_attr(b, n, "strides", 2, (int64_t[]){dw_stride, dw_stride});
    Onnx__AttributeProto *group = b_attr(b, n, "group", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    group->has_i = 1;
    group->i = 48;
    b_node(b, "dw_relu", "Relu", "d", "dr");
    itm_conv(b, "project", "dr,wp", "y", 1);
    return etm_load(b);
}

/* The depthwise INT8 layer in the chain, on AVX2: the expansion (16-bit variant) writes the depthwise layer's byte
 * image (a chain across the two variants), which writes the projection's; the outputs equal the unchained engine's
 * bit for bit, and stay close to FP32. */
static void test_depthwise_chain(void **state) {
    (void)state;
    const uint64_t avx2 = (uint64_t)(TC__ISA_AVX2 | TC__ISA_FMA);
    if ((tc__cpu_get()->isa & avx2) != avx2 || have_vnni()) skip(); /* the depthwise INT8 kernel is AVX2's */
    for (int64_t stride = 1; stride <= 2; stride++) {
        tc_model *m = inverted_residual_model(stride);
        char cache[128];
        tc_tensor x = calibrated_input(m, 16, 11, 11, cache, sizeof cache, "dw_cache");
        tc_engine *plain = build_int8(m, cache, TC_BUILD_TACTICS_FIXED, TC_PASS_LOWP_CHAIN, 2, 0, NULL);
        tc_engine *chained = build_int8(m, cache, TC_BUILD_TACTICS_FIXED, 0, 2, 0, NULL);
        assert_true(node_has(chained, "dw", TC__ATTR_INT8_NONNEG));
        assert_false(node_has(chained, "expand", TC__ATTR_INT8_NONNEG));
        expect_avx2_tactic(chained, "expand", "conv_int8_avx2");
        expect_avx2_tactic(chained, "dw", "dwconv_int8_u7_avx2");
        expect_avx2_tactic(chained, "project", "conv_int8_u7_avx2");
        expect_avx2_tactic(plain, "dw", "dwconv_int8_u7_avx2");
        assert_true(node_has(chained, "expand", TC__ATTR_INT8_OUT_IMAGE));
        assert_true(node_has(chained, "dw", TC__ATTR_INT8_OUT_IMAGE));
        assert_true(node_has(chained, "dw", TC__ATTR_INT8_IN_IMAGE));
        assert_false(node_has(plain, "expand", TC__ATTR_INT8_OUT_IMAGE));
        tc_step_info si;
        for (int i = 0; i < tc_engine_num_steps(chained); i++) /* the expansion writes the byte image */
            if (tc_engine_step_info(chained, i, &si) == TC_STATUS_OK && strcmp(si.name, "expand") == 0)
                assert_string_equal(si.layout, "u7-chain");
        /* INT8 close to FP32 */
        tc_engine *fp32 = NULL;
        tc_error err;
        tc_build_options o = {.struct_size = sizeof o, .threads = 2};
        if (tc_engine_build(m, &o, &fp32, &err)) fail_msg("build: %s", err.message);
        tc_tensor want = run_copy(fp32, &x);
        check_close(chained, &x, &want, "depthwise chain");
        tc_tensor_free(&want);
        tc_engine_destroy(fp32);
        expect_same_and_destroy(plain, chained, &x, stride == 1 ? "depthwise chain" : "depthwise chain, stride 2");
        unlink(cache);
        tc_tensor_free(&x);
        tc_model_destroy(m);
    }
}

/* The same block with VNNI (or its emulation, `make emulated`): the depthwise layer runs the VNNI depthwise kernel (NCHW,
 * or NCHW16c where the layout pass blocks it), between the dense VNNI layers: the expansion writes its u8 image, it
 * writes the projection's; outputs equal the unchained engine's bit for bit and stay close to FP32. */
static void test_depthwise_chain_vnni(void **state) {
    (void)state;
    if (!have_vnni()) skip();
    for (int64_t stride = 1; stride <= 2; stride++)
        for (int layout = 0; layout < 2; layout++) {
            char what[64];
            snprintf(what, sizeof what, "VNNI depthwise, stride %d, layout %d", (int)stride, layout);
            tc_model *m = inverted_residual_model(stride);
            char cache[128];
            tc_tensor x = calibrated_input(m, 16, 11, 11, cache, sizeof cache, "dwv_cache");
            const uint32_t off = layout ? 0 : TC_PASS_LAYOUT;
            tc_engine *plain = build_int8(m, cache, TC_BUILD_TACTICS_FIXED, off | TC_PASS_LOWP_CHAIN, 2, 0, NULL);
            tc_engine *chained = build_int8(m, cache, TC_BUILD_TACTICS_FIXED, off, 2, 0, NULL);
            const tc_engine *both[2] = {plain, chained};
            for (int e = 0; e < 2; e++) {
                const char *dw = step_field(both[e], "dw", 1);
                if (strcmp(dw, "dwconv_int8_avx512vnni") != 0 && (!layout || strcmp(dw, "dwconv_nchw16c_int8_avx512vnni") != 0))
                    fail_msg("%s: dw runs %s", what, dw);
                if (strstr(step_field(both[e], "expand", 1), "int8_avx512vnni") == NULL ||
                    strstr(step_field(both[e], "project", 1), "int8_avx512vnni") == NULL)
                    fail_msg("%s: expand runs %s, project %s", what, step_field(both[e], "expand", 1),
                             step_field(both[e], "project", 1));
            }
            assert_true(node_has(chained, "expand", TC__ATTR_INT8_OUT_IMAGE));
            assert_true(node_has(chained, "dw", TC__ATTR_INT8_IN_IMAGE));
            assert_true(node_has(chained, "dw", TC__ATTR_INT8_OUT_IMAGE));
            assert_true(node_has(chained, "project", TC__ATTR_INT8_IN_IMAGE));
            assert_false(node_has(plain, "dw", TC__ATTR_INT8_IN_IMAGE));
            tc_engine *fp32 = NULL;
            tc_error err;
            tc_build_options o = {.struct_size = sizeof o, .threads = 2};
            if (tc_engine_build(m, &o, &fp32, &err)) fail_msg("build: %s", err.message);
            tc_tensor want = run_copy(fp32, &x);
            check_close(chained, &x, &want, what);
            tc_tensor_free(&want);
            tc_engine_destroy(fp32);
            expect_same_and_destroy(plain, chained, &x, what);
            unlink(cache);
            tc_tensor_free(&x);
            tc_model_destroy(m);
        }
}

/* A QDQ model: x[1,16,8,8] -> Q/DQ (u8, zero point 128) -> 1x1 Conv c1 (16 -> 32) -> SiLU (Sigmoid * x) -> Q/DQ (u8, zero
 * point 15) -> 1x1 Conv c2 (32 -> 16) -> y. Both pairs feed only an INT8 Conv with their quantization. */
static tc_model *qdq_silu_model(void) {
    etm_rng = 0x3d3d;
    B *b = b_new(17);
    b_input(b, b_vi(b, "x", 1, 4, (const char *[]){"1", "16", "8", "8"}));
    b_output(b, b_vi(b, "y", 1, 4, (const char *[]){"1", "16", "8", "8"}));
    etm_weight(b, "w1", 4, (int64_t[]){32, 16, 1, 1}, -0.25f);
    etm_weight(b, "w2", 4, (int64_t[]){16, 32, 1, 1}, -0.25f);
    const float sx = 2.0f / 255.0f, ss = 0.01f;
    const uint8_t zx = 128, zs = 15;
    const struct {
        const char *name;
        int dtype;
        const void *v;
        size_t n;
    } scalars[4] = {{"sx", 1, &sx, 4}, {"zx", 2, &zx, 1}, {"ss", 1, &ss, 4}, {"zs", 2, &zs, 1}};
    for (int i = 0; i < 4; i++) {
        Onnx__TensorProto *t = b_tensor(b, scalars[i].name, scalars[i].dtype, 0, (const int64_t[]){1});
        b_raw(b, t, scalars[i].v, scalars[i].n);
        b_init(b, t);
    }
    b_node(b, "xq", "QuantizeLinear", "x,sx,zx", "xq_out");
    b_node(b, "xdq", "DequantizeLinear", "xq_out,sx,zx", "xd");
    b_node(b, "c1", "Conv", "xd,w1", "h");
    b_node(b, "sig", "Sigmoid", "h", "hs");
    b_node(b, "silu", "Mul", "h,hs", "s");
    b_node(b, "sq", "QuantizeLinear", "s,ss,zs", "sq_out");
    b_node(b, "sdq", "DequantizeLinear", "sq_out,ss,zs", "sd");
    b_node(b, "c2", "Conv", "sd,w2", "y");
    return etm_load(b);
}

/* The number of Q and DQ steps of e. */
static int qdq_steps(const tc_engine *e) {
    int n = 0;
    for (int k = 0; k < tc_engine_num_steps(e); k++) {
        tc_step_info si;
        assert_int_equal(tc_engine_step_info(e, k, &si), TC_STATUS_OK);
        n += strcmp(si.ops, "QuantizeLinear") == 0 || strcmp(si.ops, "DequantizeLinear") == 0;
    }
    return n;
}

/* The Q/DQ pairs of a QDQ model that only INT8 steps with their quantization read go after the tactic choice (pass
 * qdq_elide): the INT8 Convs quantize the tensors themselves, to the same codes, and then chain. Outputs equal the
 * plan with the pairs (--disable-pass qdq_elide) up to codes at exact ties, and survive a plan round trip. */
static void test_qdq_elide(void **state) {
    (void)state;
    if (!have_int8()) skip();
    tc_model *m = qdq_silu_model();
    tc_tensor x;
    assert_int_equal(tc_tensor_alloc(TC_DTYPE_FLOAT32, 4, (int64_t[]){1, 16, 8, 8}, &x, NULL), TC_STATUS_OK);
    for (size_t k = 0; k < x.nbytes / 4; k++) ((float *)x.data)[k] = etm_uniform();
    tc_error err;
    tc_build_options o = {.struct_size = sizeof o, .threads = 2, .flags = TC_BUILD_TACTICS_FIXED};
    tc_engine *elided = NULL, *kept = NULL;
    if (tc_engine_build(m, &o, &elided, &err)) fail_msg("build: %s", err.message);
    o.disabled_passes = TC_PASS_QDQ_ELIDE;
    if (tc_engine_build(m, &o, &kept, &err)) fail_msg("build: %s", err.message);
    assert_int_equal(qdq_steps(kept), 4);
    assert_int_equal(qdq_steps(elided), 0);
    assert_string_equal(step_precision(elided, "c1"), "int8");
    assert_string_equal(step_precision(elided, "c2"), "int8");
    assert_true(node_has(elided, "c1", TC__ATTR_INT8_OUT_IMAGE)); /* c1 now writes c2's image */
    tc_tensor a = run_copy(kept, &x), b = run_copy(elided, &x);
    double worst = 0.0, range = 0.0;
    for (size_t i = 0; i < a.nbytes / 4; i++) {
        worst = fmax(worst, fabs((double)((float *)a.data)[i] - ((float *)b.data)[i]));
        range = fmax(range, fabs((double)((float *)a.data)[i]));
    }
    if (!(worst <= 1e-3 * range)) fail_msg("elided output moved by %g (range %g)", worst, range);
    char plan[128];
    temp_path(plan, sizeof plan, "qdq_elide_plan");
    assert_int_equal(tc_engine_save(elided, plan, &err), TC_STATUS_OK);
    tc_engine *loaded = NULL;
    assert_int_equal(tc_engine_load(plan, &loaded, &err), TC_STATUS_OK);
    unlink(plan);
    tc_tensor c = run_copy(loaded, &x);
    if (memcmp(b.data, c.data, b.nbytes) != 0) fail_msg("the loaded plan differs");
    tc_tensor_free(&a), tc_tensor_free(&b), tc_tensor_free(&c), tc_tensor_free(&x);
    tc_engine_destroy(loaded), tc_engine_destroy(elided), tc_engine_destroy(kept);
    tc_model_destroy(m);
}

/* x[1,16,8,8] -> 3x3 Conv + Relu = t -> 1x1 Conv (16 -> mid) + Relu -> 1x1 Conv (mid -> 16) + t (residual) + Relu ->
 * y[1,16,8,8]: a ResNet block (weights from seed); t has two readers (the first 1x1 Conv's input and the second's
 * residual). Signed: without the two outer Relus, a MobileNetV2-like block whose shared value t can be negative. The
 * block model: mid 24 (signed: other weights). */
static tc_model *block_model_with(uint64_t seed, bool signed_t, int64_t mid) {
    etm_rng = seed;
    B *b = b_new(17);
    b_input(b, b_vi(b, "x", 1, 4, (const char *[]){"1", "16", "8", "8"}));
    b_output(b, b_vi(b, "y", 1, 4, (const char *[]){"1", "16", "8", "8"}));
    etm_weight(b, "w0", 4, (int64_t[]){16, 16, 3, 3}, 0.0f);
    etm_weight(b, "w1", 4, (int64_t[]){mid, 16, 1, 1}, 0.0f);
    etm_weight(b, "w2", 4, (int64_t[]){16, mid, 1, 1}, 0.0f);
    itm_conv(b, "c0", "x,w0", signed_t ? "t" : "a", 3);
    if (!signed_t) b_node(b, "r0", "Relu", "a", "t");
    itm_conv(b, "c1", "t,w1", "u", 1);
    b_node(b, "r1", "Relu", "u", "ur");
    itm_conv(b, "c2", "ur,w2", "v", 1);
    b_node(b, "add", "Add", "v,t", signed_t ? "y" : "s");
    if (!signed_t) b_node(b, "r2", "Relu", "s", "y");
    return etm_load(b);
}
static tc_model *block_model_of(bool signed_t) { return block_model_with(signed_t ? 0x5eed : 0x6161, signed_t, 24); }
static tc_model *block_model(void) { return block_model_of(false); }

/* The float attribute attr of the engine's node name. */
static float node_float(const tc_engine *e, const char *name, const char *attr) {
    for (int k = 0; k < e->g->n_nodes; k++)
        if (strcmp(e->g->nodes[k].name, name) == 0) return tc__attr_float(&e->g->nodes[k].attrs, attr, 0.0f);
    return 0.0f;
}

/* The residual image of c1's input that c2 adds (both engines built from a block model with readers c1 and c2): c2's
 * residual scale is c1's input scale, the chained engine's output moves by at most half a step of it from the
 * unchained one's (and some outputs do move), and a plan round trip keeps the chained engine's bits. Destroys both. */
static void expect_residual_image_and_destroy(tc_engine *plain, tc_engine *chained, const tc_tensor *x, int threads) {
    const float st = node_float(chained, "c2", TC__ATTR_INT8_RES_SCALE);
    assert_true(st > 0.0f && st == node_float(chained, "c1", TC__ATTR_INT8_SCALE));
    tc_tensor a = run_copy(plain, x), b = run_copy(chained, x);
    double worst = 0.0, moved = 0.0;
    for (size_t i = 0; i < a.nbytes / 4; i++) {
        const double d = fabs((double)((float *)a.data)[i] - ((float *)b.data)[i]);
        worst = fmax(worst, d), moved += d > 0.0;
    }
    if (!(worst <= 0.5 * st * 1.001 + 1e-5)) fail_msg("%d thread(s): moved by %g, half a step is %g", threads, worst, 0.5 * st);
    assert_true(moved > 0); /* the residual is quantized: some outputs move */
    char plan[128];
    tc_error err;
    temp_path(plan, sizeof plan, "res_plan");
    assert_int_equal(tc_engine_save(chained, plan, &err), TC_STATUS_OK);
    tc_engine_destroy(chained);
    assert_int_equal(tc_engine_load(plan, &chained, &err), TC_STATUS_OK);
    unlink(plan);
    tc_tensor c = run_copy(chained, x);
    if (memcmp(b.data, c.data, b.nbytes) != 0) fail_msg("%d thread(s): the loaded plan differs", threads);
    tc_tensor_free(&a), tc_tensor_free(&b), tc_tensor_free(&c);
    tc_engine_destroy(plain);
    tc_engine_destroy(chained);
}

/* A value with several INT8 readers (ResNet's block outputs; AVX2, or VNNI with u8 images): its producer writes one image, the first 1x1
 * Conv takes it as input and the second adds it, dequantized, as its residual. The residual then carries its
 * quantization error and no more: with min-max scales (no saturation) the output moves by at most half a step of
 * t's scale from the unchained engine's (Relu and the add are 1-Lipschitz). */
static void test_residual_image_chain(void **state) {
    (void)state;
    if (!have_int8()) skip(); /* AVX2: the variants' images; VNNI (and AMX): u8 codes */
    tc_model *m = block_model();
    char cache[128];
    tc_tensor x = calibrated_input(m, 16, 8, 8, cache, sizeof cache, "blk_cache");
    const uint32_t nchw = have_vnni() ? TC_PASS_LAYOUT : 0; /* (NCHW16c: c1's 24 channels read t through a reorder) */
    for (int threads = 1; threads <= 2; threads++) {
        tc_engine *plain = build_int8(m, cache, TC_BUILD_TACTICS_FIXED, TC_PASS_LOWP_CHAIN | nchw, threads, 0, NULL);
        tc_engine *chained = build_int8(m, cache, TC_BUILD_TACTICS_FIXED, nchw, threads, 0, NULL);
        expect_avx2_tactic(chained, "c0", "conv_int8_avx2");
        expect_avx2_tactic(chained, "c1", "conv_int8_u7_avx2");
        expect_avx2_tactic(chained, "c2", "conv_int8_u7_avx2");
        assert_true(node_has(chained, "c0", TC__ATTR_INT8_OUT_IMAGE));
        assert_true(node_has(chained, "c1", TC__ATTR_INT8_IN_IMAGE));
        assert_true(node_has(chained, "c2", TC__ATTR_INT8_RES_IMAGE));
        assert_false(node_has(chained, "c2", TC__ATTR_INT8_OUT_IMAGE)); /* y is a graph output */
        assert_false(node_has(plain, "c2", TC__ATTR_INT8_RES_IMAGE));
        expect_residual_image_and_destroy(plain, chained, &x, threads);
    }
    unlink(cache);
    tc_tensor_free(&x);
    tc_model_destroy(m);
}

/* Reduce range (TC_BUILD_INT8_REDUCE_RANGE): every INT8 layer gets tc.int8_w7; on AVX2 the layers with non-negative
 * inputs run the u7w7 variant (7-bit weights), chained as u7, the one with a signed input u8w7 (writing the block's
 * residual image); close to
 * FP32, through a plan round trip; without the flag no layer has it; without TC_BUILD_INT8 the flag is refused. */
static void test_reduce_range(void **state) {
    (void)state;
    if (!have_int8()) skip();
    tc_model *m = block_model();
    char cache[128];
    tc_tensor x = calibrated_input(m, 16, 8, 8, cache, sizeof cache, "rr_cache");
    tc_build_options fo = {.struct_size = sizeof fo, .threads = 2};
    tc_engine *fp32 = NULL;
    tc_error err;
    assert_int_equal(tc_engine_build(m, &fo, &fp32, &err), TC_STATUS_OK);
    tc_tensor want = run_copy(fp32, &x);
    tc_engine *e8 = build_int8(m, cache, TC_BUILD_TACTICS_FIXED, 0, 2, 0, NULL);
    tc_engine *e7 = build_int8(m, cache, TC_BUILD_TACTICS_FIXED | TC_BUILD_INT8_REDUCE_RANGE, 0, 2, 0, NULL);
    const char *names[3] = {"c0", "c1", "c2"};
    for (int i = 0; i < 3; i++) {
        assert_false(node_has(e8, names[i], TC__ATTR_INT8_W7));
        assert_true(node_has(e7, names[i], TC__ATTR_INT8_W7));
    }
    expect_avx2_tactic(e8, "c1", "conv_int8_u7_avx2");
    expect_avx2_tactic(e7, "c0", "conv_int8_u8w7_avx2"); /* a signed input */
    expect_avx2_tactic(e7, "c1", "conv_int8_u7w7_avx2");
    expect_avx2_tactic(e7, "c2", "conv_int8_u7w7_avx2");
    if (!have_vnni()) { /* u8w7 writes t's residual image (u7 bytes for c1); u7w7 chains like u7 */
        assert_true(node_has(e7, "c0", TC__ATTR_INT8_OUT_IMAGE));
        assert_true(node_has(e7, "c1", TC__ATTR_INT8_IN_IMAGE));
        assert_true(node_has(e7, "c1", TC__ATTR_INT8_OUT_IMAGE));
        assert_true(node_has(e7, "c2", TC__ATTR_INT8_IN_IMAGE));
        assert_true(node_has(e7, "c2", TC__ATTR_INT8_RES_IMAGE));
    }
    check_close(e8, &x, &want, "8-bit weights");
    check_close(e7, &x, &want, "7-bit weights");
    tc_tensor a = run_copy(e8, &x), b = run_copy(e7, &x);
    if (!have_vnni()) assert_memory_not_equal(a.data, b.data, a.nbytes); /* other weights: other values */
    char plan[128];
    temp_path(plan, sizeof plan, "rr_plan");
    assert_int_equal(tc_engine_save(e7, plan, &err), TC_STATUS_OK);
    tc_engine_destroy(e7);
    assert_int_equal(tc_engine_load(plan, &e7, &err), TC_STATUS_OK);
    unlink(plan);
    tc_tensor c = run_copy(e7, &x);
    assert_memory_equal(b.data, c.data, b.nbytes);
    /* the flag alone (no TC_BUILD_INT8) is refused */
    tc_build_options bad = {.struct_size = sizeof bad, .threads = 2, .flags = TC_BUILD_INT8_REDUCE_RANGE};
    tc_engine *none = NULL;
    assert_int_equal(tc_engine_build(m, &bad, &none, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "TC_BUILD_INT8_REDUCE_RANGE"));
    assert_null(none);
    /* 8-bit-weight layers: c1 keeps 8 bits (the u7 variant) among 7-bit layers; refused without reduce range, and
     * a name that is not a node is refused */
    const char *w8[1] = {"c1"}, *nope[1] = {"nope"};
    tc_build_options wo = {.struct_size = sizeof wo, .threads = 2,
                           .flags = TC_BUILD_INT8 | TC_BUILD_INT8_REDUCE_RANGE | TC_BUILD_TACTICS_FIXED,
                           .calib_cache = cache, .num_int8_w8_layers = 1, .int8_w8_layers = w8};
    tc_engine *ew = NULL;
    assert_int_equal(tc_engine_build(m, &wo, &ew, &err), TC_STATUS_OK);
    assert_true(node_has(ew, "c0", TC__ATTR_INT8_W7) && node_has(ew, "c2", TC__ATTR_INT8_W7));
    assert_false(node_has(ew, "c1", TC__ATTR_INT8_W7));
    expect_avx2_tactic(ew, "c1", "conv_int8_u7_avx2");
    expect_avx2_tactic(ew, "c2", "conv_int8_u7w7_avx2");
    check_close(ew, &x, &want, "8-bit weights on c1");
    tc_engine_destroy(ew);
    wo.flags = TC_BUILD_INT8 | TC_BUILD_TACTICS_FIXED;
    assert_int_equal(tc_engine_build(m, &wo, &none, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "reduce range"));
    wo.flags |= TC_BUILD_INT8_REDUCE_RANGE;
    wo.int8_w8_layers = nope;
    assert_int_equal(tc_engine_build(m, &wo, &none, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "'nope' is not a node"));
    assert_null(none);
    tc_tensor_free(&a), tc_tensor_free(&b), tc_tensor_free(&c), tc_tensor_free(&want);
    tc_engine_destroy(e8);
    tc_engine_destroy(e7);
    tc_engine_destroy(fp32);
    unlink(cache);
    tc_tensor_free(&x);
    tc_model_destroy(m);
}

/* x[1,16,9,9] -> Relu -> 3x3 Conv (16 -> 24) -> 1x1 Conv (24 -> 16) -> 3x3 Conv (16 -> 16) -> y: the last two read
 * signed inputs (no activation between), the first a non-negative one. */
static tc_model *signed_chain_model(void) {
    etm_rng = 0x7117;
    B *b = b_new(17);
    b_input(b, b_vi(b, "x", 1, 4, (const char *[]){"1", "16", "9", "9"}));
    b_output(b, b_vi(b, "y", 1, 4, (const char *[]){"1", "16", "9", "9"}));
    etm_weight(b, "w1", 4, (int64_t[]){24, 16, 3, 3}, 0.0f);
    etm_weight(b, "w2", 4, (int64_t[]){16, 24, 1, 1}, 0.0f);
    etm_weight(b, "w3", 4, (int64_t[]){16, 16, 3, 3}, 0.0f);
    b_node(b, "r0", "Relu", "x", "xr");
    itm_conv(b, "c1", "xr,w1", "a", 3);
    itm_conv(b, "c2", "a,w2", "c", 1);
    itm_conv(b, "c3", "c,w3", "y", 3);
    return etm_load(b);
}

/* The u8w7 variant in the chain (reduce range, AVX2): u7w7 (c1) writes the u8w7 reader's (c2) image of u8 codes, and
 * c2 writes c3's (a 3x3 Conv: its border holds the zero point); bit-identical to the unchained engine, 1 and 2
 * threads, through a plan round trip. */
static void test_u8_chain(void **state) {
    (void)state;
    const uint64_t avx2 = (uint64_t)(TC__ISA_AVX2 | TC__ISA_FMA);
    if ((tc__cpu_get()->isa & avx2) != avx2 || have_vnni()) skip(); /* the AVX2 variants' chain */
    tc_model *m = signed_chain_model();
    char cache[128];
    tc_tensor x = calibrated_input(m, 16, 9, 9, cache, sizeof cache, "u8_cache");
    const uint32_t rr = TC_BUILD_TACTICS_FIXED | TC_BUILD_INT8_REDUCE_RANGE;
    for (int threads = 1; threads <= 2; threads++) {
        tc_engine *plain = build_int8(m, cache, rr, TC_PASS_LOWP_CHAIN, threads, 0, NULL);
        tc_engine *chained = build_int8(m, cache, rr, 0, threads, 0, NULL);
        expect_avx2_tactic(chained, "c1", "conv_int8_u7w7_avx2");
        expect_avx2_tactic(chained, "c2", "conv_int8_u8w7_avx2");
        expect_avx2_tactic(chained, "c3", "conv_int8_u8w7_avx2");
        assert_true(node_has(chained, "c1", TC__ATTR_INT8_OUT_IMAGE));
        assert_true(node_has(chained, "c2", TC__ATTR_INT8_IN_IMAGE));
        assert_true(node_has(chained, "c2", TC__ATTR_INT8_OUT_IMAGE));
        assert_true(node_has(chained, "c3", TC__ATTR_INT8_IN_IMAGE));
        assert_false(node_has(plain, "c2", TC__ATTR_INT8_IN_IMAGE));
        char plan[128];
        tc_error err;
        temp_path(plan, sizeof plan, "u8_plan");
        assert_int_equal(tc_engine_save(chained, plan, &err), TC_STATUS_OK);
        tc_engine *loaded = NULL;
        assert_int_equal(tc_engine_load(plan, &loaded, &err), TC_STATUS_OK);
        unlink(plan);
        tc_tensor a = run_copy(plain, &x), c = run_copy(loaded, &x);
        if (memcmp(a.data, c.data, a.nbytes) != 0) fail_msg("%d thread(s): the loaded chained plan differs", threads);
        tc_tensor_free(&a), tc_tensor_free(&c);
        tc_engine_destroy(loaded);
        expect_same_and_destroy(plain, chained, &x, threads == 1 ? "u8 chain, 1 thread" : "u8 chain, 2 threads");
    }
    unlink(cache);
    tc_tensor_free(&x);
    tc_model_destroy(m);
}

/* A residual image of u8 codes (reduce range, AVX2): t, read by the u8w7 Conv c1 as input and by c2 as residual, is
 * written once by c0 as c1's u8 image (border z) and c2 adds it dequantized ((u - z) * scale): within half a step of
 * t's scale of the unchained engine, 1 and 2 threads, through a plan round trip. */
static void test_u8_residual_image(void **state) {
    (void)state;
    const uint64_t avx2 = (uint64_t)(TC__ISA_AVX2 | TC__ISA_FMA);
    if ((tc__cpu_get()->isa & avx2) != avx2 || have_vnni()) skip();
    tc_model *m = block_model_of(true);
    char cache[128];
    tc_tensor x = calibrated_input(m, 16, 8, 8, cache, sizeof cache, "u8r_cache");
    const uint32_t rr = TC_BUILD_TACTICS_FIXED | TC_BUILD_INT8_REDUCE_RANGE;
    for (int threads = 1; threads <= 2; threads++) {
        tc_engine *plain = build_int8(m, cache, rr, TC_PASS_LOWP_CHAIN, threads, 0, NULL);
        tc_engine *chained = build_int8(m, cache, rr, 0, threads, 0, NULL);
        expect_avx2_tactic(chained, "c0", "conv_int8_u8w7_avx2");
        expect_avx2_tactic(chained, "c1", "conv_int8_u8w7_avx2");
        expect_avx2_tactic(chained, "c2", "conv_int8_u7w7_avx2");
        assert_true(node_has(chained, "c0", TC__ATTR_INT8_OUT_IMAGE));
        assert_true(node_has(chained, "c1", TC__ATTR_INT8_IN_IMAGE));
        const int64_t *ri = NULL;
        for (int k = 0; k < chained->g->n_nodes; k++)
            if (strcmp(chained->g->nodes[k].name, "c2") == 0)
                assert_int_equal(tc__attr_ints(&chained->g->nodes[k].attrs, TC__ATTR_INT8_RES_IMAGE, &ri), 7);
        assert_non_null(ri);
        assert_int_equal(ri[5], TC__INT8_IMG_U8);
        assert_int_equal(ri[6], 128);
        expect_residual_image_and_destroy(plain, chained, &x, threads);
    }
    unlink(cache);
    tc_tensor_free(&x);
    tc_model_destroy(m);
}

/* x[1,16,8,8] -> 3x3 Conv + Relu = t; t -> 1x1 Conv + Relu -> 1x1 Conv = v; t -> 1x1 Conv = d (a downsample);
 * v + d -> Relu -> y: a ResNet stage's first block, where one operand of the residual add is read by nothing else. */
static tc_model *downsample_block_model(void) {
    etm_rng = 0x7373;
    B *b = b_new(17);
    b_input(b, b_vi(b, "x", 1, 4, (const char *[]){"1", "16", "8", "8"}));
    b_output(b, b_vi(b, "y", 1, 4, (const char *[]){"1", "32", "8", "8"}));
    etm_weight(b, "w0", 4, (int64_t[]){16, 16, 3, 3}, 0.0f);
    etm_weight(b, "w1", 4, (int64_t[]){24, 16, 1, 1}, 0.0f);
    etm_weight(b, "w2", 4, (int64_t[]){32, 24, 1, 1}, 0.0f);
    etm_weight(b, "wd", 4, (int64_t[]){32, 16, 1, 1}, 0.0f);
    itm_conv(b, "c0", "x,w0", "a", 3);
    b_node(b, "r0", "Relu", "a", "t");
    itm_conv(b, "c1", "t,w1", "u", 1);
    b_node(b, "r1", "Relu", "u", "ur");
    itm_conv(b, "c2", "ur,w2", "v", 1);
    itm_conv(b, "ds", "t,wd", "d", 1);
    b_node(b, "add", "Add", "v,d", "s");
    b_node(b, "r2", "Relu", "s", "y");
    return etm_load(b);
}

/* The residual operand that only the add reads (v or d, whichever the fusion leaves as the residual) becomes an image
 * too, with its own calibrated scale (the calibrator observes both operands of an add of two layers); the output
 * moves by at most half a step of that scale. t, read by c1 and ds, is chained to both. */
static void test_residual_operand_image(void **state) {
    (void)state;
    if (!have_int8()) skip();
    tc_model *m = downsample_block_model();
    char cache[128];
    tc_tensor x = calibrated_input(m, 16, 8, 8, cache, sizeof cache, "ds_cache");
    const uint32_t nchw = have_vnni() ? TC_PASS_LAYOUT : 0; /* (NCHW16c: c1's 24 channels read t through a reorder) */
    tc_engine *plain = build_int8(m, cache, TC_BUILD_TACTICS_FIXED, TC_PASS_INT8_RESIDUAL_IMAGE | nchw, 2, 0, NULL);
    tc_engine *chained = build_int8(m, cache, TC_BUILD_TACTICS_FIXED, nchw, 2, 0, NULL);
    assert_true(node_has(chained, "c0", TC__ATTR_INT8_OUT_IMAGE)); /* t: two input readers */
    assert_true(node_has(chained, "c1", TC__ATTR_INT8_IN_IMAGE) && node_has(chained, "ds", TC__ATTR_INT8_IN_IMAGE));
    const bool ds_adds = node_has(chained, "ds", TC__ATTR_INT8_RES_IMAGE);
    const char *writer = ds_adds ? "c2" : "ds", *adder = ds_adds ? "ds" : "c2";
    assert_true(node_has(chained, adder, TC__ATTR_INT8_RES_IMAGE));
    assert_true(node_has(chained, writer, TC__ATTR_INT8_OUT_IMAGE));
    assert_true(node_has(chained, writer, TC__ATTR_INT8_Y_SCALE));
    const float rs = node_float(chained, adder, TC__ATTR_INT8_RES_SCALE);
    assert_true(rs > 0.0f && rs == node_float(chained, writer, TC__ATTR_INT8_Y_SCALE));
    assert_false(node_has(plain, adder, TC__ATTR_INT8_RES_IMAGE));
    tc_tensor a = run_copy(plain, &x), b = run_copy(chained, &x);
    double worst = 0.0;
    for (size_t i = 0; i < a.nbytes / 4; i++) worst = fmax(worst, fabs((double)((float *)a.data)[i] - ((float *)b.data)[i]));
    if (!(worst > 0.0 && worst <= 0.5 * rs * 1.001 + 1e-5)) fail_msg("moved by %g, half a step is %g", worst, 0.5 * rs);
    tc_tensor_free(&a), tc_tensor_free(&b);
    tc_engine_destroy(plain);
    tc_engine_destroy(chained);
    unlink(cache);
    tc_tensor_free(&x);
    tc_model_destroy(m);
}

/* block_model with 32 channels in the middle (NCHW16c throughout with the layout pass). */
static tc_model *block16_model(void) { return block_model_with(0x1616, false, 32); }

/* FP16 and BF16 residual images (TC_PASS_HALF_RESIDUAL_IMAGE): a value several 16-bit Convs read is written once as
 * their image, the input readers take it, the residual reader adds its 16-bit values. The block (NCHW16c: the epilogue's
 * per-tile variants) and the downsample block (NCHW, where d has a residual reader only: an unpadded image; t two
 * input readers). Against the engine without the pass: the residual is rounded to the type, so the outputs move (some)
 * by at most its rounding (2^-8 of the residual for BF16, 2^-11 for FP16; bounded here by the outputs' scale), the same
 * bits on 1 and 2 threads and through a plan round trip. */
static void test_half_residual_image(void **state) {
    (void)state;
    const struct {
        uint32_t flag;
        uint64_t isa;
        double eps;
    } kinds[2] = {{TC_BUILD_FP16, TC__ISA_AVX512FP16, 1.0 / 2048}, {TC_BUILD_BF16, TC__ISA_AVX512BF16, 1.0 / 256}};
    tc_tensor x;
    assert_int_equal(tc_tensor_alloc(TC_DTYPE_FLOAT32, 4, (int64_t[]){1, 16, 8, 8}, &x, NULL), TC_STATUS_OK);
    for (size_t k = 0; k < x.nbytes / 4; k++) ((float *)x.data)[k] = 2.0f * etm_uniform();
    for (int kind = 0; kind < 2; kind++) {
        if (!(tc__cpu_get()->isa & kinds[kind].isa)) continue;
        for (int model = 0; model < 2; model++) {
            tc_model *m = model == 0 ? block16_model() : downsample_block_model();
            const uint32_t off = model == 0 ? 0 : TC_PASS_LAYOUT;
            tc_tensor ref = {0};
            for (int threads = 1; threads <= 2; threads++) {
                tc_build_options o = {.struct_size = sizeof o, .threads = threads,
                                      .flags = kinds[kind].flag | TC_BUILD_TACTICS_FIXED, .disabled_passes = off};
                tc_engine *chained = NULL, *plain = NULL;
                tc_error err;
                if (tc_engine_build(m, &o, &chained, &err)) fail_msg("build: %s", err.message);
                o.disabled_passes |= TC_PASS_HALF_RESIDUAL_IMAGE;
                if (tc_engine_build(m, &o, &plain, &err)) fail_msg("build: %s", err.message);
                assert_true(node_has(chained, "c0", TC__ATTR_HALF_OUT_IMAGE)); /* t: its readers' image */
                assert_true(node_has(chained, "c1", TC__ATTR_HALF_IN_IMAGE));
                if (model == 0) {
                    assert_true(node_has(chained, "c2", TC__ATTR_HALF_RES_IMAGE));
                } else {
                    assert_true(node_has(chained, "ds", TC__ATTR_HALF_IN_IMAGE));
                    const bool ds_adds = node_has(chained, "ds", TC__ATTR_HALF_RES_IMAGE);
                    assert_true(node_has(chained, ds_adds ? "c2" : "ds", TC__ATTR_HALF_OUT_IMAGE));
                    assert_true(ds_adds || node_has(chained, "c2", TC__ATTR_HALF_RES_IMAGE));
                }
                assert_false(node_has(plain, "c2", TC__ATTR_HALF_RES_IMAGE) || node_has(plain, "ds", TC__ATTR_HALF_RES_IMAGE));
                tc_tensor a = run_copy(plain, &x), b = run_copy(chained, &x);
                double worst = 0.0, top = 0.0, moved = 0.0;
                for (size_t i = 0; i < a.nbytes / 4; i++) {
                    const double d = fabs((double)((float *)a.data)[i] - ((float *)b.data)[i]);
                    worst = fmax(worst, d), top = fmax(top, fabs((double)((float *)a.data)[i])), moved += d > 0.0;
                }
                const char *what = kind ? "bf16" : "fp16";
                if (!(worst <= 4.0 * kinds[kind].eps * top + 1e-6))
                    fail_msg("%s model %d, %d thread(s): moved by %g (outputs up to %g)", what, model, threads, worst, top);
                assert_true(moved > 0);
                if (threads == 1) ref = b;
                else if (memcmp(ref.data, b.data, b.nbytes) != 0) fail_msg("%s model %d: 1 and 2 threads differ", what, model);
                char plan[128];
                temp_path(plan, sizeof plan, "hres_plan");
                assert_int_equal(tc_engine_save(chained, plan, &err), TC_STATUS_OK);
                tc_engine *loaded = NULL;
                assert_int_equal(tc_engine_load(plan, &loaded, &err), TC_STATUS_OK);
                unlink(plan);
                tc_tensor c = run_copy(loaded, &x);
                if (memcmp(b.data, c.data, b.nbytes) != 0) fail_msg("%s model %d: the loaded plan differs", what, model);
                tc_tensor_free(&a), tc_tensor_free(&c);
                if (threads == 2) tc_tensor_free(&b), tc_tensor_free(&ref);
                tc_engine_destroy(loaded), tc_engine_destroy(plain), tc_engine_destroy(chained);
            }
            tc_model_destroy(m);
        }
    }
    tc_tensor_free(&x);
}

/* x[1,16,9,9] -> 3x3 Conv "c0" = t -> GlobalAveragePool -> 1x1 Conv "se1" (16 -> 8) + Relu -> 1x1 Conv "se2"
 * (8 -> 16) + Sigmoid = s -> Mul "scale" (t, s; or s, t) = u -> 1x1 Conv "proj" (16 -> 24) -> y[1,24,9,9]: EfficientNet's
 * squeeze-and-excitation before its projection. With two readers: y = proj(u) + proj2(u) (proj2 adds proj's output as
 * its residual), both reading u's image. */
static tc_model *se_model_of(bool swap, bool two_readers) {
    etm_rng = swap ? 0x5e5e : 0x5e01;
    B *b = b_new(17);
    b_input(b, b_vi(b, "x", 1, 4, (const char *[]){"1", "16", "9", "9"}));
    b_output(b, b_vi(b, "y", 1, 4, (const char *[]){"1", "24", "9", "9"}));
    etm_weight(b, "w0", 4, (int64_t[]){16, 16, 3, 3}, 0.0f);
    etm_weight(b, "w1", 4, (int64_t[]){8, 16, 1, 1}, 0.0f);
    etm_weight(b, "w2", 4, (int64_t[]){16, 8, 1, 1}, 0.0f);
    etm_weight(b, "wp", 4, (int64_t[]){24, 16, 1, 1}, 0.0f);
    itm_conv(b, "c0", "x,w0", "t", 3);
    b_node(b, "gap", "GlobalAveragePool", "t", "g");
    itm_conv(b, "se1", "g,w1", "h", 1);
    b_node(b, "se1_relu", "Relu", "h", "hr");
    itm_conv(b, "se2", "hr,w2", "e", 1);
    b_node(b, "se2_sigmoid", "Sigmoid", "e", "s");
    b_node(b, "scale", "Mul", swap ? "s,t" : "t,s", "u");
    itm_conv(b, "proj", "u,wp", two_readers ? "p1" : "y", 1);
    if (two_readers) {
        etm_weight(b, "wq", 4, (int64_t[]){24, 16, 1, 1}, 0.0f);
        itm_conv(b, "proj2", "u,wq", "p2", 1);
        b_node(b, "sum", "Add", "p1,p2", "y");
    }
    return etm_load(b);
}

/* The squeeze-and-excitation scale on AVX2: the Mul writes the projection's input image (mul_int8_image_avx2: 16-bit
 * codes with 8-bit weights, u8 codes with 7-bit ones), the projection takes it as is (two projections: both take the
 * one image), and the outputs equal the unchained engine's bit for bit, with either operand order. */
static void test_se_mul_chain(void **state) {
    (void)state;
    const uint64_t avx2 = (uint64_t)(TC__ISA_AVX2 | TC__ISA_FMA);
    if ((tc__cpu_get()->isa & avx2) != avx2 || have_vnni()) skip(); /* the image Mul is AVX2's */
    for (int variant = 0; variant < 3; variant++) /* t * s, s * t, t * s with two readers */
        for (int w7 = 0; w7 < 2; w7++) {
            const bool swap = variant == 1, two = variant == 2;
            tc_model *m = se_model_of(swap, two);
            char cache[128], what[64];
            snprintf(what, sizeof what, "se scale%s%s%s", swap ? " (s, t)" : "", two ? ", two readers" : "",
                     w7 ? ", reduce range" : "");
            tc_tensor x = calibrated_input(m, 16, 9, 9, cache, sizeof cache, "se_cache");
            const uint32_t flags = TC_BUILD_TACTICS_FIXED | (w7 ? TC_BUILD_INT8_REDUCE_RANGE : 0u);
            tc_engine *plain = build_int8(m, cache, flags, TC_PASS_LOWP_CHAIN, 2, 0, NULL);
            /* (without residual images, which quantize proj's output where proj2 adds it) */
            tc_engine *chained = build_int8(m, cache, flags, TC_PASS_INT8_RESIDUAL_IMAGE, 2, 0, NULL);
            assert_string_equal(step_field(chained, "scale", 1), "mul_int8_image_avx2");
            assert_string_equal(step_precision(chained, "scale"), "int8");
            assert_string_not_equal(step_field(plain, "scale", 1), "mul_int8_image_avx2");
            assert_true(node_has(chained, "proj", TC__ATTR_INT8_IN_IMAGE));
            assert_true(node_has(chained, "scale", TC__ATTR_INT8_OUT_IMAGE));
            if (two) assert_true(node_has(chained, "proj2", TC__ATTR_INT8_IN_IMAGE));
            expect_avx2_tactic(chained, "proj", w7 ? "conv_int8_u8w7_avx2" : "conv_int8_avx2");
            expect_same_and_destroy(plain, chained, &x, what);
            unlink(cache);
            tc_tensor_free(&x);
            tc_model_destroy(m);
        }
}

/* x[1,16,9,9] -> 3x3 Conv "c0" -> SiLU (Sigmoid, Mul) -> 1x1 Conv "c1" (16 -> 24) -> y: c1's input comes out of a SiLU. */
static tc_model *silu_model(void) {
    etm_rng = 0x51f0;
    B *b = b_new(17);
    b_input(b, b_vi(b, "x", 1, 4, (const char *[]){"1", "16", "9", "9"}));
    b_output(b, b_vi(b, "y", 1, 4, (const char *[]){"1", "24", "9", "9"}));
    etm_weight(b, "w0", 4, (int64_t[]){16, 16, 3, 3}, 0.0f);
    etm_weight(b, "w1", 4, (int64_t[]){24, 16, 1, 1}, 0.0f);
    itm_conv(b, "c0", "x,w0", "t", 3);
    b_node(b, "sig", "Sigmoid", "t", "st");
    b_node(b, "silu", "Mul", "t,st", "u");
    itm_conv(b, "c1", "u,w1", "y", 1);
    return etm_load(b);
}

/* A layer whose input comes out of a SiLU gets asymmetric codes over [-0.2785, amax]: a zero point and a scale of
 * about (amax + 0.2785) / 255, about half the symmetric amax / 127 (the precision pass); with reduce range codes of
 * 7 bits (tc.int8_code_max 127, a scale of about (amax + 0.2785) / 127) that the u8w7 kernel multiplies two quads at a
 * time. The layer reading the model's input keeps symmetric codes; the outputs stay close to FP32, and the chained
 * engine (c0 writes c1's image, clamped to its codes) equals the unchained one bit for bit. */
static void test_act_floor_codes(void **state) {
    (void)state;
    if (!have_int8()) skip();
    tc_model *m = silu_model();
    char cache[128];
    tc_tensor x = calibrated_input(m, 16, 9, 9, cache, sizeof cache, "silu_cache");
    tc_engine *fp32 = NULL;
    tc_error err;
    tc_build_options o = {.struct_size = sizeof o, .threads = 2};
    if (tc_engine_build(m, &o, &fp32, &err)) fail_msg("build: %s", err.message);
    tc_tensor want = run_copy(fp32, &x);
    for (int w7 = 0; w7 < 2; w7++) {
        tc_engine *e = build_int8(m, cache, TC_BUILD_TACTICS_FIXED | (w7 ? TC_BUILD_INT8_REDUCE_RANGE : 0u), 0, 2, 0, NULL);
        assert_false(node_has(e, "c0", TC__ATTR_INT8_ZERO_POINT));
        assert_true(node_has(e, "c1", TC__ATTR_INT8_ZERO_POINT));
        int64_t z = -1;
        for (int k = 0; k < e->g->n_nodes; k++)
            if (strcmp(e->g->nodes[k].name, "c1") == 0) z = tc__attr_int(&e->g->nodes[k].attrs, TC__ATTR_INT8_ZERO_POINT, -1);
        const float s8 = node_float(e, "c1", TC__ATTR_INT8_SCALE);
        assert_true(s8 > 0.0f);
        assert_int_equal(z, (int64_t)lrint(0.2785 / s8));
        assert_true(z >= 1 && z < 64);
        assert_int_equal(node_has(e, "c1", TC__ATTR_INT8_CODE_MAX), w7);
        assert_false(node_has(e, "c0", TC__ATTR_INT8_CODE_MAX));
        assert_string_equal(step_precision(e, "c1"), "int8");
        expect_avx2_tactic(e, "c1", w7 ? "conv_int8_u8w7_avx2" : "conv_int8_avx2");
        check_close(e, &x, &want, w7 ? "silu input, reduce range" : "silu input");
        if (!have_vnni()) assert_true(node_has(e, "c0", TC__ATTR_INT8_OUT_IMAGE)); /* the chain c0 -> c1 */
        tc_engine *plain = build_int8(m, cache, TC_BUILD_TACTICS_FIXED | (w7 ? TC_BUILD_INT8_REDUCE_RANGE : 0u),
                                      TC_PASS_LOWP_CHAIN, 2, 0, NULL);
        tc_tensor big; /* 1.5 x: beyond the calibrated range, so c1's codes saturate at their highest */
        assert_int_equal(tc_tensor_alloc(TC_DTYPE_FLOAT32, 4, x.dims, &big, NULL), TC_STATUS_OK);
        for (size_t i = 0; i < x.nbytes / 4; i++) ((float *)big.data)[i] = 1.5f * ((const float *)x.data)[i];
        expect_same_and_destroy(plain, e, &big, w7 ? "silu input chain, reduce range" : "silu input chain");
        tc_tensor_free(&big);
    }
    tc_tensor_free(&want);
    tc_engine_destroy(fp32);
    unlink(cache);
    tc_tensor_free(&x);
    tc_model_destroy(m);
}

/* INT8 weights are stored packed (codes, multipliers, compensations: about a quarter of the FP32 bytes), the plan keeps
 * them so, and a load refuses a packed weight that its step's tactic does not write: a reference kernel reading it, or
 * a size the tactic does not give. */
static void test_packed_weights(void **state) {
    (void)state;
    if (!have_int8()) skip();
    tc_model *m = itm_model(0x77);
    char cache[128], plan[128];
    temp_path(cache, sizeof cache, "pcache");
    temp_path(plan, sizeof plan, "pplan");
    calibrate(m, TC_CALIB_MINMAX, cache);
    tc_build_options fo = {.struct_size = sizeof fo, .flags = TC_BUILD_TACTICS_FIXED};
    tc_engine *f32 = NULL, *e = build_int8(m, cache, TC_BUILD_TACTICS_FIXED, 0, 1, 0, NULL);
    tc_error err;
    if (tc_engine_build(m, &fo, &f32, &err)) fail_msg("fp32 build: %s", err.message);
    tc_memory_info mi, mf;
    assert_int_equal(tc_engine_memory_info(e, 0, &mi), TC_STATUS_OK);
    assert_int_equal(tc_engine_memory_info(f32, 0, &mf), TC_STATUS_OK);
    if (!(mi.weight_bytes * 2 < mf.weight_bytes))
        fail_msg("INT8 weights %llu bytes, FP32 %llu", (unsigned long long)mi.weight_bytes,
                 (unsigned long long)mf.weight_bytes);
    /* Saved and loaded: the same packed bytes. */
    assert_int_equal(tc_engine_save(e, plan, &err), TC_STATUS_OK);
    tc_engine *back = NULL;
    assert_int_equal(tc_engine_load(plan, &back, &err), TC_STATUS_OK);
    assert_int_equal(tc_engine_memory_info(back, 0, &mf), TC_STATUS_OK);
    assert_int_equal(mf.weight_bytes, mi.weight_bytes);
    tc_engine_destroy(back);
    /* The step reading a packed weight, and that weight. */
    int step = -1, input = -1;
    for (int k = 0; k < e->n_steps && step < 0; k++) {
        const tc__node *n = &e->g->nodes[e->steps[k].node];
        for (int i = 0; i < n->n_in && step < 0; i++) {
            const tc__tensor *t = n->in[i] >= 0 ? e->g->values[n->in[i]].init : NULL;
            if (t && t->nbytes < (size_t)tc__tensor_numel(t) * tc_dtype_size(t->dtype)) step = k, input = i;
        }
    }
    assert_true(step >= 0);
    /* Its step run by the reference kernel instead: refused. */
    char saved[32];
    memcpy(saved, e->steps[step].tactic, sizeof saved);
    snprintf(e->steps[step].tactic, sizeof e->steps[step].tactic, "ref");
    void *blob = NULL;
    size_t blob_size = 0, size = 0;
    tc__err ierr = {0};
    assert_int_equal(tc__engine_blob_write(e, &blob, &blob_size, &ierr), TC_STATUS_OK);
    memcpy(e->steps[step].tactic, saved, sizeof saved);
    void *ref_plan = ptu_replan(e, blob, blob_size, &size);
    ptu_expect_load_failure(ref_plan, size, TC_STATUS_CORRUPT_FILE, "that its tactic does not write");
    free(blob);
    /* A packed weight 64 bytes short of what the tactic writes: refused. */
    const tc__node *n = &e->g->nodes[e->steps[step].node];
    tc__tensor *w = (tc__tensor *)e->g->values[n->in[input]].init;
    assert_int_equal(tc__engine_blob_write(e, &blob, &blob_size, &ierr), TC_STATUS_OK);
    w->nbytes -= 64;
    void *short_plan = ptu_replan(e, blob, blob_size, &size);
    w->nbytes += 64;
    ptu_expect_load_failure(short_plan, size, TC_STATUS_CORRUPT_FILE, "that its tactic does not write");
    free(blob);
    tc_engine_destroy(f32);
    tc_engine_destroy(e);
    unlink(cache);
    unlink(plan);
    tc_model_destroy(m);
}

/* Why a tactic was no candidate, as the build saw it (inspect --verbose): a layer kept FP32 has its INT8 tactics refused
 * for want of an input scale, tactics needing ISA this CPU lacks say which, and the reasons survive save and load. */
static void test_rejection_reasons(void **state) {
    (void)state;
    if (!have_int8()) skip();
    tc_model *m = itm_model(0x99);
    char cache[128], plan[128];
    temp_path(cache, sizeof cache, "rcache");
    temp_path(plan, sizeof plan, "rplan");
    calibrate(m, TC_CALIB_MINMAX, cache);
    const char *fp32[1] = {"mid"};
    tc_engine *e = build_int8(m, cache, TC_BUILD_TACTICS_FIXED, 0, 1, 1, fp32);
    tc_error err;
    assert_int_equal(tc_engine_save(e, plan, &err), TC_STATUS_OK);
    tc_engine *loaded = NULL;
    assert_int_equal(tc_engine_load(plan, &loaded, &err), TC_STATUS_OK);
    for (int pass = 0; pass < 2; pass++) {
        const tc_engine *x = pass ? loaded : e;
        bool no_scale = false, needs_isa = false, checked = false;
        for (int k = 0; k < tc_engine_num_steps(x); k++) {
            tc_step_info si;
            assert_int_equal(tc_engine_step_info(x, k, &si), TC_STATUS_OK);
            if (strcmp(si.name, "mid") != 0) continue;
            checked = true;
            assert_string_equal(si.precision, "fp32");
            for (int j = 0; j < tc_engine_step_num_rejected(x, k); j++) {
                tc_tactic_rejection r;
                assert_int_equal(tc_engine_step_rejected(x, k, j, &r), TC_STATUS_OK);
                if (strstr(r.name, "int8") && strstr(r.reason, "no INT8 input scale")) no_scale = true;
                if (strstr(r.reason, "(not usable here)")) needs_isa = true;
            }
            tc_tactic_rejection r;
            assert_int_equal(tc_engine_step_rejected(x, k, tc_engine_step_num_rejected(x, k), &r),
                             TC_STATUS_INVALID_ARGUMENT);
        }
        assert_true(checked);
        if (!no_scale) fail_msg("step 'mid' (kept FP32) does not say its INT8 tactics lacked an input scale");
        /* this CPU lacks some ISA the list uses (AMX or AVX512-FP16 here; the emulation build has them all) */
        if ((tc__cpu_get()->isa & (TC__ISA_AMX_INT8 | TC__ISA_AVX512FP16)) != (TC__ISA_AMX_INT8 | TC__ISA_AVX512FP16))
            assert_true(needs_isa);
    }
    tc_engine_destroy(loaded);
    tc_engine_destroy(e);
    unlink(cache);
    unlink(plan);
    tc_model_destroy(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_amx_chosen),
        cmocka_unit_test(test_dense_chain),
        cmocka_unit_test(test_depthwise_chain),
        cmocka_unit_test(test_depthwise_chain_vnni),
        cmocka_unit_test(test_qdq_elide),
        cmocka_unit_test(test_half_chain),
        cmocka_unit_test(test_int8_end_to_end),
        cmocka_unit_test(test_packed_weights),
        cmocka_unit_test(test_rejection_reasons),
        cmocka_unit_test(test_int8_chain),
        cmocka_unit_test(test_int8_errors),
        cmocka_unit_test(test_reduce_range),
        cmocka_unit_test(test_act_floor_codes),
        cmocka_unit_test(test_se_mul_chain),
        cmocka_unit_test(test_residual_chain),
        cmocka_unit_test(test_residual_image_chain),
        cmocka_unit_test(test_residual_operand_image),
        cmocka_unit_test(test_half_residual_image),
        cmocka_unit_test(test_bf16_attention),
        cmocka_unit_test(test_u8_chain),
        cmocka_unit_test(test_u8_residual_image),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
