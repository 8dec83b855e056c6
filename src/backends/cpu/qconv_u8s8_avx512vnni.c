/*
 * qconv_u8s8_avx512vnni.c - the INT8 operator of qconv_u8s8.h on AVX512-VNNI: quantization of X
 * into the padded channels-last u8 image, the vpdpbusd microkernels (MR output pixels x NB blocks of
 * 16 output channels held in zmm accumulators over every tap and input channel), the dequantizing
 * epilogue (bias, residual, activation) and the threaded driver. The task loop and the store are
 * lowp_tile.h's, shared with the FP16 and BF16 kernels. The AMX driver (tc__qconv_run_amx) is here too: the
 * same image and epilogue around amx_panel_amx.c's tiles.
 */
#include <immintrin.h>
#include <string.h>

#include "backends/cpu/lowp_tile.h"
#include "backends/cpu/qconv_u8s8.h"

typedef struct q_job {
    const tc__qconv_geom *g;
    const float *x;
    uint8_t *xq;
    const size_t *tap_off; /* byte offset of each tap in the padded image */
    const int8_t *w;
    const float *mult;
    const int32_t *comp;
    const float *bias, *res;
    float *y;
    tc__vact act;
    float inv_scale;
    uint8_t *yq;   /* INT8 chain: the output image (else NULL) */
    float o_inv;   /* its 1 / scale */
    tc__lowp_grid grid;
} q_job;

/* 16 floats to 16 u8 codes: round(x / s) + z clamped to [lo, hi] (NaN -> lo), as tc__q_code_in. */
static inline __m128i q_codes16(__m512 v, __m512 inv, __m512 z, __m512 lo, __m512 hi) {
    v = _mm512_fmadd_ps(v, inv, z);
    v = _mm512_max_ps(v, lo); /* a NaN in v gives the second operand */
    v = _mm512_min_ps(v, hi);
    return _mm512_cvtusepi32_epi8(_mm512_cvtps_epi32(v));
}

/* Quantizes padded row r of image n: the border and padding channels get z (x = 0). */
static void q_quantize_row(void *arg, size_t task) {
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
            const float *src = j->x + w * g->cin;
            uint8_t *o = dst + w * cp;
            for (size_t c = 0; c < c16; c += 16)
                _mm_storeu_si128((__m128i *)(o + c), q_codes16(_mm512_loadu_ps(src + c), inv, z, lo, hi));
            if (tail) _mm_mask_storeu_epi8(o + c16, tail, q_codes16(_mm512_maskz_loadu_ps(tail, src + c16), inv, z, lo, hi));
            for (size_t c = g->cin; c < cp; c++) o[c] = zp;
        }
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

/* Pixel i, block b: the accumulator less the zero point's share, dequantized, then the epilogue. */
static inline __attribute__((always_inline)) void q_store(const q_job *j, const tc__lowp_out *o, int i, int b,
                                                          __m512i acc, __mmask16 mask, __m512i lanes) {
    const size_t oc = o->oc0 + (size_t)b * 16;
    __m512 v = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc, _mm512_loadu_si512(j->comp + oc)));
    if (j->yq == NULL) {
        tc__lowp_store(&j->act, j->mult, j->bias, o, i, b, v, mask, lanes);
        return;
    }
    /* INT8 chain: the FP32 value, then the next layer's code, as its quantization pass would (q_codes16) */
    v = tc__lowp_value(&j->act, j->mult, j->bias, o, i, b, v, mask, lanes);
    const tc__qconv_geom *g = j->g;
    _mm_mask_storeu_epi8(j->yq + o->qoff[i] + (size_t)b * 16, mask,
                         q_codes16(v, _mm512_set1_ps(j->o_inv), _mm512_set1_ps((float)g->o_zp),
                                   _mm512_set1_ps((float)g->o_lo), _mm512_set1_ps((float)g->o_hi)));
}

/*
 * The microkernel: MR pixels (at x0 + xoff[i]) x NB blocks of 16 output channels (weights w0 + b * wbs),
 * accumulated over every tap and every 4 input channels, then dequantized and stored.
 */
