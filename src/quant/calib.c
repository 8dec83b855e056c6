/*
 * calib.c - INT8 calibration histograms and the three ways of choosing amax from them
 * (minmax, percentile, entropy). See calib.h for the contract.
 *
 * The histogram counts |x| in nbins equal bins over [0, range). range starts as the first nonzero
 * batch's largest |x| and only ever grows by an integer factor k, merging k old bins into one new
 * bin, so a histogram built batch by batch equals, bin for bin, one built in one pass at the final
 * range. (pytorch-quantization and onnxruntime instead keep the bin width and append bins, which
 * is exact too but lets one far outlier grow the histogram without bound.)
 */
#include "quant/calib.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct tc__calib_hist {
    size_t nbins;
    uint64_t *bins;
    double range; /* 0 until a nonzero finite value is seen */
    uint64_t count, nan_count, inf_count, zero_count;
    float min, max, max_abs;
};

static const char *const method_names[TC__CALIB_METHOD_COUNT] = {
#define TC__CALIB_METHOD_NAME_(name, text) text,
    TC__CALIB_METHOD_MAP(TC__CALIB_METHOD_NAME_)
#undef TC__CALIB_METHOD_NAME_
};

const char *tc__calib_method_name(tc__calib_method method) {
    if ((unsigned)method >= TC__CALIB_METHOD_COUNT) return "unknown";
    return method_names[method];
}

tc_status tc__calib_method_parse(const char *text, tc__calib_method *method, tc__err *err) {
    if (text == NULL || method == NULL) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "calibration method: NULL");
    for (int m = 0; m < TC__CALIB_METHOD_COUNT; m++)
        if (strcmp(text, method_names[m]) == 0) {
            *method = (tc__calib_method)m;
            return TC_STATUS_OK;
        }
    return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                    "unknown calibration method '%.64s' (expected entropy, minmax or percentile)", text);
}

tc_status tc__calib_hist_create(size_t nbins, tc__calib_hist **hist, tc__err *err) {
    if (hist == NULL) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "calibration histogram: NULL output");
    if (nbins < TC__CALIB_MIN_BINS || nbins > TC__CALIB_MAX_BINS)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "calibration histogram: %zu bins (expected %d to %u)", nbins,
                        TC__CALIB_MIN_BINS, TC__CALIB_MAX_BINS);
    tc__calib_hist *h = calloc(1, sizeof *h);
    uint64_t *bins = calloc(nbins + 1, sizeof *bins); /* + the spare bin of bin_batch */
    if (h == NULL || bins == NULL) {
        free(h);
        free(bins);
        return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory for a %zu-bin calibration histogram", nbins);
    }
    h->nbins = nbins;
    h->bins = bins;
    *hist = h;
    return TC_STATUS_OK;
}

void tc__calib_hist_destroy(tc__calib_hist *hist) {
    if (hist == NULL) return;
    free(hist->bins);
    free(hist);
}

/* Widens the range by an integer factor so that it covers max_abs, merging bins exactly. */
static void grow_range(tc__calib_hist *h, double max_abs) {
    double k = ceil(max_abs / h->range);
    while (k * h->range < max_abs) k += 1.0; /* guard against rounding in the division */
    if (k >= (double)h->nbins) {
        /* Every old bin lies inside the new first bin. */
        uint64_t all = 0;
        for (size_t j = 0; j < h->nbins; j++) all += h->bins[j];
        memset(h->bins, 0, h->nbins * sizeof *h->bins);
        h->bins[0] = all;
    } else {
        size_t kk = (size_t)k, nnew = (h->nbins + kk - 1) / kk;
        /* In place: new bin j reads old bins [j*k, j*k+k), all at or after j. */
        for (size_t j = 0; j < nnew; j++) {
            uint64_t s = 0;
            for (size_t o = j * kk; o < j * kk + kk && o < h->nbins; o++) s += h->bins[o];
            h->bins[j] = s;
        }
        memset(h->bins + nnew, 0, (h->nbins - nnew) * sizeof *h->bins);
    }
    h->range *= k;
}

/* Values scanned per block, counted in 32-bit lanes. */
#define SCAN_BLOCK 4096

/* A finite float's order-preserving integer key is k = u ^ ((u >> 31) & 0x7fffffff) on its bits u as int32 (signed
 * compare of keys = compare of values, -0 below +0); this maps a key back. */
