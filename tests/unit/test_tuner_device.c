/* test_tuner_device.c - the tuner's path for a device backend (tc__backend.mem == TC__MEM_DEVICE), on a fake device
 * whose "device memory" is tracked host memory and whose clock is virtual (each launch of a fake tactic advances it by
 * the tactic's cost): the candidates run on device copies (uploaded once and shared, a packed constant input each its
 * own), see the inputs' host view in ctx->host_in, are timed over several launches per sample, a failing one is out,
 * and everything goes back through the backend's free. And the engine's choice on a device backend: a step with one
 * candidate is not timed, one with several is tuned. On a GPU (skipped without one): the CUDA backend's Relu, Clip and
 * MatMul tactics, each tuned against itself, time plausibly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "engine/engine_tactics.h"
#include "pass_test_util.h"
#include "tactics/tuner.h"

#define FAKE_ID 250u
#define MAX_DEV 64

/* ---- the fake device ---------------------------------------------------------------------------------------------- */

static struct {
    void *live[MAX_DEV]; /* device blocks not yet freed */
    size_t live_bytes[MAX_DEV];
    int allocs, frees, uploads, timers, execs;
    uint64_t clock; /* virtual ns */
} g_dev;

static bool on_device(const void *p) {
    for (int i = 0; i < MAX_DEV; i++)
        if (g_dev.live[i] != NULL && (const char *)p >= (const char *)g_dev.live[i] &&
            (const char *)p < (const char *)g_dev.live[i] + g_dev.live_bytes[i])
            return true;
    return false;
}

static void *fake_alloc(tc__mem_kind kind, size_t bytes) {
    if (kind != TC__MEM_DEVICE) return aligned_alloc(256, (bytes + 255) & ~(size_t)255);
    for (int i = 0; i < MAX_DEV; i++)
        if (g_dev.live[i] == NULL) {
            g_dev.live[i] = malloc(bytes ? bytes : 1);
            g_dev.live_bytes[i] = bytes ? bytes : 1;
            g_dev.allocs++;
            return g_dev.live[i];
        }
    return NULL;
}

static void fake_free(tc__mem_kind kind, void *p) {
    if (p == NULL) return;
    if (kind != TC__MEM_DEVICE) {
        free(p);
        return;
    }
    for (int i = 0; i < MAX_DEV; i++)
        if (g_dev.live[i] == p) {
            free(p);
            g_dev.live[i] = NULL;
            g_dev.frees++;
            return;
        }
    fail_msg("freeing %p, which is no device block", p);
}

static tc_status fake_copy(void *exec, void *dst, tc__mem_kind dst_kind, const void *src, tc__mem_kind src_kind, size_t n,
                           tc__err *err) {
    (void)exec, (void)err;
    if (dst_kind == TC__MEM_DEVICE && src_kind == TC__MEM_HOST) {
        assert_true(on_device(dst) && !on_device(src));
        g_dev.uploads++;
    }
    memcpy(dst, src, n);
    return TC_STATUS_OK;
}

static int g_exec_token;
static tc_status fake_exec_create(int threads, void **exec, tc__err *err) {
    (void)threads, (void)err;
    g_dev.execs++;
    *exec = &g_exec_token;
    return TC_STATUS_OK;
}
static void fake_exec_destroy(void *exec) { assert_ptr_equal(exec, &g_exec_token); }
static void fake_timer_start(void *exec, tc__backend_timer *t) {
    assert_ptr_equal(exec, &g_exec_token);
    t->t0 = g_dev.clock;
}
static uint64_t fake_timer_stop(void *exec, tc__backend_timer *t) {
    assert_ptr_equal(exec, &g_exec_token);
    g_dev.timers++;
    return g_dev.clock - t->t0;
}
static uint64_t fake_caps(void) { return 0; }
static void fake_caps_describe(uint64_t caps, char *buf, size_t size) { snprintf(buf, size, "%llx", (unsigned long long)caps); }
static uint64_t fake_fingerprint(void) { return 0xfa6e; }

/* ---- fake tactics: Clip with constant bounds (min packed by one of them), costs in virtual ns per launch ------------ */

