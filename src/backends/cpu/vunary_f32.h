/*
 * vunary_f32.h - the elementwise activation ops as standalone steps (float32): Relu, Sigmoid,
 * Tanh, Erf, Gelu (erf and tanh forms), HardSwish, HardSigmoid, LeakyRelu and Clip. The
 * checks their tactics share, the mapping from op and attributes to a tc__vact, the threaded
 * driver, and the per-ISA microkernels.
 */
#ifndef TC_BACKENDS_CPU_VUNARY_F32_H
#define TC_BACKENDS_CPU_VUNARY_F32_H

#include "backends/cpu/vact_f32.h"

/* y[i] = act(x[i]) for i in [0, n). */
typedef void (*tc__vunary_f32_ukernel)(const float *x, float *y, int64_t n, const tc__vact *act);

void tc__vunary_f32_avx512(const float *x, float *y, int64_t n, const tc__vact *act);
void tc__vunary_f32_avx2(const float *x, float *y, int64_t n, const tc__vact *act);

/* The supports() of every unary tactic (the op comes from d->op_type). */
bool tc__vunary_f32_supports(const tc__step_desc *d);

/* Runs a step tc__vunary_f32_supports accepted with microkernel uk, over ctx->exec. */
tc_status tc__vunary_f32_run(const tc__kernel_ctx *ctx, tc__vunary_f32_ukernel uk);

#endif