static inline float key_float(int32_t k) {
    uint32_t u = (uint32_t)k ^ ((uint32_t)(k >> 31) & 0x7fffffffu);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Updates counts, min and max with one batch; returns the batch's largest finite |x|. Written on the floats' bits
 * without branches, so that the compiler vectorises it: |x| of a finite float orders as its bits do. */
static double scan_batch(tc__calib_hist *h, const float *data, size_t n) {
    uint64_t nan = 0, inf = 0, zero = 0;
    int32_t amax = 0, kmin = INT32_MAX, kmax = INT32_MIN;
    for (size_t i0 = 0; i0 < n; i0 += SCAN_BLOCK) {
        const size_t m = n - i0 < SCAN_BLOCK ? n - i0 : SCAN_BLOCK;
        const float *x = data + i0;
        int32_t bnan = 0, binf = 0, bzero = 0; /* 32-bit lanes throughout: the loop vectorises on SSE2 */
        for (size_t j = 0; j < m; j++) {
            int32_t u;
            memcpy(&u, &x[j], sizeof u);
            const int32_t a = u & 0x7fffffff;
            const int32_t fin = -(int32_t)(a < 0x7f800000); /* all ones for a finite value: masks, not branches */
            bnan += a > 0x7f800000;
            binf += a == 0x7f800000;
            bzero += a == 0;
            const int32_t k = u ^ ((u >> 31) & 0x7fffffff); /* float_key */
            const int32_t klo = (k & fin) | (INT32_MAX & ~fin), khi = (k & fin) | (INT32_MIN & ~fin), af = a & fin;
            kmin = klo < kmin ? klo : kmin;
            kmax = khi > kmax ? khi : kmax;
            amax = af > amax ? af : amax;
        }
        nan += (uint64_t)bnan;
        inf += (uint64_t)binf;
        zero += (uint64_t)bzero;
    }
    const uint64_t finite = (uint64_t)n - nan - inf;
    h->nan_count += nan;
    h->inf_count += inf;
    h->zero_count += zero;
    if (finite > 0) {
        const float bmin = key_float(kmin), bmax = key_float(kmax);
        if (h->count == 0) h->min = bmin, h->max = bmax;
        if (bmin < h->min) h->min = bmin;
        if (bmax > h->max) h->max = bmax;
        h->count += finite;
    }
    float bmax_abs;
    memcpy(&bmax_abs, &amax, sizeof bmax_abs);
    if (bmax_abs > h->max_abs) h->max_abs = bmax_abs;
    return bmax_abs;
}

/* Values binned per block: their bin indices are computed first (vectorised), then counted. */
#define BIN_BLOCK 256

/* Adds the batch's finite values to the bins (the range already covers them): bin floor(|x| * nbins / range) in
 * double, the last bin taking the rest; a non-finite value goes to the spare bin past the last, never read. */
static void bin_batch(tc__calib_hist *h, const float *data, size_t n) {
    const int32_t last = (int32_t)h->nbins - 1, spare = (int32_t)h->nbins;
    if (h->range == 0.0) { /* only zeros so far: they all belong to bin 0 */
        for (size_t i = 0; i < n; i++)
            if (data[i] == 0.0f) h->bins[0]++;
        return;
    }
    const double per_unit = (double)h->nbins / h->range;
    uint32_t idx[BIN_BLOCK];
    uint64_t *bins = h->bins;
    for (size_t i0 = 0; i0 < n; i0 += BIN_BLOCK) {
        const size_t m = n - i0 < BIN_BLOCK ? n - i0 : BIN_BLOCK;
        const float *x = data + i0;
        for (size_t j = 0; j < m; j++) {
            int32_t u;
            memcpy(&u, &x[j], sizeof u);
            const int32_t fin = -(int32_t)((u & 0x7fffffff) < 0x7f800000); /* masks, not branches: vectorises */
            const int32_t af = u & 0x7fffffff & fin;
            float ax;
            memcpy(&ax, &af, sizeof ax);
            /* ax <= range (the range covers every finite |x|), so pos <= nbins (a rounding may reach it): it
             * converts exactly, and clamping the integer to the last bin equals clamping pos */
            const int32_t b = (int32_t)((double)ax * per_unit);
            const int32_t bc = b < last ? b : last;
            idx[j] = (uint32_t)((bc & fin) | (spare & ~fin));
        }
        for (size_t j = 0; j < m; j++) bins[idx[j]]++;
    }
}

tc_status tc__calib_hist_observe(tc__calib_hist *hist, const float *data, size_t n, tc__err *err) {
    if (hist == NULL || (data == NULL && n > 0))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "calibration histogram: NULL %s", hist ? "data" : "histogram");
    double bmax = scan_batch(hist, data, n);
    if (bmax > 0.0) {
        if (hist->range == 0.0)
            hist->range = bmax;
        else if (bmax > hist->range)
            grow_range(hist, bmax);
    }
    bin_batch(hist, data, n);
    return TC_STATUS_OK;
}

const uint64_t *tc__calib_hist_bins(const tc__calib_hist *hist) { return hist ? hist->bins : NULL; }

