/* compare_stats.h - one output's agreement statistics of two runs (the library's tc_compare_stats) with its name,
 * dtype and shape; used by `tailcut compare` (outputs and --per-layer) and by the INT8 accuracy threshold of `tailcut build`. */
#ifndef TC_CLI_COMPARE_STATS_H
#define TC_CLI_COMPARE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tailcut/tailcut.h"

/* What was measured for one graph output over all samples: its description and the library's figures. */
typedef struct out_stats {
    const char *name; /* belongs to side A */
    tc_dtype dtype;
    int32_t rank;
    int64_t dims[TC_MAX_RANK]; /* of the first sample */
    bool seen, shape_varies;   /* seen: a sample was added */
    tc_compare_stats s;        /* s.values_only: no top-1/top-5 rows (per-layer statistics of intermediate tensors) */
} out_stats;

/* True for the floating-point dtypes (compared by the statistics; others element by element). */
static inline bool cli_is_float(tc_dtype t) {
    return t == TC_DTYPE_FLOAT32 || t == TC_DTYPE_FLOAT64 || t == TC_DTYPE_FLOAT16 || t == TC_DTYPE_BFLOAT16;
}

#endif
