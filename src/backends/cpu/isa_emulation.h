/* isa_emulation.h - AVX-512 (F/BW/VL/DQ/VNNI/BF16/FP16) intrinsics in portable C for an emulation build.
 *
 * `cmake -DTC_ISA_EMULATION=ON` force-includes this header into every *_avx512*.c kernel file and compiles
 * those files for AVX2 only, so that the test suite runs the AVX-512 kernels (and, with TC_AMX_EMULATE, the
 * AMX tactics around them) on a CPU without AVX-512: correctness only, not speed. The intrinsics come from
 * SIMDe (Debian's libsimde-dev) through its native aliases; the ones SIMDe 0.7.4 lacks are defined below,
 * lane by lane from the Intel SDM's pseudocode (masked loads and stores touch only the selected lanes). The
 * SLEEF AVX-512 functions run as two AVX2 halves. Never part of a normal build. */
#ifndef TC_BACKENDS_CPU_ISA_EMULATION_H
#define TC_BACKENDS_CPU_ISA_EMULATION_H

#include <immintrin.h>
#include <math.h>
#include <sleef.h>
#include <stdint.h>
#include <string.h>

#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#ifdef I
#undef I /* <complex.h>'s, which SIMDe includes: the kernels use I as a name */
#endif

/* Lane access through SIMDe's private unions. */
#define TC_EMU_PS(v) simde__m512_to_private(v)
#define TC_EMU_PD(v) simde__m512d_to_private(v)
#define TC_EMU_SI(v) simde__m512i_to_private(v)

static inline simde__m512 tc_emu_ps_from(const float f[16]) {
    simde__m512_private r;
    memcpy(&r, f, 64);
    return simde__m512_from_private(r);
}
static inline simde__m512i tc_emu_si_from(const void *b) {
    simde__m512i_private r;
    memcpy(&r, b, 64);
    return simde__m512i_from_private(r);
}
static inline simde__m512d tc_emu_pd_from(const double d[8]) {
    simde__m512d_private r;
    memcpy(&r, d, 64);
    return simde__m512d_from_private(r);
}

/* ---- masked loads and stores ---- */

