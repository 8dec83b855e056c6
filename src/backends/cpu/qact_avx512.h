/*
 * qact_avx512.h - the fused activations of the AVX-512 INT8 epilogue (qconv_vnni.h: VNNI, depthwise and AMX kernels)
 * in a few instructions: sigmoid and SiLU by the formulas of the AVX2 INT8 epilogue (qconv_avx2.h: q_exp, a reciprocal
 * with one Newton step), GELU (erf) in cubic pieces (|error| <= 3.5e-6 absolute), the others as tc__vact_f32_avx512.
 * SLEEF's erfc took 17% of BERT-base's INT8 time (its FFN1 epilogue), more than the quantization error the INT8 layer
 * already has warrants; the AVX2 epilogue's erfc (Abramowitz and Stegun 7.1.26) still ~12%. Static inline: include
 * only from files compiled for AVX-512.
 */
#ifndef TC_BACKENDS_CPU_QACT_AVX512_H
#define TC_BACKENDS_CPU_QACT_AVX512_H

#include <immintrin.h>

#include "backends/cpu/vact_f32.h"
#include "backends/cpu/gelu_pieces.h"
#include "backends/cpu/vact_f32_avx512.h"

/* e^x: 2^n (1 + r p(r)) with n = round(x / ln 2) (the 1.5 * 2^23 trick), r = x - n ln 2 in two parts, p of degree 4;
 * 3e-7 relative; x clamped at -87.3 (the sigmoid and GELU need only ~0 there); a NaN stays NaN. */
static inline __m512 tc__qact_exp_avx512(__m512 x) {
    x = _mm512_max_ps(_mm512_set1_ps(-87.3f), x); /* NaN: the second operand, x */
    const __m512 bias = _mm512_set1_ps(12582912.0f + 127.0f);
    __m512 n = _mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504088896341f), bias);
    const __m512 s = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_castps_si512(n), 23)); /* 2^n */
    n = _mm512_sub_ps(n, bias);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(0.008160061202943325f), r, _mm512_set1_ps(0.041929278522729874f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.16670355200767517f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.4999883770942688f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.9999983906745911f));
    return _mm512_fmadd_ps(_mm512_mul_ps(r, s), p, s);
}

/* 1 / d for finite d >= 1: vrcp14ps refined by one Newton step (about 1e-8 relative); a NaN stays NaN. */
static inline __m512 tc__qact_recip_avx512(__m512 d) {
    const __m512 r = _mm512_rcp14_ps(d);
    return _mm512_mul_ps(r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(2.0f)));
}

/* sigmoid(x) through e^-|x|: 1 / (1 + e) for x >= 0, e / (1 + e) below. */
static inline __m512 tc__qact_sigmoid_avx512(__m512 x) {
    const __m512 e = tc__qact_exp_avx512(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_abs_ps(x)));
    const __m512 r = tc__qact_recip_avx512(_mm512_add_ps(_mm512_set1_ps(1.0f), e));
    return _mm512_mask_mul_ps(r, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), e, r);
}

/* GELU (erf): x Phi(x), Phi (the normal CDF) a cubic on each of 32 pieces (gelu_pieces.h: 0 below -5, thirds of
 * [-5, 5), 1 from 5), its coefficients picked by vpermt2ps: |error| <= 3.5e-6 absolute, ~14 instructions where erfc
 * took ~32. A NaN stays NaN (its piece 0's cubic of a NaN t); GELU(-Inf) is NaN, as 0.5 x (1 + erf(x / sqrt 2)). */
static inline __m512 tc__qact_gelu_avx512(__m512 x) {
    __m512 u = _mm512_fmadd_ps(x, _mm512_set1_ps(3.0f), _mm512_set1_ps(16.0f));
    u = _mm512_min_ps(_mm512_set1_ps(31.0f), _mm512_max_ps(_mm512_setzero_ps(), u)); /* NaN: the second operand, u */
    const __m512i k = _mm512_cvttps_epi32(u);                                        /* NaN: 0x80000000, piece 0 */
    const __m512 t = _mm512_sub_ps(u, _mm512_cvtepi32_ps(k));
    const float(*c)[32] = tc__gelu_pieces;
    __m512 p = _mm512_permutex2var_ps(_mm512_load_ps(c[3]), k, _mm512_load_ps(c[3] + 16));
    p = _mm512_fmadd_ps(p, t, _mm512_permutex2var_ps(_mm512_load_ps(c[2]), k, _mm512_load_ps(c[2] + 16)));
    p = _mm512_fmadd_ps(p, t, _mm512_permutex2var_ps(_mm512_load_ps(c[1]), k, _mm512_load_ps(c[1] + 16)));
    p = _mm512_fmadd_ps(p, t, _mm512_permutex2var_ps(_mm512_load_ps(c[0]), k, _mm512_load_ps(c[0] + 16)));
    return _mm512_mul_ps(x, p);
}

/* The activation of a constant kind (alpha, beta: its parameters) on v: GELU (erf), sigmoid and SiLU as above, the others
 * as tc__vact_f32_avx512_kind (not the fake quantization: tc__qact_avx512). */
static inline __m512 tc__qact_avx512_kind(__m512 v, tc__vact_kind kind, float alpha, float beta) {
    switch (kind) {
    case TC__VACT_GELU_ERF: return tc__qact_gelu_avx512(v);
    case TC__VACT_SIGMOID: return tc__qact_sigmoid_avx512(v);
    case TC__VACT_SILU: return _mm512_mul_ps(v, tc__qact_sigmoid_avx512(v));
    default: return tc__vact_f32_avx512_kind(v, kind, alpha, beta);
    }
}

/* The activation a on v: GELU (erf), sigmoid and SiLU as above, the others as tc__vact_f32_avx512. */
static inline __attribute__((always_inline)) __m512 tc__qact_avx512(const tc__vact *a, __m512 v) {
    if (a->kind == TC__VACT_FAKE_QUANT) return tc__vact_f32_avx512(v, a); /* (its precomputed 1 / scale) */
    return tc__qact_avx512_kind(v, (tc__vact_kind)a->kind, a->alpha, a->beta);
}

#endif
