/*
 * qconv_vnni.h - what the AVX512-VNNI INT8 kernels share (dense and AMX qconv_u8s8_avx512vnni.c, depthwise
 * qdwconv_avx512vnni.c; see qconv_u8s8.h): the job, the quantization of X into the padded channels-last u8 image,
 * the dequantizing epilogue of one block of 16 channels (bias, residual: FP32 or an image of u8 codes, activation)
 * into NCHW, NCHW16c or row-major output or the next layer's image (the INT8 chain), and the set-up of a run. Included by those files
 * only (compiled for AVX-512): every function is static.
 */
#ifndef TC_BACKENDS_CPU_QCONV_VNNI_H
#define TC_BACKENDS_CPU_QCONV_VNNI_H

#include <immintrin.h>
#include <string.h>

#include "backends/cpu/lowp_tile.h"
#include "backends/cpu/qact_avx512.h"
#include "backends/cpu/qconv_u8s8.h"

typedef struct q_job {
    const tc__qconv_geom *g;
    const float *x;
    uint8_t *xq;
    const size_t *tap_off; /* byte offset of each tap in the padded image */
    size_t runs, run_step; /* the dense microkernel's runs: run r at tap_off[r * run_step], of run_quads channel quads */
    size_t run_quads;
    const int8_t *w;
    const float *mult;
    const int32_t *comp;
    const float *bias, *res;
    float *y;
    tc__vact act;
    float inv_scale;
    uint8_t *yq;   /* INT8 chain: the output image (else NULL) */
    bool chain_inline; /* chained, codes up to 255, no activation or a ReLU, no FP32 residual: the dense tiles of a full
                          group end in their own epilogue (q_chain_epi) */
    float o_inv;   /* its 1 / scale */
    float r_scale; /* a residual image of u8 codes (grid.rimg): (u - r_zp) * r_scale */
    int32_t r_zp;
    tc__lowp_grid grid;
} q_job;

/* 16 floats to 16 u8 codes: round(x / s) + z clamped to [lo, hi] (NaN -> lo), as tc__q_code_in. */
static inline __m128i q_codes16(__m512 v, __m512 inv, __m512 z, __m512 lo, __m512 hi) {
    v = _mm512_fmadd_ps(v, inv, z);
    v = _mm512_max_ps(v, lo); /* a NaN in v gives the second operand */
    v = _mm512_min_ps(v, hi);
    return _mm512_cvtusepi32_epi8(_mm512_cvtps_epi32(v));
}

/* The same for codes up to 255: vpmovusdb's unsigned saturation is the upper clamp (from 2^31 too, which cvtps_epi32
 * makes 0x80000000). */
static inline __m128i q_codes16_full(__m512 v, __m512 inv, __m512 z, __m512 lo) {
    return _mm512_cvtusepi32_epi8(_mm512_cvtps_epi32(_mm512_max_ps(_mm512_fmadd_ps(v, inv, z), lo)));
}

/* The lowest code when a ReLU comes before the quantization: its clamp at the zero point's code, max(lo, z) (v * inv +
 * z < z exactly when v < 0, and a NaN clamps to the same code), so the ReLU itself goes: same codes. */
static inline __m512 q_relu_lo(__m512 lo, __m512 z) { return _mm512_max_ps(lo, z); }

