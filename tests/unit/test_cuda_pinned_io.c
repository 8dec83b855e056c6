/* test_cuda_pinned_io.c - tc_context_pinned_buffer: on a CPU context it is refused (TC_STATUS_UNSUPPORTED); on a CUDA
 * context (where a device is) an input and an output bound to their pinned staging buffers give the same outputs as
 * ordinary buffers, through plain launches, capture and replays, and at a second batch size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "engine_test_model.h"

static void test_cpu_refuses(void **state) {
    (void)state;
    tc_model *m = etm_model();
    tc_engine *e = etm_engine(m, 1, 2, 4, 0);
    tc_context *c = NULL;
    assert_int_equal(tc_context_create(e, 0, &c, NULL), TC_STATUS_OK);
    void *p = NULL;
    size_t n = 0;
    assert_int_equal(tc_context_pinned_buffer(c, "x", &p, &n), TC_STATUS_UNSUPPORTED);
    assert_int_equal(tc_context_pinned_buffer(c, "nope", &p, &n), TC_STATUS_INVALID_ARGUMENT);
    assert_int_equal(tc_context_pinned_buffer(c, "x", NULL, &n), TC_STATUS_INVALID_ARGUMENT);
    tc_context_destroy(c);
    tc_engine_destroy(e);
    tc_model_destroy(m);
}

static void test_cuda_pinned_binding(void **state) {
    (void)state;
    tc__err perr = {0};
    if (tc__backend_find("cuda", &perr) == NULL) {
        print_message("CUDA not tested: %s\n", perr.msg);
        skip();
    }
    tc_model *m = etm_model();
    tc_input_range r = {.name = "x", .rank = 4, .min = {1, 3, 8, 8}, .opt = {2, 3, 8, 8}, .max = {4, 3, 8, 8}};
    tc_profile p = {1, &r};
    tc_build_options o = {.struct_size = sizeof o, .num_profiles = 1, .profiles = &p, .backend = "cuda"};
    tc_engine *e = NULL;
    tc_error err;
    if (tc_engine_build(m, &o, &e, &err)) fail_msg("cuda build: %s", err.message);
    tc_context *c = NULL, *pc = NULL;
    assert_int_equal(tc_context_create(e, 0, &c, NULL), TC_STATUS_OK);
    assert_int_equal(tc_context_create(e, 0, &pc, NULL), TC_STATUS_OK);
    void *xin = NULL, *yout = NULL;
    size_t xcap = 0, ycap = 0;
    assert_int_equal(tc_context_pinned_buffer(pc, "x", &xin, &xcap), TC_STATUS_OK);
    assert_int_equal(tc_context_pinned_buffer(pc, "y", &yout, &ycap), TC_STATUS_OK);
    assert_non_null(xin);
    assert_non_null(yout);
    assert_true(xcap >= sizeof(float) * 4 * 3 * 8 * 8); /* the profile's largest batch */
    assert_true(ycap >= sizeof(float) * 4 * 5);
    for (int64_t batch = 2; batch <= 3; batch++) {
        tc_tensor x = etm_input(batch);
        float want[20];
        etm_run(c, &x, want); /* ordinary buffers */
        memcpy(xin, x.data, x.nbytes);
        assert_int_equal(tc_context_set_input_shape(pc, "x", 4, x.dims), TC_STATUS_OK);
        assert_int_equal(tc_context_set_tensor(pc, "x", xin, xcap), TC_STATUS_OK);
        assert_int_equal(tc_context_set_tensor(pc, "y", yout, ycap), TC_STATUS_OK);
        for (int run = 0; run < 4; run++) { /* plain, capture, replays */
            memset(yout, 0xff, sizeof(float) * 5 * (size_t)batch);
            if (tc_context_run(pc) != TC_STATUS_OK) fail_msg("run: %s", tc_context_error(pc));
            etm_expect_close(yout, want, 5 * (size_t)batch);
        }
        tc_tensor_free(&x);
    }
    tc_context_destroy(pc);
    tc_context_destroy(c);
    tc_engine_destroy(e);
    tc_model_destroy(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_refuses),
        cmocka_unit_test(test_cuda_pinned_binding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
