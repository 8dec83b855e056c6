/*
 * lowp_grid.h - the task loop that the reduced-precision Conv/MatMul/Gemm kernels share (INT8
 * qconv_u8s8_avx512vnni.c and qconv_s16_avx2.c, FP16 hconv_f16_avx512fp16.c, BF16 hconv_bf16_avx512bf16.c),
 * without vector code, so any ISA's kernel can use it. A task is a strip of TC__LOWP_STRIP output pixels of
 * one image (or its whole plane when small: TC__LOWP_WHOLE_PLANE), in row-major order (so a strip may span output
 * rows and small planes still fill whole tiles; the strips of a plane and the tiles of a strip are of equal sizes,
 * so no tile is much smaller than the others),
 * x a group of up to TC__LOWP_GROUP_BLOCKS blocks of 16 output channels; a tile is up to 6 pixels (3 or 4
 * blocks) or 12 pixels (1 or 2 blocks); the kernel's tile function reads each pixel's window at an offset
 * into the padded channels-last input image and stores into NCHW, NCHW16c or row-major output.
 */
#ifndef TC_BACKENDS_CPU_LOWP_GRID_H
#define TC_BACKENDS_CPU_LOWP_GRID_H

#include "core/thread_pool.h"
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "backends/cpu/lowp_layer.h"

#define TC__LOWP_STRIP 48        /* output pixels per task */
#define TC__LOWP_GROUP_BLOCKS 4  /* blocks of 16 output channels per task (and per tile at most) */
#define TC__LOWP_MR 12           /* output pixels per tile at most (6 with 3 or 4 blocks) */
/* A plane of at most TC__LOWP_WHOLE_PLANE pixels (a MatMul's 128 rows, a 14x14 map) is one strip when there are at least
 * TC__LOWP_WHOLE_GROUPS groups per thread: then each group's weights come from memory once per image, not once per
 * strip (BERT-base's FFN weights, 2.4 MB a layer, do not stay in L2 between strips; BERT-base INT8 0.974x). */
#define TC__LOWP_WHOLE_PLANE 256
#define TC__LOWP_WHOLE_GROUPS 4

/* The threads of pool (1 without one). */
static inline size_t tc__lowp_threads(tc__pool_t pool) { return pool ? tc__pool_get_threads_count(pool) : 1; }

/* What the task loop needs of the operator (one image's sizes; cp: channels per pixel of the padded image). */
typedef struct tc__lowp_grid {
    size_t oh, ow, sh, sw, hp, wp, cp, cout;
    uint8_t out_layout;     /* tc__lowp_layout */
    size_t nblocks, groups; /* blocks of 16 output channels (C_out rounded up), task groups of them */
    size_t strips;          /* strips per image */
    int mr_wide;            /* output pixels per tile with 3 or 4 blocks (6; a kernel may take more, up to TC__LOWP_MR) */
    /* INT8 chain: the output is the next layer's padded channels-last image (o_cp != 0; see qconv_u8s8.h) */
    size_t o_hp, o_wp, o_cp, o_pt, o_pl;
    /* the chain (INT8, FP16, BF16): the residual is such an image (rimg != NULL), [N][r_hp][r_wp][r_cp] */
    const void *rimg;
    size_t r_hp, r_wp, r_cp, r_pt, r_pl;
} tc__lowp_grid;

static inline tc__lowp_grid tc__lowp_grid_of(size_t oh, size_t ow, size_t sh, size_t sw, size_t hp, size_t wp,
                                             size_t cp, size_t cout, uint8_t out_layout, size_t threads) {
    tc__lowp_grid g = {oh, ow, sh, sw, hp, wp, cp, cout, out_layout, (cout + 15) / 16, 0, 0, 6, 0, 0, 0, 0, 0,
                       NULL, 0, 0, 0, 0, 0};
    g.groups = (g.nblocks + TC__LOWP_GROUP_BLOCKS - 1) / TC__LOWP_GROUP_BLOCKS;
    g.strips = (oh * ow + TC__LOWP_STRIP - 1) / TC__LOWP_STRIP;
    if (oh * ow <= TC__LOWP_WHOLE_PLANE && g.groups >= TC__LOWP_WHOLE_GROUPS * threads) g.strips = 1;
    return g;
}

