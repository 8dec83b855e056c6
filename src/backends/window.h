/*
 * window.h - geometry of sliding windows shared by the Conv and pooling kernels of every backend (the
 * reference ones included): per spatial dim the kernel size, stride, dilation and
 * begin/end padding (resolved from pads or auto_pad), plus the index ranges
 * that keep a window inside the input without per-element bounds checks.
 */
#ifndef TC_BACKENDS_WINDOW_H
#define TC_BACKENDS_WINDOW_H

#include "backends/kernel.h"

typedef struct tc__window {
    int nsp;                         /* number of spatial dims */
    int64_t in[TC_MAX_RANK];         /* input spatial sizes */
    int64_t out[TC_MAX_RANK];        /* output spatial sizes */
    int64_t kernel[TC_MAX_RANK];
    int64_t stride[TC_MAX_RANK];
    int64_t dilation[TC_MAX_RANK];
    int64_t pad_begin[TC_MAX_RANK];
    int64_t pad_end[TC_MAX_RANK];
} tc__window;

/*
 * Resolves the window of a node whose input x and output y are [N, C, spatial...].
 * kernel gives the kernel sizes (Conv: the weight's spatial dims); when NULL the
 * kernel_shape attribute is required. For auto_pad SAME_* the padding follows
 * from the output size already chosen by shape inference.
 */
tc_status tc__window_resolve(const tc__kernel_ctx *ctx, const tc__tensor *x, const tc__tensor *y,
                                 const int64_t *kernel, tc__window *w);

/* Floor and ceiling of a / b for b > 0 and any sign of a. */
static inline int64_t tc__floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
static inline int64_t tc__ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

/*
 * Taps k in [*k0, *k1) of a window of K taps spaced dil apart whose first tap is at
 * input index start, such that start + k * dil lies in [lo, hi).
 */
static inline void tc__window_taps(int64_t start, int64_t dil, int64_t K, int64_t lo, int64_t hi, int64_t *k0,
                                       int64_t *k1) {
    int64_t a = tc__ceil_div(lo - start, dil), b = tc__ceil_div(hi - start, dil);
    *k0 = a < 0 ? 0 : a;
    *k1 = b > K ? K : b;
    if (*k1 < *k0) *k1 = *k0;
}

/* Outputs o in [*o0, *o1) of O, such that input index o * s + off lies in [0, I). */
static inline void tc__window_outputs(int64_t off, int64_t s, int64_t I, int64_t O, int64_t *o0, int64_t *o1) {
    int64_t a = tc__ceil_div(-off, s), b = tc__floor_div(I - 1 - off, s) + 1;
    *o0 = a < 0 ? 0 : a;
    *o1 = b > O ? O : b;
    if (*o1 < *o0) *o1 = *o0;
}

#endif
