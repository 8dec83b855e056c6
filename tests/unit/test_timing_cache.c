/* test_timing_cache.c - the auto-tuner's timing cache (save/load round trip, another machine's
 * fingerprint, malformed files), the tuner itself on a real step (winner = fastest, ref last), and the
 * check of a tactic against its proof (tactic.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "backends/ref/ref.h"
#include "core/cpu.h"
#include "tactics/tuner.h"

static void path_for(char *buf, size_t n, const char *tag) { snprintf(buf, n, "/tmp/tc_tcache_%d_%s", (int)getpid(), tag); }

static tc__tune_result sample(int winner) {
    tc__tune_result r = {.n = 3, .winner = winner};
    snprintf(r.cand[0].name, sizeof r.cand[0].name, "conv_im2col_f32_avx512");
    snprintf(r.cand[1].name, sizeof r.cand[1].name, "conv1x1_f32_avx2");
    snprintf(r.cand[2].name, sizeof r.cand[2].name, "ref");
    for (int i = 0; i < 3; i++) {
        r.cand[i].min_ns = 900u * (uint64_t)(i + 1);
        r.cand[i].median_ns = 1000u * (uint64_t)(i + 1);
        r.cand[i].max_ns = 1500u * (uint64_t)(i + 1);
    }
    r.cand[2].max_ns = UINT64_MAX;
    return r;
}

static void test_round_trip_and_fingerprint(void **state) {
    (void)state;
    char path[128];
    path_for(path, sizeof path, "rt");
    unlink(path);
    tc__err err = {0};
    tc__timing_cache *c = NULL;
    assert_int_equal(tc__timing_cache_load(path, 42, &c, &err), TC_STATUS_OK); /* missing file: empty */
    assert_null(tc__timing_cache_find(c, 7));
    tc__tune_result r = sample(1);
    r.cand[0].config = -1, r.cand[1].config = 3, r.cand[2].config = 0; /* a configuration's candidate: "name#3" */
    assert_int_equal(tc__timing_cache_put(c, 7, &r, &err), TC_STATUS_OK);
    r.winner = 2;
    assert_int_equal(tc__timing_cache_put(c, 0xdeadbeefcafeull, &r, &err), TC_STATUS_OK);
    assert_int_equal(tc__timing_cache_save(c, path, &err), TC_STATUS_OK);
    tc__timing_cache_free(c);

    assert_int_equal(tc__timing_cache_load(path, 42, &c, &err), TC_STATUS_OK);
    const tc__tune_result *got = tc__timing_cache_find(c, 7);
    assert_non_null(got);
    assert_int_equal(got->winner, 1);
    assert_int_equal(got->n, 3);
    assert_string_equal(got->cand[0].name, "conv_im2col_f32_avx512");
    assert_int_equal(got->cand[0].config, -1);
    assert_int_equal(got->cand[1].config, 3);
    assert_int_equal(got->cand[2].config, 0);
    assert_string_equal(got->cand[1].name, r.cand[1].name);
    assert_int_equal(got->cand[1].median_ns, 2000);
    assert_int_equal(got->cand[1].min_ns, 1800);
    assert_true(got->cand[2].max_ns == UINT64_MAX);
    assert_int_equal(tc__timing_cache_find(c, 0xdeadbeefcafeull)->winner, 2);
    tc__timing_cache_free(c);

    /* Another machine's cache is ignored, not trusted. */
    assert_int_equal(tc__timing_cache_load(path, 43, &c, &err), TC_STATUS_OK);
    assert_null(tc__timing_cache_find(c, 7));
    tc__timing_cache_free(c);
    unlink(path);
}