/* Quantizes padded row r of image n: the border and padding channels get z (x = 0). */
static inline void q_quantize_row(void *arg, size_t task) {
    const q_job *j = arg;
    const tc__qconv_geom *g = j->g;
    const size_t n = task / g->hp, r = task % g->hp, cp = g->cp;
    uint8_t *row = j->xq + (n * g->hp + r) * g->wp * cp;
    const uint8_t zp = g->zero_point;
    if (r < g->pt || r >= g->pt + g->ih) {
        memset(row, zp, g->wp * cp);
        return;
    }
    const size_t h = r - g->pt;
    memset(row, zp, g->pl * cp);
    memset(row + (g->pl + g->iw) * cp, zp, (g->wp - g->pl - g->iw) * cp);
    uint8_t *dst = row + g->pl * cp;
    const __m512 inv = _mm512_set1_ps(j->inv_scale), z = _mm512_set1_ps((float)zp), lo = _mm512_set1_ps((float)g->lo);
    const __m512 hi = _mm512_set1_ps((float)g->hi);
    if (g->in_layout == TC__Q_NCHW16C) {
        const size_t cb_n = g->cin / 16;
        for (size_t cb = 0; cb < cb_n; cb++) {
            const float *src = j->x + ((n * cb_n + cb) * g->ih + h) * g->iw * 16;
            for (size_t w = 0; w < g->iw; w++)
                _mm_storeu_si128((__m128i *)(dst + w * cp + cb * 16), q_codes16(_mm512_loadu_ps(src + w * 16), inv, z, lo, hi));
        }
    } else if (g->in_layout == TC__Q_ROWS) {
        const size_t c16 = g->cin / 16 * 16;
        const __mmask16 tail = (__mmask16)((1u << (g->cin - c16)) - 1);
        for (size_t w = 0; w < g->iw; w++) {
            const float *src = j->x + ((n * g->ih + h) * g->iw + w) * g->cin;
            uint8_t *o = dst + w * cp;
            for (size_t c = 0; c < c16; c += 16)
                _mm_storeu_si128((__m128i *)(o + c), q_codes16(_mm512_loadu_ps(src + c), inv, z, lo, hi));
            if (tail) _mm_mask_storeu_epi8(o + c16, tail, q_codes16(_mm512_maskz_loadu_ps(tail, src + c16), inv, z, lo, hi));
            for (size_t c = g->cin; c < cp; c++) o[c] = zp;
        }
    } else if (cp == 4) { /* NCHW of at most 4 channels (an image stem): 16 pixels' channel quads per 64 bytes */
        const size_t plane = g->ih * g->iw;
        const float *src[4] = {NULL, NULL, NULL, NULL};
        for (size_t c = 0; c < g->cin; c++) src[c] = j->x + (n * g->cin + c) * plane + h * g->iw;
        size_t w = 0;
        for (; w + 16 <= g->iw; w += 16) {
            __m128i b[4];
            for (int c = 0; c < 4; c++)
                b[c] = src[c] ? q_codes16(_mm512_loadu_ps(src[c] + w), inv, z, lo, hi) : _mm_set1_epi8((char)zp);
            /* bytes (channel, pixel) to (pixel, channel): pixels 0-7 and 8-15 of channels 0, 1 and 2, 3 in pairs, then
             * quads */
            const __m128i l01 = _mm_unpacklo_epi8(b[0], b[1]), h01 = _mm_unpackhi_epi8(b[0], b[1]);
            const __m128i l23 = _mm_unpacklo_epi8(b[2], b[3]), h23 = _mm_unpackhi_epi8(b[2], b[3]);
            _mm_storeu_si128((__m128i *)(dst + w * 4), _mm_unpacklo_epi16(l01, l23));
            _mm_storeu_si128((__m128i *)(dst + w * 4 + 16), _mm_unpackhi_epi16(l01, l23));
            _mm_storeu_si128((__m128i *)(dst + w * 4 + 32), _mm_unpacklo_epi16(h01, h23));
            _mm_storeu_si128((__m128i *)(dst + w * 4 + 48), _mm_unpackhi_epi16(h01, h23));
        }
        for (; w < g->iw; w++)
            for (size_t c = 0; c < 4; c++)
                dst[w * 4 + c] = src[c] ? tc__q_code_in(src[c][w], j->inv_scale, zp, g->lo, g->hi) : zp;
    } else {
        const size_t plane = g->ih * g->iw;
        for (size_t c = 0; c < g->cin; c++) {
            const float *src = j->x + (n * g->cin + c) * plane + h * g->iw;
            for (size_t w = 0; w < g->iw; w++) dst[w * cp + c] = tc__q_code_in(src[w], j->inv_scale, zp, g->lo, g->hi);
        }
        for (size_t w = 0; w < g->iw; w++)
            for (size_t c = g->cin; c < cp; c++) dst[w * cp + c] = zp;
    }
}

