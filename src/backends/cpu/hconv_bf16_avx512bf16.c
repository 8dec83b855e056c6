/*
 * hconv_bf16_avx512bf16.c - the BF16 operator of hconv.h on AVX512-BF16: conversion of X into the padded
 * channels-last BF16 image (vcvtneps2bf16, and the same rounding in scalar code for the plain layout), the
 * vdpbf16ps microkernels (MR output pixels x NB blocks of 16 output channels in FP32 accumulators, each lane
 * adding the products of a pair of input channels), the FP32 epilogue (bias, residual, activation) and the
 * threaded driver; and the AMX-BF16 driver (tc__hconv_run_amx_bf16): the same image and epilogue around
 * amx_panel_amx.c's tiles.
 */
#include <float.h>
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "backends/cpu/amx_panel.h"
#include "backends/cpu/hconv_job.h"
#include "core/tensor.h"

typedef tc__hconv_job b_job;

/* One float to BF16 as vcvtneps2bf16 does it (nearest even, denormals flushed to a signed zero), so that every
 * layout (and the chain, which converts with the vector instruction) gives the same bits. */
static inline uint16_t b_scalar(float x) {
    return tc__f32_to_bf16(fabsf(x) < FLT_MIN ? copysignf(0.0f, x) : x);
}

/* The 3-channel rows' interleave (vpermt2w of [b0 | b1] and [b2 | -], the BF16 channels of 16 pixels): value k of the
 * 48 is pixel k / 3's channel k % 3, element 16 * (k % 3) + k / 3 (the last 16 of the 64 unused). */
#define B_RGB(k) (uint16_t)((k) < 48 ? 16 * ((k) % 3) + (k) / 3 : 0)
#define B_RGB4(k) B_RGB(k), B_RGB(k + 1), B_RGB(k + 2), B_RGB(k + 3)
#define B_RGB16(k) B_RGB4(k), B_RGB4(k + 4), B_RGB4(k + 8), B_RGB4(k + 12)
static const uint16_t b_rgb_idx[64] = {B_RGB16(0), B_RGB16(16), B_RGB16(32), B_RGB16(48)};
#undef B_RGB16
#undef B_RGB4
#undef B_RGB

