/*
 * blocked_f32.h - the float32 operators that read and write activations in a blocked layout,
 * NCHW16c (AVX-512) or NCHW8c (AVX2) (core/layout.h), so that a chain of convolutions, pools and
 * elementwise ops keeps its tensors blocked between reorders: the reorder back to NCHW, MaxPool /
 * AveragePool, GlobalAveragePool, depthwise Conv, and Add / Sub / Mul / Div.
 *
 * One vector holds the B channels of one pixel (B = 16 or 8, the block), so every kernel works
 * pixel by pixel on whole vectors and no kernel needs a tail over channels. When C % B != 0 the last
 * block's padding lanes hold zeros (core/layout.h): the kernels compute them as any lane (zero inputs,
 * zero packed weights and biases) and the drivers write zeros back over them (tc__blk_zero_pad), since
 * an epilogue may make something else of 0. Each operator has a
 * baseline-C part (its tactic file: supports(), geometry, the threaded driver, all for any block)
 * and per ISA the microkernels declared here (*_nchw16c_*avx512.c, *_nchw8c_*avx2.c; most are one
 * body, *_nchwc_f32_kernel.h, compiled for each), reached through tc__blk_kernels_for(block). The
 * tactics run only nodes whose layout attributes (tc.layout_in, tc.layout_out, tc.layout_block)
 * are exactly the ones the operator expects.
 */
#ifndef TC_BACKENDS_CPU_BLOCKED_F32_H
#define TC_BACKENDS_CPU_BLOCKED_F32_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/cpu/vact_f32.h"
#include "backends/cpu/vbinary_f32.h"
#include "backends/window.h"
#include "core/layout.h"

/* ---- layout checks shared by the tactics ------------------------------------------------ */

/* True when the node's attributes block exactly the inputs of in_mask, and output 0 iff out_blocked. */
static inline bool tc__blk_layout_is(const tc__attrs *a, uint64_t in_mask, bool out_blocked) {
    return (uint64_t)tc__attr_int(a, TC__ATTR_LAYOUT_IN, 0) == in_mask &&
           tc__attr_int(a, TC__ATTR_LAYOUT_OUT, 0) == (out_blocked ? 1 : 0);
}

/* in_mask plus the bit of the epilogue's residual, if the step fuses one (e may be NULL). */
static inline uint64_t tc__blk_with_residual(uint64_t in_mask, const tc__epilogue *e) {
    if (e == NULL || e->residual_input < 0 || e->residual_input >= 32) return in_mask;
    return in_mask | (uint64_t)1 << e->residual_input;
}

/* True when the node's blocked tensors are in blocks of `block` channels (tc.layout_block). */
static inline bool tc__blk_block_is(const tc__attrs *a, int64_t block) { return tc__layout_block(a) == block; }

/* True when t is a float32 [N, C, H, W] tensor that NCHW<block>c holds with no padding lanes (C % block == 0):
 * the test of the tactics that do not handle padded channel blocks, which so refuse them. */
static inline bool tc__blk_is_blockable(const tc__tensor *t, int64_t block) {
    return t != NULL && t->dtype == TC_DTYPE_FLOAT32 && t->rank == 4 && block > 0 && t->dims[1] % block == 0 &&
           t->dims[0] >= 0 && t->dims[1] >= 0 && t->dims[2] >= 0 && t->dims[3] >= 0;
}

/* True when t is a float32 [N, C, H, W] tensor (C >= 1) that NCHW<block>c holds, its last block padded with zero
 * lanes when C % block != 0 (core/layout.h): the test of the padding-aware tactics. */
static inline bool tc__blk_is_blockable_padded(const tc__tensor *t, int64_t block) {
    return t != NULL && t->dtype == TC_DTYPE_FLOAT32 && t->rank == 4 && block > 0 && t->dims[0] >= 0 &&
           t->dims[1] >= 1 && t->dims[2] >= 0 && t->dims[3] >= 0 && tc__nchwc_elems(block, t->dims) >= 0;
}

