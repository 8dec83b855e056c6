/*
 * mmi_s16.h - MatMulInteger on 16-bit lanes (AVX2 vpmaddwd): Y[M x N] (int32) = (A - za) x (B - zb[col]) with A and B
 * uint8 or int8 bytes, exact. The tactic (mmi_s16_tactic.c) lays the operands out per run (scratch):
 *   A pairs  int32 [M][kp]               kp = ceil(K/2); a[i][2p] - za in the low half, a[i][2p+1] - za (0 past K)
 *                                        in the high half
 *   B bytes  uint8 [NB / W][kp][W][2]    W = 8 (AVX2) or 16 (AVX-512) columns a block, NB = N rounded up to W;
 *                                        b[2p][j], b[2p+1][j] as stored (0 past K or N)
 *   B zero   int16 [NB][2]               zb[j] twice
 * The kernel widens W columns x 2 K steps of B to int16, subtracts their zero points and multiplies them with a
 * broadcast A pair by vpmaddwd into W int32 lanes. |a - za|, |b - zb| <= 255: sums stay below 2^31 for K <= 32768.
 */
#ifndef TC_BACKENDS_CPU_MMI_S16_H
#define TC_BACKENDS_CPU_MMI_S16_H

#include <stdbool.h>
#include <stdint.h>

/* The largest K whose sums cannot overflow int32. */
#define TC__MMI_MAX_K 32768

/* Rows [r0, r1) of Y (row stride n) from the layouts above; b_signed: B's bytes are int8. */
typedef void (*tc__mmi_rows_fn)(const int32_t *apairs, const uint8_t *bblk, const int16_t *bzero, bool b_signed,
                                int32_t *y, int64_t r0, int64_t r1, int64_t kp, int64_t n);
void tc__mmi_s16_rows_avx2(const int32_t *apairs, const uint8_t *bblk, const int16_t *bzero, bool b_signed, int32_t *y,
                           int64_t r0, int64_t r1, int64_t kp, int64_t n); /* W = 8 */
void tc__mmi_s16_rows_avx512(const int32_t *apairs, const uint8_t *bblk, const int16_t *bzero, bool b_signed,
                             int32_t *y, int64_t r0, int64_t r1, int64_t kp, int64_t n); /* W = 16 */

#endif
