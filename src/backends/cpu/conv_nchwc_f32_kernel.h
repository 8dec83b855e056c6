/*
 * conv_nchwc_f32_kernel.h - the body of the blocked direct convolution (conv_nchw16c_f32.h) for one
 * ISA: the microkernels conv_nchw<BV_L>c_f32_<NP>x<NB*BV_L> and the driver that tiles, chunks and
 * threads them, run(). Included once by conv_nchw16c_f32_avx512.c and once by conv_nchw8c_f32_avx2.c,
 * after the ISA's vector vocabulary (blocked_vec_avx512.h / blocked_vec_avx2.h: BV_L lanes = channels
 * of a layout block, the vector type and operations, BV_MAX_ACC accumulators), with CV_RUN defined
 * as the name of run().
 *
 * Microkernel: NP output pixels in arithmetic progression (along a row, or down a column) times NB
 * output-channel blocks of BV_L: NB = 1 or 2 (one packed unit) or 4 (two units), at most
 * BV_MAX_ACC accumulators. Per reduction step (input-channel group, kernel row, kernel column,
 * channel of the group) it loads NB weight vectors and, per pixel, broadcasts one input value and
 * issues NB FMAs, like a GEMM microkernel but with no im2col: the input is read in place. The pixel
 * stride is a compile-time constant for row tiles of a blocked input at stride 1, a run-time value
 * otherwise. The first chunk starts from the conv bias; the last one adds the residual and applies
 * Relu or Clip in registers before the store (other activations run on the stored tile while it is
 * in L1).
 *
 * Padding is never materialised. Every pixel of a tile shares one range of kernel rows and one
 * range of kernel columns in bounds, so out-of-bounds taps are skipped, not multiplied by zero: a
 * plane splits into interior rows (every kernel row in bounds) and edge rows, and columns likewise;
 * interior rows run as row tiles over the interior columns, each edge column as column tiles down
 * the interior rows, and each edge row as row tiles over the interior columns plus single pixels.
 * A 1x1 stride-1 unpadded convolution runs as one row of H * W pixels.
 *
 * Blocking: the reduction runs in chunks of input-channel groups whose weights (for four output
 * channel blocks) fit in L1, the partial sums of a chunk staying in Y; a task is one image, one block
 * of rows whose input fits in L2 (every unit pair reads it in turn) and one unit pair (or one unit:
 * a 1x1 run as one row by default). The tactic's configuration (tc__conv16_config) may change
 * whether a task takes one unit or two. The per-pixel
 * order of the sums depends only on the shapes, never on the tiling or the threads, so 1 and N
 * threads give the same bits.
 */
#include <math.h>
#include "core/thread_pool.h"
#include <string.h>

#include "backends/cpu/blocked_f32.h"
#include "backends/cpu/conv_nchw16c_f32.h"
#include "backends/window.h"
#include "core/layout.h"

#define CV_INLINE static inline __attribute__((always_inline))

/*
 * Output-channel blocks per microkernel call at most (two packed units), output pixels per call
 * at most (BV_MAX_ACC accumulators, from the including file: 28 on AVX-512, 14 pixels x 2 blocks
 * or 7 x 4), and the weight bytes of one reduction chunk of four blocks.
 */
#define CV_MAX_NB 4
#define CV_MAX_NP 14
#define CV_CHUNK_WEIGHT_BYTES (32 * 1024)
/* Input bytes of a row block, which every unit reads in turn (L2 is 2 MiB per core). */
#define CV_BLOCK_INPUT_BYTES (1024 * 1024)

/* One microkernel call. Strides and skips are in floats. */
typedef struct cv_tile {
    const float *x;       /* input of pixel 0 at the chunk's first tap in bounds */
    const float *w;       /* packed weights of the first unit at that tap */
    float *y;             /* output of pixel 0, first block */
    const float *bias;    /* NB * BV_L conv biases (the first chunk), or NULL */
    size_t n_groups;      /* input-channel groups of the chunk (0: no tap in bounds) */
    size_t kh_n, kw_n;    /* kernel rows and columns in bounds */
    ptrdiff_t x_px, x_kw, x_kh, x_group; /* input: next pixel, kernel column, kernel row, channel group */
    ptrdiff_t w_kh, w_group;             /* weights skipped after a kernel row and after a group */
    ptrdiff_t w_unit;                    /* the second unit's weights (NB = 4) */
    ptrdiff_t y_px, y_block;             /* output: next pixel, next channel block */
    bool accumulate;      /* start from the partial sums in y (every chunk but the first) */
    /* The last chunk: the residual (laid out as y, or NULL) and the clamp fused before the store. */
    const float *res;
    int clamp;            /* cv_clamp */
    float lo, hi;
} cv_tile;