/* Makes the grid's output the next layer's padded channels-last image (the reduced-precision chain). */
static inline void tc__lowp_grid_out_image(tc__lowp_grid *g, size_t hp, size_t wp, size_t cp, size_t pt, size_t pl) {
    g->o_hp = hp, g->o_wp = wp, g->o_cp = cp, g->o_pt = pt, g->o_pl = pl;
}

/* Fills what a kernel's epilogue does not write of the grid's out image img (batch images; elements of esz bytes) with
 * fill bytes (the reader's zero point: z for u8 codes, 0 for centred codes, u7 bytes and 16-bit floats): its border rows
 * and columns, and the channels past C_out of its pixels. Not the whole image: a 1x1 reader's has no border, and a
 * whole-image fill (ResNet-50's layer1 images are 0.8 MB) ran on one thread before the parallel run. */
static inline void tc__lowp_fill_out_border(const tc__lowp_grid *g, size_t batch, void *img, size_t esz, uint8_t fill) {
    unsigned char *b = img;
    const size_t row = g->o_wp * g->o_cp * esz, px = g->o_cp * esz;
    for (size_t n = 0; n < batch; n++) {
        unsigned char *im = b + n * g->o_hp * row;
        memset(im, fill, g->o_pt * row);
        memset(im + (g->o_pt + g->oh) * row, fill, (g->o_hp - g->o_pt - g->oh) * row);
        for (size_t r = g->o_pt; r < g->o_pt + g->oh; r++) {
            unsigned char *rw = im + r * row;
            memset(rw, fill, g->o_pl * px);
            memset(rw + (g->o_pl + g->ow) * px, fill, (g->o_wp - g->o_pl - g->ow) * px);
            if (g->o_cp > g->cout)
                for (size_t c = g->o_pl; c < g->o_pl + g->ow; c++)
                    memset(rw + c * px + g->cout * esz, fill, (g->o_cp - g->cout) * esz);
        }
    }
}

/* Makes the grid's residual the image rimg (the reduced-precision chain; its elements are the kernel's business). */
static inline void tc__lowp_grid_res_image(tc__lowp_grid *g, const void *rimg, size_t hp, size_t wp, size_t cp,
                                           size_t pt, size_t pl) {
    g->rimg = rimg, g->r_hp = hp, g->r_wp = wp, g->r_cp = cp, g->r_pt = pt, g->r_pl = pl;
}

/* Where output element (pixel i, block b, lane l) of a tile lives: y + i * ps + b * bs + l * ls. */
typedef struct tc__lowp_out {
    float *y;
    const float *res;
    size_t ps, bs, ls;
    size_t oc0; /* the tile's first output channel */
    size_t qoff[TC__LOWP_MR]; /* INT8 chain: element offset of pixel i's channel oc0 in the output image */
    const void *rimg;         /* the chain: the residual image (then res is NULL), */
    size_t roff[TC__LOWP_MR]; /* and the element offset of pixel i's channel oc0 in it */
} tc__lowp_out;

/* The output addressing of blocks from b0 of image n: o's ps, bs, ls, oc0 and rimg; returns the element offset in Y of
 * the image's pixel 0, channel b0 * 16 (pixel p of the image is at that + p * ps). */
static inline size_t tc__lowp_out_base(const tc__lowp_grid *g, size_t n, size_t b0, tc__lowp_out *o) {
    const size_t plane = g->oh * g->ow, oc0 = b0 * 16;
    *o = (tc__lowp_out){.oc0 = oc0, .rimg = g->rimg};
    if (g->out_layout == TC__LOWP_NCHW16C) {
        o->ps = 16, o->bs = plane * 16, o->ls = 1;
        return (n * (g->cout / 16) + b0) * plane * 16;
    }
    if (g->out_layout == TC__LOWP_ROWS) {
        o->ps = g->cout, o->bs = 16, o->ls = 1;
        return n * plane * g->cout + oc0;
    }
    o->ps = 1, o->bs = 16 * plane, o->ls = plane;
    return (n * g->cout + oc0) * plane;
}

