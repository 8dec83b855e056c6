/*
 * test_cpu_conv_nchw8c.c - the direct NCHW8c convolution tactic (conv_nchw8c_f32_avx2) against the
 * reference Conv plus epilogue: the cases of test_cpu_conv_nchw16c.c, compiled with blocks of 8 channels.
 */
#define TC_TEST_BLOCK 8
#include "test_cpu_conv_nchw16c.c"
