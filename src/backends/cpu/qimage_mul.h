/*
 * qimage_mul.h - a per-channel Mul that writes its INT8 reader's input image (AVX2): y = x * s, x [N][C][H][W] and s
 * [N or 1][C][1][1] (or [C][1][1]), where y is read only by an AVX2 INT8 Conv (EfficientNet's squeeze-and-excitation
 * scale before the projection Conv). The engine's reduced-precision chain (engine/lowp_chain.c) gives the Mul the
 * reader's image (tc.int8_out_image with its format, tc.int8_out_scale) and the reader tc.int8_in_image: the Mul step
 * quantizes fl(x * s) into the reader's padded channels-last image exactly as the reader's own conversion would
 * (qconv_avx2.h's rows, with the scale per channel), so the FP32 product and the reader's pass disappear and the
 * results stay the same, bit for bit. Tactic in qimage_mul_tactic.c, kernel in qconv_s16_avx2.c.
 */
#ifndef TC_BACKENDS_CPU_QIMAGE_MUL_H
#define TC_BACKENDS_CPU_QIMAGE_MUL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tactics/tactic.h"

typedef struct tc__qimage_mul {
    size_t batch, c, h, w;   /* x */
    int x_input;             /* x is input 0 or 1 (s the other) */
    bool s_per_image;        /* s has N rows of C values (else one) */
    size_t hp, wp, cp, pt, pl; /* the reader's image */
    uint8_t zp, lo, fmt;     /* its zero point, lowest code and elements (TC__INT8_IMG_U7, _S16 or _U8) */
    uint8_t hi;              /* its highest code (255, or 127: tc.int8_code_max) */
    float scale;             /* its scale */
} tc__qimage_mul;

/* The shape of a Mul step that multiplies a [N][C][H][W] float32 tensor by one value per channel (no epilogue, plain
 * layout), and without an image: false for any other step. */
bool tc__qimage_mul_shape(const tc__step_desc *d, tc__qimage_mul *m);
/* tc__qimage_mul_shape and the image attributes (which must fit in Y's bytes; u7 bytes need symmetric codes). */
bool tc__qimage_mul_geometry(const tc__step_desc *d, tc__qimage_mul *m);

/* Runs the step (AVX2): writes the image into Y's bytes. */
tc_status tc__qimage_mul_run_avx2(const tc__kernel_ctx *ctx, const tc__qimage_mul *m);

#endif
