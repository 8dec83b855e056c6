/*
 * gemm_peak.c - FP32 GEMM benchmark (a program, not a test): the practical FMA peak of this core
 * (a registers-only loop with the AVX-512 microkernel's 14x32 accumulator shape), the microkernel
 * itself on L1-resident packed panels, the GEMM operator at ResNet-50 and BERT shapes with 1 and 2
 * threads, and (AVX-512) the MatMul tactics of both AVX-512 tiles, 14x32 and 8x48, end to end at
 * BERT-base's shapes (128 tokens, weights packed as at build), as the engine runs them. With
 * AVX512-BF16 (--only bf16), the BF16 GEMM operator (FP32 accumulation, one thread) next to the FP32
 * 14x32 one on the same shapes. Prints medians of repeated runs in GFLOP/s.
 *
 * usage: gemm_peak [--reps N] [--isa avx512|avx512_8x48|avx2|scalar] [--only peak|vnni|avx2peak|gemm|conv|matmul|bf16]
 *                  [--threads 1|2]
 */
#include <immintrin.h>
#include <math.h>
#include "core/thread_pool.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/cpu/gemm.h"
#include "backends/cpu/gemm_bf16_avx512bf16.h"
#include "core/cpu.h"
#include "backends/cpu/tactics.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* 28 independent FMA chains on registers only: 2 * 16 * 28 flops per iteration. */
__attribute__((target("avx512f"), noinline)) static float peak_loop_avx512(long iters) {
    __m512 acc[28];
    const __m512 x = _mm512_set1_ps(1.0000001f), y = _mm512_set1_ps(0.9999999f);
    for (int i = 0; i < 28; i++)
        acc[i] = _mm512_set1_ps((float)i);
    for (long it = 0; it < iters; it++) {
#pragma GCC unroll 28
        for (int i = 0; i < 28; i++)
            acc[i] = _mm512_fmadd_ps(acc[i], x, y);
    }
    __m512 s = acc[0];
    for (int i = 1; i < 28; i++)
        s = _mm512_add_ps(s, acc[i]);
    return _mm512_reduce_add_ps(s);
}

/* 24 independent vpdpbusd chains on registers only, 16 * 4 * 24 multiply-adds per iteration. Written in asm:
 * gcc keeps intrinsic versions of this loop in registers only with -march flags on the whole file. */
__attribute__((target("avx512f,avx512vnni"), noinline)) static void peak_loop_vnni(long iters) {
    __asm__ volatile(
        "vpbroadcastd %[x], %%zmm0\n\t"
        "vpbroadcastd %[y], %%zmm1\n\t"
        "1:\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm2\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm3\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm4\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm5\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm6\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm7\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm8\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm9\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm10\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm11\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm12\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm13\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm14\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm15\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm16\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm17\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm18\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm19\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm20\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm21\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm22\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm23\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm24\n\t"
        "vpdpbusd %%zmm1, %%zmm0, %%zmm25\n\t"
        "dec %[n]\n\t"
        "jnz 1b\n\t"
        : [n] "+r"(iters)
        : [x] "r"(0x01020304), [y] "r"(0x05060708)
        : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "cc");
}

/* The INT8 multiply-add peak the qconv_u8s8 kernels are measured against. */
static void bench_peak_vnni(int reps) {
    tc__cpu cpu;
    tc__cpu_detect(NULL, &cpu);
    if ((cpu.isa & TC__ISA_AVX512VNNI) == 0) {
        printf("INT8 peak: no AVX512-VNNI on this CPU\n");
        return;
    }
    const long iters = 2000000;
    double g[64];
    peak_loop_vnni(iters / 10); /* warm-up (clock ramp) */
    for (int r = 0; r < reps; r++) {
        double t = now_s();
        peak_loop_vnni(iters);
        g[r] = 16.0 * 4 * 24 * (double)iters / (now_s() - t) * 1e-9;
    }
    printf("INT8 peak, registers only (24 zmm vpdpbusd chains): %.1f GMAC/s per core (median of %d)\n", median(g, reps),
           reps);
}

