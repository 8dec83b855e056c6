/*
 * test_engine_layout.c - engines built with the NCHW16c layout pass agree with the reference
 * executor: random small CNNs (stem on 3 or 16 channels, stride 1 or 2, max pooling, depthwise
 * convolution, 1x1 convolution with a residual, squeeze-excite with an 8-channel squeeze, a 24-channel
 * convolution: both padded up to the block in NCHW16c, average pooling, a 4-D graph output and a
 * classifier) on random odd and even sizes, with
 * 1 and 2 threads. Heuristic (--tactics-fixed) builds keep the layout pass's graph: on a CPU with
 * AVX-512 (NCHW16c) or AVX2 (NCHW8c; TAILCUT_MAX_ISA=avx2 runs it so, test_engine_layout_avx2) they
 * must have blocked steps and reorders, without either none. Tuned builds (which keep
 * whichever layout timed faster) and builds without the pass must agree too. A net of 20 channels is padded on
 * either block: its plan saved and loaded gives the same bits, its packed weights are larger than their sources, and a
 * load refuses one cut short. Also: every op's tactic list fits the tuner's candidate array.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "core/cpu.h"
#include "backends/tactic.h"
#include "tactics/tuner.h"
#include "engine_test_model.h"
#include "plan_test_util.h"

typedef struct net {
    int64_t cin, h, w, c1, stride;
} net;

static void ints_attr(B *b, Onnx__NodeProto *n, const char *name, int count, const int64_t *v) {
    Onnx__AttributeProto *a = b_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->n_ints = (size_t)count;
    a->ints = b_dup(b, v, sizeof(int64_t) * (size_t)count);
}

static void int_attr(B *b, Onnx__NodeProto *n, const char *name, int64_t v) {
    Onnx__AttributeProto *a = b_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1;
    a->i = v;
}

static void conv(B *b, const char *name, const char *ins, const char *out, int64_t k, int64_t stride, int64_t group) {
    Onnx__NodeProto *n = b_node(b, name, "Conv", ins, out);
    int64_t p = k / 2;
    ints_attr(b, n, "pads", 4, (int64_t[]){p, p, p, p});
    ints_attr(b, n, "strides", 2, (int64_t[]){stride, stride});
    if (group > 1) int_attr(b, n, "group", group);
}

static tc_model *build(const net *c) {
    B *b = b_new(17);
    char h[24], w[24], cin[24];
    snprintf(h, sizeof h, "%lld", (long long)c->h);
    snprintf(w, sizeof w, "%lld", (long long)c->w);
    snprintf(cin, sizeof cin, "%lld", (long long)c->cin);
    const char *xdims[] = {"1", cin, h, w}, *ydims[] = {"1", "5"};
    b_input(b, b_vi(b, "x", 1, 4, xdims));
    b_output(b, b_vi(b, "y", 1, 2, ydims));
    const int64_t h1 = (c->h - 1) / c->stride + 1, w1 = (c->w - 1) / c->stride + 1; /* stem: 3x3, pads 1 */
    char zh[24], zw[24];
    snprintf(zh, sizeof zh, "%lld", (long long)((h1 - 1) / 2 + 1)); /* max pooling 3x3, stride 2, pads 1 */
    snprintf(zw, sizeof zw, "%lld", (long long)((w1 - 1) / 2 + 1));
    b_output(b, b_vi(b, "z", 1, 4, (const char *[]){"1", "16", zh, zw}));
    const int64_t c1 = c->c1;
    etm_weight(b, "w1", 4, (int64_t[]){c1, c->cin, 3, 3}, -0.25f);
    etm_weight(b, "b1", 1, (int64_t[]){c1}, -0.25f);
    etm_weight(b, "wd", 4, (int64_t[]){c1, 1, 3, 3}, -0.25f);
    etm_weight(b, "wp", 4, (int64_t[]){c1, c1, 1, 1}, -0.25f);
    etm_weight(b, "bp", 1, (int64_t[]){c1}, -0.25f);
    etm_weight(b, "ws", 4, (int64_t[]){8, c1, 1, 1}, -0.25f);
    etm_weight(b, "we", 4, (int64_t[]){c1, 8, 1, 1}, -0.25f);
    etm_weight(b, "w24", 4, (int64_t[]){24, c1, 1, 1}, -0.25f);
    etm_weight(b, "w16", 4, (int64_t[]){16, 24, 3, 3}, -0.25f);
    etm_weight(b, "fc_w", 2, (int64_t[]){c1, 5}, -0.25f);
    conv(b, "stem", "x,w1,b1", "c1", 3, c->stride, 1);
    b_node(b, "stem_relu", "Relu", "c1", "r1");
    Onnx__NodeProto *mp = b_node(b, "pool", "MaxPool", "r1", "p1");
    ints_attr(b, mp, "kernel_shape", 2, (int64_t[]){3, 3});
    ints_attr(b, mp, "strides", 2, (int64_t[]){2, 2});
    ints_attr(b, mp, "pads", 4, (int64_t[]){1, 1, 1, 1});
    conv(b, "dw", "p1,wd", "d1", 3, 1, c1);
    b_node(b, "dw_relu", "Relu", "d1", "d2");
    conv(b, "pw", "d2,wp,bp", "e1", 1, 1, 1);
    b_node(b, "res", "Add", "e1,p1", "e2");
    b_node(b, "res_relu", "Relu", "e2", "e3");
    b_node(b, "se_pool", "GlobalAveragePool", "e3", "s0");
    conv(b, "se_squeeze", "s0,ws", "s1", 1, 1, 1);
    b_node(b, "se_relu", "Relu", "s1", "s2");
    conv(b, "se_expand", "s2,we", "s3", 1, 1, 1);
    b_node(b, "se_gate", "Sigmoid", "s3", "s4");
    b_node(b, "se_scale", "Mul", "e3,s4", "f1");
    conv(b, "narrow", "f1,w24", "g1", 1, 1, 1);
    conv(b, "widen", "g1,w16", "z", 3, 1, 1);
    Onnx__NodeProto *ap = b_node(b, "avg", "AveragePool", "f1", "a1");
    ints_attr(b, ap, "kernel_shape", 2, (int64_t[]){2, 2});
    int_attr(b, ap, "ceil_mode", 1);
    b_node(b, "head_pool", "GlobalAveragePool", "a1", "a2");
    b_node(b, "flat", "Flatten", "a2", "a3");
    b_node(b, "fc", "MatMul", "a3,fc_w", "y");
    size_t len;
    uint8_t *bytes = b_pack(b, &len);
    tc_model *m = NULL;
    tc_error err;
    if (tc_model_load_buffer(bytes, len, NULL, NULL, &m, &err)) fail_msg("model load: %s", err.message);
    b_free(b);
    return m;
}

