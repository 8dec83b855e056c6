/*
 * vbinary_f32.h - the elementwise Add / Sub / Mul / Div operator (float32) for the broadcasts
 * real models use: same shape, a scalar, a per-channel operand ([1, C, 1, 1] or [C, 1, 1]
 * against NCHW) and a last-dim row ([n] against [..., n]) - in general, one operand of the
 * output's shape and one whose non-1 dims are a contiguous run of the output's dims - with the
 * fused epilogue y = act(op(a, b) + residual). The checks its tactics share, the threaded
 * driver, and the per-ISA microkernels.
 */
#ifndef TC_BACKENDS_CPU_VBINARY_F32_H
#define TC_BACKENDS_CPU_VBINARY_F32_H

#include "backends/cpu/vact_f32.h"

typedef enum tc__vbinary_op { TC__VBINARY_ADD, TC__VBINARY_SUB, TC__VBINARY_MUL, TC__VBINARY_DIV } tc__vbinary_op;

/* The microkernels of one ISA. res (same indexing as y) may be NULL; act is applied last. */
typedef struct tc__vbinary_f32_ukernels {
    /* y[i] = op(a[i], b[i]) for i in [0, n) */
    void (*vv)(tc__vbinary_op op, const float *a, const float *b, const float *res, float *y, int64_t n,
               const tc__vact *act);
    /* y[i] = op(a[i], s), or op(s, a[i]) when scalar_first */
    void (*vs)(tc__vbinary_op op, bool scalar_first, const float *a, float s, const float *res, float *y, int64_t n,
               const tc__vact *act);
} tc__vbinary_f32_ukernels;

extern const tc__vbinary_f32_ukernels tc__vbinary_f32_ukernels_avx512;
extern const tc__vbinary_f32_ukernels tc__vbinary_f32_ukernels_avx2;

/* The supports() of every Add/Sub/Mul/Div tactic. */
bool tc__vbinary_f32_supports(const tc__step_desc *d);

/* Runs a step tc__vbinary_f32_supports accepted with the microkernels uk, over ctx->exec. */
tc_status tc__vbinary_f32_run(const tc__kernel_ctx *ctx, tc__vbinary_op op, const tc__vbinary_f32_ukernels *uk);

#endif
