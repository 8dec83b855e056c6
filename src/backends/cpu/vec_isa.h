/*
 * vec_isa.h - the TC__ISA_* bit sets the CPU backend's vectorized float32 tactics require:
 * AVX2 with FMA, and AVX-512 (F, BW, VL, DQ) on top of it.
 */
#ifndef TC_BACKENDS_CPU_VEC_ISA_H
#define TC_BACKENDS_CPU_VEC_ISA_H

#include <stdint.h>

#include "core/cpu.h"

#define TC__VEC_ISA_AVX2 ((uint64_t)(TC__ISA_AVX | TC__ISA_AVX2 | TC__ISA_FMA))
#define TC__VEC_ISA_AVX512 \
    (TC__VEC_ISA_AVX2 | (uint64_t)(TC__ISA_AVX512F | TC__ISA_AVX512BW | TC__ISA_AVX512VL | TC__ISA_AVX512DQ))

#endif