void tc__calib_hist_stats(const tc__calib_hist *hist, tc__calib_stats *stats) {
    memset(stats, 0, sizeof *stats);
    if (hist == NULL) return;
    stats->count = hist->count;
    stats->nan_count = hist->nan_count;
    stats->inf_count = hist->inf_count;
    stats->zero_count = hist->zero_count;
    stats->min = hist->min;
    stats->max = hist->max;
    stats->max_abs = hist->max_abs;
    stats->range = hist->range;
    stats->nbins = hist->nbins;
}

/* The percentile p of |x|: the first bin where the cumulative count reaches p% of all values,
 * interpolated linearly inside that bin. */
static double amax_percentile(const tc__calib_hist *h, double p) {
    double target = p / 100.0 * (double)h->count, below = 0.0, width = h->range / (double)h->nbins;
    for (size_t b = 0; b < h->nbins; b++) {
        double c = (double)h->bins[b];
        if (c > 0.0 && below + c >= target) {
            double frac = (target - below) / c;
            if (frac < 0.0) frac = 0.0;
            return ((double)b + frac) * width;
        }
        below += c;
    }
    return (double)h->max_abs;
}

/* Prefix sums over the histogram used by the entropy search, so that each candidate threshold
 * costs O(levels) instead of O(bins): counts, nonzero bins, and sum of c*log(c). */
typedef struct prefix {
    double *count, *nonzero, *clogc;
} prefix;

static double xlogx(double c) { return c > 0.0 ? c * log(c) : 0.0; }

static double bin_for_entropy(const tc__calib_hist *h, size_t j) {
    /* Exact zeros quantize to 0 with no error whatever the threshold, so they take no part in the
     * search (pytorch-quantization copies bin 1 into bin 0 for the same reason). */
    uint64_t c = h->bins[j];
    if (j == 0) c -= h->zero_count <= c ? h->zero_count : c;
    return (double)c;
}

static tc_status prefix_build(const tc__calib_hist *h, prefix *p, tc__err *err) {
    size_t n = h->nbins + 1;
    p->count = malloc(n * sizeof(double));
    p->nonzero = malloc(n * sizeof(double));
    p->clogc = malloc(n * sizeof(double));
    if (p->count == NULL || p->nonzero == NULL || p->clogc == NULL)
        return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory for the entropy search (%zu bins)", h->nbins);
    p->count[0] = p->nonzero[0] = p->clogc[0] = 0.0;
    for (size_t j = 0; j < h->nbins; j++) {
        double c = bin_for_entropy(h, j);
        p->count[j + 1] = p->count[j] + c;
        p->nonzero[j + 1] = p->nonzero[j] + (c > 0.0);
        p->clogc[j + 1] = p->clogc[j] + xlogx(c);
    }
    return TC_STATUS_OK;
}

static void prefix_free(prefix *p) {
    free(p->count);
    free(p->nonzero);
    free(p->clogc);
}

/* Probability given to Q's one zero where P is not (see kl_divergence), as onnxruntime's smoothing. */
#define SMOOTH_EPS 1e-4

/* KL(P || Q) for the threshold of i bins, with h the histogram (exact zeros left out), T its total:
 * P = h[0, i) with every count at or above bin i (the outliers) added to bin i - 1, over T;
 * Q = h[0, i) merged into TC__CALIB_LEVELS levels (bin j goes to level j * LEVELS / i) and expanded
 * back, each level's count spread evenly over its nonzero bins, over its own total S = h[0, i).
 * Q lacks the outliers, so clipping costs divergence. Q is positive wherever P is, except in bin
 * i - 1 when the outliers land in an empty bin; there Q is smoothed to SMOOTH_EPS and the rest of Q
 * scaled by 1 - SMOOTH_EPS (pytorch-quantization would call this candidate infinitely bad, which
 * keeps a far outlier whenever the bulk of the data is narrower than LEVELS bins).
 * Within a level of nonzero count L over nz bins, every bin with h > 0 has Q = L / (nz * S), so
 * sum P log(P / Q) = sum P log P - (sum P) log(L / (nz * S)); all sums come from prefix sums. */