/* AVX2: 12 independent ymm FMA chains (2 * 8 * 12 flops per iteration), and 12 chains of vpmaddwd + vpaddd (the
 * AVX2 INT8 kernel's inner step, qconv_s16_avx2.c: 8 * 2 * 12 multiply-adds per iteration). In asm, as above. */
#define AVX2_12(op) op(4) op(5) op(6) op(7) op(8) op(9) op(10) op(11) op(12) op(13) op(14) op(15)
#define AVX2_11(op) op(4) op(5) op(6) op(7) op(8) op(9) op(10) op(11) op(12) op(13) op(14)
/* u7w7 (7-bit weights): two vpmaddubsw of two quads added in 16 bits, one vpmaddwd with ones, one vpaddd: 64 MACs */
#define AVX2_W7(i)                                                                                                     \
    "vpmaddubsw %%ymm1, %%ymm0, %%ymm3\n\tvpmaddubsw %%ymm1, %%ymm0, %%ymm15\n\tvpaddw %%ymm15, %%ymm3, %%ymm3\n\t"     \
    "vpmaddwd %%ymm2, %%ymm3, %%ymm3\n\tvpaddd %%ymm3, %%ymm" #i ", %%ymm" #i "\n\t"
#define AVX2_FMA(i) "vfmadd231ps %%ymm1, %%ymm0, %%ymm" #i "\n\t"
#define AVX2_MADD(i) "vpmaddwd %%ymm1, %%ymm0, %%ymm3\n\tvpaddd %%ymm3, %%ymm" #i ", %%ymm" #i "\n\t"
#define AVX2_MADDUBS(i)                                                                                                \
    "vpmaddubsw %%ymm1, %%ymm0, %%ymm3\n\tvpmaddwd %%ymm2, %%ymm3, %%ymm3\n\tvpaddd %%ymm3, %%ymm" #i ", %%ymm" #i "\n\t"
