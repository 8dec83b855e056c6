/* test_backend.c - the backend contract (backends/backend.h) and plan format 2 as an engine sees them: the list of
 * backends and their names, --backend's refusals (an unknown name, a backend this build lacks), the CPU backend's
 * vtable (memory, copies, execution handles, the run of a step list with its epilogue and failure index, the timer,
 * the target record and its check), every CPU tactic on the CPU backend's list with its backend id, an engine's target
 * info and steps' backends, and the ENGINE section's parameter blobs: written, read back and refused where the step's
 * tactic takes no configuration. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "backends/cpu/cpu_target.h"
#ifdef TC_HAVE_CUDA
#include "backends/cuda/conv16_paths.h"
#include "backends/cuda/cuda_target.h"
#include "backends/cuda/lt_gemm.h"
#endif
#include "backends/ref/ref.h"
#include "engine/engine.h"
#include "engine/plan_format.h"
#include "engine_test_model.h"
#include "plan_test_util.h"

static void test_backend_list(void **state) {
    (void)state;
    assert_ptr_equal(tc__backend_get(TC__BACKEND_CPU), &tc__backend_cpu);
    assert_string_equal(tc__backend_name(TC__BACKEND_CPU), "cpu");
    assert_string_equal(tc__backend_name(TC__BACKEND_CUDA), "cuda");
    assert_string_equal(tc__backend_name(99), "unknown");
    tc__err err = {0};
    assert_ptr_equal(tc__backend_find(NULL, &err), &tc__backend_cpu);
    assert_ptr_equal(tc__backend_find("cpu", &err), &tc__backend_cpu);
    err = (tc__err){0};
    assert_null(tc__backend_find("tpu", &err));
    assert_int_equal(err.status, TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "unknown backend 'tpu'"));
    if (tc__backend_get(TC__BACKEND_CUDA) == NULL) {
        err = (tc__err){0};
        assert_null(tc__backend_find("cuda", &err));
        assert_int_equal(err.status, TC_STATUS_UNSUPPORTED);
        assert_non_null(strstr(err.msg, "not built with CUDA"));
    }
    /* Every tactic on the CPU list says it is the CPU's, and is found by name on that backend. */
    int n = 0;
    for (size_t i = 0; tc__backend_cpu.tactics[i] != NULL; i++, n++) {
        const tc__tactic *t = tc__backend_cpu.tactics[i];
        assert_int_equal(t->backend, TC__BACKEND_CPU);
        assert_ptr_equal(tc__tactic_find(&tc__backend_cpu, t->name, t->op_type), t);
        assert_true(strlen(t->name) <= 31);
        assert_true(t->config_bytes == 0 || t->check_config != NULL);
        /* names are unique across the list (an op's tactics share none with another's): tc__tactic_named finds it;
         * but the reference kernels, every op's fallback, are all "ref" (the name plans have always stored) */
        if (t->flags & TC__TACTIC_FALLBACK) {
            assert_string_equal(t->name, "ref");
            assert_ptr_equal(tc__tactic_fallback(&tc__backend_cpu, t->op_type), t);
            for (size_t j = i + 1; tc__backend_cpu.tactics[j] != NULL; j++) /* last of its op */
                assert_true(strcmp(tc__backend_cpu.tactics[j]->op_type, t->op_type) != 0);
        } else {
            assert_ptr_equal(tc__tactic_named(t->name), t);
        }
        /* a chaining or image-writing tactic tells the chain pass its geometry */
        if ((t->chain != TC__CHAIN_NONE && t->chain != TC__CHAIN_FP16_NHWC && t->chain != TC__CHAIN_FP16_ROWS) ||
            (t->flags & TC__TACTIC_IMAGE_WRITER))
            assert_non_null(t->chain_geometry);
        /* configurations fit the plan's blob and the tuner's buffers */
        assert_true(t->config_bytes <= TC__TACTIC_CONFIG_MAX);
        assert_true((t->config_bytes == 0) == (t->configs == NULL));
        /* a tactic in a reduced-precision chain computes in that precision and fuses its epilogue */
        if (t->chain != TC__CHAIN_NONE) {
            assert_true(t->chain < TC__CHAIN_COUNT_);
            assert_non_null(t->precision);
            assert_true(t->flags & TC__TACTIC_FUSES_EPILOGUE);
        }
    }
    assert_true(n > 100);
    /* every op has its reference kernel on the CPU list, and a device backend has none */
