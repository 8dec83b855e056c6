/*
 * qact_avx512.h - the fused activations of the AVX-512 INT8 epilogue (qconv_vnni.h: VNNI, depthwise and AMX kernels)
 * in a few instructions: GELU (erf), sigmoid and SiLU by the formulas of the AVX2 INT8 epilogue (qconv_avx2.h: q_exp,
 * a reciprocal with one Newton step, Abramowitz and Stegun 7.1.26 for erfc, |error| <= 1.5e-7 absolute), the others
 * as tc__vact_f32_avx512. SLEEF's erfc took 17% of BERT-base's INT8 time (its FFN1 epilogue), more than the
 * quantization error the INT8 layer already has warrants. Static inline: include only from files compiled for AVX-512.
 */
#ifndef TC_BACKENDS_CPU_QACT_AVX512_H
#define TC_BACKENDS_CPU_QACT_AVX512_H

#include <immintrin.h>

#include "backends/cpu/vact_f32.h"
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

/* GELU (erf): x / 2 * erfc(-x / sqrt 2); erfc(|z|) = t p(t) e^-z^2 with t = 1 / (1 + 0.3275911 |z|) (the divisor capped
 * at 1e30: t ~0 then), and erfc(-|z|) = 2 - erfc(|z|). */
static inline __m512 tc__qact_gelu_avx512(__m512 x) {
    const __m512 z = _mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(0.70710678118654752f));
    const __m512 d = _mm512_fmadd_ps(z, _mm512_set1_ps(0.3275911f), _mm512_set1_ps(1.0f));
    const __m512 t = tc__qact_recip_avx512(_mm512_min_ps(d, _mm512_set1_ps(1e30f)));
    __m512 p = _mm512_fmadd_ps(t, _mm512_set1_ps(1.061405429f), _mm512_set1_ps(-1.453152027f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.421413741f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.284496736f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.254829592f));
    p = _mm512_mul_ps(p, t);
    const __m512 q = _mm512_mul_ps(p, tc__qact_exp_avx512(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(z, z))));
    /* x >= 0 (and NaN, whose q is NaN too): 2 - q; x < 0: q */
    const __m512 s = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ),
                                          _mm512_sub_ps(_mm512_set1_ps(2.0f), q), q);
    return _mm512_mul_ps(_mm512_mul_ps(x, _mm512_set1_ps(0.5f)), s);
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