/* The activations the microkernel applies in registers (the others run on the stored tile). */
enum { CV_CLAMP_NONE, CV_CLAMP_RELU, CV_CLAMP_CLIP };

typedef void (*cv_ukernel)(const cv_tile *t);

/* Adds the residual, clamps (Relu maps NaN to 0, Clip keeps it) and stores np x nb accumulators. */
CV_INLINE void cv_store(const cv_tile *t, BV_V (*acc)[CV_MAX_NB], const int np, const int nb) {
    const ptrdiff_t y_px = t->y_px, y_block = t->y_block;
    if (t->res != NULL) {
#pragma GCC unroll 14
        for (int q = 0; q < np; q++)
#pragma GCC unroll 4
            for (int b = 0; b < nb; b++)
                acc[q][b] = BV_ADD(acc[q][b], BV_LOADU(t->res + q * y_px + b * y_block));
    }
    if (t->clamp != CV_CLAMP_NONE) {
        const bool relu = t->clamp == CV_CLAMP_RELU;
        const BV_V lo = BV_SET1(t->lo), hi = BV_SET1(t->hi);
#pragma GCC unroll 14
        for (int q = 0; q < np; q++)
#pragma GCC unroll 4
            for (int b = 0; b < nb; b++)
                acc[q][b] = relu ? BV_MAX(acc[q][b], lo) : BV_MIN(hi, BV_MAX(lo, acc[q][b]));
    }
    float *y = t->y;
#pragma GCC unroll 14
    for (int q = 0; q < np; q++)
#pragma GCC unroll 4
        for (int b = 0; b < nb; b++) BV_STOREU(y + q * y_px + b * y_block, acc[q][b]);
}

/*
 * acc[q][b] (+)= sum over the chunk's taps of x(pixel q) * w(block b), then cv_store. nb is 1 or 2
 * (one unit) or 4 (two units, the second at t->w_unit); group is the number of channels per group
 * (BV_L or 1); ps_fixed the pixel stride, or 0 for t->x_px.
 */
CV_INLINE void cv_kernel(const cv_tile *t, const int np, const int nb, const int group, const ptrdiff_t ps_fixed) {
    const ptrdiff_t ps = ps_fixed ? ps_fixed : t->x_px, wu = t->w_unit;
    const int unit_nb = nb > 2 ? 2 : nb; /* blocks of the first unit */
    BV_V acc[CV_MAX_NP][CV_MAX_NB];
#pragma GCC unroll 14
    for (int q = 0; q < np; q++)
#pragma GCC unroll 4
        for (int b = 0; b < nb; b++) {
            if (t->accumulate) acc[q][b] = BV_LOADU(t->y + q * t->y_px + b * t->y_block);
            else acc[q][b] = t->bias ? BV_LOADU(t->bias + BV_L * b) : BV_ZERO();
        }
    const float *w = t->w, *xg = t->x;
    for (size_t ig = 0; ig < t->n_groups; ig++, xg += t->x_group, w += t->w_group) {
        const float *xh = xg;
        for (size_t kh = 0; kh < t->kh_n; kh++, xh += t->x_kh, w += t->w_kh) {
            const float *xw = xh;
            for (size_t kw = 0; kw < t->kw_n; kw++, xw += t->x_kw) {
#pragma GCC unroll 1
                for (int i = 0; i < group; i++) {
                    BV_V wv[CV_MAX_NB];
                    wv[0] = BV_LOADU(w);
                    if (nb > 1) wv[1] = BV_LOADU(w + BV_L);
                    if (nb > 2) {
                        wv[2] = BV_LOADU(w + wu);
                        wv[3] = BV_LOADU(w + wu + BV_L);
                    }
                    w += unit_nb * BV_L;
#pragma GCC unroll 14
                    for (int q = 0; q < np; q++) {
                        const BV_V v = BV_SET1(xw[q * ps + i]);
#pragma GCC unroll 4
                        for (int b = 0; b < nb; b++) acc[q][b] = BV_FMADD(v, wv[b], acc[q][b]);
                    }
                }
            }
        }
    }
    cv_store(t, acc, np, nb);
}

