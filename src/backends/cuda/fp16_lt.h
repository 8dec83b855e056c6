/*
 * fp16_lt.h - the small kernels around the cuBLASLt FP16 GEMMs of the cuda_*_fp16_lt tactics (fp16_lt.cu): FP32
 * activations cast to FP16 rows, an im2col writing FP16 columns, the combination of two bias vectors, and the FP32
 * epilogue pass over an output that cuBLASLt's own epilogue could not finish. All launch on the given stream and
 * return the launch's error; nothing is launched for empty sizes.
 */
#ifndef TC_BACKENDS_CUDA_FP16_LT_H
#define TC_BACKENDS_CUDA_FP16_LT_H

#include <stdbool.h>

#include "backends/cuda/cuda_exec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dst[r * dst_ld + c] = fp16(src[r * src_ld + c]) for r < rows, c < cols (finite values beyond the FP16 range
 * saturate to +-65504; NaN and infinities stay); dst's columns cols..dst_ld-1 are left as they are. */
cudaError_t tc__lt_cast_rows(const float *src, int64_t rows, int64_t cols, int64_t src_ld, void *dst, int64_t dst_ld,
                             cudaStream_t s);

/* The FP16 columns of a 2-D convolution, per image: col[(b * K + k) * ld + p] for k = (ci * kh + i) * kw + j < K =
 * c * kh * kw and p = oy * ow + ox < oh * ow: X[b, ci, oy * sh - ph + i * dh, ox * sw - pw + j * dw], 0 outside X.
 * Columns oh * ow .. ld - 1 are left as they are. */
typedef struct tc__lt_im2col {
    const float *x;
    void *col;
    int64_t n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
    int64_t ld;
} tc__lt_im2col;
cudaError_t tc__lt_im2col_f16(const tc__lt_im2col *p, cudaStream_t s);

/* out[j] = (c ? beta * c[j * c_stride] : 0) + (bias ? bias[j] : 0) for j < n (c_stride 0: a broadcast scalar). */
cudaError_t tc__lt_bias_combine(const float *c, int64_t c_stride, float beta, const float *bias, int64_t n, float *out,
                                cudaStream_t s);

/* y[i] = act(y[i] + chan_bias[(i / inner) % channels] + last_bias[i % last_len] + residual[i]) for i < total (the
 * operands that are non-NULL); y and residual are FP32, or FP16 (row images, engine/row16_chain.c) where y16 / res16. */
typedef struct tc__lt_epi {
    void *y;
    int64_t total;
    const float *chan_bias;
    int64_t inner, channels;
    const float *last_bias;
    int64_t last_len;
    const void *residual;
    tc__cuda_act act;
    bool y16, res16;
} tc__lt_epi;
cudaError_t tc__lt_epilogue(const tc__lt_epi *p, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