/* What the epilogue reads besides the accumulators, loaded into locals once per tile: its stores go through uint8_t
 * pointers (the chain's images), which may alias anything, so fields read through j for every pixel are reloaded after
 * each store. q_blk: one block of 16 channels (comp, and mult and bias on the block's mask); q_consts: the rest. */
typedef struct q_blk {
    __m512i comp;
    __m512 mult, bias;
} q_blk;
typedef struct q_consts {
    tc__vact act;
    uint8_t *yq;
    __m512 o_inv, o_zp, o_lo, o_hi, r_scale;
    __m512i r_zp;
} q_consts;

static inline __attribute__((always_inline)) q_blk q_blk_of(const q_job *j, size_t oc, __mmask16 mask) {
    return (q_blk){_mm512_loadu_si512(j->comp + oc), _mm512_maskz_loadu_ps(mask, j->mult + oc),
                   j->bias ? _mm512_maskz_loadu_ps(mask, j->bias + oc) : _mm512_setzero_ps()};
}
static inline __attribute__((always_inline)) q_consts q_consts_of(const q_job *j) {
    const tc__qconv_geom *g = j->g;
    return (q_consts){j->act, j->yq, _mm512_set1_ps(j->o_inv), _mm512_set1_ps((float)g->o_zp),
                      _mm512_set1_ps((float)g->o_lo), _mm512_set1_ps((float)g->o_hi), _mm512_set1_ps(j->r_scale),
                      _mm512_set1_epi32(j->r_zp)};
}

/* The accumulator less the zero point's share, dequantized: the same operations as tc__lowp_value with a per-channel
 * scale (v * mult + bias). */
static inline __attribute__((always_inline)) __m512 q_dequant(const q_blk *k, __m512i acc) {
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(acc, k->comp)), k->mult, k->bias);
}

/* Pixel i, block b of o's residual image of u8 codes, dequantized: (u - r_zp) * r_scale. */
static inline __attribute__((always_inline)) __m512 q_res_image(const q_consts *c, const tc__lowp_out *o, int i, int b,
                                                                __mmask16 mask) {
    const __m128i u = _mm_maskz_loadu_epi8(mask, (const uint8_t *)o->rimg + o->roff[i] + (size_t)b * 16);
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepu8_epi32(u), c->r_zp)), c->r_scale);
}

/* v quantized into pixel i, block b of the next layer's image (the INT8 chain), as its quantization pass would. */
static inline __attribute__((always_inline)) void q_put_codes(const q_consts *c, const tc__lowp_out *o, int i, int b,
                                                              __mmask16 mask, __m512 v) {
    _mm_mask_storeu_epi8(c->yq + o->qoff[i] + (size_t)b * 16, mask, q_codes16(v, c->o_inv, c->o_zp, c->o_lo, c->o_hi));
}

/* Pixel i, block b (its q_blk k): the accumulator dequantized (q_dequant), + the residual, the activation, stored
 * (NCHW, NCHW16c, rows) or, in the INT8 chain, quantized into the next layer's image (q_put_codes). A residual image's
 * codes are dequantized and added where an FP32 residual is: after the scale and bias, before the activation. */
static inline __attribute__((always_inline)) void q_store_with(const q_consts *c, const q_blk *k, const tc__lowp_out *o,
                                                               int i, int b, __m512i acc, __mmask16 mask, __m512i lanes) {
    __m512 v = q_dequant(k, acc);
    v = o->rimg != NULL ? _mm512_add_ps(v, q_res_image(c, o, i, b, mask)) : tc__lowp_add_res(o, i, b, v, mask, lanes);
    v = tc__qact_avx512(&c->act, v); /* (GELU, sigmoid, SiLU: qact_avx512.h's short forms) */
    if (c->yq == NULL) tc__lowp_put(o, i, b, v, mask, lanes);
    else q_put_codes(c, o, i, b, mask, v);
}