/*
 * The microkernel variants: blocked input with a pixel stride of BV_L floats (row tiles at stride 1,
 * for NB <= 2, and NB = 4 in a 1x1 run as one row: 14 pixel offsets in registers cost about 8%), blocked input with any pixel stride,
 * plain input; then NB (1, 2, 4), then NP (1..14; up to 7 for NB = 4).
 */
enum { CV_BLOCKED_S1, CV_BLOCKED_ANY, CV_PLAIN_ANY, CV_VARIANTS };

#define CV_UK(v, group, ps, nb, np) \
    static void cv_uk_##v##_##nb##_##np(const cv_tile *t) { cv_kernel(t, np, nb, group, ps); }
#define CV_UK_NP7(v, group, ps, nb)                                                                                  \
    CV_UK(v, group, ps, nb, 1)                                                                                       \
    CV_UK(v, group, ps, nb, 2)                                                                                       \
    CV_UK(v, group, ps, nb, 3)                                                                                       \
    CV_UK(v, group, ps, nb, 4)                                                                                       \
    CV_UK(v, group, ps, nb, 5)                                                                                       \
    CV_UK(v, group, ps, nb, 6)                                                                                       \
    CV_UK(v, group, ps, nb, 7)
#define CV_UK_NP14(v, group, ps, nb)                                                                                 \
    CV_UK_NP7(v, group, ps, nb)                                                                                      \
    CV_UK(v, group, ps, nb, 8)                                                                                       \
    CV_UK(v, group, ps, nb, 9)                                                                                       \
    CV_UK(v, group, ps, nb, 10)                                                                                      \
    CV_UK(v, group, ps, nb, 11)                                                                                      \
    CV_UK(v, group, ps, nb, 12)                                                                                      \
    CV_UK(v, group, ps, nb, 13)                                                                                      \
    CV_UK(v, group, ps, nb, 14)
CV_UK_NP14(bs1, BV_L, BV_L, 1)
CV_UK_NP14(bs1, BV_L, BV_L, 2)
CV_UK_NP7(bs1, BV_L, BV_L, 4)
CV_UK_NP14(bany, BV_L, 0, 1)
CV_UK_NP14(bany, BV_L, 0, 2)
CV_UK_NP7(bany, BV_L, 0, 4)
CV_UK_NP14(pany, 1, 0, 1)
CV_UK_NP14(pany, 1, 0, 2)
CV_UK_NP7(pany, 1, 0, 4)
#undef CV_UK_NP14
#undef CV_UK_NP7
#undef CV_UK

#define CV_UK_ROW7(v, nb)                                                                                            \
    cv_uk_##v##_##nb##_1, cv_uk_##v##_##nb##_2, cv_uk_##v##_##nb##_3, cv_uk_##v##_##nb##_4, cv_uk_##v##_##nb##_5,    \
        cv_uk_##v##_##nb##_6, cv_uk_##v##_##nb##_7
#define CV_UK_ROW14(v, nb)                                                                                           \
    CV_UK_ROW7(v, nb), cv_uk_##v##_##nb##_8, cv_uk_##v##_##nb##_9, cv_uk_##v##_##nb##_10, cv_uk_##v##_##nb##_11,     \
        cv_uk_##v##_##nb##_12, cv_uk_##v##_##nb##_13, cv_uk_##v##_##nb##_14
/* [variant][NB 1, 2, 4][NP - 1] */
static const cv_ukernel kUkernels[CV_VARIANTS][3][CV_MAX_NP] = {
    {{CV_UK_ROW14(bs1, 1)}, {CV_UK_ROW14(bs1, 2)}, {CV_UK_ROW7(bs1, 4)}},
    {{CV_UK_ROW14(bany, 1)}, {CV_UK_ROW14(bany, 2)}, {CV_UK_ROW7(bany, 4)}},
    {{CV_UK_ROW14(pany, 1)}, {CV_UK_ROW14(pany, 2)}, {CV_UK_ROW7(pany, 4)}},
};
#undef CV_UK_ROW14
#undef CV_UK_ROW7

