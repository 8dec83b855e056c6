/* test_cuda_dnn_graph.c - the FP16 NHWC convolution through cuDNN's backend (graph) API (backends/cuda/cudnn_graph.h):
 * host side, a configuration's check and the geometry's validation; on a device, every configuration cuDNN's
 * heuristics offer (up to 4) for several geometries x epilogues (bias / bias + residual + ReLU / ReLU / none) against
 * the host reference (conv_nhwc16_ref.h): y poisoned with NaN before each run, every element checked, on the run that
 * builds the plan, the cached run, and a CUDA graph captured from the cached run and replayed; the refusals (a plan
 * not built while the stream captures, an engine cuDNN does not have) leave err untouched. Every failing case is
 * printed before the test fails, so one device run shows all of them. A printing-only timing compares each
 * configuration with the legacy API's heuristic choice (cudnnConvolutionBiasActivationForward) on ResNet-50's 3x3
 * convolutions at batch 1 and 128. Skipped (device part) without a CUDA device or without cuDNN's backend API. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#ifdef TC_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "backends/cuda/cudnn.h"
#include "backends/cuda/cudnn_graph.h"
#endif
#include "conv_nhwc16_ref.h"

#ifdef TC_HAVE_CUDA

#define WS_BYTES ((size_t)64 << 20)
#define CAP 4

static tc__dnn_graph_conv conv_of(const cnr_geom *c, bool bias, bool residual, bool relu) {
    return (tc__dnn_graph_conv){c->n, c->c, c->h, c->w, c->k, c->r, c->s, c->oh, c->ow, c->ph, c->pw,
                                c->sh, c->sw, c->dh, c->dw, bias, residual, relu};
}

/* n images c x h x w, k filters r x r, symmetric pad p, stride st, dilation d (square). */
static cnr_geom geo(int32_t n, int32_t c, int32_t h, int32_t w, int32_t k, int32_t r, int32_t p, int32_t st,
                    int32_t d) {
    return (cnr_geom){n, c, h, w, k, r, r, cnr_out(h, r, p, st, d), cnr_out(w, r, p, st, d), p, p, st, st, d, d};
}

/* ---- host side ------------------------------------------------------------------------------------------------ */

static void test_cfg_check(void **state) {
    (void)state;
    tc__dnn_graph_cfg c;
    memset(&c, 0, sizeof c);
    c.engine = 12, c.n_knobs = 2;
    c.knobs[0].type = 2, c.knobs[0].value = 1;
    c.knobs[1].type = 14, c.knobs[1].value = -1;
    tc__err err = {0};
    assert_true(tc__dnn_graph_cfg_check(&c, &err));
    assert_int_equal(err.status, TC_STATUS_OK);
    const tc__dnn_graph_cfg good = c;
    tc__dnn_graph_cfg b;
    b = good, b.n_knobs = TC__DNN_GRAPH_MAX_KNOBS + 1;
    assert_false(tc__dnn_graph_cfg_check(&b, &err));
    assert_int_equal(err.status, TC_STATUS_CORRUPT_FILE);
    b = good, b.n_knobs = -1;
    assert_false(tc__dnn_graph_cfg_check(&b, &err));
    b = good, b.reserved = 1;
    assert_false(tc__dnn_graph_cfg_check(&b, &err));
    b = good, b.engine = -1;
    assert_false(tc__dnn_graph_cfg_check(&b, &err));
    b = good, b.engine = (int64_t)INT32_MAX + 1;
    assert_false(tc__dnn_graph_cfg_check(&b, &err));
    b = good, b.knobs[1].type = -3;
    assert_false(tc__dnn_graph_cfg_check(&b, &err));
    b = good, b.knobs[5].value = 7; /* beyond n_knobs: must be zero */
    assert_false(tc__dnn_graph_cfg_check(&b, &err));
    err = (tc__err){0};
    assert_false(tc__dnn_graph_cfg_check(NULL, &err));
    assert_int_equal(err.status, TC_STATUS_INVALID_ARGUMENT);
    b = good, b.n_knobs = TC__DNN_GRAPH_MAX_KNOBS;
    for (int i = 0; i < TC__DNN_GRAPH_MAX_KNOBS; i++) b.knobs[i].type = i, b.knobs[i].value = i * 3 - 5;
    assert_true(tc__dnn_graph_cfg_check(&b, &err));
}

