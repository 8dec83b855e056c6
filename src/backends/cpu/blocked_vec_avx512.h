/*
 * blocked_vec_avx512.h - the vector vocabulary of the blocked-layout kernel bodies (*_nchwc_f32_kernel.h)
 * for AVX-512: one zmm vector of 16 floats is one pixel of an NCHW16c block. Include only from files
 * compiled for AVX-512 (*_avx512.c), before the body.
 */
#ifndef TC_BACKENDS_CPU_BLOCKED_VEC_AVX512_H
#define TC_BACKENDS_CPU_BLOCKED_VEC_AVX512_H

#include <immintrin.h>
#include <math.h>

#include "backends/cpu/vact_f32_avx512.h"

#define BV_L 16
#define BV_V __m512
#define BV_LOADU _mm512_loadu_ps
#define BV_STOREU _mm512_storeu_ps
#define BV_FMADD _mm512_fmadd_ps
#define BV_SET1 _mm512_set1_ps
#define BV_ZERO _mm512_setzero_ps
#define BV_ADD _mm512_add_ps
#define BV_SUB _mm512_sub_ps
#define BV_MUL _mm512_mul_ps
#define BV_DIV _mm512_div_ps
#define BV_MAX _mm512_max_ps
#define BV_MIN _mm512_min_ps
#define BV_VACT tc__vact_f32_avx512
/* Accumulators a convolution microkernel may hold: 28 of the 32 registers. */
#define BV_MAX_ACC 28

/* Lane masks (MaxPool's NaN rule): a set of lanes, the lanes that hold a number, a == b, any set, a & ~b... */
#define BV_MASK __mmask16
#define BV_MASK_NONE ((__mmask16)0)
#define BV_MASK_ORDERED(v) _mm512_cmp_ps_mask((v), (v), _CMP_ORD_Q)
#define BV_MASK_EQ(a, b) _mm512_cmp_ps_mask((a), (b), _CMP_EQ_OQ)
#define BV_MASK_OR(a, b) ((__mmask16)((a) | (b)))
#define BV_MASK_ANY(m) ((m) != 0)
/* The lanes of m that are not in n. */
#define BV_MASK_ANDNOT(n, m) ((__mmask16)((m) & (__mmask16)~(n)))
/* v with NaN in the lanes of m. */
#define BV_MASK_SET_NAN(v, m) _mm512_mask_mov_ps((v), (m), _mm512_set1_ps(NAN))

#endif