/* One run: the geometry (a 1x1 stride-1 unpadded one seen as a single row), the tensors, the tiling. */
typedef struct cv_job {
    tc__conv16_geom g;
    const float *x, *w, *b, *res;
    float *y;
    tc__vact act;
    int clamp;               /* the activation when the microkernel fuses it (cv_clamp) */
    bool flat;               /* one row of pixels: tasks split columns, not rows */
    size_t units, groups;    /* packed weight units; input-channel groups of the reduction */
    bool wide;               /* tasks take two units (NB = 4) when both are whole */
    size_t chunk;            /* input-channel groups per reduction chunk */
    size_t parts;            /* row blocks per image (tasks: images x row blocks x unit pairs) */
    int64_t row_lo, row_hi;  /* interior rows: every kernel row in bounds */
    int64_t col_lo, col_hi;  /* interior columns */
} cv_job;

/*
 * The weights of the next reduction chunk (or the next unit's first), fetched into the caches a slice before each
 * microkernel call of the current chunk, so that weights streaming from memory (layer4's 1x1 convolutions: 4 MiB for
 * 49 pixels) arrive while the chunk computes instead of stalling its first tile. Touches no result.
 */
typedef struct cv_prefetch {
    const float *base, *base2; /* the first unit's, and the second's (NB = 4) or NULL */
    size_t lines, per_call, done;
} cv_prefetch;

/* One chunk of the reduction for one image and one unit (or two, NB = 4). */
typedef struct cv_pass {
    const cv_job *j;
    const float *x, *w, *b, *res; /* image, first unit */
    float *y;
    int nb;                       /* output-channel blocks: 1, 2 or 4 */
    int pad_b;                    /* of them, Y's last block when it has padding lanes, or -1 */
    size_t g0, ng;                /* input-channel groups [g0, g0 + ng) */
    bool first, last;
    const float *w_next; /* the weights of the unit(s) this thread most likely runs next, or NULL */
    cv_prefetch *pf;
} cv_pass;

/* Issues the prefetches due before one microkernel call. */
CV_INLINE void cv_prefetch_step(cv_prefetch *pf) {
    size_t e = pf->done + pf->per_call;
    if (e > pf->lines) e = pf->lines;
    for (; pf->done < e; pf->done++) {
        __builtin_prefetch(pf->base + pf->done * 16, 0, 3);
        if (pf->base2 != NULL) __builtin_prefetch(pf->base2 + pf->done * 16, 0, 3);
    }
}

/* Applies an activation the microkernel does not fuse to np pixels x nb blocks of y, in place. */
static void cv_finish(const cv_pass *p, float *y, int np, ptrdiff_t y_px, ptrdiff_t y_block) {
    const tc__vact *act = &p->j->act;
    for (int b = 0; b < p->nb; b++)
        for (int q = 0; q < np; q++) {
            const ptrdiff_t at = q * y_px + b * y_block;
            BV_STOREU(y + at, BV_VACT(BV_LOADU(y + at), act));
        }
}

/* The microkernel for np pixels of pass p along a row or (down) a column. */
static cv_ukernel cv_pick(const cv_pass *p, int np, bool down) {
    const tc__conv16_geom *g = &p->j->g;
    int v = CV_PLAIN_ANY;
    if (g->blocked_in) v = !down && g->sw == 1 && (p->nb <= 2 || p->j->flat) ? CV_BLOCKED_S1 : CV_BLOCKED_ANY;
    return kUkernels[v][p->nb == 4 ? 2 : p->nb - 1][np - 1];
}

/*
 * np output pixels from (oh, ow), along the row or (down) the column, whose kernel rows and columns
 * in bounds are the same: one microkernel call, then the epilogue after the last chunk.
 */