/* The byte kernels' loop (u8 x s8 codes in ymm0/ymm1, 16-bit ones in ymm2), `body` repeated per iteration. */
#define AVX2_BYTE_LOOP(body)                                                                                           \
    __asm__ volatile("vmovd %[x], %%xmm0\n\tvpbroadcastd %%xmm0, %%ymm0\n\tvmovd %[y], %%xmm1\n\tvpbroadcastd %%xmm1, %%ymm1\n\t" \
                     "vmovd %[o], %%xmm2\n\tvpbroadcastd %%xmm2, %%ymm2\n\t"                                            \
                     "1:\n\t" body "dec %[n]\n\tjnz 1b\n\t"                                                           \
                     : [n] "+r"(iters)                                                                                 \
                     : [x] "r"(0x01020304), [y] "r"(0x05060708), [o] "r"(0x00010001)                                   \
                     : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",   \
                       "xmm12", "xmm13", "xmm14", "xmm15", "cc")
__attribute__((target("avx2,fma"), noinline)) static void peak_loop_avx2(long iters, int madd) {
    if (madd == 3)
        AVX2_BYTE_LOOP(AVX2_11(AVX2_W7));
    else if (madd == 2)
        AVX2_BYTE_LOOP(AVX2_12(AVX2_MADDUBS));
    else if (madd)
        __asm__ volatile("vmovd %[x], %%xmm0\n\tvpbroadcastd %%xmm0, %%ymm0\n\tvmovd %[y], %%xmm1\n\tvpbroadcastd %%xmm1, %%ymm1\n\t"
                         "1:\n\t" AVX2_12(AVX2_MADD) "dec %[n]\n\tjnz 1b\n\t"
                         : [n] "+r"(iters)
                         : [x] "r"(0x00030004), [y] "r"(0x00050006)
                         : "xmm0", "xmm1", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
                           "xmm12", "xmm13", "xmm14", "xmm15", "cc");
    else
        __asm__ volatile("vmovd %[x], %%xmm0\n\tvpbroadcastd %%xmm0, %%ymm0\n\tvmovd %[y], %%xmm1\n\tvpbroadcastd %%xmm1, %%ymm1\n\t"
                         "1:\n\t" AVX2_12(AVX2_FMA) "dec %[n]\n\tjnz 1b\n\t"
                         : [n] "+r"(iters)
                         : [x] "r"(0x3f800001), [y] "r"(0x3f7ffffe)
                         : "xmm0", "xmm1", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",
                           "xmm13", "xmm14", "xmm15", "cc");
}

/* The AVX2 FP32 and 16-bit integer multiply-add peaks (the AVX2 INT8 kernel's ceiling against FP32's). */
static void bench_peak_avx2(int reps) {
    tc__cpu cpu;
    tc__cpu_detect(NULL, &cpu);
    if ((cpu.isa & (TC__ISA_AVX2 | TC__ISA_FMA)) != (TC__ISA_AVX2 | TC__ISA_FMA)) {
        printf("AVX2 peak: no AVX2/FMA on this CPU\n");
        return;
    }
    const long iters = 4000000;
    double f[64], m[64], u[64], w[64];
    peak_loop_avx2(iters / 10, 0); /* warm-up (clock ramp) */
    for (int r = 0; r < reps; r++) { /* interleaved */
        double t = now_s();
        peak_loop_avx2(iters, 0);
        f[r] = 8.0 * 12 * (double)iters / (now_s() - t) * 1e-9;
        t = now_s();
        peak_loop_avx2(iters, 1);
        m[r] = 16.0 * 12 * (double)iters / (now_s() - t) * 1e-9;
        t = now_s();
        peak_loop_avx2(iters, 2);
        u[r] = 32.0 * 12 * (double)iters / (now_s() - t) * 1e-9;
        t = now_s();
        peak_loop_avx2(iters, 3);
        w[r] = 64.0 * 11 * (double)iters / (now_s() - t) * 1e-9;
    }
    const double fm = median(f, reps), mm = median(m, reps), um = median(u, reps), wm = median(w, reps);
    printf("AVX2 peak, registers only (12 ymm chains): FP32 FMA %.1f GFMA/s, vpmaddwd+vpaddd %.1f GMAC/s (x%.2f), "
           "vpmaddubsw+vpmaddwd+vpaddd %.1f GMAC/s (x%.2f), u7w7 2 x vpmaddubsw+vpaddw+vpmaddwd+vpaddd (11 chains) "
           "%.1f GMAC/s (x%.2f) per core (medians of %d)\n", fm, mm, mm / fm, um, um / fm, wm, wm / fm, reps);
}

static void bench_peak(int reps) {
    tc__cpu cpu;
    tc__cpu_detect(NULL, &cpu);
    if ((cpu.isa & TC__ISA_AVX512F) == 0) {
        printf("peak: no AVX-512 on this CPU\n");
        return;
    }
    const long iters = 2000000;
    double g[64];
    volatile float sink = 0.0f;
    sink += peak_loop_avx512(iters / 10); /* warm-up (clock ramp) */
    for (int r = 0; r < reps; r++) {
        double t = now_s();
        sink += peak_loop_avx512(iters);
        g[r] = 2.0 * 16 * 28 * (double)iters / (now_s() - t) * 1e-9;
    }
    (void)sink;
    printf("FP32 peak, registers only (28 zmm FMA chains): %.1f GFLOP/s per core (median of %d)\n", median(g, reps),
           reps);
}

static float *rand_floats(size_t n, unsigned seed) {
    float *p = aligned_alloc(64, ((n * sizeof(float) + 63) / 64) * 64 + 64);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) + 0.001f; /* never all zero */
    }
    return p;
}

