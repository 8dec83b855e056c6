/*
 * igemm_conv_fp16.h - our own implicit-GEMM FP16 convolution on Tensor Cores (igemm_conv_fp16.cu): FP16 NHWC image,
 * FP16 KRSC filter (as cuda_conv_fp16_cudnn packs it), FP32 accumulation, optional FP16 bias and FP16 NHWC residual,
 * optional ReLU, FP16 NHWC output saturated to +-65504. The GEMM: M = n*oh*ow output pixels, N = k, K = r*s*c in
 * (r, s, c) order. A few tile configurations (ids, stable: a plan file may name one) and a split-K one whose FP32
 * partials go to a workspace and are summed in a fixed order by a second kernel (deterministic).
 */
#ifndef TC_BACKENDS_CUDA_IGEMM_CONV_FP16_H
#define TC_BACKENDS_CUDA_IGEMM_CONV_FP16_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The largest size, pad, stride or dilation ok() takes (keeps every coordinate in 32 bits). */
#define TC__IGEMM_MAX_DIM (1 << 24)
/* Configuration ids are 0 .. TC__IGEMM_NUM_CONFIGS - 1. */
#define TC__IGEMM_NUM_CONFIGS 4

typedef struct tc__igemm_conv {
    const void *x;    /* FP16 NHWC [n][h][w][c] */
    const void *wt;   /* FP16 [k][r][s][c] (KRSC, as cuda_conv_fp16_cudnn packs it); named wt: w is the width */
    const void *bias; /* FP16 [k] or NULL */
    const void *res;  /* FP16 NHWC [n][oh][ow][k] or NULL: added after the bias, before the activation */
    void *y;          /* FP16 NHWC [n][oh][ow][k]; must not overlap x or res (run() refuses) */
    int32_t n, c, h, w, k, r, s, oh, ow, ph, pw, sh, sw, dh, dw; /* symmetric pads ph/pw, one group */
    int relu;                                                     /* 1: max(0, .) (NaN stays NaN) */
    void *workspace; /* split-K partials (FP32, 16-byte aligned), see tc__igemm_conv_workspace */
    size_t workspace_bytes;
} tc__igemm_conv;

/* Whether the kernel computes p at all: every size >= 1, pads >= 0, strides and dilations >= 1, all <=
 * TC__IGEMM_MAX_DIM; c % 8 == 0, k % 8 == 0; oh, ow the convolution's output sizes; the element counts of x, w and y
 * below 2^31; k / 64 tiles within the grid; every non-NULL pointer 16-byte aligned. Pointers may be NULL here (build
 * time): run() needs x, wt and y. */
bool tc__igemm_conv_ok(const tc__igemm_conv *p);
/* The configuration ids worth timing for p, best guess first (at most cap, at most 4), 0 when !ok. */
int tc__igemm_conv_configs(const tc__igemm_conv *p, uint8_t *ids, int cap);
/* Whether id is a configuration id at all (for validating one read from a plan file). */
bool tc__igemm_conv_id_valid(uint8_t id);
/* Workspace bytes config id needs for p: 0 without split-K, for the split-K id where p gets one split only (then it
 * runs as its plain tile), or when !ok or the id is invalid. */
size_t tc__igemm_conv_workspace(const tc__igemm_conv *p, uint8_t id);
/* The most workspace any id needs for p, so scratch can be sized before the id is known. */
size_t tc__igemm_conv_workspace_max(const tc__igemm_conv *p);
/* Enqueues the convolution on s (no allocation, no sync: it may be captured into a CUDA graph). The first call per
 * configuration sets its kernel's dynamic shared memory limit (cudaFuncSetAttribute; make it outside a capture).
 * cudaErrorInvalidValue, launching nothing, when !ok, x, wt or y is NULL, y overlaps x or res, id is invalid or the
 * workspace is too small, NULL or misaligned. */
cudaError_t tc__igemm_conv_run(const tc__igemm_conv *p, uint8_t id, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