static double kl_divergence(const tc__calib_hist *h, const prefix *p, size_t i) {
    double total = p->count[h->nbins], kept = p->count[i], outliers = total - kept;
    double last = bin_for_entropy(h, i - 1), acc = 0.0;
    if (kept <= 0.0) return INFINITY; /* Q would be all zeros */
    bool smooth = outliers > 0.0 && last <= 0.0;
    for (size_t l = 0; l < TC__CALIB_LEVELS; l++) {
        size_t a = (l * i + TC__CALIB_LEVELS - 1) / TC__CALIB_LEVELS;
        size_t b = ((l + 1) * i + TC__CALIB_LEVELS - 1) / TC__CALIB_LEVELS;
        if (a >= b) continue;
        double level = p->count[b] - p->count[a], nz = p->nonzero[b] - p->nonzero[a];
        if (level <= 0.0) continue; /* h, hence P (but for a smoothed bin i - 1), is 0 on the whole level */
        double psum = level, plogp = p->clogc[b] - p->clogc[a];
        if (b == i && outliers > 0.0 && !smooth) {
            psum += outliers;
            plogp += xlogx(last + outliers) - xlogx(last);
        }
        acc += plogp - psum * log(level / (nz * kept));
    }
    double kl = acc / total - log(total) * (smooth ? kept / total : 1.0);
    if (smooth) {
        double p_last = outliers / total;
        kl += p_last * log(p_last / SMOOTH_EPS) - (1.0 - p_last) * log1p(-SMOOTH_EPS);
    }
    return kl;
}

/* TensorRT's entropy calibration: the threshold (in bins, from LEVELS up to the last nonzero bin)
 * whose quantized histogram is closest to the clipped one; ties go to the wider threshold so that
 * data with few distinct values (a constant) is not clipped. */
static tc_status amax_entropy(const tc__calib_hist *h, double *amax, tc__err *err) {
    prefix p = {0};
    tc_status st = prefix_build(h, &p, err);
    if (st != TC_STATUS_OK) {
        prefix_free(&p);
        return st;
    }
    size_t stop = h->nbins;
    while (stop > 0 && p.count[stop] == p.count[stop - 1]) stop--;
    double width = h->range / (double)h->nbins, best_amax = (double)h->max_abs;
    if (stop > TC__CALIB_LEVELS) {
        double best = INFINITY;
        size_t best_i = stop; /* its divergence is finite: no outliers */
        for (size_t i = TC__CALIB_LEVELS; i <= stop; i++) {
            double kl = kl_divergence(h, &p, i);
            if (kl <= best) {
                best = kl;
                best_i = i;
            }
        }
        best_amax = ((double)best_i + 0.5) * width;
    }
    prefix_free(&p);
    *amax = best_amax;
    return TC_STATUS_OK;
}

tc_status tc__calib_amax(const tc__calib_hist *hist, tc__calib_method method, double percentile, double *amax,
                         tc__err *err) {
    if (hist == NULL || amax == NULL) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "calibration: NULL argument");
    if ((unsigned)method >= TC__CALIB_METHOD_COUNT)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "calibration: unknown method %d", (int)method);
    if (method == TC__CALIB_PERCENTILE && !(percentile > 0.0 && percentile <= 100.0))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "calibration: percentile %g is not in (0, 100]", percentile);
    if (hist->count == 0)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                        "calibration (%s): no finite values observed (%llu NaN, %llu infinite)",
                        tc__calib_method_name(method), (unsigned long long)hist->nan_count,
                        (unsigned long long)hist->inf_count);
    double a = 0.0;
    if (hist->max_abs > 0.0f) { /* otherwise every value was 0 and amax is 0 */
        if (method == TC__CALIB_MINMAX) {
            a = hist->max_abs;
        } else if (method == TC__CALIB_PERCENTILE) {
            a = amax_percentile(hist, percentile);
        } else {
            tc_status st = amax_entropy(hist, &a, err);
            if (st != TC_STATUS_OK) return st;
        }
    }
    if (a > (double)hist->max_abs) a = hist->max_abs; /* a threshold past every value clips nothing */
    *amax = a;
    return TC_STATUS_OK;
}

float tc__calib_scale(double amax) {
    float s = (float)(amax / 127.0);
    /* amax 0 (the tensor was all zeros), or so small that amax / 127 would underflow: a scale of 0
     * is never returned, see TC__CALIB_TINY_SCALE. amax comes from finite floats, so s is finite. */
    if (!(s >= TC__CALIB_TINY_SCALE)) s = TC__CALIB_TINY_SCALE;
    return s;
}

double tc__calib_sqnr_db(const tc__calib_hist *h, double amax) {
    if (h->range <= 0.0 || h->count == 0) return INFINITY;
    const double width = h->range / (double)h->nbins, step = amax > 0.0 ? amax / 127.0 : 0.0;
    double signal = 0.0, noise = 0.0;
    for (size_t i = 0; i < h->nbins; i++) {
        if (h->bins[i] == 0) continue;
        const double c = ((double)i + 0.5) * width, n = (double)h->bins[i];
        signal += n * c * c;
        if (c > amax) noise += n * (c - amax) * (c - amax); /* clipped */
        else noise += n * step * step / 12.0;                /* rounding, uniform */
    }
    if (!(noise > 0.0)) return INFINITY;
    return 10.0 * log10(signal / noise);
}
