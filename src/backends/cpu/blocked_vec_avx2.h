/*
 * blocked_vec_avx2.h - the vector vocabulary of the blocked-layout kernel bodies (*_nchwc_f32_kernel.h)
 * for AVX2: one ymm vector of 8 floats is one pixel of an NCHW8c block. Include only from files
 * compiled for AVX2 (*_avx2.c), before the body.
 */
#ifndef TC_BACKENDS_CPU_BLOCKED_VEC_AVX2_H
#define TC_BACKENDS_CPU_BLOCKED_VEC_AVX2_H

#include <immintrin.h>
#include <math.h>

#include "backends/cpu/vact_f32_avx2.h"

#define BV_L 8
#define BV_V __m256
#define BV_LOADU _mm256_loadu_ps
#define BV_STOREU _mm256_storeu_ps
#define BV_FMADD _mm256_fmadd_ps
#define BV_SET1 _mm256_set1_ps
#define BV_ZERO _mm256_setzero_ps
#define BV_ADD _mm256_add_ps
#define BV_SUB _mm256_sub_ps
#define BV_MUL _mm256_mul_ps
#define BV_DIV _mm256_div_ps
#define BV_MAX _mm256_max_ps
#define BV_MIN _mm256_min_ps
#define BV_VACT tc__vact_f32_avx2
/* Accumulators a convolution microkernel may hold: 12 of the 16 registers (the rest hold weights and a broadcast). */
#define BV_MAX_ACC 12

/* Lane masks (MaxPool's NaN rule), as vectors of all-ones / all-zero lanes. */
#define BV_MASK __m256
#define BV_MASK_NONE _mm256_setzero_ps()
#define BV_MASK_ORDERED(v) _mm256_cmp_ps((v), (v), _CMP_ORD_Q)
#define BV_MASK_EQ(a, b) _mm256_cmp_ps((a), (b), _CMP_EQ_OQ)
#define BV_MASK_OR(a, b) _mm256_or_ps((a), (b))
#define BV_MASK_ANY(m) (_mm256_movemask_ps(m) != 0)
/* The lanes of m that are not in n. */
#define BV_MASK_ANDNOT(n, m) _mm256_andnot_ps((n), (m))
/* v with NaN in the lanes of m. */
#define BV_MASK_SET_NAN(v, m) _mm256_blendv_ps((v), _mm256_set1_ps(NAN), (m))

#endif
