/* test_engine.c - engines and contexts: build vs reference on dynamic batches, profile bounds,
 * plan save/load round trip and byte-identical rebuilds, corrupt plan files, concurrent contexts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <pthread.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine_test_model.h"

static void test_dynamic_batches_match_reference(void **state) {
    (void)state;
    tc_model *m = etm_model();
    tc_engine *e = etm_engine(m, 1, 2, 4, 0);
    /* Conv+BN+Relu, Conv+Add+Relu, GAP, Flatten (view), Gemm: passes must have fused (plus a reorder when the tuner
     * took the blocked layout, its 4 channels padded to a block). */
    int computed = 0;
    tc_step_info si;
    for (int k = 0; k < tc_engine_num_steps(e); k++) {
        assert_int_equal(tc_engine_step_info(e, k, &si), TC_STATUS_OK);
        computed += !si.is_reorder;
    }
    assert_true(computed <= 5);
    assert_int_equal(tc_engine_step_info(e, 0, &si), TC_STATUS_OK);
    assert_string_equal(si.ops, "Conv+BatchNormalization+Relu");
    tc_context *c = NULL;
    assert_int_equal(tc_context_create(e, 0, &c, NULL), TC_STATUS_OK);
    const int64_t batches[] = {1, 3, 4, 2, 1};
    for (size_t k = 0; k < sizeof batches / sizeof batches[0]; k++) {
        tc_tensor x = etm_input(batches[k]);
        tc_tensor want = etm_reference(m, &x);
        float y[20];
        etm_run(c, &x, y);
        tc_tensor got;
        assert_int_equal(tc_context_tensor(c, "y", &got), TC_STATUS_OK);
        assert_int_equal(got.dims[0], batches[k]);
        assert_int_equal(got.dims[1], 5);
        etm_expect_close(y, want.data, (size_t)(5 * batches[k]));
        tc_tensor_free(&x);
        tc_tensor_free(&want);
    }
    tc_memory_info mem;
    assert_int_equal(tc_engine_memory_info(e, 0, &mem), TC_STATUS_OK);
    assert_true(mem.arena_bytes > 0 && mem.arena_bytes < mem.naive_bytes);
    tc_context_destroy(c);
    tc_engine_destroy(e);
    tc_model_destroy(m);
}

/* tc_context_set_threads swaps the pool between runs; results must not change. */
static void test_set_threads_keeps_results(void **state) {
    (void)state;
    tc_model *m = etm_model();
    tc_engine *e = etm_engine(m, 1, 2, 4, 0);
    tc_context *c = NULL;
    assert_int_equal(tc_context_create(e, 0, &c, NULL), TC_STATUS_OK);
    tc_tensor x = etm_input(3);
    tc_tensor want = etm_reference(m, &x);
    const int threads[] = {1, 3, 0, 2};
    for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        assert_int_equal(tc_context_set_threads(c, threads[k]), TC_STATUS_OK);
        float y[20];
        etm_run(c, &x, y);
        etm_expect_close(y, want.data, 15);
    }
    assert_int_equal(tc_context_set_threads(c, -1), TC_STATUS_INVALID_ARGUMENT);
    assert_int_equal(tc_context_set_threads(NULL, 1), TC_STATUS_INVALID_ARGUMENT);
    tc_tensor_free(&x);
    tc_tensor_free(&want);
    tc_context_destroy(c);
    tc_engine_destroy(e);
    tc_model_destroy(m);
}