/* True when t's buffer holds NCHW<block>c with its padding lanes (a run() checks the buffers it is handed). */
static inline bool tc__blk_bytes_ok(const tc__tensor *t, int64_t block) {
    const int64_t n = tc__nchwc_elems(block, t->dims);
    return n >= 0 && (uint64_t)n <= SIZE_MAX / sizeof(float) && t->nbytes >= (size_t)n * sizeof(float) &&
           (n == 0 || t->data != NULL);
}

/* Channel blocks of c channels: ceil(c / block). */
static inline int64_t tc__blk_count(int64_t c, int64_t block) { return (c + block - 1) / block; }

/*
 * Writes zeros into the padding lanes [valid, block) of n pixels of a last channel block (px: its first pixel,
 * `stride` floats apart): every padded tactic calls it on what it wrote there, whatever its epilogue made of 0.
 */
static inline void tc__blk_zero_pad(float *px, int64_t n, int64_t stride, int64_t block, int64_t valid) {
    if (valid <= 0 || valid >= block) return;
    for (int64_t i = 0; i < n; i++)
        for (int64_t l = valid; l < block; l++) px[i * stride + l] = 0.0f;
}

/* ---- 2-D windows (pools and depthwise Conv) ------------------------------------------- */

/* A 2-D sliding window resolved exactly as the reference kernels resolve it. */
typedef struct tc__blk_window {
    int64_t H, W;           /* input plane */
    int64_t OH, OW;         /* output plane */
    int64_t kh, kw;         /* kernel */
    int64_t sh, sw;         /* strides */
    int64_t dh, dw;         /* dilations */
    int64_t pt, pl, pb, pr; /* padding: top, left, bottom, right */
} tc__blk_window;

/*
 * Resolves the window of a node (op_type, attrs) with input x and output y, both [N, C, H, W]
 * with the same N and C; kernel is the weight's spatial dims (Conv) or NULL (kernel_shape).
 * False when the attributes are invalid for these shapes.
 */
static inline bool tc__blk_window_of(const char *op_type, const tc__attrs *attrs, const tc__tensor *x,
                                     const tc__tensor *y, const int64_t *kernel, tc__blk_window *g) {
    if (x->rank != 4 || y->rank != 4 || y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1]) return false;
    tc__err err = {0};
    tc__kernel_ctx kc = {.node_name = "", .op_type = op_type, .attrs = attrs, .err = &err};
    tc__window rw;
    if (tc__window_resolve(&kc, x, y, kernel, &rw) != TC_STATUS_OK) return false;
    *g = (tc__blk_window){.H = rw.in[0], .W = rw.in[1], .OH = rw.out[0], .OW = rw.out[1], .kh = rw.kernel[0],
                          .kw = rw.kernel[1], .sh = rw.stride[0], .sw = rw.stride[1], .dh = rw.dilation[0],
                          .dw = rw.dilation[1], .pt = rw.pad_begin[0], .pl = rw.pad_begin[1], .pb = rw.pad_end[0],
                          .pr = rw.pad_end[1]};
    return true;
}

/*
 * The output columns [*lo, *hi) whose every window column lies inside the input row; the
 * columns outside it are [0, *lo) and [*hi, OW) (*lo = *hi = OW when there is no such column).
 */
static inline void tc__blk_window_interior(const tc__blk_window *g, int64_t *lo, int64_t *hi) {
    int64_t a0, a1, b0, b1;
    tc__window_outputs(-g->pl, g->sw, g->W, g->OW, &a0, &a1);
    tc__window_outputs(-g->pl + (g->kw - 1) * g->dw, g->sw, g->W, g->OW, &b0, &b1);
    *lo = a0 > b0 ? a0 : b0;
    *hi = a1 < b1 ? a1 : b1;
    if (*hi <= *lo) *lo = *hi = g->OW;
}

/* ---- microkernels (per ISA: *_avx512 for NCHW16c, *_avx2 for NCHW8c) ---------------------- */

