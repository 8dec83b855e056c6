/*
 * vbinary_nchw16c_f32_avx512.c - the AVX-512 Add / Sub / Mul / Div microkernel on NCHW16c: one
 * vector per pixel; each operand either advances one pixel per step or is a per-channel vector
 * loaded once (the squeeze-excite multiply), with the fused epilogue (residual, activation)
 * applied before the store.
 */
#include <immintrin.h>

#include "backends/cpu/blocked_f32.h"
#include "backends/cpu/vact_f32_avx512.h"

#define VBIN_INLINE static inline __attribute__((always_inline))

VBIN_INLINE __m512 apply(const tc__vbinary_op op, __m512 a, __m512 b) {
    switch (op) {
    case TC__VBINARY_ADD: return _mm512_add_ps(a, b);
    case TC__VBINARY_SUB: return _mm512_sub_ps(a, b);
    case TC__VBINARY_MUL: return _mm512_mul_ps(a, b);
    case TC__VBINARY_DIV: return _mm512_div_ps(a, b);
    }
    return a;
}

/* SA, SB: the operands' pixel strides (16, or 0 for a vector loaded once). */
VBIN_INLINE void loop(const tc__vbinary_op op, const int SA, const int SB, tc__vbinary_nchw16c_operand a,
                      tc__vbinary_nchw16c_operand b, const float *res, float *y, int64_t n, const tc__vact *act) {
    const tc__vact av = *act; /* a local copy: stores to y cannot change it */
    const __m512 fa = _mm512_loadu_ps(a.p), fb = _mm512_loadu_ps(b.p);
    if (res == NULL && av.kind == TC__VACT_NONE) {
        for (int64_t i = 0; i < n; i++) {
            __m512 va = SA ? _mm512_loadu_ps(a.p + i * 16) : fa, vb = SB ? _mm512_loadu_ps(b.p + i * 16) : fb;
            _mm512_storeu_ps(y + i * 16, apply(op, va, vb));
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        __m512 va = SA ? _mm512_loadu_ps(a.p + i * 16) : fa, vb = SB ? _mm512_loadu_ps(b.p + i * 16) : fb;
        __m512 v = apply(op, va, vb);
        if (res) v = _mm512_add_ps(v, _mm512_loadu_ps(res + i * 16));
        _mm512_storeu_ps(y + i * 16, tc__vact_f32_avx512(v, &av));
    }
}

/* The loop of op for the operands' strides. */
VBIN_INLINE void strides(const tc__vbinary_op op, tc__vbinary_nchw16c_operand a, tc__vbinary_nchw16c_operand b,
                         const float *res, float *y, int64_t n, const tc__vact *act) {
    if (a.stride && b.stride) loop(op, 16, 16, a, b, res, y, n, act);
    else if (a.stride) loop(op, 16, 0, a, b, res, y, n, act);
    else if (b.stride) loop(op, 0, 16, a, b, res, y, n, act);
    else loop(op, 0, 0, a, b, res, y, n, act);
}

void tc__vbinary_nchw16c_f32_avx512(tc__vbinary_op op, tc__vbinary_nchw16c_operand a, tc__vbinary_nchw16c_operand b,
                                    const float *res, float *y, int64_t n, const tc__vact *act) {
    if (n <= 0) return;
    switch (op) {
    case TC__VBINARY_ADD: strides(TC__VBINARY_ADD, a, b, res, y, n, act); break;
    case TC__VBINARY_SUB: strides(TC__VBINARY_SUB, a, b, res, y, n, act); break;
    case TC__VBINARY_MUL: strides(TC__VBINARY_MUL, a, b, res, y, n, act); break;
    case TC__VBINARY_DIV: strides(TC__VBINARY_DIV, a, b, res, y, n, act); break;
    }
}
