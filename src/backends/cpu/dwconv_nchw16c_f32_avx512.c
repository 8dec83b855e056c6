/*
 * dwconv_nchw16c_f32_avx512.c - the AVX-512 depthwise convolution microkernel on NCHW16c
 * (blocked_f32.h): the body dwconv_nchwc_f32_kernel.h with 16-lane vectors.
 */
#include "backends/cpu/blocked_vec_avx512.h"

#define DW_ROWS tc__dwconv_nchw16c_f32_rows_avx512

#include "backends/cpu/dwconv_nchwc_f32_kernel.h"