/* Invalid geometries are refused before cuDNN is asked (no device needed). */
static void test_geometry_refused(void **state) {
    (void)state;
    const cnr_geom cg = geo(2, 16, 9, 9, 8, 3, 1, 1, 1);
    uint16_t dummy[64] __attribute__((aligned(16)));
    memset(dummy, 0, sizeof dummy);
    tc__dnn_graph_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    tc__dnn_graph_cfg out[CAP];
    char why[320];
    tc__dnn_graph_conv bads[5];
    for (int i = 0; i < 5; i++) bads[i] = conv_of(&cg, true, false, true);
    bads[0].oh = 8;  /* not the convolution's output */
    bads[1].c = 0;   /* empty */
    bads[2].sh = 0;  /* stride 0 */
    bads[3].ph = -1; /* negative pad */
    bads[4].n = 1 << 20, bads[4].c = 1 << 12; /* 2^31 elements or more */
    for (int i = 0; i < 5; i++) {
        tc__err err = {0};
        assert_int_equal(tc__dnn_graph_run(&bads[i], &cfg, dummy, dummy, dummy, dummy, dummy, NULL, 0, 0, &err),
                         TC_STATUS_INVALID_ARGUMENT);
        assert_non_null(strstr(err.msg, "cuDNN graph convolution"));
        why[0] = '\0';
        assert_int_equal(tc__dnn_graph_configs(&bads[i], WS_BYTES, out, CAP, why, sizeof why), 0);
        assert_true(why[0] != '\0');
    }
    /* missing data and a malformed configuration */
    const tc__dnn_graph_conv g = conv_of(&cg, true, true, true);
    tc__err err = {0};
    assert_int_equal(tc__dnn_graph_run(&g, &cfg, dummy, dummy, NULL, dummy, dummy, NULL, 0, 0, &err),
                     TC_STATUS_INVALID_ARGUMENT);
    err = (tc__err){0};
    assert_int_equal(tc__dnn_graph_run(&g, &cfg, dummy, dummy, dummy, NULL, dummy, NULL, 0, 0, &err),
                     TC_STATUS_INVALID_ARGUMENT);
    cfg.n_knobs = -2;
    err = (tc__err){0};
    assert_int_equal(tc__dnn_graph_run(&g, &cfg, dummy, dummy, dummy, dummy, dummy, NULL, 0, 0, &err),
                     TC_STATUS_CORRUPT_FILE);
    assert_int_equal(tc__dnn_graph_configs(&g, WS_BYTES, out, 0, why, sizeof why), 0);
}

/* ---- device side ---------------------------------------------------------------------------------------------- */

/* NULL when the device part can run, else why not. */
static const char *device_missing(char *buf, size_t size) {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n < 1) {
        snprintf(buf, size, "no CUDA device (%s)", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        return buf;
    }
    tc__err err = {0};
    const tc__cudnn *dn = tc__cudnn_get(&err);
    if (dn == NULL) return snprintf(buf, size, "%.300s", err.msg), buf;
    if (dn->BackendCreateDescriptor == NULL)
        return snprintf(buf, size, "cuDNN %zu lacks the backend API", dn->version), buf;
    return NULL;
}

