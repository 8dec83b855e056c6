/* stats.c - latency statistics for `tailcut bench`: nearest-rank percentiles, mean, spread.
 * Uses no libm (the CLI links only libtailcut). */
#include "stats.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cli_percentile_sorted(const double *sorted, size_t n, unsigned per10k) {
    if (n == 0) return 0.0;
    if (per10k > 10000) per10k = 10000;
    size_t rank = (size_t)(((unsigned long long)per10k * n + 9999ull) / 10000ull);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return sorted[rank - 1];
}

/* Square root by Newton's method (x >= 0); converges in a few dozen steps for any double. */
static double sqrt_newton(double x) {
    if (!(x > 0.0)) return 0.0;
    double r = x > 1.0 ? x : 1.0;
    for (int k = 0; k < 200; k++) {
        double next = 0.5 * (r + x / r);
        if (next >= r) break; /* monotone decreasing from above until it settles */
        r = next;
    }
    return r;
}

int cli_stats_compute(double *samples, size_t n, cli_stats *out) {
    memset(out, 0, sizeof *out);
    if (n == 0) return -1;
    qsort(samples, n, sizeof *samples, cmp_double);
    double sum = 0.0;
    for (size_t k = 0; k < n; k++) sum += samples[k];
    double mean = sum / (double)n, ss = 0.0;
    for (size_t k = 0; k < n; k++) ss += (samples[k] - mean) * (samples[k] - mean);
    out->n = n;
    out->mean = mean;
    out->min = samples[0];
    out->max = samples[n - 1];
    out->p50 = cli_percentile_sorted(samples, n, 5000);
    out->p90 = cli_percentile_sorted(samples, n, 9000);
    out->p99 = cli_percentile_sorted(samples, n, 9900);
    out->p999 = cli_percentile_sorted(samples, n, 9990);
    out->stddev = n > 1 ? sqrt_newton(ss / (double)(n - 1)) : 0.0;
    out->cv = mean > 0.0 ? out->stddev / mean : 0.0;
    return 0;
}
