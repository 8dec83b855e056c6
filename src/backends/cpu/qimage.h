/*
 * qimage.h - FP32 steps that write their INT8 readers' input image (AVX2), so that the FP32 tensor between them and
 * the readers' conversion passes disappear; the engine's reduced-precision chain (engine/lowp_chain.c) gives such a
 * step its readers' image (tc.int8_out_image with its format, tc.int8_out_scale) and the readers tc.int8_in_image.
 * The codes are the ones the readers' own conversion computes from the step's FP32 values (qconv_avx2.h's rows), so
 * the results stay the same, bit for bit. One such step: a per-channel Mul, y = x * s with x [N][C][H][W] and s [N or
 * 1][C][1][1] (or [C][1][1]), read by AVX2 INT8 Convs (EfficientNet's squeeze-and-excitation scale before the
 * projection): fl(x * s) quantized. (A MaxPool writing its readers' image, ResNet's stem pool, was tried: its readers
 * saved 0.25 ms, the pool row by row lost as much.) Tactic in qimage_tactic.c, kernel in qconv_s16_avx2.c.
 */
#ifndef TC_BACKENDS_CPU_QIMAGE_H
#define TC_BACKENDS_CPU_QIMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/tactic.h"

/* The image a step writes: its readers'. */
typedef struct tc__qimage_out {
    size_t hp, wp, cp, pt, pl; /* rows, columns, channels per pixel, top and left padding */
    uint8_t zp, lo, fmt;       /* zero point, lowest code and elements (TC__INT8_IMG_U7, _S16 or _U8) */
    uint8_t hi;                /* highest code (255, or 127: tc.int8_code_max) */
    float scale;
} tc__qimage_out;

typedef struct tc__qimage_mul {
    size_t batch, c, h, w;   /* x */
    int x_input;             /* x is input 0 or 1 (s the other) */
    bool s_per_image;        /* s has N rows of C values (else one) */
    tc__qimage_out o;
} tc__qimage_mul;

/* The shape of a Mul step that multiplies a [N][C][H][W] float32 tensor by one value per channel (no epilogue, plain
 * layout), and without an image: false for any other step. */
bool tc__qimage_mul_shape(const tc__step_desc *d, tc__qimage_mul *m);
/* tc__qimage_mul_shape and the image attributes (which must fit in Y's bytes; u7 bytes need symmetric codes). */
bool tc__qimage_mul_geometry(const tc__step_desc *d, tc__qimage_mul *m);
/* Runs the step (AVX2): writes the image into Y's bytes. */
tc_status tc__qimage_mul_run_avx2(const tc__kernel_ctx *ctx, const tc__qimage_mul *m);

#endif