#define CK(call)                                                                                                       \
    do {                                                                                                               \
        const cudaError_t e_ = (call);                                                                                 \
        if (e_ != cudaSuccess) fail_msg("%s: %s", #call, cudaGetErrorString(e_));                                      \
    } while (0)

/* Device buffers of one geometry, filled from the host copies. */
typedef struct bufs {
    uint16_t *hx, *hw, *hb, *hz, *hy;
    double *want;
    void *x, *w, *b, *z, *y, *ws;
    int64_t nx, nw, ny;
} bufs;

static void *dev_copy(const void *h, size_t bytes) {
    void *d = NULL;
    CK(cudaMalloc(&d, bytes));
    if (h != NULL) CK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
    return d;
}

static void bufs_make(const cnr_geom *g, uint64_t seed, bool host_ref, bufs *b) {
    memset(b, 0, sizeof *b);
    b->nx = (int64_t)g->n * g->h * g->w * g->c, b->nw = (int64_t)g->k * g->r * g->s * g->c;
    b->ny = (int64_t)g->n * g->oh * g->ow * g->k;
    b->hx = malloc(b->nx * 2), b->hw = malloc(b->nw * 2), b->hb = malloc(g->k * 2), b->hz = malloc(b->ny * 2);
    b->hy = malloc(b->ny * 2);
    b->want = host_ref ? malloc(b->ny * sizeof(double)) : NULL;
    assert_true(b->hx && b->hw && b->hb && b->hz && b->hy && (b->want || !host_ref));
    cnr_fill(b->hx, b->nx, 1.0f, &seed);
    cnr_fill(b->hw, b->nw, 1.0f, &seed);
    cnr_fill(b->hb, g->k, 1.0f, &seed);
    cnr_fill(b->hz, b->ny, 2.0f, &seed);
    b->x = dev_copy(b->hx, b->nx * 2), b->w = dev_copy(b->hw, b->nw * 2), b->b = dev_copy(b->hb, g->k * 2);
    b->z = dev_copy(b->hz, b->ny * 2), b->y = dev_copy(NULL, b->ny * 2), b->ws = dev_copy(NULL, WS_BYTES);
}

static void bufs_free(bufs *b) {
    cudaFree(b->x), cudaFree(b->w), cudaFree(b->b), cudaFree(b->z), cudaFree(b->y), cudaFree(b->ws);
    free(b->hx), free(b->hw), free(b->hb), free(b->hz), free(b->hy), free(b->want);
}

/* y := NaN (0x7E00) everywhere. */
static void poison(const bufs *b, cudaStream_t st) {
    for (int64_t i = 0; i < b->ny; i++) b->hy[i] = 0x7E00;
    CK(cudaMemcpyAsync(b->y, b->hy, b->ny * 2, cudaMemcpyHostToDevice, st));
    CK(cudaStreamSynchronize(st));
}

/* Checks every element of y against want; 0 when all pass, else prints the first bad one and returns 1. */
static int check(const char *label, const cnr_geom *g, const bufs *b, cudaStream_t st, double atol, double rtol,
                 double *max_err) {
    CK(cudaStreamSynchronize(st));
    CK(cudaMemcpy(b->hy, b->y, b->ny * 2, cudaMemcpyDeviceToHost));
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < b->ny; i++) {
        const double v = tc__f16_to_f32(b->hy[i]), d = fabs(v - b->want[i]);
        if (v == v && d > *max_err) *max_err = d;
        if (!cnr_close(b->hy[i], b->want[i], atol, rtol)) {
            if (first < 0) first = i;
            bad++;
        }
    }
    if (bad == 0) return 0;
    const int64_t k = first % g->k, q = first / g->k % g->ow, p = first / g->k / g->ow % g->oh;
    const int64_t n = first / g->k / g->ow / g->oh;
    print_message("FAIL %s: %lld of %lld elements wrong; first y[n=%lld][%lld][%lld][k=%lld] = %g, want %g\n", label,
                  (long long)bad, (long long)b->ny, (long long)n, (long long)p, (long long)q, (long long)k,
                  (double)tc__f16_to_f32(b->hy[first]), b->want[first]);
    return 1;
}

/* One run of cfg; 0 when it returned OK, else prints why and returns 1. */
static int run_one(const char *label, const tc__dnn_graph_conv *g, const tc__dnn_graph_cfg *cfg, const bufs *b,
                   cudaStream_t st) {
    tc__err err = {0};
    const tc_status s =
        tc__dnn_graph_run(g, cfg, b->x, b->w, b->b, b->z, b->y, b->ws, WS_BYTES, st, &err);
    if (s == TC_STATUS_OK) return 0;
    print_message("FAIL %s: run returned %d: %s%s\n", label, (int)s, err.msg,
                  s == TC_STATUS_UNSUPPORTED ? tc__dnn_graph_why() : "");
    return 1;
}

/* Captures one (cached) run into a CUDA graph and replays it; 0 when all went well, else prints what failed and
 * returns 1 (a run that cannot be captured is reported, not fatal). */