static inline simde__m512 tc_emu_mask_loadu_ps(simde__m512 src, simde__mmask16 k, const void *p) {
    simde__m512_private s = TC_EMU_PS(src);
    for (int i = 0; i < 16; i++)
        if (k >> i & 1) memcpy(&s.f32[i], (const char *)p + 4 * i, 4);
    return simde__m512_from_private(s);
}
static inline simde__m512 tc_emu_maskz_loadu_ps(simde__mmask16 k, const void *p) {
    return tc_emu_mask_loadu_ps(simde_mm512_setzero_ps(), k, p);
}
static inline simde__m512 tc_emu_mask_expandloadu_ps(simde__m512 src, simde__mmask16 k, const void *p) {
    simde__m512_private s = TC_EMU_PS(src);
    int j = 0;
    for (int i = 0; i < 16; i++)
        if (k >> i & 1) memcpy(&s.f32[i], (const char *)p + 4 * j++, 4);
    return simde__m512_from_private(s);
}
static inline simde__m512 tc_emu_maskz_expandloadu_ps(simde__mmask16 k, const void *p) {
    return tc_emu_mask_expandloadu_ps(simde_mm512_setzero_ps(), k, p);
}
static inline void tc_emu_mask_storeu_ps(void *p, simde__mmask16 k, simde__m512 a) {
    simde__m512_private s = TC_EMU_PS(a);
    for (int i = 0; i < 16; i++)
        if (k >> i & 1) memcpy((char *)p + 4 * i, &s.f32[i], 4);
}
static inline void tc_emu_mask_storeu_epi32(void *p, simde__mmask16 k, simde__m512i a) {
    simde__m512i_private s = TC_EMU_SI(a);
    for (int i = 0; i < 16; i++)
        if (k >> i & 1) memcpy((char *)p + 4 * i, &s.i32[i], 4);
}
static inline void tc_emu_mask_storeu_epi16_512(void *p, simde__mmask32 k, simde__m512i a) {
    simde__m512i_private s = TC_EMU_SI(a);
    for (int i = 0; i < 32; i++)
        if (k >> i & 1) memcpy((char *)p + 2 * i, &s.i16[i], 2);
}
static inline void tc_emu_mask_storeu_epi16_256(void *p, simde__mmask16 k, __m256i a) {
    int16_t s[16];
    memcpy(s, &a, 32);
    for (int i = 0; i < 16; i++)
        if (k >> i & 1) memcpy((char *)p + 2 * i, &s[i], 2);
}
static inline void tc_emu_mask_storeu_epi8_128(void *p, simde__mmask16 k, __m128i a) {
    int8_t s[16];
    memcpy(s, &a, 16);
    for (int i = 0; i < 16; i++)
        if (k >> i & 1) ((int8_t *)p)[i] = s[i];
}
static inline simde__m512i tc_emu_maskz_loadu_epi8_512(simde__mmask64 k, const void *p) {
    simde__m512i_private s = TC_EMU_SI(simde_mm512_setzero_si512());
    for (int i = 0; i < 64; i++)
        if (k >> i & 1) s.i8[i] = ((const int8_t *)p)[i];
    return simde__m512i_from_private(s);
}
static inline simde__m512i tc_emu_maskz_loadu_epi32(simde__mmask16 k, const void *p) {
    simde__m512i_private s = TC_EMU_SI(simde_mm512_setzero_si512());
    for (int i = 0; i < 16; i++)
        if (k >> i & 1) memcpy(&s.i32[i], (const char *)p + 4 * i, 4);
    return simde__m512i_from_private(s);
}
static inline __m256i tc_emu_maskz_loadu_epi16_256(simde__mmask16 k, const void *p) {
    int16_t s[16] = {0};
    for (int i = 0; i < 16; i++)
        if (k >> i & 1) memcpy(&s[i], (const char *)p + 2 * i, 2);
    __m256i r;
    memcpy(&r, s, 32);
    return r;
}
static inline __m128i tc_emu_maskz_loadu_epi8_128(simde__mmask16 k, const void *p) {
    int8_t s[16] = {0};
    for (int i = 0; i < 16; i++)
        if (k >> i & 1) s[i] = ((const int8_t *)p)[i];
    __m128i r;
    memcpy(&r, s, 16);
    return r;
}

/* ---- gathers and scatters (scale in bytes) ---- */

static inline simde__m512 tc_emu_mask_i32gather_ps(simde__m512 src, simde__mmask16 k, simde__m512i idx, const void *base,
                                                   int scale) {
    simde__m512_private s = TC_EMU_PS(src);
    simde__m512i_private x = TC_EMU_SI(idx);
    for (int i = 0; i < 16; i++)
        if (k >> i & 1) memcpy(&s.f32[i], (const char *)base + (ptrdiff_t)x.i32[i] * scale, 4);
    return simde__m512_from_private(s);
}
static inline void tc_emu_mask_i32scatter_ps(void *base, simde__mmask16 k, simde__m512i idx, simde__m512 v, int scale) {
    simde__m512_private s = TC_EMU_PS(v);
    simde__m512i_private x = TC_EMU_SI(idx);
    for (int i = 0; i < 16; i++)
        if (k >> i & 1) memcpy((char *)base + (ptrdiff_t)x.i32[i] * scale, &s.f32[i], 4);
}

/* ---- comparisons ---- */