static int g_launches[4];

static bool clip_supports(const tc__step_desc *d) { return strcmp(d->op_type, "Clip") == 0; }

/* y = clamp(x, lo, hi) on device memory; lo and hi read from the host view (as CUDA tactics read attribute-like
 * operands); `negated`: lo arrives packed as -lo. */
static tc_status clip_on_device(const tc__kernel_ctx *ctx, int who, uint64_t cost, bool negated) {
    assert_non_null(ctx->host_in);
    assert_non_null(ctx->scratch);
    assert_true(on_device(ctx->scratch->base));
    for (int i = 0; i < ctx->n_in; i++) assert_true(on_device(ctx->in[i]->data));
    assert_true(on_device(ctx->out[0]->data));
    assert_null(ctx->host_in[0]->data); /* not known before the run */
    assert_non_null(ctx->host_in[1]->data);
    assert_non_null(ctx->host_in[2]->data);
    assert_false(on_device(ctx->host_in[1]->data));
    /* the device copy of each constant input is its host view's bytes (packed where the tactic packs it) */
    for (int i = 1; i < 3; i++) assert_memory_equal(ctx->in[i]->data, ctx->host_in[i]->data, 4);
    float lo = *(const float *)ctx->host_in[1]->data, hi = *(const float *)ctx->host_in[2]->data;
    if (negated) lo = -lo;
    assert_true(lo == -0.5f && hi == 0.75f);
    const float *x = ctx->in[0]->data;
    float *y = ctx->out[0]->data;
    for (int64_t k = 0; k < tc__tensor_numel(ctx->out[0]); k++) y[k] = x[k] < lo ? lo : x[k] > hi ? hi : x[k];
    g_dev.clock += cost;
    g_launches[who]++;
    return TC_STATUS_OK;
}

static tc_status slow_run(const tc__kernel_ctx *ctx) { return clip_on_device(ctx, 0, 5000, false); }
static tc_status fast_run(const tc__kernel_ctx *ctx) { return clip_on_device(ctx, 1, 1000, true); }
static tc_status bad_run(const tc__kernel_ctx *ctx) {
    g_launches[2]++;
    return tc__fail(ctx->err, TC_STATUS_INTERNAL, "launch failed");
}
static tc_status big_run(const tc__kernel_ctx *ctx) { return clip_on_device(ctx, 3, 50000, false); }

static bool packs_lo(const tc__step_desc *d, int i) {
    (void)d;
    return i == 1;
}
static tc_status pack_negate(const tc__step_desc *d, int i, const void *src, void *dst, tc__err *err) {
    (void)err;
    const size_t n = d->in[i]->nbytes / 4;
    for (size_t k = 0; k < n; k++) ((float *)dst)[k] = -((const float *)src)[k];
    return TC_STATUS_OK;
}
static size_t scratch_1k(const tc__step_desc *d) {
    (void)d;
    return 1024;
}

static const tc__tactic kSlow = {.name = "fake_clip_slow", .op_type = "Clip", .backend = FAKE_ID,
                                 .supports = clip_supports, .run = slow_run};
static const tc__tactic kFast = {.name = "fake_clip_fast", .op_type = "Clip", .backend = FAKE_ID,
                                 .supports = clip_supports, .packs_input = packs_lo, .pack = pack_negate,
                                 .scratch_bytes = scratch_1k, .run = fast_run};
static const tc__tactic kBad = {.name = "fake_clip_bad", .op_type = "Clip", .backend = FAKE_ID,
                                .supports = clip_supports, .run = bad_run};
static const tc__tactic kBig = {.name = "fake_clip_big", .op_type = "Clip", .backend = FAKE_ID,
                                .supports = clip_supports, .run = big_run};

static const tc__tactic *const kAll[] = {&kSlow, &kFast, &kBad, NULL};
static const tc__tactic *const kOne[] = {&kSlow, NULL};

