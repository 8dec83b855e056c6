/*
 * layernorm_f32.h - the LayerNormalization operator (float32): rows of n = prod(dims[axis:])
 * contiguous elements, Scale and optional B of exactly the normalised shape, no Mean /
 * InvStdDev outputs. The checks its tactics share, the threaded driver, and the per-ISA
 * microkernels. Like the reference: two passes in double for the mean and the biased
 * variance, then y = (x - mean) / sqrt(var + epsilon) * scale + bias.
 */
#ifndef TC_BACKENDS_CPU_LAYERNORM_F32_H
#define TC_BACKENDS_CPU_LAYERNORM_F32_H

#include "backends/tactic.h"

/* Normalises `rows` rows of n floats; bias may be NULL. */
typedef void (*tc__layernorm_f32_ukernel)(const float *x, float *y, const float *scale, const float *bias, int64_t n,
                                          int64_t rows, double eps);

void tc__layernorm_f32_avx512(const float *x, float *y, const float *scale, const float *bias, int64_t n, int64_t rows,
                              double eps);
void tc__layernorm_f32_avx2(const float *x, float *y, const float *scale, const float *bias, int64_t n, int64_t rows,
                            double eps);

bool tc__layernorm_f32_supports(const tc__step_desc *d);
tc_status tc__layernorm_f32_run(const tc__kernel_ctx *ctx, tc__layernorm_f32_ukernel uk);

#endif