#define TC_OP(op) assert_non_null(tc__tactic_fallback(&tc__backend_cpu, #op));
#include "core/ops.inc"
#undef TC_OP
    for (const tc__backend *gpu = tc__backend_get(TC__BACKEND_CUDA); gpu != NULL; gpu = NULL)
        for (size_t i = 0; gpu->tactics[i] != NULL; i++) assert_false(gpu->tactics[i]->flags & TC__TACTIC_FALLBACK);
}

static int calls;
static tc_status k_ok(const tc__kernel_ctx *kc) {
    calls++;
    float *y = kc->out[0]->data;
    y[0] = -3.0f;
    return TC_STATUS_OK;
}
static tc_status k_fail(const tc__kernel_ctx *kc) {
    calls++;
    return tc__fail(kc->err, TC_STATUS_INTERNAL, "kernel says no");
}

static void test_cpu_vtable(void **state) {
    (void)state;
    const tc__backend *be = &tc__backend_cpu;
    tc__err err = {0};
    assert_int_equal(be->probe(&err), TC_STATUS_OK);
    assert_int_equal(be->caps(), tc__cpu_get()->isa);
    /* Memory: aligned host blocks; no device memory on a CPU. */
    unsigned char *a = be->alloc(TC__MEM_HOST, 100), *b = be->alloc(TC__MEM_HOST, 100);
    assert_non_null(a);
    assert_int_equal((uintptr_t)a % be->arena_align, 0);
    assert_null(be->alloc(TC__MEM_DEVICE, 100));
    for (int i = 0; i < 100; i++) a[i] = (unsigned char)(i * 7 + 1);
    assert_int_equal(be->copy(NULL, b, TC__MEM_HOST, a, TC__MEM_HOST, 100, &err), TC_STATUS_OK);
    assert_memory_equal(a, b, 100);
    assert_int_equal(be->copy(NULL, b, TC__MEM_DEVICE, a, TC__MEM_HOST, 100, &err), TC_STATUS_INVALID_ARGUMENT);
    be->free(TC__MEM_HOST, a);
    be->free(TC__MEM_HOST, b);
    be->free(TC__MEM_HOST, NULL);
    /* An execution handle of 2 threads. */
    void *exec = NULL;
    assert_int_equal(be->exec_create(2, &exec, &err), TC_STATUS_OK);
    assert_int_equal(be->exec_threads(exec), 2);
    /* The run of a step list: in order, the unfused epilogue (ReLU) after a kernel, step times, the failing index. */
    float y = 5.0f;
    tc__tensor t = {.dtype = TC_DTYPE_FLOAT32, .rank = 1, .dims = {1}, .data = &y, .nbytes = 4};
    tc__tensor *outs[1] = {&t};
    tc__err kerr = {0};
    tc__scratch scratch = {NULL, 0, 7};
    tc__kernel_ctx kc = {.node_name = "n", .op_type = "Op", .out = outs, .n_out = 1, .err = &kerr, .scratch = &scratch,
                         .exec = exec};
    tc__epilogue relu = tc__epilogue_none();
    relu.act = TC__ACT_RELU;
    tc__launch steps[3] = {{.fn = k_ok, .kc = &kc}, {.fn = k_ok, .kc = &kc, .post = &relu}, {.fn = k_fail, .kc = &kc}};
    uint64_t ns[3] = {0};
    int failed = -1;
    calls = 0;
    assert_int_equal(be->run(exec, steps, 2, ns, &failed), TC_STATUS_OK);
    assert_int_equal(calls, 2);
    assert_true(y == 0.0f); /* -3 through the ReLU */
    assert_int_equal(scratch.used, 0);
    assert_int_equal(be->run(exec, steps, 3, NULL, &failed), TC_STATUS_INTERNAL);
    assert_int_equal(failed, 2);
    assert_non_null(strstr(kerr.msg, "kernel says no"));
    /* The timer counts forward. */
    tc__backend_timer tm;
    be->timer_start(exec, &tm);
    volatile double s = 0;
    for (int i = 0; i < 100000; i++) s += i;
    assert_true(be->timer_stop(exec, &tm) > 0);
    be->exec_destroy(exec);
    /* The target record: this machine's passes its own check; layouts always include the plain one. */
    unsigned char rec[TC__TARGET_RECORD_MAX];
    size_t size = be->target_record(rec, sizeof rec);
    assert_int_equal(size, sizeof(tc__cpu_target));
    assert_int_equal(be->target_record(rec, 8), 0);
    assert_int_equal(be->check_target(rec, size, be->caps(), &err), TC_STATUS_OK);
    assert_int_equal(be->check_target(rec, size - 1, 0, &err), TC_STATUS_CORRUPT_FILE);
    char text[384];
    be->target_describe(rec, size, text, sizeof text);
    assert_non_null(strstr(text, tc__cpu_get()->vendor));
    assert_true(be->layouts(false, false) & TC__LAYOUT_PLAIN);
    assert_int_equal(be->fingerprint(), be->fingerprint());
}