/* Converts padded row r of image n: the border is 0. */
static void b_convert_row(void *arg, size_t task) {
    const b_job *j = arg;
    const tc__lowp_shape *s = &j->g->s;
    const size_t n = task / s->hp, r = task % s->hp, cp = j->g->cp;
    uint16_t *row = j->xh + (n * s->hp + r) * s->wp * cp;
    if (r < s->pt || r >= s->pt + s->ih) {
        memset(row, 0, s->wp * cp * sizeof *row);
        return;
    }
    const size_t h = r - s->pt;
    memset(row, 0, s->pl * cp * sizeof *row);
    memset(row + (s->pl + s->iw) * cp, 0, (s->wp - s->pl - s->iw) * cp * sizeof *row);
    uint16_t *dst = row + s->pl * cp;
    if (s->in_layout == TC__LOWP_NCHW16C) {
        const size_t cb_n = s->cin / 16;
        for (size_t cb = 0; cb < cb_n; cb++) {
            const float *src = j->x + ((n * cb_n + cb) * s->ih + h) * s->iw * 16;
            for (size_t w = 0; w < s->iw; w++)
                _mm256_storeu_si256((__m256i *)(dst + w * cp + cb * 16), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(src + w * 16)));
        }
    } else if (s->in_layout == TC__LOWP_ROWS) {
        const size_t c16 = s->cin / 16 * 16;
        const __mmask16 tail = (__mmask16)((1u << (s->cin - c16)) - 1);
        for (size_t w = 0; w < s->iw; w++) {
            const float *src = j->x + ((n * s->ih + h) * s->iw + w) * s->cin;
            uint16_t *o = dst + w * cp;
            for (size_t c = 0; c < c16; c += 16)
                _mm256_storeu_si256((__m256i *)(o + c), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(src + c)));
            if (tail) _mm256_mask_storeu_epi16(o + c16, tail, (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(tail, src + c16)));
            if (cp > s->cin) o[s->cin] = 0;
        }
    } else if (cp == 3) { /* NCHW of 3 channels (an RGB stem): 16 pixels' channel triples per 96 bytes */
        const size_t plane = s->ih * s->iw;
        const float *src[3];
        for (size_t c = 0; c < 3; c++) src[c] = j->x + (n * 3 + c) * plane + h * s->iw;
        const __m512i idx0 = _mm512_loadu_si512(b_rgb_idx), idx1 = _mm512_loadu_si512(b_rgb_idx + 32);
        size_t w = 0;
        for (; w + 16 <= s->iw; w += 16) {
            const __m256i b0 = (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(src[0] + w));
            const __m256i b1 = (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(src[1] + w));
            const __m256i b2 = (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(src[2] + w));
            const __m512i a = _mm512_inserti64x4(_mm512_castsi256_si512(b0), b1, 1), c = _mm512_castsi256_si512(b2);
            _mm512_storeu_si512(dst + w * 3, _mm512_permutex2var_epi16(a, idx0, c));
            _mm256_storeu_si256((__m256i *)(dst + w * 3 + 32), _mm512_castsi512_si256(_mm512_permutex2var_epi16(a, idx1, c)));
        }
        for (; w < s->iw; w++)
            for (size_t c = 0; c < 3; c++) dst[w * 3 + c] = b_scalar(src[c][w]);
    } else if (cp == 4) { /* NCHW of at most 4 channels (an image stem): 16 pixels' channel quads per 128 bytes */
        const size_t plane = s->ih * s->iw;
        const float *src[4] = {NULL, NULL, NULL, NULL};
        for (size_t c = 0; c < s->cin; c++) src[c] = j->x + (n * s->cin + c) * plane + h * s->iw;
        size_t w = 0;
        for (; w + 16 <= s->iw; w += 16) {
            __m256i b[4];
            for (int c = 0; c < 4; c++)
                b[c] = src[c] ? (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(src[c] + w)) : _mm256_setzero_si256();
            /* (channel, pixel) to (pixel, channel): channels 0, 1 and 2, 3 in pairs, then quads; the unpacks work
             * within 128-bit lanes, so the quads of pixels 0-3, 8-11 come first, then 4-7, 12-15 */
            const __m256i p01l = _mm256_unpacklo_epi16(b[0], b[1]), p01h = _mm256_unpackhi_epi16(b[0], b[1]);
            const __m256i p23l = _mm256_unpacklo_epi16(b[2], b[3]), p23h = _mm256_unpackhi_epi16(b[2], b[3]);
            const __m256i q0 = _mm256_unpacklo_epi32(p01l, p23l), q1 = _mm256_unpackhi_epi32(p01l, p23l);
            const __m256i q2 = _mm256_unpacklo_epi32(p01h, p23h), q3 = _mm256_unpackhi_epi32(p01h, p23h);
            /* q0: pixels 0-1 | 8-9, q1: 2-3 | 10-11, q2: 4-5 | 12-13, q3: 6-7 | 14-15 */
            _mm256_storeu_si256((__m256i *)(dst + w * 4), _mm256_permute2x128_si256(q0, q1, 0x20));
            _mm256_storeu_si256((__m256i *)(dst + w * 4 + 16), _mm256_permute2x128_si256(q2, q3, 0x20));
            _mm256_storeu_si256((__m256i *)(dst + w * 4 + 32), _mm256_permute2x128_si256(q0, q1, 0x31));
            _mm256_storeu_si256((__m256i *)(dst + w * 4 + 48), _mm256_permute2x128_si256(q2, q3, 0x31));
        }
        for (; w < s->iw; w++)
            for (size_t c = 0; c < 4; c++) dst[w * 4 + c] = src[c] ? b_scalar(src[c][w]) : 0;
    } else {
        const size_t plane = s->ih * s->iw;
        for (size_t c = 0; c < s->cin; c++) {
            const float *src = j->x + (n * s->cin + c) * plane + h * s->iw;
            for (size_t w = 0; w < s->iw; w++) dst[w * cp + c] = b_scalar(src[w]);
        }
        if (cp > s->cin)
            for (size_t w = 0; w < s->iw; w++) dst[w * cp + s->cin] = 0;
    }
}

