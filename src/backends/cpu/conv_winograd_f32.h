/*
 * conv_winograd_f32.h - Winograd F(4x4, 3x3) convolution for FP32 NCHW (2-D, 3x3 kernel, stride 1,
 * dilation 1, one group, any pads), shared by the conv_winograd_f32_avx512 tactic and its tests.
 * Per image: input tiles (6x6, stride 4) are transformed into V[36][Cin][tiles] (NR-column GEMM
 * panels), the filter (transformed at run time, in scratch) U[36][Cout][Cin] (MR-row panels),
 * then 36 GEMMs M[e] = U[e] * V[e] on the GEMM operator, then the output transform with the conv
 * bias, the step's residual and activation fused. conv_winograd_f32.c (baseline ISA) holds the
 * checks and sizes, conv_winograd_f32_avx512.c the transforms and run().
 */
#ifndef TC_BACKENDS_CPU_CONV_WINOGRAD_F32_H
#define TC_BACKENDS_CPU_CONV_WINOGRAD_F32_H

#include "backends/cpu/gemm_tactics.h"

/* The largest GEMM microkernel row count (MR) the filter transform takes. */
#define TC__WINO_MAX_MR 16

/* The geometry of a run (conv_winograd_f32.c). */
typedef struct tc__wino_geom {
    size_t batch, cin, cout, ih, iw, oh, ow, pad_t, pad_l, th, tw, tiles; /* tiles = th * tw per image */
} tc__wino_geom;

/* Fills g from the attributes and shapes; false when the Conv is not one this family computes. */
bool tc__conv_winograd_f32_geometry(const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *wt,
                                    const tc__tensor *y, tc__wino_geom *g);
/* Floats of the U, V and M buffers of a run (one image at a time). */
size_t tc__conv_winograd_f32_buffer_floats(const tc__wino_geom *g);
/* The GEMM problem of the 36 products (pointers unset); shared by scratch sizing and run. */
tc__gemm_f32_problem tc__conv_winograd_f32_problem(const tc__wino_geom *g);

/* True when the step is a Conv this family computes (see above) with a fusable epilogue. */
bool tc__conv_winograd_f32_supports(const tc__step_desc *d);
/* Scratch bytes of a run at these shapes with microkernel cfg. */
size_t tc__conv_winograd_f32_scratch_bytes(const tc__step_desc *d, const tc__gemm_config *cfg);
/* Runs the step (ctx->in: X, W as ONNX [Cout, Cin, 3, 3], optional B). */
tc_status tc__conv_winograd_f32_run(const tc__kernel_ctx *ctx, const tc__gemm_config *cfg);

#endif