/* Builds the test model's engine and checks what it says of its backend and target. */
static void test_engine_target(void **state) {
    (void)state;
    tc_model *m = etm_model();
    tc_engine *e = etm_engine(m, 1, 1, 1, 0);
    tc_target_info ti;
    assert_int_equal(tc_engine_target_info(e, &ti), TC_STATUS_OK);
    assert_string_equal(ti.backend, "cpu");
    assert_non_null(strstr(ti.target, tc__cpu_get()->vendor));
    assert_int_equal(ti.required_caps & ~tc__cpu_get()->isa, 0);
    for (int k = 0; k < tc_engine_num_steps(e); k++) {
        tc_step_info si;
        assert_int_equal(tc_engine_step_info(e, k, &si), TC_STATUS_OK);
        assert_string_equal(si.backend, "cpu");
    }
    /* --backend cuda in a build without CUDA: refused with the reason. */
    if (tc__backend_get(TC__BACKEND_CUDA) == NULL) {
        tc_build_options o = {.struct_size = sizeof o, .backend = "cuda"};
        tc_engine *e2 = NULL;
        tc_error err;
        assert_int_equal(tc_engine_build(m, &o, &e2, &err), TC_STATUS_UNSUPPORTED);
        assert_non_null(strstr(err.message, "not built with CUDA"));
        assert_null(e2);
    } else {
        /* built with CUDA: on a machine without a device the build is refused with the runtime's reason */
        tc__err perr = {0};
        if (tc__backend_get(TC__BACKEND_CUDA)->probe(&perr) != TC_STATUS_OK) {
            tc_build_options o = {.struct_size = sizeof o, .backend = "cuda"};
            tc_engine *e2 = NULL;
            tc_error err;
            assert_int_equal(tc_engine_build(m, &o, &e2, &err), TC_STATUS_UNSUPPORTED_HARDWARE);
            assert_non_null(strstr(err.message, "cannot run here"));
            assert_null(e2);
        }
    }
    tc_engine_destroy(e);
    tc_model_destroy(m);
}

/* The CUDA backend's target record, host side (CI has nvcc but no device): described in words; malformed records and
 * other kernel revisions refused before any device is asked; memory kinds that are not its own refused. */
static void test_cuda_target_record(void **state) {
    (void)state;
#ifdef TC_HAVE_CUDA
    const tc__backend *be = tc__backend_get(TC__BACKEND_CUDA);
    assert_non_null(be);
    assert_int_equal(be->mem, TC__MEM_DEVICE);
    assert_true(be->arena_align >= 64);
    tc__cuda_target t;
    memset(&t, 0, sizeof t);
    snprintf(t.name, sizeof t.name, "NVIDIA H200");
    t.cc_major = 9, t.cc_minor = 0, t.n_sm = 132, t.kernel_rev = TC__CUDA_KERNEL_REV;
    t.total_mem = 143771ull << 20, t.runtime_version = 13000, t.driver_version = 13000;
    char buf[512];
    be->target_describe(&t, sizeof t, buf, sizeof buf);
    assert_non_null(strstr(buf, "NVIDIA H200, compute capability 9.0, 132 SMs"));
    tc__err err = {0};
    assert_int_equal(be->check_target(&t, sizeof t - 1, 0, &err), TC_STATUS_CORRUPT_FILE);
    tc__cuda_target bad = t;
    bad.reserved = 1;
    memset(&err, 0, sizeof err);
    assert_int_equal(be->check_target(&bad, sizeof bad, 0, &err), TC_STATUS_CORRUPT_FILE);
    bad = t;
    memset(bad.name, 'x', sizeof bad.name); /* no terminator */
    memset(&err, 0, sizeof err);
    assert_int_equal(be->check_target(&bad, sizeof bad, 0, &err), TC_STATUS_CORRUPT_FILE);
    bad = t;
    bad.kernel_rev = TC__CUDA_KERNEL_REV + 1;
    memset(&err, 0, sizeof err);
    assert_int_equal(be->check_target(&bad, sizeof bad, 0, &err), TC_STATUS_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "rebuild the plan"));
    /* a well-formed record: accepted only where a device of that compute capability is */
    memset(&err, 0, sizeof err);
    tc__err perr = {0};
    if (be->probe(&perr) != TC_STATUS_OK) {
        assert_int_equal(be->check_target(&t, sizeof t, 0, &err), TC_STATUS_UNSUPPORTED_HARDWARE);
        assert_null(be->alloc(TC__MEM_DEVICE, 1024));
    }
    void *h = be->alloc(TC__MEM_HOST, 100);
    assert_non_null(h);
    assert_int_equal((uintptr_t)h % be->arena_align, 0);
    be->free(TC__MEM_HOST, h);
