/*
 * mmi_s16.h - MatMulInteger on 16-bit lanes (AVX2 vpmaddwd): Y[M x N] (int32) = (A - za) x (B - zb[col]) with A and B
 * uint8 or int8 bytes, exact. The tactic (mmi_s16_tactic.c) lays the operands out per run (scratch):
 *   A pairs  int32 [M][kp]               kp = ceil(K/2); a[i][2p] - za in the low half, a[i][2p+1] - za (0 past K)
 *                                        in the high half
 *   B bytes  uint8 [N8 / 8][kp][8][2]    N8 = N rounded up to 8; b[2p][j], b[2p+1][j] as stored (0 past K or N)
 *   B zero   int16 [N8][2]               zb[j] twice
 * The kernel widens 8 columns x 2 K steps of B to int16, subtracts their zero points and multiplies them with a
 * broadcast A pair by vpmaddwd into 8 int32 lanes. |a - za|, |b - zb| <= 255: sums stay below 2^31 for K <= 32768.
 */
#ifndef TC_BACKENDS_CPU_MMI_S16_H
#define TC_BACKENDS_CPU_MMI_S16_H

#include <stdbool.h>
#include <stdint.h>

/* The largest K whose sums cannot overflow int32. */
#define TC__MMI_MAX_K 32768

/* Rows [r0, r1) of Y (row stride n) from the layouts above; b_signed: B's bytes are int8. */
void tc__mmi_s16_rows_avx2(const int32_t *apairs, const uint8_t *bblk, const int16_t *bzero, bool b_signed, int32_t *y,
                           int64_t r0, int64_t r1, int64_t kp, int64_t n);

#endif
