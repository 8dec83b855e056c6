/*
 * vunary_f32_avx512.c - the AVX-512 microkernel of the elementwise activation ops (Relu, Sigmoid,
 * Tanh, Erf, Gelu, HardSwish, HardSigmoid, LeakyRelu, Clip): 16 floats per step with a masked
 * tail, one loop per activation kind.
 */
#include <immintrin.h>

#include "backends/cpu/vact_f32_avx512.h"
#include "backends/cpu/vunary_f32.h"

/* The loop for one activation kind (a constant after inlining). */
static inline __attribute__((always_inline)) void loop(const float *x, float *y, int64_t n, const tc__vact_kind kind,
                                                       float alpha, float beta) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) /* one vector per step: keeps the stores in address order */
        _mm512_storeu_ps(y + i, tc__vact_f32_avx512_kind(_mm512_loadu_ps(x + i), kind, alpha, beta));
    for (; i < n; i += 16) {
        int64_t left = n - i;
        __mmask16 m = left >= 16 ? (__mmask16)0xffff : (__mmask16)(((uint32_t)1 << left) - 1);
        _mm512_mask_storeu_ps(y + i, m, tc__vact_f32_avx512_kind(_mm512_maskz_loadu_ps(m, x + i), kind, alpha, beta));
    }
}

void tc__vunary_f32_avx512(const float *x, float *y, int64_t n, const tc__vact *act) {
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