static void test_profile_bounds_and_binding_errors(void **state) {
    (void)state;
    tc_model *m = etm_model();
    tc_engine *e = etm_engine(m, 1, 2, 4, 0);
    tc_context *c = NULL;
    assert_int_equal(tc_context_create(e, 0, &c, NULL), TC_STATUS_OK);
    int64_t big[4] = {5, 3, 8, 8}, bad[4] = {2, 3, 9, 8}, ok[4] = {2, 3, 8, 8};
    assert_int_equal(tc_context_set_input_shape(c, "x", 4, big), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(tc_context_error(c), "outside the profile"));
    assert_int_equal(tc_context_set_input_shape(c, "x", 4, bad), TC_STATUS_INVALID_ARGUMENT);
    assert_int_equal(tc_context_set_input_shape(c, "x", 3, ok), TC_STATUS_INVALID_ARGUMENT);
    assert_int_equal(tc_context_set_input_shape(c, "nope", 4, ok), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(tc_context_error(c), "nope"));
    assert_int_equal(tc_context_set_input_shape(c, "x", 4, ok), TC_STATUS_OK);
    /* Unbound input. */
    assert_int_equal(tc_context_run(c), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(tc_context_error(c), "not bound"));
    /* A buffer too small for the shape. */
    tc_tensor x = etm_input(2);
    assert_int_equal(tc_context_set_tensor(c, "x", x.data, x.nbytes / 2), TC_STATUS_OK);
    assert_int_equal(tc_context_run(c), TC_STATUS_INVALID_ARGUMENT);
    float y[10];
    assert_int_equal(tc_context_set_tensor(c, "x", x.data, x.nbytes), TC_STATUS_OK);
    assert_int_equal(tc_context_set_tensor(c, "y", y, 4), TC_STATUS_OK);
    assert_int_equal(tc_context_run(c), TC_STATUS_INVALID_ARGUMENT);
    assert_int_equal(tc_context_set_tensor(c, "y", y, sizeof y), TC_STATUS_OK);
    assert_int_equal(tc_context_run(c), TC_STATUS_OK);
    tc_tensor want = etm_reference(m, &x);
    etm_expect_close(y, want.data, 10);
    tc_tensor_free(&want);
    tc_tensor_free(&x);
    /* Profiles must be well-formed. */
    tc_input_range r = {.name = "x", .rank = 4, .min = {3, 3, 8, 8}, .opt = {2, 3, 8, 8}, .max = {4, 3, 8, 8}};
    tc_profile p = {1, &r};
    tc_build_options o = {.struct_size = sizeof o, .num_profiles = 1, .profiles = &p};
    tc_engine *e2 = NULL;
    tc_error err;
    assert_int_equal(tc_engine_build(m, &o, &e2, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "min <= opt <= max"));
    r.min[0] = 1;
    r.min[2] = r.opt[2] = r.max[2] = 9; /* the model fixes dim 2 at 8 */
    assert_int_equal(tc_engine_build(m, &o, &e2, &err), TC_STATUS_INVALID_ARGUMENT);
    tc_build_options none = {.struct_size = sizeof none};
    assert_int_equal(tc_engine_build(m, &none, &e2, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "dynamic"));
    /* struct_size: a caller built against an older, shorter tc_build_options still builds (the fields it
     * lacks are zero); too short or longer than this library knows is refused. */
    r.min[2] = r.opt[2] = r.max[2] = 8;
    o.struct_size = (uint32_t)offsetof(tc_build_options, num_no_int8_layers);
    assert_int_equal(tc_engine_build(m, &o, &e2, &err), TC_STATUS_OK);
    tc_engine_destroy(e2);
    e2 = NULL;
    o.struct_size = 8;
    assert_int_equal(tc_engine_build(m, &o, &e2, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "struct_size"));
    o.struct_size = sizeof o + 8;
    assert_int_equal(tc_engine_build(m, &o, &e2, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_null(e2);
    tc_context_destroy(c);
    tc_engine_destroy(e);
    tc_model_destroy(m);
}

/* Issue 26: a tensor of another dtype than the input's is refused by the typed binding, the reference executor and
 * the calibrator, with a reason naming the input, both dtypes and the cast; its bytes are never read as float32. */
static void test_input_dtype_refused(void **state) {
    (void)state;
    tc_model *m = etm_model();
    tc_engine *e = etm_engine(m, 1, 2, 4, 0);
    tc_context *c = NULL;
    assert_int_equal(tc_context_create(e, 0, &c, NULL), TC_STATUS_OK);
    tc_tensor x = etm_input(2), x64, xi64;
    assert_int_equal(tc_tensor_alloc(TC_DTYPE_FLOAT64, x.rank, x.dims, &x64, NULL), TC_STATUS_OK);
    assert_int_equal(tc_tensor_alloc(TC_DTYPE_INT64, x.rank, x.dims, &xi64, NULL), TC_STATUS_OK);
    for (size_t i = 0; i < x.nbytes / sizeof(float); i++) {
        ((double *)x64.data)[i] = ((const float *)x.data)[i];
        ((int64_t *)xi64.data)[i] = (int64_t)(((const float *)x.data)[i] * 4);
    }
    const tc_tensor *wrong[2] = {&x64, &xi64};
    const char *names[1] = {"x"};
    tc_error err;
    tc_tensor out[1];
    for (int k = 0; k < 2; k++) {
        const char *dt = k ? "int64" : "float64";
        assert_int_equal(tc_context_set_input(c, "x", wrong[k]), TC_STATUS_INVALID_ARGUMENT);
        const char *msg = tc_context_error(c);
        assert_true(strstr(msg, "input 'x'") && strstr(msg, dt) && strstr(msg, "float32") &&
                    strstr(msg, "cast it (numpy: a.astype(np.float32))"));
        assert_int_equal(tc_model_run_reference(m, 1, names, wrong[k], out, &err), TC_STATUS_INVALID_ARGUMENT);
        assert_true(strstr(err.message, "input 'x'") && strstr(err.message, dt) && strstr(err.message, "astype"));
        tc_calibrator *cal = NULL;
        assert_int_equal(tc_calibrator_create(m, &cal, &err), TC_STATUS_OK);
        assert_int_equal(tc_calibrator_add(cal, 1, names, wrong[k], &err), TC_STATUS_INVALID_ARGUMENT);
        assert_true(strstr(err.message, "input 'x'") && strstr(err.message, dt) && strstr(err.message, "astype"));
        assert_int_equal(tc_calibrator_num_samples(cal), 0);
        assert_int_equal(tc_calibrator_add(cal, 1, names, &x, &err), TC_STATUS_OK);
        tc_calibrator_destroy(cal);
    }
    /* A tensor whose byte count does not match its shape is refused too; the right tensor runs as the reference. */
    tc_tensor shortx = x;
    shortx.nbytes /= 2;
    assert_int_equal(tc_context_set_input(c, "x", &shortx), TC_STATUS_INVALID_ARGUMENT);
    assert_int_equal(tc_context_set_input(c, "nope", &x), TC_STATUS_INVALID_ARGUMENT);
    assert_int_equal(tc_context_set_input(c, "x", &x), TC_STATUS_OK);
    assert_int_equal(tc_context_run(c), TC_STATUS_OK);
    tc_tensor y, want = etm_reference(m, &x);
    assert_int_equal(tc_context_tensor(c, "y", &y), TC_STATUS_OK);
    etm_expect_close(y.data, want.data, 10);
    tc_tensor_free(&want);
    tc_tensor_free(&x);
    tc_tensor_free(&x64);
    tc_tensor_free(&xi64);
    tc_context_destroy(c);
    tc_engine_destroy(e);
    tc_model_destroy(m);
}

static char *tmp_file(const char *tag) {
    static char paths[4][128];
    static int k;
    char *p = paths[k++ % 4];
    snprintf(p, 128, "/tmp/tc_test_engine_%d_%s.plan", (int)getpid(), tag);
    return p;
}

static uint8_t *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *d = malloc(*n);
    assert_int_equal(fread(d, 1, *n, f), *n);
    fclose(f);
    return d;
}

static void spit(const char *path, const uint8_t *d, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(d, 1, n, f), n);
    fclose(f);
}

