/*
 * gemm_act_f32_avx512.c - the activations GEMM microkernels do not apply as a clamp (Sigmoid, SiLU,
 * HardSwish, HardSigmoid, Gelu erf/tanh, LeakyRelu, Tanh, a QDQ fake quantization), in place on a stored C tile, 16 lanes at
 * a time with SLEEF's AVX-512 functions (1.0-ULP exp/tanh) and verf_f32_avx512.h's inline GELU. Formulas as tc__act_eval.
 */
#include <immintrin.h>
#include <sleef.h>

#include "backends/cpu/gemm.h"
#include "backends/cpu/vact_f32_avx512.h"
#include "backends/cpu/verf_f32_avx512.h"

static inline __m512 act16(__m512 x, uint8_t act, __m512 alpha, __m512 beta) {
    const __m512 one = _mm512_set1_ps(1.0f), zero = _mm512_setzero_ps(), half = _mm512_set1_ps(0.5f);
    switch (act) {
    case TC__ACT_SIGMOID:
        return _mm512_div_ps(one, _mm512_add_ps(one, Sleef_expf16_u10avx512f(_mm512_sub_ps(zero, x))));
    case TC__ACT_SILU: return _mm512_div_ps(x, _mm512_add_ps(one, Sleef_expf16_u10avx512f(_mm512_sub_ps(zero, x))));
    case TC__ACT_HARDSWISH: {
        __m512 h = _mm512_add_ps(_mm512_div_ps(x, _mm512_set1_ps(6.0f)), half);
        return _mm512_mul_ps(x, _mm512_min_ps(one, _mm512_max_ps(zero, h)));
    }
    case TC__ACT_HARDSIGMOID: return _mm512_min_ps(one, _mm512_max_ps(zero, _mm512_fmadd_ps(alpha, x, beta)));
    case TC__ACT_GELU_ERF: return tc__vgelu_erf_f32_avx512(x); /* inline: SLEEF's erf call cost 4x more */
    case TC__ACT_GELU_TANH: {
        __m512 x3 = _mm512_mul_ps(_mm512_mul_ps(x, x), x);
        __m512 u =
            _mm512_mul_ps(_mm512_set1_ps(0.79788456080286536f), _mm512_fmadd_ps(_mm512_set1_ps(0.044715f), x3, x));
        return _mm512_mul_ps(_mm512_mul_ps(half, x), _mm512_add_ps(one, Sleef_tanhf16_u10avx512f(u)));
    }
    case TC__ACT_LEAKY_RELU: return _mm512_mask_mul_ps(x, _mm512_cmp_ps_mask(x, zero, _CMP_LT_OQ), x, alpha);
    case TC__ACT_TANH: return Sleef_tanhf16_u10avx512f(x);
    case TC__ACT_RELU: return _mm512_max_ps(x, zero);
    case TC__ACT_CLIP: return _mm512_min_ps(beta, _mm512_max_ps(alpha, x));
    default: return x;
    }
}

void tc__gemm_act_f32_avx512(float *c, size_t ldc, size_t m, size_t n, const tc__gemm_epi *e) {
    const __m512 alpha = _mm512_set1_ps(e->act_alpha), beta = _mm512_set1_ps(e->act_beta);
    const uint8_t act = e->act;
    const float inv = act == TC__ACT_FAKE_QUANT ? 1.0f / e->act_alpha : 0.0f; /* once, not per vector */
    if (act == TC__ACT_GELU_ERF) { /* BERT's FFN1: its own loop, no switch per vector */
        for (size_t i = 0; i < m; i++) {
            float *r = c + i * ldc;
            size_t j = 0;
            for (; j + 16 <= n; j += 16)
                _mm512_storeu_ps(r + j, tc__vgelu_erf_f32_avx512(_mm512_loadu_ps(r + j)));
            if (j < n) {
                const __mmask16 mask = (__mmask16)((1u << (n - j)) - 1u);
                _mm512_mask_storeu_ps(r + j, mask, tc__vgelu_erf_f32_avx512(_mm512_maskz_loadu_ps(mask, r + j)));
            }
        }
        return;
    }
    for (size_t i = 0; i < m; i++) {
        float *r = c + i * ldc;
        for (size_t j = 0; j < n; j += 16) {
            const size_t w = n - j < 16 ? n - j : 16;
            const __mmask16 mask = w == 16 ? (__mmask16)0xffff : (__mmask16)((1u << w) - 1u);
            const __m512 x = _mm512_maskz_loadu_ps(mask, r + j);
            _mm512_mask_storeu_ps(r + j, mask,
                                  act == TC__ACT_FAKE_QUANT
                                      ? tc__vfake_quant_f32_avx512(x, e->act_alpha, inv, e->act_beta)
                                      : act16(x, act, alpha, beta));
        }
    }
}