static void cv_tile_run(const cv_pass *p, int64_t oh, int64_t ow, int np, bool down) {
    const tc__conv16_geom *g = &p->j->g;
    const int64_t ih0 = oh * (int64_t)g->sh - g->pt, iw0 = ow * (int64_t)g->sw - g->pl;
    int64_t kh0, kh1, kw0, kw1;
    tc__window_taps(ih0, (int64_t)g->dh, (int64_t)g->kh, 0, (int64_t)g->ih, &kh0, &kh1);
    tc__window_taps(iw0, (int64_t)g->dw, (int64_t)g->kw, 0, (int64_t)g->iw, &kw0, &kw1);
    const int unit_nb = p->nb > 2 ? 2 : p->nb;
    const ptrdiff_t pix = (ptrdiff_t)g->group, step = pix * unit_nb * BV_L; /* floats per tap */
    const ptrdiff_t y_at = (oh * (ptrdiff_t)g->ow + ow) * BV_L;
    cv_tile t = {.y = p->y + y_at,
                 .bias = p->first ? p->b : NULL,
                 .y_px = down ? (ptrdiff_t)g->ow * BV_L : BV_L,
                 .y_block = (ptrdiff_t)(g->oh * g->ow) * BV_L,
                 .w_unit = (ptrdiff_t)(g->cin * g->kh * g->kw) * BV_L * TC__CONV16_UNIT_BLOCKS,
                 .accumulate = !p->first};
    if (p->last) {
        t.res = p->res ? p->res + y_at : NULL;
        t.clamp = p->j->clamp;
        t.lo = p->j->act.kind == TC__VACT_CLIP ? p->j->act.alpha : 0.0f;
        t.hi = p->j->act.kind == TC__VACT_CLIP ? p->j->act.beta : INFINITY;
    }
    if (kh1 > kh0 && kw1 > kw0) {
        t.n_groups = p->ng;
        t.kh_n = (size_t)(kh1 - kh0);
        t.kw_n = (size_t)(kw1 - kw0);
        t.x_px = (down ? (ptrdiff_t)(g->sh * g->iw) : (ptrdiff_t)g->sw) * pix;
        t.x_kw = (ptrdiff_t)g->dw * pix;
        t.x_kh = (ptrdiff_t)(g->dh * g->iw) * pix;
        t.x_group = (ptrdiff_t)(g->ih * g->iw) * pix;
        t.x = p->x + (ptrdiff_t)p->g0 * t.x_group + ((ih0 + kh0 * (int64_t)g->dh) * (ptrdiff_t)g->iw + iw0 +
                                                     kw0 * (int64_t)g->dw) * pix;
        t.w = p->w + ((ptrdiff_t)(p->g0 * g->kh + (size_t)kh0) * (ptrdiff_t)g->kw + kw0) * step;
        t.w_kh = (ptrdiff_t)(g->kw - t.kw_n) * step;
        t.w_group = (ptrdiff_t)((g->kh - t.kh_n) * g->kw) * step;
    }
    cv_prefetch_step(p->pf);
    cv_pick(p, np, down)(&t);
    if (p->last && p->j->clamp == CV_CLAMP_NONE && p->j->act.kind != TC__VACT_NONE)
        cv_finish(p, t.y, np, t.y_px, t.y_block);
    if (p->last && p->pad_b >= 0) /* the padding lanes stay zero whatever the epilogue made of 0 */
        tc__blk_zero_pad(t.y + p->pad_b * t.y_block, np, t.y_px, BV_L, (int64_t)(g->cout_real % BV_L));
}

/* Pixels per microkernel call at most with nb blocks. */
static int cv_max_np(int nb) { return BV_MAX_ACC / nb < CV_MAX_NP ? BV_MAX_ACC / nb : CV_MAX_NP; }

/* Splits n pixels into the fewest tiles of at most max_np, as even as possible; tile i of them. */
static int cv_tiles(int64_t n, int max_np) { return (int)((n + max_np - 1) / max_np); }
static int cv_tile_size(int64_t n, int tiles, int i) { return (int)(n / tiles + (i < n % tiles ? 1 : 0)); }

/* Columns [c0, c1) of row oh as row tiles (their taps must share one column range). */
static void cv_row_span(const cv_pass *p, int64_t oh, int64_t c0, int64_t c1) {
    const int64_t n = c1 - c0;
    const int tiles = cv_tiles(n, cv_max_np(p->nb));
    for (int i = 0; i < tiles; i++) {
        const int np = cv_tile_size(n, tiles, i);
        cv_tile_run(p, oh, c0, np, false);
        c0 += np;
    }
}

