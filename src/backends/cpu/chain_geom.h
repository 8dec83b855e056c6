/*
 * chain_geom.h - the reduced-precision chain's view of the CPU's INT8 and 16-bit layers (tc__tactic.chain_geometry,
 * backends/tactic.h): their geometry (qconv_u8s8.h, hconv.h, qimage.h) in the backend-neutral tc__chain_geom, so that
 * the engine's chain pass reads it without including this backend's headers.
 */
#ifndef TC_BACKENDS_CPU_CHAIN_GEOM_H
#define TC_BACKENDS_CPU_CHAIN_GEOM_H

#include "backends/tactic.h"

/* An INT8 Conv (dense or depthwise), MatMul or Gemm (tc__qconv_geometry). */
bool tc__qconv_chain_geometry(const tc__step_desc *d, tc__chain_geom *g);
/* An FP16 / BF16 Conv, MatMul or Gemm (tc__hconv_geometry). */
bool tc__hconv_chain_geometry_fp16(const tc__step_desc *d, tc__chain_geom *g);
bool tc__hconv_chain_geometry_bf16(const tc__step_desc *d, tc__chain_geom *g);
/* A per-channel Mul that may write its readers' INT8 image (tc__qimage_mul_shape): its output as the layer's. */
bool tc__qimage_chain_geometry(const tc__step_desc *d, tc__chain_geom *g);

#endif