static inline __attribute__((always_inline)) void q_tile(const q_job *j, const uint8_t *x0, const size_t *xoff,
                                                         const int8_t *w0, size_t wbs, const tc__lowp_out *o,
                                                         __mmask16 last_mask, const int MR, const int NB) {
    const tc__qconv_geom *g = j->g;
    const size_t taps = g->kh * g->kw, c4 = g->cp / 4;
    __m512i acc[12][4];
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int b = 0; b < NB; b++) acc[i][b] = _mm512_setzero_si512();
    const int8_t *wp = w0;
    for (size_t t = 0; t < taps; t++) {
        const uint8_t *xt = x0 + j->tap_off[t];
        for (size_t c = 0; c < c4; c++, wp += 64, xt += 4) {
            __m512i wv[4];
#pragma GCC unroll 4
            for (int b = 0; b < NB; b++) wv[b] = _mm512_loadu_si512(wp + (size_t)b * wbs);
#pragma GCC unroll 12
            for (int i = 0; i < MR; i++) {
                int32_t q4;
                memcpy(&q4, xt + xoff[i], sizeof q4);
                const __m512i xb = _mm512_set1_epi32(q4);
#pragma GCC unroll 4
                for (int b = 0; b < NB; b++) acc[i][b] = _mm512_dpbusd_epi32(acc[i][b], xb, wv[b]);
            }
        }
    }
    const __m512i lanes = tc__lowp_lanes(o->ls);
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int b = 0; b < NB; b++) q_store(j, o, i, b, acc[i][b], b == NB - 1 ? last_mask : (__mmask16)0xffff, lanes);
}

/* One instantiation per (MR, NB): the tile calls with constant sizes. */
#define Q_FN(MR, NB)                                                                                                  \
    static void q_tile_##MR##x##NB(const q_job *j, const uint8_t *x0, const size_t *xoff, const int8_t *w0,           \
                                   size_t wbs, const tc__lowp_out *o, __mmask16 m) {                                          \
        q_tile(j, x0, xoff, w0, wbs, o, m, MR, NB);                                                                     \
    }
#define Q_FNS6(NB) Q_FN(1, NB) Q_FN(2, NB) Q_FN(3, NB) Q_FN(4, NB) Q_FN(5, NB) Q_FN(6, NB)
#define Q_FNS12(NB) Q_FNS6(NB) Q_FN(7, NB) Q_FN(8, NB) Q_FN(9, NB) Q_FN(10, NB) Q_FN(11, NB) Q_FN(12, NB)
Q_FNS6(4)
Q_FNS6(3)
Q_FNS12(2)
Q_FNS12(1)

typedef void (*q_tile_fn)(const q_job *, const uint8_t *, const size_t *, const int8_t *, size_t,
                          const tc__lowp_out *, __mmask16);

