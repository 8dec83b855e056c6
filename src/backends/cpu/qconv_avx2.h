/*
 * qconv_avx2.h - what the AVX2 INT8 kernels share (dense qconv_s16_avx2.c, depthwise qdwconv_avx2.c; see
 * qconv_u8s8.h): the job, the quantization of X into the padded channels-last image of 16-bit centred codes
 * (or, u7, bytes of max(q, 0)), the dequantizing epilogue (bias, residual, activation) into NCHW or row-major
 * output or the next layer's image (the INT8 chain), and the run on lowp_grid.h's task loop. Included by those
 * two files only: every function is static. (qconv_s16_avx2.c also runs qimage.h's Mul on the conversion.)
 */
#ifndef TC_BACKENDS_CPU_QCONV_AVX2_H
#define TC_BACKENDS_CPU_QCONV_AVX2_H

#include <immintrin.h>
#include <string.h>

#include "backends/cpu/lowp_grid.h"
#include "backends/cpu/qconv_u8s8.h"
#include "backends/cpu/vact_f32_avx2.h"

#define S16_MR 6 /* output pixels per microkernel */

/* The AVX2 variants: 16-bit codes; u7 bytes; u7 bytes with 7-bit weights; u8 codes (q + z) with 7-bit weights; u8 codes
 * of at most 127 (tc.int8_code_max) with 7-bit weights, two quads summed in 16 bits as u7w7 does. */
typedef enum { Q_S16, Q_U7, Q_U7W7, Q_U8W7, Q_U8W7P } q_variant;

typedef struct s16_job {
    const tc__qconv_geom *g;
    const float *x;
    bool u7;     /* a byte variant (u7, u7w7, u8w7): 1-byte image elements (else int16), VNNI-packed weights (else int16) */
    bool w7;     /* u7w7 (or u8w7 on codes of at most 127): the products of two quads add in 16 bits (7-bit weights) */
    bool u8;     /* u8w7 (any X, 7-bit weights): image bytes are the codes u = q + z (border z), and the tile subtracts
                    comp[oc] = z * sum(qw[oc, :]) */
    uint8_t fill; /* the image's border byte: 0, or (u8) z */
    const int32_t *comp; /* u8: comp[Cpad16] */
    size_t esz;  /* bytes per image and weight element: 1 (u7) or 2 */
    void *img;   /* the padded input image */
    const float *chan_scale; /* NULL, or (qimage.h) X is multiplied by chan_scale[n * chan_stride + c] first */
    size_t chan_stride;
    /* The taps as runs of values contiguous in both the padded image and the packed weight: with dilation 1 along
     * the width, a kernel row's taps are adjacent pixels, so a run is a kernel row (kw * Cp values), else one tap */
    const size_t *run_off; /* element offset of each run in the padded image */
    size_t runs, run_pairs; /* runs, and channel pairs (u7: quads) per run */
    const void *w; /* the packed weight */
    const float *mult;
    const float *bias, *res;
    float *y;
    tc__vact act;
    float inv_scale;
    __m256 hiv;    /* the highest code of X's image (255, or 127: tc.int8_code_max), as a vector */
    bool r_u7;     /* the residual image (grid.rimg) holds bytes (else 16-bit codes), */
    int32_t r_zp;  /* less this zero point (u8 bytes; else 0) */
    float r_scale; /* dequantize with this scale */
    void *oimg;  /* INT8 chain: the next layer's image, else NULL */
    __m256 o_invv, o_zpv, o_lov, o_hiv; /* its 1 / scale, zero point, lowest and highest code, as vectors */
    __m256i o_zpi;
    bool o_u7;   /* its elements are bytes of max(q, 0 - o_add) + o_add (else 16-bit centred codes): */
    int16_t o_add; /* 0 (u7 bytes of max(q, 0)) or the zero point (u8 bytes of the codes q + z) */
    tc__lowp_grid grid;
} s16_job;

/*
 * The INT8 epilogue's transcendental activations are inline, without SLEEF's calls: a call in the epilogue makes the
 * tile spill every accumulator around it. Their errors (a few ulp) are far below an INT8 step of the next layer; the
 * FP32 kernels keep SLEEF for ONNX's tolerances.
 */

/*
 * e^x for x <= 0 (the sigmoid's e^-|x| and GELU's e^-z^2; NaN stays NaN): x = n ln 2 + r, |r| <= ln 2 / 2 (ln 2 in two
 * parts, as Cephes), n rounded by adding 1.5 * 2^23 + 127 so that the sum's low mantissa bits are n + 127, which
 * shifted into the exponent field are 2^n; then e^r = 1 + r p(r), p of degree 4 (coefficients fitted for this file by
 * iteratively reweighted least squares on [-ln 2 / 2, ln 2 / 2]: 3e-7 relative in float32). x is clamped at -87.3
 * (e^-87.3 ~ 1.2e-38, n = -126: the sigmoid and GELU only need ~0 there). 12 operations; Cephes' degree-6 expf with
 * a rounding and an integer conversion took 17.
 */
