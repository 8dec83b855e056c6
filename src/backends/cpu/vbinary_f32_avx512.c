/*
 * vbinary_f32_avx512.c - the AVX-512 Add / Sub / Mul / Div microkernels: vector-vector and
 * vector-scalar microkernels, 16 floats per step with a masked tail, with the fused epilogue
 * (residual, activation) applied before the store.
 */
#include <immintrin.h>

#include "backends/cpu/vact_f32_avx512.h"
#include "backends/cpu/vbinary_f32.h"

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

/* Epilogue and store of lanes m at y (residual at res, same offset). */
VBIN_INLINE void store(float *y, const float *res, __mmask16 m, __m512 v, const tc__vact *act) {
    if (res) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, res));
    if (act->kind != TC__VACT_NONE) v = tc__vact_f32_avx512(v, act);
    _mm512_mask_storeu_ps(y, m, v);
}

/* KIND 0: op(a[i], b[i]); 1: op(a[i], s); 2: op(s, a[i]). Lanes m only. */
VBIN_INLINE __m512 compute(const tc__vbinary_op op, const int KIND, const float *a, const float *b, __m512 vs,
                           __mmask16 m) {
    __m512 va = _mm512_maskz_loadu_ps(m, a);
    return KIND == 0 ? apply(op, va, _mm512_maskz_loadu_ps(m, b)) : KIND == 1 ? apply(op, va, vs) : apply(op, vs, va);
}

VBIN_INLINE void loop(const tc__vbinary_op op, const int KIND, const float *a, const float *b, float s,
                      const float *res, float *y, int64_t n, const tc__vact *act) {
    const __m512 vs = _mm512_set1_ps(s);
    const tc__vact av = *act; /* a local copy: stores to y cannot change it */
    int64_t i = 0;
    if (res == NULL && av.kind == TC__VACT_NONE) /* one vector per step: keeps the stores in address order */
        for (; i + 16 <= n; i += 16)
            _mm512_storeu_ps(y + i, compute(op, KIND, a + i, b ? b + i : NULL, vs, (__mmask16)0xffff));
    for (; i < n; i += 16) {
        int64_t left = n - i;
        __mmask16 m = left >= 16 ? (__mmask16)0xffff : (__mmask16)(((uint32_t)1 << left) - 1);
        store(y + i, res ? res + i : NULL, m, compute(op, KIND, a + i, b ? b + i : NULL, vs, m), &av);
    }
}

static void vv(tc__vbinary_op op, const float *a, const float *b, const float *res, float *y, int64_t n,
               const tc__vact *act) {
    switch (op) {
    case TC__VBINARY_ADD: loop(TC__VBINARY_ADD, 0, a, b, 0.0f, res, y, n, act); break;
    case TC__VBINARY_SUB: loop(TC__VBINARY_SUB, 0, a, b, 0.0f, res, y, n, act); break;
    case TC__VBINARY_MUL: loop(TC__VBINARY_MUL, 0, a, b, 0.0f, res, y, n, act); break;
    case TC__VBINARY_DIV: loop(TC__VBINARY_DIV, 0, a, b, 0.0f, res, y, n, act); break;
    }
}

static void vs(tc__vbinary_op op, bool scalar_first, const float *a, float s, const float *res, float *y, int64_t n,
               const tc__vact *act) {
    switch (op) {
    case TC__VBINARY_ADD: loop(TC__VBINARY_ADD, 1, a, NULL, s, res, y, n, act); break;
    case TC__VBINARY_MUL: loop(TC__VBINARY_MUL, 1, a, NULL, s, res, y, n, act); break;
    case TC__VBINARY_SUB:
        if (scalar_first) loop(TC__VBINARY_SUB, 2, a, NULL, s, res, y, n, act);
        else loop(TC__VBINARY_SUB, 1, a, NULL, s, res, y, n, act);
        break;
    case TC__VBINARY_DIV:
        if (scalar_first) loop(TC__VBINARY_DIV, 2, a, NULL, s, res, y, n, act);
        else loop(TC__VBINARY_DIV, 1, a, NULL, s, res, y, n, act);
        break;
    }
}

const tc__vbinary_f32_ukernels tc__vbinary_f32_ukernels_avx512 = {vv, vs};
