/*
 * qconv_u8s8.h - INT8 convolution and matrix product with AVX512-VNNI (vpdpbusd): FP32 tensors in
 * and out, INT8 arithmetic inside. Used by the int8 tactics of Conv (one group, any kernel, stride,
 * dilation and padding), MatMul and Gemm (constant B).
 *
 * Quantization:
 *   activations  per tensor, as unsigned codes u = clamp(round(x / sx) + z, lo, 255): sx from the node
 *                attribute tc.int8_scale; calibrated (symmetric) z = 128, lo = 1, i.e. q = u - 128 in
 *                [-127, 127]; a QDQ model's zero point gives z (tc.int8_zero_point) and lo = 0;
 *   weights      per output channel: qw = round(w / sw[oc]), sw[oc] = max|w[oc, :]| / 127; a weight on a
 *                per-tensor grid (a QDQ model quantized it with s = max|w| / 127) keeps sw = s everywhere.
 * vpdpbusd multiplies unsigned by signed bytes; the zero point is taken out by comp[oc] = z * sum(qw[oc, :]):
 *   y[oc] = act((acc - comp[oc]) * sx * sw[oc] + bias[oc] + residual).
 *
 * The operator quantizes X once per run into a padded channels-last u8 image (scratch): [N][Hp][Wp][Cp]
 * with Cp = C_in rounded up to 4 and the padding border set to z (x = 0), so the kernel has no edge
 * cases. A MatMul is the 1x1 case on an image of one row whose pixels are A's rows.
 *
 * The constant weight is packed at build time into the same bytes the FP32 weight had (the packing
 * contract: the plan keeps the weight's dims and dtype), which holds when C_out * K * 4 >=
 * Cpad16 * KH * KW * Cp + 8 * Cpad16; supports() checks it. Layout of the packed bytes:
 *   int8  [Cpad16 / 16][KH * KW][Cp / 4][16][4]   (block of 16 output channels, tap, 4 input channels)
 *   float mult[Cpad16]   sx * sw[oc]   (0 for padding channels)
 *   int32 comp[Cpad16]   z * sum(qw[oc, :])
 * The baseline-ISA part (geometry, supports, packing) is qconv_u8s8_tactic.c (the layer checks it shares
 * with the FP16 tactics are lowp_layer.c); the VNNI kernels and
 * run() are qconv_u8s8_avx512vnni.c.
 */
#ifndef TC_BACKENDS_CPU_QCONV_U8S8_H
#define TC_BACKENDS_CPU_QCONV_U8S8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/cpu/amx_panel.h"
#include "backends/cpu/lowp_layer.h"
#include "core/quant_attr.h"
#include "backends/tactic.h"

/* Memory layouts of X and Y (lowp_layer.h). */
#define TC__Q_NCHW TC__LOWP_NCHW
#define TC__Q_NCHW16C TC__LOWP_NCHW16C
#define TC__Q_ROWS TC__LOWP_ROWS

/* One convolution (sizes of one image), as the operator computes it. */
typedef struct tc__qconv_geom {
    size_t batch, cin, cout;
    size_t ih, iw, oh, ow;
    size_t kh, kw, sh, sw, dh, dw;
    size_t pt, pl;          /* top and left padding */
    size_t hp, wp, cp;      /* the padded quantized image: rows, columns, channels (Cp % 4 == 0) */
    size_t cout16;          /* C_out rounded up to 16 */
    uint8_t in_layout, out_layout; /* tc__lowp_layout */
    float x_scale;          /* sx */
    uint8_t zero_point, lo; /* z and the lowest code (see above) */
    uint8_t hi;             /* the highest code: 255, or 127 (tc.int8_code_max) */
    bool nonneg;            /* tc.int8_nonneg: X cannot be negative */
    bool w7;                /* tc.int8_w7: the weights may take 7 bits (the u7w7 variant) */
    bool depthwise;         /* a depthwise Conv (group = C_in = C_out; cin = cout; Cp % 16 == 0): qdwconv_*.c */
    /* The INT8 chain (core/quant_attr.h): X is already this operator's padded u8 image (in_image), or Y is
     * written as the next layer's padded image [N][o_hp][o_wp][o_cp], codes of y / o_scale + o_zp (out_image). */
    bool in_image, out_image;
    size_t o_hp, o_wp, o_cp, o_pt, o_pl;
    uint8_t o_zp, o_lo, o_hi;
    uint8_t o_fmt; /* the out image's elements (core/quant_attr.h): TC__INT8_IMG_OWN, _U7 or _S16 (AVX2 variants) */
    float o_scale;
    /* The fused residual is an image of codes (AVX2 variants; tc.int8_res_image): [N][r_hp][r_wp][r_cp], elements
     * r_fmt, values code * r_scale */
    bool res_image;
    size_t r_hp, r_wp, r_cp, r_pt, r_pl;
    uint8_t r_fmt, r_zp; /* (r_zp: u8 images' zero point, else 0) */
    float r_scale;
} tc__qconv_geom;

