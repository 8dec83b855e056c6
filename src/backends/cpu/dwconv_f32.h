/*
 * dwconv_f32.h - the depthwise convolution operator (float32, NCHW, group == C_in == C_out,
 * square 3x3/5x5/7x7 kernels, strides 1 or 2 per axis, dilation 1, any padding): geometry,
 * the checks every dwconv tactic shares, the threaded driver, and the per-ISA microkernels
 * it calls. Each microkernel computes rows of one output plane with the bias and the fused
 * epilogue (residual, activation).
 */
#ifndef TC_BACKENDS_CPU_DWCONV_F32_H
#define TC_BACKENDS_CPU_DWCONV_F32_H

#include <string.h>

#include "backends/cpu/vact_f32.h"

typedef struct tc__dwconv_f32_geom {
    int64_t H, W;     /* input plane */
    int64_t OH, OW;   /* output plane */
    int32_t K;        /* kernel size (K x K) */
    int32_t sh, sw;   /* strides (1 or 2) */
    int64_t pt, pl;   /* top and left padding */
    tc__vact act;
} tc__dwconv_f32_geom;

/* One channel of one image. */
typedef struct tc__dwconv_f32_plane {
    const float *x;   /* input plane, H x W */
    const float *w;   /* K x K taps, row-major */
    float bias;
    const float *res; /* residual plane OH x OW, or NULL */
    float *y;         /* output plane OH x OW */
} tc__dwconv_f32_plane;

/*
 * The ring of zero-padded input rows the microkernels use when K such rows fit in
 * TC__DWCONV_F32_RING_FLOATS floats (on their stack): row r of the plane sits at slot r % K,
 * preceded by pl zeros and followed by zeros, so that every output block reads it with plain
 * loads. Wider planes fall back to masked loads at the edges.
 */
#define TC__DWCONV_F32_RING_FLOATS 8192

/* Length of one padded row for blocks of `lanes` outputs, or 0 when K rows do not fit the ring. */
static inline int64_t tc__dwconv_f32_ring_len(const tc__dwconv_f32_geom *g, int64_t lanes) {
    const int64_t nb = (g->OW + lanes - 1) / lanes;
    /* the last block reads up to (nb * lanes - 1) * sw + K - 1 + (2 * lanes - 1) (stride 2) */
    int64_t len = (nb * lanes - 1) * g->sw + g->K + 2 * lanes;
    if (len < g->pl + g->W) len = g->pl + g->W;
    len = (len + 15) & ~(int64_t)15;
    return len * g->K <= TC__DWCONV_F32_RING_FLOATS ? len : 0;
}

/* Copies input rows [max(*loaded, first), end) of plane x into the ring (rows arrive in increasing order). */
static inline void tc__dwconv_f32_ring_fill(const tc__dwconv_f32_geom *g, const float *x, float *ring, int64_t len,
                                            int64_t *loaded, int64_t first, int64_t end) {
    for (int64_t r = *loaded > first ? *loaded : first; r < end; r++)
        memcpy(ring + (r % g->K) * len + g->pl, x + r * g->W, (size_t)g->W * sizeof(float));
    if (end > *loaded) *loaded = end;
}

/* Computes output rows [oy0, oy1) of one plane. */
typedef void (*tc__dwconv_f32_ukernel)(const tc__dwconv_f32_geom *g, const tc__dwconv_f32_plane *p, int64_t oy0,
                                       int64_t oy1);

void tc__dwconv_f32_rows_avx512(const tc__dwconv_f32_geom *g, const tc__dwconv_f32_plane *p, int64_t oy0, int64_t oy1);
void tc__dwconv_f32_rows_avx2(const tc__dwconv_f32_geom *g, const tc__dwconv_f32_plane *p, int64_t oy0, int64_t oy1);

/* The supports() of every dwconv tactic. */
bool tc__dwconv_f32_supports(const tc__step_desc *d);

/* Runs a Conv step that tc__dwconv_f32_supports accepted, with microkernel uk, over ctx->exec. */
tc_status tc__dwconv_f32_run(const tc__kernel_ctx *ctx, tc__dwconv_f32_ukernel uk);

#endif
