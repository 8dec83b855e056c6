/*
 * gemm_act_f32_avx2.c - the activations GEMM microkernels do not apply as a clamp (Sigmoid, SiLU,
 * HardSwish, HardSigmoid, Gelu erf/tanh, LeakyRelu, Tanh), in place on a stored C tile, 8 lanes at
 * a time with SLEEF's AVX2 functions (1.0-ULP exp/erf/tanh). Formulas as tc__act_eval.
 */
#include <immintrin.h>
#include <sleef.h>

#include "backends/cpu/gemm.h"
#include "backends/cpu/vact_f32_avx2.h"

static inline __m256 act8(__m256 x, uint8_t act, __m256 alpha, __m256 beta) {
    const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps(), half = _mm256_set1_ps(0.5f);
    switch (act) {
    case TC__ACT_SIGMOID: return _mm256_div_ps(one, _mm256_add_ps(one, Sleef_expf8_u10avx2(_mm256_sub_ps(zero, x))));
    case TC__ACT_SILU: return _mm256_div_ps(x, _mm256_add_ps(one, Sleef_expf8_u10avx2(_mm256_sub_ps(zero, x))));
    case TC__ACT_HARDSWISH: {
        __m256 h = _mm256_add_ps(_mm256_div_ps(x, _mm256_set1_ps(6.0f)), half);
        return _mm256_mul_ps(x, _mm256_min_ps(one, _mm256_max_ps(zero, h)));
    }
    case TC__ACT_HARDSIGMOID: return _mm256_min_ps(one, _mm256_max_ps(zero, _mm256_fmadd_ps(alpha, x, beta)));
    case TC__ACT_GELU_ERF: {
        __m256 e = Sleef_erff8_u10avx2(_mm256_mul_ps(x, _mm256_set1_ps(0.70710678118654752f)));
        return _mm256_mul_ps(_mm256_mul_ps(half, x), _mm256_add_ps(one, e));
    }
    case TC__ACT_GELU_TANH: {
        __m256 x3 = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
        __m256 u =
            _mm256_mul_ps(_mm256_set1_ps(0.79788456080286536f), _mm256_fmadd_ps(_mm256_set1_ps(0.044715f), x3, x));
        return _mm256_mul_ps(_mm256_mul_ps(half, x), _mm256_add_ps(one, Sleef_tanhf8_u10avx2(u)));
    }
    case TC__ACT_LEAKY_RELU: return _mm256_blendv_ps(x, _mm256_mul_ps(x, alpha), _mm256_cmp_ps(x, zero, _CMP_LT_OQ));
    case TC__ACT_TANH: return Sleef_tanhf8_u10avx2(x);
    case TC__ACT_RELU: return _mm256_max_ps(x, zero);
    case TC__ACT_CLIP: return _mm256_min_ps(beta, _mm256_max_ps(alpha, x));
    default: return x;
    }
}

/* act8, with the fake quantization of a QDQ pair (scale e->act_alpha, qmin e->act_beta, inv = 1 / scale). */
static inline __m256 act8f(__m256 x, uint8_t act, __m256 alpha, __m256 beta, const tc__gemm_epi *e, float inv) {
    if (act == TC__ACT_FAKE_QUANT) return tc__vfake_quant_f32_avx2(x, e->act_alpha, inv, e->act_beta);
    return act8(x, act, alpha, beta);
}

void tc__gemm_act_f32_avx2(float *c, size_t ldc, size_t m, size_t n, const tc__gemm_epi *e) {
    const __m256 alpha = _mm256_set1_ps(e->act_alpha), beta = _mm256_set1_ps(e->act_beta);
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const uint8_t act = e->act;
    const float inv = act == TC__ACT_FAKE_QUANT ? 1.0f / e->act_alpha : 0.0f; /* once, not per vector */
    for (size_t i = 0; i < m; i++) {
        float *r = c + i * ldc;
        size_t j = 0;
        for (; j + 8 <= n; j += 8)
            _mm256_storeu_ps(r + j, act8f(_mm256_loadu_ps(r + j), act, alpha, beta, e, inv));
        if (j < n) {
            const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n - j)), iota);
            _mm256_maskstore_ps(r + j, mask, act8f(_mm256_maskload_ps(r + j, mask), act, alpha, beta, e, inv));
        }
    }
}