static inline __m256 q_exp(__m256 x) {
    x = _mm256_max_ps(_mm256_set1_ps(-87.3f), x); /* NaN: the second operand, x */
    const __m256 bias = _mm256_set1_ps(12582912.0f + 127.0f);
    __m256 n = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), bias);
    const __m256 s = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(n), 23)); /* 2^n */
    n = _mm256_sub_ps(n, bias);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(0.008160061202943325f), r, _mm256_set1_ps(0.041929278522729874f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.16670355200767517f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.4999883770942688f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.9999983906745911f));
    return _mm256_fmadd_ps(_mm256_mul_ps(r, s), p, s); /* 2^n (1 + r p) */
}

/* 1 / d for finite d >= 1 (NaN stays NaN): vrcpps refined by one Newton step, error about 1e-7 relative. A division
 * (vdivps, several cycles per vector on the divider) held the INT8 epilogue's sigmoid and GELU: half an EfficientNet
 * expansion layer's time. */
static inline __m256 q_recip12(__m256 d) {
    const __m256 r = _mm256_rcp_ps(d);
    return _mm256_mul_ps(r, _mm256_fnmadd_ps(d, r, _mm256_set1_ps(2.0f)));
}

/* sigmoid(x) through e^-|x| (tc__vsigmoid_f32_avx2's formula, with q_exp). */
static inline __m256 q_sigmoid(__m256 x) {
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 e = q_exp(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x)));
    const __m256 r = q_recip12(_mm256_add_ps(one, e));
    return _mm256_blendv_ps(r, _mm256_mul_ps(e, r), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
}

/*
 * GELU (erf): x / 2 * erfc(-x / sqrt 2), with erfc of |z| from Abramowitz and Stegun 7.1.26 (|error| <= 1.5e-7
 * absolute; about 8x cheaper than SLEEF's erfc). z >= 0 gives 2 - erfc(|z|), z < 0 erfc(|z|).
 */
static inline __m256 q_gelu(__m256 x) {
    const __m256 z = _mm256_mul_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), _mm256_set1_ps(0.70710678118654752f));
    /* t = 1 / (1 + 0.3275911 z) by vrcpps and a Newton step; the divisor, at least 1, is capped at 1e30 (t then
     * ~0 and erfc(|z|) 0, as with the division; an infinite one would give inf * 0 in the Newton step) */
    const __m256 d = _mm256_fmadd_ps(z, _mm256_set1_ps(0.3275911f), _mm256_set1_ps(1.0f));
    const __m256 t = q_recip12(_mm256_min_ps(d, _mm256_set1_ps(1e30f)));
    __m256 p = _mm256_fmadd_ps(t, _mm256_set1_ps(1.061405429f), _mm256_set1_ps(-1.453152027f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.421413741f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.284496736f));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.254829592f));
    p = _mm256_mul_ps(p, t);
    const __m256 q = _mm256_mul_ps(p, q_exp(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_mul_ps(z, z))));
    const __m256 s = _mm256_blendv_ps(_mm256_sub_ps(_mm256_set1_ps(2.0f), q), q, x); /* sign bit of x: erfc(|z|) */
    return _mm256_mul_ps(_mm256_mul_ps(x, _mm256_set1_ps(0.5f)), s);
}

/* The fused activation: the common ones inline (the same operations as tc__vact_f32_avx2; GELU, sigmoid and SiLU
 * with q_exp), the others called. */
static inline __attribute__((always_inline)) __m256 q_act(const s16_job *j, __m256 v) {
    switch (j->act.kind) {
    case TC__VACT_NONE: return v;
    case TC__VACT_GELU_ERF: return q_gelu(v);
    case TC__VACT_SIGMOID: return q_sigmoid(v);
    case TC__VACT_SILU: return _mm256_mul_ps(v, q_sigmoid(v));
    case TC__VACT_RELU: return _mm256_max_ps(v, _mm256_setzero_ps());
    case TC__VACT_CLIP: return _mm256_min_ps(_mm256_set1_ps(j->act.beta), _mm256_max_ps(_mm256_set1_ps(j->act.alpha), v));
    default: return tc__vact_f32_avx2(v, &j->act);
    }
}

/* The activations q_act computes in a few instructions (the others: q_act_batch). */
static inline bool q_act_cheap(const s16_job *j) {
    return j->act.kind == TC__VACT_NONE || j->act.kind == TC__VACT_RELU || j->act.kind == TC__VACT_CLIP;
}

/* The activation on v[0..n) in place. The transcendental ones (sigmoid, SiLU, GELU: an exp polynomial of a dozen
 * dependent steps) go a whole tile's vectors at a time, so their latency chains overlap: one vector per call left the
 * epilogue latency-bound (about 8 cycles per output of an EfficientNet expansion layer, 5x its multiply-adds). */