#else
    skip();
#endif
}

static void test_param_blobs(void **state) {
    (void)state;
    tc_model *m = etm_model();
    /* NCHW: its 4 channels padded to a block would run the blocked Conv, a configurable tactic */
    tc_engine *e = etm_engine(m, 1, 2, 4, TC_PASS_LAYOUT);
    const int ns = e->n_steps;
    assert_true(ns > 1);
    /* A build without configurable tactics writes empty blobs. */
    for (int p = 0; p < e->n_profiles; p++)
        for (int k = 0; k < ns; k++) assert_int_equal(e->param_size[p * ns + k], 0);
    /* Blobs of 5 and 8 bytes on two steps write and read back (the writer pads, the reader checks the padding). */
    const unsigned char five[5] = {1, 2, 3, 4, 5}, eight[8] = {9, 8, 7, 6, 5, 4, 3, 2};
    const unsigned char **saved_params = e->params;
    uint32_t *saved_size = e->param_size;
    const unsigned char *params[64] = {0};
    uint32_t sizes[64] = {0};
    assert_true(ns <= 64);
    params[0] = five, sizes[0] = 5;
    params[ns - 1] = eight, sizes[ns - 1] = 8;
    e->params = params;
    e->param_size = sizes;
    void *blob = NULL;
    size_t blob_size = 0;
    tc__err err = {0};
    assert_int_equal(tc__engine_blob_write(e, &blob, &blob_size, &err), TC_STATUS_OK);
    e->params = saved_params;
    e->param_size = saved_size;
    tc_engine back = {.g = e->g};
    assert_int_equal(tc__engine_blob_read(&back, blob, blob_size, &err), TC_STATUS_OK);
    assert_int_equal(back.param_size[0], 5);
    assert_memory_equal(back.params[0], five, 5);
    assert_int_equal(back.param_size[ns - 1], 8);
    assert_memory_equal(back.params[ns - 1], eight, 8);
    for (int k = 1; k < ns - 1; k++) assert_null(back.params[k]);
    /* A non-zero padding byte after the 5 bytes is refused. */
    unsigned char *bad = malloc(blob_size);
    memcpy(bad, blob, blob_size);
    const unsigned char *at = memmem(bad, blob_size, five, 5);
    assert_non_null(at);
    bad[(at - bad) + 5] = 1;
    tc_engine back2 = {.g = e->g};
    assert_int_equal(tc__engine_blob_read(&back2, bad, blob_size, &err), TC_STATUS_CORRUPT_FILE);
    assert_non_null(strstr(err.msg, "parameter blob padding"));
    /* A whole plan whose step carries a configuration its tactic does not take: refused at load, naming the step. */
    size_t plan_size = 0;
    void *plan = ptu_replan(e, blob, blob_size, &plan_size);
    ptu_expect_load_failure(plan, plan_size, TC_STATUS_CORRUPT_FILE, "5-byte configuration for profile 0");
    tc_engine *loaded = NULL;
    /* The engine's own blob loads. */
    void *good = NULL;
    size_t good_size = 0;
    assert_int_equal(tc__engine_blob_write(e, &good, &good_size, &err), TC_STATUS_OK);
    plan = ptu_replan(e, good, good_size, &plan_size);
    assert_int_equal(tc__engine_from_plan(plan, plan_size, false, 0, &loaded, &err), TC_STATUS_OK);
    tc_engine_destroy(loaded);
    for (tc_engine *x = &back; x; x = x == &back ? &back2 : NULL) {
        free(x->steps);
        free(x->tuning);
        for (int p = 0; x->profiles && p < x->n_profiles; p++) {
            free(x->profiles[p].ranges);
            free(x->profiles[p].offset);
            free(x->profiles[p].capacity);
        }
        free(x->profiles);
        free(x->params);
        free(x->param_size);
    }
    free(good);
    free(bad);
    free(blob);
    tc_engine_destroy(e);
    tc_model_destroy(m);
}