static void test_plan_round_trip_and_determinism(void **state) {
    (void)state;
    tc_model *m = etm_model();
    /* Same model, options and timing cache: byte-identical plans (the first build fills the cache). */
    char *cache = tmp_file("cache");
    unlink(cache);
    tc_engine *e1 = etm_engine_cached(m, 1, 2, 4, 0, cache), *e2 = etm_engine_cached(m, 1, 2, 4, 0, cache);
    char *p1 = tmp_file("a"), *p2 = tmp_file("b");
    assert_int_equal(tc_engine_save(e1, p1, NULL), TC_STATUS_OK);
    assert_int_equal(tc_engine_save(e2, p2, NULL), TC_STATUS_OK);
    size_t n1, n2;
    uint8_t *d1 = slurp(p1, &n1), *d2 = slurp(p2, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(d1, d2, n1);
    tc_engine *loaded = NULL;
    tc_error err;
    assert_int_equal(tc_engine_load(p1, &loaded, &err), TC_STATUS_OK);
    assert_int_equal(tc_engine_num_steps(loaded), tc_engine_num_steps(e1));
    tc_context *c1 = NULL, *c2 = NULL;
    assert_int_equal(tc_context_create(e1, 0, &c1, NULL), TC_STATUS_OK);
    assert_int_equal(tc_context_create(loaded, 0, &c2, NULL), TC_STATUS_OK);
    tc_tensor x = etm_input(3);
    float y1[15], y2[15];
    etm_run(c1, &x, y1);
    etm_run(c2, &x, y2);
    assert_memory_equal(y1, y2, sizeof y1);
    tc_tensor_free(&x);
    tc_context_destroy(c1);
    tc_context_destroy(c2);
    tc_engine_destroy(loaded);

    /* Corrupt files: truncated, a flipped weight byte, not a plan, missing. */
    char *bad = tmp_file("bad");
    spit(bad, d1, n1 / 2);
    assert_int_equal(tc_engine_load(bad, &loaded, &err), TC_STATUS_CORRUPT_FILE);
    assert_null(loaded);
    d1[n1 - 100] ^= 0x40;
    spit(bad, d1, n1);
    assert_int_equal(tc_engine_load(bad, &loaded, &err), TC_STATUS_CORRUPT_FILE);
    assert_non_null(strstr(err.message, "checksum"));
    spit(bad, (const uint8_t *)"hello, not a plan at all, just some bytes........", 50);
    assert_int_equal(tc_engine_load(bad, &loaded, &err), TC_STATUS_CORRUPT_FILE);
    assert_int_equal(tc_engine_load("/nonexistent/x.plan", &loaded, &err), TC_STATUS_IO_ERROR);
    unlink(bad);
    unlink(cache);
    unlink(p1);
    unlink(p2);
    free(d1);
    free(d2);
    tc_engine_destroy(e1);
    tc_engine_destroy(e2);
    tc_model_destroy(m);
}

static void test_passes_off_same_outputs(void **state) {
    (void)state;
    tc_model *m = etm_model();
    tc_engine *fused = etm_engine(m, 1, 2, 4, 0), *plain = etm_engine(m, 1, 2, 4, ~0u);
    assert_true(tc_engine_num_steps(plain) > tc_engine_num_steps(fused));
    tc_context *a = NULL, *b = NULL;
    assert_int_equal(tc_context_create(fused, 0, &a, NULL), TC_STATUS_OK);
    assert_int_equal(tc_context_create(plain, 0, &b, NULL), TC_STATUS_OK);
    tc_tensor x = etm_input(4);
    float ya[20], yb[20];
    etm_run(a, &x, ya);
    etm_run(b, &x, yb);
    etm_expect_close(ya, yb, 20);
    tc_tensor_free(&x);
    tc_context_destroy(a);
    tc_context_destroy(b);
    tc_engine_destroy(fused);
    tc_engine_destroy(plain);
    tc_model_destroy(m);
}

static int count_lines(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int n = 0, ch;
    while ((ch = fgetc(f)) != EOF) n += ch == '\n';
    fclose(f);
    return n;
}

static void test_several_profiles(void **state) {
    (void)state;
    tc_model *m = etm_model();
    tc_input_range r[2] = {{.name = "x", .rank = 4, .min = {1, 3, 8, 8}, .opt = {1, 3, 8, 8}, .max = {2, 3, 8, 8}},
                           {.name = "x", .rank = 4, .min = {3, 3, 8, 8}, .opt = {4, 3, 8, 8}, .max = {6, 3, 8, 8}}};
    tc_profile p[2] = {{1, &r[0]}, {1, &r[1]}};
    /* The tuner times every step at each profile's opt shapes: the timing cache gets the entries of both. */
    char cache1[] = "/tmp/tc_test_cache1_XXXXXX", cache2[] = "/tmp/tc_test_cache2_XXXXXX";
    close(mkstemp(cache1));
    close(mkstemp(cache2));
    unlink(cache1);
    unlink(cache2);
    tc_build_options o = {.struct_size = sizeof o, .num_profiles = 1, .profiles = p, .timing_cache = cache1};
    tc_engine *e = NULL;
    tc_error err;
    assert_int_equal(tc_engine_build(m, &o, &e, &err), TC_STATUS_OK);
    tc_engine_destroy(e);
    o.num_profiles = 2;
    o.timing_cache = cache2;
    assert_int_equal(tc_engine_build(m, &o, &e, &err), TC_STATUS_OK);
    int lines1 = count_lines(cache1), lines2 = count_lines(cache2);
    unlink(cache1);
    unlink(cache2);
    assert_true(lines1 >= 2);
    assert_true(lines2 > lines1);
    assert_int_equal(tc_engine_num_profiles(e), 2);
    tc_memory_info m0, m1;
    assert_int_equal(tc_engine_memory_info(e, 0, &m0), TC_STATUS_OK);
    assert_int_equal(tc_engine_memory_info(e, 1, &m1), TC_STATUS_OK);
    assert_true(m1.arena_bytes > m0.arena_bytes);
    tc_input_range got;
    assert_int_equal(tc_engine_profile_range(e, 1, 0, &got), TC_STATUS_OK);
    assert_int_equal(got.max[0], 6);
    tc_context *c0 = NULL, *c1 = NULL;
    assert_int_equal(tc_context_create(e, 0, &c0, NULL), TC_STATUS_OK);
    assert_int_equal(tc_context_create(e, 1, &c1, NULL), TC_STATUS_OK);
    assert_int_not_equal(tc_context_create(e, 2, &c1, &err), TC_STATUS_OK);
    tc_tensor x = etm_input(5);
    assert_int_equal(tc_context_set_input_shape(c0, "x", 4, x.dims), TC_STATUS_INVALID_ARGUMENT);
    float y[30];
    etm_run(c1, &x, y);
    tc_tensor want = etm_reference(m, &x);
    etm_expect_close(y, want.data, 25);
    tc_tensor_free(&want);
    tc_tensor_free(&x);
    tc_context_destroy(c0);
    tc_context_destroy(c1);
    tc_engine_destroy(e);
    tc_model_destroy(m);
}

/* A timing cache whose entries name tactics this build lacks (a renamed tactic): the steps are timed again and the
 * build succeeds with real tactics, never failing nor falling back to the reference kernels. */
static void test_stale_timing_cache(void **state) {
    (void)state;
    tc_model *m = etm_model();
    tc_input_range r = {.name = "x", .rank = 4, .min = {1, 3, 8, 8}, .opt = {1, 3, 8, 8}, .max = {2, 3, 8, 8}};
    tc_profile p = {1, &r};
    char cache[] = "/tmp/tc_test_stale_XXXXXX";
    close(mkstemp(cache));
    unlink(cache);
    tc_build_options o = {.struct_size = sizeof o, .num_profiles = 1, .profiles = &p, .timing_cache = cache};
    tc_engine *e = NULL;
    tc_error err;
    assert_int_equal(tc_engine_build(m, &o, &e, &err), TC_STATUS_OK);
    tc_engine_destroy(e);
    /* every candidate's name (the 4th field, then every 4th: name min median max) becomes one no build has */
    FILE *f = fopen(cache, "r");
    assert_non_null(f);
    char line[8192], out[65536] = "";
    int renamed = 0;
    for (int ln = 0; fgets(line, sizeof line, f) != NULL; ln++) {
        char *save = NULL, *tok = strtok_r(line, " \n", &save);
        for (int k = 0; tok != NULL; k++, tok = strtok_r(NULL, " \n", &save)) {
            const bool name = ln > 0 && k >= 3 && (k - 3) % 4 == 0;
            renamed += name;
            strcat(out, k ? " " : "");
            strcat(out, name ? "gone_tactic" : tok);
        }
        strcat(out, "\n");
    }
    fclose(f);
    assert_true(renamed >= 2);
    f = fopen(cache, "w");
    assert_non_null(f);
    fputs(out, f);
    fclose(f);
    assert_int_equal(tc_engine_build(m, &o, &e, &err), TC_STATUS_OK);
    f = fopen(cache, "r"); /* timed again: the entries name real tactics once more */
    assert_non_null(f);
    size_t nread = fread(out, 1, sizeof out - 1, f);
    out[nread] = '\0';
    fclose(f);
    unlink(cache);
    assert_null(strstr(out, "gone_tactic"));
    tc_context *c = NULL;
    assert_int_equal(tc_context_create(e, 0, &c, NULL), TC_STATUS_OK);
    tc_tensor x = etm_input(1);
    float y[5];
    etm_run(c, &x, y);
    tc_tensor want = etm_reference(m, &x);
    etm_expect_close(y, want.data, 5);
    tc_tensor_free(&want);
    tc_tensor_free(&x);
    tc_context_destroy(c);
    tc_engine_destroy(e);
    tc_model_destroy(m);
}

typedef struct worker {
    const tc_engine *e;
    tc_tensor x;
    float want[20];
    int failures;
} worker;

static void *work(void *arg) {
    worker *w = arg;
    tc_context *c = NULL;
    if (tc_context_create(w->e, 0, &c, NULL) != TC_STATUS_OK) {
        w->failures++;
        return NULL;
    }
    float y[20];
    for (int it = 0; it < 25; it++) {
        if (tc_context_set_input_shape(c, "x", 4, w->x.dims) || tc_context_set_tensor(c, "x", w->x.data, w->x.nbytes) ||
            tc_context_set_tensor(c, "y", y, sizeof y) || tc_context_run(c)) {
            w->failures++;
            continue;
        }
        for (int64_t i = 0; i < 5 * w->x.dims[0]; i++)
            if (fabsf(y[i] - w->want[i]) > 1e-4f * (1.0f + fabsf(w->want[i]))) w->failures++;
    }
    tc_context_destroy(c);
    return NULL;
}

static void test_concurrent_contexts(void **state) {
    (void)state;
    tc_model *m = etm_model();
    tc_engine *e = etm_engine(m, 1, 2, 4, 0);
    worker ws[4];
    pthread_t th[4];
    for (int k = 0; k < 4; k++) {
        ws[k].e = e;
        ws[k].failures = 0;
        ws[k].x = etm_input(k + 1);
        tc_tensor want = etm_reference(m, &ws[k].x);
        memcpy(ws[k].want, want.data, want.nbytes);
        tc_tensor_free(&want);
    }
    for (int k = 0; k < 4; k++) assert_int_equal(pthread_create(&th[k], NULL, work, &ws[k]), 0);
    for (int k = 0; k < 4; k++) {
        pthread_join(th[k], NULL);
        assert_int_equal(ws[k].failures, 0);
        tc_tensor_free(&ws[k].x);
    }
    tc_engine_destroy(e);
    tc_model_destroy(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dynamic_batches_match_reference),
        cmocka_unit_test(test_set_threads_keeps_results),
        cmocka_unit_test(test_profile_bounds_and_binding_errors),
        cmocka_unit_test(test_input_dtype_refused),
        cmocka_unit_test(test_plan_round_trip_and_determinism),
        cmocka_unit_test(test_passes_off_same_outputs),
        cmocka_unit_test(test_concurrent_contexts),
        cmocka_unit_test(test_several_profiles),
        cmocka_unit_test(test_stale_timing_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
