/*
 * qconv_s16_avx2.c - the INT8 operator of qconv_u8s8.h on AVX2, for CPUs without VNNI: X quantized into
 * a padded channels-last image of 16-bit centred codes (u - z), the vpmaddwd microkernel (up to 6 output
 * pixels x 16 output channels in ymm accumulators, a channel pair per step, exact in 32 bits), the
 * dequantizing epilogue (bias, residual, activation) into NCHW or row-major output, on lowp_grid.h's
 * task loop. The codes, weights and FP32 epilogue are the VNNI kernel's, so both give the same values.
 * In the INT8 chain (engine/lowp_chain.c) X is already this image, or Y is written as the next layer's
 * image of centred codes (its scale and zero point). The u7 variant (a non-negative X, qconv_u8s8.h) shares all
 * of it but the image's element (bytes of max(q, 0)) and the inner step (vpmaddubsw on 4 channels, then vpmaddwd
 * with ones), on the VNNI packing; its u7w7 form (7-bit weights, qconv_u8s8.h) sums the vpmaddubsw results of two
 * quads in 16 bits before that vpmaddwd, and so does u8w7 when the codes have 7 bits (tc.int8_code_max).
 */
#include "backends/cpu/qconv_avx2.h"
#include "backends/cpu/qimage.h"

/*
 * The microkernel: MR pixels (image offsets xoff[0..MR)) x 16 output channels (block weights w0, channel
 * oc), accumulated over every tap and every input-channel pair, then stored (n valid channels). Pixel
 * indices in o start at i0.
 */

static inline __attribute__((always_inline)) void s16_tile(const s16_job *j, const size_t *xoff, const void *w0,
                                                           const tc__lowp_out *o, int i0, size_t oc, int n, const int MR,
                                                           const q_variant V) {
    const bool U7 = V != Q_S16;
    const size_t runs = j->runs, pairs = j->run_pairs;
    __m256i acc[S16_MR][2];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++) acc[i][0] = acc[i][1] = _mm256_setzero_si256();
    const int16_t *wp = w0;
    const int8_t *wq = w0;
    const __m256i ones = _mm256_set1_epi16(1);
    for (size_t t = 0; t < runs && U7; t++) { /* u7: 4 channels per step, u8 x s8 pairs, then pairs of pairs */
        const uint8_t *xt = (const uint8_t *)j->img + j->run_off[t];
        size_t c = 0;
        /* u7w7 (and u8w7 on codes of at most 127): two quads per step; each vpmaddubsw lane is at most 2 * 127 * 64, so
         * two add exactly in 16 bits */
        for (; (V == Q_U7W7 || V == Q_U8W7P) && c + 2 <= pairs; c += 2, wq += 128, xt += 8) {
            const __m256i w0_lo = _mm256_loadu_si256((const __m256i *)wq);
            const __m256i w0_hi = _mm256_loadu_si256((const __m256i *)(wq + 32));
            const __m256i w1_lo = _mm256_loadu_si256((const __m256i *)(wq + 64));
            const __m256i w1_hi = _mm256_loadu_si256((const __m256i *)(wq + 96));
#pragma GCC unroll 6
            for (int i = 0; i < MR; i++) {
                int32_t q0, q1;
                memcpy(&q0, xt + xoff[i], sizeof q0);
                memcpy(&q1, xt + xoff[i] + 4, sizeof q1);
                const __m256i x0 = _mm256_set1_epi32(q0), x1 = _mm256_set1_epi32(q1);
                const __m256i lo = _mm256_add_epi16(_mm256_maddubs_epi16(x0, w0_lo), _mm256_maddubs_epi16(x1, w1_lo));
                const __m256i hi = _mm256_add_epi16(_mm256_maddubs_epi16(x0, w0_hi), _mm256_maddubs_epi16(x1, w1_hi));
                acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(lo, ones));
                acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(hi, ones));
            }
        }
        for (; c < pairs; c++, wq += 64, xt += 4) {
            const __m256i w_lo = _mm256_loadu_si256((const __m256i *)wq);
            const __m256i w_hi = _mm256_loadu_si256((const __m256i *)(wq + 32));
#pragma GCC unroll 6
            for (int i = 0; i < MR; i++) {
                int32_t quad;
                memcpy(&quad, xt + xoff[i], sizeof quad);
                const __m256i xb = _mm256_set1_epi32(quad);
                acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(_mm256_maddubs_epi16(xb, w_lo), ones));
                acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(_mm256_maddubs_epi16(xb, w_hi), ones));
            }
        }
    }
    if (V == Q_U8W7 || V == Q_U8W7P) { /* u8 codes: the zero point's share out, comp[oc] = z * sum(qw[oc, :]) */
        const __m256i c0 = _mm256_loadu_si256((const __m256i *)(j->comp + oc));
        const __m256i c1 = _mm256_loadu_si256((const __m256i *)(j->comp + oc + 8));
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) acc[i][0] = _mm256_sub_epi32(acc[i][0], c0), acc[i][1] = _mm256_sub_epi32(acc[i][1], c1);
    }
    for (size_t t = 0; t < runs && !U7; t++) {
        const int16_t *xt = (const int16_t *)j->img + j->run_off[t];
        for (size_t c = 0; c < pairs; c++, wp += 32, xt += 2) {
            const __m256i w_lo = _mm256_loadu_si256((const __m256i *)wp);
            const __m256i w_hi = _mm256_loadu_si256((const __m256i *)(wp + 16));
#pragma GCC unroll 6
            for (int i = 0; i < MR; i++) {
                int32_t pair;
                memcpy(&pair, xt + xoff[i], sizeof pair);
                const __m256i xb = _mm256_set1_epi32(pair);
                acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(xb, w_lo));
                acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(xb, w_hi));
            }
        }
    }
    s16_store_tile(j, o, i0, MR, oc, n, acc);
}

