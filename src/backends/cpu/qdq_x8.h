/*
 * qdq_x8.h - per-tensor QuantizeLinear (float32 -> uint8 / int8) and DequantizeLinear (uint8 / int8 ->
 * float32) with AVX-512 or AVX2, for the Q/DQ pairs of QDQ models that stay in the graph (those feeding ops that
 * run in FP32, or following a producer whose epilogue already holds an activation). Same rounding as the reference:
 * round half to even of x / scale, then + zero point, saturated. Baseline part (supports, run, threading) in
 * qdq_x8_tactic.c; kernels in qdq_x8_avx512.c and qdq_x8_avx2.c.
 */
#ifndef TC_BACKENDS_CPU_QDQ_X8_H
#define TC_BACKENDS_CPU_QDQ_X8_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/tactic.h"

/* y[i] = sat(rne(x[i] / scale) + zp) for i < n; is_signed: int8 output, else uint8. */
void tc__quantize_x8_avx512(const float *x, void *y, int64_t n, float scale, int32_t zp, bool is_signed);
/* y[i] = (x[i] - zp) * scale. */
void tc__dequantize_x8_avx512(const void *x, float *y, int64_t n, float scale, int32_t zp, bool is_signed);
/* The same with AVX2. */
void tc__quantize_x8_avx2(const float *x, void *y, int64_t n, float scale, int32_t zp, bool is_signed);
void tc__dequantize_x8_avx2(const void *x, float *y, int64_t n, float scale, int32_t zp, bool is_signed);

#endif