/* The epilogue of pixel i, block b (tc__lowp_value: the residual may be a BF16 image): stored as FP32, or (the chain)
 * converted and stored into the next layer's image as its own conversion pass would. */
static inline __attribute__((always_inline)) void b_out(const b_job *j, const tc__lowp_out *o, int i, int b, __m512 v,
                                                        __mmask16 mask, __m512i lanes) {
    if (j->ych == NULL) {
        tc__lowp_store(&j->act, j->bias, o, i, b, v, mask, lanes, true);
        return;
    }
    v = tc__lowp_value(&j->act, j->bias, o, i, b, v, mask, lanes, true);
    _mm256_mask_storeu_epi16(j->ych + o->qoff[i] + (size_t)b * 16, mask, (__m256i)_mm512_cvtneps_pbh(v));
}

/* The residual of b_epi: none, FP32 (o->res), or a BF16 image (o->rimg). */
enum { B_RES_NONE, B_RES_F32, B_RES_IMAGE };

/* A tile's epilogue for one activation kind, output (FP32 on contiguous lanes, or the chain's image) and residual, all
 * constants: b_out's operations, with the biases and masks of the tile's blocks loaded once. */
static inline __attribute__((always_inline)) void b_epi(const b_job *j, const tc__lowp_out *o, const __m512 *sums,
                                                        int mr, int nb, __mmask16 last_mask, const tc__vact_kind kind,
                                                        const bool chain, const int res) {
    __m512 bias[TC__LOWP_GROUP_BLOCKS];
    __mmask16 mask[TC__LOWP_GROUP_BLOCKS];
    for (int b = 0; b < nb; b++) {
        mask[b] = b == nb - 1 ? last_mask : (__mmask16)0xffff;
        bias[b] = j->bias ? _mm512_maskz_loadu_ps(mask[b], j->bias + o->oc0 + (size_t)b * 16) : _mm512_setzero_ps();
    }
    const float alpha = j->act.alpha, beta = j->act.beta;
    uint16_t *const ych = j->ych;
    for (int i = 0; i < mr; i++)
        for (int b = 0; b < nb; b++) {
            const size_t off = (size_t)i * o->ps + (size_t)b * o->bs;
            __m512 v = _mm512_add_ps(sums[i * nb + b], bias[b]);
            if (res == B_RES_F32) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask[b], o->res + off));
            if (res == B_RES_IMAGE) v = _mm512_add_ps(v, tc__lowp_res16(o, i, b, mask[b], true));
            v = tc__vact_f32_avx512_kind(v, kind, alpha, beta);
            if (chain) _mm256_mask_storeu_epi16(ych + o->qoff[i] + (size_t)b * 16, mask[b], (__m256i)_mm512_cvtneps_pbh(v));
            else _mm512_mask_storeu_ps(o->y + off, mask[b], v);
        }
}

#define B_EPI_RES(KIND, CHAIN)                                                                                        \
    (res == B_RES_F32     ? b_epi(j, o, sums, mr, nb, last_mask, KIND, CHAIN, B_RES_F32)                             \
     : res == B_RES_IMAGE ? b_epi(j, o, sums, mr, nb, last_mask, KIND, CHAIN, B_RES_IMAGE)                           \
                          : b_epi(j, o, sums, mr, nb, last_mask, KIND, CHAIN, B_RES_NONE))
