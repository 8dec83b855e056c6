/*
 * conv_nchw16c_f32_avx512.c - the AVX-512 direct convolution on NCHW16c (conv_nchw16c_f32.h): the
 * blocked convolution body conv_nchwc_f32_kernel.h with zmm vectors of 16 floats, 28 accumulators (14 pixels x 2 blocks or 7 x 4).
 */
#include "backends/cpu/blocked_vec_avx512.h"

#define CV_RUN tc__conv_nchw16c_f32_run_avx512

#include "backends/cpu/conv_nchwc_f32_kernel.h"