static __attribute__((noinline)) void q_act_batch(const s16_job *j, __m256 *v, int n) {
    switch (j->act.kind) {
    case TC__VACT_GELU_ERF:
#pragma GCC unroll 4
        for (int i = 0; i < n; i++) v[i] = q_gelu(v[i]);
        return;
    case TC__VACT_SIGMOID:
#pragma GCC unroll 4
        for (int i = 0; i < n; i++) v[i] = q_sigmoid(v[i]);
        return;
    case TC__VACT_SILU:
#pragma GCC unroll 4
        for (int i = 0; i < n; i++) v[i] = _mm256_mul_ps(v[i], q_sigmoid(v[i]));
        return;
    default:
        for (int i = 0; i < n; i++) v[i] = q_act(j, v[i]);
        return;
    }
}

/* 8 floats to 8 centred codes (u - z) in 32-bit lanes, u = round(x / s) + z clamped to [lo, hi] (NaN: lo). */
static inline __m256i s16_codes8(__m256 v, __m256 inv, __m256 z, __m256 lo, __m256 hi) {
    v = _mm256_fmadd_ps(v, inv, z);
    v = _mm256_max_ps(v, lo); /* a NaN in v gives the second operand */
    v = _mm256_min_ps(v, hi);
    return _mm256_sub_epi32(_mm256_cvtps_epi32(v), _mm256_cvtps_epi32(z));
}

/* The 8 32-bit lanes of c as 8 int16 values (they are in [-255, 255]). */
static inline __m128i s16_narrow(__m256i c) {
    return _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packs_epi32(c, c), 0x08));
}

/* The 8 32-bit lanes of c as 8 bytes max(c, 0) (c <= 127) in the low half. */
static inline __m128i u7_narrow(__m256i c) {
    const __m256i b = _mm256_packus_epi16(_mm256_packus_epi32(c, c), _mm256_setzero_si256());
    return _mm_unpacklo_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
}

/* Stores 8 centred codes (32-bit lanes of c) as image elements at element at: int16, or (u7) bytes of max(q, 0), or
 * (u8) bytes of q + z. */
static inline void img_store8(const s16_job *j, size_t at, __m256i c) {
    if (j->u8) c = _mm256_add_epi32(c, _mm256_set1_epi32(j->fill));
    if (j->u7) _mm_storel_epi64((__m128i *)((uint8_t *)j->img + at), u7_narrow(c));
    else _mm_storeu_si128((__m128i *)((int16_t *)j->img + at), s16_narrow(c));
}
/* The first n (1..8) of the 8 centred codes of c, stored as img_store8 stores them. */
static inline void img_store_n(const s16_job *j, size_t at, __m256i c, int n) {
    if (n == 8) {
        img_store8(j, at, c);
        return;
    }
    if (j->u8) c = _mm256_add_epi32(c, _mm256_set1_epi32(j->fill));
    uint8_t buf[16];
    if (j->u7) _mm_storel_epi64((__m128i *)buf, u7_narrow(c));
    else _mm_storeu_si128((__m128i *)buf, s16_narrow(c));
    memcpy((uint8_t *)j->img + at * j->esz, buf, (size_t)n * j->esz);
}