/* The microkernel on a full tile over L1-resident packed panels (kc = 192). */
static void bench_ukernel(const tc__gemm_config *cfg, int reps) {
    const size_t kc = 192;
    float *a = rand_floats(cfg->mr * kc, 1), *b = rand_floats(kc * cfg->nr, 2), *c = rand_floats(cfg->mr * cfg->nr, 3);
    tc__gemm_tile t = {.mr = cfg->mr,
                       .nr = cfg->nr,
                       .kc = kc,
                       .a = a,
                       .rs_a = 1,
                       .cs_a = cfg->mr,
                       .b = b,
                       .rs_b = cfg->nr,
                       .c = c,
                       .ldc = cfg->nr,
                       .load_c = true};
    const long calls = 200000000L / (long)(cfg->mr * cfg->nr * kc / 8);
    double g[64];
    for (long i = 0; i < calls / 10; i++)
        cfg->ukernel(&t);
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        for (long i = 0; i < calls; i++)
            cfg->ukernel(&t);
        g[r] = 2.0 * (double)(cfg->mr * cfg->nr * kc) * (double)calls / (now_s() - t0) * 1e-9;
    }
    printf("microkernel %s, packed panels in L1 (kc=%zu): %.1f GFLOP/s (median of %d)\n", cfg->name, kc,
           median(g, reps), reps);
    free(a);
    free(b);
    free(c);
}

typedef struct shape {
    const char *what;
    size_t m, n, k;
    bool a_packed, b_packed; /* constant operand packed at build */
} shape;

/* The median GFLOP/s of fn(arg) (flops per call), with enough calls per sample for ~20 ms. */
static double time_gflops(void (*fn)(void *), void *arg, double flops, int reps) {
    double t0 = now_s();
    fn(arg);
    const double one = now_s() - t0;
    const int per = one > 0.02 ? 1 : (int)(0.02 / (one > 1e-7 ? one : 1e-7)) + 1;
    double g[64];
    for (int r = 0; r < reps; r++) {
        t0 = now_s();
        for (int i = 0; i < per; i++)
            fn(arg);
        g[r] = flops * per / (now_s() - t0) * 1e-9;
    }
    return median(g, reps);
}

/* One call of the GEMM operator. */
typedef struct gemm_call {
    const tc__gemm_f32_problem *p;
    const tc__gemm_config *cfg;
    const tc__kernel_ctx *kc;
} gemm_call;

static void run_gemm(void *arg) {
    const gemm_call *g = arg;
    tc__gemm_f32_run(g->p, g->cfg, g->kc);
}

/* One run of a tactic. */
typedef struct tactic_call {
    const tc__tactic *t;
    const tc__kernel_ctx *kc;
} tactic_call;

static void run_tactic(void *arg) {
    const tactic_call *c = arg;
    c->t->run(c->kc);
}

/*
 * The median GFLOP/s of tactic t on step d, as the engine runs it: constant input `packed` is packed
 * at "build" (into dst, of the source's size), scratch is sized by the tactic. 0 when t does not take d.
 */
static double time_tactic(const tc__tactic *t, const tc__step_desc *d, int packed, void *dst, tc__pool_t pool,
                          double flops, int reps) {
    tc__err err = {0};
    if (!t->supports(d) || t->pack(d, packed, d->in[packed]->data, dst, &err) != TC_STATUS_OK) return 0.0;
    tc__tensor packed_t = *d->in[packed];
    packed_t.data = dst;
    const tc__tensor *in_run[8];
    for (int i = 0; i < d->n_in && i < 8; i++) in_run[i] = i == packed ? &packed_t : d->in[i];
    const size_t bytes = t->scratch_bytes(d);
    tc__scratch scratch = {aligned_alloc(64, (bytes + 63) / 64 * 64), bytes, 0};
    tc__tensor *outs_run[1] = {(tc__tensor *)d->out[0]};
    tc__kernel_ctx kc = {.op_type = d->op_type,
                         .opset = d->opset,
                         .attrs = d->attrs,
                         .n_in = d->n_in,
                         .in = in_run,
                         .n_out = 1,
                         .out = outs_run,
                         .err = &err,
                         .scratch = &scratch,
                         .epi = d->epi,
                         .bias = d->bias,
                         .exec = pool};
    tactic_call call = {t, &kc};
    const double g = time_gflops(run_tactic, &call, flops, reps);
    free(scratch.base);
    return g;
}

