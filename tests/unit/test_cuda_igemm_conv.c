/* test_cuda_igemm_conv.c - the implicit-GEMM FP16 convolution (backends/cuda/igemm_conv_fp16.h) against the host
 * reference (conv_nhwc16_ref.h): every configuration id on edge shapes (M off every tile, K of one chunk, c = 8 .. 520,
 * k = 8 .. 264, strides, dilations, pads 0..3, 7x7, 1x1, the ResNet-50 shapes) and random ones, with and without
 * bias, residual and ReLU; y poisoned with NaN and fenced by poisoned guards before each run, every element compared.
 * Also: run() refuses bad ids, short workspaces and geometry it does not compute, writing nothing; and a timing of each
 * configuration on the ResNet-50 3x3 shapes at batch 1 and 128 (printed only). Skipped where there is no CUDA
 * device. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "conv_nhwc16_ref.h"
#ifdef TC_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "backends/cuda/igemm_conv_fp16.h"
#endif

/* Whether to test: a CUDA device is there (else prints why not). */
static bool have_cuda(void) {
    tc__err perr = {0};
    if (tc__backend_find("cuda", &perr) == NULL) {
        print_message("CUDA not tested: %s\n", perr.msg);
        return false;
    }
    return true;
}

#ifdef TC_HAVE_CUDA

#define POISON 0x7E00u /* FP16 NaN */
#define GUARD 64       /* poisoned halves before and after y (128 bytes: y stays 16-byte aligned) */

