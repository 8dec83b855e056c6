/*
 * vec_bench.c - benchmark of the non-GEMM FP32 tactics (a program, not a test): depthwise
 * convolutions of MobileNetV2 / EfficientNet-B0, BERT's Softmax, LayerNorm and Add, GELU, the
 * squeeze-excite Mul and Sigmoid, global average and 3x3 pooling. For each shape it prints the
 * median time of the reference kernel (followed by the reference epilogue when the step has
 * one, as the engine runs a step without a fusing tactic), of every tactic this CPU can run on
 * one thread, and of the best one with a 2-thread pool, with the speedups over the reference.
 *
 * usage: vec_bench [--only dwconv|pool|elementwise|norm] [--budget SECONDS_PER_TIMING]
 */
#include <math.h>
#include "core/thread_pool.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/ref/ref.h"
#include "core/cpu.h"
#include "backends/cpu/tactics.h"

typedef struct bench_opts {
    const char *only;
    double budget;
    tc__pool_t pool;
} bench_opts;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

/* A float32 tensor, 64-byte aligned as in the engine's arena, uniform in [lo, hi) and never zero. */
static tc__tensor make(int32_t rank, const int64_t *dims, unsigned seed, float lo, float hi) {
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
        float u = (float)((s >> 40) + 1) / (float)(1u << 24);
        p[i] = lo + (hi - lo) * u;
        if (p[i] == 0.0f) p[i] = 1e-3f;
    }
    return t;
}

/* The engine's path without a fusing tactic: the reference kernel, then the reference epilogue. */
static tc_status ref_then_epilogue(const tc__kernel_ctx *kc) {
    tc_status st = tc__ref_find(kc->op_type)(kc);
    if (st == TC_STATUS_OK && kc->epi != NULL)
        st = tc__epilogue_apply(kc->epi, kc->out[0], NULL, kc->residual, kc->err);
    return st;
}

/* Median seconds of fn(kc) over repeated runs for about `budget` seconds (after 2 warm-up runs). */
static double time_median(tc__ref_fn fn, const tc__kernel_ctx *kc, double budget) {
    enum { MAX_RUNS = 1000 };
    double t[MAX_RUNS];
    int n = 0;
    for (int i = 0; i < 2; i++)
        if (fn(kc) != TC_STATUS_OK) {
            fprintf(stderr, "%s failed: %s\n", kc->op_type, kc->err->msg);
            exit(1);
        }
    const double start = now_s();
    while (n < MAX_RUNS && (n < 5 || now_s() - start < budget)) {
        double a = now_s();
        fn(kc);
        t[n++] = now_s() - a;
    }
    qsort(t, (size_t)n, sizeof t[0], cmp_double);
    return t[n / 2];
}