/* Transposes 8 x 8 int32 values: r[i] lane j becomes lane i of r[j]. */
static inline void s16_transpose8(__m256i r[8]) {
    __m256i t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_epi32(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        u[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);
        u[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
        u[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
        u[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
    for (int i = 0; i < 4; i++) {
        r[i] = _mm256_permute2x128_si256(u[i], u[i + 4], 0x20);
        r[i + 4] = _mm256_permute2x128_si256(u[i], u[i + 4], 0x31);
    }
}

static inline __m256 s16_load_n(const float *p, int n);

/* The image elements at element dst of channels c .. c + nc of iw pixels (channels-last, cp per pixel) from nv <= nc
 * FP32 rows (channel k at src + k * stride; the channels past nv get code 0), each times cs[k] first when cs is given:
 * blocks of 8 channels x 8 pixels transposed. */
static inline void s16_rows8(const s16_job *j, size_t dst, size_t c, int nv, int nc, const float *src, size_t stride,
                             size_t iw, const float *cs) {
    const __m256 inv = _mm256_set1_ps(j->inv_scale), z = _mm256_set1_ps((float)j->g->zero_point);
    const __m256 lo = _mm256_set1_ps((float)j->g->lo);
    const size_t cp = j->g->cp;
    for (size_t w = 0; w < iw; w += 8) {
        const int nw = w + 8 <= iw ? 8 : (int)(iw - w);
        __m256i q[8];
        for (int k = 0; k < 8; k++) {
            __m256 v = k < nv ? s16_load_n(src + (size_t)k * stride + w, nw) : _mm256_setzero_ps();
            if (cs != NULL && k < nv) v = _mm256_mul_ps(v, _mm256_set1_ps(cs[k])); /* fl(x * s) */
            q[k] = k < nv ? s16_codes8(v, inv, z, lo, j->hiv) : _mm256_setzero_si256();
        }
        s16_transpose8(q);
        for (int k = 0; k < nw; k++) img_store_n(j, dst + (w + (size_t)k) * cp + c, q[k], nc);
    }
}

/* Quantizes padded row r of image n: the border and padding channels get code 0 (x = 0: byte 0, or z with u8). */
/* Padded row `task` (image n, row r) of the image: fills it when it is a border row and returns false; else fills its
 * border columns and gives the input row h and the element index dst of its first interior pixel. */
static inline bool s16_row_begin(const s16_job *j, size_t task, size_t *n, size_t *h, size_t *dst) {
    const tc__qconv_geom *g = j->g;
    const size_t r = task % g->hp, cp = g->cp, esz = j->u7 ? 1 : 2;
    *n = task / g->hp;
    const size_t row = (*n * g->hp + r) * g->wp * cp; /* element index */
    unsigned char *bytes = j->img;
    if (r < g->pt || r >= g->pt + g->ih) {
        memset(bytes + row * esz, j->fill, g->wp * cp * esz);
        return false;
    }
    *h = r - g->pt;
    memset(bytes + row * esz, j->fill, g->pl * cp * esz);
    memset(bytes + (row + (g->pl + g->iw) * cp) * esz, j->fill, (g->wp - g->pl - g->iw) * cp * esz);
    *dst = row + g->pl * cp;
    return true;
}

static void s16_quantize_row(void *arg, size_t task) {
    const s16_job *j = arg;
    const tc__qconv_geom *g = j->g;
    const size_t cp = g->cp;
    size_t n, h, dst;
    if (!s16_row_begin(j, task, &n, &h, &dst)) return;
    const __m256 inv = _mm256_set1_ps(j->inv_scale), z = _mm256_set1_ps((float)g->zero_point);
    const __m256 lo = _mm256_set1_ps((float)g->lo);
    /* Blocks of 8 channels; the block that reaches the padding channels (cin .. cp) writes code 0 there. Tails are
     * masked loads and partial stores: no scalar path (a 7 x 7 plane would have no full vector). */
    if (g->in_layout == TC__Q_ROWS) {
        for (size_t w = 0; w < g->iw; w++) {
            const float *src = j->x + ((n * g->ih + h) * g->iw + w) * g->cin;
            for (size_t c = 0; c < cp; c += 8) {
                const int nv = c >= g->cin ? 0 : c + 8 <= g->cin ? 8 : (int)(g->cin - c), nc = c + 8 <= cp ? 8 : (int)(cp - c);
                const __m256i q = nv ? s16_codes8(s16_load_n(src + c, nv), inv, z, lo, j->hiv) : _mm256_setzero_si256();
                img_store_n(j, dst + w * cp + c, q, nc);
            }
        }
        return;
    }
    /* NCHW: blocks of 8 channels x 8 pixels transposed into the channels-last row */
    const size_t plane = g->ih * g->iw;
    const float *cs = j->chan_scale ? j->chan_scale + n * j->chan_stride : NULL;
    for (size_t c = 0; c < cp; c += 8) {
        const int nv = c >= g->cin ? 0 : c + 8 <= g->cin ? 8 : (int)(g->cin - c), nc = c + 8 <= cp ? 8 : (int)(cp - c);
        s16_rows8(j, dst, c, nv, nc, j->x + (n * g->cin + c) * plane + h * g->iw, plane, g->iw, cs ? cs + c : NULL);
    }
}

/* The first n (1..8) lanes of p (contiguous), the others 0, without reading past them. */
static inline __m256 s16_load_n(const float *p, int n) {
    if (n == 8) return _mm256_loadu_ps(p);
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_maskload_ps(p, _mm256_cmpgt_epi32(_mm256_set1_epi32(n), idx));
}

/* Stores the first n (1..8) lanes of v at p. */
static inline void s16_store_n(float *p, __m256 v, int n) {
    if (n == 8) {
        _mm256_storeu_ps(p, v);
        return;
    }
    __m128 h = _mm256_castps256_ps128(v);
    if (n >= 4) {
        _mm_storeu_ps(p, h);
        p += 4, n -= 4;
        h = _mm256_extractf128_ps(v, 1);
    }
    if (n >= 2) {
        _mm_storel_pi((__m64 *)p, h);
        p += 2, n -= 2;
        h = _mm_movehl_ps(h, h);
    }
    if (n == 1) _mm_store_ss(p, h);
}

/* The residual image's n (1..8) channels at element at, dequantized. */
static inline __m256 s16_res_image(const s16_job *j, const tc__lowp_out *o, size_t at, int n);

/*
 * NCHW output (pixels i0 .. i0 + mr consecutive in each channel's plane): per pixel, the tile's accumulators of one
 * half block (channels oc .. oc + n, n <= 8) dequantized with the channels' scale and bias vectors, plus the residual
 * image's 8 channels of the pixel (one load); then transposed to channel rows of mr pixels, the FP32 residual and the
 * activation per row, and contiguous stores. (Per channel broadcasts and a per-pixel gather of the residual image
 * cost more than the multiply-adds of a short reduction.)
 */
static inline __attribute__((always_inline)) void s16_store_nchw(const s16_job *j, const tc__lowp_out *o, int i0,
                                                                 int mr, size_t oc, const __m256i acc[8], int n) {
    const size_t rel = oc - o->oc0, off0 = (size_t)i0 * o->ps + rel / 16 * o->bs + rel % 16 * o->ls;
    const __m256 mult = _mm256_loadu_ps(j->mult + oc); /* mult has C_out rounded up to 16 entries */
    const __m256 bias = j->bias ? s16_load_n(j->bias + oc, n) : _mm256_setzero_ps();
    __m256i rows[8];
    for (int i = 0; i < 8; i++) {
        if (i >= mr) {
            rows[i] = _mm256_setzero_si256();
            continue;
        }
        __m256 v = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc[i]), mult, bias);
        if (o->rimg) v = _mm256_add_ps(v, s16_res_image(j, o, o->roff[i0 + i] + rel, n));
        rows[i] = _mm256_castps_si256(v);
    }
    s16_transpose8(rows);
    if (q_act_cheap(j)) { /* one row at a time: the activation is a clamp */
        for (int c = 0; c < n; c++) {
            const size_t off = off0 + (size_t)c * o->ls;
            __m256 v = _mm256_castsi256_ps(rows[c]);
            if (o->res) v = _mm256_add_ps(v, s16_load_n(o->res + off, mr));
            s16_store_n(o->y + off, q_act(j, v), mr);
        }
        return;
    }
    __m256 vals[8];
    for (int c = 0; c < n; c++) {
        vals[c] = _mm256_castsi256_ps(rows[c]);
        if (o->res) vals[c] = _mm256_add_ps(vals[c], s16_load_n(o->res + off0 + (size_t)c * o->ls, mr));
    }
    q_act_batch(j, vals, n);
    for (int c = 0; c < n; c++) s16_store_n(o->y + off0 + (size_t)c * o->ls, vals[c], mr);
}

/* The residual image's n (1..8) channels at element at, dequantized. */
static inline __m256 s16_res_image(const s16_job *j, const tc__lowp_out *o, size_t at, int n) {
    __m256i c;
    if (j->r_u7) {
        uint64_t b = 0;
        memcpy(&b, (const uint8_t *)o->rimg + at, (size_t)n);
        c = _mm256_sub_epi32(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)b)), _mm256_set1_epi32(j->r_zp));
    } else if (n == 8) {
        c = _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)((const int16_t *)o->rimg + at)));
    } else {
        int16_t b[8] = {0};
        memcpy(b, (const int16_t *)o->rimg + at, (size_t)n * sizeof *b);
        c = _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)b));
    }
    return _mm256_mul_ps(_mm256_cvtepi32_ps(c), _mm256_set1_ps(j->r_scale));
}