#define CK(call)                                                                                                       \
    do {                                                                                                               \
        const cudaError_t e_ = (call);                                                                                 \
        if (e_ != cudaSuccess) fail_msg("%s: %s", #call, cudaGetErrorString(e_));                                      \
    } while (0)

typedef struct conv_case {
    int32_t n, c, h, w, k, r, s, ph, pw, sh, sw, dh, dw;
} conv_case;

static cnr_geom geom_of(const conv_case *t) {
    return (cnr_geom){t->n, t->c, t->h, t->w, t->k, t->r, t->s, cnr_out(t->h, t->r, t->ph, t->sh, t->dh),
                      cnr_out(t->w, t->s, t->pw, t->sw, t->dw), t->ph, t->pw, t->sh, t->sw, t->dh, t->dw};
}

static tc__igemm_conv conv_of(const cnr_geom *g) {
    return (tc__igemm_conv){.n = g->n, .c = g->c, .h = g->h, .w = g->w, .k = g->k, .r = g->r, .s = g->s,
                            .oh = g->oh, .ow = g->ow, .ph = g->ph, .pw = g->pw, .sh = g->sh, .sw = g->sw,
                            .dh = g->dh, .dw = g->dw};
}

static void *dev_alloc(size_t bytes) {
    void *p = NULL;
    CK(cudaMalloc(&p, bytes > 0 ? bytes : 16));
    return p;
}

static void *dev_upload(const void *h, size_t bytes) {
    void *p = dev_alloc(bytes);
    CK(cudaMemcpy(p, h, bytes, cudaMemcpyHostToDevice));
    return p;
}

/* Device buffers of one case: x, w, bias, res, y (with guards), workspace (the most any id needs). */
typedef struct bufs {
    cnr_geom g;
    int64_t xn, wn, yn;
    uint16_t *hx, *hw, *hb, *hr, *hy; /* host copies; hy: y with its guards */
    void *x, *w, *b, *r, *yg, *ws;
    size_t ws_bytes;
    float xs, wsc; /* data scales */
} bufs;

static void bufs_make(bufs *u, const cnr_geom *g, uint64_t *seed) {
    memset(u, 0, sizeof *u);
    u->g = *g;
    u->xn = (int64_t)g->n * g->h * g->w * g->c;
    u->wn = (int64_t)g->k * g->r * g->s * g->c;
    u->yn = (int64_t)g->n * g->oh * g->ow * g->k;
    const double kk = (double)g->r * g->s * g->c;
    u->xs = 1.0f, u->wsc = (float)(2.0 / sqrt(kk)); /* sums of K products: about 0.67 rms */
    u->hx = malloc((size_t)u->xn * 2), u->hw = malloc((size_t)u->wn * 2), u->hb = malloc((size_t)g->k * 2);
    u->hr = malloc((size_t)u->yn * 2), u->hy = malloc((size_t)(u->yn + 2 * GUARD) * 2);
    assert_true(u->hx && u->hw && u->hb && u->hr && u->hy);
    cnr_fill(u->hx, u->xn, u->xs, seed);
    cnr_fill(u->hw, u->wn, u->wsc, seed);
    cnr_fill(u->hb, g->k, 0.5f, seed);
    cnr_fill(u->hr, u->yn, 0.5f, seed);
    u->x = dev_upload(u->hx, (size_t)u->xn * 2);
    u->w = dev_upload(u->hw, (size_t)u->wn * 2);
    u->b = dev_upload(u->hb, (size_t)g->k * 2);
    u->r = dev_upload(u->hr, (size_t)u->yn * 2);
    u->yg = dev_alloc((size_t)(u->yn + 2 * GUARD) * 2);
    tc__igemm_conv p = conv_of(g);
    u->ws_bytes = tc__igemm_conv_workspace_max(&p);
    u->ws = u->ws_bytes > 0 ? dev_alloc(u->ws_bytes) : NULL;
}

static void bufs_free(bufs *u) {
    free(u->hx), free(u->hw), free(u->hb), free(u->hr), free(u->hy);
    void *d[] = {u->x, u->w, u->b, u->r, u->yg};
    for (int i = 0; i < 5; i++) CK(cudaFree(d[i]));
    if (u->ws != NULL) CK(cudaFree(u->ws));
}

static void *y_of(const bufs *u) { return (uint16_t *)u->yg + GUARD; }

/* y and its guards all NaN on the device. */
static void poison_y(bufs *u) {
    for (int64_t i = 0; i < u->yn + 2 * GUARD; i++) u->hy[i] = POISON;
    CK(cudaMemcpy(u->yg, u->hy, (size_t)(u->yn + 2 * GUARD) * 2, cudaMemcpyHostToDevice));
}

/* Downloads y with its guards into hy; fails when a guard was written. */
static void fetch_y(bufs *u, const char *what) {
    CK(cudaMemcpy(u->hy, u->yg, (size_t)(u->yn + 2 * GUARD) * 2, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < GUARD; i++)
        if (u->hy[i] != POISON || u->hy[GUARD + u->yn + i] != POISON)
            fail_msg("%s: wrote outside y (guard %lld)", what, (long long)i);
}

static tc__igemm_conv conv_bufs(const bufs *u, bool bias, bool res, bool relu) {
    tc__igemm_conv p = conv_of(&u->g);
    p.x = u->x, p.wt = u->w, p.bias = bias ? u->b : NULL, p.res = res ? u->r : NULL, p.y = y_of(u);
    p.relu = relu, p.workspace = u->ws, p.workspace_bytes = u->ws_bytes;
    return p;
}

/* Runs every configuration id on u with this epilogue and compares every element with the reference. */
static void check_case(bufs *u, const char *name, bool bias, bool res, bool relu, cudaStream_t st) {
    const cnr_geom *g = &u->g;
    double *want = malloc((size_t)u->yn * sizeof *want);
    assert_non_null(want);
    cnr_conv(g, u->hx, u->hw, bias ? u->hb : NULL, res ? u->hr : NULL, relu, want);
    const int64_t K = (int64_t)g->r * g->s * g->c;
    /* FP32 sums of exact FP16 products: the error is FP16's rounding of the result (rtol) plus a little */
    const double atol = 2e-3 * sqrt((double)K) * u->xs * u->wsc + 1e-3, rtol = 2e-3;
    tc__igemm_conv p = conv_bufs(u, bias, res, relu);
    assert_true(tc__igemm_conv_ok(&p));
    uint8_t ids[TC__IGEMM_NUM_CONFIGS];
    const int nids = tc__igemm_conv_configs(&p, ids, TC__IGEMM_NUM_CONFIGS);
    assert_true(nids >= 1 && nids <= TC__IGEMM_NUM_CONFIGS);
    for (uint8_t id = 0; id < TC__IGEMM_NUM_CONFIGS; id++) { /* every id computes every ok case */
        assert_true(tc__igemm_conv_id_valid(id));
        assert_true(tc__igemm_conv_workspace(&p, id) <= u->ws_bytes);
        poison_y(u);
        const cudaError_t e = tc__igemm_conv_run(&p, id, st);
        if (e != cudaSuccess) fail_msg("%s id %d: run: %s", name, id, cudaGetErrorString(e));
        CK(cudaStreamSynchronize(st));
        CK(cudaGetLastError());
        fetch_y(u, name);
        const uint16_t *y = u->hy + GUARD;
        double maxerr = 0.0;
        int64_t bad = 0, first = -1;
        for (int64_t i = 0; i < u->yn; i++) {
            const double d = fabs((double)tc__f16_to_f32(y[i]) - want[i]);
            if (!cnr_close(y[i], want[i], atol, rtol)) {
                if (first < 0) first = i;
                bad++;
            } else if (d > maxerr) {
                maxerr = d;
            }
        }
        print_message("%-10s n%d c%d %dx%d k%d %dx%d p%d,%d s%d,%d d%d,%d -> %dx%d M=%lld K=%lld b%d r%d relu%d "
                      "id %d: max err %.3g (atol %.3g)%s\n",
                      name, g->n, g->c, g->h, g->w, g->k, g->r, g->s, g->ph, g->pw, g->sh, g->sw, g->dh, g->dw, g->oh,
                      g->ow, (long long)g->n * g->oh * g->ow, (long long)K, bias, res, relu, id, maxerr, atol,
                      bad ? "  FAILED" : "");
        if (bad) {
            const int64_t m = first / g->k, ch = first % g->k;
            fail_msg("%s id %d: %lld of %lld elements wrong; first at pixel %lld channel %lld: got %g (0x%04x), want "
                     "%g",
                     name, id, (long long)bad, (long long)u->yn, (long long)m, (long long)ch,
                     (double)tc__f16_to_f32(y[first]), y[first], want[first]);
        }
        if (tc__igemm_conv_workspace(&p, id) > 0) { /* split-K: the same bits again (no atomics) */
            uint16_t *again = malloc((size_t)u->yn * 2);
            assert_non_null(again);
            memcpy(again, y, (size_t)u->yn * 2);
            poison_y(u);
            CK(tc__igemm_conv_run(&p, id, st));
            CK(cudaStreamSynchronize(st));
            fetch_y(u, name);
            if (memcmp(again, u->hy + GUARD, (size_t)u->yn * 2) != 0) fail_msg("%s id %d: not deterministic", name, id);
            free(again);
        }
    }
    free(want);
}

static const conv_case edge_cases[] = {
    /* n, c, h, w, k, r, s, ph, pw, sh, sw, dh, dw */
    {1, 8, 5, 7, 8, 1, 1, 0, 0, 1, 1, 1, 1},        /* K = 8: one chunk, M = 35 */
    {1, 8, 1, 1, 8, 1, 1, 0, 0, 1, 1, 1, 1},        /* M = 1 */
    {2, 16, 9, 11, 24, 3, 3, 1, 1, 1, 1, 1, 1},     /* K = 144: tiles cross taps */
    {1, 24, 13, 10, 64, 3, 3, 2, 0, 2, 1, 1, 1},    /* c = 24, stride 2 x 1, pads 2 / 0 */
    {3, 64, 10, 9, 72, 3, 3, 2, 2, 1, 1, 2, 2},     /* dilation 2, k = 72 */
    {1, 520, 6, 5, 264, 3, 3, 1, 1, 1, 1, 1, 1},    /* c = 520, k = 264 */
    {2, 8, 23, 19, 24, 7, 7, 3, 3, 2, 2, 1, 1},     /* 7x7 stride 2 pad 3 */
    {1, 16, 4, 4, 8, 3, 3, 3, 3, 1, 1, 1, 1},       /* pads 3: whole rows of padding taps */
    {5, 40, 3, 17, 136, 2, 5, 0, 2, 1, 3, 2, 1},    /* 2x5, strides 1 / 3, dilations 2 / 1 */
    {4, 32, 15, 15, 40, 3, 3, 0, 0, 1, 1, 1, 1},    /* M = 676 */
    {2, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1},    /* 3x3 at 56x56, batch 2 */
    {1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1, 1, 1},    /* ResNet-50 layer4 3x3, batch 1 (split-K's case) */
    {1, 64, 56, 56, 256, 1, 1, 0, 0, 1, 1, 1, 1},   /* ResNet-50 1x1 64 -> 256 */
    {1, 256, 14, 14, 512, 1, 1, 0, 0, 2, 2, 1, 1},  /* 1x1 stride 2 (downsample) */
    {3, 8, 2, 3, 16, 3, 3, 1, 1, 2, 2, 1, 1},       /* tiny image, stride 2 */
};

static void test_edge_shapes(void **state) {
    (void)state;
    if (!have_cuda()) skip();
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    uint64_t seed = 0x1234567ull;
    for (size_t i = 0; i < sizeof edge_cases / sizeof edge_cases[0]; i++) {
        const cnr_geom g = geom_of(&edge_cases[i]);
        bufs u;
        bufs_make(&u, &g, &seed);
        char name[32];
        snprintf(name, sizeof name, "edge %zu", i);
        check_case(&u, name, true, true, true, st);                          /* the full epilogue */
        const unsigned f = (unsigned)i % 7;                                  /* and one of the other seven */
        check_case(&u, name, (f & 1) != 0, (f & 2) != 0, (f & 4) != 0, st); /* (f = 0: the plain convolution) */
        bufs_free(&u);
    }
    CK(cudaStreamDestroy(st));
}

static int32_t rnd(uint64_t *seed, int32_t lo, int32_t hi) { /* uniform in [lo, hi] */
    *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (int32_t)((*seed >> 33) % (uint64_t)(hi - lo + 1));
}

static void test_random_shapes(void **state) {
    (void)state;
    if (!have_cuda()) skip();
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    uint64_t seed = 0xC0FFEEull;
    for (int i = 0; i < 12; i++) {
        conv_case t;
        cnr_geom g;
        do {
            t = (conv_case){rnd(&seed, 1, 3),  8 * rnd(&seed, 1, 12), rnd(&seed, 1, 20), rnd(&seed, 1, 20),
                            8 * rnd(&seed, 1, 24), rnd(&seed, 1, 5),  rnd(&seed, 1, 5),  rnd(&seed, 0, 3),
                            rnd(&seed, 0, 3),  rnd(&seed, 1, 3),     rnd(&seed, 1, 3),  rnd(&seed, 1, 2),
                            rnd(&seed, 1, 2)};
        } while (t.h + 2 * t.ph - t.dh * (t.r - 1) - 1 < 0 || t.w + 2 * t.pw - t.dw * (t.s - 1) - 1 < 0);
        g = geom_of(&t);
        bufs u;
        bufs_make(&u, &g, &seed);
        char name[32];
        snprintf(name, sizeof name, "random %d", i);
        check_case(&u, name, i % 2 == 0, i % 3 != 0, i % 4 < 2, st);
        bufs_free(&u);
    }
    CK(cudaStreamDestroy(st));
}

/* run() refuses with cudaErrorInvalidValue and y stays poisoned. */
static void expect_refused(bufs *u, const tc__igemm_conv *p, uint8_t id, cudaStream_t st, const char *what) {
    poison_y(u);
    const cudaError_t e = tc__igemm_conv_run(p, id, st);
    if (e != cudaErrorInvalidValue) fail_msg("%s: run gave %s, not cudaErrorInvalidValue", what, cudaGetErrorString(e));
    CK(cudaStreamSynchronize(st));
    CK(cudaGetLastError());
    fetch_y(u, what);
    for (int64_t i = 0; i < u->yn; i++)
        if (u->hy[GUARD + i] != POISON) fail_msg("%s: refused, but y[%lld] was written", what, (long long)i);
}

static void test_refusals(void **state) {
    (void)state;
    /* host-side answers first: these need no device */
    for (int id = 0; id < 256; id++) assert_int_equal(tc__igemm_conv_id_valid((uint8_t)id), id < TC__IGEMM_NUM_CONFIGS);
    const conv_case base = {1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1, 1, 1};
    const cnr_geom g0 = geom_of(&base);
    tc__igemm_conv q = conv_of(&g0);
    assert_true(tc__igemm_conv_ok(&q)); /* NULL pointers are fine before run() */
    uint8_t ids[8];
    const int nids = tc__igemm_conv_configs(&q, ids, 8);
    assert_true(nids >= 1 && nids <= 4);
    for (int i = 0; i < nids; i++) {
        assert_true(tc__igemm_conv_id_valid(ids[i]));
        for (int j = 0; j < i; j++) assert_int_not_equal(ids[i], ids[j]);
    }
    assert_int_equal(tc__igemm_conv_configs(&q, ids, 1), 1);
    assert_int_equal(tc__igemm_conv_configs(&q, ids, 0), 0);
    size_t most = 0;
    for (uint8_t id = 0; id < TC__IGEMM_NUM_CONFIGS; id++) {
        const size_t b = tc__igemm_conv_workspace(&q, id);
        most = b > most ? b : most;
    }
    assert_int_equal(tc__igemm_conv_workspace_max(&q), most);
    assert_true(most > 0); /* the split-K id needs one here */
    tc__igemm_conv bad = q;
    bad.c = 12; /* not a multiple of 8 */
    assert_false(tc__igemm_conv_ok(&bad));
    assert_int_equal(tc__igemm_conv_configs(&bad, ids, 8), 0);
    assert_int_equal(tc__igemm_conv_workspace_max(&bad), 0);
    bad = q, bad.k = 12;
    assert_false(tc__igemm_conv_ok(&bad));
    bad = q, bad.oh = q.oh + 1;
    assert_false(tc__igemm_conv_ok(&bad));
    bad = q, bad.r = 10, bad.oh = 1; /* the window does not fit: (7 + 2 - 9 - 1) < 0 */
    assert_false(tc__igemm_conv_ok(&bad));
    bad = q, bad.sh = 0;
    assert_false(tc__igemm_conv_ok(&bad));
    bad = q, bad.ph = -1;
    assert_false(tc__igemm_conv_ok(&bad));
    bad = q, bad.n = 0;
    assert_false(tc__igemm_conv_ok(&bad));
    bad = q, bad.n = 65536, bad.h = bad.w = 64, bad.oh = bad.ow = 64; /* 2^31 elements of x */
    assert_false(tc__igemm_conv_ok(&bad));
    if (!have_cuda()) skip();

    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    uint64_t seed = 99;
    bufs u;
    bufs_make(&u, &g0, &seed);
    const tc__igemm_conv p = conv_bufs(&u, true, true, true);
    expect_refused(&u, &p, TC__IGEMM_NUM_CONFIGS, st, "id 4");
    expect_refused(&u, &p, 255, st, "id 255");
    for (uint8_t id = 0; id < TC__IGEMM_NUM_CONFIGS; id++) {
        const size_t need = tc__igemm_conv_workspace(&p, id);
        if (need == 0) continue;
        tc__igemm_conv t = p;
        t.workspace_bytes = need - 1;
        expect_refused(&u, &t, id, st, "workspace one byte short");
        t = p, t.workspace = NULL;
        expect_refused(&u, &t, id, st, "no workspace");
        t = p, t.workspace = (char *)u.ws + 4;
        expect_refused(&u, &t, id, st, "misaligned workspace");
        t = p, t.workspace = y_of(&u);
        expect_refused(&u, &t, id, st, "workspace over y");
    }
    tc__igemm_conv t = p;
    t.c = 12;
    expect_refused(&u, &t, 0, st, "c = 12");
    t = p, t.oh = p.oh + 1;
    expect_refused(&u, &t, 0, st, "wrong oh");
    t = p, t.x = (const uint16_t *)u.x + 1;
    expect_refused(&u, &t, 0, st, "misaligned x");
    t = p, t.x = NULL;
    expect_refused(&u, &t, 0, st, "x NULL");
    t = p, t.wt = NULL;
    expect_refused(&u, &t, 0, st, "w NULL");
    t = p, t.res = y_of(&u);
    expect_refused(&u, &t, 0, st, "y is the residual");
    t = p, t.res = (uint16_t *)y_of(&u) + 8;
    expect_refused(&u, &t, 0, st, "y overlaps the residual");
    t = p, t.x = y_of(&u);
    expect_refused(&u, &t, 0, st, "y is x");
    bufs_free(&u);
    CK(cudaStreamDestroy(st));
}

static int cmp_float(const void *a, const void *b) {
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Prints the median time of each configuration on the ResNet-50 3x3 convolutions at batch 1 and 128 (no assertion
 * on time: the log shows the speeds). */
static void test_timing(void **state) {
    (void)state;
    if (!have_cuda()) skip();
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    static const int32_t chans[] = {64, 128, 256, 512}, sizes[] = {56, 28, 14, 7}, batches[] = {1, 128};
    uint64_t seed = 7;
    for (int bi = 0; bi < 2; bi++)
        for (int li = 0; li < 4; li++) {
            const conv_case t = {batches[bi], chans[li], sizes[li], sizes[li], chans[li], 3, 3, 1, 1, 1, 1, 1, 1};
            const cnr_geom g = geom_of(&t);
            bufs u;
            bufs_make(&u, &g, &seed);
            const tc__igemm_conv p = conv_bufs(&u, true, false, true);
            uint8_t ids[TC__IGEMM_NUM_CONFIGS];
            const int nids = tc__igemm_conv_configs(&p, ids, TC__IGEMM_NUM_CONFIGS);
            const double flop = 2.0 * g.n * g.oh * g.ow * (double)g.k * g.r * g.s * g.c;
            for (uint8_t id = 0; id < TC__IGEMM_NUM_CONFIGS; id++) {
                enum { WARM = 3, REPS = 21 };
                float ms[REPS];
                for (int r = 0; r < WARM; r++) CK(tc__igemm_conv_run(&p, id, st));
                for (int r = 0; r < REPS; r++) {
                    CK(cudaEventRecord(e0, st));
                    CK(tc__igemm_conv_run(&p, id, st));
                    CK(cudaEventRecord(e1, st));
                    CK(cudaEventSynchronize(e1));
                    CK(cudaEventElapsedTime(&ms[r], e0, e1));
                }
                qsort(ms, REPS, sizeof ms[0], cmp_float);
                const float med = ms[REPS / 2];
                print_message("timing bs%d 3x3 %dch %dx%d id %d%s: median %.4f ms (min %.4f), %.1f TFLOP/s\n", g.n,
                              g.c, g.h, g.w, id, nids > 0 && ids[0] == id ? " (first guess)" : "", (double)med,
                              (double)ms[0], flop / (med * 1e-3) / 1e12);
            }
            bufs_free(&u);
        }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    CK(cudaStreamDestroy(st));
}

#else /* !TC_HAVE_CUDA */

static void test_edge_shapes(void **state) {
    (void)state;
    have_cuda();
    skip();
}
#define test_random_shapes test_edge_shapes
#define test_refusals test_edge_shapes
#define test_timing test_edge_shapes

#endif

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_edge_shapes),
        cmocka_unit_test(test_random_shapes),
        cmocka_unit_test(test_timing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
