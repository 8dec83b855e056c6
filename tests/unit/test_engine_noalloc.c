/* test_engine_noalloc.c - proves that tc_context_run allocates nothing: the library's calls to
 * malloc/calloc/realloc/aligned_alloc/posix_memalign are wrapped at link time (-Wl,--wrap) and
 * counted while runs are in progress, for a fixed shape and across shape changes, for an FP16 and an INT8
 * engine (whose layers quantize their input into scratch). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <math.h>

#include "backends/backend.h"
#include "core/cpu.h"
#include "int8_test_model.h"
#include "alloc_count.h"

static void test_run_allocates_nothing(void **state) {
    (void)state;
    tc_model *m = etm_model();
    tc_engine *e = etm_engine(m, 1, 2, 4, 0);
    tc_context *c = NULL;
    assert_int_equal(tc_context_create(e, 0, &c, NULL), TC_STATUS_OK);
    tc_tensor x = etm_input(4);
    float y[20];
    etm_run(c, &x, y); /* first run: shapes propagated */
    /* The wrapper must see the library's alloc_count at all (a test that cannot fail is no test). */
    long before = alloc_count;
    alloc_counting = 1;
    tc_tensor probe = etm_input(1);
    alloc_counting = 0;
    assert_true(alloc_count > before);
    tc_tensor_free(&probe);

    alloc_count = 0;
    alloc_counting = 1;
    for (int i = 0; i < 10; i++) assert_int_equal(tc_context_run(c), TC_STATUS_OK);
    alloc_counting = 0;
    assert_int_equal(alloc_count, 0);

    /* Changing the shape re-propagates shapes: still no allocation, in reshape or run. */
    int64_t dims[4] = {1, 3, 8, 8};
    alloc_counting = 1;
    assert_int_equal(tc_context_set_input_shape(c, "x", 4, dims), TC_STATUS_OK);
    assert_int_equal(tc_context_run(c), TC_STATUS_OK);
    dims[0] = 3;
    assert_int_equal(tc_context_set_input_shape(c, "x", 4, dims), TC_STATUS_OK);
    assert_int_equal(tc_context_run(c), TC_STATUS_OK);
    alloc_counting = 0;
    assert_int_equal(alloc_count, 0);
    tc_tensor_free(&x);
    tc_context_destroy(c);
    tc_engine_destroy(e);
    tc_model_destroy(m);
}

/* Steps of engine e that run in precision prec. */
static int steps_in(const tc_engine *e, const char *prec) {
    int n = 0;
    for (int k = 0; k < tc_engine_num_steps(e); k++) {
        tc_step_info si;
        tc_engine_step_info(e, k, &si);
        n += strcmp(si.precision, prec) == 0;
    }
    return n;
}

/* After a first run of e on x (input "x", 2 threads), ten more runs allocate nothing. */
static void assert_runs_allocate_nothing(const tc_engine *e, const tc_tensor *x) {
    tc_context *c = NULL;
    assert_int_equal(tc_context_create(e, 0, &c, NULL), TC_STATUS_OK);
    assert_int_equal(tc_context_set_tensor(c, "x", x->data, x->nbytes), TC_STATUS_OK);
    assert_int_equal(tc_context_run(c), TC_STATUS_OK);
    alloc_count = 0;
    alloc_counting = 1;
    for (int i = 0; i < 10; i++) assert_int_equal(tc_context_run(c), TC_STATUS_OK);
    alloc_counting = 0;
    assert_int_equal(alloc_count, 0);
    tc_context_destroy(c);
}

static void test_int8_run_allocates_nothing(void **state) {
    (void)state;
    tc_model *m = itm_model(0x1234);
    char cache[96];
    snprintf(cache, sizeof cache, "/tmp/tc_test_noalloc_%d.cache", (int)getpid());
    tc_calibrator *cal = NULL;
    tc_error err;
    assert_int_equal(tc_calibrator_create(m, &cal, &err), TC_STATUS_OK);
    const char *names[1] = {"x"};
    tc_tensor x = itm_input();
    for (int s = 0; s < 4; s++) assert_int_equal(tc_calibrator_add(cal, 1, names, &x, &err), TC_STATUS_OK);
    assert_int_equal(tc_calibrator_save(cal, TC_CALIB_MINMAX, 0, cache, &err), TC_STATUS_OK);
    tc_calibrator_destroy(cal);
    tc_build_options o = {.struct_size = sizeof o, .threads = 2, .flags = TC_BUILD_INT8 | TC_BUILD_TACTICS_FIXED,
                          .calib_cache = cache};
    tc_engine *e = NULL;
    if (tc_engine_build(m, &o, &e, &err)) fail_msg("int8 build: %s", err.message);
    unlink(cache);
    const uint64_t avx2 = (uint64_t)(TC__ISA_AVX2 | TC__ISA_FMA), isa = tc__cpu_get()->isa;
    if ((isa & TC__ISA_AVX512VNNI) || (isa & avx2) == avx2) assert_int_equal(steps_in(e, "int8"), 4); /* VNNI or AVX2 */
    assert_runs_allocate_nothing(e, &x);
    tc_engine_destroy(e);
    tc_tensor_free(&x);
    tc_model_destroy(m);
}

