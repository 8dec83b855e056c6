/*
 * blocked_kernels.c - the tables of blocked-layout microkernels (blocked_f32.h) per block size:
 * NCHW16c runs the AVX-512 ones, NCHW8c the AVX2 ones. The tactics' drivers take the table of the
 * step's tc.layout_block, so one driver serves both layouts.
 */
#include "backends/cpu/blocked_f32.h"

static const tc__blk_kernels kBlock16 = {
    .block = 16,
    .reorder_to_nchw = tc__reorder_nchw16c_to_nchw_avx512,
    .maxpool_rows = tc__maxpool_nchw16c_f32_rows_avx512,
    .avgpool_rows = tc__avgpool_nchw16c_f32_rows_avx512,
    .gavgpool = tc__gavgpool_nchw16c_f32_avx512,
    .dwconv_rows = tc__dwconv_nchw16c_f32_rows_avx512,
    .vbinary = tc__vbinary_nchw16c_f32_avx512,
};

static const tc__blk_kernels kBlock8 = {
    .block = 8,
    .reorder_to_nchw = tc__reorder_nchw8c_to_nchw_avx2,
    .maxpool_rows = tc__maxpool_nchw8c_f32_rows_avx2,
    .avgpool_rows = tc__avgpool_nchw8c_f32_rows_avx2,
    .gavgpool = tc__gavgpool_nchw8c_f32_avx2,
    .dwconv_rows = tc__dwconv_nchw8c_f32_rows_avx2,
    .vbinary = tc__vbinary_nchw8c_f32_avx2,
};

const tc__blk_kernels *tc__blk_kernels_for(int64_t block) {
    return block == 16 ? &kBlock16 : block == 8 ? &kBlock8 : NULL;
}