static int capture_replay(const char *label, const tc__dnn_graph_conv *g, const tc__dnn_graph_cfg *cfg, const bufs *b,
                          cudaStream_t st) {
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    const int f = run_one(label, g, cfg, b, st);
    cudaError_t e = cudaStreamEndCapture(st, &graph);
    const char *what = "cudaStreamEndCapture";
    if (e == cudaSuccess && !f) what = "cudaGraphInstantiate", e = cudaGraphInstantiate(&exec, graph, 0);
    if (e == cudaSuccess && !f) what = "cudaGraphLaunch", e = cudaGraphLaunch(exec, st);
    if (e == cudaSuccess && !f) what = "cudaStreamSynchronize", e = cudaStreamSynchronize(st);
    if (exec != NULL) cudaGraphExecDestroy(exec);
    if (graph != NULL) cudaGraphDestroy(graph);
    if (e != cudaSuccess) {
        print_message("FAIL %s: %s: %s\n", label, what, cudaGetErrorString(e));
        cudaGetLastError();
    }
    return f || e != cudaSuccess;
}

/* Every configuration of one geometry x epilogue: the first run (builds the plan), the cached run, and a graph
 * captured from it and replayed. Returns the number of failures. */
static int check_case(const char *name, const cnr_geom *cg, const bufs *b, bool bias, bool res, bool relu,
                      cudaStream_t st) {
    const tc__dnn_graph_conv g = conv_of(cg, bias, res, relu);
    const char *epi = bias && res ? "bias+res+relu" : bias ? "bias" : relu ? "relu" : "none";
    char label[200], why[320] = "";
    tc__dnn_graph_cfg cfgs[CAP];
    const int n = tc__dnn_graph_configs(&g, WS_BYTES, cfgs, CAP, why, sizeof why);
    if (n == 0) {
        print_message("FAIL %s %s: no configurations: %s\n", name, epi, why);
        return 1;
    }
    cnr_conv(cg, b->hx, b->hw, bias ? b->hb : NULL, res ? b->hz : NULL, relu, b->want);
    const double kk = sqrt((double)cg->c * cg->r * cg->s), atol = 1.5e-3 * kk, rtol = 2e-3;
    double max_err = 0;
    int fails = 0;
    char engines[160] = "";
    for (int i = 0; i < n; i++) {
        tc__err cerr = {0};
        if (!tc__dnn_graph_cfg_check(&cfgs[i], &cerr)) {
            print_message("FAIL %s %s: offered configuration %d fails its check: %s\n", name, epi, i, cerr.msg);
            fails++;
            continue;
        }
        const size_t len = strlen(engines);
        snprintf(engines + len, sizeof engines - len, "%s%lld/%dk", i ? " " : "", (long long)cfgs[i].engine,
                 cfgs[i].n_knobs);
        static const char *const phase[3] = {"first run", "cached run", "graph replay"};
        for (int ph = 0; ph < 3; ph++) {
            snprintf(label, sizeof label, "%s %s engine %lld (%s)", name, epi, (long long)cfgs[i].engine, phase[ph]);
            poison(b, st);
            if (ph < 2) {
                if (run_one(label, &g, &cfgs[i], b, st)) {
                    fails++;
                    break;
                }
            } else {
                if (capture_replay(label, &g, &cfgs[i], b, st)) {
                    fails++;
                    break;
                }
            }
            fails += check(label, cg, b, st, atol, rtol, &max_err);
        }
    }
    print_message("%-22s %-14s %d configs (engine/knobs: %s), max |err| %.3g (atol %.3g)\n", name, epi, n, engines,
                  max_err, atol);
    return fails;
}

