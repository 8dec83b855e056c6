/*
 * vbinary_nchw8c_f32_avx2.c - the AVX2 Add / Sub / Mul / Div microkernel on NCHW8c
 * (blocked_f32.h): the body vbinary_nchwc_f32_kernel.h with 8-lane vectors.
 */
#include "backends/cpu/blocked_vec_avx2.h"

#define VBIN_RUN tc__vbinary_nchw8c_f32_avx2

#include "backends/cpu/vbinary_nchwc_f32_kernel.h"