/*
 * Reorders pixels [p0, p1) of channel block cb of one image from NCHW16c to NCHW: xb is the
 * image's ceil(C/16) blocked planes of hw pixels, y the image's C planes of hw pixels; lanes
 * (1..16) the block's channels that have a plane (fewer than 16 in a padded last block).
 */
void tc__reorder_nchw16c_to_nchw_avx512(const float *xb, float *y, int64_t hw, int64_t cb, int64_t lanes, int64_t p0,
                                        int64_t p1);
void tc__reorder_nchw8c_to_nchw_avx2(const float *xb, float *y, int64_t hw, int64_t cb, int64_t lanes, int64_t p0,
                                     int64_t p1);

/* Output rows [oy0, oy1) of one blocked plane (x: H x W x 16, y: OH x OW x 16). */
void tc__maxpool_nchw16c_f32_rows_avx512(const tc__blk_window *g, const float *x, float *y, int64_t oy0, int64_t oy1);
void tc__avgpool_nchw16c_f32_rows_avx512(const tc__blk_window *g, bool count_include_pad, const float *x, float *y,
                                         int64_t oy0, int64_t oy1);
void tc__maxpool_nchw8c_f32_rows_avx2(const tc__blk_window *g, const float *x, float *y, int64_t oy0, int64_t oy1);
void tc__avgpool_nchw8c_f32_rows_avx2(const tc__blk_window *g, bool count_include_pad, const float *x, float *y,
                                      int64_t oy0, int64_t oy1);

/* y[p * 16 + l] = mean over the hw pixels of plane p, lane l, for planes [0, planes) (sums in double). */
void tc__gavgpool_nchw16c_f32_avx512(const float *x, float *y, int64_t hw, int64_t planes);
void tc__gavgpool_nchw8c_f32_avx2(const float *x, float *y, int64_t hw, int64_t planes);

/* One blocked plane of a depthwise convolution (B: the block). */
typedef struct tc__dwconv_nchw16c_plane {
    const float *x;    /* input H x W x B */
    const float *w;    /* packed taps kh x kw x B of this channel block */
    const float *bias; /* B values, or NULL */
    const float *res;  /* residual OH x OW x B, or NULL */
    float *y;          /* output OH x OW x B */
    int reuse;         /* 3-wide windows (dilation 1, stride 1 or 2): tc__dwconv_blk_config.reuse */
} tc__dwconv_nchw16c_plane;

/*
 * A configuration of the blocked depthwise tactics (the tuner times each, "name#index"): 0 (the default)
 * computes the interior columns with one load per tap and the edge pixels one by one; for windows 3 columns
 * wide at dilation 1 and stride 1 or 2, 1 computes whole rows in tiles of up to 8 pixels that load each
 * input vector of a kernel row once, 2 the same two rows at a time where both have all 3 kernel rows in
 * bounds. All add every pixel's taps in the same order (the same bits). A step without such windows has only 0.
 */
typedef struct tc__dwconv_blk_config {
    uint32_t reuse;
} tc__dwconv_blk_config;

/* Output rows [oy0, oy1) of one plane: y = act(conv(x) + bias + res). */
void tc__dwconv_nchw16c_f32_rows_avx512(const tc__blk_window *g, const tc__vact *act,
                                        const tc__dwconv_nchw16c_plane *p, int64_t oy0, int64_t oy1);
void tc__dwconv_nchw8c_f32_rows_avx2(const tc__blk_window *g, const tc__vact *act, const tc__dwconv_nchw16c_plane *p,
                                     int64_t oy0, int64_t oy1);

/*
 * One operand of a blocked binary op over a run of pixels: pixel i reads B floats at
 * p + i * stride, with stride B (an operand of the output's shape) or 0 (a per-channel vector).
 */
typedef struct tc__vbinary_nchw16c_operand {
    const float *p;
    int64_t stride;
} tc__vbinary_nchw16c_operand;

