/*
 * conv_nchw8c_f32_avx2.c - the AVX2 direct convolution on NCHW8c (conv_nchw16c_f32.h): the
 * blocked convolution body conv_nchwc_f32_kernel.h with ymm vectors of 8 floats, 12 accumulators (12 pixels x 1 block, 6 x 2 or 3 x 4).
 */
#include "backends/cpu/blocked_vec_avx2.h"

#define CV_RUN tc__conv_nchw8c_f32_run_avx2

#include "backends/cpu/conv_nchwc_f32_kernel.h"