#define B_EPI(KIND) (chain ? B_EPI_RES(KIND, true) : B_EPI_RES(KIND, false))

/*
 * The epilogue of a tile whose sums (pixel i, block b at sums[i * nb + b]) the microkernel left in memory. Not inlined:
 * the activation may call SLEEF, and accumulators live across a call are kept in memory by the register allocator for
 * their whole life, the multiply-add loop included (b_tile_6x4 spilled 24 accumulators per step, at ~0.4x its rate).
 * No activation, Relu and Clip on contiguous lanes (NCHW16c, rows, the chain's image) take b_epi's variants, with the
 * branches on the layout, residual (none, FP32, a BF16 image) and activation taken once per tile; the rest b_out's
 * general path. Same bits.
 */
static __attribute__((noinline)) void b_epilogue(const b_job *j, const tc__lowp_out *o, const __m512 *sums, int mr,
                                                 int nb, __mmask16 last_mask) {
    const bool chain = j->ych != NULL;
    const int res = o->rimg ? B_RES_IMAGE : o->res ? B_RES_F32 : B_RES_NONE;
    if (o->ls == 1 || (chain && res != B_RES_F32)) {
        switch ((tc__vact_kind)j->act.kind) {
        case TC__VACT_NONE: B_EPI(TC__VACT_NONE); return;
        case TC__VACT_RELU: B_EPI(TC__VACT_RELU); return;
        case TC__VACT_CLIP: B_EPI(TC__VACT_CLIP); return;
        default: break;
        }
    }
    const __m512i lanes = tc__lowp_lanes(o->ls);
    for (int i = 0; i < mr; i++)
        for (int b = 0; b < nb; b++)
            b_out(j, o, i, b, sums[i * nb + b], b == nb - 1 ? last_mask : (__mmask16)0xffff, lanes);
}
#undef B_EPI
#undef B_EPI_RES

/* One step of the microkernel: the pair of values at xt + xoff[i] (alone: the value there and a zero) of each of the MR
 * pixels times the NB blocks' weight pairs at wp + b * wbs, added into acc. */
static inline __attribute__((always_inline)) void b_step(__m512 acc[TC__LOWP_MR][TC__LOWP_GROUP_BLOCKS],
                                                         const uint16_t *xt, const size_t *xoff, const uint16_t *wp,
                                                         size_t wbs, const bool alone, const int MR, const int NB) {
    __m512bh wv[TC__LOWP_GROUP_BLOCKS];
#pragma GCC unroll 4
    for (int b = 0; b < NB; b++) wv[b] = (__m512bh)_mm512_loadu_si512(wp + (size_t)b * wbs);
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++) {
        int32_t pair;
        if (alone) pair = xt[xoff[i]]; /* (not the value after it: it may lie past the image, or be an Inf) */
        else memcpy(&pair, xt + xoff[i], sizeof pair);
        const __m512bh xb = (__m512bh)_mm512_set1_epi32(pair);
#pragma GCC unroll 4
        for (int b = 0; b < NB; b++) acc[i][b] = _mm512_dpbf16_ps(acc[i][b], xb, wv[b]);
    }
}

/* The bias of a full group's 4 blocks (0 without one). */
static inline __attribute__((always_inline)) void b_group_bias(const b_job *j, const tc__lowp_out *o,
                                                               __m512 bias[TC__LOWP_GROUP_BLOCKS]) {
#pragma GCC unroll 4
    for (int b = 0; b < TC__LOWP_GROUP_BLOCKS; b++)
        bias[b] = j->bias ? _mm512_loadu_ps(j->bias + o->oc0 + (size_t)b * 16) : _mm512_setzero_ps();
}