/* Rows [r0, r1) of column ow as column tiles (their taps must share one row range). */
static void cv_col_span(const cv_pass *p, int64_t ow, int64_t r0, int64_t r1) {
    const int64_t n = r1 - r0;
    const int tiles = cv_tiles(n, cv_max_np(p->nb));
    for (int i = 0; i < tiles; i++) {
        const int np = cv_tile_size(n, tiles, i);
        cv_tile_run(p, r0, ow, np, true);
        r0 += np;
    }
}

/* Output rows [r0, r1) of pass p: edge rows, interior rows, then the edge columns of the interior rows. */
static void cv_rows(const cv_pass *p, int64_t r0, int64_t r1) {
    const cv_job *j = p->j;
    const int64_t ow = (int64_t)j->g.ow;
    int64_t a = r0 > j->row_lo ? r0 : j->row_lo, b = r1 < j->row_hi ? r1 : j->row_hi;
    if (b < a) b = a;
    for (int64_t oh = r0; oh < r1; oh++) {
        if (oh >= a && oh < b) continue;
        cv_row_span(p, oh, j->col_lo, j->col_hi);
        for (int64_t c = 0; c < ow; c++)
            if (c < j->col_lo || c >= j->col_hi) cv_tile_run(p, oh, c, 1, false);
    }
    for (int64_t oh = a; oh < b; oh++) cv_row_span(p, oh, j->col_lo, j->col_hi);
    if (b > a)
        for (int64_t c = 0; c < ow; c++)
            if (c < j->col_lo || c >= j->col_hi) cv_col_span(p, c, a, b);
}

/* Every reduction chunk of pass p (image, units and blocks set) over rows (or pixels, flat) [lo, hi). */
static void cv_pass_run(cv_pass *p, int64_t lo, int64_t hi) {
    const cv_job *j = p->j;
    const tc__conv16_geom *g = &j->g;
    const size_t unit_nb = p->nb > 2 ? 2 : (size_t)p->nb, group_floats = g->kh * g->kw * g->group * unit_nb * BV_L;
    /* Microkernel calls per chunk: the row tiles (edge pixels and column tiles add a few, which only end early). */
    const size_t calls = (size_t)(hi - lo) * (j->flat ? 1 : (size_t)cv_tiles((int64_t)g->ow, cv_max_np(p->nb)));
    const size_t per_call_units = (size_t)(j->flat ? cv_tiles(hi - lo, cv_max_np(p->nb)) : (int64_t)calls);
    cv_prefetch *pf = p->pf;
    for (size_t g0 = 0; g0 < j->groups; g0 += j->chunk) {
        p->g0 = g0;
        p->ng = j->groups - g0 < j->chunk ? j->groups - g0 : j->chunk;
        p->first = g0 == 0;
        p->last = g0 + p->ng == j->groups;
        /* The next chunk's weights (its groups follow this chunk's), or after the last the next units' first chunk. */
        const size_t next = p->last ? (p->w_next ? (j->groups < j->chunk ? j->groups : j->chunk) : 0)
                                    : (j->groups - g0 - p->ng < j->chunk ? j->groups - g0 - p->ng : j->chunk);
        pf->base = p->last ? p->w_next : p->w + (g0 + p->ng) * group_floats;
        pf->base2 =
            p->nb == 4 && pf->base != NULL ? pf->base + TC__CONV16_UNIT_BLOCKS * BV_L * g->cin * g->kh * g->kw : NULL;
        pf->lines = pf->base != NULL ? next * group_floats / 16 : 0;
        pf->per_call = per_call_units ? (pf->lines + per_call_units - 1) / per_call_units : pf->lines;
        pf->done = 0;
        if (j->flat) cv_row_span(p, 0, lo, hi);
        else cv_rows(p, lo, hi);
    }
}