#define Q_ROW6(NB) {q_tile_1x##NB, q_tile_2x##NB, q_tile_3x##NB, q_tile_4x##NB, q_tile_5x##NB, q_tile_6x##NB}
#define Q_ROW12(NB)                                                                                                   \
    {q_tile_1x##NB, q_tile_2x##NB, q_tile_3x##NB, q_tile_4x##NB, q_tile_5x##NB, q_tile_6x##NB,                       \
     q_tile_7x##NB, q_tile_8x##NB, q_tile_9x##NB, q_tile_10x##NB, q_tile_11x##NB, q_tile_12x##NB}
static const q_tile_fn q_tiles_nb4[6] = Q_ROW6(4), q_tiles_nb3[6] = Q_ROW6(3);
static const q_tile_fn q_tiles_nb2[12] = Q_ROW12(2), q_tiles_nb1[12] = Q_ROW12(1);

/* The tile of lowp_tile.h's task loop: the (mr, nb) microkernel on the weights of block b0. */
static void q_tile_at(const void *job, int mr, int nb, size_t b0, const size_t *xoff, const tc__lowp_out *o,
                      __mmask16 last_mask) {
    const q_job *j = job;
    const tc__qconv_geom *g = j->g;
    const size_t wbs = g->kh * g->kw * g->cp * 16; /* bytes per block of 16 channels */
    const q_tile_fn *tiles = nb == 4 ? q_tiles_nb4 : nb == 3 ? q_tiles_nb3 : nb == 2 ? q_tiles_nb2 : q_tiles_nb1;
    tiles[mr - 1](j, j->xq, xoff, j->w + b0 * wbs, wbs, o, last_mask);
}

static void q_compute(void *arg, size_t strip_task, size_t group) {
    const q_job *j = arg;
    tc__lowp_task(&j->grid, strip_task, group, j->y, j->res, q_tile_at, j);
}

/* The job of a run (X quantized into scratch unless it is the chain's image; Y's border filled when it is one); the
 * caller frees *scratch with tc__kernel_free. */
static tc_status q_setup(const tc__kernel_ctx *ctx, const tc__qconv_geom *g, q_job *j, unsigned char **scratch) {
    tc__lowp_io io;
    tc_status st = tc__lowp_io_of(ctx, g->cout, &io);
    if (st != TC_STATUS_OK) return st;
    *j = (q_job){.g = g, .x = io.x, .w = io.w, .y = io.y, .bias = io.bias, .res = io.res, .act = io.act,
                 .inv_scale = 1.0f / g->x_scale};
    j->mult = (const float *)(j->w + tc__qconv_weight_bytes(g));
    j->comp = (const int32_t *)(j->mult + g->cout16);
    const size_t img = g->batch * g->hp * g->wp * g->cp;
    *scratch = tc__kernel_alloc(ctx, tc__qconv_scratch(g));
    if (*scratch == NULL) return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "%s: no scratch for the int8 image", ctx->op_type);
    j->xq = g->in_image ? (uint8_t *)io.x : *scratch; /* the INT8 chain: X is already the image */
    size_t *tap_off = (size_t *)(*scratch + (img + 63) / 64 * 64);
    for (size_t a = 0; a < g->kh; a++)
        for (size_t c = 0; c < g->kw; c++) tap_off[a * g->kw + c] = (a * g->dh * g->wp + c * g->dw) * g->cp;
    j->tap_off = tap_off;
    j->grid = tc__lowp_grid_of(g->oh, g->ow, g->sh, g->sw, g->hp, g->wp, g->cp, g->cout, g->out_layout);
    if (g->out_image) { /* the next layer's image: border and padding channels hold its zero point */
        j->yq = (uint8_t *)io.y;
        j->o_inv = 1.0f / g->o_scale;
        tc__lowp_grid_out_image(&j->grid, g->o_hp, g->o_wp, g->o_cp, g->o_pt, g->o_pl);
        memset(j->yq, g->o_zp, g->batch * g->o_hp * g->o_wp * g->o_cp);
    }
    return TC_STATUS_OK;
}

tc_status tc__qconv_run_avx512vnni(const tc__kernel_ctx *ctx, const tc__qconv_geom *g) {
    q_job j;
    unsigned char *scratch = NULL;
    tc_status st = q_setup(ctx, g, &j, &scratch);
    if (st == TC_STATUS_OK)
        tc__lowp_run(ctx->pool, &j.grid, g->batch, g->in_image ? 0 : g->batch * g->hp, q_quantize_row, q_compute, &j);
    if (scratch != NULL) tc__kernel_free(ctx, scratch);
    return st;
}

/* The AMX run (amx_panel.h): panels x groups of up to 4 blocks, each block pair accumulated in tiles, then the
 * VNNI epilogue (q_store) on the rows of C. */
typedef struct qamx_run {
    const q_job *j;
    tc__amx_plan plan;
} qamx_run;

/* C's row of pixel o / block b: the VNNI epilogue. */
static void qamx_store(const void *job, const tc__lowp_out *o, int b, const void *row, __mmask16 mask, __m512i lanes) {
    q_store(job, o, 0, b, _mm512_loadu_si512(row), mask, lanes);
}

static void qamx_compute(void *arg, size_t panel, size_t group) {
    const qamx_run *r = arg;
    const q_job *j = r->j;
    tc__amx_drive_task(&r->plan, &j->grid, j->g->cout, j->xq, (const uint8_t *)j->w, j->y, j->res, panel, group,
                       tc__amx_dot_u8s8, qamx_store, j);
}

tc_status tc__qconv_run_amx(const tc__kernel_ctx *ctx, const tc__qconv_geom *g) {
    qamx_run r;
    if (!tc__qconv_amx_plan(g, &r.plan))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: a layer the AMX int8 kernel does not take", ctx->op_type);
    q_job j;
    unsigned char *scratch = NULL;
    tc_status st = q_setup(ctx, g, &j, &scratch);
    r.j = &j;
    if (st == TC_STATUS_OK)
        tc__lowp_run_tasks(ctx->pool, q_quantize_row, &j, g->in_image ? 0 : g->batch * g->hp, qamx_compute, &r,
                           r.plan.panels, j.grid.groups);
    if (scratch != NULL) tc__kernel_free(ctx, scratch);
    return st;
}
