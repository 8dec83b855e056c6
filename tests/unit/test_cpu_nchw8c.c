/*
 * test_cpu_nchw8c.c - the AVX2 tactics that read and write NCHW8c activations (reorder, MaxPool /
 * AveragePool, GlobalAveragePool, depthwise Conv, Add / Sub / Mul / Div) against the reference
 * kernels: the cases of test_cpu_nchw16c.c, compiled with blocks of 8 channels (and C 8, 24, 40).
 */
#define TC_TEST_BLOCK 8
#include "test_cpu_nchw16c.c"