/* Points pass p at image n_img and the nb output-channel blocks from unit u0 (two units when nb is 4). */
static void cv_pass_units(cv_pass *p, size_t n_img, size_t u0, int nb) {
    const cv_job *j = p->j;
    const tc__conv16_geom *g = &j->g;
    const size_t unit = BV_L * TC__CONV16_UNIT_BLOCKS, osp = g->oh * g->ow;
    const size_t out0 = n_img * g->cout * osp + u0 * unit * osp;
    p->w = j->w + u0 * unit * g->cin * g->kh * g->kw;
    /* The next units, when whole (a last, partial unit packs fewer blocks) */
    const size_t un = u0 + (nb == 4 ? 2 : 1), un_end = un + (nb == 4 ? 2 : 1);
    p->w_next = un_end <= j->units && tc__conv16_unit_channels(g, un_end - 1) == unit
                    ? j->w + un * unit * g->cin * g->kh * g->kw
                    : NULL;
    p->b = j->b ? j->b + u0 * unit : NULL;
    p->res = j->res ? j->res + out0 : NULL;
    p->y = j->y + out0;
    p->nb = nb;
    const size_t last = g->cout / BV_L - 1, b0 = u0 * TC__CONV16_UNIT_BLOCKS;
    p->pad_b = g->cout != g->cout_real && last >= b0 && last < b0 + (size_t)nb ? (int)(last - b0) : -1;
}

/* Task (image and row block ip, unit pair up): both units at once when whole, else one by one. */
static void cv_task(void *arg, size_t ip, size_t up) {
    const cv_job *j = arg;
    const tc__conv16_geom *g = &j->g;
    const size_t n = ip / j->parts, part = ip % j->parts;
    const size_t span = j->flat ? g->ow : g->oh;
    const int64_t lo = (int64_t)(span * part / j->parts), hi = (int64_t)(span * (part + 1) / j->parts);
    cv_prefetch pf = {0};
    cv_pass p = {.j = j, .x = j->x + n * g->cin * g->ih * g->iw, .pf = &pf};
    const size_t u0 = j->wide ? 2 * up : up, u1 = j->wide && u0 + 1 < j->units ? u0 + 2 : u0 + 1;
    const size_t whole = BV_L * TC__CONV16_UNIT_BLOCKS;
    if (u1 == u0 + 2 && tc__conv16_unit_channels(g, u0 + 1) == whole) {
        cv_pass_units(&p, n, u0, 4);
        cv_pass_run(&p, lo, hi);
        return;
    }
    for (size_t u = u0; u < u1; u++) {
        cv_pass_units(&p, n, u, (int)(tc__conv16_unit_channels(g, u) / BV_L));
        cv_pass_run(&p, lo, hi);
    }
}

/* Tasks per image and row block: unit pairs (wide) or units. */
static size_t cv_unit_tasks(const cv_job *j) { return j->wide ? (j->units + 1) / 2 : j->units; }

/*
 * Row blocks per image: enough that the input rows of a block stay in L2 while every unit reads
 * them, then enough tasks (blocks x units) for an even split over the threads.
 */
static size_t cv_parts(const cv_job *j, size_t threads) {
    const tc__conv16_geom *g = &j->g;
    const size_t span = j->flat ? g->ow : g->oh;
    /* Input bytes one output row (one pixel, flat) reads, kernel-row overlap aside. */
    const size_t rows_in = j->flat ? 1 : (g->kh < g->sh ? g->kh : g->sh);
    const size_t row_bytes = g->cin * (j->flat ? 1 : g->iw) * rows_in * sizeof(float);
    size_t parts = (span * row_bytes + CV_BLOCK_INPUT_BYTES - 1) / CV_BLOCK_INPUT_BYTES;
    if (parts < 1) parts = 1;
    const size_t units = g->batch * cv_unit_tasks(j);
    while (threads > 1 && parts < span && (units * parts) % threads != 0 && units * parts < 8 * threads) parts++;
    return parts < span ? parts : span;
}

