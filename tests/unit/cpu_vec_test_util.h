/*
 * cpu_vec_test_util.h - helpers for the tests of the CPU backend's vectorized float32 tactics
 * (test_cpu_vec_*.c): the reference result of a step (reference kernel, then the reference
 * epilogue), supports() on a step description, and a check that runs a tactic without and
 * with a 2-thread pool into poisoned outputs, compares both with the reference and requires
 * them to be bit-identical (results independent of threads). An expected output with more bytes
 * than its shape needs (a blocked tensor whose channels are padded, core/layout.h) gets an output
 * of as many bytes, all poisoned, and is compared over all of them (its padding lanes: zeros).
 *
 * Include after <cmocka.h> and "dense_test_util.h". Every helper is static: each test file is
 * its own program. The thread pool is the test program's (vtu_setup / vtu_teardown).
 */
#ifndef TC_TESTS_CPU_VEC_TEST_UTIL_H
#define TC_TESTS_CPU_VEC_TEST_UTIL_H

#include "core/layout.h"
#include "core/thread_pool.h"

#include "core/cpu.h"
#include "backends/tactic.h"

/* The 2-thread pool of the test program (created by vtu_setup). */
static tc__pool_t vtu_pool;

static int vtu_setup(void **state) {
    (void)state;
    vtu_pool = tc__pool_create(2);
    return vtu_pool == NULL ? -1 : 0;
}

static int vtu_teardown(void **state) {
    (void)state;
    tc__pool_destroy(vtu_pool);
    vtu_pool = NULL;
    return 0;
}

/* One step: the op's own inputs, attributes and the fused epilogue (act and residual). */
typedef struct vtu_step {
    const char *op;
    int64_t opset;
    const tc__attr *attrs;
    int n_attrs;
    int n_in;
    const tc__tensor *in[DTU_MAX_IO];
    tc__epilogue epi;
    const tc__tensor *residual;
} vtu_step;

static inline vtu_step vtu_step_of(const char *op, int64_t opset) {
    vtu_step s;
    memset(&s, 0, sizeof s);
    s.op = op;
    s.opset = opset;
    s.epi = tc__epilogue_none();
    return s;
}

/* True when this machine (not capped by TAILCUT_MAX_ISA) can run tactic t. */
static inline bool vtu_isa_ok(const tc__tactic *t) {
    tc__cpu full;
    tc__cpu_detect(NULL, &full);
    return (t->caps & ~full.isa) == 0;
}

/* The reference output of step s (op's kernel, then its epilogue), allocated into *y. */
static inline void vtu_reference(dtu_op op, const vtu_step *s, tc__tensor *y) {
    dtu_run_ok(op, s->opset, s->attrs, s->n_attrs, s->n_in, s->in, 1, y);
    tc__err err = {0};
    if (tc__epilogue_apply(&s->epi, y, NULL, s->residual, &err) != TC_STATUS_OK)
        fail_msg("reference epilogue failed: %s", err.msg);
}

/* t->supports on step s with output shape y (inputs 1.. count as constant, as weights are). */
static inline bool vtu_supports(const tc__tactic *t, const vtu_step *s, const tc__tensor *y) {
    bool in_const[DTU_MAX_IO] = {false};
    for (int i = 1; i < s->n_in; i++) in_const[i] = true;
    const tc__tensor *out[1] = {y};
    tc__attrs as = {s->n_attrs, s->attrs};
    tc__step_desc d = {s->op, s->opset, &as, s->n_in, s->in, in_const, 1, out, &s->epi, NULL, s->residual, NULL, 0};
    return t->supports(&d);
}

/* supports() of the Softmax tactics sm and the LogSoftmax tactics lsm (n each) on the step of inputs in[0..n_in),
 * output y and attributes as, opset 13: true when all accept it; fails the test when they disagree. */