/* The refusals: an engine cuDNN does not have, and a first run while the stream captures; err stays untouched. */
static int check_refusals(const cnr_geom *cg, const bufs *b, cudaStream_t st) {
    int fails = 0;
    const tc__dnn_graph_conv g = conv_of(cg, true, false, true);
    tc__dnn_graph_cfg nope;
    memset(&nope, 0, sizeof nope);
    nope.engine = 1 << 30;
    for (int r = 0; r < 2; r++) { /* built and refused, then refused from the cache */
        tc__err err = {0};
        const tc_status s = tc__dnn_graph_run(&g, &nope, b->x, b->w, b->b, b->z, b->y, b->ws, WS_BYTES, st, &err);
        if (s != TC_STATUS_UNSUPPORTED || err.status != TC_STATUS_OK || err.msg[0] != '\0' ||
            tc__dnn_graph_why()[0] == '\0') {
            print_message("FAIL engine 2^30: run returned %d (want UNSUPPORTED, err untouched): %s / %s\n", (int)s,
                          err.msg, tc__dnn_graph_why());
            fails++;
        } else if (r == 0) {
            print_message("engine 2^30 refused: %s\n", tc__dnn_graph_why());
        }
    }
    tc__dnn_graph_cfg cfgs[1];
    char why[320] = "";
    if (tc__dnn_graph_configs(&g, WS_BYTES, cfgs, 1, why, sizeof why) != 1) {
        print_message("FAIL refusal case: no configuration: %s\n", why);
        return fails + 1;
    }
    cudaGraph_t graph = NULL;
    tc__err err = {0};
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    const tc_status s = tc__dnn_graph_run(&g, cfgs, b->x, b->w, b->b, b->z, b->y, b->ws, WS_BYTES, st, &err);
    const cudaError_t ce = cudaStreamEndCapture(st, &graph);
    if (graph != NULL) cudaGraphDestroy(graph);
    if (s != TC_STATUS_UNSUPPORTED || err.status != TC_STATUS_OK || strstr(tc__dnn_graph_why(), "capturing") == NULL ||
        ce != cudaSuccess) {
        print_message("FAIL first run under capture: returned %d (want UNSUPPORTED, err untouched): %s / %s; "
                      "end capture: %s\n",
                      (int)s, err.msg, tc__dnn_graph_why(), cudaGetErrorString(ce));
        fails++;
    }
    /* outside capture the same configuration builds and is right */
    cnr_conv(cg, b->hx, b->hw, b->hb, NULL, true, b->want);
    poison(b, st);
    double max_err = 0;
    fails += run_one("after the refused capture", &g, cfgs, b, st);
    fails += check("after the refused capture", cg, b, st, 1.5e-3 * sqrt((double)cg->c * cg->r * cg->s), 2e-3,
                   &max_err);
    return fails;
}

static void test_graph_conv(void **state) {
    (void)state;
    char buf[400];
    const char *missing = device_missing(buf, sizeof buf);
    if (missing != NULL) {
        print_message("cuDNN graph convolution not tested: %s\n", missing);
        skip();
    }
    const tc__cudnn *dn = tc__cudnn_get(NULL);
    print_message("cuDNN %zu\n", dn->version);
    struct {
        const char *name;
        cnr_geom g;
    } cases[] = {
        {"3x3 p1 14x14 b2", geo(2, 64, 14, 14, 64, 3, 1, 1, 1)},
        {"3x3 p1 56x56 b2", geo(2, 64, 56, 56, 64, 3, 1, 1, 1)},
        {"1x1 s2 28x28 b2", geo(2, 64, 28, 28, 128, 1, 0, 2, 1)},
        {"7x7 s2 p3 c8 64x64", geo(2, 8, 64, 64, 64, 7, 3, 2, 1)},
        {"3x3 d2 p2 20x20", geo(2, 32, 20, 20, 32, 3, 2, 1, 2)},
        {"3x3 c24 k40 17x17 b3", geo(3, 24, 17, 17, 40, 3, 1, 1, 1)},
        {"rn50 3x3 512 7x7", geo(1, 512, 7, 7, 512, 3, 1, 1, 1)},
        {"3x3 c8 k16 5x3 b1", geo(1, 8, 5, 3, 16, 3, 1, 1, 1)},
    };
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    int fails = 0;
    uint64_t seed = 0x2545F4914F6CDD1Dull;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bufs b;
        bufs_make(&cases[i].g, seed + i, true, &b);
        fails += check_case(cases[i].name, &cases[i].g, &b, true, false, false, st);
        fails += check_case(cases[i].name, &cases[i].g, &b, true, true, true, st);
        fails += check_case(cases[i].name, &cases[i].g, &b, false, false, true, st);
        fails += check_case(cases[i].name, &cases[i].g, &b, false, false, false, st);
        bufs_free(&b);
    }
    /* a geometry no case above built */
    const cnr_geom rg = geo(1, 16, 11, 13, 24, 3, 1, 1, 1);
    bufs b;
    bufs_make(&rg, seed, true, &b);
    fails += check_refusals(&rg, &b, st);
    bufs_free(&b);
    CK(cudaStreamDestroy(st));
    if (fails != 0) fail_msg("%d failures (the FAIL lines above)", fails);
}