/* A tile's epilogue operands in locals: its output addressing, q_consts, the q_blk of each of its nb blocks (the last on
 * last_mask) and the lane offsets of scattered stores. */
typedef struct q_tile_epi {
    tc__lowp_out o;
    q_consts c;
    q_blk k[4];
    __m512i lanes;
} q_tile_epi;
static inline __attribute__((always_inline)) void q_tile_epi_of(const q_job *j, const tc__lowp_out *o, int nb,
                                                                __mmask16 last_mask, q_tile_epi *e) {
    e->o = *o;
    e->c = q_consts_of(j);
    e->lanes = tc__lowp_lanes(o->ls);
#pragma GCC unroll 4
    for (int b = 0; b < nb; b++) e->k[b] = q_blk_of(j, o->oc0 + (size_t)b * 16, b == nb - 1 ? last_mask : (__mmask16)0xffff);
}
/* Pixel i, block b of the tile: q_store_with on its locals. */
static inline __attribute__((always_inline)) void q_tile_store(const q_tile_epi *e, int i, int b, int nb, __m512i acc,
                                                               __mmask16 last_mask) {
    q_store_with(&e->c, &e->k[b], &e->o, i, b, acc, b == nb - 1 ? last_mask : (__mmask16)0xffff, e->lanes);
}

/* The residual of q_epi: none, FP32 (o->res, contiguous lanes), or an image of u8 codes (o->rimg). */
enum { Q_RES_NONE, Q_RES_F32, Q_RES_IMAGE };

/* A tile's epilogue for one activation kind, output (FP32 on contiguous lanes, or the chain's image) and residual, all
 * constants: q_store_with's operations in the same order (same bits), with the tile's q_blk and the output addressing
 * in locals. */
static inline __attribute__((always_inline)) void q_epi(const q_job *j, const tc__lowp_out *op, int i0,
                                                        const __m512i *sums, int mr, int nb, __mmask16 last_mask,
                                                        const tc__vact_kind kind, const bool chain, const int res,
                                                        const bool full_range) {
    const tc__lowp_out o = *op; /* a local: the u8 stores cannot alias it */
    q_consts c = q_consts_of(j);
    const float alpha = j->act.alpha, beta = j->act.beta;
    const bool relu_clamp = chain && kind == TC__VACT_RELU; /* (q_relu_lo) */
    if (relu_clamp) c.o_lo = q_relu_lo(c.o_lo, c.o_zp);
    q_blk k[TC__LOWP_GROUP_BLOCKS];
    __mmask16 mask[TC__LOWP_GROUP_BLOCKS];
    for (int b = 0; b < nb; b++) {
        mask[b] = b == nb - 1 ? last_mask : (__mmask16)0xffff;
        k[b] = q_blk_of(j, o.oc0 + (size_t)b * 16, mask[b]);
    }
    for (int i = i0; i < i0 + mr; i++)
        for (int b = 0; b < nb; b++) {
            const size_t off = (size_t)i * o.ps + (size_t)b * o.bs;
            __m512 v = q_dequant(&k[b], sums[(i - i0) * nb + b]);
            if (res == Q_RES_IMAGE) v = _mm512_add_ps(v, q_res_image(&c, &o, i, b, mask[b]));
            if (res == Q_RES_F32) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask[b], o.res + off));
            if (!relu_clamp) v = tc__qact_avx512_kind(v, kind, alpha, beta);
            if (chain && full_range)
                _mm_mask_storeu_epi8(c.yq + o.qoff[i] + (size_t)b * 16, mask[b],
                                     q_codes16_full(v, c.o_inv, c.o_zp, c.o_lo));
            else if (chain) q_put_codes(&c, &o, i, b, mask[b], v);
            else _mm512_mask_storeu_ps(o.y + off, mask[b], v);
        }
}

