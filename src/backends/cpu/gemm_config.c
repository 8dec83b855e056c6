/*
 * gemm_config.c - the FP32 GEMM microkernel configurations (tile, ISA) and the choice of the best
 * one for a set of usable ISA bits. Immutable tables only. AVX-512 has two tiles: 14x32, the
 * default, and 8x48, which only the tactics named *_avx512_8x48 use.
 */
#include "backends/cpu/gemm.h"

const tc__gemm_config tc__gemm_config_f32_avx512 = {.name = "gemm_f32_avx512_14x32",
                                                    .isa = TC__GEMM_ISA_AVX512,
                                                    .mr = 14,
                                                    .nr = 32,
                                                    .ukernel = tc__gemm_f32_avx512_14x32};
const tc__gemm_config tc__gemm_config_f32_avx512_8x48 = {.name = "gemm_f32_avx512_8x48",
                                                         .isa = TC__GEMM_ISA_AVX512,
                                                         .mr = 8,
                                                         .nr = 48,
                                                         .ukernel = tc__gemm_f32_avx512_8x48};
const tc__gemm_config tc__gemm_config_f32_avx2 = {
    .name = "gemm_f32_avx2_6x16", .isa = TC__GEMM_ISA_AVX2, .mr = 6, .nr = 16, .ukernel = tc__gemm_f32_avx2_6x16};
const tc__gemm_config tc__gemm_config_f32_scalar = {
    .name = "gemm_f32_scalar_4x8", .isa = 0, .mr = 4, .nr = 8, .ukernel = tc__gemm_f32_scalar_4x8};

const tc__gemm_config *tc__gemm_f32_config(uint64_t isa) {
    static const tc__gemm_config *const kBestFirst[] = {&tc__gemm_config_f32_avx512, &tc__gemm_config_f32_avx2};
    for (size_t i = 0; i < sizeof kBestFirst / sizeof kBestFirst[0]; i++)
        if ((kBestFirst[i]->isa & ~isa) == 0) return kBestFirst[i];
    return &tc__gemm_config_f32_scalar;
}

const tc__gemm_config *tc__gemm_f32_config_auto(void) { return tc__gemm_f32_config(tc__cpu_get()->isa); }