/* ---- printing-only timing against the legacy API --------------------------------------------------------------- */

/* Microseconds per run of fn (median of 5 rounds of 10 launches). */
typedef int (*launch_fn)(void *arg, cudaStream_t st);

static double time_us(launch_fn fn, void *arg, cudaStream_t st) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    double t[5];
    for (int w = 0; w < 2; w++)
        if (fn(arg, st)) return -1;
    for (int r = 0; r < 5; r++) {
        CK(cudaEventRecord(a, st));
        for (int i = 0; i < 10; i++)
            if (fn(arg, st)) return -1;
        CK(cudaEventRecord(b, st));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        t[r] = ms * 100.0; /* per launch, in us */
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    for (int i = 0; i < 5; i++) /* sort */
        for (int j = i + 1; j < 5; j++)
            if (t[j] < t[i]) {
                const double x = t[i];
                t[i] = t[j], t[j] = x;
            }
    return t[2];
}

typedef struct graph_arg {
    const tc__dnn_graph_conv *g;
    const tc__dnn_graph_cfg *cfg;
    const bufs *b;
} graph_arg;

static int graph_launch(void *p, cudaStream_t st) {
    const graph_arg *a = p;
    tc__err err = {0};
    const tc_status s = tc__dnn_graph_run(a->g, a->cfg, a->b->x, a->b->w, a->b->b, NULL, a->b->y, a->b->ws, WS_BYTES,
                                          st, &err);
    if (s != TC_STATUS_OK) print_message("timing: graph run failed: %s%s\n", err.msg, tc__dnn_graph_why());
    return s != TC_STATUS_OK;
}

/* The legacy API: descriptors and cuDNN's first heuristic algorithm within the workspace. */
typedef struct legacy_arg {
    const tc__cudnn *dn;
    cudnnTensorDescriptor_t x, y, b;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    cudnnActivationDescriptor_t act;
    cudnnConvolutionFwdAlgo_t algo;
    const bufs *bf;
} legacy_arg;

static int legacy_launch(void *p, cudaStream_t st) {
    const legacy_arg *a = p;
    const float one = 1.0f, zero = 0.0f;
    tc__cudnn_lock();
    cudnnStatus_t s = a->dn->SetStream(a->dn->handle, st);
    if (s == CUDNN_STATUS_SUCCESS)
        s = a->dn->ConvolutionBiasActivationForward(a->dn->handle, &one, a->x, a->bf->x, a->w, a->bf->w, a->conv,
                                                    a->algo, a->bf->ws, WS_BYTES, &zero, a->y, a->bf->y, a->b,
                                                    a->bf->b, a->act, a->y, a->bf->y);
    tc__cudnn_unlock();
    if (s != CUDNN_STATUS_SUCCESS) print_message("timing: legacy call failed: %s\n", a->dn->GetErrorString(s));
    return s != CUDNN_STATUS_SUCCESS;
}

