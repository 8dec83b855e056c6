/*
 * qdwconv_avx512vnni.c - the depthwise INT8 Conv on AVX512-VNNI (qconv_u8s8.h): per output pixel and group of up
 * to four blocks of 16 channels, four taps per step, their image rows interleaved per channel into dwords and
 * multiplied by vpdpbusd; the sums go back to channel order once per pixel (a 4 x 4 transpose of 128-bit lanes).
 * The image, its quantization, the epilogue and the chain are the dense VNNI kernel's (qconv_vnni.h), the task
 * loop lowp_grid.h's, so the depthwise layer reads and writes the images the dense layers do.
 */
#include "backends/cpu/qconv_vnni.h"

#define DW_MR 4 /* output pixels per microkernel: 16 accumulators */

/* Group bytes [0, 16 * NB) at p: a plain load for a whole group, else the selected bytes only (the rest 0). */
static inline __attribute__((always_inline)) __m512i dw_load(const void *p, const int NB) {
    if (NB == 4) return _mm512_loadu_si512(p);
    return _mm512_maskz_loadu_epi8((__mmask64)((1ull << (16 * NB)) - 1), p);
}

/*
 * MR pixels (windows at xoff[i]) x the NB blocks of the group at channel c0 (weights w0), every tap, then the
 * epilogue: pixel i of the tile is pixel i0 + i of o. acc[i][v] holds, in lane L, channels 16 L + 4 v .. + 3.
 */
static inline __attribute__((always_inline)) void dw_tile(const q_job *j, const size_t *xoff, size_t c0,
                                                          const int8_t *w0, const tc__lowp_out *o, int i0,
                                                          __mmask16 last_mask, const int MR, const int NB) {
    const tc__qconv_geom *g = j->g;
    const size_t taps = g->kh * g->kw, quads = tc__qdw_tap_quads(g), vb = 16 * (size_t)NB;
    __m512i acc[DW_MR][4];
#pragma GCC unroll 4
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++) acc[i][v] = _mm512_setzero_si512();
    const int8_t *wq = w0;
    for (size_t q = 0; q < quads; q++, wq += 4 * vb) {
        __m512i wv[4];
        size_t off[4];
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++) {
            wv[v] = dw_load(wq + (size_t)v * vb, NB);
            const size_t t = 4 * q + (size_t)v;
            off[v] = j->tap_off[t < taps ? t : taps - 1] + c0; /* (a missing tap: the last again, weight 0) */
        }
#pragma GCC unroll 4
        for (int i = 0; i < MR; i++) {
            const uint8_t *p = j->xq + xoff[i];
            const __m512i x0 = dw_load(p + off[0], NB), x1 = dw_load(p + off[1], NB);
            const __m512i x2 = dw_load(p + off[2], NB), x3 = dw_load(p + off[3], NB);
            const __m512i l01 = _mm512_unpacklo_epi8(x0, x1), h01 = _mm512_unpackhi_epi8(x0, x1);
            const __m512i l23 = _mm512_unpacklo_epi8(x2, x3), h23 = _mm512_unpackhi_epi8(x2, x3);
            acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], _mm512_unpacklo_epi16(l01, l23), wv[0]);
            acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], _mm512_unpackhi_epi16(l01, l23), wv[1]);
            acc[i][2] = _mm512_dpbusd_epi32(acc[i][2], _mm512_unpacklo_epi16(h01, h23), wv[2]);
            acc[i][3] = _mm512_dpbusd_epi32(acc[i][3], _mm512_unpackhi_epi16(h01, h23), wv[3]);
        }
    }
    __m512i sums[DW_MR * 4];
#pragma GCC unroll 4
    for (int i = 0; i < MR; i++) {
        /* block L = lane L of acc[0..3]: t01 = (acc0 lanes 0 1, acc1 lanes 0 1), ... */
        const __m512i t0 = _mm512_shuffle_i32x4(acc[i][0], acc[i][1], 0x44), t1 = _mm512_shuffle_i32x4(acc[i][0], acc[i][1], 0xee);
        const __m512i t2 = _mm512_shuffle_i32x4(acc[i][2], acc[i][3], 0x44), t3 = _mm512_shuffle_i32x4(acc[i][2], acc[i][3], 0xee);
        const __m512i blk[4] = {_mm512_shuffle_i32x4(t0, t2, 0x88), _mm512_shuffle_i32x4(t0, t2, 0xdd),
                                _mm512_shuffle_i32x4(t1, t3, 0x88), _mm512_shuffle_i32x4(t1, t3, 0xdd)};
#pragma GCC unroll 4
        for (int b = 0; b < NB; b++) sums[i * NB + b] = blk[b];
    }
    q_epilogue(j, o, i0, sums, MR, NB, last_mask);
}

/* One instantiation per (MR, NB). */
#define DW_FN(MR, NB)                                                                                                 \
    static void dw_tile_##MR##x##NB(const q_job *j, const size_t *xoff, size_t c0, const int8_t *w0,                 \
                                    const tc__lowp_out *o, int i0, __mmask16 m) {                                       \
        dw_tile(j, xoff, c0, w0, o, i0, m, MR, NB);                                                                     \
    }
#define DW_FNS(NB) DW_FN(1, NB) DW_FN(2, NB) DW_FN(3, NB) DW_FN(4, NB)
DW_FNS(1)
DW_FNS(2)
DW_FNS(3)
DW_FNS(4)

typedef void (*dw_tile_fn)(const q_job *, const size_t *, size_t, const int8_t *, const tc__lowp_out *, int, __mmask16);
#define DW_ROW(NB) {dw_tile_1x##NB, dw_tile_2x##NB, dw_tile_3x##NB, dw_tile_4x##NB}
static const dw_tile_fn dw_tiles[4][DW_MR] = {DW_ROW(1), DW_ROW(2), DW_ROW(3), DW_ROW(4)};

/* The tile of lowp_grid.h's task loop: the group of nb blocks from b0 (a multiple of 4), in runs of up to DW_MR pixels
 * of equal size. */
static void dw_tile_at(const void *job, int mr, int nb, size_t b0, const size_t *xoff, const tc__lowp_out *o,
                       uint16_t last_mask) {
    const q_job *j = job;
    const int8_t *w0 = j->w + b0 * 16 * tc__qdw_tap_quads(j->g) * 4; /* earlier groups are whole */
    const dw_tile_fn *tiles = dw_tiles[nb - 1];
    for (int i = 0, left = (mr + DW_MR - 1) / DW_MR; i < mr; left--) {
        const int m = (mr - i + left - 1) / left;
        tiles[m - 1](j, xoff + i, b0 * 16, w0, o, i, last_mask);
        i += m;
    }
}

static void dw_compute(void *arg, size_t strip_task, size_t group) {
    const q_job *j = arg;
    tc__lowp_task(&j->grid, strip_task, group, j->y, j->res, dw_tile_at, j);
}

tc_status tc__qdw_run_avx512vnni(const tc__kernel_ctx *ctx, const tc__qconv_geom *g) {
    if (!g->depthwise || g->cp % 16 != 0)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: not a depthwise layer of the int8 kernel", ctx->op_type);
    return q_run_tasks(ctx, g, dw_compute);
}
