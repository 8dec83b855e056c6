/*
 * vbinary_nchw16c_f32_avx512.c - the AVX-512 Add / Sub / Mul / Div microkernel on NCHW16c
 * (blocked_f32.h): the body vbinary_nchwc_f32_kernel.h with 16-lane vectors.
 */
#include "backends/cpu/blocked_vec_avx512.h"

#define VBIN_RUN tc__vbinary_nchw16c_f32_avx512

#include "backends/cpu/vbinary_nchwc_f32_kernel.h"