/* false when the legacy path cannot be set up (printed). */
static bool legacy_make(const tc__cudnn *dn, const cnr_geom *g, const bufs *bf, legacy_arg *a) {
    memset(a, 0, sizeof *a);
    a->dn = dn, a->bf = bf;
    if (dn->ConvolutionBiasActivationForward == NULL) return print_message("timing: no legacy fused call\n"), false;
    cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
#define L(call)                                                                                                        \
    if (s == CUDNN_STATUS_SUCCESS) s = (call)
    L(dn->CreateTensorDescriptor(&a->x));
    L(dn->CreateTensorDescriptor(&a->y));
    L(dn->CreateTensorDescriptor(&a->b));
    L(dn->CreateFilterDescriptor(&a->w));
    L(dn->CreateConvolutionDescriptor(&a->conv));
    L(dn->CreateActivationDescriptor(&a->act));
    L(dn->SetTensor4dDescriptor(a->x, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, g->n, g->c, g->h, g->w));
    L(dn->SetTensor4dDescriptor(a->y, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, g->n, g->k, g->oh, g->ow));
    L(dn->SetTensor4dDescriptor(a->b, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, 1, g->k, 1, 1));
    L(dn->SetFilter4dDescriptor(a->w, CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, g->k, g->c, g->r, g->s));
    L(dn->SetConvolution2dDescriptor(a->conv, g->ph, g->pw, g->sh, g->sw, g->dh, g->dw, CUDNN_CROSS_CORRELATION,
                                     CUDNN_DATA_FLOAT));
    L(dn->SetConvolutionMathType(a->conv, CUDNN_TENSOR_OP_MATH));
    L(dn->SetActivationDescriptor(a->act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int got = 0;
    tc__cudnn_lock();
    L(dn->GetConvolutionForwardAlgorithm_v7(dn->handle, a->x, a->w, a->conv, a->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                            &got, perf));
    tc__cudnn_unlock();
#undef L
    if (s != CUDNN_STATUS_SUCCESS) return print_message("timing: legacy setup: %s\n", dn->GetErrorString(s)), false;
    for (int i = 0; i < got; i++)
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= WS_BYTES) {
            a->algo = perf[i].algo;
            return true;
        }
    return print_message("timing: no legacy algorithm within the workspace\n"), false;
}

static void legacy_free(legacy_arg *a) {
    const tc__cudnn *dn = a->dn;
    if (a->act) dn->DestroyActivationDescriptor(a->act);
    if (a->conv) dn->DestroyConvolutionDescriptor(a->conv);
    if (a->w) dn->DestroyFilterDescriptor(a->w);
    if (a->b) dn->DestroyTensorDescriptor(a->b);
    if (a->y) dn->DestroyTensorDescriptor(a->y);
    if (a->x) dn->DestroyTensorDescriptor(a->x);
}

static void test_timing(void **state) {
    (void)state;
    char buf[400];
    const char *missing = device_missing(buf, sizeof buf);
    if (missing != NULL) {
        print_message("cuDNN graph timing not run: %s\n", missing);
        skip();
    }
    const tc__cudnn *dn = tc__cudnn_get(NULL);
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    static const int32_t batches[2] = {1, 128};
    static const int32_t shapes[4][2] = {{64, 56}, {128, 28}, {256, 14}, {512, 7}}; /* channels, size */
    for (int bi = 0; bi < 2; bi++)
        for (int si = 0; si < 4; si++) {
            const int32_t ch = shapes[si][0], hw = shapes[si][1];
            const cnr_geom cg = geo(batches[bi], ch, hw, hw, ch, 3, 1, 1, 1);
            bufs b;
            bufs_make(&cg, 7 + si, false, &b);
            const tc__dnn_graph_conv g = conv_of(&cg, true, false, true);
            tc__dnn_graph_cfg cfgs[CAP];
            char why[320] = "", line[600];
            const int n = tc__dnn_graph_configs(&g, WS_BYTES, cfgs, CAP, why, sizeof why);
            legacy_arg la;
            const double legacy = legacy_make(dn, &cg, &b, &la) ? time_us(legacy_launch, &la, st) : -1;
            int len = snprintf(line, sizeof line, "timing bs%d 3x3 %dch %dx%d bias+relu: legacy algo %d %.1f us",
                               cg.n, cg.c, cg.h, cg.w, (int)la.algo, legacy);
            for (int i = 0; i < n && len < (int)sizeof line; i++) {
                graph_arg ga = {&g, &cfgs[i], &b};
                const double t = time_us(graph_launch, &ga, st);
                len += snprintf(line + len, sizeof line - len, "; engine %lld %.1f us (%.2fx)",
                                (long long)cfgs[i].engine, t, legacy > 0 && t > 0 ? legacy / t : 0.0);
            }
            print_message("%s%s%s\n", line, n == 0 ? "; no graph configurations: " : "", n == 0 ? why : "");
            legacy_free(&la);
            bufs_free(&b);
        }
    CK(cudaStreamDestroy(st));
}

#else

static void test_cfg_check(void **state) {
    (void)state;
    skip();
}
static void test_geometry_refused(void **state) {
    (void)state;
    skip();
}
static void test_graph_conv(void **state) {
    (void)state;
    skip();
}
static void test_timing(void **state) {
    (void)state;
    skip();
}

#endif

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cfg_check),
        cmocka_unit_test(test_geometry_refused),
        cmocka_unit_test(test_graph_conv),
        cmocka_unit_test(test_timing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