static inline bool vtu_softmax_supports(const tc__tactic *const *sm, const tc__tactic *const *lsm, int n,
                                        const tc__attrs *as, int64_t opset, int n_in, const tc__tensor *const *in,
                                        const tc__tensor *y) {
    const tc__tensor *out[1] = {y};
    bool in_const[DTU_MAX_IO] = {false};
    tc__epilogue none = tc__epilogue_none();
    bool any = false, all = true;
    for (int lg = 0; lg < 2; lg++) {
        tc__step_desc d = {lg ? "LogSoftmax" : "Softmax", opset, as, n_in, in, in_const, 1, out, &none, NULL, NULL, NULL, 0};
        for (int i = 0; i < n; i++) {
            const bool ok = (lg ? lsm : sm)[i]->supports(&d);
            any = any || ok;
            all = all && ok;
        }
    }
    assert_int_equal(any, all);
    return all;
}

/* Fills t's bytes with a NaN payload no kernel produces, so that unwritten elements fail comparisons. */
static inline void vtu_poison(tc__tensor *t) {
    uint32_t bits = 0x7fc0dead;
    for (size_t i = 0; i < t->nbytes / sizeof bits; i++) memcpy((float *)t->data + i, &bits, sizeof bits);
}

/* A zeroed tensor of like's dtype and dims with like's bytes (more than the dims need when like is padded). */
static inline tc__tensor vtu_alloc_like(const tc__tensor *like) {
    tc__tensor y = dtu_tensor(like->dtype, like->rank, like->dims);
    if (like->nbytes > y.nbytes) {
        free(y.data);
        y.data = calloc(1, like->nbytes);
        assert_non_null(y.data);
        y.nbytes = like->nbytes;
    }
    return y;
}

/* A zeroed float32 tensor of logical dims [N, C, H, W] stored NCHW<block>c, C padded up to the block. */
static inline tc__tensor vtu_blocked_tensor(int64_t block, const int64_t *dims) {
    const int64_t n = tc__nchwc_elems(block, dims);
    assert_true(n >= 0);
    tc__tensor t = dtu_tensor(TC_DTYPE_FLOAT32, 4, dims);
    free(t.data);
    t.data = calloc(1, (size_t)(n ? n : 1) * sizeof(float));
    assert_non_null(t.data);
    t.nbytes = (size_t)n * sizeof(float);
    return t;
}

/*
 * Runs tactic t on step s into a fresh poisoned output shaped like like; fails the test unless
 * it returns OK. No scratch is lent (these tactics need none); n_in_ctx overrides the input
 * count the context reports (0: s->n_in).
 */
static inline tc__tensor vtu_run_tactic_config(const tc__tactic *t, const vtu_step *s, const tc__tensor *like,
                                               tc__pool_t pool, int n_in_ctx, const tc__tensor *const *in_ctx,
                                               const void *config) {
    tc__tensor y = vtu_alloc_like(like);
    vtu_poison(&y);
    tc__tensor *out[1] = {&y};
    tc__attrs as = {s->n_attrs, s->attrs};
    tc__err err = {0};
    unsigned char none[1];
    tc__scratch scratch = {none, 0, 0};
    tc__kernel_ctx kc = {"test", s->op, s->opset, &as, n_in_ctx ? n_in_ctx : s->n_in, in_ctx ? in_ctx : s->in, 1,
                         out, &err, &scratch, &s->epi, NULL, s->residual, pool, config, NULL, NULL};
    tc_status st = t->run(&kc);
    if (st != TC_STATUS_OK) fail_msg("%s failed with status %d: %s", t->name, (int)st, err.msg);
    return y;
}

/* vtu_run_tactic_config with no configuration (the tactic's default). */
static inline tc__tensor vtu_run_tactic(const tc__tactic *t, const vtu_step *s, const tc__tensor *like,
                                        tc__pool_t pool, int n_in_ctx, const tc__tensor *const *in_ctx) {
    return vtu_run_tactic_config(t, s, like, pool, n_in_ctx, in_ctx, NULL);
}

/*
 * For a tactic with configurations: each one the step admits (at least one), run without and with the pool,
 * must give exactly the bits `want` (the default's run).
 */