/* The residual of n (1..8) channels at element off, lanes ls apart. */
static inline __m256 s16_residual(const tc__lowp_out *o, size_t off, int n) {
    if (o->ls == 1) return s16_load_n(o->res + off, n);
    float buf[8] = {0};
    for (int l = 0; l < n; l++) buf[l] = o->res[off + (size_t)l * o->ls];
    return _mm256_loadu_ps(buf);
}

/* 8 floats to the next layer's centred codes (s16_codes8 with the job's vectors). */
static inline __m256i s16_out_codes8(const s16_job *j, __m256 v) {
    v = _mm256_min_ps(_mm256_max_ps(_mm256_fmadd_ps(v, j->o_invv, j->o_zpv), j->o_lov), j->o_hiv);
    return _mm256_sub_epi32(_mm256_cvtps_epi32(v), j->o_zpi);
}

/*
 * Output pixel i, all 16 channels oc .. oc + 16 of a tile's block (accumulators a0: channels 0-7, a1: 8-15), of a
 * chained step: s16_value's values, 16 channels at a time (one residual image load), before the activation, into
 * out[0..2); rt: an FP32 residual's 16 channels of the pixel (s16_store_tile transposes NCHW residuals), or NULL to
 * read them here. s16_img16_put stores their codes (one image store).
 */
