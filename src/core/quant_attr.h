/*
 * quant_attr.h - how a node says it may run in INT8: the precision pass (src/passes/precision_int8.c)
 * gives it the float attribute tc.int8_scale, the per-tensor scale of its data input (from the
 * calibration cache); the int8 tactics (src/backends/cpu/qconv_u8s8.h) take only such nodes. The
 * "tc." prefix is reserved (the importer refuses it).
 */
#ifndef TC_CORE_QUANT_ATTR_H
#define TC_CORE_QUANT_ATTR_H

#define TC__ATTR_INT8_SCALE "tc.int8_scale"
/*
 * Explicit quantization (QDQ models): the input's QuantizeLinear zero point as an unsigned code,
 * 0..255 (an int8 zero point z is stored as z + 128), with codes clamped to [0, 255] as QuantizeLinear
 * does. Absent: symmetric calibration, codes q + 128 with q clamped to [-127, 127].
 */
#define TC__ATTR_INT8_ZERO_POINT "tc.int8_zero_point"
/* The precision pass's tc.int8_nonneg = 1: the data input cannot be negative (its producer ends in Relu, a Clip
 * with min >= 0, Sigmoid or HardSigmoid, possibly through pooling or reshaping), so its symmetric codes q are
 * in [0, 127] and the AVX2 INT8 kernel may multiply them as unsigned bytes (qconv_u8s8.h). */
#define TC__ATTR_INT8_NONNEG "tc.int8_nonneg"
/* The precision pass's tc.int8_code_max = 127 (with reduce range, for an input that a GELU, SiLU or HardSwish produced:
 * asymmetric codes with a zero point): the layer's codes are clamped to [lowest, 127] instead of [lowest, 255], 7 bits
 * over the same range (the step of symmetric 8-bit codes), so the AVX2 u8w7 kernel adds the products of two channel
 * quads in 16 bits as u7w7 does. A chained producer writing such a layer's image gets it as the 9th int of
 * tc.int8_out_image. Absent: 255. */
#define TC__ATTR_INT8_CODE_MAX "tc.int8_code_max"
/* The precision pass's tc.int8_w7 = 1 (--int8-reduce-range, TC_BUILD_INT8_REDUCE_RANGE): the layer's weights may be
 * quantized to 7 bits, |q| <= 64 (onnxruntime's reduce_range grid) per output channel, which the AVX2 u7w7 kernels need (qconv_u8s8.h). */
#define TC__ATTR_INT8_W7 "tc.int8_w7"
#define TC__INT8_W7_MAX 64 /* the largest |q| of such weights */

/*
 * Consecutive INT8 layers (the engine's reduced-precision chain, src/engine/lowp_chain.c): a Conv whose INT8 output is read
 * only by another INT8 Conv writes that reader's padded u8 input image itself (tc.int8_out_image: ints
 * [Hp, Wp, Cp, pad top, pad left, zero point, lowest code] of the reader's image, tc.int8_out_scale: the
 * reader's input scale) into the tensor's buffer, and the reader (tc.int8_in_image = 1) takes it as is: no
 * FP32 tensor and no quantization pass between them. The tensor's bytes then hold codes, not floats.
 */
#define TC__ATTR_INT8_OUT_IMAGE "tc.int8_out_image"
/* An optional 8th int of tc.int8_out_image: the reader's image elements when they differ from the producer's own
 * (the AVX2 variants chain with each other: a 16-bit-code layer may write a u7 reader's bytes and back). */
#define TC__INT8_IMG_OWN 0 /* absent: the producer's own (VNNI u8 codes; AVX2: 16-bit centred codes or u7 bytes) */
#define TC__INT8_IMG_U7 1  /* bytes of max(q, 0) (the AVX2 u7 variant) */
#define TC__INT8_IMG_S16 2 /* 16-bit centred codes u - z (the AVX2 16-bit variant) */
#define TC__INT8_IMG_U8 3  /* bytes of the codes u = q + z, border z (the AVX2 u8w7 variant; always given explicitly) */
#define TC__ATTR_INT8_OUT_SCALE "tc.int8_out_scale"
#define TC__ATTR_INT8_IN_IMAGE "tc.int8_in_image"
/* An INT8 step whose fused residual is such an image (a value several AVX2 INT8 Convs read: ResNet's block outputs,
 * read by the next block's first Conv and, as its residual, by its last): tc.int8_res_image: ints [Hp, Wp, Cp, pad
 * top, pad left, format (TC__INT8_IMG_U7, _S16, or _U8 followed by its zero point)], tc.int8_res_scale: the scale its
 * codes (less the zero point) dequantize with. */
#define TC__ATTR_INT8_RES_IMAGE "tc.int8_res_image"
/* The precision pass's tc.int8_y_scale: the calibrated scale of an INT8 layer's own output, where the calibration cache
 * has it (an Add operand: engine/api_calibrator.c). A residual image of that output uses it when no INT8 layer reads it as input. */