#define S16_FN(MR)                                                                                                    \
    static void s16_tile_##MR(const s16_job *j, const size_t *xoff, const void *w0, const tc__lowp_out *o, int i0,    \
                              size_t oc, int n) {                                                                       \
        s16_tile(j, xoff, w0, o, i0, oc, n, MR, Q_S16);                                                                 \
    }                                                                                                                   \
    static void u7_tile_##MR(const s16_job *j, const size_t *xoff, const void *w0, const tc__lowp_out *o, int i0,     \
                             size_t oc, int n) {                                                                        \
        s16_tile(j, xoff, w0, o, i0, oc, n, MR, Q_U7);                                                                  \
    }                                                                                                                   \
    static void w7_tile_##MR(const s16_job *j, const size_t *xoff, const void *w0, const tc__lowp_out *o, int i0,     \
                             size_t oc, int n) {                                                                        \
        s16_tile(j, xoff, w0, o, i0, oc, n, MR, Q_U7W7);                                                                \
    }                                                                                                                   \
    static void u8_tile_##MR(const s16_job *j, const size_t *xoff, const void *w0, const tc__lowp_out *o, int i0,     \
                             size_t oc, int n) {                                                                        \
        s16_tile(j, xoff, w0, o, i0, oc, n, MR, Q_U8W7);                                                                \
    }                                                                                                                   \
    static void p8_tile_##MR(const s16_job *j, const size_t *xoff, const void *w0, const tc__lowp_out *o, int i0,     \
                             size_t oc, int n) {                                                                        \
        s16_tile(j, xoff, w0, o, i0, oc, n, MR, Q_U8W7P);                                                               \
    }
S16_FN(1)
S16_FN(2)
S16_FN(3)
S16_FN(4)
S16_FN(5)
S16_FN(6)

typedef void (*s16_tile_fn)(const s16_job *, const size_t *, const void *, const tc__lowp_out *, int, size_t, int);
static const s16_tile_fn s16_tiles[S16_MR] = {s16_tile_1, s16_tile_2, s16_tile_3, s16_tile_4, s16_tile_5, s16_tile_6};
static const s16_tile_fn u7_tiles[S16_MR] = {u7_tile_1, u7_tile_2, u7_tile_3, u7_tile_4, u7_tile_5, u7_tile_6};
static const s16_tile_fn w7_tiles[S16_MR] = {w7_tile_1, w7_tile_2, w7_tile_3, w7_tile_4, w7_tile_5, w7_tile_6};
static const s16_tile_fn u8_tiles[S16_MR] = {u8_tile_1, u8_tile_2, u8_tile_3, u8_tile_4, u8_tile_5, u8_tile_6};
static const s16_tile_fn p8_tiles[S16_MR] = {p8_tile_1, p8_tile_2, p8_tile_3, p8_tile_4, p8_tile_5, p8_tile_6};
/* u7w7 holds four weight vectors: runs of at most 4 pixels keep its accumulators in registers */
#define W7_MR 4