static tc__backend fake_backend(const tc__tactic *const *tactics) {
    return (tc__backend){.id = FAKE_ID, .name = "fakedev", .tactics = tactics, .caps = fake_caps,
                         .caps_describe = fake_caps_describe, .fingerprint = fake_fingerprint,
                         .mem = TC__MEM_DEVICE, .arena_align = 256, .alloc = fake_alloc, .free = fake_free,
                         .copy = fake_copy, .exec_create = fake_exec_create, .exec_destroy = fake_exec_destroy,
                         .timer_start = fake_timer_start, .timer_stop = fake_timer_stop};
}

static void reset(void) {
    memset(&g_dev, 0, sizeof g_dev);
    memset(g_launches, 0, sizeof g_launches);
}

/* ---- the tuner ---------------------------------------------------------------------------------------------------- */

static void test_device_candidates(void **state) {
    (void)state;
    reset();
    tc__tensor x = {.dtype = TC_DTYPE_FLOAT32, .rank = 2, .dims = {4, 64}, .nbytes = 4 * 256}, y = x;
    float lo = -0.5f, hi = 0.75f;
    tc__tensor tlo = {.dtype = TC_DTYPE_FLOAT32, .rank = 0, .nbytes = 4, .data = &lo};
    tc__tensor thi = tlo;
    thi.data = &hi;
    const tc__tensor *in[3] = {&x, &tlo, &thi}, *out[1] = {&y};
    bool cst[3] = {false, true, true};
    tc__epilogue none = tc__epilogue_none();
    tc__step_desc d = {.op_type = "Clip", .opset = 13, .n_in = 3, .in = in, .in_const = cst, .n_out = 1, .out = out,
                       .epi = &none};
    const tc__backend be = fake_backend(kAll);
    const tc__tactic *cands[3] = {&kSlow, &kFast, &kBad};
    void *exec = NULL;
    tc__err err = {0};
    assert_int_equal(be.exec_create(1, &exec, &err), TC_STATUS_OK);
    tc__tune_result r;
    assert_int_equal(tc__tune_step(&d, cands, 3, 5, &be, exec, &r, &err), TC_STATUS_OK);
    assert_int_equal(r.n, 3);
    assert_string_equal(r.cand[r.winner].name, "fake_clip_fast");
    /* a sample's time is per launch: the virtual clock gives exact times */
    assert_int_equal(r.cand[1].min_ns, 1000);
    assert_int_equal(r.cand[1].max_ns, 1000);
    assert_int_equal(r.cand[0].min_ns, 5000); /* cut off after two samples over 4x the fast one's */
    assert_true(r.cand[2].min_ns == UINT64_MAX); /* its launch failed: out */
    assert_int_equal(g_launches[2], 1);
    /* ~20 us per sample: 20 launches of the fast one per sample (5 samples, plus the warm-up's 1 + 1 + 20) */
    assert_int_equal(g_launches[1], 5 * 20 + 22);
    /* 4 launches of the slow one per sample: warm-up 1 + 1 + 4, then two samples before the cut-off */
    assert_int_equal(g_launches[0], 6 + 2 * 4);
    /* uploads: the shared input once and each constant input once, plus the fast one's packed min */
    assert_int_equal(g_dev.uploads, 4);
    /* device blocks: x, min, max and y shared, the packed min, a scratch each; all freed */
    assert_int_equal(g_dev.allocs, 4 + 1 + 3);
    assert_int_equal(g_dev.frees, g_dev.allocs);

    /* a launch over 20 us is one per sample */
    reset();
    const tc__tactic *big[1] = {&kBig};
    assert_int_equal(tc__tune_step(&d, big, 1, 3, &be, exec, &r, &err), TC_STATUS_OK);
    assert_int_equal(r.cand[0].min_ns, 50000);
    assert_int_equal(g_launches[3], 2 + 3);
    assert_int_equal(g_dev.frees, g_dev.allocs);

    /* no host tactic (the CPU's reference kernel) on device memory, and no timing without an exec */
    const tc__tactic *host[1] = {tc__tactic_fallback(&tc__backend_cpu, "Clip")};
    assert_non_null(host[0]);
    assert_int_not_equal(tc__tune_step(&d, host, 1, 5, &be, exec, &r, &err), TC_STATUS_OK);
    assert_int_not_equal(tc__tune_step(&d, cands, 3, 5, &be, NULL, &r, &err), TC_STATUS_OK);
    be.exec_destroy(exec);
}

