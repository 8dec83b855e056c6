/*
 * row16.h - how a CUDA step reads the FP16 row-image attributes of engine/row16_chain.c (core/quant_attr.h): which of
 * its inputs are FP16 images and whether it writes its output as one. Host side, plain C.
 */
#ifndef TC_BACKENDS_CUDA_ROW16_H
#define TC_BACKENDS_CUDA_ROW16_H

#include <stdbool.h>
#include <stdint.h>

#include "core/attr.h"
#include "core/quant_attr.h"

/* True when input i of a step with attributes a is an FP16 row image. */
static inline bool tc__row16_in(const tc__attrs *a, int i) {
    return i >= 0 && i < 32 && ((uint64_t)tc__attr_int(a, TC__ATTR_ROW16_IN, 0) >> i & 1u);
}

/* True when the step writes output 0 as an FP16 row image. */
static inline bool tc__row16_out(const tc__attrs *a) { return tc__attr_int(a, TC__ATTR_ROW16_OUT, 0) == 1; }

/* True when the row16 attributes of a are well formed and name no input outside allowed_mask (bit i: input i may be
 * an image) and an output image only when out_ok. */
static inline bool tc__row16_ok(const tc__attrs *a, uint32_t allowed_mask, bool out_ok) {
    const int64_t in = tc__attr_int(a, TC__ATTR_ROW16_IN, 0), out = tc__attr_int(a, TC__ATTR_ROW16_OUT, 0);
    if (in < 0 || in > (int64_t)UINT32_MAX || ((uint64_t)in & ~(uint64_t)allowed_mask) != 0) return false;
    return out == 0 || (out == 1 && out_ok);
}

#endif
