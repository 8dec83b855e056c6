/*
 * softmax_f32.h - the Softmax / LogSoftmax operator (float32) over contiguous rows: the last
 * axis from opset 13 (or any axis whose trailing dims are all 1), and the 2-D coercion of
 * earlier opsets, optionally over x + a broadcast mask (fuse_softmax_mask). The checks its tactics share,
 * the threaded driver, and the per-ISA microkernels. Like the reference, each row subtracts its maximum
 * first and sums in double.
 */
#ifndef TC_BACKENDS_CPU_SOFTMAX_F32_H
#define TC_BACKENDS_CPU_SOFTMAX_F32_H

#include "core/fused_attr.h"
#include "backends/tactic.h"

/* What a microkernel computes: Softmax (log_out false) or LogSoftmax; with nan_guard every NaN output
 * becomes nan_to (the step's TC__ATTR_NAN_TO, a fused Where(IsNaN(y), c, y)); with a mask the rows are x + their
 * row of the mask (n floats), added in float (the step's TC__ATTR_SOFTMAX_ADD: a fused Add of the attention mask). */
typedef struct tc__softmax_opts {
    bool log_out;
    bool nan_guard;
    float nan_to;
    const float *mask;   /* row r of the call adds mask + r * mask_stride */
    int64_t mask_stride;
} tc__softmax_opts;

/* Softmax or LogSoftmax (as o says) of `rows` rows of n contiguous floats. */
typedef void (*tc__softmax_f32_ukernel)(const float *x, float *y, int64_t n, int64_t rows, const tc__softmax_opts *o);

void tc__softmax_f32_avx512(const float *x, float *y, int64_t n, int64_t rows, const tc__softmax_opts *o);
void tc__softmax_f32_avx2(const float *x, float *y, int64_t n, int64_t rows, const tc__softmax_opts *o);

/* The rows of a microkernel without an in-register mask path: each row normalised by row(x, y, n, o); with a mask,
 * add (the ISA's y = x + m) first writes the row's sum into y, which row then normalises in place (it reads each value
 * before it writes it). */
static inline void tc__softmax_rows_masked(const float *x, float *y, int64_t n, int64_t rows, const tc__softmax_opts *o,
                                           void (*row)(const float *, float *, int64_t, const tc__softmax_opts *),
                                           void (*add)(const float *, const float *, float *, int64_t)) {
    for (int64_t r = 0; r < rows; r++) {
        if (o->mask == NULL) {
            row(x + r * n, y + r * n, n, o);
            continue;
        }
        add(x + r * n, o->mask + r * o->mask_stride, y + r * n, n);
        row(y + r * n, y + r * n, n, o);
    }
}

/* The supports() of the Softmax and LogSoftmax tactics. */
bool tc__softmax_f32_supports(const tc__step_desc *d);

/* Runs a step tc__softmax_f32_supports accepted with microkernel uk, over ctx->exec (the step's
 * TC__ATTR_NAN_TO, if any, guards the output; with TC__ATTR_SOFTMAX_ADD each row adds its row of input 1). */
tc_status tc__softmax_f32_run(const tc__kernel_ctx *ctx, tc__softmax_f32_ukernel uk, bool log_out);

#endif
