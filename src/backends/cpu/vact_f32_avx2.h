/*
 * vact_f32_avx2.h - evaluates a tc__vact activation on 8 floats with AVX2/FMA (SLEEF for
 * exp/erf/erfc/tanh). Include only from files compiled for AVX2 (*_avx2.c).
 * NaN handling follows the reference kernels: min/max operands are ordered so that a NaN
 * input stays NaN, except for the epilogue's Relu, which maps NaN to 0.
 */
#ifndef TC_BACKENDS_CPU_VACT_F32_AVX2_H
#define TC_BACKENDS_CPU_VACT_F32_AVX2_H

#include <immintrin.h>
#include <sleef.h>

#include "backends/cpu/vact_f32.h"

/* sigmoid(x) = 1 / (1 + e^-x), evaluated through e^-|x| so that no intermediate overflows. */
static inline __m256 tc__vsigmoid_f32_avx2(__m256 x) {
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
    __m256 e = Sleef_expf8_u10avx2(_mm256_sub_ps(_mm256_setzero_ps(), ax));
    __m256 r = _mm256_div_ps(one, _mm256_add_ps(one, e));
    __m256 neg = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
    return _mm256_blendv_ps(r, _mm256_mul_ps(e, r), neg);
}

/* clamp(h, 0, 1) with NaN kept. */
static inline __m256 tc__vclamp01_f32_avx2(__m256 h) {
    return _mm256_min_ps(_mm256_set1_ps(1.0f), _mm256_max_ps(_mm256_setzero_ps(), h));
}

/* clamp(rne(x * inv), qmin, qmin + 255) * scale, NaN -> 0, no -0: tc__fake_quant (core/epilogue.h). */
static inline __m256 tc__vfake_quant_f32_avx2(__m256 x, float scale, float inv, float qmin) {
    __m256 q = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(inv)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    q = _mm256_min_ps(_mm256_max_ps(q, _mm256_set1_ps(qmin)), _mm256_set1_ps(qmin + 255.0f));
    q = _mm256_add_ps(q, _mm256_setzero_ps()); /* no -0 code */
    return _mm256_and_ps(_mm256_mul_ps(q, _mm256_set1_ps(scale)), _mm256_cmp_ps(x, x, _CMP_ORD_Q)); /* NaN -> 0 */
}

/* act(x) for an activation of this kind with parameters alpha, beta (constant kinds fold the switch away). */
static inline __m256 tc__vact_f32_avx2_kind(__m256 x, tc__vact_kind kind, float alpha, float beta) {
    switch (kind) {
    case TC__VACT_NONE: return x;
    case TC__VACT_RELU: return _mm256_max_ps(x, _mm256_setzero_ps());     /* NaN -> 0 */
    case TC__VACT_RELU_NAN: return _mm256_max_ps(_mm256_setzero_ps(), x); /* NaN kept */
    case TC__VACT_CLIP:
        return _mm256_min_ps(_mm256_set1_ps(beta), _mm256_max_ps(_mm256_set1_ps(alpha), x));
    case TC__VACT_SIGMOID: return tc__vsigmoid_f32_avx2(x);
    case TC__VACT_SILU: return _mm256_mul_ps(x, tc__vsigmoid_f32_avx2(x));
    case TC__VACT_HARDSWISH:
        return _mm256_mul_ps(x, tc__vclamp01_f32_avx2(
                                    _mm256_fmadd_ps(x, _mm256_set1_ps(1.0f / 6.0f), _mm256_set1_ps(0.5f))));
    case TC__VACT_HARDSIGMOID:
        return tc__vclamp01_f32_avx2(_mm256_fmadd_ps(_mm256_set1_ps(alpha), x, _mm256_set1_ps(beta)));
    case TC__VACT_GELU_ERF: {
        __m256 t = Sleef_erfcf8_u15avx2(_mm256_mul_ps(x, _mm256_set1_ps(-0.70710678118654752440f)));
        return _mm256_mul_ps(_mm256_mul_ps(x, _mm256_set1_ps(0.5f)), t);
    }
    case TC__VACT_GELU_TANH: {
        __m256 x3 = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
        __m256 u = _mm256_mul_ps(_mm256_set1_ps(0.79788456080286535588f),
                                 _mm256_fmadd_ps(_mm256_set1_ps(0.044715f), x3, x));
        return _mm256_mul_ps(x, tc__vsigmoid_f32_avx2(_mm256_add_ps(u, u)));
    }
    case TC__VACT_LEAKY_RELU: {
        __m256 pos = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ);
        return _mm256_blendv_ps(_mm256_mul_ps(x, _mm256_set1_ps(alpha)), x, pos);
    }
    case TC__VACT_TANH: return Sleef_tanhf8_u10avx2(x);
    case TC__VACT_ERF: return Sleef_erff8_u10avx2(x);
    case TC__VACT_FAKE_QUANT: return tc__vfake_quant_f32_avx2(x, alpha, 1.0f / alpha, beta);
    }
    return x;
}

static inline __m256 tc__vact_f32_avx2(__m256 x, const tc__vact *a) {
    if (a->kind == TC__VACT_FAKE_QUANT) return tc__vfake_quant_f32_avx2(x, a->alpha, a->inv, a->beta);
    return tc__vact_f32_avx2_kind(x, (tc__vact_kind)a->kind, a->alpha, a->beta);
}

#endif