static tc_engine *engine(const tc_model *m, uint32_t disabled, uint32_t flags, int threads) {
    tc_build_options o = {.struct_size = sizeof o, .threads = threads, .disabled_passes = disabled, .flags = flags};
    tc_engine *e = NULL;
    tc_error err;
    if (tc_engine_build(m, &o, &e, &err)) fail_msg("build: %s", err.message);
    return e;
}

static void count_layout(const tc_engine *e, int *blocked, int *reorders) {
    *blocked = *reorders = 0;
    for (int k = 0; k < tc_engine_num_steps(e); k++) {
        tc_step_info si;
        assert_int_equal(tc_engine_step_info(e, k, &si), TC_STATUS_OK);
        *blocked += strcmp(si.layout, "nchw16c") == 0 || strcmp(si.layout, "nchw8c") == 0;
        *reorders += si.is_reorder;
    }
}

/* Runs e on x and compares both outputs with the reference. */
static void check_engine(const tc_engine *e, const tc_tensor *x, const tc_tensor *want, const char *what) {
    tc_context *ctx = NULL;
    assert_int_equal(tc_context_create(e, 0, &ctx, NULL), TC_STATUS_OK);
    assert_int_equal(tc_context_set_tensor(ctx, "x", x->data, x->nbytes), TC_STATUS_OK);
    if (tc_context_run(ctx) != TC_STATUS_OK) fail_msg("%s: run: %s", what, tc_context_error(ctx));
    const char *names[2] = {"y", "z"};
    for (int o = 0; o < 2; o++) {
        tc_tensor got;
        assert_int_equal(tc_context_tensor(ctx, names[o], &got), TC_STATUS_OK);
        assert_int_equal(got.nbytes, want[o].nbytes);
        const float *g = got.data, *w = want[o].data;
        double scale = 0.0;
        for (size_t i = 0; i < want[o].nbytes / 4; i++) scale = fmax(scale, fabs(w[i]));
        for (size_t i = 0; i < want[o].nbytes / 4; i++)
            if (fabs(g[i] - w[i]) > 1e-4 * (fabs(w[i]) + scale))
                fail_msg("%s: output %s element %zu: got %g, want %g", what, names[o], i, (double)g[i], (double)w[i]);
    }
    tc_context_destroy(ctx);
}