static void test_malformed_files_are_empty(void **state) {
    (void)state;
    const char *bad[] = {
        "",
        "not a cache\n",
        "tailcut-timing-cache 2 000000000000002a\n0000000000000007 5 3 a 1 1 1 b 2 2 2 c 3 3 3\n", /* winner out of range */
        "tailcut-timing-cache 2 000000000000002a\n0000000000000007 0 99 a 1 1 1\n",           /* too many candidates */
        "tailcut-timing-cache 2 000000000000002a\n0000000000000007 0 2 a 1 1 1\n",            /* truncated line */
        "tailcut-timing-cache 2 000000000000002a\n0000000000000007 0 1 a 1 1\n",              /* no min (version 1 line) */
        "tailcut-timing-cache 1 000000000000002a\n0000000000000007 0 1 a 1 1\n",              /* another version */
        "tailcut-timing-cache 2 000000000000002a\n0000000000000007 0 1 a 1 1 1",             /* no final newline */
        "tailcut-timing-cache 3 000000000000002a\n0000000000000007 0 1 a#x 1 1 1\n",         /* bad configuration */
        "tailcut-timing-cache 3 000000000000002a\n0000000000000007 0 1 a#99 1 1 1\n",        /* configuration index */
        "tailcut-timing-cache 3 000000000000002a\n0000000000000007 0 1 #1 1 1 1\n",          /* no name */
        "tailcut-timing-cache 3 000000000000002a\n0000000000000007 0 1 a#-1 1 1 1\n",        /* negative index */
    };
    char path[128];
    path_for(path, sizeof path, "bad");
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(bad[k], f);
        fclose(f);
        tc__err err = {0};
        tc__timing_cache *c = NULL;
        assert_int_equal(tc__timing_cache_load(path, 42, &c, &err), TC_STATUS_OK);
        assert_null(tc__timing_cache_find(c, 7));
        tc__timing_cache_free(c);
    }
    /* a version 2 file (before configurations) is still read */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("tailcut-timing-cache 2 000000000000002a\n0000000000000007 0 1 ref 1 1 1\n", f);
    fclose(f);
    tc__err err = {0};
    tc__timing_cache *c = NULL;
    assert_int_equal(tc__timing_cache_load(path, 42, &c, &err), TC_STATUS_OK);
    assert_non_null(tc__timing_cache_find(c, 7));
    assert_int_equal(tc__timing_cache_find(c, 7)->cand[0].config, -1);
    tc__timing_cache_free(c);
    unlink(path);
}

static void test_tuner_times_candidates(void **state) {
    (void)state;
    /* A Relu step on [1, 64, 56, 56]: every fast Relu tactic this CPU allows, then the reference. */
    int64_t dims[4] = {1, 64, 56, 56};
    tc__tensor x = {.dtype = TC_DTYPE_FLOAT32, .rank = 4}, y;
    memcpy(x.dims, dims, sizeof dims);
    x.nbytes = 4 * 64 * 56 * 56;
    y = x;
    const tc__tensor *in[1] = {&x}, *out[1] = {&y};
    bool cst[1] = {false};
    tc__epilogue none = tc__epilogue_none();
    tc__step_desc d = {.op_type = "Relu", .opset = 17, .n_in = 1, .in = in, .in_const = cst, .n_out = 1, .out = out,
                       .epi = &none};
    const tc__tactic *cands[TC__TUNE_MAX_CANDIDATES];
    int n = tc__tactics_for(&tc__backend_cpu, "Relu", tc__cpu_get()->isa, cands, TC__TUNE_MAX_CANDIDATES);
    tc__tune_result r;
    tc__err err = {0};
    assert_int_equal(tc__tune_step(&d, cands, n, 5, &tc__backend_cpu, NULL, &r, &err), TC_STATUS_OK);
    assert_int_equal(r.n, n); /* the reference kernel last: a tactic of the list */
    assert_string_equal(r.cand[n - 1].name, "ref");
    assert_true(cands[n - 1]->flags & TC__TACTIC_FALLBACK);
    for (int i = 0; i < r.n; i++) { /* every candidate ran (on the inputs the candidates share), the slow ones once */
        assert_true(r.cand[i].min_ns != UINT64_MAX);
        assert_true(r.cand[r.winner].min_ns <= r.cand[i].min_ns); /* ranked by the fastest run */
        assert_true(r.cand[i].min_ns <= r.cand[i].median_ns && r.cand[i].median_ns <= r.cand[i].max_ns);
    }
    uint64_t s1 = tc__step_signature(&d);
    dims[3] = 57;
    memcpy(x.dims, dims, sizeof dims);
    assert_int_not_equal(s1, tc__step_signature(&d)); /* shapes are part of the signature */
}

