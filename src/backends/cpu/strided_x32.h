/*
 * strided_x32.h - shared geometry for data-movement tactics on 4-byte elements: an output walk
 * with per-input element strides (0 on broadcast dims), so Transpose and Where run as tight
 * loops over the output's last dim instead of per-element index arithmetic.
 */
#ifndef TC_BACKENDS_CPU_STRIDED_X32_H
#define TC_BACKENDS_CPU_STRIDED_X32_H

#include <stdbool.h>
#include <stdint.h>

#include "core/tensor.h"

/* Strides (in elements) of tensor t seen through NumPy broadcasting to an output of rank r. */
static inline bool tc__bcast_strides(const tc__tensor *t, int32_t r, const int64_t *out_dims, int64_t *strides) {
    if (t->rank > r) return false;
    int64_t s = 1;
    for (int32_t i = r - 1; i >= 0; i--) {
        int32_t ti = i - (r - t->rank);
        if (ti < 0) {
            strides[i] = 0;
            continue;
        }
        if (t->dims[ti] != out_dims[i] && t->dims[ti] != 1) return false;
        strides[i] = t->dims[ti] == 1 ? 0 : s;
        s *= t->dims[ti];
    }
    return true;
}

#endif
