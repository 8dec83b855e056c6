/*
 * vbinary_f32_avx2.c - the AVX2 Add / Sub / Mul / Div microkernels: vector-vector and vector-scalar
 * microkernels, 8 floats per step with a masked tail, with the fused epilogue (residual,
 * activation) applied before the store.
 */
#include <immintrin.h>

#include "backends/cpu/vact_f32_avx2.h"
#include "backends/cpu/vbinary_f32.h"

#define VBIN_INLINE static inline __attribute__((always_inline))

VBIN_INLINE __m256 apply(const tc__vbinary_op op, __m256 a, __m256 b) {
    switch (op) {
    case TC__VBINARY_ADD: return _mm256_add_ps(a, b);
    case TC__VBINARY_SUB: return _mm256_sub_ps(a, b);
    case TC__VBINARY_MUL: return _mm256_mul_ps(a, b);
    case TC__VBINARY_DIV: return _mm256_div_ps(a, b);
    }
    return a;
}

/* KIND 0: op(a[i], b[i]); 1: op(a[i], s); 2: op(s, a[i]). */
VBIN_INLINE __m256 compute(const tc__vbinary_op op, const int KIND, __m256 va, __m256 vb, __m256 vs) {
    return KIND == 0 ? apply(op, va, vb) : KIND == 1 ? apply(op, va, vs) : apply(op, vs, va);
}

VBIN_INLINE void loop(const tc__vbinary_op op, const int KIND, const float *a, const float *b, float s,
                      const float *res, float *y, int64_t n, const tc__vact *act) {
    const __m256 vs = _mm256_set1_ps(s);
    const tc__vact av = *act; /* a local copy: stores to y cannot change it */
    const bool plain = res == NULL && av.kind == TC__VACT_NONE;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = compute(op, KIND, _mm256_loadu_ps(a + i), KIND == 0 ? _mm256_loadu_ps(b + i) : vs, vs);
        if (res) v = _mm256_add_ps(v, _mm256_loadu_ps(res + i));
        if (!plain) v = tc__vact_f32_avx2(v, &av);
        _mm256_storeu_ps(y + i, v);
    }
    if (i < n) {
        __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)(n - i)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        __m256 v = compute(op, KIND, _mm256_maskload_ps(a + i, m), KIND == 0 ? _mm256_maskload_ps(b + i, m) : vs, vs);
        if (res) v = _mm256_add_ps(v, _mm256_maskload_ps(res + i, m));
        if (!plain) v = tc__vact_f32_avx2(v, &av);
        _mm256_maskstore_ps(y + i, m, v);
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

const tc__vbinary_f32_ukernels tc__vbinary_f32_ukernels_avx2 = {vv, vs};