/* Points o (set by tc__lowp_out_base, which returned base) at pixel p of image n as its pixel 0: for kernels that store
 * a pixel at a time (the AMX drivers). */
static inline void tc__lowp_out_pixel(const tc__lowp_grid *g, size_t n, size_t p, size_t base, float *y, const float *res,
                                      tc__lowp_out *o) {
    const size_t r = p / g->ow, c = p % g->ow;
    o->y = y + base + p * o->ps;
    o->res = res ? res + base + p * o->ps : NULL;
    if (g->o_cp) o->qoff[0] = ((n * g->o_hp + g->o_pt + r) * g->o_wp + g->o_pl + c) * g->o_cp + o->oc0;
    if (g->rimg) o->roff[0] = ((n * g->r_hp + g->r_pt + r) * g->r_wp + g->r_pl + c) * g->r_cp + o->oc0;
}

/* The kernel's tile: mr pixels whose windows start at xoff[0..mr) (elements of the padded image, the image's
 * own offset included) x nb blocks of 16 channels from block b0; last_mask: the channels of the last block. */
typedef void (*tc__lowp_tile_fn)(const void *job, int mr, int nb, size_t b0, const size_t *xoff,
                                 const tc__lowp_out *o, uint16_t last_mask);

/* Blocks of 16 channels in task group `group`, and the most pixels a tile of nb blocks takes. */
static inline int tc__lowp_group_blocks(const tc__lowp_grid *g, size_t group) {
    const size_t b0 = group * TC__LOWP_GROUP_BLOCKS;
    return (int)(g->nblocks - b0 < TC__LOWP_GROUP_BLOCKS ? g->nblocks - b0 : TC__LOWP_GROUP_BLOCKS);
}
static inline int tc__lowp_mr_max(const tc__lowp_grid *g, int nb) { return nb >= 3 ? g->mr_wide : TC__LOWP_MR; }

/* Task (strip_task, group) of an operator with output y (and residual res, or NULL): every tile of the strip. */
static inline void tc__lowp_task(const tc__lowp_grid *g, size_t strip_task, size_t group, float *y, const float *res,
                                 tc__lowp_tile_fn tile, const void *job) {
    const size_t plane = g->oh * g->ow;
    /* strips of equal length (49 pixels: 25 + 24, not 48 + 1) */
    const size_t n = strip_task / g->strips, s = strip_task % g->strips;
    const size_t p0 = s * plane / g->strips, p1 = (s + 1) * plane / g->strips;
    const size_t b0 = group * TC__LOWP_GROUP_BLOCKS;
    const int nb = tc__lowp_group_blocks(g, group);
    const size_t oc0 = b0 * 16, last_ch = g->cout - (b0 + (size_t)nb - 1) * 16;
    const uint16_t last_mask = last_ch >= 16 ? (uint16_t)0xffff : (uint16_t)((1u << last_ch) - 1);
    const int mr_max = tc__lowp_mr_max(g, nb);
    tc__lowp_out o;
    const size_t base = tc__lowp_out_base(g, n, b0, &o);
    const size_t img = n * g->hp * g->wp * g->cp;
    size_t r = p0 / g->ow, c = p0 % g->ow; /* output pixel p as row and column */
    size_t tiles = (p1 - p0 + (size_t)mr_max - 1) / (size_t)mr_max; /* tiles of equal size (25: 5 x 5, not 4 x 6 + 1) */
    for (size_t p = p0; p < p1; tiles--) {
        const int mr = (int)((p1 - p + tiles - 1) / tiles);
        size_t xoff[TC__LOWP_MR];
        for (int i = 0; i < mr; i++) {
            xoff[i] = img + (r * g->sh * g->wp + c * g->sw) * g->cp;
            if (g->o_cp) o.qoff[i] = ((n * g->o_hp + g->o_pt + r) * g->o_wp + g->o_pl + c) * g->o_cp + oc0;
            if (g->rimg) o.roff[i] = ((n * g->r_hp + g->r_pt + r) * g->r_wp + g->r_pl + c) * g->r_cp + oc0;
            if (++c == g->ow) c = 0, r++;
        }
        o.y = y + base + p * o.ps;
        o.res = res ? res + base + p * o.ps : NULL;
        tile(job, mr, nb, b0, xoff, &o, last_mask);
        p += (size_t)mr;
    }
}

