/*
 * gavgpool_f32.h - the GlobalAveragePool operator (float32, [N, C, spatial...] -> [N, C, 1, ...]):
 * the checks its tactics share, the threaded driver, and the per-ISA microkernels it calls.
 * Each plane is summed in double, as the reference kernel does, and divided once.
 */
#ifndef TC_BACKENDS_CPU_GAVGPOOL_F32_H
#define TC_BACKENDS_CPU_GAVGPOOL_F32_H

#include "backends/tactic.h"

/* y[p] = mean of x[p * n .. p * n + n) for p in [0, planes). */
typedef void (*tc__gavgpool_f32_ukernel)(const float *x, float *y, int64_t n, int64_t planes);

void tc__gavgpool_f32_avx512(const float *x, float *y, int64_t n, int64_t planes);
void tc__gavgpool_f32_avx2(const float *x, float *y, int64_t n, int64_t planes);

bool tc__gavgpool_f32_supports(const tc__step_desc *d);
tc_status tc__gavgpool_f32_run(const tc__kernel_ctx *ctx, tc__gavgpool_f32_ukernel uk);

#endif
