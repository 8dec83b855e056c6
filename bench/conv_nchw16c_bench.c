/*
 * conv_nchw16c_bench.c - benchmark of the direct NCHW16c convolution (a program, not a test):
 * conv_nchw16c_f32_avx512 against the GEMM-based tactic the tuner would otherwise pick
 * (conv1x1_f32_avx512 for 1x1 stride-1 unpadded layers, conv_im2col_f32_avx512 for the rest) on
 * the convolutions of ResNet-50 (batch 1, 224 x 224), each on 1 and 2 threads. The direct tactic
 * reads and writes NCHW16c (the stem reads plain NCHW); the GEMM tactics NCHW. Weights are packed
 * once as at build; every timing is the median of repeated runs after warm-up, printed in GFLOP/s
 * (2 * N * C_out * OH * OW * C_in * KH * KW flops, padding taps included) and as a percentage of
 * the per-core peak given with --peak (bench/gemm_peak measures it).
 *
 * usage: conv_nchw16c_bench [--budget SECONDS_PER_TIMING] [--only SUBSTRING] [--peak GFLOPS] [--direct-only]
 *                           [--fastest]
 */
#include "core/thread_pool.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cpu.h"
#include "core/layout.h"
#include "backends/cpu/tactics.h"

typedef struct bench_opts {
    double budget, peak;
    const char *only;
    bool direct_only; /* skip the GEMM tactics */
    bool fastest;     /* report the fastest run instead of the median (less sensitive to a busy machine) */
    tc__pool_t pool;
} bench_opts;

/* One ResNet-50 convolution. */
typedef struct conv_shape {
    const char *what;
    int64_t cin, cout, h, k, s; /* square input h x h, kernel k x k, stride s, pads k / 2 */
} conv_shape;

static const conv_shape kShapes[] = {
    {"stem 7x7 s2 3->64 @224", 3, 64, 224, 7, 2},
    {"1x1 64->64 @56", 64, 64, 56, 1, 1},
    {"3x3 64->64 @56", 64, 64, 56, 3, 1},
    {"1x1 64->256 @56", 64, 256, 56, 1, 1},
    {"1x1 256->64 @56", 256, 64, 56, 1, 1},
    {"1x1 256->128 @56", 256, 128, 56, 1, 1},
    {"3x3 s2 128 @56->28", 128, 128, 56, 3, 2},
    {"1x1 s2 256->512 @56->28", 256, 512, 56, 1, 2},
    {"3x3 128->128 @28", 128, 128, 28, 3, 1},
    {"1x1 128->512 @28", 128, 512, 28, 1, 1},
    {"1x1 512->128 @28", 512, 128, 28, 1, 1},
    {"3x3 s2 256 @28->14", 256, 256, 28, 3, 2},
    {"3x3 256->256 @14", 256, 256, 14, 3, 1},
    {"1x1 256->1024 @14", 256, 1024, 14, 1, 1},
    {"1x1 1024->256 @14", 1024, 256, 14, 1, 1},
    {"1x1 s2 1024->2048 @14->7", 1024, 2048, 14, 1, 2},
    {"3x3 512->512 @7", 512, 512, 7, 3, 1},
    {"1x1 512->2048 @7", 512, 2048, 7, 1, 1},
    {"1x1 2048->512 @7", 2048, 512, 7, 1, 1},
};

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

/* A float32 tensor, 64-byte aligned as in the engine's arena, uniform in [-1, 1) and never zero. */
static tc__tensor make(int32_t rank, const int64_t *dims, unsigned seed) {
    tc__tensor t = {TC_DTYPE_FLOAT32, rank, {0}, NULL, 0};
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++) n *= (t.dims[i] = dims[i]);
    t.nbytes = (size_t)n * sizeof(float);
    t.data = aligned_alloc(64, (t.nbytes + 63) & ~(size_t)63);
    if (t.data == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    float *p = t.data;
    uint64_t s = seed * 2654435761u + 1;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (float)((double)((s >> 40) + 1) / (double)(1u << 23)) - 1.0f;
        if (p[i] == 0.0f) p[i] = 1e-3f;
    }
    return t;
}