#define Q_EPI_RES(KIND, CHAIN, NB, LM, FULL)                                                                          \
    (res == Q_RES_F32     ? q_epi(j, o, i0, sums, mr, NB, LM, KIND, CHAIN, Q_RES_F32, FULL)                              \
     : res == Q_RES_IMAGE ? q_epi(j, o, i0, sums, mr, NB, LM, KIND, CHAIN, Q_RES_IMAGE, FULL)                            \
                          : q_epi(j, o, i0, sums, mr, NB, LM, KIND, CHAIN, Q_RES_NONE, FULL))
/* a full group (4 blocks of 16 channels; codes up to 255 in a chain) with constant masks and an unrolled block loop, or
 * nb blocks */
#define Q_EPI(KIND)                                                                                                   \
    (nb == TC__LOWP_GROUP_BLOCKS && last_mask == 0xffff && (!chain || j->g->o_hi == 255)                              \
         ? (chain ? Q_EPI_RES(KIND, true, TC__LOWP_GROUP_BLOCKS, 0xffff, true)                                        \
                  : Q_EPI_RES(KIND, false, TC__LOWP_GROUP_BLOCKS, 0xffff, false))                                     \
         : (chain ? Q_EPI_RES(KIND, true, nb, last_mask, false) : Q_EPI_RES(KIND, false, nb, last_mask, false)))

/*
 * The epilogue of a tile whose sums (its pixel i, block b at sums[i * nb + b]; pixel i0 + i of o) the microkernel left
 * in memory. Out of line: inlined in each of the 48 tile sizes, the general store (its branches on the layout,
 * residual, activation and output taken for every vector) was ~15% of a BERT-shaped MatMul's time. No activation,
 * Relu, Clip, HardSwish, sigmoid, SiLU and GELU (erf) on contiguous lanes (rows, NCHW16c, the chain's image) take
 * q_epi's variants, the branches taken once per tile; the rest q_tile_store's general path. Same bits.
 */
static __attribute__((noinline, unused)) void q_epilogue(const q_job *j, const tc__lowp_out *o, int i0,
                                                         const __m512i *sums, int mr, int nb, __mmask16 last_mask) {
    const bool chain = j->yq != NULL;
    const int res = o->rimg ? Q_RES_IMAGE : o->res ? Q_RES_F32 : Q_RES_NONE;
    if (o->ls == 1 || (chain && res != Q_RES_F32)) {
        switch ((tc__vact_kind)j->act.kind) {
        case TC__VACT_NONE: Q_EPI(TC__VACT_NONE); return;
        case TC__VACT_RELU: Q_EPI(TC__VACT_RELU); return;
        case TC__VACT_CLIP: Q_EPI(TC__VACT_CLIP); return;
        case TC__VACT_HARDSWISH: Q_EPI(TC__VACT_HARDSWISH); return;
        case TC__VACT_SIGMOID: Q_EPI(TC__VACT_SIGMOID); return;
        case TC__VACT_SILU: Q_EPI(TC__VACT_SILU); return;
        case TC__VACT_GELU_ERF: Q_EPI(TC__VACT_GELU_ERF); return;
        default: break;
        }
    }
    q_tile_epi e;
    q_tile_epi_of(j, o, nb, last_mask, &e);
    for (int i = 0; i < mr; i++)
        for (int b = 0; b < nb; b++) q_tile_store(&e, i0 + i, b, nb, sums[i * nb + b], last_mask);
}
#undef Q_EPI
#undef Q_EPI_RES

/* The same for one pixel and block, with the locals loaded here (the AMX kernels). */
static inline __attribute__((always_inline)) void q_store(const q_job *j, const tc__lowp_out *o, int i, int b,
                                                          __m512i acc, __mmask16 mask, __m512i lanes) {
    const q_consts c = q_consts_of(j);
    const q_blk k = q_blk_of(j, o->oc0 + (size_t)b * 16, mask);
    q_store_with(&c, &k, o, i, b, acc, mask, lanes);
}