/* The format of an AVX2 variant's out image (TC__INT8_IMG_*; OWN resolved: u7 bytes for the u7 variants, else 16 bits),
 * and the bytes of its element. */
static inline int tc__qconv_out_fmt(const tc__qconv_geom *g, bool u7) {
    return g->o_fmt != TC__INT8_IMG_OWN ? g->o_fmt : u7 ? TC__INT8_IMG_U7 : TC__INT8_IMG_S16;
}
static inline size_t tc__qconv_out_elem(const tc__qconv_geom *g, bool u7) {
    return tc__qconv_out_fmt(g, u7) == TC__INT8_IMG_S16 ? 2 : 1;
}

/* Bytes of the packed weight (int8 part + mult + comp). */
static inline size_t tc__qconv_packed_bytes(const tc__qconv_geom *g) {
    return g->cout16 * g->kh * g->kw * g->cp + 8 * g->cout16;
}
static inline size_t tc__qconv_weight_bytes(const tc__qconv_geom *g) { return g->cout16 * g->kh * g->kw * g->cp; }
/* Scratch bytes of one run: the quantized padded image of the whole batch, the taps' offsets, alignment. */
static inline size_t tc__qconv_scratch(const tc__qconv_geom *g) {
    return g->batch * g->hp * g->wp * g->cp + g->kh * g->kw * sizeof(size_t) + 256;
}

/*
 * The depthwise INT8 Conv on AVX2 (qdwconv_avx2.c, tactics in qdwconv_tactic.c), both variants: the input image as
 * the dense AVX2 kernels have it (16-bit centred codes, or u7 bytes widened to 16 bits), Cp = C rounded up to 16;
 * two taps per vpmaddwd (their codes interleaved per channel), exact in 32 bits; the same FP32 epilogue. Packed
 * weight, in the FP32 weight's bytes (C * taps floats):
 *   int16 [Cpad16 / 16][ceil(taps / 2)][32]   then   float mult[Cpad16]
 * where the 32 values of a block and tap pair are two vectors of 16 in vpunpck{l,h}wd order: the first holds
 * channels 0-3 and 8-11, the second 4-7 and 12-15, each as (tap 2p, tap 2p + 1) pairs (an odd last tap pairs with 0).
 */
static inline size_t tc__qdw_tap_pairs(const tc__qconv_geom *g) { return (g->kh * g->kw + 1) / 2; }
static inline size_t tc__qdw_weight_elems(const tc__qconv_geom *g) { return g->cout16 * tc__qdw_tap_pairs(g) * 2; }
static inline size_t tc__qdw_packed_bytes(const tc__qconv_geom *g) { return tc__qdw_weight_elems(g) * 2 + 4 * g->cout16; }

/*
 * The depthwise INT8 Conv on AVX512-VNNI (qdwconv_avx512vnni.c, tactics in qdwconv_tactic.c): the dense VNNI kernel's
 * image (u8 codes, border z; Cp = C rounded up to 16), the same epilogue and chain. Per output pixel, a group of up to
 * four blocks of 16 channels (64 bytes of the image) and four taps: their rows interleaved per channel by
 * vpunpck{l,h}{bw,wd} into four vectors of 16 dwords (one channel's four taps each: within 128-bit lane L, channels
 * 16L + 4v .. 16L + 4v + 3 of vector v), each multiplied by vpdpbusd with the same order of weights; the four sums are
 * put back in channel order once per pixel. A last quad of fewer taps repeats the last one with weight 0. The zero
 * point leaves as comp[c] = z * sum(qw[c, :]), as in the dense kernel. Packed weight, in the FP32 weight's bytes
 * (C * taps floats):
 *   int8 [groups of 4 blocks][ceil(taps / 4)][4 vectors][16 * nb]   (nb: blocks of the group, 4 but in the last)
 *   float mult[Cpad16]   int32 comp[Cpad16]
 * where byte 16 L + 4 (c % 4) + t % 4 of vector v holds channel 16 L + 4 v + c % 4 (block L of the group), tap t.
 */
static inline size_t tc__qdw_tap_quads(const tc__qconv_geom *g) { return (g->kh * g->kw + 3) / 4; }
static inline size_t tc__qdw_vnni_weight_bytes(const tc__qconv_geom *g) { return g->cout16 * tc__qdw_tap_quads(g) * 4; }
static inline size_t tc__qdw_vnni_packed_bytes(const tc__qconv_geom *g) { return tc__qdw_vnni_weight_bytes(g) + 8 * g->cout16; }