/* The job of a run: geometry (flattened when pointwise), interior ranges, chunking (cfg: NULL for the default). */
static void cv_job_init(cv_job *j, const tc__conv16_geom *g, const tc__conv16_config *cfg) {
    j->g = *g;
    j->flat = g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 && g->pl == 0 &&
              g->oh == g->ih && g->ow == g->iw;
    if (j->flat) {
        j->g.iw = j->g.ow = g->ih * g->iw;
        j->g.ih = j->g.oh = 1;
    }
    const tc__conv16_geom *v = &j->g;
    tc__window_outputs(-v->pt, (int64_t)v->sh, (int64_t)v->ih - (int64_t)((v->kh - 1) * v->dh), (int64_t)v->oh,
                           &j->row_lo, &j->row_hi);
    tc__window_outputs(-v->pl, (int64_t)v->sw, (int64_t)v->iw - (int64_t)((v->kw - 1) * v->dw), (int64_t)v->ow,
                           &j->col_lo, &j->col_hi);
    j->units = (g->cout + BV_L * TC__CONV16_UNIT_BLOCKS - 1) / (BV_L * TC__CONV16_UNIT_BLOCKS);
    j->groups = g->cin / g->group;
    j->wide = cfg ? cfg->wide != 0 : !j->flat;
    const size_t group_bytes = g->kh * g->kw * g->group * BV_L * CV_MAX_NB * sizeof(float);
    j->chunk = group_bytes < CV_CHUNK_WEIGHT_BYTES ? CV_CHUNK_WEIGHT_BYTES / group_bytes : 1;
}

tc_status CV_RUN(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 2 || ctx->in[0] == NULL || ctx->in[1] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Conv expects inputs X, W (and optional B) and output Y");
    const tc__tensor *x = ctx->in[0], *w = ctx->in[1];
    /* B is input 2 unless that slot is the epilogue's residual. */
    const tc__tensor *b = ctx->n_in > 2 && ctx->in[2] != NULL && ctx->in[2] != ctx->residual ? ctx->in[2] : NULL;
    tc__tensor *y = ctx->out[0];
    tc__conv16_geom g;
    if (!tc__conv_nchw16c_f32_geometry(ctx->attrs, x, w, y, tc__layout_in_blocked(ctx->attrs, 0), BV_L, &g) ||
        !tc__layout_out_blocked(ctx->attrs) || tc__layout_block(ctx->attrs) != BV_L)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "Conv shapes, attributes or layouts are not ones conv_nchw16c_f32 computes");
    if (x->data == NULL || w->data == NULL || y->data == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Conv tensors X, W and Y need data");
    if (b != NULL && (b->dtype != TC_DTYPE_FLOAT32 || tc__tensor_numel(b) != (int64_t)g.cout_real || b->data == NULL ||
                      b->nbytes < g.cout * sizeof(float)))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Conv bias B must be float32 [%zu] (packed to %zu)",
                        g.cout_real, g.cout);
    if (!tc__blk_bytes_ok(y, BV_L) || (g.blocked_in && !tc__blk_bytes_ok(x, BV_L)) ||
        w->nbytes < g.cout * g.cin * g.kh * g.kw * sizeof(float) ||
        (ctx->residual != NULL && !tc__blk_bytes_ok(ctx->residual, BV_L)))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "Conv buffers are smaller than their blocked layout (channels padded to %d) needs", BV_L);
    cv_job j = {.x = x->data, .w = w->data, .b = b ? b->data : NULL, .y = y->data, .act = {TC__VACT_NONE, 0, 0, 0}};
    if (ctx->epi != NULL) {
        if (ctx->epi->bias_input >= 0 || ctx->bias != NULL)
            return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "Conv with a fused bias over the output's last dim");
        tc_status st = tc__vact_residual(ctx, tc__tensor_numel(y), &j.res);
        if (st != TC_STATUS_OK) return st;
        j.act = tc__vact_from_epilogue(ctx->epi);
        if (j.act.kind == TC__VACT_RELU) j.clamp = CV_CLAMP_RELU;
        if (j.act.kind == TC__VACT_CLIP) j.clamp = CV_CLAMP_CLIP;
    }
    tc__conv16_config cfg;
    if (ctx->config != NULL) memcpy(&cfg, ctx->config, sizeof cfg);
    cv_job_init(&j, &g, ctx->config != NULL ? &cfg : NULL);
    tc__pool_t pool = ctx->exec;
    const size_t threads = pool ? tc__pool_get_threads_count(pool) : 1;
    j.parts = cv_parts(&j, threads);
    if (threads <= 1) {
        for (size_t t = 0; t < g.batch * j.parts; t++)
            for (size_t u = 0; u < cv_unit_tasks(&j); u++) cv_task(&j, t, u);
        return TC_STATUS_OK;
    }
    tc__pool_parallelize_2d(pool, cv_task, &j, g.batch * j.parts, cv_unit_tasks(&j), 0);
    return TC_STATUS_OK;
}
