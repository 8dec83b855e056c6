/* compare_stats.h - agreement statistics of two runs' outputs (cosine similarity, absolute and relative
 * errors, SQNR, top-1 / top-5 agreement over the last dim, NaN mismatches), accumulated sample by sample;
 * used by `tailcut compare` (outputs and --per-layer) and by the INT8 accuracy threshold of `tailcut build`. */
#ifndef TC_CLI_COMPARE_STATS_H
#define TC_CLI_COMPARE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tailcut/tailcut.h"

#define REL_FLOOR 1e-6 /* denominator floor of the relative error */

/* What was measured for one graph output over all samples. */
typedef struct out_stats {
    const char *name; /* belongs to side A */
    tc_dtype dtype;
    int32_t rank;
    int64_t dims[TC_MAX_RANK]; /* of the first sample */
    bool seen, shape_varies;   /* seen: a sample was added */
    bool exact;                /* not a float type: compared element by element */
    bool values_only;          /* no top-1/top-5 rows (per-layer statistics of intermediate tensors) */
    uint64_t elements, finite, mismatches, nan_mismatches;
    double dot, sum_a2, sum_b2, sum_d2, sum_abs, max_abs, max_rel;
    uint64_t rows, top1, rows5, top5;
} out_stats;

/* True for the floating-point dtypes (compared by the statistics; others element by element). */
bool cli_is_float(tc_dtype t);
/* Adds one sample's pair of outputs (same dtype and shape, n elements; st->exact set by the caller) to st. */
void cli_stats_add(out_stats *st, const tc_tensor *ta, const tc_tensor *tb, size_t n);
/* sum(a*b) / sqrt(sum(a*a) * sum(b*b)) over the finite pairs (1 when both are all zero). */
double cli_stats_cosine(const out_stats *st);
/* ||a - b|| / ||a||. */
double cli_stats_rel_l2(const out_stats *st);
/* Signal-to-quantization-noise ratio of b against the reference a, in dB, over the finite pairs:
 * 10 * log10(sum(a*a) / sum((a - b)^2)); +inf when b equals a, -inf when a is all zero and b is not. */
double cli_stats_sqnr_db(const out_stats *st);

#endif
