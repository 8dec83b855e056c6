/*
 * test_tactic_configs.c - tactic configurations as tuner candidates (tactic.h configs / config_bytes / check_config),
 * on the CPU tactic that has them, matmul_f32_avx512 (the GEMM's MC / NC blocking, gemm.h tc__gemm_blocking): every
 * configuration computes the default's bits; the tuner times each as a candidate; the winner's bytes go to the plan's
 * parameter blob and come back at load through check_config, which refuses bad ones; an engine run with another
 * blocking gives the same bits. Skips where AVX-512 is not usable (the tactic is then never chosen).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "backends/cpu/gemm.h"
#include "backends/cpu/tactics.h"
#include "engine/engine.h"
#include "engine/engine_tactics.h"
#include "engine_test_model.h"
#include "plan_test_util.h"

static const tc__tactic *const kT = &tc__tactic_matmul_f32_avx512;

static bool usable(void) { return (kT->caps & ~tc__backend_cpu.caps()) == 0; }

static void fill(tc__tensor *t, uint64_t seed) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
    float *p = t->data;
    for (int64_t i = 0; i < tc__tensor_numel(t); i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        p[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    }
}

/* A MatMul step Y[m, n] = X[m, k] * W[k, n] with W constant (W packed for kT into *packed). */
typedef struct mm_case {
    tc__tensor x, w, y, packed;
    const tc__tensor *in[2], *out[1];
    bool in_const[2];
    tc__epilogue none;
    tc__attrs attrs;
    tc__step_desc d;
} mm_case;

static void mm_case_init(mm_case *c, int64_t m, int64_t k, int64_t n) {
    memset(c, 0, sizeof *c);
    tc__err err = {0};
    assert_int_equal(tc__tensor_alloc(&c->x, TC_DTYPE_FLOAT32, 2, (int64_t[]){m, k}, &err), TC_STATUS_OK);
    assert_int_equal(tc__tensor_alloc(&c->w, TC_DTYPE_FLOAT32, 2, (int64_t[]){k, n}, &err), TC_STATUS_OK);
    assert_int_equal(tc__tensor_alloc(&c->y, TC_DTYPE_FLOAT32, 2, (int64_t[]){m, n}, &err), TC_STATUS_OK);
    fill(&c->x, (uint64_t)(m * 7 + k)), fill(&c->w, (uint64_t)(n * 13 + k));
    c->in[0] = &c->x, c->in[1] = &c->w, c->out[0] = &c->y;
    c->in_const[1] = true;
    c->none = tc__epilogue_none();
    c->d = (tc__step_desc){.op_type = "MatMul", .opset = 17, .attrs = &c->attrs, .n_in = 2, .in = c->in,
                           .in_const = c->in_const, .n_out = 1, .out = c->out, .epi = &c->none};
    assert_true(kT->supports(&c->d));
    c->packed = c->w;
    c->packed.data = malloc(c->w.nbytes);
    assert_int_equal(kT->pack(&c->d, 1, c->w.data, c->packed.data, &err), TC_STATUS_OK);
}

static void mm_case_free(mm_case *c) {
    tc__tensor_free(&c->x), tc__tensor_free(&c->w), tc__tensor_free(&c->y);
    free(c->packed.data);
}

/* Runs kT on c with configuration config (NULL: none) on pool into c->y. */
static void mm_run(mm_case *c, const void *config, void *pool) {
    const size_t bytes = kT->scratch_bytes(&c->d) + 4096;
    void *mem = aligned_alloc(64, (bytes + 63) / 64 * 64);
    tc__scratch scratch = {mem, bytes, 0};
    tc__err err = {0};
    const tc__tensor *in[2] = {&c->x, &c->packed};
    tc__tensor *out[1] = {&c->y};
    memset(c->y.data, 0, c->y.nbytes);
    const tc__kernel_ctx kc = {.node_name = "mm", .op_type = "MatMul", .opset = 17, .attrs = &c->attrs, .n_in = 2,
                               .in = in, .n_out = 1, .out = out, .err = &err, .scratch = &scratch, .epi = &c->none,
                               .exec = pool, .config = config};
    if (kT->run(&kc) != TC_STATUS_OK) fail_msg("run: %s", err.msg);
    free(mem);
}

/* Every configuration of every case computes the default's bytes (which test_all_tactics checks against the
 * reference), on one thread and on two; the default comes first; check_config takes them all. */