/* The tile of lowp_grid.h's task loop: each block of 16 channels, in runs of up to S16_MR pixels. */
static void s16_tile_at(const void *job, int mr, int nb, size_t b0, const size_t *xoff, const tc__lowp_out *o,
                        uint16_t last_mask) {
    const s16_job *j = job;
    const tc__qconv_geom *g = j->g;
    const size_t wbs = g->kh * g->kw * g->cp * 16; /* elements per block of 16 channels */
    const int last_n = __builtin_popcount(last_mask);
    const s16_tile_fn *tiles = j->u8 ? (j->w7 ? p8_tiles : u8_tiles) : j->w7 ? w7_tiles : j->u7 ? u7_tiles : s16_tiles;
    const int mr_max = j->w7 ? W7_MR : S16_MR;
    for (int b = 0; b < nb; b++) {
        const size_t at = (b0 + (size_t)b) * wbs;
        const void *w0 = (const char *)j->w + at * j->esz;
        const size_t oc = o->oc0 + (size_t)b * 16;
        const int n = b == nb - 1 ? last_n : 16;
        for (int i = 0, left = (mr + mr_max - 1) / mr_max; i < mr; left--) { /* runs of equal size (7: 4 + 3) */
            const int m = (mr - i + left - 1) / left;
            tiles[m - 1](j, xoff + i, w0, o, i, oc, n);
            i += m;
        }
    }
}

static void s16_compute(void *arg, size_t strip_task, size_t group) {
    const s16_job *j = arg;
    tc__lowp_task(&j->grid, strip_task, group, j->y, j->res, s16_tile_at, j);
}

tc_status tc__qconv_run_s16_avx2(const tc__kernel_ctx *ctx, const tc__qconv_geom *g) {
    return s16_run(ctx, g, Q_S16, s16_compute);
}

tc_status tc__qconv_run_u7_avx2(const tc__kernel_ctx *ctx, const tc__qconv_geom *g) {
    if (!tc__qconv_u7_input(g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: the u7 int8 kernel needs a non-negative symmetric input",
                        ctx->op_type);
    return s16_run(ctx, g, Q_U7, s16_compute);
}

tc_status tc__qconv_run_u7w7_avx2(const tc__kernel_ctx *ctx, const tc__qconv_geom *g) {
    if (!tc__qconv_u7_input(g) || !g->w7)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "%s: the u7w7 int8 kernel needs a non-negative symmetric input and 7-bit weights (tc.int8_w7)",
                        ctx->op_type);
    return s16_run(ctx, g, Q_U7W7, s16_compute);
}

tc_status tc__qconv_run_u8w7_avx2(const tc__kernel_ctx *ctx, const tc__qconv_geom *g) {
    if (!g->w7)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: the u8w7 int8 kernel needs 7-bit weights (tc.int8_w7)",
                        ctx->op_type);
    return s16_run(ctx, g, g->hi <= 127 ? Q_U8W7P : Q_U8W7, s16_compute); /* codes of 7 bits: two quads at a time */
}

/* The s16 job that writes image o of [batch][c][ih][iw] FP32 values x (qimage.h's steps), geometry into g. */
static s16_job qimage_job(const tc__qimage_out *o, size_t batch, size_t c, size_t ih, size_t iw, const float *x, void *img,
                          tc__qconv_geom *g) {
    *g = (tc__qconv_geom){.batch = batch, .cin = c, .ih = ih, .iw = iw, .hp = o->hp, .wp = o->wp, .cp = o->cp,
                          .pt = o->pt, .pl = o->pl, .zero_point = o->zp, .lo = o->lo, .hi = o->hi,
                          .in_layout = TC__Q_NCHW};
    const bool u8 = o->fmt == TC__INT8_IMG_U8;
    return (s16_job){.g = g, .x = x, .u7 = o->fmt != TC__INT8_IMG_S16, .u8 = u8, .fill = u8 ? o->zp : 0,
                     .esz = o->fmt == TC__INT8_IMG_S16 ? 2 : 1, .img = img, .inv_scale = 1.0f / o->scale,
                     .hiv = _mm256_set1_ps((float)o->hi)};
}

/* qimage.h's Mul: the rows of the reader's image, converted from fl(x * s) as the reader's own pass converts its X. */
tc_status tc__qimage_mul_run_avx2(const tc__kernel_ctx *ctx, const tc__qimage_mul *m) {
    const tc__tensor *x = ctx->in[m->x_input], *s = ctx->in[1 - m->x_input];
    if (x->data == NULL || s->data == NULL || ctx->out[0]->data == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: a tensor without data", ctx->op_type);
    tc__qconv_geom g;
    s16_job j = qimage_job(&m->o, m->batch, m->c, m->h, m->w, x->data, ctx->out[0]->data, &g);
    j.chan_scale = s->data, j.chan_stride = m->s_per_image ? m->c : 0;
    tc__lowp_run_tasks(ctx->exec, s16_quantize_row, &j, m->batch * m->o.hp, NULL, NULL, 0, 0);
    return TC_STATUS_OK;
}