/* Asks L1, before a chained tile's multiply-add loop, for the lines its b_chain_epi touches: each pixel's 128 bytes (64
 * channels) of the next layer's image and, when rimg, of the residual image. Those images (1.6 MB each in ResNet-50's
 * layer1) are in L3 or the other core's L2 when the epilogue comes, and the short loops of 64 input channels waited for
 * them: ResNet-50 --bf16 ~0.99x (plan_ab, 7 runs of 300 pairs, 0.973x-0.999x). The VNNI tiles' loops of 64 input
 * channels (16 steps) are too short for it: ResNet-50 --int8 1.003x, 1.007x. The write intent is a plain prefetch
 * without -mprfchw; PREFETCHW timed the same. */
static inline __attribute__((always_inline)) void b_pf_chain(const b_job *j, const tc__lowp_out *o, const int MR) {
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++) {
        const unsigned char *y = (const unsigned char *)(j->ych + o->qoff[i]);
        __builtin_prefetch(y, 1, 3), __builtin_prefetch(y + 64, 1, 3), __builtin_prefetch(y + 127, 1, 3);
        if (o->rimg == NULL) continue;
        const unsigned char *r = (const unsigned char *)((const uint16_t *)o->rimg + o->roff[i]);
        __builtin_prefetch(r, 0, 3), __builtin_prefetch(r + 64, 0, 3), __builtin_prefetch(r + 127, 0, 3);
    }
}

/* A full group's epilogue on the accumulators, in the tile (no store and reload of the sums): a chained step's bias,
 * residual image (when rimg), ReLU (when relu), and pairs of blocks converted and stored together; b_epi's operations
 * in the same order (same bits). */
static inline __attribute__((always_inline)) void b_chain_epi(const b_job *j, const tc__lowp_out *o,
                                                              __m512 acc[TC__LOWP_MR][TC__LOWP_GROUP_BLOCKS],
                                                              const int MR, const bool rimg, const bool relu) {
    __m512 bias[TC__LOWP_GROUP_BLOCKS];
    b_group_bias(j, o, bias);
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++) {
        __m512 v[TC__LOWP_GROUP_BLOCKS];
#pragma GCC unroll 4
        for (int b = 0; b < TC__LOWP_GROUP_BLOCKS; b++) {
            v[b] = _mm512_add_ps(acc[i][b], bias[b]);
            if (rimg) v[b] = _mm512_add_ps(v[b], tc__lowp_res16(o, i, b, 0xffff, true));
            if (relu) v[b] = _mm512_max_ps(v[b], _mm512_setzero_ps());
        }
        uint16_t *y = j->ych + o->qoff[i];
        _mm512_storeu_si512(y, (__m512i)_mm512_cvtne2ps_pbh(v[1], v[0]));
        _mm512_storeu_si512(y + 32, (__m512i)_mm512_cvtne2ps_pbh(v[3], v[2]));
    }
}

/* The same for FP32 outputs on contiguous lanes (NCHW16c, rows) without a residual: bias, ReLU when relu. */
static inline __attribute__((always_inline)) void b_f32_epi(const b_job *j, const tc__lowp_out *o,
                                                            __m512 acc[TC__LOWP_MR][TC__LOWP_GROUP_BLOCKS], const int MR,
                                                            const bool relu) {
    __m512 bias[TC__LOWP_GROUP_BLOCKS];
    b_group_bias(j, o, bias);
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int b = 0; b < TC__LOWP_GROUP_BLOCKS; b++) {
            __m512 v = _mm512_add_ps(acc[i][b], bias[b]);
            if (relu) v = _mm512_max_ps(v, _mm512_setzero_ps());
            _mm512_storeu_ps(o->y + (size_t)i * o->ps + (size_t)b * o->bs, v);
        }
}

/*
 * The microkernel: MR pixels (at x0 + xoff[i]) x NB blocks of 16 output channels (weights w0 + b * wbs),
 * accumulated in FP32 over every run (hconv.h: its pairs of values, and an odd run's last value), then stored.
 */
