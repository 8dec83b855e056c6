/*
 * dwconv_nchw8c_f32_avx2.c - the AVX2 depthwise convolution microkernel on NCHW8c
 * (blocked_f32.h): the body dwconv_nchwc_f32_kernel.h with 8-lane vectors.
 */
#include "backends/cpu/blocked_vec_avx2.h"

#define DW_ROWS tc__dwconv_nchw8c_f32_rows_avx2

#include "backends/cpu/dwconv_nchwc_f32_kernel.h"