static void bench_gemm(const tc__gemm_config *cfg, const shape *s, tc__pool_t pool, int reps) {
    float *a = rand_floats(s->m * s->k, 11), *b = rand_floats(s->k * s->n, 12), *c = rand_floats(s->m * s->n, 13);
    float *bias = rand_floats(s->m > s->n ? s->m : s->n, 14);
    tc__gemm_f32_problem p = tc__gemm_f32_problem_init(s->m, s->n, s->k);
    float *ap = a, *bp = b;
    if (s->a_packed) {
        ap = rand_floats(s->m * s->k, 15);
        tc__gemm_pack_a_f32(s->m, s->k, cfg->mr, a, s->k, 1, ap);
    }
    if (s->b_packed) {
        bp = rand_floats(s->k * s->n, 16);
        tc__gemm_pack_b_f32(s->k, s->n, cfg->nr, b, s->n, 1, bp);
    }
    p.a = ap;
    p.a_packed = s->a_packed;
    p.b = bp;
    p.b_packed = s->b_packed;
    p.c = c;
    if (s->a_packed)
        p.epi.bias_m = bias; /* conv: per-channel bias + ReLU */
    else
        p.epi.bias_n = bias;
    p.epi.act = TC__ACT_RELU;
    const size_t bytes = tc__gemm_f32_scratch_bytes(&p, cfg, 2);
    tc__scratch scratch = {aligned_alloc(64, (bytes + 63) / 64 * 64), bytes, 0};
    tc__err err = {0};
    tc__kernel_ctx kc = {.err = &err, .scratch = &scratch, .exec = pool};
    gemm_call call = {&p, cfg, &kc};
    const double gflops = time_gflops(run_gemm, &call, 2.0 * (double)s->m * (double)s->n * (double)s->k, reps);
    printf("  %-28s M=%4zu N=%4zu K=%4zu  %zu thread%s  %7.1f GFLOP/s\n", s->what, s->m, s->n, s->k,
           pool ? tc__pool_get_threads_count(pool) : 1, pool ? "s" : " ", gflops);
    if (s->a_packed) free(ap);
    if (s->b_packed) free(bp);
    free(scratch.base);
    free(a);
    free(b);
    free(c);
    free(bias);
}

/* One BF16 GEMM call: activations x packed weights, bias + ReLU fused. */
typedef struct bf16_call {
    size_t m, n, k;
    const float *a, *bias;
    const uint16_t *packed_b;
    float *c;
    void *scratch;
} bf16_call;

static void run_bf16(void *arg) {
    const bf16_call *b = arg;
    tc__gemm_bf16_run(b->m, b->n, b->k, b->a, b->k, b->packed_b, b->c, b->n, b->bias, true, b->scratch);
}

/* The BF16 GEMM (one thread) at shape s: weights packed once, activations converted per call. */
static void bench_gemm_bf16(const shape *s, int reps) {
    float *a = rand_floats(s->m * s->k, 11), *b = rand_floats(s->k * s->n, 12), *c = rand_floats(s->m * s->n, 13);
    float *bias = rand_floats(s->n, 14);
    const size_t pb_bytes = tc__gemm_bf16_packed_b_size(s->k, s->n) * sizeof(uint16_t);
    const size_t scratch_bytes = tc__gemm_bf16_scratch_bytes(s->m, s->k);
    uint16_t *pb = aligned_alloc(64, (pb_bytes + 63) / 64 * 64);
    void *scratch = aligned_alloc(64, (scratch_bytes + 63) / 64 * 64);
    tc__gemm_bf16_pack_b(s->k, s->n, b, s->n, pb);
    bf16_call call = {s->m, s->n, s->k, a, bias, pb, c, scratch};
    const double g = time_gflops(run_bf16, &call, 2.0 * (double)s->m * (double)s->n * (double)s->k, reps);
    printf("  %-28s M=%4zu N=%4zu K=%4zu  1 thread   %7.1f GFLOP/s\n", s->what, s->m, s->n, s->k, g);
    free(a);
    free(b);
    free(c);
    free(bias);
    free(pb);
    free(scratch);
}