static tc__attr attr_int(const char *name, int64_t v) {
    tc__attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.kind = TC__ATTR_INT;
    a.i = v;
    return a;
}

static tc__attr attr_ints(const char *name, const int64_t *v, size_t n) {
    tc__attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.kind = TC__ATTR_INTS;
    a.ints = v;
    a.n = n;
    return a;
}

/*
 * Median (or fastest) seconds of t->run(kc) over repeated runs for about `budget` seconds (after 3
 * warm-up runs).
 */
static double time_runs(const tc__tactic *t, const tc__kernel_ctx *kc, double budget, bool fastest) {
    enum { MAX_RUNS = 2000 };
    static double times[MAX_RUNS];
    for (int i = 0; i < 3; i++)
        if (t->run(kc) != TC_STATUS_OK) {
            fprintf(stderr, "%s failed: %s\n", t->name, kc->err->msg);
            exit(1);
        }
    int n = 0;
    const double start = now_s();
    while (n < MAX_RUNS && (n < 7 || now_s() - start < budget)) {
        const double a = now_s();
        t->run(kc);
        times[n++] = now_s() - a;
    }
    qsort(times, (size_t)n, sizeof times[0], cmp_double);
    return fastest ? times[0] : times[n / 2];
}

/* GFLOP/s of tactic t on the step (packing its weight first) with 1 thread and with the pool. */
static void time_tactic(const bench_opts *o, const tc__tactic *t, tc__step_desc *d, tc__tensor *const *out,
                        double flops, double g[2]) {
    tc__tensor packed = *d->in[1];
    const tc__tensor *in[3] = {d->in[0], &packed, d->in[2]};
    tc__err err = {0};
    packed.data = aligned_alloc(64, (packed.nbytes + 63) & ~(size_t)63);
    if (packed.data == NULL || !t->supports(d)) {
        fprintf(stderr, "%s does not take this step\n", t->name);
        exit(1);
    }
    if (t->packs_input && t->packs_input(d, 1)) {
        if (t->pack(d, 1, d->in[1]->data, packed.data, &err) != TC_STATUS_OK) {
            fprintf(stderr, "%s pack: %s\n", t->name, err.msg);
            exit(1);
        }
    } else {
        memcpy(packed.data, d->in[1]->data, packed.nbytes);
    }
    const size_t bytes = t->scratch_bytes ? t->scratch_bytes(d) : 0;
    tc__scratch scratch = {aligned_alloc(64, (bytes + 64) & ~(size_t)63), bytes, 0};
    tc__kernel_ctx kc = {"bench", "Conv", 13, d->attrs, d->n_in, in, 1, out, &err, &scratch, d->epi, NULL, NULL, NULL, NULL, NULL, NULL};
    for (int th = 0; th < 2; th++) {
        kc.exec = th ? o->pool : NULL;
        g[th] = flops / time_runs(t, &kc, o->budget, o->fastest) * 1e-9;
    }
    free(scratch.base);
    free(packed.data);
}