static inline simde__mmask16 tc_emu_cmplt_epi32_mask(simde__m512i a, simde__m512i b) {
    simde__m512i_private x = TC_EMU_SI(a), y = TC_EMU_SI(b);
    simde__mmask16 k = 0;
    for (int i = 0; i < 16; i++) k |= (simde__mmask16)((x.i32[i] < y.i32[i]) << i);
    return k;
}
static inline simde__mmask16 tc_emu_mask_cmplt_epu32_mask(simde__mmask16 m, simde__m512i a, simde__m512i b) {
    simde__m512i_private x = TC_EMU_SI(a), y = TC_EMU_SI(b);
    simde__mmask16 k = 0;
    for (int i = 0; i < 16; i++) k |= (simde__mmask16)((x.u32[i] < y.u32[i]) << i);
    return k & m;
}
/* The predicates the kernels use; anything else aborts (a missing emulation, not a result). */
static inline simde__mmask16 tc_emu_mask_cmp_ps_mask(simde__mmask16 m, simde__m512 a, simde__m512 b, int pred) {
    simde__m512_private x = TC_EMU_PS(a), y = TC_EMU_PS(b);
    simde__mmask16 k = 0;
    for (int i = 0; i < 16; i++) {
        float p = x.f32[i], q = y.f32[i];
        int t;
        switch (pred) {
        case _CMP_EQ_OQ: t = p == q; break;
        case _CMP_LT_OQ: case _CMP_LT_OS: t = p < q; break;
        case _CMP_LE_OQ: case _CMP_LE_OS: t = p <= q; break;
        case _CMP_GT_OQ: case _CMP_GT_OS: t = p > q; break;
        case _CMP_GE_OQ: case _CMP_GE_OS: t = p >= q; break;
        case _CMP_NEQ_UQ: t = !(p == q); break;
        case _CMP_UNORD_Q: t = isnan(p) || isnan(q); break;
        case _CMP_ORD_Q: t = !isnan(p) && !isnan(q); break;
        default: __builtin_trap();
        }
        k |= (simde__mmask16)(t << i);
    }
    return k & m;
}

/* ---- conversions ---- */

static inline simde__m512 tc_emu_cvtepi32_ps(simde__m512i a) {
    simde__m512i_private x = TC_EMU_SI(a);
    float f[16];
    for (int i = 0; i < 16; i++) f[i] = (float)x.i32[i];
    return tc_emu_ps_from(f);
}
/* Each lane rounded by round (truncf: toward zero; nearbyintf: to nearest even, the default MXCSR); out of range and
 * NaN give INT32_MIN, as the hardware does. */