/*
 * The geometry of step d (Conv, MatMul or Gemm; or a depthwise Conv, then g->depthwise) for this operator, with X and Y in the layouts the
 * node's tc.layout_* attributes give; false when the operator cannot compute it (dtypes, group, shapes,
 * a missing or bad tc.int8_scale, sizes beyond 2^31, or packed weights larger than the FP32 ones).
 */
bool tc__qconv_geometry(const tc__step_desc *d, tc__qconv_geom *g);

/* True when an AVX2 variant (u7 or not) can write g's out image: its elements fit in Y's FP32 bytes, and u7 bytes
 * hold symmetric codes. */
bool tc__qconv_out_image_ok(const tc__step_desc *d, const tc__qconv_geom *g, bool u7);

/* The weight's input index: 1 (Conv W, MatMul B, Gemm B). */
#define TC__QCONV_WEIGHT_INPUT 1

/* Quantizes and packs the FP32 weight (ONNX layout: Conv [C_out][C_in][KH][KW], MatMul [K][N], Gemm
 * [K][N] or [N][K] with transB) into dst (tc__qconv_packed_bytes, or with s16 the AVX2 variant's
 * tc__qconv_s16_packed_bytes); with g->w7 (every variant) to |q| <= TC__QW7_MAX, sw[oc] = max|w[oc, :]| / TC__QW7_MAX
 * (or the whole tensor's grid, max|w| / TC__QW7_MAX, when the weight lies on it: a QDQ model's per-tensor weights). */
void tc__qconv_pack_weight(const tc__qconv_geom *g, const float *w, bool k_major, bool s16, void *dst);

/* Runs the operator on a step its tactic supports (needs AVX512-VNNI). */
tc_status tc__qconv_run_avx512vnni(const tc__kernel_ctx *ctx, const tc__qconv_geom *g);

/* AMX-INT8 (amx_panel.h): the panel plan of g, false when the AMX kernel does not take it; and the run (needs
 * AMX-INT8 and AVX512-VNNI; the same image, packing and epilogue as the VNNI kernel). */
bool tc__qconv_amx_plan(const tc__qconv_geom *g, tc__amx_plan *p);
tc_status tc__qconv_run_amx(const tc__kernel_ctx *ctx, const tc__qconv_geom *g);

/*
 * The AVX2 variant (qconv_s16_avx2.c), for CPUs without VNNI: the same codes and weights, in 16 bits so
 * that vpmaddwd (s16 x s16 products summed in pairs into s32) is exact: vpmaddubsw on u8 x s8 would
 * saturate its 16-bit pair sums. The image holds u - z (in [-255, 255]; border and padding channels 0), so
 * no zero-point correction is needed: y[oc] = act(acc * sx * sw[oc] + bias[oc] + residual), the value the
 * VNNI kernel computes. In the INT8 chain the images hold these 16-bit centred codes (the attributes are the
 * same; the border and padding channels hold 0). Packed weight, in the FP32 weight's bytes:
 *   int16 [Cpad16 / 16][KH * KW][Cp / 2][16][2]   then   float mult[Cpad16]
 */
static inline size_t tc__qconv_s16_weight_elems(const tc__qconv_geom *g) { return g->cout16 * g->kh * g->kw * g->cp; }
static inline size_t tc__qconv_s16_packed_bytes(const tc__qconv_geom *g) {
    return tc__qconv_s16_weight_elems(g) * 2 + 4 * g->cout16;
}
static inline size_t tc__qconv_s16_scratch(const tc__qconv_geom *g) {
    return g->batch * g->hp * g->wp * g->cp * 2 + g->kh * g->kw * sizeof(size_t) + 256;
}
/* Runs the AVX2 variant on a step its tactic supports, with the weight packed for it. */
tc_status tc__qconv_run_s16_avx2(const tc__kernel_ctx *ctx, const tc__qconv_geom *g);

/*
 * The AVX2 variant for a non-negative X with symmetric codes (tc.int8_nonneg, z = 128, lo = 1; qconv_s16_avx2.c
 * too): q = u - 128 is in [0, 127], so vpmaddubsw (u8 x s8 pairs summed into s16) is exact (|pair| <= 2 * 127 *
 * 127 < 2^15) and vpmaddwd with ones sums the pairs: fewer instructions per multiply-add than 16-bit codes. The
 * image holds q as bytes (padded channels-last, Cp % 4 == 0, border 0; max(q, 0), so a NaN, whose code is 1, gives 0
 * here and -127 in the other variants), the weight the VNNI packing (its comp part unused); in the chain the images
 * hold such bytes.
 */
tc_status tc__qconv_run_u7_avx2(const tc__kernel_ctx *ctx, const tc__qconv_geom *g);

