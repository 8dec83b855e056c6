/*
 * vunary_f32_avx2.c - the AVX2 microkernel of the elementwise activation ops (Relu, Sigmoid,
 * Tanh, Erf, Gelu, HardSwish, HardSigmoid, LeakyRelu, Clip): 8 floats per step with a masked
 * tail, one loop per activation kind.
 */
#include <immintrin.h>

#include "backends/cpu/vact_f32_avx2.h"
#include "backends/cpu/vunary_f32.h"

/* The loop for one activation kind (a constant after inlining). */
static inline __attribute__((always_inline)) void loop(const float *x, float *y, int64_t n, const tc__vact_kind kind,
                                                       float alpha, float beta) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) /* one vector per step: keeps the stores in address order */
        _mm256_storeu_ps(y + i, tc__vact_f32_avx2_kind(_mm256_loadu_ps(x + i), kind, alpha, beta));
    for (; i < n; i += 8) {
        int64_t left = n - i;
        __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)(left > 8 ? 8 : left)),
                                       _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        _mm256_maskstore_ps(y + i, m, tc__vact_f32_avx2_kind(_mm256_maskload_ps(x + i, m), kind, alpha, beta));
    }
}

void tc__vunary_f32_avx2(const float *x, float *y, int64_t n, const tc__vact *act) {
    const float al = act->alpha, be = act->beta;
    switch ((tc__vact_kind)act->kind) {
    case TC__VACT_NONE: loop(x, y, n, TC__VACT_NONE, al, be); break;
    case TC__VACT_RELU: loop(x, y, n, TC__VACT_RELU, al, be); break;
    case TC__VACT_RELU_NAN: loop(x, y, n, TC__VACT_RELU_NAN, al, be); break;
    case TC__VACT_CLIP: loop(x, y, n, TC__VACT_CLIP, al, be); break;
    case TC__VACT_SIGMOID: loop(x, y, n, TC__VACT_SIGMOID, al, be); break;
    case TC__VACT_SILU: loop(x, y, n, TC__VACT_SILU, al, be); break;
    case TC__VACT_HARDSWISH: loop(x, y, n, TC__VACT_HARDSWISH, al, be); break;
    case TC__VACT_HARDSIGMOID: loop(x, y, n, TC__VACT_HARDSIGMOID, al, be); break;
    case TC__VACT_GELU_ERF: loop(x, y, n, TC__VACT_GELU_ERF, al, be); break;
    case TC__VACT_GELU_TANH: loop(x, y, n, TC__VACT_GELU_TANH, al, be); break;
    case TC__VACT_LEAKY_RELU: loop(x, y, n, TC__VACT_LEAKY_RELU, al, be); break;
    case TC__VACT_TANH: loop(x, y, n, TC__VACT_TANH, al, be); break;
    case TC__VACT_ERF: loop(x, y, n, TC__VACT_ERF, al, be); break;
    case TC__VACT_FAKE_QUANT: loop(x, y, n, TC__VACT_FAKE_QUANT, al, be); break;
    }
}