static inline simde__m512i tc_emu_cvt_ps_epi32(simde__m512 a, float (*round)(float)) {
    simde__m512_private x = TC_EMU_PS(a);
    int32_t r[16];
    for (int i = 0; i < 16; i++) {
        float v = round(x.f32[i]);
        r[i] = (v >= -2147483648.0f && v < 2147483648.0f) ? (int32_t)v : INT32_MIN;
    }
    return tc_emu_si_from(r);
}
static inline simde__m512i tc_emu_cvttps_epi32(simde__m512 a) { return tc_emu_cvt_ps_epi32(a, truncf); }
static inline simde__m512i tc_emu_cvtps_epi32(simde__m512 a) { return tc_emu_cvt_ps_epi32(a, nearbyintf); }
static inline simde__m512i tc_emu_cvtepi8_epi32(__m128i a) {
    int8_t s[16];
    int32_t r[16];
    memcpy(s, &a, 16);
    for (int i = 0; i < 16; i++) r[i] = s[i];
    return tc_emu_si_from(r);
}
static inline simde__m512i tc_emu_cvtepu8_epi32(__m128i a) {
    uint8_t s[16];
    int32_t r[16];
    memcpy(s, &a, 16);
    for (int i = 0; i < 16; i++) r[i] = s[i];
    return tc_emu_si_from(r);
}
static inline simde__m512i tc_emu_cvtepu16_epi32(__m256i a) {
    uint16_t s[16];
    int32_t r[16];
    memcpy(s, &a, 32);
    for (int i = 0; i < 16; i++) r[i] = s[i];
    return tc_emu_si_from(r);
}
/* VRCP14PS: the hardware's estimate is within 2^-14 of 1 / x; this is 1 / x itself (SIMDe 0.7.4 lacks it). */
static inline simde__m512 tc_emu_rcp14_ps(simde__m512 a) {
    simde__m512_private x = TC_EMU_PS(a);
    float r[16];
    for (int i = 0; i < 16; i++) r[i] = 1.0f / x.f32[i];
    return tc_emu_ps_from(r);
}
/* 16 dwords to bytes: truncated (VPMOVDB) or as unsigned saturated at 255 (VPMOVUSDB). */
static inline __m128i tc_emu_narrow_epi32(simde__m512i a, int saturate) {
    simde__m512i_private x = TC_EMU_SI(a);
    uint8_t r[16];
    for (int i = 0; i < 16; i++) r[i] = saturate && x.u32[i] > 255u ? 255u : (uint8_t)(x.u32[i] & 0xffu);
    __m128i v;
    memcpy(&v, r, 16);
    return v;
}
static inline __m128i tc_emu_cvtepi32_epi8(simde__m512i a) { return tc_emu_narrow_epi32(a, 0); }
static inline __m128i tc_emu_cvtusepi32_epi8(simde__m512i a) { return tc_emu_narrow_epi32(a, 1); }
static inline __m256 tc_emu_cvtpd_ps(simde__m512d a) {
    simde__m512d_private x = TC_EMU_PD(a);
    float r[8];
    for (int i = 0; i < 8; i++) r[i] = (float)x.f64[i];
    return _mm256_loadu_ps(r);
}
static inline simde__m512d tc_emu_cvtps_pd(__m256 a) {
    float s[8];
    double r[8];
    _mm256_storeu_ps(s, a);
    for (int i = 0; i < 8; i++) r[i] = s[i];
    return tc_emu_pd_from(r);
}
static inline __m256 tc_emu_extractf32x8_ps(simde__m512 a, int hi) {
    simde__m512_private x = TC_EMU_PS(a);
    return _mm256_loadu_ps(&x.f32[hi ? 8 : 0]);
}
/* F16C does each half. */
static inline simde__m512 tc_emu_cvtph_ps(__m256i a) {
    float f[16];
    _mm256_storeu_ps(f, _mm256_cvtph_ps(_mm256_castsi256_si128(a)));
    _mm256_storeu_ps(f + 8, _mm256_cvtph_ps(_mm256_extracti128_si256(a, 1)));
    return tc_emu_ps_from(f);
}
#define tc_emu_cvtps_ph(a, rounding)                                                                      \
    __extension__({                                                                                       \
        simde__m512_private tc_emu_x_ = TC_EMU_PS(a);                                                     \
        __m128i tc_emu_lo_ = _mm256_cvtps_ph(_mm256_loadu_ps(&tc_emu_x_.f32[0]), (rounding) & 7);          \
        __m128i tc_emu_hi_ = _mm256_cvtps_ph(_mm256_loadu_ps(&tc_emu_x_.f32[8]), (rounding) & 7);          \
        _mm256_setr_m128i(tc_emu_lo_, tc_emu_hi_);                                                        \
    })

