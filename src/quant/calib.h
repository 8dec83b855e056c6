/*
 * calib.h - INT8 calibration: histograms of |x| for one activation tensor, observed batch by batch,
 * and the choice of a symmetric per-tensor range (amax) from them by one of three methods:
 *
 *   minmax      amax = the largest |x| seen;
 *   percentile  amax = the given percentile of |x| (read from the histogram, linear inside a bin);
 *   entropy     amax = the clipping threshold whose 128-level quantization of the histogram is
 *               closest to it in KL divergence (TensorRT's method).
 *
 * The INT8 scale is amax / 127 (int8 value = round(x / scale) clamped to [-127, 127]); see
 * tc__calib_scale(). Observing never allocates; the entropy search allocates three scratch arrays of
 * nbins + 1 doubles for the duration of the call. Nothing here aborts or prints.
 */
#ifndef TC_QUANT_CALIB_H
#define TC_QUANT_CALIB_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* Fewest and most histogram bins a calibrator accepts. */
#define TC__CALIB_MIN_BINS 2048
#define TC__CALIB_MAX_BINS (1u << 20)

/* The entropy method compares distributions over this many quantization levels (INT8: 0..127). */
#define TC__CALIB_LEVELS 128

/* The scale used when calibration saw only zeros (amax 0): see tc__calib_scale(). */
#define TC__CALIB_TINY_SCALE 0x1p-64f

/* Calibration methods: one X-macro is the single list (enumerator, name). */
#define TC__CALIB_METHOD_MAP(X) \
    X(ENTROPY, "entropy")       \
    X(MINMAX, "minmax")         \
    X(PERCENTILE, "percentile")

typedef enum tc__calib_method {
#define TC__CALIB_METHOD_ENUM_(name, text) TC__CALIB_##name,
    TC__CALIB_METHOD_MAP(TC__CALIB_METHOD_ENUM_)
#undef TC__CALIB_METHOD_ENUM_
    TC__CALIB_METHOD_COUNT
} tc__calib_method;

/* Returns the method's name ("entropy", "minmax", "percentile"), or "unknown". */
const char *tc__calib_method_name(tc__calib_method method);

/* Parses a method name (exact, lower case); an unknown name fails with TC_STATUS_INVALID_ARGUMENT
 * and a reason that lists the known ones. *method is written only on success. */
tc_status tc__calib_method_parse(const char *text, tc__calib_method *method, tc__err *err);

typedef struct tc__calib_hist tc__calib_hist;

/* What a histogram has seen so far. Counts are of values: count = finite values binned (zeros
 * included); NaNs and infinities are skipped and only counted. min/max/max_abs are over finite
 * values and are 0 while count is 0. range is the histogram's upper edge (bins cover [0, range)). */
typedef struct tc__calib_stats {
    uint64_t count, nan_count, inf_count, zero_count;
    float min, max, max_abs;
    double range;
    size_t nbins;
} tc__calib_stats;

/* Creates an empty histogram of nbins bins (TC__CALIB_MIN_BINS..TC__CALIB_MAX_BINS). The caller
 * destroys it with tc__calib_hist_destroy(). *hist is written only on success. */
tc_status tc__calib_hist_create(size_t nbins, tc__calib_hist **hist, tc__err *err);

/* Frees a histogram (NULL is fine). */
void tc__calib_hist_destroy(tc__calib_hist *hist);

/* Adds n values (data is read, not kept). When the batch's largest |x| exceeds the histogram's
 * range, the range grows first by an integer factor and the existing bins are merged exactly
 * (k old bins into one new bin), so batch order changes the bin width by less than 2x and no count
 * is ever split. Fails only on bad arguments. */
tc_status tc__calib_hist_observe(tc__calib_hist *hist, const float *data, size_t n, tc__err *err);

/* The histogram's nbins counts (bin j: |x| in [j, j + 1) * range / nbins; the last also takes |x| >= range), owned by
 * hist and valid until its next observe or destroy. */
const uint64_t *tc__calib_hist_bins(const tc__calib_hist *hist);

/* Fills *stats with what hist has seen. */
void tc__calib_hist_stats(const tc__calib_hist *hist, tc__calib_stats *stats);

/* Chooses amax (>= 0, never above the largest |x| seen) by method; percentile (0 < p <= 100) is
 * read only by TC__CALIB_PERCENTILE. Fails with TC_STATUS_INVALID_ARGUMENT when nothing finite was
 * observed or the percentile is out of range. *amax is written only on success. */
tc_status tc__calib_amax(const tc__calib_hist *hist, tc__calib_method method, double percentile, double *amax,
                         tc__err *err);

/*
 * An estimate of the signal-to-quantization-noise ratio in dB of quantizing what hist saw with range amax
 * (from bin centres: values above amax contribute their clipping error, the others the rounding noise of
 * a uniform step amax / 127). +inf when nothing nonzero was seen. Used to rank layers by sensitivity.
 */
double tc__calib_sqnr_db(const tc__calib_hist *hist, double amax);

/* The INT8 scale for amax: amax / 127 as a float, or TC__CALIB_TINY_SCALE when that is not a
 * positive number (amax 0: the tensor was all zeros). A scale of 0 would make x / scale undefined;
 * the tiny power of two keeps every value calibration saw (zeros) exact, keeps 1 / scale finite and
 * exact, and saturates anything else to +-127 * scale, i.e. to almost 0, which is what was seen. */
float tc__calib_scale(double amax);

#endif