/* One shape: the direct tactic on NCHW16c, then the GEMM tactic on NCHW; one line of figures. */
static void bench_shape(const bench_opts *o, const conv_shape *c) {
    const int64_t p = c->k / 2, oh = (c->h + 2 * p - c->k) / c->s + 1;
    const int64_t xd[4] = {1, c->cin, c->h, c->h}, wd[4] = {c->cout, c->cin, c->k, c->k}, bd[1] = {c->cout};
    const int64_t yd[4] = {1, c->cout, oh, oh}, pads[4] = {p, p, p, p}, strides[2] = {c->s, c->s};
    tc__tensor x = make(4, xd, 1), w = make(4, wd, 2), b = make(1, bd, 3), y = make(4, yd, 4);
    const tc__tensor *in[3] = {&x, &w, &b}, *outs[1] = {&y};
    tc__tensor *out[1] = {&y};
    const bool in_const[3] = {false, true, true};
    const bool blocked_in = c->cin % TC__LAYOUT_BLOCK == 0;
    tc__attr attrs[4] = {attr_ints("pads", pads, 4), attr_ints("strides", strides, 2),
                         attr_int(TC__ATTR_LAYOUT_IN, blocked_in ? 1 : 0), attr_int(TC__ATTR_LAYOUT_OUT, 1)};
    tc__epilogue relu = tc__epilogue_none();
    relu.act = TC__ACT_RELU;
    tc__attrs blocked = {4, attrs}, plain = {2, attrs};
    tc__step_desc d = {"Conv", 13, &blocked, 3, in, in_const, 1, outs, &relu, NULL, NULL, NULL, 0};
    const double flops = 2.0 * (double)(c->cout * oh * oh) * (double)(c->cin * c->k * c->k);
    double gd[2], gg[2] = {0.0, 0.0};
    time_tactic(o, &tc__tactic_conv_nchw16c_f32_avx512, &d, out, flops, gd);
    d.attrs = &plain;
    const tc__tactic *gemm = &tc__tactic_conv1x1_f32_avx512;
    if (!gemm->supports(&d)) gemm = &tc__tactic_conv_im2col_f32_avx512;
    if (!o->direct_only) time_tactic(o, gemm, &d, out, flops, gg);
    printf("%-26s %8.1f %5.0f%% %8.1f | %-8s %8.1f %5.0f%% %8.1f | x%4.2f x%4.2f\n", c->what, gd[0],
           100.0 * gd[0] / o->peak, gd[1], gemm == &tc__tactic_conv1x1_f32_avx512 ? "conv1x1" : "im2col", gg[0],
           100.0 * gg[0] / o->peak, gg[1], gg[0] > 0.0 ? gd[0] / gg[0] : 0.0, gg[1] > 0.0 ? gd[1] / gg[1] : 0.0);
    free(x.data), free(w.data), free(b.data), free(y.data);
}

int main(int argc, char **argv) {
    bench_opts o = {0.3, 175.6, NULL, false, false, NULL};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc) o.budget = atof(argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) o.only = argv[++i];
        else if (strcmp(argv[i], "--peak") == 0 && i + 1 < argc) o.peak = atof(argv[++i]);
        else if (strcmp(argv[i], "--direct-only") == 0) o.direct_only = true;
        else if (strcmp(argv[i], "--fastest") == 0) o.fastest = true;
        else {
            fprintf(stderr,
                    "usage: %s [--budget SECONDS] [--only SUBSTRING] [--peak GFLOPS] [--direct-only] [--fastest]\n",
                    argv[0]);
            return 2;
        }
    }
    if ((tc__tactic_conv_nchw16c_f32_avx512.caps & ~tc__cpu_get()->isa) != 0) {
        printf("conv_nchw16c_f32_avx512: this CPU lacks AVX-512\n");
        return 0;
    }
    o.pool = tc__pool_create(2);
    if (o.pool == NULL) {
        fprintf(stderr, "cannot create a thread pool\n");
        return 1;
    }
    printf("GFLOP/s (%s run; fused ReLU, conv bias), %% of %.1f GFLOP/s per core; the GEMM tactic on NCHW\n",
           o.fastest ? "fastest" : "median", o.peak);
    printf("%-26s %8s %6s %8s | %-8s %8s %6s %8s | %5s %5s\n", "shape", "direct 1t", "", "2t", "gemm", "1t", "", "2t",
           "1t", "2t");
    for (size_t i = 0; i < sizeof kShapes / sizeof kShapes[0]; i++)
        if (o.only == NULL || strstr(kShapes[i].what, o.only) != NULL) bench_shape(&o, &kShapes[i]);
    tc__pool_destroy(o.pool);
    return 0;
}