/* ---- the engine's choice ------------------------------------------------------------------------------------------ */

/* Chooses the tactic of a one-Clip graph on backend be; returns its tune result. */
static tc__tune_result choose(const tc__backend *be, bool fixed, char *tactic) {
    tc__graph *g = ptu_graph(13);
    ptu_input(g, "x", TC_DTYPE_FLOAT32, "4x64");
    ptu_scalar(g, "lo", -0.5);
    ptu_scalar(g, "hi", 0.75);
    ptu_node(g, "Clip", "x,lo,hi", "y");
    ptu_output(g, "y");
    ptu_finish(g);
    tc__step steps[1] = {{.node = 0, .kind = TC__STEP_COMPUTE}};
    tc__range range = {.value = g->inputs[0], .rank = 2, .min = {4, 64}, .opt = {4, 64}, .max = {4, 64}};
    const tc__range *ranges[1] = {&range};
    tc__tactic_opts o = {.fixed = fixed, .threads = 1, .backend = be};
    tc__tune_result res[1];
    uint64_t isa = 0;
    tc__err err = {0};
    tc_status st = tc__engine_choose_tactics(g, steps, ranges, 1, &o, res, &isa, &err);
    if (st != TC_STATUS_OK) fail_msg("choosing tactics: %s", err.msg);
    snprintf(tactic, 32, "%s", steps[0].tactic);
    tc__graph_destroy(g);
    return res[0];
}

static void test_engine_one_candidate_untimed(void **state) {
    (void)state;
    reset();
    const tc__backend one = fake_backend(kOne);
    char tactic[32];
    tc__tune_result r = choose(&one, false, tactic);
    assert_string_equal(tactic, "fake_clip_slow");
    assert_int_equal(r.n, 1); /* no reference kernel on a device */
    assert_true(r.cand[0].min_ns == UINT64_MAX);
    assert_int_equal(g_dev.timers, 0);
    assert_int_equal(g_launches[0], 0);
}

static void test_engine_device_tuned(void **state) {
    (void)state;
    reset();
    const tc__backend all = fake_backend(kAll);
    char tactic[32];
    tc__tune_result r = choose(&all, false, tactic);
    assert_string_equal(tactic, "fake_clip_fast");
    assert_int_equal(r.n, 3);
    assert_int_equal(r.cand[r.winner].min_ns, 1000);
    assert_true(g_dev.timers > 0);
    assert_int_equal(g_dev.execs, 1);
    assert_int_equal(g_dev.frees, g_dev.allocs);

    /* --tactics-fixed: no exec, no timing, the first supporting tactic */
    reset();
    r = choose(&all, true, tactic);
    assert_string_equal(tactic, "fake_clip_slow");
    assert_int_equal(g_dev.execs, 0);
    assert_int_equal(g_dev.timers, 0);
}

/* ---- on a GPU (skipped without one) ------------------------------------------------------------------------------ */

/* Tunes op's CUDA tactic against itself (today each op has one CUDA tactic; twice makes a step of two candidates that
 * share the device inputs) on d; prints the times. */