static inline void vtu_check_configs(const tc__tactic *t, const vtu_step *s, const tc__tensor *want, const char *what) {
    if (t->configs == NULL || t->config_bytes == 0) return;
    bool in_const[DTU_MAX_IO] = {false};
    for (int i = 1; i < s->n_in; i++) in_const[i] = true;
    const tc__tensor *out[1] = {want};
    tc__attrs as = {s->n_attrs, s->attrs};
    tc__step_desc d = {s->op, s->opset, &as, s->n_in, s->in, in_const, 1, out, &s->epi, NULL, s->residual, NULL, 0};
    unsigned char cfg[TC__TACTIC_MAX_CONFIGS * TC__TACTIC_CONFIG_MAX];
    const int n = t->configs(&d, cfg, TC__TACTIC_MAX_CONFIGS);
    if (n < 1) fail_msg("%s [%s]: no configuration for a step it supports", what, t->name);
    for (int c = 0; c < n && c < TC__TACTIC_MAX_CONFIGS; c++) {
        const void *conf = cfg + (size_t)c * t->config_bytes;
        tc__err err = {0};
        if (t->check_config != NULL && !t->check_config(conf, &err))
            fail_msg("%s [%s#%d]: its own configuration is refused: %s", what, t->name, c, err.msg);
        for (int threaded = 0; threaded < 2; threaded++) {
            tc__tensor y = vtu_run_tactic_config(t, s, want, threaded ? vtu_pool : NULL, 0, NULL, conf);
            if (memcmp(y.data, want->data, y.nbytes) != 0)
                fail_msg("%s [%s#%d, %d thread(s)]: differs from the default's bits", what, t->name, c, 1 + threaded);
            tc__tensor_free(&y);
        }
    }
}

/* Every float of got's bytes within tol * (1 + |want|) of want's (padding lanes included); NaN and infinities must
 * match exactly. */
static inline void vtu_assert_close(const tc__tensor *got, const tc__tensor *want, double tol, const char *what) {
    assert_int_equal(tc__tensor_numel(got), tc__tensor_numel(want));
    assert_int_equal(got->nbytes, want->nbytes);
    const float *g = got->data, *w = want->data;
    for (int64_t i = 0; i < (int64_t)(got->nbytes / sizeof(float)); i++) {
        bool ok;
        if (isnan(w[i])) ok = isnan(g[i]);
        else if (isinf(w[i])) ok = g[i] == w[i];
        else ok = fabs((double)g[i] - (double)w[i]) <= tol * (1.0 + fabs((double)w[i]));
        if (!ok) fail_msg("%s: element %lld: got %.9g, want %.9g", what, (long long)i, g[i], w[i]);
    }
}

/*
 * Checks tactic t on step s against the reference output ref: supports() accepts the step;
 * run() without and with the thread pool matches ref within tol; the two runs are identical, and so
 * are the runs of each configuration the tactic offers for the step (vtu_check_configs).
 * Skips (returns) when the machine lacks the tactic's ISA.
 */
static inline void vtu_check_against(const tc__tactic *t, const vtu_step *s, const tc__tensor *ref, double tol,
                                     const char *what) {
    if (!vtu_isa_ok(t)) return;
    if (!vtu_supports(t, s, ref)) fail_msg("%s: %s does not support the step", what, t->name);
    tc__tensor y1 = vtu_run_tactic(t, s, ref, NULL, 0, NULL);
    tc__tensor y2 = vtu_run_tactic(t, s, ref, vtu_pool, 0, NULL);
    char msg[256];
    snprintf(msg, sizeof msg, "%s [%s, 1 thread]", what, t->name);
    vtu_assert_close(&y1, ref, tol, msg);
    if (memcmp(y1.data, y2.data, y1.nbytes) != 0) fail_msg("%s [%s]: threaded result differs", what, t->name);
    vtu_check_configs(t, s, &y1, what);
    tc__tensor_free(&y2);
    tc__tensor_free(&y1);
}

/* The reference of step s, then vtu_check_against for each of the n tactics. */
static inline void vtu_check(dtu_op op, const vtu_step *s, const tc__tactic *const *tactics, int n, double tol,
                             const char *what) {
    tc__tensor ref;
    vtu_reference(op, s, &ref);
    for (int i = 0; i < n; i++) vtu_check_against(tactics[i], s, &ref, tol, what);
    tc__tensor_free(&ref);
}

