/* rnn_gemv_f32_avx512.c - the recurrent step's small-batch product (rnn_gemv_f32.h) compiled for avx512. */
#include "backends/cpu/rnn_gemv_f32.h"

void tc__rnn_gemv_f32_avx512(size_t n, size_t k, size_t nr, const float *a, const float *b, const float *bias, float *c) {
    tc__rnn_gemv_f32_body(n, k, nr, a, b, bias, c);
}