/* Times one step: the reference, each usable tactic in ts[0..nt) on one thread, ts[0] (usable) with the pool. */
static void bench(const bench_opts *o, const char *label, const char *op, int64_t opset, const tc__attr *attrs, int na,
                  int n_in, const tc__tensor *const *in, tc__tensor *y, const tc__epilogue *epi,
                  const tc__tactic *const *ts, int nt) {
    tc__attrs as = {na, attrs};
    tc__err err = {0};
    tc__tensor *out[1] = {y};
    tc__epilogue none = tc__epilogue_none();
    tc__kernel_ctx kc = {"bench", op, opset, &as, n_in, in, 1, out, &err, NULL, epi ? epi : &none, NULL, NULL, NULL, NULL, NULL, NULL};
    const double tr = time_median(ref_then_epilogue, &kc, o->budget);
    printf("%-40s ref %9.1f us", label, tr * 1e6);
    const uint64_t isa = tc__cpu_get()->isa;
    const tc__tactic *best = NULL;
    for (int i = 0; i < nt; i++) {
        if ((ts[i]->caps & ~isa) != 0) continue;
        if (best == NULL) best = ts[i];
        double tt = time_median(ts[i]->run, &kc, o->budget);
        printf(" | %s %8.1f us x%5.1f", ts[i]->name, tt * 1e6, tr / tt);
    }
    if (best != NULL) {
        kc.exec = o->pool;
        double tp = time_median(best->run, &kc, o->budget);
        printf(" | 2 threads %8.1f us x%5.1f", tp * 1e6, tr / tp);
    }
    printf("\n");
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

/* Depthwise K x K convolution, stride s, pads K / 2, on [1, c, h, h] with bias, optionally ReLU6. */
static void bench_dwconv(const bench_opts *o, int64_t c, int64_t h, int64_t k, int64_t s, bool relu6) {
    const int64_t p = k / 2, oh = (h + 2 * p - k) / s + 1;
    const int64_t xd[4] = {1, c, h, h}, wd[4] = {c, 1, k, k}, bd[1] = {c}, yd[4] = {1, c, oh, oh};
    tc__tensor x = make(4, xd, 1, -2.0f, 2.0f), w = make(4, wd, 2, -1.0f, 1.0f), b = make(1, bd, 3, -1.0f, 1.0f);
    tc__tensor y = make(4, yd, 4, 0.0f, 1.0f);
    const int64_t pads[4] = {p, p, p, p}, strides[2] = {s, s};
    tc__attr attrs[3] = {attr_int("group", c), attr_ints("pads", pads, 4), attr_ints("strides", strides, 2)};
    const tc__tensor *in[3] = {&x, &w, &b};
    tc__epilogue e = tc__epilogue_none();
    e.act = TC__ACT_CLIP;
    e.alpha = 0.0f;
    e.beta = 6.0f;
    char label[96];
    snprintf(label, sizeof label, "dwconv %lldx%lld s%lld %lldx%lldx%lld%s", (long long)k, (long long)k, (long long)s,
             (long long)h, (long long)h, (long long)c, relu6 ? " +ReLU6" : "");
    const tc__tactic *ts[2] = {&tc__tactic_dwconv_f32_avx512, &tc__tactic_dwconv_f32_avx2};
    bench(o, label, "Conv", 13, attrs, 3, 3, in, &y, relu6 ? &e : NULL, ts, 2);
    free(x.data), free(w.data), free(b.data), free(y.data);
}

static void bench_pools(const bench_opts *o) {
    {
        const int64_t xd[4] = {1, 64, 112, 112}, yd[4] = {1, 64, 56, 56}, k[2] = {3, 3}, s[2] = {2, 2};
        const int64_t p[4] = {1, 1, 1, 1};
        tc__tensor x = make(4, xd, 20, -3.0f, 3.0f), y = make(4, yd, 21, 0.0f, 1.0f);
        const tc__tensor *in[1] = {&x};
        tc__attr attrs[3] = {attr_ints("kernel_shape", k, 2), attr_ints("strides", s, 2), attr_ints("pads", p, 4)};
        const tc__tactic *tm[2] = {&tc__tactic_maxpool_f32_avx512, &tc__tactic_maxpool_f32_avx2};
        const tc__tactic *ta[2] = {&tc__tactic_avgpool_f32_avx512, &tc__tactic_avgpool_f32_avx2};
        bench(o, "MaxPool 3x3 s2 [1,64,112,112]", "MaxPool", 12, attrs, 3, 1, in, &y, NULL, tm, 2);
        bench(o, "AveragePool 3x3 s2 [1,64,112,112]", "AveragePool", 11, attrs, 3, 1, in, &y, NULL, ta, 2);
        free(x.data), free(y.data);
    }
    const int64_t shapes[2][4] = {{1, 32, 112, 112}, {1, 1280, 7, 7}};
    const tc__tactic *tg[2] = {&tc__tactic_gavgpool_f32_avx512, &tc__tactic_gavgpool_f32_avx2};
    for (int i = 0; i < 2; i++) {
        const int64_t yd[4] = {1, shapes[i][1], 1, 1};
        tc__tensor x = make(4, shapes[i], 22, -3.0f, 3.0f), y = make(4, yd, 23, 0.0f, 1.0f);
        const tc__tensor *in[1] = {&x};
        char label[64];
        snprintf(label, sizeof label, "GlobalAveragePool [1,%lld,%lld,%lld]", (long long)shapes[i][1],
                 (long long)shapes[i][2], (long long)shapes[i][3]);
        bench(o, label, "GlobalAveragePool", 13, NULL, 0, 1, in, &y, NULL, tg, 2);
        free(x.data), free(y.data);
    }
}

static void bench_elementwise(const bench_opts *o) {
    const int64_t d[3] = {1, 128, 768}, row[1] = {768};
    tc__tensor a = make(3, d, 30, -3.0f, 3.0f), b = make(3, d, 31, -3.0f, 3.0f), r = make(1, row, 32, -1.0f, 1.0f);
    tc__tensor y = make(3, d, 33, 0.0f, 1.0f);
    const tc__tactic *tadd[2] = {&tc__tactic_add_f32_avx512, &tc__tactic_add_f32_avx2};
    const tc__tensor *same[2] = {&a, &b}, *rows[2] = {&a, &r};
    tc__epilogue relu = tc__epilogue_none();
    relu.act = TC__ACT_RELU;
    bench(o, "Add [1,128,768] + [1,128,768]", "Add", 14, NULL, 0, 2, same, &y, NULL, tadd, 2);
    bench(o, "Add [1,128,768] + [768]", "Add", 14, NULL, 0, 2, rows, &y, NULL, tadd, 2);
    bench(o, "Add+Relu [1,128,768] (fused)", "Add", 14, NULL, 0, 2, same, &y, &relu, tadd, 2);
    free(a.data), free(b.data), free(r.data), free(y.data);

    const int64_t gd[3] = {1, 128, 3072};
    tc__tensor g = make(3, gd, 34, -4.0f, 4.0f), gy = make(3, gd, 35, 0.0f, 1.0f);
    const tc__tensor *gin[1] = {&g};
    const tc__tactic *tgelu[2] = {&tc__tactic_gelu_f32_avx512, &tc__tactic_gelu_f32_avx2};
    bench(o, "Gelu [1,128,3072]", "Gelu", 20, NULL, 0, 1, gin, &gy, NULL, tgelu, 2);
    free(g.data), free(gy.data);

    const int64_t xd[4] = {1, 32, 112, 112}, cd[4] = {1, 32, 1, 1};
    tc__tensor x = make(4, xd, 36, -3.0f, 3.0f), c = make(4, cd, 37, 0.0f, 1.0f), xy = make(4, xd, 38, 0.0f, 1.0f);
    const tc__tensor *se[2] = {&x, &c}, *xin[1] = {&x};
    const tc__tactic *tmul[2] = {&tc__tactic_mul_f32_avx512, &tc__tactic_mul_f32_avx2};
    const tc__tactic *tsig[2] = {&tc__tactic_sigmoid_f32_avx512, &tc__tactic_sigmoid_f32_avx2};
    bench(o, "Mul [1,32,112,112] * [1,32,1,1] (SE)", "Mul", 14, NULL, 0, 2, se, &xy, NULL, tmul, 2);
    bench(o, "Sigmoid [1,32,112,112]", "Sigmoid", 13, NULL, 0, 1, xin, &xy, NULL, tsig, 2);
    free(x.data), free(c.data), free(xy.data);
}

static void bench_norm(const bench_opts *o) {
    const int64_t sd[4] = {1, 12, 128, 128};
    tc__tensor x = make(4, sd, 40, -8.0f, 8.0f), y = make(4, sd, 41, 0.0f, 1.0f);
    const tc__tensor *in[1] = {&x};
    const tc__tactic *tsm[2] = {&tc__tactic_softmax_f32_avx512, &tc__tactic_softmax_f32_avx2};
    bench(o, "Softmax [1,12,128,128]", "Softmax", 13, NULL, 0, 1, in, &y, NULL, tsm, 2);
    free(x.data), free(y.data);

    const int64_t d[3] = {1, 128, 768}, pd[1] = {768};
    tc__tensor lx = make(3, d, 42, -3.0f, 3.0f), ly = make(3, d, 43, 0.0f, 1.0f);
    tc__tensor sc = make(1, pd, 44, 0.5f, 1.5f), bi = make(1, pd, 45, -1.0f, 1.0f);
    const tc__tensor *lin[3] = {&lx, &sc, &bi};
    tc__attr attrs[1] = {attr_int("axis", -1)};
    const tc__tactic *tln[2] = {&tc__tactic_layernorm_f32_avx512, &tc__tactic_layernorm_f32_avx2};
    bench(o, "LayerNorm [1,128,768]", "LayerNormalization", 17, attrs, 1, 3, lin, &ly, NULL, tln, 2);
    free(lx.data), free(ly.data), free(sc.data), free(bi.data);
}

int main(int argc, char **argv) {
    bench_opts o = {NULL, 0.2, NULL};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) o.only = argv[++i];
        else if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc) o.budget = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--only dwconv|pool|elementwise|norm] [--budget SECONDS]\n", argv[0]);
            return 2;
        }
    }
    o.pool = tc__pool_create(2);
    if (o.pool == NULL) {
        fprintf(stderr, "cannot create a thread pool\n");
        return 1;
    }
    if (o.only == NULL || strcmp(o.only, "dwconv") == 0) {
        bench_dwconv(&o, 32, 112, 3, 1, false);  /* MobileNetV2 block 1 */
        bench_dwconv(&o, 32, 112, 3, 1, true);
        bench_dwconv(&o, 96, 112, 3, 2, true);   /* MobileNetV2 block 2 */
        bench_dwconv(&o, 144, 56, 3, 1, true);
        bench_dwconv(&o, 144, 56, 3, 2, true);
        bench_dwconv(&o, 192, 28, 3, 1, true);
        bench_dwconv(&o, 960, 7, 3, 1, true);
        bench_dwconv(&o, 240, 28, 5, 2, false);  /* EfficientNet-B0 */
        bench_dwconv(&o, 672, 14, 5, 1, false);
        bench_dwconv(&o, 1152, 7, 5, 1, false);
    }
    if (o.only == NULL || strcmp(o.only, "pool") == 0) bench_pools(&o);
    if (o.only == NULL || strcmp(o.only, "elementwise") == 0) bench_elementwise(&o);
    if (o.only == NULL || strcmp(o.only, "norm") == 0) bench_norm(&o);
    tc__pool_destroy(o.pool);
    return 0;
}