static inline __attribute__((always_inline)) void b_tile(const b_job *j, const uint16_t *x0, const size_t *xoff,
                                                         const uint16_t *w0, size_t wbs, const tc__lowp_out *o,
                                                         __mmask16 last_mask, const void *pf, size_t npf,
                                                         const int MR, const int NB) {
    const size_t runs = j->runs, c2 = j->run_pairs, run_step = j->run_step;
    const bool odd = j->run_odd;
    __m512 acc[TC__LOWP_MR][TC__LOWP_GROUP_BLOCKS];
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int b = 0; b < NB; b++) acc[i][b] = _mm512_setzero_ps();
    if (NB == TC__LOWP_GROUP_BLOCKS && last_mask == 0xffff && j->chain_inline)
        b_pf_chain(j, o, MR);
    const uint16_t *wp = w0;
    for (size_t t = 0; t < runs; t++) {
        const uint16_t *xt = x0 + j->tap_off[t * run_step];
        for (size_t p = 0; p < c2; p++, wp += 32) {
            tc__lowp_pf_line(&pf, &npf); /* the weights the next task reads (tc__lowp_pf) */
            b_step(acc, xt + 2 * p, xoff, wp, wbs, false, MR, NB);
        }
        if (odd) {
            b_step(acc, xt + 2 * c2, xoff, wp, wbs, true, MR, NB);
            wp += 32;
        }
    }
    if (NB == TC__LOWP_GROUP_BLOCKS && last_mask == 0xffff && j->chain_inline) { /* (a full group of a chained step) */
        const bool relu = j->act.kind == TC__VACT_RELU;
        if (o->rimg) relu ? b_chain_epi(j, o, acc, MR, true, true) : b_chain_epi(j, o, acc, MR, true, false);
        else relu ? b_chain_epi(j, o, acc, MR, false, true) : b_chain_epi(j, o, acc, MR, false, false);
        return;
    }
    if (NB == TC__LOWP_GROUP_BLOCKS && last_mask == 0xffff && j->f32_inline) {
        j->act.kind == TC__VACT_RELU ? b_f32_epi(j, o, acc, MR, true) : b_f32_epi(j, o, acc, MR, false);
        return;
    }
    __m512 sums[TC__LOWP_MR * TC__LOWP_GROUP_BLOCKS];
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int b = 0; b < NB; b++) sums[i * NB + b] = acc[i][b];
    b_epilogue(j, o, sums, MR, NB, last_mask);
}

/* One instantiation per (MR, NB): the tile calls with constant sizes. */
#define B_FN(MR, NB)                                                                                                  \
    static void b_tile_##MR##x##NB(const b_job *j, const uint16_t *x0, const size_t *xoff, const uint16_t *w0,        \
                                   size_t wbs, const tc__lowp_out *o, __mmask16 m, const void *pf, size_t npf) {              \
        b_tile(j, x0, xoff, w0, wbs, o, m, pf, npf, MR, NB);                                                            \
    }
#define B_FNS6(NB) B_FN(1, NB) B_FN(2, NB) B_FN(3, NB) B_FN(4, NB) B_FN(5, NB) B_FN(6, NB)
#define B_FNS12(NB) B_FNS6(NB) B_FN(7, NB) B_FN(8, NB) B_FN(9, NB) B_FN(10, NB) B_FN(11, NB) B_FN(12, NB)
B_FNS6(4)
B_FNS6(3)
B_FNS12(2)
B_FNS12(1)

typedef void (*b_tile_fn)(const b_job *, const uint16_t *, const size_t *, const uint16_t *, size_t, const tc__lowp_out *,
                          __mmask16, const void *, size_t);

