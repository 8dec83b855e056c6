/*
 * vact_f32_avx512.h - evaluates a tc__vact activation on 16 floats with AVX-512 (SLEEF for
 * exp/tanh; erf and GELU inline, verf_f32_avx512.h). Include only from files compiled for AVX-512 (*_avx512.c).
 * NaN handling follows the reference kernels: min/max operands are ordered so that a NaN
 * input stays NaN, except for the epilogue's Relu, which maps NaN to 0.
 */
#ifndef TC_BACKENDS_CPU_VACT_F32_AVX512_H
#define TC_BACKENDS_CPU_VACT_F32_AVX512_H

#include <immintrin.h>
#include <sleef.h>

#include "backends/cpu/vact_f32.h"
#include "backends/cpu/verf_f32_avx512.h"

/* sigmoid(x) = 1 / (1 + e^-x), evaluated through e^-|x| so that no intermediate overflows. */
static inline __m512 tc__vsigmoid_f32_avx512(__m512 x) {
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512 ax = _mm512_abs_ps(x);
    __m512 e = Sleef_expf16_u10avx512f(_mm512_sub_ps(_mm512_setzero_ps(), ax));
    __m512 r = _mm512_div_ps(one, _mm512_add_ps(one, e));
    __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
    return _mm512_mask_mul_ps(r, neg, e, r);
}

/* clamp(h, 0, 1) with NaN kept. */
static inline __m512 tc__vclamp01_f32_avx512(__m512 h) {
    return _mm512_min_ps(_mm512_set1_ps(1.0f), _mm512_max_ps(_mm512_setzero_ps(), h));
}

/* clamp(rne(x * inv), qmin, qmin + 255) * scale, NaN -> 0, no -0: tc__fake_quant (core/epilogue.h). */
static inline __m512 tc__vfake_quant_f32_avx512(__m512 x, float scale, float inv, float qmin) {
    __m512 q = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(inv)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    q = _mm512_min_ps(_mm512_max_ps(q, _mm512_set1_ps(qmin)), _mm512_set1_ps(qmin + 255.0f));
    q = _mm512_add_ps(q, _mm512_setzero_ps()); /* no -0 code */
    return _mm512_maskz_mul_ps(_mm512_cmp_ps_mask(x, x, _CMP_ORD_Q), q, _mm512_set1_ps(scale)); /* NaN -> 0 */
}

/* act(x) for an activation of this kind with parameters alpha, beta (constant kinds fold the switch away). */
static inline __m512 tc__vact_f32_avx512_kind(__m512 x, tc__vact_kind kind, float alpha, float beta) {
    switch (kind) {
    case TC__VACT_NONE: return x;
    case TC__VACT_RELU: return _mm512_max_ps(x, _mm512_setzero_ps());     /* NaN -> 0 */
    case TC__VACT_RELU_NAN: return _mm512_max_ps(_mm512_setzero_ps(), x); /* NaN kept */
    case TC__VACT_CLIP:
        return _mm512_min_ps(_mm512_set1_ps(beta), _mm512_max_ps(_mm512_set1_ps(alpha), x));
    case TC__VACT_SIGMOID: return tc__vsigmoid_f32_avx512(x);
    case TC__VACT_SILU: return _mm512_mul_ps(x, tc__vsigmoid_f32_avx512(x));
    case TC__VACT_HARDSWISH:
        return _mm512_mul_ps(x, tc__vclamp01_f32_avx512(
                                    _mm512_fmadd_ps(x, _mm512_set1_ps(1.0f / 6.0f), _mm512_set1_ps(0.5f))));
    case TC__VACT_HARDSIGMOID:
        return tc__vclamp01_f32_avx512(_mm512_fmadd_ps(_mm512_set1_ps(alpha), x, _mm512_set1_ps(beta)));
    case TC__VACT_GELU_ERF: return tc__vgelu_erf_f32_avx512(x); /* x Phi(x): no cancellation for negative x */
    case TC__VACT_GELU_TANH: {
        /* (1 + tanh(u)) / 2 = sigmoid(2u) */
        __m512 x3 = _mm512_mul_ps(_mm512_mul_ps(x, x), x);
        __m512 u = _mm512_mul_ps(_mm512_set1_ps(0.79788456080286535588f),
                                 _mm512_fmadd_ps(_mm512_set1_ps(0.044715f), x3, x));
        return _mm512_mul_ps(x, tc__vsigmoid_f32_avx512(_mm512_add_ps(u, u)));
    }
    case TC__VACT_LEAKY_RELU: {
        __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ) ^ (__mmask16)0xffff;
        return _mm512_mask_mul_ps(x, neg, x, _mm512_set1_ps(alpha));
    }
    case TC__VACT_TANH: return Sleef_tanhf16_u10avx512f(x);
    case TC__VACT_ERF: return tc__verf_f32_avx512(x);
    case TC__VACT_FAKE_QUANT: return tc__vfake_quant_f32_avx512(x, alpha, 1.0f / alpha, beta);
    }
    return x;
}

static inline __m512 tc__vact_f32_avx512(__m512 x, const tc__vact *a) {
    if (a->kind == TC__VACT_FAKE_QUANT) return tc__vfake_quant_f32_avx512(x, a->alpha, a->inv, a->beta);
    return tc__vact_f32_avx512_kind(x, (tc__vact_kind)a->kind, a->alpha, a->beta);
}

#endif
