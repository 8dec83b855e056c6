/*
 * conv_winograd_f32.h - Winograd F(4x4, 3x3) convolution for FP32 NCHW (2-D, 3x3 kernel, stride 1,
 * dilation 1, one group, any pads), shared by the conv_winograd_f32_avx512 tactic and its tests.
 * Per image: input tiles (6x6, stride 4) are transformed into V[36][Cin][tiles] (NR-column GEMM
 * panels), the filter (transformed at run time, in scratch) U[36][Cout][Cin] (MR-row panels),
 * then 36 GEMMs M[e] = U[e] * V[e] on the GEMM operator, then the output transform with the conv
 * bias, the step's residual and activation fused. conv_winograd_f32.c (baseline ISA) holds the
 * checks and sizes, conv_winograd_f32_avx512.c the transforms and run(); the 1-D transforms are
 * conv_winograd_f32_transform.h, shared with the blocked (NCHW8c, NCHW16c) forms of the family (end of
 * this file).
 */
#ifndef TC_BACKENDS_CPU_CONV_WINOGRAD_F32_H
#define TC_BACKENDS_CPU_CONV_WINOGRAD_F32_H

#include "core/thread_pool.h"

#include "backends/cpu/gemm_tactics.h"

/* The largest GEMM microkernel row count (MR) the filter transform takes. */
#define TC__WINO_MAX_MR 16

/* Offset of A(i, p) in the MR-row panel layout of an m x k matrix (tc__gemm_pack_a_f32). */
static inline size_t tc__wino_pack_a_off(size_t i, size_t p, size_t m, size_t k, size_t mr) {
    const size_t r0 = i / mr * mr, h = m - r0 < mr ? m - r0 : mr;
    return r0 * k + p * h + (i - r0);
}

/* Offset of B(p, j) in the NR-column panel layout of a k x n matrix (tc__gemm_pack_b_f32). */
static inline size_t tc__wino_pack_b_off(size_t p, size_t j, size_t k, size_t n, size_t nr) {
    const size_t q0 = j / nr * nr, w = n - q0 < nr ? n - q0 : nr;
    return q0 * k + p * w + (j - q0);
}

/* fn(job, i) for i in [0, n): on the pool, or on the calling thread when pool is NULL. */
static inline void tc__wino_parallel(tc__pool_t pool, tc__pool_task_1d_t fn, void *job, size_t n) {
    if (pool == NULL) {
        for (size_t i = 0; i < n; i++)
            fn(job, i);
    } else {
        tc__pool_parallelize_1d(pool, fn, job, n, 0);
    }
}

/* The geometry of a run (conv_winograd_f32.c). */
typedef struct tc__wino_geom {
    size_t batch, cin, cout, ih, iw, oh, ow, pad_t, pad_l, th, tw, tiles; /* tiles = th * tw per image */
} tc__wino_geom;

/* Fills g from the attributes and shapes; false when the Conv is not one this family computes. */
bool tc__conv_winograd_f32_geometry(const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *wt,
                                    const tc__tensor *y, tc__wino_geom *g);
/* Floats of the U, V and M buffers of an NCHW run (one image at a time). */
size_t tc__conv_winograd_f32_buffer_floats(const tc__wino_geom *g);
/*
 * The GEMM problem of the 36 products (pointers unset); shared by scratch sizing and run. NCHW:
 * M[e] (Cout x tiles) = U[e] (MR-row panels) * V[e] (NR-column panels). Blocked layouts: M[e]
 * (tiles x Cout, row-major) = V[e] (tiles x Cin, row-major: a tile's channels are contiguous, as in
 * the blocked image) * U[e] (Cin x Cout in NR-column panels).
 */
tc__gemm_f32_problem tc__conv_winograd_f32_problem(const tc__wino_geom *g);
tc__gemm_f32_problem tc__conv_winograd_nchwc_f32_problem(const tc__wino_geom *g);

/* True when the step is a Conv this family computes (see above) with a fusable epilogue. */
bool tc__conv_winograd_f32_supports(const tc__step_desc *d);
/* Scratch bytes of a run at these shapes with microkernel cfg. */
size_t tc__conv_winograd_f32_scratch_bytes(const tc__step_desc *d, const tc__gemm_config *cfg);
/* Runs the step (ctx->in: X, W as ONNX [Cout, Cin, 3, 3], optional B). */
tc_status tc__conv_winograd_f32_run(const tc__kernel_ctx *ctx, const tc__gemm_config *cfg);

/*
 * The same family on blocked layouts (conv_winograd_nchwc_f32_tactic.c): X, Y and the fused residual blocked in
 * BV_L channels (C_in and C_out multiples of it), the transforms' lanes being the channels of a pixel; the
 * epilogue is any activation tc__vact fuses. supports() also checks the layout attributes.
 * conv_winograd_nchw8c_f32_avx2: NCHW8c, the AVX2 6x16 GEMM microkernel, the filter transformed in scratch at run
 * time. conv_wino_nchw16c_f32_avx512: NCHW16c, the AVX-512 14x32 microkernel, the filter packed at build
 * (tc__conv_winograd_nchw16c_f32_pack_avx512: U[e] for e = 0..35, each C_in x C_out in NR-column panels, 36 *
 * C_in * C_out floats).
 */
size_t tc__conv_winograd_nchwc_f32_u_floats(const tc__wino_geom *g);  /* U: 36 * C_in * C_out */
size_t tc__conv_winograd_nchwc_f32_vm_floats(const tc__wino_geom *g); /* V and M of one image */
bool tc__conv_winograd_nchw8c_f32_supports(const tc__step_desc *d);
size_t tc__conv_winograd_nchw8c_f32_scratch_bytes(const tc__step_desc *d);
tc_status tc__conv_winograd_nchw8c_f32_run_avx2(const tc__kernel_ctx *ctx);
bool tc__conv_winograd_nchw16c_f32_supports(const tc__step_desc *d);
/* Floats of one thread's V and M buffers in the NCHW16c run (36 * MR * (C_in + C_out)). */
size_t tc__conv_wino_nchw16c_f32_buffer_floats(const tc__wino_geom *g);
void tc__conv_winograd_nchw16c_f32_pack_avx512(const tc__wino_geom *g, const float *w, float *u, size_t nr);
tc_status tc__conv_winograd_nchw16c_f32_run_avx512(const tc__kernel_ctx *ctx);

#endif
