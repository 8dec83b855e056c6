/* stats.h - latency statistics for `tailcut bench`: nearest-rank percentiles, mean, spread. */
#ifndef TC_CLI_STATS_H
#define TC_CLI_STATS_H

#include <stddef.h>

typedef struct cli_stats {
    size_t n;                   /* number of samples */
    double p50, p90, p99, p999; /* nearest-rank percentiles */
    double mean, min, max;
    double stddev; /* sample standard deviation (n - 1); 0 when n < 2 */
    double cv;     /* coefficient of variation, stddev / mean; 0 when the mean is 0 */
} cli_stats;

/* Nearest-rank percentile of n >= 1 samples sorted ascending, the percentile given in
 * hundredths of a percent (9990 = P99.9): the value at rank ceil(per10k * n / 10000),
 * ranks counted from 1. Integer arithmetic, so P99 of 1000 samples is exactly rank 990. */
double cli_percentile_sorted(const double *sorted, size_t n, unsigned per10k);

/* Sorts samples[0..n-1] ascending in place and fills *out. Returns 0, or -1 when n == 0. */
int cli_stats_compute(double *samples, size_t n, cli_stats *out);

#endif