/* The job of a run (X quantized into scratch unless it is the chain's image; Y's border filled when it is one); the
 * caller frees *scratch with tc__kernel_free. */
static inline tc_status q_setup(const tc__kernel_ctx *ctx, const tc__qconv_geom *g, q_job *j, unsigned char **scratch) {
    tc__lowp_io io;
    tc_status st = tc__lowp_io_of(ctx, g->cout, &io);
    if (st != TC_STATUS_OK) return st;
    *j = (q_job){.g = g, .x = io.x, .w = io.w, .y = io.y, .bias = io.bias, .res = io.res, .act = io.act,
                 .inv_scale = 1.0f / g->x_scale};
    j->mult = (const float *)(j->w + (g->depthwise ? tc__qdw_vnni_weight_bytes(g) : tc__qconv_weight_bytes(g)));
    j->comp = (const int32_t *)(j->mult + g->cout16);
    const size_t img = g->batch * g->hp * g->wp * g->cp;
    *scratch = tc__kernel_alloc(ctx, tc__qconv_scratch(g));
    if (*scratch == NULL) return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "%s: no scratch for the int8 image", ctx->op_type);
    j->xq = g->in_image ? (uint8_t *)io.x : *scratch; /* the INT8 chain: X is already the image */
    size_t *tap_off = (size_t *)(*scratch + (img + 63) / 64 * 64);
    for (size_t a = 0; a < g->kh; a++)
        for (size_t c = 0; c < g->kw; c++) tap_off[a * g->kw + c] = (a * g->dh * g->wp + c * g->dw) * g->cp;
    j->tap_off = tap_off;
    /* At dilation 1 a kernel row's taps are consecutive pixels of the channels-last image: the dense microkernel reads
     * each kernel row as one run of kw * cp bytes (the weights are packed in the same order: tap, then quad). */
    j->run_step = g->dw == 1 ? g->kw : 1;
    j->runs = g->kh * g->kw / j->run_step;
    j->run_quads = j->run_step * g->cp / 4;
    j->grid = tc__lowp_grid_of(g->oh, g->ow, g->sh, g->sw, g->hp, g->wp, g->cp, g->cout, g->out_layout,
                               tc__lowp_threads(ctx->exec));
    if (g->out_image) { /* the next layer's image: border and padding channels hold its zero point */
        j->yq = (uint8_t *)io.y;
        j->o_inv = 1.0f / g->o_scale;
        tc__lowp_grid_out_image(&j->grid, g->o_hp, g->o_wp, g->o_cp, g->o_pt, g->o_pl);
        tc__lowp_fill_out_border(&j->grid, g->batch, j->yq, 1, g->o_zp);
    }
    if (g->res_image) { /* the residual is an image of u8 codes (tc.int8_res_image, TC__INT8_IMG_U8) */
        tc__lowp_grid_res_image(&j->grid, io.res, g->r_hp, g->r_wp, g->r_cp, g->r_pt, g->r_pl);
        j->r_zp = g->r_zp, j->r_scale = g->r_scale;
        j->res = NULL;
    }
    j->chain_inline = j->yq != NULL && g->o_hi == 255 && j->res == NULL &&
                      (j->act.kind == TC__VACT_NONE || j->act.kind == TC__VACT_RELU);
    return TC_STATUS_OK;
}

/* Runs a set-up job: X quantized into the image (unless it is the chain's), then compute(job, strip_task, group) over
 * lowp_grid.h's tasks. */
static inline tc_status q_run_tasks(const tc__kernel_ctx *ctx, const tc__qconv_geom *g,
                                    void (*compute)(void *, size_t, size_t)) {
    q_job j;
    unsigned char *scratch = NULL;
    tc_status st = q_setup(ctx, g, &j, &scratch);
    if (st == TC_STATUS_OK)
        tc__lowp_run(ctx->exec, &j.grid, g->batch, g->in_image ? 0 : g->batch * g->hp, q_quantize_row, compute, &j);
    if (scratch != NULL) tc__kernel_free(ctx, scratch);
    return st;
}

#endif