static void test_configs_same_bits(void **state) {
    (void)state;
    if (!usable()) skip();
    void *pool = NULL;
    tc__err err = {0};
    assert_int_equal(tc__backend_cpu.exec_create(2, &pool, &err), TC_STATUS_OK);
    static const int64_t shapes[][3] = {{1, 1, 1}, {37, 3, 45}, {700, 300, 200}, {129, 1100, 33}};
    int most = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        mm_case c;
        mm_case_init(&c, shapes[s][0], shapes[s][1], shapes[s][2]);
        tc__gemm_blocking cfg[TC__TACTIC_MAX_CONFIGS];
        const int n = kT->configs(&c.d, cfg, TC__TACTIC_MAX_CONFIGS);
        assert_true(n >= 1 && n <= TC__TACTIC_MAX_CONFIGS);
        assert_int_equal(cfg[0].mc_shift, 0), assert_int_equal(cfg[0].nc_shift, 0);
        if (n > most) most = n;
        mm_run(&c, NULL, NULL);
        float *want = malloc(c.y.nbytes);
        memcpy(want, c.y.data, c.y.nbytes);
        for (int j = 0; j < n; j++) {
            assert_true(kT->check_config(&cfg[j], &err));
            for (int threads = 0; threads < 2; threads++) {
                mm_run(&c, &cfg[j], threads ? pool : NULL);
                if (memcmp(c.y.data, want, c.y.nbytes) != 0)
                    fail_msg("%lld x %lld x %lld: blocking (%u, %u) changes the result", (long long)shapes[s][0],
                             (long long)shapes[s][1], (long long)shapes[s][2], cfg[j].mc_shift, cfg[j].nc_shift);
            }
        }
        free(want);
        mm_case_free(&c);
    }
    assert_true(most > 1); /* the large products have blockings to choose from */
    tc__backend_cpu.exec_destroy(pool);
    /* check_config refuses what a plan could carry that the kernel does not take */
    const tc__gemm_blocking bad[3] = {{.mc_shift = TC__GEMM_MAX_SHIFT + 1}, {.nc_shift = 200}, {.reserved = {0, 1}}};
    for (int i = 0; i < 3; i++) {
        memset(&err, 0, sizeof err);
        assert_false(kT->check_config(&bad[i], &err));
        assert_non_null(strstr(err.msg, "GEMM blocking"));
    }
}

/* The tuner times one candidate per configuration: entries of the tactic's name with config 0, 1, ... */
static void test_tuner_candidates(void **state) {
    (void)state;
    if (!usable()) skip();
    mm_case c;
    mm_case_init(&c, 700, 300, 200);
    tc__gemm_blocking cfg[TC__TACTIC_MAX_CONFIGS];
    const int n = kT->configs(&c.d, cfg, TC__TACTIC_MAX_CONFIGS);
    const tc__tactic *cands[2] = {kT, tc__tactic_fallback(&tc__backend_cpu, "MatMul")};
    tc__tune_result r;
    tc__err err = {0};
    assert_int_equal(tc__tune_step(&c.d, cands, 1, 2, &tc__backend_cpu, NULL, &r, &err), TC_STATUS_OK);
    assert_int_equal(r.n, n);
    for (int j = 0; j < n; j++) {
        assert_string_equal(r.cand[j].name, kT->name);
        assert_int_equal(r.cand[j].config, j);
        assert_true(r.cand[j].min_ns != UINT64_MAX);
    }
    /* a tactic without configurations stays one candidate (config -1) */
    assert_int_equal(tc__tune_step(&c.d, cands + 1, 1, 1, &tc__backend_cpu, NULL, &r, &err), TC_STATUS_OK);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.cand[0].config, -1);
    mm_case_free(&c);
}

/* A one-MatMul model (x [700, 300] times a constant [300, 200]). */
static tc_model *mm_model(void) {
    B *b = b_new(17);
    static const char *const xd[] = {"700", "300"}, *const yd[] = {"700", "200"};
    b_input(b, b_vi(b, "x", 1, 2, xd));
    b_output(b, b_vi(b, "y", 1, 2, yd));
    etm_weight(b, "w", 2, (int64_t[]){300, 200}, -0.25f);
    b_node(b, "mm", "MatMul", "x,w", "y");
    return etm_load(b);
}

static void run_engine(tc_engine *e, float *x, float *y) {
    tc_context *c = NULL;
    tc_error err;
    if (tc_context_create(e, 0, &c, &err) != TC_STATUS_OK) fail_msg("context: %s", err.message);
    assert_int_equal(tc_context_set_tensor(c, "x", x, sizeof(float) * 700 * 300), TC_STATUS_OK);
    assert_int_equal(tc_context_set_tensor(c, "y", y, sizeof(float) * 700 * 200), TC_STATUS_OK);
    if (tc_context_run(c) != TC_STATUS_OK) fail_msg("run: %s", tc_context_error(c));
    tc_context_destroy(c);
}

/* Build (untimed: the default configuration), the plan's blob, another configuration written into the plan and read
 * back at load (same bytes, same output bits), a bad one refused by check_config naming the step. */