#define TC__ATTR_INT8_Y_SCALE "tc.int8_y_scale"
#define TC__ATTR_INT8_RES_SCALE "tc.int8_res_scale"
/* The same for FP16 and BF16 Convs (src/engine/lowp_chain.c): tc.half_out_image: ints [Hp, Wp, Cp, pad top, pad
 * left] of the reader's 16-bit image (border and padding channels 0); tc.half_in_image = 1 on the reader. */
#define TC__ATTR_HALF_OUT_IMAGE "tc.half_out_image"
#define TC__ATTR_HALF_IN_IMAGE "tc.half_in_image"
/* An FP16 / BF16 step whose fused residual is such an image (a value several of them read: ResNet's block outputs,
 * read by the next block's first Conv and, as its residual, by its last): tc.half_res_image: ints [Hp, Wp, Cp, pad
 * top, pad left] of that image. */
#define TC__ATTR_HALF_RES_IMAGE "tc.half_res_image"

/* FP16 NHWC images between device convolutions (src/engine/nhwc16_chain.c): tc.nhwc16_out = 1 on a step that writes
 * its output as FP16 NHWC (no padding) into the value's buffer, tc.nhwc16_in = 1 on a reader of it as input X,
 * tc.nhwc16_res = 1 on a reader of it as fused residual. */
#define TC__ATTR_NHWC16_OUT "tc.nhwc16_out"
#define TC__ATTR_NHWC16_IN "tc.nhwc16_in"
#define TC__ATTR_NHWC16_RES "tc.nhwc16_res"
/* FP16 row images between device dense layers, LayerNorms and attention (src/engine/row16_chain.c): tc.row16_out = 1
 * on a step that writes its output as FP16 (the tensor's elements in order, no padding) into the value's buffer,
 * tc.row16_in = a bit mask over a reader's input indices (bit i: input i is such an image). */
#define TC__ATTR_ROW16_OUT "tc.row16_out"
#define TC__ATTR_ROW16_IN "tc.row16_in"

/* FP16 / BF16 (--fp16, --bf16): the precision pass (src/passes/precision_half.c) gives the layers that may
 * run in that type the int attribute tc.fp16 = 1 / tc.bf16 = 1; the fp16 / bf16 tactics
 * (src/backends/cpu/hconv.h) take only such nodes. */
#define TC__ATTR_FP16 "tc.fp16"
#define TC__ATTR_BF16 "tc.bf16"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * The grid of output channels [oc0, oc1) of a weight with cout channels of k values each (k_major: [K][C_out], else
 * [C_out][K]): the step s = max|w| / qmax when every value is an integer multiple of it (within 1e-3 of a step: how a
 * QDQ model's weights look once their DequantizeLinear is folded), 0 when they are all zero, -1 otherwise (an FP32
 * weight, another grid, a non-finite value).
 */
static inline double tc__weight_grid(const float *w, bool k_major, int64_t cout, int64_t k, int64_t oc0, int64_t oc1,
                                     double qmax) {
    double amax = 0.0;
    for (int64_t oc = oc0; oc < oc1; oc++)
        for (int64_t i = 0; i < k; i++) amax = fmax(amax, fabs((double)w[k_major ? i * cout + oc : oc * k + i]));
    if (!isfinite(amax)) return -1.0;
    if (amax == 0.0) return 0.0;
    const double step = amax / qmax;
    for (int64_t oc = oc0; oc < oc1; oc++)
        for (int64_t i = 0; i < k; i++) {
            const double q = (double)w[k_major ? i * cout + oc : oc * k + i] / step;
            if (fabs(q - nearbyint(q)) > 1e-3) return -1.0;
        }
    return step;
}

/*
 * True when the INT8 packing of a weight with cout output channels, cin input channels and taps taps
 * (kernel positions) fits in the FP32 weight's bytes (the packing contract): Cpad16 * taps * Cpad4 bytes
 * of int8 plus 8 bytes per padded channel (see backends/cpu/qconv_u8s8.h).
 */
static inline bool tc__int8_weight_fits(int64_t cout, int64_t cin, int64_t taps) {
    if (cout < 1 || cin < 1 || taps < 1 || cout > (1 << 24) || cin > (1 << 24) || taps > (1 << 20)) return false;
    const int64_t c16 = (cout + 15) / 16 * 16, c4 = (cin + 3) / 4 * 4;
    return cout * cin * taps * 4 >= c16 * (taps * c4 + 8);
}

/* The same for a depthwise weight [C][1][KH][KW] (backends/cpu/qconv_u8s8.h): Cpad16 * ceil(taps / 2) pairs of
 * int16 plus 4 bytes per padded channel. */
static inline bool tc__int8_dw_weight_fits(int64_t c, int64_t taps) {
    if (c < 1 || taps < 1 || c > (1 << 24) || taps > (1 << 20)) return false;
    const int64_t c16 = (c + 15) / 16 * 16;
    return c * taps * 4 >= c16 * ((taps + 1) / 2 * 4 + 4);
}

#endif
