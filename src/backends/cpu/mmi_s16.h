/*
 * mmi_s16.h - MatMulInteger on 16-bit lanes (AVX2 vpmaddwd): Y[M x N] (int32) = (A - za) x (B - zb[col]) with A and B
 * uint8 or int8 bytes, exact. Both operands are shifted by their zero points into int16 (|v| <= 255) and laid out in
 * pairs along K so that one vpmaddwd multiplies two K steps of 8 columns and adds them into int32 lanes:
 *   B pairs  int16 [ceil(K/2)][N][2]     (b[2p][j] - zb[j], b[2p+1][j] - zb[j]; 0 past K)
 *   A pairs  int32 [M][ceil(K/2)]        (a[i][2p] - za in the low half, a[i][2p+1] - za in the high half)
 * Sums stay below 2^31 for K <= 32768 (255 * 255 * K), which the tactic checks. The tactic (mmi_s16_tactic.c) packs
 * B per run (it may be computed) and threads over blocks of rows.
 */
#ifndef TC_BACKENDS_CPU_MMI_S16_H
#define TC_BACKENDS_CPU_MMI_S16_H

#include <stdbool.h>
#include <stdint.h>

/* The largest K whose sums cannot overflow int32. */
#define TC__MMI_MAX_K 32768

/* Rows [r0, r1) of Y (row stride n) from the A pairs (row stride kp) and the B pairs. */
void tc__mmi_s16_rows_avx2(const int32_t *apairs, const int16_t *bpairs, int32_t *y, int64_t r0, int64_t r1,
                           int64_t kp, int64_t n);

#endif
