/*
 * gemm_bf16_avx512bf16.h - BF16 GEMM with FP32 accumulation for CPUs with AVX512-BF16 (vdpbf16ps):
 * C[m x n] (+)= A[m x k] * B[k x n], A and B rounded to bfloat16 (round to nearest even), products
 * summed in FP32. The first building block of BF16 inference: the packing, one microkernel and a
 * single-threaded operator; no tactic uses it yet.
 *
 * vdpbf16ps works on pairs along K: in each 32-bit lane, acc += a.lo * b.lo + a.hi * b.hi. Both
 * packed operands therefore keep K in pairs (an odd K gets a zero pair partner):
 *
 *   packed B  NR-column panels, the last one padded with zero columns to NR. Panel q starts at
 *             element q * NR * 2 * kp (kp = ceil(k / 2)); in it, pair p of column jj is the two
 *             elements at (p * NR + jj) * 2: B(2p, j) then B(2p + 1, j).
 *   packed A  MR-row panels of stride MR (rows of the last panel past m are left unwritten and
 *             never read). Panel r starts at element r * MR * 2 * kp; in it, pair p of row ii is
 *             the two elements at (p * MR + ii) * 2: A(i, 2p) then A(i, 2p + 1).
 *
 * Conversions use vcvtne2ps2bf16, which rounds to nearest even like tc__f32_to_bf16 and keeps
 * NaN a NaN and Inf an Inf, but (unlike tc__f32_to_bf16) always flushes denormal inputs to zero
 * of the same sign; vdpbf16ps does the same with denormal operands. Values that small never
 * change a product sum that is not itself denormal.
 *
 * Every function needs TC__GEMM_BF16_ISA; callers check tc__cpu_get()->isa first.
 */
#ifndef TC_BACKENDS_CPU_GEMM_BF16_AVX512BF16_H
#define TC_BACKENDS_CPU_GEMM_BF16_AVX512BF16_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/cpu/gemm.h"

/* The microkernel's register tile: rows of A and columns of B per call. */
#define TC__GEMM_BF16_MR 14
#define TC__GEMM_BF16_NR 32

/* ISA bits every function of this header needs. */
#define TC__GEMM_BF16_ISA (TC__GEMM_ISA_AVX512 | (uint64_t)TC__ISA_AVX512BF16)

/* Converts n floats to bfloat16 (vcvtne2ps2bf16 rounding, as described above). */
void tc__gemm_bf16_convert(const float *src, size_t n, uint16_t *dst);

/* Elements (uint16_t) of B (k x n) packed by tc__gemm_bf16_pack_b, padding included. */
size_t tc__gemm_bf16_packed_b_size(size_t k, size_t n);
/* B (k x n, B(p, j) = b[p * ldb + j], FP32) into the packed B layout above (done once per weight). */
void tc__gemm_bf16_pack_b(size_t k, size_t n, const float *b, size_t ldb, uint16_t *dst);

/* Elements (uint16_t) of A (m x k) packed by tc__gemm_bf16_pack_a: m rounded up to MR. */
size_t tc__gemm_bf16_packed_a_size(size_t m, size_t k);
/* A (m x k, A(i, p) = a[i * lda + p], FP32) into the packed A layout above. */
void tc__gemm_bf16_pack_a(size_t m, size_t k, const float *a, size_t lda, uint16_t *dst);

/*
 * One microkernel call: C[mr x nr] (+)= A panel * B panel over kp pairs of K, then + bias, then
 * ReLU. a: a packed A panel (pair p of row ii at a + (p * MR + ii) * 2); b: a packed B panel at its
 * first pair of this call (pair p of column jj at b + (p * NR + jj) * 2; all NR columns are read,
 * so they must exist, as in a packed B). 1 <= mr <= MR, 1 <= nr <= NR, kp >= 0; C is read (when
 * load_c) and written on nr columns only.
 */
typedef struct tc__gemm_bf16_tile {
    size_t mr, nr, kp;
    const uint16_t *a;
    const uint16_t *b;
    float *c;
    size_t ldc;
    bool load_c;       /* start from C (accumulate: beta 1) instead of zero (beta 0) */
    const float *bias; /* per-column bias of the tile's first column (nr values), or NULL */
    bool relu;         /* max(x, 0) last (NaN becomes 0) */
} tc__gemm_bf16_tile;

void tc__gemm_bf16_avx512bf16_14x32(const tc__gemm_bf16_tile *t);

/* Bytes of scratch tc__gemm_bf16_run needs for m x k activations (64-byte aligned is best). */
size_t tc__gemm_bf16_scratch_bytes(size_t m, size_t k);

/*
 * C[m x n] = relu?(A[m x k] * B + bias) on the calling thread. a: FP32, row-major with row stride
 * lda; packed_b: B packed by tc__gemm_bf16_pack_b(k, n, ...); c: row stride ldc; bias: n values or
 * NULL. K is blocked so a B panel stays in L1; each block of A rows is converted into scratch
 * (tc__gemm_bf16_scratch_bytes(m, k) bytes) once per K block. C must not overlap A, B or bias.
 */
void tc__gemm_bf16_run(size_t m, size_t n, size_t k, const float *a, size_t lda, const uint16_t *packed_b, float *c,
                       size_t ldc, const float *bias, bool relu, void *scratch);

#endif