static inline __attribute__((always_inline)) void s16_img16_values(const s16_job *j, const tc__lowp_out *o, int i,
                                                                   size_t oc, __m256i a0, __m256i a1, const __m256 *rt,
                                                                   __m256 *out) {
    const size_t rel = oc - o->oc0, off = (size_t)i * o->ps + rel / 16 * o->bs + rel % 16 * o->ls;
    __m256 v0 = _mm256_cvtepi32_ps(a0), v1 = _mm256_cvtepi32_ps(a1);
    const __m256 b0 = j->bias ? _mm256_loadu_ps(j->bias + oc) : _mm256_setzero_ps();
    const __m256 b1 = j->bias ? _mm256_loadu_ps(j->bias + oc + 8) : _mm256_setzero_ps();
    v0 = _mm256_fmadd_ps(v0, _mm256_loadu_ps(j->mult + oc), b0);
    v1 = _mm256_fmadd_ps(v1, _mm256_loadu_ps(j->mult + oc + 8), b1);
    if (o->res && rt != NULL) { /* the FP32 residual, already transposed to this pixel's channels */
        v0 = _mm256_add_ps(v0, rt[0]);
        v1 = _mm256_add_ps(v1, rt[1]);
    } else if (o->res) {
        v0 = _mm256_add_ps(v0, s16_residual(o, off, 8));
        v1 = _mm256_add_ps(v1, s16_residual(o, off + 8 * o->ls, 8));
    }
    if (o->rimg) {
        const size_t at = o->roff[i] + rel;
        __m256i r0, r1;
        if (j->r_u7) {
            const __m128i b = _mm_loadu_si128((const __m128i *)((const uint8_t *)o->rimg + at));
            const __m256i z = _mm256_set1_epi32(j->r_zp);
            r0 = _mm256_sub_epi32(_mm256_cvtepu8_epi32(b), z), r1 = _mm256_sub_epi32(_mm256_cvtepu8_epi32(_mm_srli_si128(b, 8)), z);
        } else {
            const __m256i h = _mm256_loadu_si256((const __m256i *)((const int16_t *)o->rimg + at));
            r0 = _mm256_cvtepi16_epi32(_mm256_castsi256_si128(h)), r1 = _mm256_cvtepi16_epi32(_mm256_extracti128_si256(h, 1));
        }
        const __m256 rs = _mm256_set1_ps(j->r_scale);
        v0 = _mm256_add_ps(v0, _mm256_mul_ps(_mm256_cvtepi32_ps(r0), rs));
        v1 = _mm256_add_ps(v1, _mm256_mul_ps(_mm256_cvtepi32_ps(r1), rs));
    }
    out[0] = v0, out[1] = v1;
}

/* The 16 activated values v0, v1 of pixel i (s16_img16_values) as the out image's codes. */
static inline __attribute__((always_inline)) void s16_img16_put(const s16_job *j, const tc__lowp_out *o, int i,
                                                                size_t oc, __m256 v0, __m256 v1) {
    const size_t rel = oc - o->oc0;
    /* 16 codes in order: packs interleaves the 128-bit lanes, the permutation restores them */
    const __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(s16_out_codes8(j, v0), s16_out_codes8(j, v1)), 0xD8);
    const size_t at = o->qoff[i] + rel;
    if (j->o_u7) { /* bytes of max(q, 0), or of q + z */
        const __m256i pz = _mm256_add_epi16(p, _mm256_set1_epi16(j->o_add));
        const __m256i b = _mm256_packus_epi16(pz, pz);
        _mm_storeu_si128((__m128i *)((uint8_t *)j->oimg + at),
                         _mm_unpacklo_epi64(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1)));
    } else {
        _mm256_storeu_si256((__m256i *)((int16_t *)j->oimg + at), p);
    }
}

/*
 * Output pixel i, channels oc .. oc + n (n <= 8) of a tile whose elements live at o (see lowp_grid.h), for row-major
 * output or a chained step: the accumulator dequantized, bias, residual (the activation is q_act's or q_act_batch's,
 * then s16_put stores the values, or for a chained step the next layer's centred codes, as its quantization pass
 * would). (NCHW: s16_store_nchw.)
 */
static inline __attribute__((always_inline)) __m256 s16_value(const s16_job *j, const tc__lowp_out *o, int i, size_t oc,
                                                              __m256i acc, int n) {
    const size_t off = (size_t)i * o->ps + (oc - o->oc0) / 16 * o->bs + (oc - o->oc0) % 16 * o->ls;
    __m256 v = _mm256_cvtepi32_ps(acc);
    const __m256 bv = j->bias ? s16_load_n(j->bias + oc, n) : _mm256_setzero_ps();
    v = _mm256_fmadd_ps(v, _mm256_loadu_ps(j->mult + oc), bv); /* mult has C_out rounded up to 16 entries */
    if (o->res) v = _mm256_add_ps(v, s16_residual(o, off, n));
    if (o->rimg) v = _mm256_add_ps(v, s16_res_image(j, o, o->roff[i] + (oc - o->oc0), n));
    return v;
}

/* The activated values v of pixel i, channels oc .. oc + n (s16_value), as FP32 or as the out image's codes. */
static inline __attribute__((always_inline)) void s16_put(const s16_job *j, const tc__lowp_out *o, int i, size_t oc,
                                                          __m256 v, int n) {
    const size_t off = (size_t)i * o->ps + (oc - o->oc0) / 16 * o->bs + (oc - o->oc0) % 16 * o->ls;
    if (j->oimg == NULL) {
        s16_store_n(o->y + off, v, n);
        return;
    }
    const __m256i c = j->o_u7 ? _mm256_add_epi32(s16_out_codes8(j, v), _mm256_set1_epi32(j->o_add)) : s16_out_codes8(j, v);
    const size_t at = o->qoff[i] + (oc - o->oc0);
    int16_t buf[8];
    if (j->o_u7 && n == 8) {
        _mm_storel_epi64((__m128i *)((uint8_t *)j->oimg + at), u7_narrow(c));
    } else if (j->o_u7) {
        _mm_storel_epi64((__m128i *)buf, u7_narrow(c));
        memcpy((uint8_t *)j->oimg + at, buf, (size_t)n);
    } else if (n == 8) {
        _mm_storeu_si128((__m128i *)((int16_t *)j->oimg + at), s16_narrow(c));
    } else {
        _mm_storeu_si128((__m128i *)buf, s16_narrow(c));
        memcpy((int16_t *)j->oimg + at, buf, (size_t)n * sizeof *buf);
    }
}

