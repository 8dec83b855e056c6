/*
 * qdwconv_avx2.c - the depthwise INT8 Conv on AVX2 (qconv_u8s8.h), for CPUs without VNNI: X in the padded
 * channels-last image the dense AVX2 kernels use (16-bit centred codes, or the u7 variant's bytes, or the u8
 * variant's codes with their zero point, widened to 16 bits here, less the zero point), Cp a multiple of 16. Per output pixel and block of 16 channels, two taps per step: their codes
 * interleaved per channel (vpunpck{l,h}wd) and multiplied by the pair of taps' weights with vpmaddwd, exact in
 * 32 bits (|code| <= 255, |w| <= 127). The epilogue, the image quantization and the task loop are qconv_avx2.h's,
 * so the chain reads and writes the same images as the dense kernels.
 */
#include "backends/cpu/qconv_avx2.h"

/* The image elements: 16-bit centred codes, u7 bytes (q), u8 bytes (q + z). */
enum { DW_S16, DW_U7, DW_U8 };

/* 16 channels of the image at element at, as 16-bit centred codes (u7: zero-extended bytes; u8: less z). */
static inline __m256i dw_load16(const void *img, size_t at, const int E, __m256i z) {
    if (E == DW_S16) return _mm256_loadu_si256((const __m256i *)((const int16_t *)img + at));
    const __m256i b = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)((const uint8_t *)img + at)));
    return E == DW_U8 ? _mm256_sub_epi16(b, z) : b;
}

/*
 * MR pixels (window offsets xoff) x the 16 channels from c0 of the image (block weights w0), stored as output
 * channels oc .. oc + n. The accumulators hold channels 0-3, 8-11 (lo) and 4-7, 12-15 (hi), vpunpck's order.
 */
static inline __attribute__((always_inline)) void dw_tile(const s16_job *j, const size_t *xoff, size_t c0,
                                                          const int16_t *w0, const tc__lowp_out *o, int i0, size_t oc,
                                                          int n, const int MR, const int E) {
    __m256i lo[S16_MR], hi[S16_MR];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++) lo[i] = hi[i] = _mm256_setzero_si256();
    const size_t taps = j->runs;
    const __m256i z = _mm256_set1_epi16((int16_t)j->fill); /* (u8: the zero point, the border's byte) */
    for (size_t t = 0; t < taps; t += 2, w0 += 32) {
        const __m256i wl = _mm256_loadu_si256((const __m256i *)w0), wh = _mm256_loadu_si256((const __m256i *)(w0 + 16));
        const size_t ta = j->run_off[t] + c0, tb = j->run_off[t + 1 < taps ? t + 1 : t] + c0; /* odd: weight 0 */
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) {
            const __m256i xa = dw_load16(j->img, xoff[i] + ta, E, z), xb = dw_load16(j->img, xoff[i] + tb, E, z);
            lo[i] = _mm256_add_epi32(lo[i], _mm256_madd_epi16(_mm256_unpacklo_epi16(xa, xb), wl));
            hi[i] = _mm256_add_epi32(hi[i], _mm256_madd_epi16(_mm256_unpackhi_epi16(xa, xb), wh));
        }
    }
    __m256i acc[S16_MR][2];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++) {
        acc[i][0] = _mm256_permute2x128_si256(lo[i], hi[i], 0x20); /* channels 0-7 */
        acc[i][1] = _mm256_permute2x128_si256(lo[i], hi[i], 0x31); /* 8-15 */
    }
    s16_store_tile(j, o, i0, MR, oc, n, acc);
}

#define DW_FN(MR)                                                                                                     \
    static void dw_s16_##MR(const s16_job *j, const size_t *xoff, size_t c0, const int16_t *w0, const tc__lowp_out *o, \
                            int i0, size_t oc, int n) {                                                                 \
        dw_tile(j, xoff, c0, w0, o, i0, oc, n, MR, DW_S16);                                                             \
    }                                                                                                                   \
    static void dw_u7_##MR(const s16_job *j, const size_t *xoff, size_t c0, const int16_t *w0, const tc__lowp_out *o,  \
                           int i0, size_t oc, int n) {                                                                  \
        dw_tile(j, xoff, c0, w0, o, i0, oc, n, MR, DW_U7);                                                              \
    }                                                                                                                   \
    static void dw_u8_##MR(const s16_job *j, const size_t *xoff, size_t c0, const int16_t *w0, const tc__lowp_out *o,  \
                           int i0, size_t oc, int n) {                                                                  \
        dw_tile(j, xoff, c0, w0, o, i0, oc, n, MR, DW_U8);                                                              \
    }
DW_FN(1)
DW_FN(2)
DW_FN(3)
DW_FN(4)
DW_FN(5)
DW_FN(6)

typedef void (*dw_tile_fn)(const s16_job *, const size_t *, size_t, const int16_t *, const tc__lowp_out *, int, size_t,
                           int);
static const dw_tile_fn dw_s16_tiles[S16_MR] = {dw_s16_1, dw_s16_2, dw_s16_3, dw_s16_4, dw_s16_5, dw_s16_6};
static const dw_tile_fn dw_u7_tiles[S16_MR] = {dw_u7_1, dw_u7_2, dw_u7_3, dw_u7_4, dw_u7_5, dw_u7_6};
static const dw_tile_fn dw_u8_tiles[S16_MR] = {dw_u8_1, dw_u8_2, dw_u8_3, dw_u8_4, dw_u8_5, dw_u8_6};

/* The tile of lowp_grid.h's task loop: each block of 16 channels (input channels = output channels), in runs of up
 * to S16_MR pixels. */
static void dw_tile_at(const void *job, int mr, int nb, size_t b0, const size_t *xoff, const tc__lowp_out *o,
                       uint16_t last_mask) {
    const s16_job *j = job;
    const size_t wbs = tc__qdw_tap_pairs(j->g) * 32; /* weight elements per block of 16 channels */
    const int last_n = __builtin_popcount(last_mask);
    const dw_tile_fn *tiles = j->u8 ? dw_u8_tiles : j->u7 ? dw_u7_tiles : dw_s16_tiles;
    for (int b = 0; b < nb; b++) {
        const size_t blk = b0 + (size_t)b, oc = o->oc0 + (size_t)b * 16;
        const int16_t *w0 = (const int16_t *)j->w + blk * wbs;
        const int n = b == nb - 1 ? last_n : 16;
        for (int i = 0, left = (mr + S16_MR - 1) / S16_MR; i < mr; left--) { /* runs of equal size */
            const int m = (mr - i + left - 1) / left;
            tiles[m - 1](j, xoff + i, blk * 16, w0, o, i, oc, n);
            i += m;
        }
    }
}

static void dw_compute(void *arg, size_t strip_task, size_t group) {
    const s16_job *j = arg;
    tc__lowp_task(&j->grid, strip_task, group, j->y, j->res, dw_tile_at, j);
}

tc_status tc__qdw_run_avx2(const tc__kernel_ctx *ctx, const tc__qconv_geom *g, int elem) {
    if (!g->depthwise || g->cp % 16 != 0)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: not a depthwise layer of the int8 kernel", ctx->op_type);
    if (elem == TC__QDW_U7 && !tc__qconv_u7_input(g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: the u7 int8 kernel needs a non-negative symmetric input",
                        ctx->op_type);
    /* (u8: s16_run's u8w7 job, bytes of the codes with border z; its dense-only fields unused) */
    return s16_run(ctx, g, elem == TC__QDW_U7 ? Q_U7 : elem == TC__QDW_U8 ? Q_U8W7 : Q_S16, dw_compute);
}
