/*
 * vbinary_nchwc_f32_kernel.h - the body of the blocked Add / Sub / Mul / Div microkernel for one ISA:
 * one vector per pixel; each operand either advances one pixel per step or is a per-channel vector
 * loaded once (the squeeze-excite multiply), with the fused epilogue (residual, activation)
 * applied before the store. Included by vbinary_nchw16c_f32_avx512.c and vbinary_nchw8c_f32_avx2.c
 * after their vector vocabulary (blocked_vec_<isa>.h), with VBIN_RUN defined as the function's name.
 */
#include "backends/cpu/blocked_f32.h"

#define VBIN_INLINE static inline __attribute__((always_inline))

VBIN_INLINE BV_V apply(const tc__vbinary_op op, BV_V a, BV_V b) {
    switch (op) {
    case TC__VBINARY_ADD: return BV_ADD(a, b);
    case TC__VBINARY_SUB: return BV_SUB(a, b);
    case TC__VBINARY_MUL: return BV_MUL(a, b);
    case TC__VBINARY_DIV: return BV_DIV(a, b);
    }
    return a;
}

/* SA, SB: the operands' pixel strides (BV_L, or 0 for a vector loaded once). */
VBIN_INLINE void loop(const tc__vbinary_op op, const int SA, const int SB, tc__vbinary_nchw16c_operand a,
                      tc__vbinary_nchw16c_operand b, const float *res, float *y, int64_t n, const tc__vact *act) {
    const tc__vact av = *act; /* a local copy: stores to y cannot change it */
    const BV_V fa = BV_LOADU(a.p), fb = BV_LOADU(b.p);
    if (res == NULL && av.kind == TC__VACT_NONE) {
        for (int64_t i = 0; i < n; i++) {
            BV_V va = SA ? BV_LOADU(a.p + i * BV_L) : fa, vb = SB ? BV_LOADU(b.p + i * BV_L) : fb;
            BV_STOREU(y + i * BV_L, apply(op, va, vb));
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        BV_V va = SA ? BV_LOADU(a.p + i * BV_L) : fa, vb = SB ? BV_LOADU(b.p + i * BV_L) : fb;
        BV_V v = apply(op, va, vb);
        if (res) v = BV_ADD(v, BV_LOADU(res + i * BV_L));
        BV_STOREU(y + i * BV_L, BV_VACT(v, &av));
    }
}

/* The loop of op for the operands' strides. */
VBIN_INLINE void strides(const tc__vbinary_op op, tc__vbinary_nchw16c_operand a, tc__vbinary_nchw16c_operand b,
                         const float *res, float *y, int64_t n, const tc__vact *act) {
    if (a.stride && b.stride) loop(op, BV_L, BV_L, a, b, res, y, n, act);
    else if (a.stride) loop(op, BV_L, 0, a, b, res, y, n, act);
    else if (b.stride) loop(op, 0, BV_L, a, b, res, y, n, act);
    else loop(op, 0, 0, a, b, res, y, n, act);
}

void VBIN_RUN(tc__vbinary_op op, tc__vbinary_nchw16c_operand a, tc__vbinary_nchw16c_operand b,
              const float *res, float *y, int64_t n, const tc__vact *act) {
    if (n <= 0) return;
    switch (op) {
    case TC__VBINARY_ADD: strides(TC__VBINARY_ADD, a, b, res, y, n, act); break;
    case TC__VBINARY_SUB: strides(TC__VBINARY_SUB, a, b, res, y, n, act); break;
    case TC__VBINARY_MUL: strides(TC__VBINARY_MUL, a, b, res, y, n, act); break;
    case TC__VBINARY_DIV: strides(TC__VBINARY_DIV, a, b, res, y, n, act); break;
    }
}