/* Random float32 tensor with values uniform in [lo, hi), never exactly zero. */
static inline tc__tensor vtu_random(dtu_rng *r, int32_t rank, const int64_t *dims, double lo, double hi) {
    tc__tensor t = dtu_tensor(TC_DTYPE_FLOAT32, rank, dims);
    float *p = t.data;
    for (int64_t i = 0; i < tc__tensor_numel(&t); i++) p[i] = (float)dtu_uniform(r, lo, hi);
    return t;
}

/* Runs tactic t on step d with the kernel context's inputs in (n_ctx of them: the op's, then the epilogue's),
 * on pool (or NULL), into a new poisoned tensor shaped like `like`, with exactly scratch_bytes(d) of scratch. */
static inline tc__tensor vtu_run_desc(const tc__tactic *t, const tc__step_desc *d, int n_ctx,
                                      const tc__tensor *const *in, const tc__tensor *like, tc__pool_t pool) {
    tc__tensor y = vtu_alloc_like(like);
    vtu_poison(&y);
    tc__tensor *out[1] = {&y};
    const size_t need = t->scratch_bytes(d);
    unsigned char *mem = aligned_alloc(64, (need + 63) / 64 * 64);
    assert_non_null(mem);
    tc__scratch scratch = {mem, need, 0};
    tc__err err = {0};
    tc__kernel_ctx kc = {"test", d->op_type, 13, d->attrs, n_ctx, in, 1, out, &err, &scratch, d->epi, d->bias,
                         d->residual, pool, NULL, NULL, NULL};
    tc_status st = t->run(&kc);
    if (st != TC_STATUS_OK) fail_msg("%s failed with status %d: %s", t->name, (int)st, err.msg);
    free(mem);
    return y;
}

/* A 4-D float tensor reordered from NCHW to NCHW16c (to_blocked) or back (C a multiple of 16). */
static inline tc__tensor vtu_reorder_nchw16c(const tc__tensor *t, bool to_blocked) {
    tc__tensor b = dtu_tensor(t->dtype, t->rank, t->dims);
    const size_t n = (size_t)t->dims[0], c = (size_t)t->dims[1], h = (size_t)t->dims[2], w = (size_t)t->dims[3];
    const float *s = t->data;
    float *o = b.data;
    size_t i = 0;
    for (size_t a = 0; a < n; a++)
        for (size_t ch = 0; ch < c; ch++)
            for (size_t y = 0; y < h; y++)
                for (size_t x = 0; x < w; x++, i++) {
                    size_t bi = tc__nchw16c_offset(c, h, w, a, ch, y, x);
                    if (to_blocked) o[bi] = s[i];
                    else o[i] = s[bi];
                }
    return b;
}

/* The epilogues every fusing tactic is tested with (activation only; residuals are added by the tests). */
static const tc__epilogue vtu_epilogues[] = {
    {-1, -1, TC__ACT_NONE, 0, 0.0f, 0.0f},        {-1, -1, TC__ACT_RELU, 0, 0.0f, 0.0f},
    {-1, -1, TC__ACT_CLIP, 0, 0.0f, 6.0f},        {-1, -1, TC__ACT_SILU, 0, 0.0f, 0.0f},
    {-1, -1, TC__ACT_HARDSWISH, 0, 0.0f, 0.0f},   {-1, -1, TC__ACT_SIGMOID, 0, 0.0f, 0.0f},
    {-1, -1, TC__ACT_HARDSIGMOID, 0, 0.2f, 0.5f}, {-1, -1, TC__ACT_GELU_ERF, 0, 0.0f, 0.0f},
    {-1, -1, TC__ACT_GELU_TANH, 0, 0.0f, 0.0f},   {-1, -1, TC__ACT_LEAKY_RELU, 0, 0.1f, 0.0f},
    {-1, -1, TC__ACT_TANH, 0, 0.0f, 0.0f},
};
#define VTU_N_EPILOGUES ((int)(sizeof vtu_epilogues / sizeof vtu_epilogues[0]))

#endif
