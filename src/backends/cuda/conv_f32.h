/*
 * conv_f32.h - the FP32 2-D convolution kernels of the cuda_conv_f32 tactic (conv_f32.cu): an implicit-GEMM tiled
 * kernel (output channels x output pixels of all images, per group) and a direct kernel (one thread per output, for
 * depthwise and narrow grouped convolutions), both in exact FP32 FMA arithmetic, with the conv bias and the fused
 * epilogue (residual, activation) applied on the way out.
 */
#ifndef TC_BACKENDS_CUDA_CONV_F32_H
#define TC_BACKENDS_CUDA_CONV_F32_H

#include "backends/cuda/cnn_epi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Y[n, m, oh, ow] = b[m] + sum over c < cin_g, kh, kw of W[m, c, kh, kw] * X[n, g * cin_g + c, ih, iw] with
 * g = m / (m_out / group), ih = oh * sh - ph + kh * dh, iw = ow * sw - pw + kw * dw (zero outside X); then the
 * epilogue. Sizes in elements; every tensor NCHW and dense. */
typedef struct tc__cuda_conv2d {
    const float *x, *w, *b; /* b: m_out conv biases or NULL */
    float *y;
    int64_t n, c, h, w_in, m, oh, ow;
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
    int64_t group;
    tc__cuda_epi epi;
} tc__cuda_conv2d;

/* Whether the kernels take these sizes (products of sizes that their 32-bit index math needs within 2^31). */
bool tc__cuda_conv2d_f32_fits(const tc__cuda_conv2d *p);

/* Launches the convolution on stream s (nothing when Y is empty); returns the launch's error. */
cudaError_t tc__cuda_conv2d_f32(const tc__cuda_conv2d *p, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