/*
 * The u7w7 variant (reduce range: tc.int8_w7, TC_BUILD_INT8_REDUCE_RANGE): the u7 variant with weights quantized to
 * |qw| <= TC__QW7_MAX (sw[oc] = max|w[oc, :]| / 64, onnxruntime's reduce_range grid). Then a vpmaddubsw lane is at
 * most 2 * 127 * 64, so the lanes of two consecutive channel quads add in 16 bits without overflow before one vpmaddwd
 * with ones widens them: three multiplies per 8 channels instead of four. Same image, packing and epilogue as u7 (it
 * chains as u7); other weights.
 */
#define TC__QW7_MAX TC__INT8_W7_MAX
tc_status tc__qconv_run_u7w7_avx2(const tc__kernel_ctx *ctx, const tc__qconv_geom *g);
/*
 * The u8w7 variant (also tc.int8_w7): any X, its codes u (zero point z) as bytes in the VNNI image (border z), times
 * 7-bit weights: a vpmaddubsw lane is at most 2 * 255 * 64 < 2^15, so it is exact without the u7 variant's
 * non-negative input; vpmaddwd with ones widens each step, and comp[oc] = z * sum(qw[oc, :]) takes z out, as the VNNI
 * kernel does. For the layers whose input may be negative (a transformer's MatMuls after LayerNorm, a stem on the
 * normalized image), instead of the 16-bit variant. In the chain it reads images of its codes as bytes
 * (TC__INT8_IMG_U8, border z), which any AVX2 variant writes, and writes any AVX2 reader's image. A residual image of
 * u8 codes (tc.int8_res_image's zero point) dequantizes as (u - z) * scale, in every AVX2 variant.
 */
tc_status tc__qconv_run_u8w7_avx2(const tc__kernel_ctx *ctx, const tc__qconv_geom *g);

/* True when the u7 variants may read g's input: a non-negative X (tc.int8_nonneg) with symmetric codes. */
static inline bool tc__qconv_u7_input(const tc__qconv_geom *g) { return g->nonneg && g->zero_point == 128 && g->lo == 1; }

/* The geometry of the step a kernel context runs (qconv_u8s8_tactic.c), or an error on ctx->err. */
tc_status tc__qconv_ctx_geometry(const tc__kernel_ctx *ctx, tc__qconv_geom *g);

/* Quantizes and packs a depthwise FP32 weight [C][1][KH][KW] into dst (tc__qdw_packed_bytes). */
void tc__qdw_pack_weight(const tc__qconv_geom *g, const float *w, void *dst);
/* Runs the depthwise AVX2 kernel on an image of elem: TC__QDW_S16 (16-bit centred codes), TC__QDW_U7 (bytes of max(q, 0);
 * needs a non-negative symmetric X) or TC__QDW_U8 (bytes of the codes q + z, border z: any X). */
#define TC__QDW_S16 0
#define TC__QDW_U7 1
#define TC__QDW_U8 2
tc_status tc__qdw_run_avx2(const tc__kernel_ctx *ctx, const tc__qconv_geom *g, int elem);

/* Quantizes and packs a depthwise FP32 weight for the VNNI kernel into dst (tc__qdw_vnni_packed_bytes); the same codes
 * and scales as tc__qdw_pack_weight. */
void tc__qdw_pack_weight_vnni(const tc__qconv_geom *g, const float *w, void *dst);
/* Runs the depthwise VNNI kernel on a step its tactic supports (needs AVX512-VNNI). */
tc_status tc__qdw_run_avx512vnni(const tc__kernel_ctx *ctx, const tc__qconv_geom *g);

/* Quantizes one float: round(x / scale) clamped to [-127, 127] (the weights' definition). */
static inline int8_t tc__q_round(float x, float inv_scale) {
    float v = x * inv_scale;
    if (!(v > -127.0f)) v = -127.0f; /* NaN too */
    if (v > 127.0f) v = 127.0f;
    return (int8_t)__builtin_lrintf(v);
}

/* An activation's code: round(x / scale) + z clamped to [lo, hi] (NaN gives lo); what the kernels compute. */
static inline uint8_t tc__q_code_in(float x, float inv_scale, uint8_t z, uint8_t lo, uint8_t hi) {
    float v = __builtin_fmaf(x, inv_scale, (float)z); /* one rounding, as the vector kernels */
    if (!(v > (float)lo)) v = (float)lo;
    if (v > (float)hi) v = (float)hi;
    return (uint8_t)__builtin_lrintf(v);
}
/* The same with codes up to 255. */
static inline uint8_t tc__q_code(float x, float inv_scale, uint8_t z, uint8_t lo) {
    return tc__q_code_in(x, inv_scale, z, lo, 255);
}

#endif
