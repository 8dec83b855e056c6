/*
 * rnn_gemv_f32.h - the recurrent step's product for small batches: c[j] = sum_p a[p] * B(p, j) (+ bias[j]) with B in
 * the GEMM's NR-column panels (tc__gemm_pack_b_f32, nr <= 64). One plain C body, compiled per ISA by the files
 * rnn_gemv_f32_<isa>.c (their names give the compiler flags: the loops vectorise to that width).
 */
#ifndef TC_BACKENDS_CPU_RNN_GEMV_F32_H
#define TC_BACKENDS_CPU_RNN_GEMV_F32_H

#include <stddef.h>
#include <string.h>

typedef void (*tc__rnn_gemv_fn)(size_t n, size_t k, size_t nr, const float *a, const float *b, const float *bias,
                                float *c);

void tc__rnn_gemv_f32_avx512(size_t n, size_t k, size_t nr, const float *a, const float *b, const float *bias, float *c);
void tc__rnn_gemv_f32_avx2(size_t n, size_t k, size_t nr, const float *a, const float *b, const float *bias, float *c);

static inline void tc__rnn_gemv_f32_body(size_t n, size_t k, size_t nr, const float *a, const float *b,
                                         const float *bias, float *c) {
    for (size_t q = 0; q * nr < n; q++) {
        const size_t w = n - q * nr < nr ? n - q * nr : nr;
        const float *panel = b + q * nr * k;
        float acc[64];
        for (size_t jj = 0; jj < w; jj++) acc[jj] = bias ? bias[q * nr + jj] : 0.0f;
        for (size_t p = 0; p < k; p++) {
            const float av = a[p], *row = panel + p * w;
            for (size_t jj = 0; jj < w; jj++) acc[jj] += av * row[jj];
        }
        memcpy(c + q * nr, acc, w * sizeof(float));
    }
}

#endif
