/*
 * test_cpu_wino_nchw16c.c - the Winograd F(4x4, 3x3) NCHW16c tactic (conv_wino_nchw16c_f32_avx512) on
 * the cases of test_cpu_winograd_nchw8c.c in blocks of 16 (the harness of test_cpu_conv_nchw16c.c: against the
 * reference Conv plus the reference epilogue, 1 thread and a 2-thread pool bit-identical, the scratch announced
 * enough), with its weight packed first as a plan stores it (the transformed filter U, 36 * C_in * C_out floats;
 * every byte written) and supports() refusing a W that is no constant.
 */
#define TC_TEST_BLOCK 16
#define TC_TEST_TACTIC tc__tactic_conv_wino_nchw16c_f32_avx512
#define CV_PACK_TRANSFORMS
#include "test_cpu_winograd_nchw8c.c"