static void test_random_cnns(void **state) {
    (void)state;
    /* NCHW16c on AVX-512, NCHW8c on AVX2 (TAILCUT_MAX_ISA=avx2: the test_engine_layout_avx2 run) */
    const uint64_t isa = tc__cpu_get()->isa, avx2 = TC__ISA_AVX | TC__ISA_AVX2 | TC__ISA_FMA;
    const bool blocked_cpu = (isa & TC__ISA_AVX512F) != 0 || (isa & avx2) == avx2;
    static const net nets[] = {
        {3, 16, 16, 16, 1}, {3, 17, 13, 32, 2}, {16, 9, 11, 16, 1}, {16, 7, 7, 48, 1}, {3, 23, 19, 32, 1},
        {16, 5, 6, 16, 2}, {16, 7, 9, 20, 1}, /* 20 channels: padded on either block */
    };
    for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++) {
        const net *c = &nets[i];
        tc_model *m = build(c);
        tc_tensor x;
        assert_int_equal(tc_tensor_alloc(TC_DTYPE_FLOAT32, 4, (int64_t[]){1, c->cin, c->h, c->w}, &x, NULL),
                         TC_STATUS_OK);
        for (size_t k = 0; k < x.nbytes / 4; k++) ((float *)x.data)[k] = etm_uniform();
        const char *in_names[1] = {"x"};
        tc_tensor want[2];
        tc_error err;
        if (tc_model_run_reference(m, 1, in_names, &x, want, &err)) fail_msg("reference: %s", err.message);
        for (int threads = 1; threads <= 2; threads++) {
            char what[96];
            snprintf(what, sizeof what, "net %zu (cin %lld, %lldx%lld, c1 %lld, stride %lld), %d thread(s)", i,
                     (long long)c->cin, (long long)c->h, (long long)c->w, (long long)c->c1, (long long)c->stride,
                     threads);
            /* Heuristic tactics keep the layout pass's plan (a tuned build keeps whichever layout is faster). */
            tc_engine *e = engine(m, 0, TC_BUILD_TACTICS_FIXED, threads);
            int blocked, reorders;
            count_layout(e, &blocked, &reorders);
            if (blocked_cpu) {
                assert_true(blocked >= 8);
                /* the 4-D output z and the head pooling's output (the 8-channel squeeze and the 24-channel narrow
                 * convolution are blocked, padded in NCHW16c) */
                assert_int_equal(reorders, 2);
            } else {
                assert_int_equal(blocked + reorders, 0);
            }
            check_engine(e, &x, want, what);
            tc_engine_destroy(e);
            e = engine(m, 0, 0, threads);
            check_engine(e, &x, want, what);
            tc_engine_destroy(e);
            e = engine(m, TC_PASS_LAYOUT, 0, threads);
            count_layout(e, &blocked, &reorders);
            assert_int_equal(blocked + reorders, 0);
            check_engine(e, &x, want, what);
            tc_engine_destroy(e);
        }
        tc_tensor_free(&x);
        tc_tensor_free(&want[0]);
        tc_tensor_free(&want[1]);
        tc_model_destroy(m);
    }
}

/* Runs e on x into y[0..n). */
static void run_into(const tc_engine *e, const tc_tensor *x, float *y, size_t n) {
    tc_context *ctx = NULL;
    assert_int_equal(tc_context_create(e, 0, &ctx, NULL), TC_STATUS_OK);
    assert_int_equal(tc_context_set_tensor(ctx, "x", x->data, x->nbytes), TC_STATUS_OK);
    assert_int_equal(tc_context_set_tensor(ctx, "y", y, n * sizeof(float)), TC_STATUS_OK);
    if (tc_context_run(ctx) != TC_STATUS_OK) fail_msg("run: %s", tc_context_error(ctx));
    tc_context_destroy(ctx);
}