/* BF16 against FP32 14x32, both one thread, activations x packed weights with bias + ReLU. */
static void bench_bf16(int reps) {
    const shape shapes[] = {
        {"bert qkv/out proj", 128, 768, 768, false, true},
        {"bert ffn up", 128, 3072, 768, false, true},
        {"resnet50 conv3x3 56x56 (nhwc)", 3136, 64, 576, false, true},
        {"resnet50 conv3x3 14x14 (nhwc)", 196, 256, 2304, false, true},
        {"bert ffn down, 8 tokens", 8, 768, 3072, false, true}, /* weight bandwidth bound */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        printf("%s:\n", tc__gemm_config_f32_avx512.name);
        bench_gemm(&tc__gemm_config_f32_avx512, &shapes[i], NULL, reps);
        printf("gemm_bf16_avx512bf16_14x32:\n");
        bench_gemm_bf16(&shapes[i], reps);
    }
}

/* A Conv tactic end to end (weights packed as at build), NCHW batch 1, with bias + ReLU fused. */
typedef struct conv_shape {
    const char *what;
    int64_t cin, cout, hw, k, stride;
} conv_shape;

static void bench_conv(const tc__tactic *t, const conv_shape *s, tc__pool_t pool, int reps) {
    const int64_t pad = s->k / 2, ohw = (s->hw + 2 * pad - s->k) / s->stride + 1;
    tc__tensor x = {.dtype = TC_DTYPE_FLOAT32, .rank = 4, .dims = {1, s->cin, s->hw, s->hw}};
    tc__tensor w = {.dtype = TC_DTYPE_FLOAT32, .rank = 4, .dims = {s->cout, s->cin, s->k, s->k}};
    tc__tensor b = {.dtype = TC_DTYPE_FLOAT32, .rank = 1, .dims = {s->cout}};
    tc__tensor y = {.dtype = TC_DTYPE_FLOAT32, .rank = 4, .dims = {1, s->cout, ohw, ohw}};
    const size_t xn = (size_t)(s->cin * s->hw * s->hw), wn = (size_t)(s->cout * s->cin * s->k * s->k);
    x.data = rand_floats(xn, 21);
    w.data = rand_floats(wn, 22);
    b.data = rand_floats((size_t)s->cout, 23);
    y.data = rand_floats((size_t)(s->cout * ohw * ohw), 24);
    float *wp = rand_floats(wn, 25);
    const int64_t pads[4] = {pad, pad, pad, pad}, strides[2] = {s->stride, s->stride};
    tc__attr attrs[2] = {{.name = "pads", .kind = TC__ATTR_INTS, .n = 4, .ints = pads},
                         {.name = "strides", .kind = TC__ATTR_INTS, .n = 2, .ints = strides}};
    tc__attrs as = {2, attrs};
    const tc__tensor *in[3] = {&x, &w, &b};
    const bool in_const[3] = {false, true, true};
    const tc__tensor *outs[1] = {&y};
    tc__epilogue epi = tc__epilogue_none();
    epi.act = TC__ACT_RELU;
    tc__step_desc d = {.op_type = "Conv",
                       .opset = 13,
                       .attrs = &as,
                       .n_in = 3,
                       .in = in,
                       .in_const = in_const,
                       .n_out = 1,
                       .out = outs,
                       .epi = &epi};
    const double flops = 2.0 * (double)(s->cout * ohw * ohw) * (double)(s->cin * s->k * s->k);
    const double g = time_tactic(t, &d, 1, wp, pool, flops, reps);
    if (g == 0.0)
        printf("  %s does not take %s\n", t->name, s->what);
    else
        printf("  %-24s %-26s %zu thread%s  %7.1f GFLOP/s\n", t->name, s->what,
               pool ? tc__pool_get_threads_count(pool) : 1, pool ? "s" : " ", g);
    free(x.data);
    free(w.data);
    free(b.data);
    free(y.data);
    free(wp);
}

/* A MatMul tactic end to end: A [1, M, K] x constant B [K, N] packed as at build, bias (and act) fused. */
typedef struct matmul_shape {
    const char *what;
    int64_t m, n, k;
    tc__act act;
} matmul_shape;