/* s16_store_tile's path for a transcendental activation (out of line: the tiles' own code stays a clamp's): the values
 * of every pixel, then the activation over all of them at once (q_act_batch), then the stores; rt as there, or NULL. */
static __attribute__((noinline)) void s16_store_tile_batched(const s16_job *j, const tc__lowp_out *o, int i0, int MR,
                                                             size_t oc, int n, __m256i acc[][2], __m256 rt[][2]) {
    const bool img16 = j->oimg != NULL && n == 16;
    __m256 vals[S16_MR][2];
    for (int i = 0; i < MR; i++) {
        if (img16) {
            s16_img16_values(j, o, i0 + i, oc, acc[i][0], acc[i][1], rt ? rt[i] : NULL, vals[i]);
            continue;
        }
        vals[i][0] = s16_value(j, o, i0 + i, oc, acc[i][0], n < 8 ? n : 8);
        vals[i][1] = n > 8 ? s16_value(j, o, i0 + i, oc + 8, acc[i][1], n - 8) : _mm256_setzero_ps();
    }
    q_act_batch(j, &vals[0][0], 2 * MR);
    for (int i = 0; i < MR; i++) {
        if (img16) {
            s16_img16_put(j, o, i0 + i, oc, vals[i][0], vals[i][1]);
            continue;
        }
        s16_put(j, o, i0 + i, oc, vals[i][0], n < 8 ? n : 8);
        if (n > 8) s16_put(j, o, i0 + i, oc + 8, vals[i][1], n - 8);
    }
}

/* The epilogue of a tile: MR pixels (from i0) x channels oc .. oc + n of one block (acc[i][0]: channels 0-7, acc[i][1]:
 * 8-15), into NCHW output (transposed), row-major output, or the chained out image. */
static inline __attribute__((always_inline)) void s16_store_tile(const s16_job *j, const tc__lowp_out *o, int i0,
                                                                 const int MR, size_t oc, int n, __m256i acc[][2]) {
    if (o->ls != 1 && j->oimg == NULL) { /* NCHW: transposed */
        __m256i half[8];
        for (int h = 0; h < 2 && n > 8 * h; h++) {
            for (int i = 0; i < MR; i++) half[i] = acc[i][h];
            s16_store_nchw(j, o, i0, MR, oc + 8 * (size_t)h, half, n - 8 * h < 8 ? n - 8 * h : 8);
        }
        return;
    }
    /* A chained step with an NCHW FP32 residual: the tile's pixels are consecutive in each channel's plane, so 16 rows of
     * MR values transposed in registers, not 16 strided loads per pixel. */
    __m256 rt[S16_MR][2];
    const bool res_t = j->oimg != NULL && n == 16 && o->res != NULL && o->ls != 1;
    for (int h = 0; h < 2 && res_t; h++) {
        const size_t rel = oc - o->oc0, off0 = (size_t)i0 * o->ps + rel / 16 * o->bs + (size_t)(8 * h) * o->ls;
        __m256i rows[8];
        for (int c = 0; c < 8; c++) rows[c] = _mm256_castps_si256(s16_load_n(o->res + off0 + (size_t)c * o->ls, MR));
        s16_transpose8(rows);
        for (int i = 0; i < MR; i++) rt[i][h] = _mm256_castsi256_ps(rows[i]);
    }
    const bool img16 = j->oimg != NULL && n == 16;
    if (q_act_cheap(j)) { /* a clamp: each pixel's values, activation and store in registers */
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) {
            __m256 v[2];
            if (img16) {
                s16_img16_values(j, o, i0 + i, oc, acc[i][0], acc[i][1], res_t ? rt[i] : NULL, v);
                s16_img16_put(j, o, i0 + i, oc, q_act(j, v[0]), q_act(j, v[1]));
                continue;
            }
            s16_put(j, o, i0 + i, oc, q_act(j, s16_value(j, o, i0 + i, oc, acc[i][0], n < 8 ? n : 8)), n < 8 ? n : 8);
            if (n > 8) s16_put(j, o, i0 + i, oc + 8, q_act(j, s16_value(j, o, i0 + i, oc + 8, acc[i][1], n - 8)), n - 8);
        }
        return;
    }
    s16_store_tile_batched(j, o, i0, MR, oc, n, acc, res_t ? rt : NULL);
}

/* Runs variant v of a dense (byte variants: VNNI packing, else 16-bit weights) or depthwise (Q_S16 or Q_U7; 16-bit
 * weights, qconv_u8s8.h) layer, compute: the kernel's task (tc__lowp_task with its tile). */