#define B_ROW6(NB) {b_tile_1x##NB, b_tile_2x##NB, b_tile_3x##NB, b_tile_4x##NB, b_tile_5x##NB, b_tile_6x##NB}
#define B_ROW12(NB)                                                                                                   \
    {b_tile_1x##NB, b_tile_2x##NB, b_tile_3x##NB, b_tile_4x##NB, b_tile_5x##NB,  b_tile_6x##NB,                       \
     b_tile_7x##NB, b_tile_8x##NB, b_tile_9x##NB, b_tile_10x##NB, b_tile_11x##NB, b_tile_12x##NB}
static const b_tile_fn b_tiles_nb4[6] = B_ROW6(4), b_tiles_nb3[6] = B_ROW6(3);
static const b_tile_fn b_tiles_nb2[12] = B_ROW12(2), b_tiles_nb1[12] = B_ROW12(1);

/* A task of the thread pool: the job and the weights its tiles prefetch (lowp_grid.h's tc__lowp_pf). */
typedef struct b_task {
    const b_job *j;
    tc__lowp_pf pf;
} b_task;

/* The tile of lowp_tile.h's task loop: the (mr, nb) microkernel on the weights of block b0. */
static void b_tile_at(const void *job, int mr, int nb, size_t b0, const size_t *xoff, const tc__lowp_out *o,
                      __mmask16 last_mask) {
    b_task *t = (b_task *)job; /* b_compute's local */
    const b_job *j = t->j;
    const size_t wbs = tc__hconv_block_halves(j->g); /* 16-bit values per block of 16 channels */
    const b_tile_fn *tiles = nb == 4 ? b_tiles_nb4 : nb == 3 ? b_tiles_nb3 : nb == 2 ? b_tiles_nb2 : b_tiles_nb1;
    const void *pf;
    const size_t npf = tc__lowp_pf_take(&t->pf, &pf);
    tiles[mr - 1](j, j->xh, xoff, j->w + b0 * wbs, wbs, o, last_mask, pf, npf);
}

static void b_compute(void *arg, size_t strip_task, size_t group) {
    const b_job *j = arg;
    b_task t = {j, tc__lowp_pf_of(&j->grid, group, j->w, tc__hconv_block_halves(j->g) * sizeof(uint16_t))};
    tc__lowp_task(&j->grid, strip_task, group, j->y, j->res, b_tile_at, &t);
}

tc_status tc__hconv_run_avx512bf16(const tc__kernel_ctx *ctx, const tc__hconv_geom *g) {
    return tc__hconv_job_run(ctx, g, b_convert_row, b_compute, "bf16");
}

/* The AMX-BF16 run (amx_panel.h): panels x groups of up to 4 blocks, each block pair accumulated in tiles (FP32), then
 * b_out on the rows of C. */
typedef struct bamx_run {
    const b_job *j;
    tc__amx_plan plan;
} bamx_run;

/* C's row of pixel o / block b: the epilogue of b_tile. */
static void bamx_store(const void *job, const tc__lowp_out *o, int b, const void *row, __mmask16 mask, __m512i lanes) {
    b_out(job, o, 0, b, _mm512_loadu_ps(row), mask, lanes);
}

static void bamx_compute(void *arg, size_t panel, size_t group) {
    const bamx_run *r = arg;
    const b_job *j = r->j;
    tc__amx_drive_task(&r->plan, &j->grid, j->g->s.cout, (const uint8_t *)j->xh, (const uint8_t *)j->w, j->y, j->res,
                       panel, group, tc__amx_dot_bf16, bamx_store, j);
}

tc_status tc__hconv_run_amx_bf16(const tc__kernel_ctx *ctx, const tc__hconv_geom *g) {
    bamx_run r;
    if (!tc__hconv_amx_plan(g, &r.plan))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: a layer the AMX bf16 kernel does not take", ctx->op_type);
    b_job j;
    unsigned char *scratch = NULL;
    tc_status st = tc__hconv_job_setup(ctx, g, &j, &scratch, "bf16");
    r.j = &j;
    if (st == TC_STATUS_OK)
        tc__lowp_run_tasks(ctx->exec, b_convert_row, &j, g->in_image ? 0 : g->s.batch * g->s.hp, bamx_compute, &r,
                           r.plan.panels, j.grid.groups);
    if (scratch != NULL) tc__kernel_free(ctx, scratch);
    return st;
}