static void bench_matmul(const tc__tactic *t, const matmul_shape *s, tc__pool_t pool, int reps) {
    tc__tensor a = {.dtype = TC_DTYPE_FLOAT32, .rank = 3, .dims = {1, s->m, s->k}};
    tc__tensor b = {.dtype = TC_DTYPE_FLOAT32, .rank = 2, .dims = {s->k, s->n}};
    tc__tensor bias = {.dtype = TC_DTYPE_FLOAT32, .rank = 1, .dims = {s->n}};
    tc__tensor y = {.dtype = TC_DTYPE_FLOAT32, .rank = 3, .dims = {1, s->m, s->n}};
    const size_t bn = (size_t)(s->k * s->n);
    a.data = rand_floats((size_t)(s->m * s->k), 31);
    b.data = rand_floats(bn, 32);
    bias.data = rand_floats((size_t)s->n, 33);
    y.data = rand_floats((size_t)(s->m * s->n), 34);
    float *bp = rand_floats(bn, 35);
    const tc__tensor *in[2] = {&a, &b};
    const bool in_const[2] = {false, true};
    const tc__tensor *outs[1] = {&y};
    tc__epilogue epi = tc__epilogue_none();
    epi.bias_input = 2;
    epi.act = (uint8_t)s->act;
    tc__attrs as = {0, NULL};
    tc__step_desc d = {.op_type = "MatMul",
                       .opset = 13,
                       .attrs = &as,
                       .n_in = 2,
                       .in = in,
                       .in_const = in_const,
                       .n_out = 1,
                       .out = outs,
                       .epi = &epi,
                       .bias = &bias};
    const double g = time_tactic(t, &d, 1, bp, pool, 2.0 * (double)s->m * (double)s->n * (double)s->k, reps);
    if (g == 0.0)
        printf("  %s does not take %s\n", t->name, s->what);
    else
        printf("  %-24s %-18s M=%4lld N=%4lld K=%4lld  %zu thread%s  %7.1f GFLOP/s\n", t->name, s->what,
               (long long)s->m, (long long)s->n, (long long)s->k, pool ? tc__pool_get_threads_count(pool) : 1,
               pool ? "s" : " ", g);
    free(a.data);
    free(b.data);
    free(bias.data);
    free(y.data);
    free(bp);
}