static void cuda_tune_twice(const tc__backend *be, void *exec, const tc__step_desc *d) {
    const tc__tactic *t[8], *pick = NULL;
    const int n = tc__tactics_for(be, d->op_type, be->caps(), t, 8);
    for (int i = 0; i < n && pick == NULL; i++)
        if (t[i]->supports(d)) pick = t[i]; /* (an FP16 tactic first on the list takes tc.fp16 steps only) */
    if (pick == NULL) fail_msg("no CUDA tactic of %s takes the test's step", d->op_type);
    const tc__tactic *cands[2] = {pick, pick};
    tc__tune_result r;
    tc__err err = {0};
    tc_status st = tc__tune_step(d, cands, 2, 5, be, exec, &r, &err);
    if (st != TC_STATUS_OK) fail_msg("tuning %s on the GPU: %s", d->op_type, err.msg);
    assert_int_equal(r.n, 2);
    for (int k = 0; k < 2; k++) {
        print_message("%s (%s) #%d: min %llu ns, median %llu ns, max %llu ns\n", d->op_type, r.cand[k].name, k,
                      (unsigned long long)r.cand[k].min_ns, (unsigned long long)r.cand[k].median_ns,
                      (unsigned long long)r.cand[k].max_ns);
        assert_true(r.cand[k].min_ns != UINT64_MAX);     /* ran, was not cut off (the same kernel) */
        assert_true(r.cand[k].min_ns < 10u * 1000 * 1000); /* well under 10 ms a launch */
        assert_true(r.cand[k].min_ns <= r.cand[k].median_ns && r.cand[k].median_ns <= r.cand[k].max_ns);
    }
}

static void test_cuda_tuning(void **state) {
    (void)state;
    const tc__backend *be = tc__backend_get(TC__BACKEND_CUDA);
    tc__err err = {0};
    if (be == NULL || be->probe(&err) != TC_STATUS_OK) {
        print_message("no CUDA device: %s\n", be ? err.msg : "built without CUDA");
        skip();
    }
    void *exec = NULL;
    assert_int_equal(be->exec_create(0, &exec, &err), TC_STATUS_OK);
    tc__epilogue none = tc__epilogue_none();
    const tc__attrs no_attrs = {0, NULL};
    /* Relu on [64, 4096]: one short kernel, many launches per sample */
    tc__tensor x = {.dtype = TC_DTYPE_FLOAT32, .rank = 2, .dims = {64, 4096}, .nbytes = 4u * 64 * 4096}, y = x;
    const tc__tensor *in1[1] = {&x}, *out1[1] = {&y};
    bool cst1[1] = {false};
    tc__step_desc d = {.op_type = "Relu", .opset = 14, .attrs = &no_attrs, .n_in = 1, .in = in1, .in_const = cst1,
                       .n_out = 1, .out = out1, .epi = &none};
    cuda_tune_twice(be, exec, &d);
    /* Clip with constant bounds: the kernel reads them from ctx->host_in */
    float lo = -0.5f, hi = 0.75f;
    tc__tensor tlo = {.dtype = TC_DTYPE_FLOAT32, .rank = 0, .nbytes = 4, .data = &lo}, thi = tlo;
    thi.data = &hi;
    const tc__tensor *in3[3] = {&x, &tlo, &thi};
    bool cst3[3] = {false, true, true};
    d.op_type = "Clip", d.opset = 13, d.n_in = 3, d.in = in3, d.in_const = cst3;
    cuda_tune_twice(be, exec, &d);
    /* MatMul [256, 512] x constant [512, 256] */
    tc__tensor a = {.dtype = TC_DTYPE_FLOAT32, .rank = 2, .dims = {256, 512}, .nbytes = 4u * 256 * 512}, b, c;
    assert_int_equal(tc__tensor_alloc(&b, TC_DTYPE_FLOAT32, 2, (const int64_t[]){512, 256}, &err), TC_STATUS_OK);
    for (int64_t k = 0; k < 512 * 256; k++) ((float *)b.data)[k] = (float)(k % 7) * 0.125f - 0.375f;
    c = (tc__tensor){.dtype = TC_DTYPE_FLOAT32, .rank = 2, .dims = {256, 256}, .nbytes = 4u * 256 * 256};
    const tc__tensor *in2[2] = {&a, &b}, *out2[1] = {&c};
    bool cst2[2] = {false, true};
    d.op_type = "MatMul", d.n_in = 2, d.in = in2, d.in_const = cst2, d.out = out2;
    cuda_tune_twice(be, exec, &d);
    tc__tensor_free(&b);
    be->exec_destroy(exec);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_candidates),
        cmocka_unit_test(test_engine_one_candidate_untimed),
        cmocka_unit_test(test_engine_device_tuned),
        cmocka_unit_test(test_cuda_tuning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