/*
 * The weights a task's tiles prefetch into L2: those of the next group, which the thread most likely runs next
 * (the pool gives each thread a range of (strip, group) tasks, groups innermost). A model whose weights do not fit
 * in the caches (BERT-base: 85 MB of INT8 weights; ResNet-50: 51 MB of BF16) reads each group's from memory in its
 * first tile; read in short streams (12 KB per block of a BERT layer), they came at ~10 GB/s and cost BERT's INT8 FFN
 * layers 10-25% of their time. Each of the task's tiles takes its share (per_tile lines) and prefetches a line per step
 * of its multiply-add loop (tc__lowp_pf_line). Block b's weights are block_bytes from w + b * block_bytes.
 */
typedef struct tc__lowp_pf {
    const unsigned char *next; /* the next line to prefetch */
    size_t left, per_tile;     /* lines */
} tc__lowp_pf;

static inline tc__lowp_pf tc__lowp_pf_of(const tc__lowp_grid *g, size_t group, const void *w, size_t block_bytes) {
    tc__lowp_pf pf = {NULL, 0, 0};
    if (group + 1 >= g->groups) return pf;
    const size_t strip = (g->oh * g->ow + g->strips - 1) / g->strips; /* pixels per task at most */
    const size_t mr = (size_t)tc__lowp_mr_max(g, tc__lowp_group_blocks(g, group)); /* this task's tiles */
    const size_t tiles = (strip + mr - 1) / mr;
    pf.next = (const unsigned char *)w + (group + 1) * TC__LOWP_GROUP_BLOCKS * block_bytes;
    pf.left = (size_t)tc__lowp_group_blocks(g, group + 1) * block_bytes / 64;
    pf.per_tile = (pf.left + tiles - 1) / tiles;
    return pf;
}

/* The next tile's share: its first line in *at, the count returned. */
static inline size_t tc__lowp_pf_take(tc__lowp_pf *pf, const void **at) {
    const size_t n = pf->left < pf->per_tile ? pf->left : pf->per_tile;
    *at = pf->next;
    pf->next += n * 64, pf->left -= n;
    return n;
}

/* One step of a tile's multiply-add loop: the next of its *npf lines at *pf into L2 (prefetcht1), if any is left. */
static inline __attribute__((always_inline)) void tc__lowp_pf_line(const void **pf, size_t *npf) {
    if (*npf == 0) return;
    __builtin_prefetch(*pf, 0, 2);
    *pf = (const unsigned char *)*pf + 64, --*npf;
}

/* Runs convert(cjob, row) for each of n_rows padded input rows, then compute(job, task, group) for tasks x groups, on
 * the pool (or the calling thread when it has one thread). */
static inline void tc__lowp_run_tasks(tc__pool_t pool, void (*convert)(void *, size_t), void *cjob, size_t n_rows,
                                      void (*compute)(void *, size_t, size_t), void *job, size_t tasks, size_t groups) {
    if (tc__lowp_threads(pool) <= 1) {
        for (size_t t = 0; t < n_rows; t++) convert(cjob, t);
        for (size_t t = 0; t < tasks; t++)
            for (size_t u = 0; u < groups; u++) compute(job, t, u);
    } else {
        if (n_rows > 0) tc__pool_parallelize_1d(pool, convert, cjob, n_rows, 0);
        if (tasks > 0 && groups > 0) tc__pool_parallelize_2d(pool, compute, job, tasks, groups, 0);
    }
}

/* Runs an operator: convert(job, row) for each of n_rows padded input rows, then compute(job, strip_task,
 * group) for every task of the grid over the batch. */
static inline void tc__lowp_run(tc__pool_t pool, const tc__lowp_grid *g, size_t batch, size_t n_rows,
                                void (*convert)(void *, size_t), void (*compute)(void *, size_t, size_t), void *job) {
    tc__lowp_run_tasks(pool, convert, job, n_rows, compute, job, batch * g->strips, g->groups);
}

#endif
