/*
 * resize_f32.h - the Resize operator on float32 for its CPU tactics: a 2-D resize of the last two dims (every
 * leading dim unchanged), modes nearest (every nearest_mode) and linear (bilinear), the coordinate transformations
 * the reference kernel has except tf_crop_and_resize, from scales or sizes (opset 10 and up). Per run, the source
 * indices and weights of each output row and column are computed once into scratch, with the reference kernel's
 * double arithmetic (so nearest copies exactly the values the reference picks), then each plane of the [planes, H, W]
 * view is resized by the ISA's row microkernels; planes are split over the context's thread pool.
 */
#ifndef TC_BACKENDS_CPU_RESIZE_F32_H
#define TC_BACKENDS_CPU_RESIZE_F32_H

#include "backends/tactic.h"

/* Per-axis tables: for output index o, the taps i0[o] <= i1[o] (clamped to the input) with weights w0[o], w1[o]
 * (nearest: i1 = i0, w0 = 1, w1 = 0). Along W, blocks of `block` outputs (the microkernel's vector width) also carry
 * the smallest tap base[b] and span[b] = largest tap - base + 1 (0 when larger than block: the kernel gathers). */
typedef struct tc__resize_axis {
    int32_t *i0, *i1;
    float *w0, *w1;
} tc__resize_axis;

typedef struct tc__resize_plan {
    bool linear;
    int64_t ih, iw, oh, ow;
    tc__resize_axis h, w;
    int32_t block;          /* the microkernel's block of outputs along W (0: no block tables) */
    int32_t *base, *span;   /* per W block */
} tc__resize_plan;

/* Row microkernels of one ISA. */
typedef struct tc__resize_ukernels {
    int32_t block; /* outputs per vector block along W (0 for the scalar kernels) */
    /* y[o] = src[p->w.i0[o]] for o in [0, ow). */
    void (*nearest_row)(const tc__resize_plan *p, const float *src, float *y);
    /* h[o - o0] = w0[o] * src[i0[o]] + w1[o] * src[i1[o]] for o in [o0, o0 + n), o0 a multiple of block. */
    void (*lerp_row)(const tc__resize_plan *p, const float *src, float *h, int64_t o0, int64_t n);
    /* y[o] = a * h0[o] + b * h1[o] for o in [0, n). */
    void (*blend_row)(const float *h0, const float *h1, float a, float b, float *y, int64_t n);
} tc__resize_ukernels;

extern const tc__resize_ukernels tc__resize_f32_scalar;
extern const tc__resize_ukernels tc__resize_f32_avx2;
extern const tc__resize_ukernels tc__resize_f32_avx512;

bool tc__resize_f32_supports(const tc__step_desc *d);
size_t tc__resize_f32_scratch_bytes(const tc__step_desc *d);
tc_status tc__resize_f32_run(const tc__kernel_ctx *ctx, const tc__resize_ukernels *uk);

#endif