/* A plan's cuBLASLt algorithm configuration (lt_gemm.h's tc__lt_algo), host side: the default (all zero) and a named
 * algorithm are taken; a record that is neither is refused before cuBLASLt sees it. */
static void test_cuda_lt_algo_check(void **state) {
    (void)state;
#ifdef TC_HAVE_CUDA
    tc__err err = {0};
    tc__lt_algo a;
    memset(&a, 0, sizeof a);
    assert_true(tc__lt_algo_check(&a, &err));
    a.set = 1, a.id = 21, a.tile = 18, a.splitk = 4, a.stages = 8;
    assert_true(tc__lt_algo_check(&a, &err));
    const tc__lt_algo ok = a;
    a.set = 2;
    assert_false(tc__lt_algo_check(&a, &err));
    assert_non_null(strstr(err.msg, "cuBLASLt algorithm configuration"));
    a = ok, a.id = -1;
    assert_false(tc__lt_algo_check(&a, &err));
    a = ok, a.splitk = 5000;
    assert_false(tc__lt_algo_check(&a, &err));
    memset(&a, 0, sizeof a), a.tile = 3; /* the default with a field set */
    assert_false(tc__lt_algo_check(&a, &err));
#else
    skip();
#endif
}

/* A plan's FP16 convolution configuration (conv16_paths.h), host side: the default, an implicit-GEMM id and a cuDNN
 * engine record are taken; an unknown path, an invalid kernel id, a reserved byte or a field of another path set is
 * refused before any kernel or cuDNN sees it. */
static void test_cuda_conv16_cfg_check(void **state) {
    (void)state;
#ifdef TC_HAVE_CUDA
    tc__err err = {0};
    tc__conv16_cfg c;
    memset(&c, 0, sizeof c);
    assert_true(tc__conv16_cfg_check(&c, &err));
    c.path = TC__CONV16_IGEMM, c.igemm_id = 1;
    assert_true(tc__conv16_cfg_check(&c, &err));
    c.igemm_id = 200;
    assert_false(tc__conv16_cfg_check(&c, &err));
    assert_non_null(strstr(err.msg, "FP16 convolution configuration"));
    memset(&c, 0, sizeof c), c.path = TC__CONV16_GRAPH, c.graph.engine = 41, c.graph.n_knobs = 1;
    c.graph.knobs[0].type = 1, c.graph.knobs[0].value = 2;
    assert_true(tc__conv16_cfg_check(&c, &err));
    c.graph.n_knobs = TC__DNN_GRAPH_MAX_KNOBS + 1;
    assert_false(tc__conv16_cfg_check(&c, &err));
    memset(&c, 0, sizeof c), c.path = 3;
    assert_false(tc__conv16_cfg_check(&c, &err));
    memset(&c, 0, sizeof c), c.reserved[2] = 1;
    assert_false(tc__conv16_cfg_check(&c, &err));
    memset(&c, 0, sizeof c), c.graph.engine = 5; /* the default with a graph field set */
    assert_false(tc__conv16_cfg_check(&c, &err));
    memset(&c, 0, sizeof c), c.path = TC__CONV16_IGEMM, c.graph.n_knobs = 1; /* igemm with a graph field set */
    assert_false(tc__conv16_cfg_check(&c, &err));
#else
    skip();
#endif
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backend_list),
        cmocka_unit_test(test_cpu_vtable),
        cmocka_unit_test(test_engine_target),
        cmocka_unit_test(test_param_blobs),
        cmocka_unit_test(test_cuda_target_record),
        cmocka_unit_test(test_cuda_lt_algo_check),
        cmocka_unit_test(test_cuda_conv16_cfg_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