/* The same model with every layer in FP16 (--fp16, heuristic tactics). */
static void test_fp16_run_allocates_nothing(void **state) {
    (void)state;
    tc_model *m = itm_model(0x4321);
    tc_error err;
    tc_build_options o = {.struct_size = sizeof o, .threads = 2, .flags = TC_BUILD_FP16 | TC_BUILD_TACTICS_FIXED};
    tc_engine *e = NULL;
    if (tc_engine_build(m, &o, &e, &err)) fail_msg("fp16 build: %s", err.message);
    if (tc__cpu_get()->isa & TC__ISA_AVX512FP16) assert_true(steps_in(e, "fp16") >= 2);
    tc_tensor x = itm_input();
    assert_runs_allocate_nothing(e, &x);
    tc_engine_destroy(e);
    tc_tensor_free(&x);
    tc_model_destroy(m);
}

/* The CUDA backend (where a device is): after the first run (plain launches) and the second (captured into a CUDA
 * graph), runs replay the graph and allocate nothing on the host, also across a change of shape and back (which
 * captures again); the outputs match the CPU engine's. */
static void test_cuda_run_allocates_nothing(void **state) {
    (void)state;
    tc__err perr = {0};
    const tc__backend *be = tc__backend_find("cuda", &perr);
    if (be == NULL) {
        print_message("CUDA not tested: %s\n", perr.msg);
        skip();
    }
    tc_model *m = etm_model();
    tc_input_range r = {.name = "x", .rank = 4, .min = {1, 3, 8, 8}, .opt = {2, 3, 8, 8}, .max = {4, 3, 8, 8}};
    tc_profile p = {1, &r};
    tc_build_options o = {.struct_size = sizeof o, .num_profiles = 1, .profiles = &p, .backend = "cuda"};
    tc_engine *e = NULL, *cpu = etm_engine(m, 1, 2, 4, 0);
    tc_error err;
    if (tc_engine_build(m, &o, &e, &err)) fail_msg("cuda build: %s", err.message);
    tc_context *c = NULL, *cc = NULL;
    assert_int_equal(tc_context_create(e, 0, &c, NULL), TC_STATUS_OK);
    assert_int_equal(tc_context_create(cpu, 0, &cc, NULL), TC_STATUS_OK);
    tc_tensor x = etm_input(4);
    float y[20], want[20];
    etm_run(cc, &x, want);
    etm_run(c, &x, y); /* plain launches */
    etm_run(c, &x, y); /* captured: the same shapes keep the launch list */
    assert_int_equal(tc_context_run(c), TC_STATUS_OK); /* replayed */
    for (int i = 0; i < 20; i++) assert_true(fabsf(y[i] - want[i]) <= 1e-4f * (1.0f + fabsf(want[i])));
    alloc_count = 0;
    alloc_counting = 1;
    for (int i = 0; i < 10; i++) assert_int_equal(tc_context_run(c), TC_STATUS_OK);
    alloc_counting = 0;
    assert_int_equal(alloc_count, 0);
    for (int i = 0; i < 20; i++) assert_true(fabsf(y[i] - want[i]) <= 1e-4f * (1.0f + fabsf(want[i])));
    tc_tensor_free(&x);
    tc_context_destroy(c);
    tc_context_destroy(cc);
    tc_engine_destroy(e);
    tc_engine_destroy(cpu);
    tc_model_destroy(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_allocates_nothing),
        cmocka_unit_test(test_int8_run_allocates_nothing),
        cmocka_unit_test(test_fp16_run_allocates_nothing),
        cmocka_unit_test(test_cuda_run_allocates_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
