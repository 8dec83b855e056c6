/*
 * gemm.h - FP32 GEMM for the CPU backend, layered like XNNPACK:
 *
 *   microkernels  gemm_f32_<isa>_<MR>x<NR>: one register tile C[mr x nr] (+)= A[mr x kc] * B[kc x nr],
 *                 then the fused epilogue while the tile is in registers;
 *   packing       pack.c: constant operands into MR-row / NR-column panels (a permutation of the
 *                 same byte size), runtime B tiles into scratch;
 *   operator      gemm.c: cache blocking (KC, MC, NC from the cache sizes), batching with
 *                 broadcast strides, threading over M and N blocks with the thread pool.
 *
 * Results never depend on the thread count: each element of C is computed by one thread, with
 * the same K blocking and summation order, whatever the split over M and N.
 * Pointers passed in are borrowed for the duration of the call; nothing is kept.
 */
#ifndef TC_BACKENDS_CPU_GEMM_H
#define TC_BACKENDS_CPU_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/epilogue.h"
#include "backends/kernel.h"
#include "core/cpu.h"

/*
 * The epilogue of a GEMM, applied to every element (i, j) of C once the whole sum over K is known:
 *   C[i, j] = act(alpha * sum + bias_m[i] + bias_n[j] + res_scale * res[i * ld_res + j])
 * Absent terms are NULL. i and j are absolute row and column indices of the (batch) matrix.
 */
typedef struct tc__gemm_epi {
    float alpha;
    const float *bias_m; /* per-row bias (M values), or NULL */
    const float *bias_n; /* per-column bias (N values), or NULL */
    const float *res;    /* residual with C's shape and row stride ld_res, or NULL */
    size_t ld_res;
    float res_scale;
    uint8_t act; /* tc__act */
    float act_alpha, act_beta;
} tc__gemm_epi;

/* True for the activations microkernels apply as a clamp in registers (None, Relu, Clip); the
 * others are applied by the ISA's row function (tc__gemm_act_f32_*) on the stored tile. */
static inline bool tc__gemm_act_is_clamp(uint8_t act) {
    return act == TC__ACT_NONE || act == TC__ACT_RELU || act == TC__ACT_CLIP;
}

/*
 * One microkernel call. A(i, k) = a[i * rs_a + k * cs_a]; B(k, j) = b[k * rs_b + j] (columns are
 * contiguous: a packed panel, or a row-major matrix); C(i, j) = c[i * ldc + j].
 * 1 <= mr <= MR, 1 <= nr <= NR, kc >= 0. Loads and stores are masked to nr columns.
 */
typedef struct tc__gemm_tile {
    size_t mr, nr, kc;
    const float *a;
    size_t rs_a, cs_a;
    const float *b;
    size_t rs_b;
    float *c;
    size_t ldc;
    bool load_c;             /* start from C's values (a later K block) instead of zero */
    const tc__gemm_epi *epi; /* the last K block: apply it; NULL: store the plain sums */
    size_t i0, j0;           /* the tile's first row and column, for the epilogue's vectors */
} tc__gemm_tile;

typedef void (*tc__gemm_ukernel_fn)(const tc__gemm_tile *t);

/* Microkernels (files of the same names). */
void tc__gemm_f32_avx512_14x32(const tc__gemm_tile *t);
void tc__gemm_f32_avx512_8x48(const tc__gemm_tile *t);
void tc__gemm_f32_avx2_6x16(const tc__gemm_tile *t);
void tc__gemm_f32_scalar_4x8(const tc__gemm_tile *t);

/* Activations (not the clamp ones) in place on rows [0, m) x columns [0, n) of c, as tc__act_eval. */
void tc__gemm_act_f32_avx512(float *c, size_t ldc, size_t m, size_t n, const tc__gemm_epi *e);
void tc__gemm_act_f32_avx2(float *c, size_t ldc, size_t m, size_t n, const tc__gemm_epi *e);
void tc__gemm_act_f32_scalar(float *c, size_t ldc, size_t m, size_t n, const tc__gemm_epi *e);

/* ISA bits the AVX2 and AVX-512 microkernels need. */
#define TC__GEMM_ISA_AVX2 ((uint64_t)(TC__ISA_AVX | TC__ISA_AVX2 | TC__ISA_FMA))
#define TC__GEMM_ISA_AVX512                                                                                            \
    (TC__GEMM_ISA_AVX2 | (uint64_t)(TC__ISA_AVX512F | TC__ISA_AVX512BW | TC__ISA_AVX512VL | TC__ISA_AVX512DQ))

/* A microkernel with its tile and the ISA it needs. */
typedef struct tc__gemm_config {
    const char *name; /* "gemm_f32_avx512_14x32" */
    uint64_t isa;     /* TC__ISA_* bits */
    size_t mr, nr;
    tc__gemm_ukernel_fn ukernel;
} tc__gemm_config;

extern const tc__gemm_config tc__gemm_config_f32_avx512;
/* A second AVX-512 tile that fits M = 128 and N = 768 / 3072 (BERT) exactly; only tactics that name
 * it use it (the tuner times them against the 14x32 ones); never the automatic choice. */
extern const tc__gemm_config tc__gemm_config_f32_avx512_8x48;
extern const tc__gemm_config tc__gemm_config_f32_avx2;
extern const tc__gemm_config tc__gemm_config_f32_scalar;

/* The best configuration usable with ISA bits isa (the scalar one at least); never NULL.
 * tc__gemm_f32_config_auto() uses tc__cpu_get()->isa, so TAILCUT_MAX_ISA caps it. */
const tc__gemm_config *tc__gemm_f32_config(uint64_t isa);
const tc__gemm_config *tc__gemm_f32_config_auto(void);

