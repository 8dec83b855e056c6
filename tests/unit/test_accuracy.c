/* test_accuracy.c - tc_engine_build_accurate (INT8 with an accuracy target) through the public API on a small CNN:
 * a reachable threshold keeps the INT8 layers, an unreachable one moves them out of INT8 round by round (logged)
 * until the outputs equal the FP32 engine's, the top-1 metric, and refusals of bad options and samples. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/cpu.h"
#include "int8_test_model.h"

#define NS 6

typedef struct fixture {
    tc_model *model;
    tc_calibrator *cal;
    tc_tensor samples[NS];
    char cache[64];
} fixture;

static int setup(void **state) {
    static fixture f;
    memset(&f, 0, sizeof f);
    f.model = itm_model(7);
    tc_error err;
    if (tc_calibrator_create(f.model, &f.cal, &err) != TC_STATUS_OK) return -1;
    const char *names[1] = {"x"};
    for (int s = 0; s < NS; s++) {
        f.samples[s] = itm_input();
        if (tc_calibrator_add(f.cal, 1, names, &f.samples[s], &err) != TC_STATUS_OK) return -1;
    }
    snprintf(f.cache, sizeof f.cache, "/tmp/tc_test_accuracy_%d.cache", (int)getpid());
    if (tc_calibrator_save(f.cal, TC_CALIB_ENTROPY, 99.99, f.cache, &err) != TC_STATUS_OK) return -1;
    *state = &f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    for (int s = 0; s < NS; s++) tc_tensor_free(&f->samples[s]);
    tc_calibrator_destroy(f->cal);
    tc_model_destroy(f->model);
    unlink(f->cache);
    return 0;
}

static int int8_steps(const tc_engine *e) {
    int n = 0;
    for (int i = 0; i < tc_engine_num_steps(e); i++) {
        tc_step_info si;
        assert_int_equal(tc_engine_step_info(e, i, &si), TC_STATUS_OK);
        n += strcmp(si.precision, "int8") == 0;
    }
    return n;
}

typedef struct log_count {
    int rounds, moved;
    char last[512];
} log_count;

static void count_line(void *user, const char *line) {
    log_count *c = user;
    c->rounds += strncmp(line, "accuracy: ", 10) == 0;
    c->moved += strncmp(line, "  to fp32: ", 11) == 0;
    snprintf(c->last, sizeof c->last, "%s", line);
}

static const char *const g_names[1] = {"x"};

static tc_accuracy_options options(fixture *f, double threshold, tc_accuracy_metric metric, log_count *log) {
    tc_accuracy_options a = {.struct_size = sizeof a, .calibrator = f->cal, .method = TC_CALIB_ENTROPY,
                             .percentile = 99.99, .metric = metric, .threshold = threshold, .num_samples = NS,
                             .num_inputs = 1, .input_names = g_names, .samples = f->samples, .log = count_line,
                             .log_user = log};
    return a;
}

static void test_thresholds(void **state) {
    fixture *f = *state;
    const uint64_t avx2 = (uint64_t)(TC__ISA_AVX2 | TC__ISA_FMA);
    if ((tc__cpu_get()->isa & avx2) != avx2) skip();
    tc_build_options o = {.struct_size = sizeof o, .threads = 1, .flags = TC_BUILD_INT8 | TC_BUILD_TACTICS_FIXED,
                          .calib_cache = f->cache};
    tc_error err;
    /* reachable: the first round keeps every INT8 layer */
    log_count lc = {0};
    tc_accuracy_options a = options(f, 0.5, TC_ACCURACY_COSINE, &lc);
    tc_engine *e = NULL;
    double got = 0;
    assert_int_equal(tc_engine_build_accurate(f->model, &o, &a, &e, &got, &err), TC_STATUS_OK);
    assert_true(got >= 0.5 && got < 1.0);
    assert_int_equal(lc.rounds, 1);
    assert_non_null(strstr(lc.last, "accuracy: 0 layer(s) kept out of INT8 (fp32)"));
    const int all = int8_steps(e);
    assert_true(all >= 3);
    tc_engine_destroy(e);
    /* unreachable but for FP32: every layer moves out, 1, 2, 4 at a time, and the outputs are the FP32 engine's */
    memset(&lc, 0, sizeof lc);
    a = options(f, 1.0, TC_ACCURACY_COSINE, &lc);
    assert_int_equal(tc_engine_build_accurate(f->model, &o, &a, &e, &got, &err), TC_STATUS_OK);
    assert_true(got > 0.9999999);
    assert_int_equal(int8_steps(e), 0);
    assert_int_equal(lc.moved, 4); /* stem, mid, proj, classifier */
    assert_true(lc.rounds >= 3);
    tc_engine_destroy(e);
    /* top-1 on a 10-class output: met at some round, with at most as many INT8 layers as before */
    memset(&lc, 0, sizeof lc);
    a = options(f, 1.0, TC_ACCURACY_TOP1, &lc);
    assert_int_equal(tc_engine_build_accurate(f->model, &o, &a, &e, &got, &err), TC_STATUS_OK);
    assert_true(got == 1.0);
    assert_non_null(strstr(lc.last, "top-1 agreement 1.000000"));
    assert_true(int8_steps(e) <= all);
    tc_engine_destroy(e);
}