/* y[i] = act(op(a[i], b[i]) + res[i]) for the n pixels i (res, B floats per pixel, may be NULL). */
void tc__vbinary_nchw16c_f32_avx512(tc__vbinary_op op, tc__vbinary_nchw16c_operand a, tc__vbinary_nchw16c_operand b,
                                    const float *res, float *y, int64_t n, const tc__vact *act);
void tc__vbinary_nchw8c_f32_avx2(tc__vbinary_op op, tc__vbinary_nchw16c_operand a, tc__vbinary_nchw16c_operand b,
                                 const float *res, float *y, int64_t n, const tc__vact *act);

/* The microkernels of one block size (and so one ISA). */
typedef struct tc__blk_kernels {
    int64_t block; /* channels per block = floats per pixel of a plane */
    void (*reorder_to_nchw)(const float *xb, float *y, int64_t hw, int64_t cb, int64_t lanes, int64_t p0, int64_t p1);
    void (*maxpool_rows)(const tc__blk_window *g, const float *x, float *y, int64_t oy0, int64_t oy1);
    void (*avgpool_rows)(const tc__blk_window *g, bool count_include_pad, const float *x, float *y, int64_t oy0,
                         int64_t oy1);
    void (*gavgpool)(const float *x, float *y, int64_t hw, int64_t planes);
    void (*dwconv_rows)(const tc__blk_window *g, const tc__vact *act, const tc__dwconv_nchw16c_plane *p, int64_t oy0,
                        int64_t oy1);
    void (*vbinary)(tc__vbinary_op op, tc__vbinary_nchw16c_operand a, tc__vbinary_nchw16c_operand b, const float *res,
                    float *y, int64_t n, const tc__vact *act);
} tc__blk_kernels;

/* The microkernels for blocks of `block` channels (16: AVX-512, 8: AVX2); NULL for another block. */
const tc__blk_kernels *tc__blk_kernels_for(int64_t block);

/* ---- operators (baseline C, in the tactic files) --------------------------------------- */

bool tc__reorder_nchw16c_supports(const tc__step_desc *d);
tc_status tc__reorder_nchw16c_run(const tc__kernel_ctx *ctx);

/* MaxPool / AveragePool / GlobalAveragePool on NCHW16c. */
bool tc__maxpool_nchw16c_f32_supports(const tc__step_desc *d);
bool tc__avgpool_nchw16c_f32_supports(const tc__step_desc *d);
bool tc__gavgpool_nchw16c_f32_supports(const tc__step_desc *d);
tc_status tc__maxpool_nchw16c_f32_run(const tc__kernel_ctx *ctx);
tc_status tc__avgpool_nchw16c_f32_run(const tc__kernel_ctx *ctx);
tc_status tc__gavgpool_nchw16c_f32_run(const tc__kernel_ctx *ctx);

/*
 * Depthwise Conv on NCHW16c. The weight W [C, 1, KH, KW] is packed at build time to
 * [C/16][KH][KW][16] (tc__dwconv_nchw16c_f32_pack); run() reads only the packed form.
 */
bool tc__dwconv_nchw16c_f32_supports(const tc__step_desc *d);
bool tc__dwconv_nchw16c_f32_packs_input(const tc__step_desc *d, int index);
tc_status tc__dwconv_nchw16c_f32_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err);
tc_status tc__dwconv_nchw16c_f32_run(const tc__kernel_ctx *ctx);
int tc__dwconv_nchw16c_f32_configs(const tc__step_desc *d, void *out, int cap);
bool tc__dwconv_nchw16c_f32_check_config(const void *config, tc__err *err);

/* Add / Sub / Mul / Div on NCHW16c: each input of the output's shape or [N or 1, C, 1, 1]. */
bool tc__vbinary_nchw16c_f32_supports(const tc__step_desc *d);
tc_status tc__vbinary_nchw16c_f32_run(const tc__kernel_ctx *ctx, tc__vbinary_op op);

#endif
