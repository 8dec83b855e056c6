/*
 * im2col_f32.h - builds tiles of the im2col matrix of a convolution input directly in the GEMM's
 * packed B-panel layout, one tile at a time (never the whole matrix). For group g of image n, row
 * k = (c, kd, kh, kw) and column j = (od, oh, ow) hold x[n, g * cin_g + c, od * sd - pd + kd * dd,
 * oh * sh - ph + kh * dh, ow * sw - pw + kw * dw], or 0 in the padding. 1-D and 2-D convolutions
 * are 3-D ones with leading spatial dims of 1.
 */
#ifndef TC_BACKENDS_CPU_IM2COL_F32_H
#define TC_BACKENDS_CPU_IM2COL_F32_H

#include <stddef.h>
#include <stdint.h>

typedef struct tc__im2col_f32 {
    const float *x;          /* [N, C, in...] */
    size_t channels, groups; /* C and the group count; cin_g = C / groups */
    int64_t in[3], out[3], kernel[3], stride[3], dilation[3], pad[3];
} tc__im2col_f32;

/* tc__gemm_pack_b_fn implementations: ctx is a tc__im2col_f32, batch = n * groups + g. The AVX-512
 * one needs TC__GEMM_ISA_AVX512. */
void tc__im2col_f32_pack(const void *ctx, size_t batch, size_t k0, size_t kc, size_t j0, size_t nc, size_t nr,
                         float *dst);
void tc__im2col_f32_pack_avx512(const void *ctx, size_t batch, size_t k0, size_t kc, size_t j0, size_t nc, size_t nr,
                                float *dst);

#endif
