/*
 * lrn_params.h - the attributes of LRN (size, alpha, beta, bias), read and
 * validated once for shape inference and the kernels.
 */
#ifndef TC_CORE_LRN_PARAMS_H
#define TC_CORE_LRN_PARAMS_H

#include "core/attr.h"
#include "core/error.h"

typedef struct tc__lrn_params {
    int64_t size;         /* channels in the window, >= 1 */
    int64_t before, after; /* floor((size - 1) / 2) channels before c, ceil((size - 1) / 2) after */
    double alpha, beta, bias;
} tc__lrn_params;

/* Reads and checks the attributes; fails naming the attribute (size is required, the floats must be finite). */
tc_status tc__lrn_params_read(const tc__attrs *attrs, tc__lrn_params *p, tc__err *err);

#endif
