/*
 * pool_f32.h - the 2-D MaxPool / AveragePool operator (float32, NCHW, any kernel, strides,
 * padding and ceil_mode, dilation 1, no Indices output): geometry resolved exactly as the
 * reference kernel resolves it, the checks the pooling tactics share, the threaded driver,
 * and the per-ISA microkernels it calls (each computes rows of one output plane).
 */
#ifndef TC_BACKENDS_CPU_POOL_F32_H
#define TC_BACKENDS_CPU_POOL_F32_H

#include "backends/tactic.h"

typedef struct tc__pool_f32_geom {
    int64_t H, W;           /* input plane */
    int64_t OH, OW;         /* output plane */
    int64_t kh, kw;         /* window */
    int64_t sh, sw;         /* strides */
    int64_t pt, pl, pb, pr; /* padding: top, left, bottom, right */
    bool count_include_pad; /* AveragePool */
} tc__pool_f32_geom;

/*
 * For output row oy: the first input row iy0 of its window, the window rows [*k0, *k1) inside
 * the input, and the rows the average counts (*cnt: inside the padded input with
 * count_include_pad, else inside the input).
 */
static inline void tc__pool_f32_window_rows(const tc__pool_f32_geom *g, int64_t oy, int64_t *iy0, int64_t *k0,
                                            int64_t *k1, int64_t *cnt) {
    int64_t start = oy * g->sh - g->pt, a = start < 0 ? -start : 0, b = g->H - start;
    if (a > g->kh) a = g->kh;
    if (b > g->kh) b = g->kh;
    if (b < a) b = a;
    *iy0 = start;
    *k0 = a;
    *k1 = b;
    *cnt = b - a;
    if (g->count_include_pad) { /* the window starts inside the padded input; it may end past it */
        int64_t c = g->H + g->pb - start;
        *cnt = c < 0 ? 0 : (c > g->kh ? g->kh : c);
    }
}

/*
 * The interior column blocks [*lo, *hi) of `lanes` outputs each for stride s (1 or 2): every
 * lane is an output and every tap of its window lies inside the input row.
 */
static inline void tc__pool_f32_interior(const tc__pool_f32_geom *g, int64_t lanes, int64_t s, int64_t *lo,
                                         int64_t *hi) {
    const int64_t nb = (g->OW + lanes - 1) / lanes;
    /* lanes b s >= pl, lanes b s - pl + (lanes - 1) s + kw - 1 <= W - 1, and lanes b + lanes <= OW */
    int64_t l = (g->pl + lanes * s - 1) / (lanes * s);
    const int64_t num = g->W - g->kw + g->pl - (lanes - 1) * s;
    int64_t h = num < 0 ? 0 : num / (lanes * s) + 1;
    if (h > g->OW / lanes) h = g->OW / lanes;
    if (l > nb) l = nb;
    if (h < l) h = l;
    *lo = l;
    *hi = h;
}

/* Computes output rows [oy0, oy1) of one plane: x is H x W, y is OH x OW. */
/*
 * Runs task(job, plane, first_row, row_count) over planes x rows output rows on pool (a tc__pool_t,
 * or NULL for this thread): whole planes per task, or row tiles when there are few planes (shared by
 * the NCHW and NCHW16c pooling tactics).
 */
void tc__pool_parallelize_planes(void *pool, void (*task)(void *, size_t, size_t, size_t), void *job, size_t planes,
                                 size_t rows);

typedef void (*tc__pool_f32_ukernel)(const tc__pool_f32_geom *g, const float *x, float *y, int64_t oy0, int64_t oy1);

void tc__maxpool_f32_rows_avx512(const tc__pool_f32_geom *g, const float *x, float *y, int64_t oy0, int64_t oy1);
void tc__maxpool_f32_rows_avx2(const tc__pool_f32_geom *g, const float *x, float *y, int64_t oy0, int64_t oy1);
void tc__avgpool_f32_rows_avx512(const tc__pool_f32_geom *g, const float *x, float *y, int64_t oy0, int64_t oy1);
void tc__avgpool_f32_rows_avx2(const tc__pool_f32_geom *g, const float *x, float *y, int64_t oy0, int64_t oy1);

/*
 * The reference result of a max-pooling window whose vector maximum came out as -inf: NaN when
 * the window holds input elements and all of them are NaN, else -inf.
 */
float tc__maxpool_f32_neg_inf_fixup(const tc__pool_f32_geom *g, const float *x, int64_t oy, int64_t ox);

/* The supports() of the MaxPool and AveragePool tactics. */
bool tc__maxpool_f32_supports(const tc__step_desc *d);
bool tc__avgpool_f32_supports(const tc__step_desc *d);

/* Runs a pooling step its supports() accepted, with microkernel uk, over ctx->exec. */
tc_status tc__pool_f32_run(const tc__kernel_ctx *ctx, tc__pool_f32_ukernel uk);

#endif