/* The padded net's heuristic plan: weights packed larger than their sources (W of the 20-channel convs, the 1x1's
 * bias), the same bits after save and load, and a load that refuses such a weight 64 bytes short. */
static void test_padded_plan(void **state) {
    (void)state;
    const uint64_t isa = tc__cpu_get()->isa, avx2 = TC__ISA_AVX | TC__ISA_AVX2 | TC__ISA_FMA;
    if (!(isa & TC__ISA_AVX512F) && (isa & avx2) != avx2) skip();
    const net c = {16, 7, 9, 20, 1};
    tc_model *m = build(&c);
    tc_tensor x;
    assert_int_equal(tc_tensor_alloc(TC_DTYPE_FLOAT32, 4, (int64_t[]){1, c.cin, c.h, c.w}, &x, NULL), TC_STATUS_OK);
    for (size_t k = 0; k < x.nbytes / 4; k++) ((float *)x.data)[k] = etm_uniform();
    tc_engine *e = engine(m, 0, TC_BUILD_TACTICS_FIXED, 1);
    int step = -1, input = -1, larger = 0;
    for (int k = 0; k < e->n_steps; k++) {
        const tc__node *n = &e->g->nodes[e->steps[k].node];
        for (int i = 0; i < n->n_in; i++) {
            const tc__tensor *t = n->in[i] >= 0 ? e->g->values[n->in[i]].init : NULL;
            if (t == NULL || t->nbytes <= (size_t)tc__tensor_numel(t) * tc_dtype_size(t->dtype)) continue;
            larger++;
            if (step < 0) step = k, input = i;
        }
    }
    assert_true(larger >= 3); /* the stem's and the 1x1's W, the 1x1's bias (and more) */
    float y1[5], y2[5];
    run_into(e, &x, y1, 5);
    void *blob = NULL;
    size_t blob_size = 0, size = 0;
    tc__err err = {0};
    assert_int_equal(tc__engine_blob_write(e, &blob, &blob_size, &err), TC_STATUS_OK);
    void *plan = ptu_replan(e, blob, blob_size, &size);
    tc_engine *back = NULL;
    assert_int_equal(tc__engine_from_plan(plan, size, false, 0, &back, &err), TC_STATUS_OK);
    run_into(back, &x, y2, 5);
    assert_memory_equal(y1, y2, sizeof y1);
    tc_engine_destroy(back);
    const tc__node *n = &e->g->nodes[e->steps[step].node];
    tc__tensor *w = (tc__tensor *)e->g->values[n->in[input]].init;
    w->nbytes -= 64;
    void *short_plan = ptu_replan(e, blob, blob_size, &size);
    w->nbytes += 64;
    ptu_expect_load_failure(short_plan, size, TC_STATUS_CORRUPT_FILE, "that its tactic does not write");
    free(blob);
    tc_engine_destroy(e);
    tc_tensor_free(&x);
    tc_model_destroy(m);
}

/* Every op's fast tactics fit the tuner's candidate list (which keeps room for the reference kernel), so none
 * is dropped silently: blocked nodes have nothing else to run. */
static void test_candidate_lists_fit(void **state) {
    (void)state;
    static const char *const ops[] = {
#define TC_OP(name) #name,
#include "core/ops.inc"
#undef TC_OP
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        const tc__tactic *t[TC__TUNE_MAX_CANDIDATES + 1];
        int n = tc__tactics_for(&tc__backend_cpu, ops[i], ~(uint64_t)0, t, TC__TUNE_MAX_CANDIDATES + 1);
        if (n >= TC__TUNE_MAX_CANDIDATES - 1) fail_msg("%s has %d fast tactics: raise TC__TUNE_MAX_CANDIDATES", ops[i], n);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_random_cnns), cmocka_unit_test(test_padded_plan),
                                       cmocka_unit_test(test_candidate_lists_fit)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