/* ---- packing (pack.c) ------------------------------------------------------------------ */

/*
 * B (k x n, B(p, j) = src[p * rs + j * cs]) into NR-column panels: panel q holds columns
 * [q * nr, q * nr + w), w = min(nr, n - q * nr), at dst + q * nr * k, k-major: dst[p * w + jj].
 * The last panel is narrower (no padding): dst has exactly k * n floats.
 */
void tc__gemm_pack_b_f32(size_t k, size_t n, size_t nr, const float *src, size_t rs, size_t cs, float *dst);
/*
 * A (m x k, A(i, p) = src[i * rs + p * cs]) into MR-row panels: panel r holds rows [r * mr, r * mr + h),
 * h = min(mr, m - r * mr), at dst + r * mr * k, k-major: dst[p * h + ii]. dst has exactly m * k floats.
 */
void tc__gemm_pack_a_f32(size_t m, size_t k, size_t mr, const float *src, size_t rs, size_t cs, float *dst);

/* ---- operator (gemm.c) ----------------------------------------------------------------- */

#define TC__GEMM_MAX_BATCH_DIMS (TC_MAX_RANK)

/*
 * Builds the B tile rows [k0, k0 + kc) x columns [j0, j0 + nc) of batch matrix `batch` (flat index)
 * into dst in the panel layout of tc__gemm_pack_b_f32 (panel width nr). Used for im2col.
 */
typedef void (*tc__gemm_pack_b_fn)(const void *ctx, size_t batch, size_t k0, size_t kc, size_t j0, size_t nc, size_t nr,
                                   float *dst);

/*
 * A batch of C[m x n] = A[m x k] * B[k x n] with the epilogue. Batch matrix t (flat, row-major over
 * bdims) uses offsets sum_d idx_d * stride_d (in floats; 0 broadcasts) for each operand. C must not
 * overlap A, B or the epilogue operands.
 */
typedef struct tc__gemm_f32_problem {
    size_t m, n, k;
    const float *a;
    size_t rs_a, cs_a; /* ignored when a_packed */
    bool a_packed;     /* each A matrix is in the config's MR-row panels (tc__gemm_pack_a_f32) */
    const float *b;
    size_t rs_b, cs_b;         /* ignored when b_packed or pack_b */
    bool b_packed;             /* each B matrix is in the config's NR-column panels (tc__gemm_pack_b_f32) */
    tc__gemm_pack_b_fn pack_b; /* or NULL: B tiles come from this function (b is then unused) */
    const void *pack_b_ctx;
    float *c;
    size_t ldc;
    tc__gemm_epi epi; /* base pointers of batch matrix 0 */
    int nb;           /* batch dims (0: one matrix) */
    size_t bdims[TC__GEMM_MAX_BATCH_DIMS];
    size_t a_bs[TC__GEMM_MAX_BATCH_DIMS], b_bs[TC__GEMM_MAX_BATCH_DIMS], c_bs[TC__GEMM_MAX_BATCH_DIMS];
    size_t res_bs[TC__GEMM_MAX_BATCH_DIMS], bias_m_bs[TC__GEMM_MAX_BATCH_DIMS], bias_n_bs[TC__GEMM_MAX_BATCH_DIMS];
    /* The blocking a tuner chose (a tactic's configuration, tc__gemm_blocking): the cache-derived caps of MC and NC
     * divided by 2^mc_shift and 2^nc_shift (0, 0: as the cache sizes give). KC and each element's order over K never
     * change, so neither do the results; the scratch bound holds for any shift. */
    uint8_t mc_shift, nc_shift;
} tc__gemm_f32_problem;

/* A GEMM tactic's configuration (tc__tactic.config_bytes = 4): the shifts above, reserved bytes zero. */
typedef struct tc__gemm_blocking {
    uint8_t mc_shift, nc_shift, reserved[2];
} tc__gemm_blocking;
#define TC__GEMM_MAX_SHIFT 3

/* The blockings worth timing for problem p (only m, n, k and the config matter): the default (0, 0) first, then those
 * that give other single-thread blocks; at most cap into out, returns the count (>= 1). */
int tc__gemm_f32_blockings(const tc__gemm_f32_problem *p, const tc__gemm_config *cfg, tc__gemm_blocking *out, int cap);
/* True for a blocking read from a plan that tc__gemm_f32_run may take; else why in err. */
bool tc__gemm_blocking_check(const void *config, tc__err *err);
/* Sets p's shifts from a configuration (NULL: the default). */
void tc__gemm_blocking_apply(tc__gemm_f32_problem *p, const void *config);

/* A problem for one plain matrix product with no epilogue (alpha 1), to fill in further. */
tc__gemm_f32_problem tc__gemm_f32_problem_init(size_t m, size_t n, size_t k);

/*
 * Scratch bytes tc__gemm_f32_run needs for a problem of these sizes and B kind (only m, n, k,
 * b_packed and pack_b are read) with up to max_threads threads. It grows with m, n and k.
 */
size_t tc__gemm_f32_scratch_bytes(const tc__gemm_f32_problem *p, const tc__gemm_config *cfg, size_t max_threads);

/*
 * Runs the problem with microkernel cfg on ctx->exec (a tc__pool_t, or NULL for the calling
 * thread), taking scratch from ctx (tc__kernel_alloc). With a lent scratch it allocates nothing and
 * uses as many threads as have room in it. Fails only when no scratch is left (OUT_OF_MEMORY).
 */
tc_status tc__gemm_f32_run(const tc__gemm_f32_problem *p, const tc__gemm_config *cfg, const tc__kernel_ctx *ctx);

#endif
