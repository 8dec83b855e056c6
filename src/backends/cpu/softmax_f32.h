/*
 * softmax_f32.h - the Softmax / LogSoftmax operator (float32) over contiguous rows: the last
 * axis from opset 13 (or any axis whose trailing dims are all 1), and the 2-D coercion of
 * earlier opsets. The checks its tactics share, the threaded driver, and the per-ISA
 * microkernels. Like the reference, each row subtracts its maximum first and sums in double.
 */
#ifndef TC_BACKENDS_CPU_SOFTMAX_F32_H
#define TC_BACKENDS_CPU_SOFTMAX_F32_H

#include "core/fused_attr.h"
#include "tactics/tactic.h"

/* What a microkernel computes: Softmax (log_out false) or LogSoftmax; with nan_guard every NaN output
 * becomes nan_to (the step's TC__ATTR_NAN_TO, a fused Where(IsNaN(y), c, y)). */
typedef struct tc__softmax_opts {
    bool log_out;
    bool nan_guard;
    float nan_to;
} tc__softmax_opts;

/* Softmax or LogSoftmax (as o says) of `rows` rows of n contiguous floats. */
typedef void (*tc__softmax_f32_ukernel)(const float *x, float *y, int64_t n, int64_t rows, const tc__softmax_opts *o);

void tc__softmax_f32_avx512(const float *x, float *y, int64_t n, int64_t rows, const tc__softmax_opts *o);
void tc__softmax_f32_avx2(const float *x, float *y, int64_t n, int64_t rows, const tc__softmax_opts *o);

/* The supports() of the Softmax and LogSoftmax tactics. */
bool tc__softmax_f32_supports(const tc__step_desc *d);

/* Runs a step tc__softmax_f32_supports accepted with microkernel uk, over ctx->pool (the step's
 * TC__ATTR_NAN_TO, if any, guards the output). */
tc_status tc__softmax_f32_run(const tc__kernel_ctx *ctx, tc__softmax_f32_ukernel uk, bool log_out);

#endif