/* Relu tactics for the proof check: the reference itself, a twin that matches it, one that differs in one value and
 * one that fails. */
static tc_status relu_off(const tc__kernel_ctx *ctx) {
    tc_status st = tc__ref_Relu(ctx);
    float *y = ctx->out[0]->data;
    y[tc__tensor_numel(ctx->out[0]) - 1] += 1.0f;
    return st;
}
static tc_status relu_near(const tc__kernel_ctx *ctx) {
    tc_status st = tc__ref_Relu(ctx);
    float *y = ctx->out[0]->data;
    y[tc__tensor_numel(ctx->out[0]) - 1] += 1e-5f;
    return st;
}
static tc_status relu_fails(const tc__kernel_ctx *ctx) { return tc__fail(ctx->err, TC_STATUS_INTERNAL, "refused"); }
static bool any_step(const tc__step_desc *d) { return d != NULL; }
static const tc__tactic kRelu = {.name = "relu_proof", .op_type = "Relu", .supports = any_step, .run = tc__ref_Relu};

static void test_tactic_proof(void **state) {
    (void)state;
    int64_t dims[2] = {3, 37};
    tc__tensor x = {.dtype = TC_DTYPE_FLOAT32, .rank = 2}, y;
    memcpy(x.dims, dims, sizeof dims);
    x.nbytes = 4 * 3 * 37;
    y = x;
    const tc__tensor *in[1] = {&x}, *out[1] = {&y};
    bool cst[1] = {false};
    tc__epilogue none = tc__epilogue_none();
    tc__step_desc d = {.op_type = "Relu", .opset = 17, .n_in = 1, .in = in, .in_const = cst, .n_out = 1, .out = out,
                       .epi = &none};
    const tc__tactic same = {.name = "relu_same", .op_type = "Relu", .supports = any_step, .run = tc__ref_Relu,
                             .proof = &kRelu};
    const tc__tactic off = {.name = "relu_off", .op_type = "Relu", .supports = any_step, .run = relu_off, .proof = &kRelu};
    const tc__tactic fails = {.name = "relu_fails", .op_type = "Relu", .supports = any_step, .run = relu_fails,
                              .proof = &kRelu};
    tc__err err = {0};
    bool ok = false;
    assert_int_equal(tc__tactic_proven(&d, &same, NULL, &ok, &err), TC_STATUS_OK);
    assert_true(ok);
    assert_int_equal(tc__tactic_proven(&d, &off, NULL, &ok, &err), TC_STATUS_OK);
    assert_false(ok);
    assert_int_equal(tc__tactic_proven(&d, &fails, NULL, &ok, &err), TC_STATUS_OK);
    assert_false(ok);
    assert_int_equal(tc__tactic_proven(&d, &kRelu, NULL, &ok, &err), TC_STATUS_OK); /* no proof: nothing to check */
    assert_true(ok);
    /* with a tolerance (FP32 sums in another order): 1e-5 passes 1e-3 of the largest output, 1.0 does not */
    const tc__tactic near = {.name = "relu_near", .op_type = "Relu", .supports = any_step, .run = relu_near,
                             .proof = &kRelu}, near_tol = {.name = "relu_near", .op_type = "Relu", .supports = any_step,
                                                          .run = relu_near, .proof = &kRelu, .proof_tol = 1e-3f},
                     off_tol = {.name = "relu_off", .op_type = "Relu", .supports = any_step, .run = relu_off,
                                .proof = &kRelu, .proof_tol = 1e-3f};
    assert_int_equal(tc__tactic_proven(&d, &near, NULL, &ok, &err), TC_STATUS_OK);
    assert_false(ok);
    assert_int_equal(tc__tactic_proven(&d, &near_tol, NULL, &ok, &err), TC_STATUS_OK);
    assert_true(ok);
    assert_int_equal(tc__tactic_proven(&d, &off_tol, NULL, &ok, &err), TC_STATUS_OK);
    assert_false(ok);
}