static void test_plan_round_trip(void **state) {
    (void)state;
    if (!usable()) skip();
    tc_model *m = mm_model();
    tc_build_options o = {.struct_size = sizeof o, .flags = TC_BUILD_TACTICS_FIXED};
    tc_engine *e = NULL;
    tc_error terr;
    if (tc_engine_build(m, &o, &e, &terr) != TC_STATUS_OK) fail_msg("build: %s", terr.message);
    int k = -1;
    for (int s = 0; s < e->n_steps; s++)
        if (e->steps[s].kind == TC__STEP_COMPUTE && strcmp(e->steps[s].tactic, kT->name) == 0) k = s;
    assert_true(k >= 0);
    assert_ptr_equal(e->tactics[k], kT);
    /* the build wrote the default configuration, and the load checked it */
    assert_int_equal(e->param_size[k], sizeof(tc__gemm_blocking));
    const tc__gemm_blocking zero = {0};
    assert_memory_equal(e->params[k], &zero, sizeof zero);
    /* the configurations of the step, as the engine sees it; the tuner's winner among them goes to the blob */
    tc__shapes s;
    tc__err err = {0};
    assert_int_equal(tc__shapes_at(e->g, e->steps, e->profiles[0].ranges, 1, &s, &err), TC_STATUS_OK);
    tc__desc_store ds;
    tc__desc_build_packed(e->g, &e->g->nodes[e->steps[k].node], &s, &ds);
    tc__gemm_blocking cfg[TC__TACTIC_MAX_CONFIGS];
    const int n = kT->configs(&ds.d, cfg, TC__TACTIC_MAX_CONFIGS);
    tc__shapes_free(&s);
    assert_true(n > 1);
    tc__tune_result *res = calloc((size_t)e->n_steps, sizeof *res);
    res[k].n = 1, res[k].winner = 0, res[k].cand[0].config = n - 1;
    snprintf(res[k].cand[0].name, sizeof res[k].cand[0].name, "%s", kT->name);
    const tc__range *ranges[1] = {e->profiles[0].ranges};
    tc__step_configs sc;
    assert_int_equal(tc__engine_step_configs(e->g, e->steps, res, ranges, 1, &sc, &err), TC_STATUS_OK);
    assert_int_equal(sc.sizes[k], sizeof(tc__gemm_blocking));
    assert_memory_equal(sc.params[k], &cfg[n - 1], sizeof cfg[0]);
    free(res);
    /* that configuration in a plan: loaded with the same bytes, and the same output bits as the default */
    const unsigned char **saved_params = e->params;
    uint32_t *saved_size = e->param_size;
    e->params = sc.params, e->param_size = sc.sizes;
    void *blob = NULL;
    size_t blob_size = 0, plan_size = 0;
    assert_int_equal(tc__engine_blob_write(e, &blob, &blob_size, &err), TC_STATUS_OK);
    void *plan = ptu_replan(e, blob, blob_size, &plan_size);
    free(blob);
    tc_engine *other = NULL;
    if (tc__engine_from_plan(plan, plan_size, false, 0, &other, &err) != TC_STATUS_OK) fail_msg("load: %s", err.msg);
    assert_int_equal(other->param_size[k], sizeof(tc__gemm_blocking));
    assert_memory_equal(other->params[k], &cfg[n - 1], sizeof cfg[0]);
    float *x = malloc(sizeof(float) * 700 * 300), *y0 = malloc(sizeof(float) * 700 * 200),
          *y1 = malloc(sizeof(float) * 700 * 200);
    for (int i = 0; i < 700 * 300; i++) x[i] = etm_uniform();
    e->params = saved_params, e->param_size = saved_size;
    run_engine(e, x, y0);
    run_engine(other, x, y1);
    assert_memory_equal(y0, y1, sizeof(float) * 700 * 200);
    tc_engine_destroy(other);
    /* an empty blob (a plan from before the tactic had configurations) loads as the default: the same bits */
    uint32_t *no_sizes = calloc((size_t)e->n_steps, sizeof *no_sizes);
    e->param_size = no_sizes;
    assert_int_equal(tc__engine_blob_write(e, &blob, &blob_size, &err), TC_STATUS_OK);
    e->param_size = saved_size;
    plan = ptu_replan(e, blob, blob_size, &plan_size);
    free(blob);
    if (tc__engine_from_plan(plan, plan_size, false, 0, &other, &err) != TC_STATUS_OK) fail_msg("load: %s", err.msg);
    assert_int_equal(other->param_size[k], 0);
    run_engine(other, x, y1);
    assert_memory_equal(y0, y1, sizeof(float) * 700 * 200);
    tc_engine_destroy(other);
    free(no_sizes);
    /* a configuration check_config refuses: the load fails naming the step */
    const tc__gemm_blocking bad = {.mc_shift = 9};
    memcpy((void *)sc.params[k], &bad, sizeof bad);
    e->params = sc.params, e->param_size = sc.sizes;
    assert_int_equal(tc__engine_blob_write(e, &blob, &blob_size, &err), TC_STATUS_OK);
    e->params = saved_params, e->param_size = saved_size;
    plan = ptu_replan(e, blob, blob_size, &plan_size);
    free(blob);
    ptu_expect_load_failure(plan, plan_size, TC_STATUS_CORRUPT_FILE, "bad configuration: GEMM blocking");
    tc__step_configs_free(&sc);
    free(x), free(y0), free(y1);
    tc_engine_destroy(e);
    tc_model_destroy(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_configs_same_bits), cmocka_unit_test(test_tuner_candidates),
                                       cmocka_unit_test(test_plan_round_trip)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
