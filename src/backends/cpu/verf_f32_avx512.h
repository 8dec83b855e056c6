/*
 * verf_f32_avx512.h - erf, the normal CDF Phi and GELU (erf form) on 16 floats with AVX-512, inline (SLEEF's
 * erff16/erfcf16 are library calls of ~100 cycles a vector, which made BERT's fused FFN1 GELU epilogue cost ~0.9 ms a
 * layer). Include only from files compiled for AVX-512 (*_avx512.c).
 *
 * With z = |x|: z < 0.921875: erf(z) = z P(z^2) (degree 5); else erfc(z) = exp(Q(z)) (degree 8, fitted on
 * [0.921875, 3.925]; erfc(3.925) = 1.3e-8, beyond it erf is +-1 and Phi of a negative x is 0); exp by a degree-6
 * polynomial times 2^n. Coefficients: minimax fits (tools/gen/erf_fit.py). Phi(x) = 1 - erfc(|x| / sqrt 2) / 2 for
 * x > 0 and erfc(|x| / sqrt 2) / 2 for x < 0, so GELU = x Phi(x) keeps its relative accuracy for negative x (the
 * form 0.5 x (1 + erf) cancels). Float evaluation against double on a 2M-point grid of [-9, 9]: GELU within 3.9e-7
 * absolute (below one ULP of the value there) and 1.4e-6 relative wherever |GELU| > 1e-3; erf within 1.2e-7 absolute.
 * NaN stays NaN; GELU(-inf) is NaN, as 0.5 x (1 + erf) is.
 */
#ifndef TC_BACKENDS_CPU_VERF_F32_AVX512_H
#define TC_BACKENDS_CPU_VERF_F32_AVX512_H

#include <immintrin.h>

#define TC__ERF_SPLIT 0.921875f
#define TC__ERF_ZMAX 3.925f

/* e^y for y in [-90, 0] (what Q gives): y = n ln2 + r, |r| <= ln2 / 2. */
static inline __m512 tc__vexp_neg_f32_avx512(__m512 y) {
    const __m512 n = _mm512_cvtepi32_ps(_mm512_cvtps_epi32(_mm512_mul_ps(y, _mm512_set1_ps(1.44269504088896341f))));
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), y); /* ln2 in two parts (Cody-Waite) */
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(0.001383683f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.008374816f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.041668225f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.1666642f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.4999999f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    const __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    return _mm512_mul_ps(p, _mm512_castsi512_ps(e));
}

/* erf(z) / z for z < TC__ERF_SPLIT, from u = z^2. */
static inline __m512 tc__verf_small_f32_avx512(__m512 u) {
    __m512 p = _mm512_set1_ps(-0.0005991156f);
    p = _mm512_fmadd_ps(p, u, _mm512_set1_ps(0.0049932515f));
    p = _mm512_fmadd_ps(p, u, _mm512_set1_ps(-0.026766676f));
    p = _mm512_fmadd_ps(p, u, _mm512_set1_ps(0.11281818f));
    p = _mm512_fmadd_ps(p, u, _mm512_set1_ps(-0.37612495f));
    return _mm512_fmadd_ps(p, u, _mm512_set1_ps(1.1283791f));
}

/* erfc(z) for z >= 0 (NaN stays NaN); z is clamped to TC__ERF_ZMAX, whose erfc is 1.3e-8. */
static inline __m512 tc__verfc_big_f32_avx512(__m512 z) {
    z = _mm512_min_ps(_mm512_set1_ps(TC__ERF_ZMAX), z); /* a NaN z is the second operand: kept */
    __m512 q = _mm512_set1_ps(1.6306711e-06f);
    q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(-4.5893998e-05f));
    q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(0.0005951149f));
    q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(-0.0047502136f));
    q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(0.02639028f));
    q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(-0.11001833f));
    q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(-0.6318996f));
    q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(-1.1301857f));
    q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(0.00030722073f));
    return tc__vexp_neg_f32_avx512(q);
}

/* erf(x). */
static inline __m512 tc__verf_f32_avx512(__m512 x) {
    const __m512 z = _mm512_abs_ps(x), one = _mm512_set1_ps(1.0f);
    const __m512 small = _mm512_mul_ps(x, tc__verf_small_f32_avx512(_mm512_mul_ps(x, x)));
    __m512 big = _mm512_sub_ps(one, tc__verfc_big_f32_avx512(z));
    big = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(z, _mm512_set1_ps(TC__ERF_ZMAX), _CMP_GT_OQ), big, one);
    big = _mm512_mask_sub_ps(big, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), _mm512_setzero_ps(), big);
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(z, _mm512_set1_ps(TC__ERF_SPLIT), _CMP_LT_OQ), big, small);
}

/* GELU(x) = x Phi(x) = x / 2 (1 + erf(x / sqrt 2)). */
static inline __m512 tc__vgelu_erf_f32_avx512(__m512 x) {
    const __m512 half = _mm512_set1_ps(0.5f);
    const __m512 t = _mm512_mul_ps(x, _mm512_set1_ps(0.70710678118654752f)), z = _mm512_abs_ps(t);
    /* |t| small: 1/2 + t P(t^2) / 2 */
    const __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(t, half), tc__verf_small_f32_avx512(_mm512_mul_ps(t, t)), half);
    /* else erfc(|t|) / 2 for x < 0 (0 past TC__ERF_ZMAX), 1 - erfc(|t|) / 2 for x > 0 */
    const __m512 h = _mm512_mul_ps(half, tc__verfc_big_f32_avx512(z));
    __m512 big = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(z, _mm512_set1_ps(TC__ERF_ZMAX), _CMP_NGT_UQ), h);
    big = _mm512_mask_sub_ps(big, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ), _mm512_set1_ps(1.0f), h);
    return _mm512_mul_ps(x, _mm512_mask_blend_ps(_mm512_cmp_ps_mask(z, _mm512_set1_ps(TC__ERF_SPLIT), _CMP_LT_OQ),
                                                 big, small));
}

#endif