/* Packing for the packed-proof check: a copy that counts its calls. */
static int g_packs;
static bool packs_x(const tc__step_desc *d, int i) { return i == 0 && d->in_const[0]; }
static tc_status pack_copy(const tc__step_desc *d, int i, const void *src, void *dst, tc__err *err) {
    (void)err;
    g_packs++;
    memcpy(dst, src, d->in[i]->nbytes);
    return TC_STATUS_OK;
}
static tc_status pack_other(const tc__step_desc *d, int i, const void *src, void *dst, tc__err *err) {
    return pack_copy(d, i, src, dst, err);
}

/* tc__tactic_proven_packed (the engine's proof after packing): constant inputs are used as given, not packed again;
 * a tactic and a proof that pack differently are refused. */
static void test_tactic_proof_packed(void **state) {
    (void)state;
    float xv[3 * 37];
    for (int k = 0; k < 3 * 37; k++) xv[k] = (float)(k % 7) - 3.0f;
    tc__tensor x = {.dtype = TC_DTYPE_FLOAT32, .rank = 2, .dims = {3, 37}, .nbytes = sizeof xv, .data = xv}, y = x;
    y.data = NULL;
    const tc__tensor *in[1] = {&x}, *out[1] = {&y};
    bool cst[1] = {true};
    tc__epilogue none = tc__epilogue_none();
    tc__step_desc d = {.op_type = "Relu", .opset = 17, .n_in = 1, .in = in, .in_const = cst, .n_out = 1, .out = out,
                       .epi = &none};
    const tc__tactic twin = {.name = "relu_twin", .op_type = "Relu", .supports = any_step, .run = tc__ref_Relu,
                             .packs_input = packs_x, .pack = pack_copy};
    const tc__tactic t = {.name = "relu_packed", .op_type = "Relu", .supports = any_step, .run = tc__ref_Relu,
                          .packs_input = packs_x, .pack = pack_copy, .proof = &twin};
    const tc__tactic other = {.name = "relu_other", .op_type = "Relu", .supports = any_step, .run = tc__ref_Relu,
                              .packs_input = packs_x, .pack = pack_other, .proof = &twin};
    tc__err err = {0};
    bool ok = false;
    g_packs = 0;
    assert_int_equal(tc__tactic_proven(&d, &t, NULL, &ok, &err), TC_STATUS_OK);
    assert_true(ok);
    assert_int_equal(g_packs, 2); /* each packs its own copy */
    assert_int_equal(tc__tactic_proven_packed(&d, &t, NULL, &ok, &err), TC_STATUS_OK);
    assert_true(ok);
    assert_int_equal(g_packs, 2); /* nothing packed again */
    assert_int_equal(tc__tactic_proven(&d, &other, NULL, &ok, &err), TC_STATUS_OK);
    assert_true(ok);
    assert_int_equal(tc__tactic_proven_packed(&d, &other, NULL, &ok, &err), TC_STATUS_INTERNAL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tactic_proof_packed),
        cmocka_unit_test(test_round_trip_and_fingerprint),
        cmocka_unit_test(test_malformed_files_are_empty),
        cmocka_unit_test(test_tuner_times_candidates),
        cmocka_unit_test(test_tactic_proof),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