/* BF16 as VCVTNEPS2BF16: denormal inputs flushed to a signed zero, NaN kept quiet, else nearest even. */
static inline uint16_t tc_emu_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7f800000u) == 0) return (uint16_t)((u >> 16) & 0x8000u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static inline simde__m512bh tc_emu_cvtne2ps_pbh(simde__m512 a, simde__m512 b) {
    simde__m512_private x = TC_EMU_PS(a), y = TC_EMU_PS(b);
    uint16_t r[32];
    for (int i = 0; i < 16; i++) {
        r[i] = tc_emu_bf16(y.f32[i]);
        r[16 + i] = tc_emu_bf16(x.f32[i]);
    }
    simde__m512bh_private p;
    memcpy(&p, r, 64);
    return simde__m512bh_from_private(p);
}
static inline simde__m256bh tc_emu_cvtneps_pbh(simde__m512 a) {
    simde__m512_private x = TC_EMU_PS(a);
    uint16_t r[16];
    for (int i = 0; i < 16; i++) r[i] = tc_emu_bf16(x.f32[i]);
    simde__m256bh v;
    memcpy(&v, r, 32);
    return v;
}

/* Blocks 0 and 1 from a, 2 and 3 from b, each chosen by two bits of imm. */
static inline simde__m512 tc_emu_shuffle_f32x4(simde__m512 a, simde__m512 b, int imm) {
    simde__m512_private x = TC_EMU_PS(a), y = TC_EMU_PS(b);
    float f[16];
    for (int blk = 0; blk < 4; blk++) {
        int sel = (imm >> (2 * blk)) & 3;
        memcpy(&f[4 * blk], blk < 2 ? &x.f32[4 * sel] : &y.f32[4 * sel], 16);
    }
    return tc_emu_ps_from(f);
}

/* ---- double-precision helpers ---- */

static inline simde__m512d tc_emu_mask3_fmadd_pd(simde__m512d a, simde__m512d b, simde__m512d c, simde__mmask8 k) {
    simde__m512d_private x = TC_EMU_PD(a), y = TC_EMU_PD(b), z = TC_EMU_PD(c);
    for (int i = 0; i < 8; i++)
        if (k >> i & 1) z.f64[i] = fma(x.f64[i], y.f64[i], z.f64[i]);
    return simde__m512d_from_private(z);
}
/* The same pairwise tree as GCC's _mm512_reduce_* (halves, then quarters, ...). */
static inline double tc_emu_reduce_add_pd(simde__m512d a) {
    simde__m512d_private x = TC_EMU_PD(a);
    double t[4];
    for (int i = 0; i < 4; i++) t[i] = x.f64[i] + x.f64[i + 4];
    return (t[0] + t[2]) + (t[1] + t[3]);
}
/* MAXPS semantics (the second operand when either is NaN), in GCC's order: halves, quarters, pairs. */
static inline float tc_emu_maxps(float a, float b) { return a > b ? a : b; }
/* GCC's order: the upper half onto the lower, 256, 128, 64 and then 32 bits apart. */
static inline float tc_emu_reduce_add_ps(simde__m512 a) {
    simde__m512_private x = TC_EMU_PS(a);
    float t[16];
    for (int i = 0; i < 16; i++) t[i] = x.f32[i];
    for (int w = 8; w >= 1; w /= 2)
        for (int i = 0; i < w; i++) t[i] = t[i] + t[i + w];
    return t[0];
}
static inline float tc_emu_reduce_max_ps(simde__m512 a) {
    simde__m512_private x = TC_EMU_PS(a);
    float t[8], q[4];
    for (int i = 0; i < 8; i++) t[i] = tc_emu_maxps(x.f32[i + 8], x.f32[i]);
    for (int i = 0; i < 4; i++) q[i] = tc_emu_maxps(t[i + 4], t[i]);
    float p0 = tc_emu_maxps(q[0], q[2]), p1 = tc_emu_maxps(q[1], q[3]);
    return tc_emu_maxps(p0, p1);
}

/* ---- AVX512-FP16 (the subset hconv_f16 uses), lane by lane in _Float16 ---- */

typedef _Float16 tc_emu_m512h __attribute__((vector_size(64), may_alias));
static inline tc_emu_m512h tc_emu_setzero_ph(void) { return (tc_emu_m512h){0}; }
static inline tc_emu_m512h tc_emu_loadu_ph(const void *p) {
    tc_emu_m512h r;
    memcpy(&r, p, 64);
    return r;
}
static inline tc_emu_m512h tc_emu_fmadd_ph(tc_emu_m512h a, tc_emu_m512h b, tc_emu_m512h c) {
    for (int i = 0; i < 32; i++) c[i] = (_Float16)fma((double)a[i], (double)b[i], (double)c[i]);
    return c;
}
static inline simde__m512i tc_emu_castph_si512(tc_emu_m512h a) { return tc_emu_si_from(&a); }
static inline tc_emu_m512h tc_emu_castsi512_ph(simde__m512i a) {
    simde__m512i_private x = TC_EMU_SI(a);
    tc_emu_m512h r;
    memcpy(&r, &x, 64);
    return r;
}

/* ---- SLEEF's AVX-512 functions as two AVX2 halves ---- */

#define TC_EMU_SLEEF16(name, avx2)                                                                \
    static inline simde__m512 name(simde__m512 a) {                                               \
        simde__m512_private x = TC_EMU_PS(a);                                                     \
        float f[16];                                                                              \
        _mm256_storeu_ps(f, avx2(_mm256_loadu_ps(&x.f32[0])));                                    \
        _mm256_storeu_ps(f + 8, avx2(_mm256_loadu_ps(&x.f32[8])));                                \
        return tc_emu_ps_from(f);                                                                 \
    }
TC_EMU_SLEEF16(tc_emu_sleef_expf16, Sleef_expf8_u10avx2)
TC_EMU_SLEEF16(tc_emu_sleef_erff16, Sleef_erff8_u10avx2)
TC_EMU_SLEEF16(tc_emu_sleef_erfcf16, Sleef_erfcf8_u15avx2)
TC_EMU_SLEEF16(tc_emu_sleef_tanhf16, Sleef_tanhf8_u10avx2)

/* ---- the names the kernels use (without optimization GCC defines some as macros: #undef first) ---- */

#undef _mm512_mask_loadu_ps
#define _mm512_mask_loadu_ps tc_emu_mask_loadu_ps
#undef _mm512_maskz_loadu_ps
#define _mm512_maskz_loadu_ps tc_emu_maskz_loadu_ps
#undef _mm512_mask_expandloadu_ps
#define _mm512_mask_expandloadu_ps tc_emu_mask_expandloadu_ps
#undef _mm512_maskz_expandloadu_ps
#define _mm512_maskz_expandloadu_ps tc_emu_maskz_expandloadu_ps
#undef _mm512_mask_storeu_ps
#define _mm512_mask_storeu_ps tc_emu_mask_storeu_ps
#undef _mm512_mask_storeu_epi32
#define _mm512_mask_storeu_epi32 tc_emu_mask_storeu_epi32
#undef _mm512_mask_storeu_epi16
#define _mm512_mask_storeu_epi16 tc_emu_mask_storeu_epi16_512
#undef _mm256_mask_storeu_epi16
#define _mm256_mask_storeu_epi16 tc_emu_mask_storeu_epi16_256
#undef _mm_mask_storeu_epi8
#define _mm_mask_storeu_epi8 tc_emu_mask_storeu_epi8_128
#undef _mm_maskz_loadu_epi8
#define _mm_maskz_loadu_epi8 tc_emu_maskz_loadu_epi8_128
#undef _mm256_maskz_loadu_epi16
#define _mm256_maskz_loadu_epi16 tc_emu_maskz_loadu_epi16_256
#undef _mm512_maskz_loadu_epi32
#define _mm512_maskz_loadu_epi32 tc_emu_maskz_loadu_epi32
#undef _mm512_maskz_loadu_epi8
#define _mm512_maskz_loadu_epi8 tc_emu_maskz_loadu_epi8_512
#undef _mm512_mask_i32gather_ps
#define _mm512_mask_i32gather_ps tc_emu_mask_i32gather_ps
#undef _mm512_mask_i32scatter_ps
#define _mm512_mask_i32scatter_ps tc_emu_mask_i32scatter_ps
#undef _mm512_cmplt_epi32_mask
#define _mm512_cmplt_epi32_mask tc_emu_cmplt_epi32_mask
#undef _mm512_cmplt_epu32_mask
#define _mm512_cmplt_epu32_mask(a, b) tc_emu_mask_cmplt_epu32_mask((simde__mmask16)0xffff, a, b)
#undef _mm512_mask_cmplt_epu32_mask
#define _mm512_mask_cmplt_epu32_mask tc_emu_mask_cmplt_epu32_mask
#undef _mm512_mask_cmp_ps_mask
#define _mm512_mask_cmp_ps_mask tc_emu_mask_cmp_ps_mask
#undef _mm512_cvtepi32_ps
#define _mm512_cvtepi32_ps tc_emu_cvtepi32_ps
#undef _mm512_cvtps_epi32
#define _mm512_cvtps_epi32 tc_emu_cvtps_epi32
#undef _mm512_cvttps_epi32
#define _mm512_cvttps_epi32 tc_emu_cvttps_epi32
#undef _mm512_cvtepi8_epi32
#define _mm512_cvtepi8_epi32 tc_emu_cvtepi8_epi32
#undef _mm512_cvtepu8_epi32
#define _mm512_cvtepu8_epi32 tc_emu_cvtepu8_epi32
#undef _mm512_cvtepu16_epi32
#define _mm512_cvtepu16_epi32 tc_emu_cvtepu16_epi32
#undef _mm512_rcp14_ps
#define _mm512_rcp14_ps tc_emu_rcp14_ps
#undef _mm512_cvtepi32_epi8
#define _mm512_cvtepi32_epi8 tc_emu_cvtepi32_epi8
#undef _mm512_cvtusepi32_epi8
#define _mm512_cvtusepi32_epi8 tc_emu_cvtusepi32_epi8
#undef _mm512_cvtpd_ps
#define _mm512_cvtpd_ps tc_emu_cvtpd_ps
#undef _mm512_cvtps_pd
#define _mm512_cvtps_pd tc_emu_cvtps_pd
#undef _mm512_extractf32x8_ps
#define _mm512_extractf32x8_ps tc_emu_extractf32x8_ps
#undef _mm512_cvtph_ps
#define _mm512_cvtph_ps tc_emu_cvtph_ps
#undef _mm512_cvtps_ph
#define _mm512_cvtps_ph tc_emu_cvtps_ph
#undef _mm512_cvtne2ps_pbh
#define _mm512_cvtne2ps_pbh tc_emu_cvtne2ps_pbh
#undef _mm512_cvtneps_pbh
#define _mm512_cvtneps_pbh tc_emu_cvtneps_pbh
#undef _mm512_shuffle_f32x4
#define _mm512_shuffle_f32x4 tc_emu_shuffle_f32x4
#undef _mm512_mask3_fmadd_pd
#define _mm512_mask3_fmadd_pd tc_emu_mask3_fmadd_pd
#undef _mm512_reduce_add_pd
#define _mm512_reduce_add_pd tc_emu_reduce_add_pd
/* SIMDe 0.7.4 aliases _mm512_madd_epi16 with the masked form's four arguments; the function takes two. */
#undef _mm512_madd_epi16
#define _mm512_madd_epi16 simde_mm512_madd_epi16
#undef _mm512_reduce_max_ps
#define _mm512_reduce_max_ps tc_emu_reduce_max_ps
#undef _mm512_reduce_add_ps
#define _mm512_reduce_add_ps tc_emu_reduce_add_ps
#undef __m512h
#define __m512h tc_emu_m512h
#undef _mm512_setzero_ph
#define _mm512_setzero_ph tc_emu_setzero_ph
#undef _mm512_loadu_ph
#define _mm512_loadu_ph tc_emu_loadu_ph
#undef _mm512_fmadd_ph
#define _mm512_fmadd_ph tc_emu_fmadd_ph
#undef _mm512_castph_si512
#define _mm512_castph_si512 tc_emu_castph_si512
#undef _mm512_castsi512_ph
#define _mm512_castsi512_ph tc_emu_castsi512_ph
#undef Sleef_expf16_u10avx512f
#define Sleef_expf16_u10avx512f tc_emu_sleef_expf16
#undef Sleef_erff16_u10avx512f
#define Sleef_erff16_u10avx512f tc_emu_sleef_erff16
#undef Sleef_erfcf16_u15avx512f
#define Sleef_erfcf16_u15avx512f tc_emu_sleef_erfcf16
#undef Sleef_tanhf16_u10avx512f
#define Sleef_tanhf16_u10avx512f tc_emu_sleef_tanhf16

#endif