static tc_status s16_run(const tc__kernel_ctx *ctx, const tc__qconv_geom *g, q_variant v,
                         void (*compute)(void *, size_t, size_t)) {
    const bool u7 = v != Q_S16, u8 = v == Q_U8W7 || v == Q_U8W7P;
    if (g->in_layout == TC__Q_NCHW16C || g->out_layout == TC__Q_NCHW16C)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: the AVX2 int8 kernel takes plain layouts only",
                        ctx->op_type);
    if (g->out_image && tc__qconv_out_fmt(g, u7) == TC__INT8_IMG_U7 && (g->o_zp != 128 || g->o_lo != 1))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: an out image of bytes needs symmetric codes",
                        ctx->op_type);
    tc__lowp_io io;
    tc_status st = tc__lowp_io_of(ctx, g->cout, &io);
    if (st != TC_STATUS_OK) return st;
    s16_job j = {.g = g, .x = io.x, .u7 = u7, .w7 = v == Q_U7W7 || v == Q_U8W7P, .u8 = u8,
                 .fill = u8 ? g->zero_point : 0, .esz = u7 ? 1 : 2, .w = io.w, .y = io.y, .bias = io.bias,
                 .res = io.res, .act = io.act, .inv_scale = 1.0f / g->x_scale, .hiv = _mm256_set1_ps((float)g->hi)};
    const size_t esz = j.esz;
    /* the weight holds Cpad16 * taps * Cp elements of esz bytes (both packings), then the scales */
    j.mult = g->depthwise ? (const float *)((const int16_t *)io.w + tc__qdw_weight_elems(g))
                          : (const float *)((const char *)io.w + tc__qconv_s16_weight_elems(g) * esz);
    j.comp = (const int32_t *)(j.mult + g->cout16); /* (the VNNI packing's; only u8 reads it) */
    const size_t img = g->batch * g->hp * g->wp * g->cp;
    unsigned char *scratch = tc__kernel_alloc(ctx, u7 ? tc__qconv_scratch(g) : tc__qconv_s16_scratch(g));
    if (scratch == NULL) return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "%s: no scratch for the int8 image", ctx->op_type);
    j.img = g->in_image ? (void *)io.x : (void *)scratch; /* the INT8 chain: X is already the image */
    size_t *run_off = (size_t *)(scratch + (img * esz + 63) / 64 * 64);
    const bool rows = g->dw == 1 && !g->depthwise; /* depthwise: one run per tap */
    j.runs = rows ? g->kh : g->kh * g->kw;
    j.run_pairs = (rows ? g->kw : 1) * g->cp / (4 / esz); /* 4-byte steps: channel pairs, or (u7) quads */
    for (size_t a = 0; a < g->kh; a++)
        for (size_t c = 0; c < (rows ? 1 : g->kw); c++)
            run_off[a * (rows ? 1 : g->kw) + c] = (a * g->dh * g->wp + c * g->dw) * g->cp;
    j.run_off = run_off;
    j.grid = tc__lowp_grid_of(g->oh, g->ow, g->sh, g->sw, g->hp, g->wp, g->cp, g->cout, g->out_layout,
                               tc__lowp_threads(ctx->exec));
    if (j.w7) j.grid.mr_wide = 8; /* u7w7 runs tiles of at most 4 pixels: 8 = 4 + 4, not 6 = 3 + 3 */
    if (g->out_image) { /* the next layer's image: border and padding channels hold 0 (its zero point) */
        j.oimg = io.y;
        j.o_u7 = tc__qconv_out_elem(g, u7) == 1;
        j.o_add = tc__qconv_out_fmt(g, u7) == TC__INT8_IMG_U8 ? g->o_zp : 0;
        j.o_invv = _mm256_set1_ps(1.0f / g->o_scale), j.o_zpv = _mm256_set1_ps((float)g->o_zp);
        j.o_lov = _mm256_set1_ps((float)g->o_lo), j.o_zpi = _mm256_set1_epi32(g->o_zp);
        j.o_hiv = _mm256_set1_ps((float)g->o_hi);
        tc__lowp_grid_out_image(&j.grid, g->o_hp, g->o_wp, g->o_cp, g->o_pt, g->o_pl);
        tc__lowp_fill_out_border(&j.grid, g->batch, io.y, tc__qconv_out_elem(g, u7), (uint8_t)j.o_add);
    }
    if (g->res_image) { /* the residual is an image of codes */
        tc__lowp_grid_res_image(&j.grid, io.res, g->r_hp, g->r_wp, g->r_cp, g->r_pt, g->r_pl);
        j.r_u7 = g->r_fmt == TC__INT8_IMG_U7 || g->r_fmt == TC__INT8_IMG_U8;
        j.r_zp = g->r_fmt == TC__INT8_IMG_U8 ? g->r_zp : 0;
        j.r_scale = g->r_scale;
        j.res = NULL;
    }
    tc__lowp_run(ctx->exec, &j.grid, g->batch, g->in_image ? 0 : g->batch * g->hp, s16_quantize_row, compute, &j);
    tc__kernel_free(ctx, scratch);
    return TC_STATUS_OK;
}

#endif
