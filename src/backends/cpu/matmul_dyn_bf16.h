/*
 * matmul_dyn_bf16.h - MatMul with both operands at run time (attention's Q.K^T and P.V) in BF16 with FP32 sums on
 * AVX512-BF16 (vdpbf16ps): the interface between the tactic (matmul_dyn_bf16_tactic.c: which steps, scratch) and
 * the kernel (matmul_dyn_bf16_avx512bf16.c).
 *
 * Per batch matrix, B (K x N, through any strides: V's rows, or K^T's columns) is converted and packed into blocks
 * of 16 columns, K in pairs (pair p of column j in lane j of the block's 32-bit word p, an odd K's last pair padded
 * with 0), and each strip of rows of A into BF16 rows of K rounded up to even; tiles of up to 6 rows x 4 blocks
 * accumulate in zmm registers and store alpha * sum to C. Conversions round to nearest even (vcvtne2ps2bf16, whose
 * denormal inputs become 0).
 */
#ifndef TC_BACKENDS_CPU_MATMUL_DYN_BF16_H
#define TC_BACKENDS_CPU_MATMUL_DYN_BF16_H

#include <stddef.h>

#include "backends/cpu/matmul_geom.h"
#include "backends/epilogue.h"
#include "backends/kernel.h"

#define TC__MMB_STRIP 48 /* rows of A per task */

/* Scratch bytes of one thread's slot: a strip of A and a packed B, 64-byte aligned each. */
size_t tc__mmb_slot_bytes(const tc__mm_geom *g);

/* Y = alpha A.B on ctx's pool with slots threads' scratch at scratch (slots * tc__mmb_slot_bytes(g) bytes). */
void tc__mmb_run_avx512bf16(const tc__mm_geom *g, const float *a, const float *b, float *y, void *pool, size_t slots,
                            unsigned char *scratch);

#endif
