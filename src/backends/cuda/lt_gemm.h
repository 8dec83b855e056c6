/*
 * lt_gemm.h - one FP16 x FP16 -> FP32 GEMM through cuBLASLt (cublaslt.h) for the cuda_*_fp16_lt tactics, in
 * cuBLASLt's column-major terms:
 *   D[m, n] = act(alpha * op(A)[m, k] . op(B)[k, n] + beta * C[m, n] + bias[m])   per batch
 * A and B FP16, C and D FP32 (C of D's layout), or both FP16 (d16: the FP16 row images of engine/row16_chain.c; the
 * bias then FP16 too), FP32 accumulation (CUBLAS_COMPUTE_32F). A row-major [R, S] matrix is
 * a column-major [S, R] one: the tactics map their row-major products onto this (see each tactic).
 *
 * The algorithm is the heuristic's first answer, or the tuner's choice among its answers (tc__lt_algo below).
 * The descriptors and the heuristic query are made on each call and destroyed before it returns: host allocations
 * only (no device memory, no synchronisation), so a call may be captured into a CUDA graph, but it is not free;
 * a cached descriptor per step is for later.
 */
#ifndef TC_BACKENDS_CUDA_LT_GEMM_H
#define TC_BACKENDS_CUDA_LT_GEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/cuda/cuda_exec.h"
#include "core/error.h"

/* The cuBLASLt workspace each tactic reserves at the start of its scratch (cuBLAS's advice for Hopper: 32 MiB). */
#define TC__LT_WORKSPACE ((size_t)32 << 20)
/* Alignment of the buffers the tactics carve from scratch. */
#define TC__LT_ALIGN ((size_t)256)

static inline size_t tc__lt_round(size_t n) { return (n + TC__LT_ALIGN - 1) / TC__LT_ALIGN * TC__LT_ALIGN; }

/*
 * One cuBLASLt algorithm, as the cuda_*_fp16_lt tactics' configuration (tactic.h; the plan stores these bytes): its id
 * and configuration attributes (cublasLtMatmulAlgoConfigAttributes_t), which run() rebuilds with
 * cublasLtMatmulAlgoInit and checks against the call's descriptors with cublasLtMatmulAlgoCheck. set 0 (all fields
 * zero): the heuristic's first answer, the default. An algorithm the library refuses for the call (another cuBLASLt,
 * an FP16 output where the tuner timed FP32, an epilogue it lacks) falls back to the heuristic's first: never wrong,
 * only not the timed one.
 */
typedef struct tc__lt_algo {
    uint32_t set;
    int32_t id;
    uint32_t tile, splitk, reduction, swizzle, custom, stages;
    uint16_t inner_shape, cluster_shape;
} tc__lt_algo;

/* Up to how many of the heuristic's answers a step offers the tuner (the first as set 0, then the rest explicitly). */
#define TC__LT_ALGOS 6

/* Whether a plan's bytes form a tc__lt_algo (set 0 with every field zero, or set 1 with fields in range). */
bool tc__lt_algo_check(const void *config, tc__err *err);

typedef struct tc__lt_gemm {
    int64_t m, n, k;
    int64_t batch;                 /* >= 1; the strides below apply when > 1 (0: the same matrix for every batch) */
    const void *a;                 /* FP16, stored [m, k] column-major (ld lda >= m), or [k, m] when trans_a */
    int64_t lda, stride_a;
    bool trans_a;
    const void *b;                 /* FP16, stored [k, n] (ld ldb >= k), or [n, k] when trans_b */
    int64_t ldb, stride_b;
    bool trans_b;
    const void *c;                 /* NULL: no C (beta ignored); D's type */
    void *d;                       /* FP32 (FP16 when d16) [m, n], ld ldd >= m; C has the same ld and batch stride */
    bool d16;                      /* C and D are FP16 */
    int64_t ldd, stride_d;
    float alpha, beta;
    const void *bias;              /* [m] of D's type (FP32, FP16 when d16) or NULL */
    bool relu;                     /* ReLU after the bias */
    bool gelu;                     /* GELU after the bias instead (cuBLASLt's: the tanh form; not with relu) */
    void *workspace;
    size_t workspace_bytes;
    const tc__lt_algo *algo;       /* NULL or set 0: the heuristic's first answer */
} tc__lt_gemm;

