/* test_cuda_data_errors.c - a kernel that finds invalid input data on the device fails the run, as the reference does
 * on the CPU, instead of returning an output with success: Gather with an index out of range, through plain launches,
 * the captured CUDA graph, its replays and profiled runs; the error names the step, and the next good run succeeds.
 * Skipped where there is no CUDA device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "onnx_test_util.h"
#include "tailcut/tailcut.h"

enum { ROWS = 10, COLS = 4, N = 6 };

static tc_model *gather_model(void) {
    B *b = b_new(13);
    b_input(b, b_vi(b, "ids", 7 /* INT64 */, 1, (const char *[]){"6"}));
    b_output(b, b_vi(b, "y", 1, 2, (const char *[]){"6", "4"}));
    float table[ROWS * COLS];
    for (int i = 0; i < ROWS * COLS; i++) table[i] = 0.5f + (float)i * 0.25f;
    Onnx__TensorProto *t = b_tensor(b, "table", 1, 2, (int64_t[]){ROWS, COLS});
    b_raw(b, t, table, sizeof table);
    b_init(b, t);
    b_node(b, "lookup", "Gather", "table,ids", "y");
    size_t len;
    uint8_t *bytes = b_pack(b, &len);
    tc_model *m = NULL;
    tc_error err;
    if (tc_model_load_buffer(bytes, len, NULL, NULL, &m, &err)) fail_msg("model load: %s", err.message);
    b_free(b);
    return m;
}

/* Runs with ids; true on success, and then checks y's rows. On failure the message must name the step. */
static bool run_ids(tc_context *c, const int64_t *ids) {
    static int64_t in[N];
    static float y[N * COLS];
    memcpy(in, ids, sizeof in);
    for (int i = 0; i < N * COLS; i++) y[i] = -1.0f;
    assert_int_equal(tc_context_set_tensor(c, "ids", in, sizeof in), TC_STATUS_OK);
    assert_int_equal(tc_context_set_tensor(c, "y", y, sizeof y), TC_STATUS_OK);
    tc_status st = tc_context_run(c);
    if (st != TC_STATUS_OK) {
        assert_int_equal(st, TC_STATUS_INVALID_ARGUMENT);
        const char *msg = tc_context_error(c);
        if (strstr(msg, "lookup") == NULL || strstr(msg, "out of range") == NULL)
            fail_msg("the error does not name the step and the cause: %s", msg);
        return false;
    }
    for (int i = 0; i < N; i++) {
        const int64_t r = ids[i] < 0 ? ids[i] + ROWS : ids[i];
        for (int j = 0; j < COLS; j++) assert_true(y[i * COLS + j] == 0.5f + (float)(r * COLS + j) * 0.25f);
    }
    return true;
}

static void check_backend(const char *backend) {
    tc_model *m = gather_model();
    tc_build_options o = {.struct_size = sizeof o, .backend = backend};
    tc_engine *e = NULL;
    tc_error err;
    if (tc_engine_build(m, &o, &e, &err)) fail_msg("%s build: %s", backend, err.message);
    tc_context *c = NULL;
    assert_int_equal(tc_context_create(e, 0, &c, NULL), TC_STATUS_OK);
    const int64_t good[N] = {0, 9, 3, -1, -10, 5};
    const int64_t high[N] = {0, 1, 2, 10, 4, 5};
    const int64_t low[N] = {-11, 1, 2, 3, 4, 5};
    const int64_t huge[N] = {0, 1, 2, 3, 4, INT64_MAX};
    assert_true(run_ids(c, good));  /* plain launches */
    assert_false(run_ids(c, high)); /* captured and launched */
    assert_true(run_ids(c, good));  /* replayed */
    assert_false(run_ids(c, low));
    assert_false(run_ids(c, huge));
    assert_true(run_ids(c, good));
    assert_int_equal(tc_context_set_profiling(c, 1), TC_STATUS_OK);
    assert_false(run_ids(c, high)); /* plain launches with events */
    assert_true(run_ids(c, good));
    tc_context_destroy(c);
    tc_engine_destroy(e);
    tc_model_destroy(m);
}

/* The reference behaviour this test holds the device to. */
static void test_cpu_gather_out_of_range_fails(void **state) {
    (void)state;
    check_backend("cpu");
}

static void test_cuda_gather_out_of_range_fails(void **state) {
    (void)state;
    tc__err perr = {0};
    if (tc__backend_find("cuda", &perr) == NULL) {
        print_message("CUDA not tested: %s\n", perr.msg);
        skip();
    }
    check_backend("cuda");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_gather_out_of_range_fails),
        cmocka_unit_test(test_cuda_gather_out_of_range_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