int main(int argc, char **argv) {
    int reps = 11, threads = 0; /* 0: both 1 and 2 */
    const char *only = "";
    const tc__gemm_config *cfg = tc__gemm_f32_config_auto();
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--isa") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            cfg = strcmp(v, "avx2") == 0          ? &tc__gemm_config_f32_avx2
                  : strcmp(v, "scalar") == 0      ? &tc__gemm_config_f32_scalar
                  : strcmp(v, "avx512_8x48") == 0 ? &tc__gemm_config_f32_avx512_8x48
                                                  : &tc__gemm_config_f32_avx512;
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = atoi(argv[++i]);
        } else {
            fprintf(stderr,
                    "usage: %s [--reps N] [--isa avx512|avx512_8x48|avx2|scalar] [--only peak|vnni|avx2peak|gemm|conv|matmul|bf16] "
                    "[--threads 1|2]\n",
                    argv[0]);
            return 2;
        }
    }
    if (reps < 1) reps = 1;
    if (reps > 64) reps = 64;
    const tc__cpu *cpu = tc__cpu_get();
    if ((cfg->isa & ~cpu->isa) != 0) {
        fprintf(stderr, "%s needs ISA bits this CPU (or TAILCUT_MAX_ISA) does not allow\n", cfg->name);
        return 1;
    }
    printf("CPU: %s; L1d %u KiB, L2 %u KiB; %d logical CPUs\n", cpu->brand, cpu->l1d_bytes / 1024, cpu->l2_bytes / 1024,
           cpu->logical_cpus);
    const bool all = only[0] == '\0';
    if (all || strcmp(only, "peak") == 0) {
        bench_peak(reps);
        bench_ukernel(cfg, reps);
    }
    if (all || strcmp(only, "vnni") == 0) bench_peak_vnni(reps);
    if (all || strcmp(only, "avx2peak") == 0) bench_peak_avx2(reps);
    const shape shapes[] = {
        {"resnet50 conv3x3 (im2col)", 64, 3136, 576, true, false},
        {"resnet50 conv1x1 expand", 256, 3136, 64, true, false},
        {"resnet50 conv1x1 reduce", 64, 3136, 256, true, false},
        {"resnet50 conv3x3 stage4", 512, 196, 4608, true, false},
        {"resnet50 fc", 1, 1000, 2048, false, true},
        {"bert qkv/out proj", 128, 768, 768, false, true},
        {"bert fused qkv proj", 128, 2304, 768, false, true},
        {"bert ffn up", 128, 3072, 768, false, true},
        {"bert ffn down", 128, 768, 3072, false, true},
    };
    tc__pool_t pool = tc__pool_create(2);
    const bool one = threads != 2, two = threads != 1;
    if (all || strcmp(only, "gemm") == 0) {
        printf("GEMM %s (conv: weights packed x activations packed per tile; bert: activations x packed weights; "
               "bias + ReLU fused):\n",
               cfg->name);
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            if (one) bench_gemm(cfg, &shapes[i], NULL, reps);
            if (two) bench_gemm(cfg, &shapes[i], pool, reps);
        }
    }
    if (cfg == &tc__gemm_config_f32_avx512 && (all || strcmp(only, "conv") == 0)) {
        const conv_shape convs[] = {
            {"3x3 64->64 56x56", 64, 64, 56, 3, 1},   {"1x1 64->256 56x56", 64, 256, 56, 1, 1},
            {"1x1 256->64 56x56", 256, 64, 56, 1, 1}, {"3x3 128->128 28x28", 128, 128, 28, 3, 1},
            {"3x3 512->512 7x7", 512, 512, 7, 3, 1},  {"7x7/2 3->64 224x224", 3, 64, 224, 7, 2},
        };
        printf("Conv tactics end to end (NCHW, batch 1, bias + ReLU):\n");
        for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++) {
            const tc__tactic *t = convs[i].k == 1 ? &tc__tactic_conv1x1_f32_avx512 : &tc__tactic_conv_im2col_f32_avx512;
            if (one) bench_conv(t, &convs[i], NULL, reps);
            if (two) bench_conv(t, &convs[i], pool, reps);
        }
    }
    if ((cpu->isa & TC__GEMM_ISA_AVX512) == TC__GEMM_ISA_AVX512 && (all || strcmp(only, "matmul") == 0)) {
        const matmul_shape mms[] = {
            {"qkv/out proj", 128, 768, 768, TC__ACT_NONE},
            {"fused qkv proj", 128, 2304, 768, TC__ACT_NONE},
            {"ffn up + gelu", 128, 3072, 768, TC__ACT_GELU_ERF},
            {"ffn down", 128, 768, 3072, TC__ACT_NONE},
        };
        const tc__tactic *const tactics[] = {&tc__tactic_matmul_f32_avx512, &tc__tactic_matmul_f32_avx512_8x48};
        printf("MatMul tactics end to end (BERT-base, 128 tokens, packed B, bias fused), 14x32 vs 8x48:\n");
        for (size_t i = 0; i < sizeof mms / sizeof mms[0]; i++)
            for (size_t ti = 0; ti < sizeof tactics / sizeof tactics[0]; ti++) {
                if (one) bench_matmul(tactics[ti], &mms[i], NULL, reps);
                if (two) bench_matmul(tactics[ti], &mms[i], pool, reps);
            }
    }
    if (all || strcmp(only, "bf16") == 0) {
        if ((TC__GEMM_BF16_ISA & ~cpu->isa) == 0) {
            printf("BF16 GEMM (FP32 accumulation) vs FP32, one thread, activations x packed weights, bias + ReLU:\n");
            bench_bf16(reps);
        } else {
            printf("bf16: no AVX512-BF16 on this CPU (or TAILCUT_MAX_ISA)\n");
        }
    }
    tc__pool_destroy(pool);
    return 0;
}