/*
 * Runs g on stream s. When cuBLASLt offers no algorithm with the bias / ReLU epilogue, the product runs with its
 * default epilogue and *epi_done is false: the caller adds the bias and applies the ReLU itself (fp16_lt.h's
 * epilogue pass); otherwise *epi_done is true. Failures name the cuBLASLt call and status.
 */
tc_status tc__lt_gemm_run(const tc__lt_gemm *g, cudaStream_t s, bool *epi_done, tc__err *err);

/*
 * For supports(): whether cuBLASLt is loadable and has an algorithm for these sizes and leading dimensions with the
 * default epilogue, assuming A and B only 16-byte aligned and C and D only 4-byte aligned (pointers are not known at
 * build time; run() asks again with the real ones, which are at least that aligned: an algorithm for less alignment
 * serves more). Writes why not into why (size why_size) when it refuses.
 */
bool tc__lt_gemm_possible(const tc__lt_gemm *g, char *why, size_t why_size);

/* The configurations of a step whose product is g (with the default epilogue, the alignments tc__lt_gemm_possible
 * assumes): set 0 (the heuristic's first), then its next answers (up to cap - 1, at most TC__LT_ALGOS - 1) as
 * explicit algorithms; returns how many it wrote (0 when cuBLASLt has none or is not loadable). */
int tc__lt_gemm_configs(const tc__lt_gemm *g, tc__lt_algo *out, int cap);

#endif

/* ---- shared by the cuda_*_fp16_lt tactics (host side) ------------------------------------------------------- */
#include "backends/tactic.h"
#include "core/quant_attr.h"

/* The packed weight's row length for a reduction of k: k rounded up to 8 halves (16-byte rows, the alignment
 * cuBLASLt's Tensor-Core kernels want), which fits the packing contract (packed bytes <= the FP32 source's) for
 * k >= 4; 0 for k < 4 (the tactics refuse those). */
static inline int64_t tc__lt_kpad(int64_t k) { return k >= 4 ? (k + 7) / 8 * 8 : 0; }

/* The scratch area of a run, 256-byte aligned (the tactics ask for TC__LT_ALIGN bytes more than they use). */
static inline unsigned char *tc__lt_scratch(const tc__kernel_ctx *ctx, size_t need) {
    if (ctx->scratch == NULL || ctx->scratch->base == NULL) return NULL;
    const uintptr_t b = (uintptr_t)ctx->scratch->base, a = (b + TC__LT_ALIGN - 1) / TC__LT_ALIGN * TC__LT_ALIGN;
    return a - b + need <= ctx->scratch->cap ? (unsigned char *)a : NULL;
}

/* Whether step d is one the FP16 tactics may take at all: marked tc.fp16 = 1 by the precision pass, and none of the
 * reduced-precision chain's image attributes (these tactics read and write FP32 tensors). */
static inline bool tc__lt_fp16_marked(const tc__step_desc *d) {
    if (tc__attr_int(d->attrs, TC__ATTR_FP16, 0) != 1)
        return tc__refuse(d, "not marked FP16 by the precision pass (--fp16 not given, or the layer kept FP32)");
    if (tc__attr_has(d->attrs, TC__ATTR_HALF_IN_IMAGE) || tc__attr_has(d->attrs, TC__ATTR_HALF_OUT_IMAGE) ||
        tc__attr_has(d->attrs, TC__ATTR_HALF_RES_IMAGE))
        return tc__refuse(d, "16-bit chain images (CPU tactics' attributes)");
    return true;
}