static void test_refusals(void **state) {
    fixture *f = *state;
    tc_build_options o = {.struct_size = sizeof o, .threads = 1, .flags = TC_BUILD_INT8 | TC_BUILD_TACTICS_FIXED,
                          .calib_cache = f->cache};
    tc_error err;
    tc_engine *e = NULL;
    log_count lc = {0};
    tc_accuracy_options a = options(f, 1.5, TC_ACCURACY_COSINE, &lc);
    assert_int_equal(tc_engine_build_accurate(f->model, &o, &a, &e, NULL, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "(0, 1]"));
    a = options(f, 0.9, (tc_accuracy_metric)7, &lc);
    assert_int_equal(tc_engine_build_accurate(f->model, &o, &a, &e, NULL, &err), TC_STATUS_INVALID_ARGUMENT);
    a = options(f, 0.9, TC_ACCURACY_COSINE, &lc);
    a.num_samples = 0;
    assert_int_equal(tc_engine_build_accurate(f->model, &o, &a, &e, NULL, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "samples"));
    a = options(f, 0.9, TC_ACCURACY_COSINE, &lc);
    a.struct_size = 8;
    assert_int_equal(tc_engine_build_accurate(f->model, &o, &a, &e, NULL, &err), TC_STATUS_INVALID_ARGUMENT);
    a = options(f, 0.9, TC_ACCURACY_COSINE, &lc);
    a.calibrator = NULL;
    assert_int_equal(tc_engine_build_accurate(f->model, &o, &a, &e, NULL, &err), TC_STATUS_INVALID_ARGUMENT);
    a = options(f, 0.9, TC_ACCURACY_COSINE, &lc);
    tc_build_options fp32 = o;
    fp32.flags = TC_BUILD_TACTICS_FIXED;
    assert_int_equal(tc_engine_build_accurate(f->model, &fp32, &a, &e, NULL, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "INT8"));
    /* a sample of another dtype: the run refuses it, with the input's name */
    tc_tensor wrong;
    assert_int_equal(tc_tensor_alloc(TC_DTYPE_FLOAT64, 4, (int64_t[]){1, 3, HW, HW}, &wrong, NULL), TC_STATUS_OK);
    for (size_t k = 0; k < wrong.nbytes / 8; k++) ((double *)wrong.data)[k] = 0.5 + (double)(k % 7);
    a = options(f, 0.9, TC_ACCURACY_COSINE, &lc);
    a.samples = &wrong;
    a.num_samples = 1;
    assert_int_equal(tc_engine_build_accurate(f->model, &o, &a, &e, NULL, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "sample 0"));
    assert_non_null(strstr(err.message, "float64"));
    assert_null(e);
    tc_tensor_free(&wrong);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thresholds),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
