/* test_quant_calib.c - INT8 calibration: the three ways of choosing amax (minmax, percentile,
 * entropy) on known and random data, histograms merged over batches whose range grows, degenerate
 * inputs (NaN, all zeros, constants, nothing), and the calibration cache file (round trip, another
 * model's fingerprint, corrupt files refused with the file and line named). */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "quant/calib.h"
#include "quant/calib_cache.h"

/* ---- helpers ---- */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rng_next(rng *r) { /* splitmix64 */
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_uniform(rng *r) { return (double)(rng_next(r) >> 11) * 0x1p-53; }

static double rng_normal(rng *r) { /* Box-Muller */
    double u = rng_uniform(r), v = rng_uniform(r);
    return sqrt(-2.0 * log(1.0 - u)) * cos(2.0 * M_PI * v);
}

static float *gaussian(size_t n, uint64_t seed, double sigma) {
    float *x = malloc(n * sizeof *x);
    assert_non_null(x);
    rng r = {seed};
    for (size_t i = 0; i < n; i++) x[i] = (float)(sigma * rng_normal(&r));
    return x;
}

static tc__calib_hist *hist_of(const float *x, size_t n) {
    tc__calib_hist *h = NULL;
    tc__err err = {0};
    assert_int_equal(tc__calib_hist_create(TC__CALIB_MIN_BINS, &h, &err), TC_STATUS_OK);
    assert_int_equal(tc__calib_hist_observe(h, x, n, &err), TC_STATUS_OK);
    return h;
}

static double amax_of(const tc__calib_hist *h, tc__calib_method m, double pct) {
    double a = -1.0;
    tc__err err = {0};
    assert_int_equal(tc__calib_amax(h, m, pct, &a, &err), TC_STATUS_OK);
    return a;
}

static double bin_width(const tc__calib_hist *h) {
    tc__calib_stats s;
    tc__calib_hist_stats(h, &s);
    return s.range / (double)s.nbins;
}

/* ---- methods ---- */

static void test_method_names(void **state) {
    (void)state;
    tc__err err = {0};
    tc__calib_method m = TC__CALIB_MINMAX;
    assert_int_equal(tc__calib_method_parse("entropy", &m, &err), TC_STATUS_OK);
    assert_int_equal(m, TC__CALIB_ENTROPY);
    assert_int_equal(tc__calib_method_parse("percentile", &m, &err), TC_STATUS_OK);
    assert_int_equal(m, TC__CALIB_PERCENTILE);
    assert_int_equal(tc__calib_method_parse("minmax", &m, &err), TC_STATUS_OK);
    assert_int_equal(m, TC__CALIB_MINMAX);
    for (int k = 0; k < TC__CALIB_METHOD_COUNT; k++) {
        assert_int_equal(tc__calib_method_parse(tc__calib_method_name((tc__calib_method)k), &m, &err), TC_STATUS_OK);
        assert_int_equal(m, k);
    }
    m = TC__CALIB_MINMAX;
    assert_int_equal(tc__calib_method_parse("Entropy", &m, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_int_equal(m, TC__CALIB_MINMAX); /* untouched on failure */
    assert_non_null(strstr(err.msg, "unknown calibration method 'Entropy'"));
    assert_non_null(strstr(err.msg, "minmax"));
    assert_string_equal(tc__calib_method_name((tc__calib_method)99), "unknown");
}

static void test_minmax_known(void **state) {
    (void)state;
    const float x[] = {-3.0f, 1.0f, 2.5f, -0.5f, 0.0f};
    tc__calib_hist *h = hist_of(x, 5);
    assert_true(amax_of(h, TC__CALIB_MINMAX, 0) == 3.0);
    tc__calib_stats s;
    tc__calib_hist_stats(h, &s);
    assert_true(s.min == -3.0f && s.max == 2.5f && s.max_abs == 3.0f);
    assert_int_equal(s.count, 5);
    assert_int_equal(s.zero_count, 1);
    assert_true(tc__calib_scale(3.0) == 3.0f / 127.0f);
    tc__calib_hist_destroy(h);
}

static void test_percentile_uniform(void **state) {
    (void)state;
    const size_t n = 1000000;
    float *x = malloc(n * sizeof *x);
    assert_non_null(x);
    rng r = {7};
    for (size_t i = 0; i < n; i++) x[i] = (float)(4.0 * rng_uniform(&r)) * (rng_next(&r) & 1 ? 1.0f : -1.0f);
    tc__calib_hist *h = hist_of(x, n);
    double w = bin_width(h);
    assert_true(w < 4.0 / 2000);
    assert_true(fabs(amax_of(h, TC__CALIB_PERCENTILE, 99.0) - 3.96) < w);
    assert_true(fabs(amax_of(h, TC__CALIB_PERCENTILE, 50.0) - 2.0) < 2 * w);
    assert_true(fabs(amax_of(h, TC__CALIB_PERCENTILE, 99.99) - 3.9996) < w);
    tc__calib_stats s;
    tc__calib_hist_stats(h, &s);
    assert_true(amax_of(h, TC__CALIB_PERCENTILE, 100.0) == s.max_abs);
    double a = 42.0;
    tc__err err = {0};
    assert_int_equal(tc__calib_amax(h, TC__CALIB_PERCENTILE, 0.0, &a, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "percentile 0"));
    assert_int_equal(tc__calib_amax(h, TC__CALIB_PERCENTILE, 100.5, &a, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_int_equal(tc__calib_amax(h, TC__CALIB_PERCENTILE, NAN, &a, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_true(a == 42.0);
    tc__calib_hist_destroy(h);
    free(x);
}

/* On N(0, 1), the KL-optimal threshold clips the far tail but keeps far more than the 99th
 * percentile (2.58). Re-derived in numpy on 1M samples, 2048 bins: onnxruntime-style smoothing gives
 * about 3.76, pytorch-quantization-style (no smoothing) about 4.7-4.8, this implementation about
 * 3.8-3.9, the same as numpy with its exact definition. A threshold of 128 bins (0.33, what one gets
 * when Q includes the outliers) or no clipping at all (minmax) both fail. */
static void test_entropy_gaussian(void **state) {
    (void)state;
    const size_t n = 1000000;
    float *x = gaussian(n, 1234, 1.0);
    tc__calib_hist *h = hist_of(x, n);
    double mm = amax_of(h, TC__CALIB_MINMAX, 0), p99 = amax_of(h, TC__CALIB_PERCENTILE, 99.0);
    double p999 = amax_of(h, TC__CALIB_PERCENTILE, 99.9), p9999 = amax_of(h, TC__CALIB_PERCENTILE, 99.99);
    double ent = amax_of(h, TC__CALIB_ENTROPY, 0);
    print_message("N(0,1), 1M samples: minmax %.4f  p99 %.4f  p99.9 %.4f  p99.99 %.4f  entropy %.4f\n", mm, p99,
                  p999, p9999, ent);
    assert_true(fabs(p99 - 2.5758) < 0.02);
    assert_true(fabs(p999 - 3.2905) < 0.05);
    assert_true(mm > 4.4 && mm < 5.6);
    assert_true(ent > p999 && ent < mm - 0.3);
    assert_true(ent > 3.4 && ent < 4.9);
    tc__calib_hist_destroy(h);
    free(x);
}

/* One far outlier: minmax follows it, entropy clips it. */
static void test_entropy_outlier(void **state) {
    (void)state;
    const size_t n = 1000000;
    const float far[] = {50.0f, 1000.0f};
    for (int k = 0; k < 2; k++) {
        float *x = gaussian(n, 99, 1.0);
        x[n / 2] = -far[k];
        tc__calib_hist *h = hist_of(x, n);
        double mm = amax_of(h, TC__CALIB_MINMAX, 0), ent = amax_of(h, TC__CALIB_ENTROPY, 0);
        double p9999 = amax_of(h, TC__CALIB_PERCENTILE, 99.99);
        print_message("N(0,1) + outlier %g: minmax %.4f  p99.99 %.4f  entropy %.4f (bin width %.4f)\n",
                      (double)far[k], mm, p9999, ent, bin_width(h));
        assert_true(mm == far[k]);
        assert_true(ent < mm / 10);
        assert_true(p9999 < 4.5);
        if (k == 0) assert_true(ent > 3.0 && ent < 6.0); /* bins fine enough to resolve the bulk */
        tc__calib_hist_destroy(h);
        free(x);
    }
}

/* The same data in one batch or in 10 batches whose largest |x| grows (the first one 20x narrower
 * than the last) gives amax within 1% for every method. */
static void test_batches_agree(void **state) {
    (void)state;
    const size_t per = 100000, nb = 10;
    float *x = malloc(per * nb * sizeof *x);
    assert_non_null(x);
    double prev_max = 0;
    int grew = 0;
    for (size_t b = 0; b < nb; b++) {
        float *part = gaussian(per, 1000 + b, b == 0 ? 0.05 : 0.3 + 0.15 * (double)b);
        memcpy(x + b * per, part, per * sizeof *x);
        double m = 0;
        for (size_t i = 0; i < per; i++) m = fmax(m, fabs(part[i]));
        grew += m > prev_max;
        prev_max = fmax(prev_max, m);
        free(part);
    }
    assert_true(grew >= 6);
    tc__calib_hist *one = hist_of(x, per * nb), *many = NULL;
    tc__err err = {0};
    assert_int_equal(tc__calib_hist_create(TC__CALIB_MIN_BINS, &many, &err), TC_STATUS_OK);
    for (size_t b = 0; b < nb; b++) assert_int_equal(tc__calib_hist_observe(many, x + b * per, per, &err), TC_STATUS_OK);
    tc__calib_stats s1, s2;
    tc__calib_hist_stats(one, &s1);
    tc__calib_hist_stats(many, &s2);
    assert_true(s1.count == s2.count && s1.max_abs == s2.max_abs && s1.min == s2.min && s1.max == s2.max);
    assert_true(s2.range >= s1.range && s2.range < 2 * s1.range);
    const struct {
        tc__calib_method m;
        double p;
    } cases[] = {{TC__CALIB_MINMAX, 0}, {TC__CALIB_PERCENTILE, 99.99}, {TC__CALIB_PERCENTILE, 99.0}, {TC__CALIB_ENTROPY, 0}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        double a1 = amax_of(one, cases[k].m, cases[k].p), a2 = amax_of(many, cases[k].m, cases[k].p);
        print_message("%-10s %6.2f: one batch %.5f, 10 batches %.5f\n", tc__calib_method_name(cases[k].m),
                      cases[k].p, a1, a2);
        assert_true(fabs(a1 - a2) <= 0.01 * a1);
    }
    tc__calib_hist_destroy(one);
    tc__calib_hist_destroy(many);
    free(x);
}

/* The binning as first written (one value at a time, branches, double arithmetic): the vectorised scan and binning
 * must give the same bins, counts and extremes, so that calibration caches stay what they were. */
typedef struct ref_hist {
    uint64_t bins[TC__CALIB_MIN_BINS], count, nan, inf, zero;
    double range;
    float min, max, max_abs;
} ref_hist;

static void ref_observe(ref_hist *h, const float *x, size_t n) {
    const size_t nb = TC__CALIB_MIN_BINS;
    float bmax = 0.0f;
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i])) { h->nan++; continue; }
        if (isinf(x[i])) { h->inf++; continue; }
        if (h->count == 0) h->min = h->max = x[i];
        if (x[i] < h->min) h->min = x[i];
        if (x[i] > h->max) h->max = x[i];
        h->count++;
        h->zero += x[i] == 0.0f;
        bmax = fmaxf(bmax, fabsf(x[i]));
    }
    if (bmax > h->max_abs) h->max_abs = bmax;
    if (bmax > 0.0f && h->range == 0.0) {
        h->range = bmax;
    } else if (bmax > 0.0f && bmax > h->range) {
        double k = ceil(bmax / h->range);
        while (k * h->range < bmax) k += 1.0;
        size_t kk = k >= (double)nb ? nb : (size_t)k, nnew = (nb + kk - 1) / kk;
        for (size_t j = 0; j < nnew; j++) {
            uint64_t s = 0;
            for (size_t o = j * kk; o < j * kk + kk && o < nb; o++) s += h->bins[o];
            h->bins[j] = s;
        }
        memset(h->bins + nnew, 0, (nb - nnew) * sizeof h->bins[0]);
        h->range *= k;
    }
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) continue;
        if (h->range == 0.0) { h->bins[0]++; continue; }
        double pos = fabs((double)x[i]) * ((double)nb / h->range);
        h->bins[pos >= (double)(nb - 1) ? nb - 1 : (size_t)pos]++;
    }
}

static void test_binning_as_before(void **state) {
    (void)state;
    tc__err err = {0};
    tc__calib_hist *h = NULL;
    assert_int_equal(tc__calib_hist_create(TC__CALIB_MIN_BINS, &h, &err), TC_STATUS_OK);
    ref_hist *r = calloc(1, sizeof *r);
    assert_non_null(r);
    rng g = {77};
    /* batches of odd sizes (not a multiple of any vector width) whose range grows, with NaN, infinities, zeros of
     * both signs, subnormals and values at bin edges */
    for (int b = 0; b < 12; b++) {
        const size_t n = 1000 + (size_t)b * 777;
        float *x = malloc(n * sizeof *x);
        assert_non_null(x);
        for (size_t i = 0; i < n; i++) {
            const double u = rng_uniform(&g);
            x[i] = (float)(rng_normal(&g) * (0.1 + 0.4 * b));
            if (u < 0.01) x[i] = NAN;
            else if (u < 0.02) x[i] = u < 0.015 ? INFINITY : -INFINITY;
            else if (u < 0.05) x[i] = u < 0.035 ? 0.0f : -0.0f;
            else if (u < 0.06) x[i] = 1e-40f;
            else if (u < 0.07 && r->range > 0.0) x[i] = (float)(r->range * (double)(rng_next(&g) % 2048) / 2048.0);
        }
        ref_observe(r, x, n);
        assert_int_equal(tc__calib_hist_observe(h, x, n, &err), TC_STATUS_OK);
        tc__calib_stats s;
        tc__calib_hist_stats(h, &s);
        assert_true(s.count == r->count && s.nan_count == r->nan && s.inf_count == r->inf && s.zero_count == r->zero);
        assert_true(s.range == r->range && s.max_abs == r->max_abs && s.min == r->min && s.max == r->max);
        assert_memory_equal(tc__calib_hist_bins(h), r->bins, sizeof r->bins);
        free(x);
    }
    tc__calib_hist_destroy(h);
    free(r);
}

/* ---- degenerate inputs ---- */

static void test_nan_and_inf(void **state) {
    (void)state;
    const float x[] = {NAN, 1.0f, -INFINITY, -2.0f, NAN, INFINITY, 0.5f, -NAN};
    tc__calib_hist *h = hist_of(x, 8);
    tc__calib_stats s;
    tc__calib_hist_stats(h, &s);
    assert_int_equal(s.nan_count, 3);
    assert_int_equal(s.inf_count, 2);
    assert_int_equal(s.count, 3);
    assert_true(s.min == -2.0f && s.max == 1.0f);
    for (int m = 0; m < TC__CALIB_METHOD_COUNT; m++) {
        double a = amax_of(h, (tc__calib_method)m, 100.0);
        assert_true(isfinite(a) && a > 0.0 && a <= 2.0);
    }
    tc__calib_hist_destroy(h);

    const float nans[] = {NAN, NAN, NAN};
    h = hist_of(nans, 3);
    double a = 7.0;
    tc__err err = {0};
    assert_int_equal(tc__calib_amax(h, TC__CALIB_ENTROPY, 0, &a, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "no finite values observed (3 NaN"));
    assert_true(a == 7.0);
    tc__calib_hist_destroy(h);
}

static void test_all_zero(void **state) {
    (void)state;
    float z[1000] = {0};
    z[3] = -0.0f;
    tc__calib_hist *h = hist_of(z, 1000);
    for (int m = 0; m < TC__CALIB_METHOD_COUNT; m++) assert_true(amax_of(h, (tc__calib_method)m, 99.9) == 0.0);
    float s = tc__calib_scale(0.0);
    assert_true(s > 0.0f && s == TC__CALIB_TINY_SCALE && isfinite(1.0f / s));
    assert_true(tc__calib_scale(1e-30) == TC__CALIB_TINY_SCALE); /* would underflow */
    /* Real values after the zeros: the zeros stay counted, at the bottom of the histogram. */
    const float x[] = {1.0f, -2.0f};
    tc__err err = {0};
    assert_int_equal(tc__calib_hist_observe(h, x, 2, &err), TC_STATUS_OK);
    tc__calib_stats st;
    tc__calib_hist_stats(h, &st);
    assert_int_equal(st.count, 1002);
    assert_int_equal(st.zero_count, 1000);
    assert_true(amax_of(h, TC__CALIB_MINMAX, 0) == 2.0);
    assert_true(amax_of(h, TC__CALIB_PERCENTILE, 50.0) < 0.01);
    double e = amax_of(h, TC__CALIB_ENTROPY, 0); /* exact zeros do not pull entropy down */
    assert_true(e > 1.0 && e <= 2.0);
    tc__calib_hist_destroy(h);
}

static void test_constant_and_single(void **state) {
    (void)state;
    float c[5000];
    for (int i = 0; i < 5000; i++) c[i] = 2.5f;
    tc__calib_hist *h = hist_of(c, 5000);
    /* Minmax and entropy are exact; a percentile is read from the histogram, within a bin of it. */
    assert_true(amax_of(h, TC__CALIB_MINMAX, 0) == 2.5 && amax_of(h, TC__CALIB_ENTROPY, 0) == 2.5);
    assert_true(fabs(amax_of(h, TC__CALIB_PERCENTILE, 99.0) - 2.5) <= bin_width(h));
    tc__calib_hist_destroy(h);
    const float one = -7.0f;
    h = hist_of(&one, 1);
    assert_true(amax_of(h, TC__CALIB_MINMAX, 0) == 7.0 && amax_of(h, TC__CALIB_ENTROPY, 0) == 7.0);
    assert_true(fabs(amax_of(h, TC__CALIB_PERCENTILE, 50.0) - 7.0) <= bin_width(h));
    tc__calib_hist_destroy(h);
    /* Two distinct values: nothing between them to lose, so entropy keeps both. */
    const float two[] = {1.0f, -3.0f, 1.0f, 3.0f};
    h = hist_of(two, 4);
    assert_true(amax_of(h, TC__CALIB_ENTROPY, 0) == 3.0);
    tc__calib_hist_destroy(h);
}

static void test_empty_and_bad_arguments(void **state) {
    (void)state;
    tc__err err = {0};
    tc__calib_hist *h = NULL;
    assert_int_equal(tc__calib_hist_create(100, &h, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_null(h);
    assert_non_null(strstr(err.msg, "100 bins"));
    err = (tc__err){0};
    assert_int_equal(tc__calib_hist_create(TC__CALIB_MIN_BINS, &h, &err), TC_STATUS_OK);
    assert_int_equal(tc__calib_hist_observe(h, NULL, 0, &err), TC_STATUS_OK);
    assert_int_equal(tc__calib_hist_observe(h, NULL, 5, &err), TC_STATUS_INVALID_ARGUMENT);
    for (int m = 0; m < TC__CALIB_METHOD_COUNT; m++) {
        double a = 1.5;
        err = (tc__err){0};
        assert_int_equal(tc__calib_amax(h, (tc__calib_method)m, 99.0, &a, &err), TC_STATUS_INVALID_ARGUMENT);
        assert_non_null(strstr(err.msg, "no finite values observed"));
        assert_true(a == 1.5);
    }
    double a = 0;
    assert_int_equal(tc__calib_amax(h, (tc__calib_method)7, 0, &a, &err), TC_STATUS_INVALID_ARGUMENT);
    tc__calib_hist_destroy(h);
    tc__calib_hist_destroy(NULL);
}

/* ---- calibration cache ---- */

static void path_for(char *buf, size_t n, const char *tag) {
    snprintf(buf, n, "/tmp/tc_calib_%d_%s", (int)getpid(), tag);
}

static void write_text(const char *path, const char *text, size_t size) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, size, f), size);
    fclose(f);
}

static void test_cache_round_trip(void **state) {
    (void)state;
    char dir[128], path[192], longname[256];
    path_for(dir, sizeof dir, "dir");
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(path, sizeof path, "%s/model.calib", dir);
    memset(longname, 'n', 255);
    longname[255] = '\0';
    const char *names[] = {"input", "conv1/Relu:0", "a b: c", "résumé", longname};
    const float scales[] = {0.0123f, 3.0f / 127.0f, TC__CALIB_TINY_SCALE, 1e-40f /* subnormal */, 3.4e38f};
    tc__err err = {0};
    tc__calib_cache *c = NULL;
    assert_int_equal(tc__calib_cache_create(0xfedcba9876543210ull, TC__CALIB_PERCENTILE, &c, &err), TC_STATUS_OK);
    for (int k = 0; k < 5; k++) assert_int_equal(tc__calib_cache_put(c, names[k], scales[k], &err), TC_STATUS_OK);
    for (int k = 0; k < 500; k++) { /* enough to grow the index */
        char nm[32];
        snprintf(nm, sizeof nm, "t%d", k);
        assert_int_equal(tc__calib_cache_put(c, nm, tc__calib_scale(0.01 * (k + 1)), &err), TC_STATUS_OK);
    }
    assert_int_equal(tc__calib_cache_save(c, path, &err), TC_STATUS_OK);
    assert_int_equal(tc__calib_cache_save(c, path, &err), TC_STATUS_OK); /* replaces the old file */

    /* The rename leaves no temporary file behind. */
    DIR *d = opendir(dir);
    assert_non_null(d);
    int files = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) files += e->d_name[0] != '.';
    closedir(d);
    assert_int_equal(files, 1);
    FILE *f = fopen(path, "r");
    char line[128];
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_string_equal(line, "tailcut-calibration-cache 1 percentile fedcba9876543210\n");

    tc__calib_cache *r = NULL;
    assert_int_equal(tc__calib_cache_load(path, 0xfedcba9876543210ull, &r, &err), TC_STATUS_OK);
    assert_int_equal(r->n, 505);
    assert_int_equal(r->method, TC__CALIB_PERCENTILE);
    for (size_t k = 0; k < c->n; k++) {
        float got = 0;
        assert_true(tc__calib_cache_find(r, c->entries[k].name, &got));
        assert_memory_equal(&got, &c->entries[k].scale, sizeof got); /* bit-exact */
        assert_string_equal(r->entries[k].name, c->entries[k].name); /* same order */
    }
    float untouched = 5.0f;
    assert_false(tc__calib_cache_find(r, "absent", &untouched));
    assert_false(tc__calib_cache_find(r, "conv1/Relu", &untouched));
    assert_true(untouched == 5.0f);
    tc__calib_cache_free(r);

    /* Another model's cache is refused, naming both fingerprints and the file. */
    tc__calib_cache *sentinel = (tc__calib_cache *)&err;
    r = sentinel;
    err = (tc__err){0};
    assert_int_equal(tc__calib_cache_load(path, 0x1234ull, &r, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_ptr_equal(r, sentinel);
    assert_non_null(strstr(err.msg, "fedcba9876543210"));
    assert_non_null(strstr(err.msg, "0000000000001234"));
    assert_non_null(strstr(err.msg, path));

    /* Writing where it cannot leaves an error, not a file. */
    err = (tc__err){0};
    assert_int_equal(tc__calib_cache_save(c, "/nonexistent-dir-tc/x.calib", &err), TC_STATUS_IO_ERROR);
    assert_non_null(strstr(err.msg, "/nonexistent-dir-tc/x.calib"));
    tc__calib_cache_free(c);
    unlink(path);
    rmdir(dir);
}

static void test_cache_put_refusals(void **state) {
    (void)state;
    tc__err err = {0};
    tc__calib_cache *c = NULL;
    assert_int_equal(tc__calib_cache_create(1, TC__CALIB_ENTROPY, &c, &err), TC_STATUS_OK);
    assert_int_equal(tc__calib_cache_put(c, "x", 0.5f, &err), TC_STATUS_OK);
    char big[300];
    memset(big, 'b', 256);
    big[256] = '\0';
    const struct {
        const char *name;
        float scale;
        const char *why;
    } bad[] = {
        {"x", 0.25f, "appears twice"},       {"", 1.0f, "empty tensor name"},         {big, 1.0f, "longer than 255"},
        {"tab\there", 1.0f, "control"},     {"new\nline", 1.0f, "control"},          {"y", 0.0f, "not positive"},
        {"y", -1.0f, "not positive"},       {"y", NAN, "not finite"},                {"y", INFINITY, "not finite"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        err = (tc__err){0};
        assert_int_equal(tc__calib_cache_put(c, bad[k].name, bad[k].scale, &err), TC_STATUS_INVALID_ARGUMENT);
        assert_non_null(strstr(err.msg, bad[k].why));
        assert_int_equal(c->n, 1);
    }
    float s = 0;
    assert_true(tc__calib_cache_find(c, "x", &s) && s == 0.5f);
    tc__calib_cache_free(c);
}

static void test_cache_corrupt_files(void **state) {
    (void)state;
    static char overlong[600], longname[400];
    strcpy(overlong, "tailcut-calibration-cache 1 entropy 000000000000002a\n");
    size_t o = strlen(overlong);
    memset(overlong + o, 'x', 400);
    strcpy(overlong + o + 400, ": 3c010a14\n");
    strcpy(longname, "tailcut-calibration-cache 1 entropy 000000000000002a\n");
    o = strlen(longname);
    memset(longname + o, 'n', 256);
    strcpy(longname + o + 256, ": 3c010a14\n");
#define H "tailcut-calibration-cache 1 entropy 000000000000002a\n"
    const struct {
        const char *text;
        size_t size; /* 0: strlen */
        tc_status status;
        int line;
        const char *why;
    } bad[] = {
        {"", 0, TC_STATUS_CORRUPT_FILE, 1, "empty file"},
        {"tailcut-calibration-cache 1 entr", 0, TC_STATUS_CORRUPT_FILE, 1, "truncated"},
        {H "conv1: 3c010a14\nconv2: 3c01", 0, TC_STATUS_CORRUPT_FILE, 3, "truncated"},
        {"TRT-8601-EntropyCalibration2\nconv1: 3c010a14\n", 0, TC_STATUS_CORRUPT_FILE, 1, "not a tailcut calibration cache"},
        {"tailcut-calibration-cache 1 entropy\n", 0, TC_STATUS_CORRUPT_FILE, 1, "bad header"},
        {"tailcut-calibration-cache  1 entropy 000000000000002a\n", 0, TC_STATUS_CORRUPT_FILE, 1, "bad header"},
        {"tailcut-calibration-cache one entropy 000000000000002a\n", 0, TC_STATUS_CORRUPT_FILE, 1, "bad version"},
        {"tailcut-calibration-cache 2 entropy 000000000000002a\n", 0, TC_STATUS_UNSUPPORTED, 1, "version 2"},
        {"tailcut-calibration-cache 1 kl 000000000000002a\n", 0, TC_STATUS_CORRUPT_FILE, 1, "unknown calibration method 'kl'"},
        {"tailcut-calibration-cache 1 entropy 00000000000002a\n", 0, TC_STATUS_CORRUPT_FILE, 1, "bad model fingerprint"},
        {H "conv1: 3c01zz14\n", 0, TC_STATUS_CORRUPT_FILE, 2, "bad scale"},
        {H "conv1: 3c01\n", 0, TC_STATUS_CORRUPT_FILE, 2, "bad scale"},
        {H "conv1: 0.0123\n", 0, TC_STATUS_CORRUPT_FILE, 2, "bad scale"},
        {H "conv1:3c010a14\n", 0, TC_STATUS_CORRUPT_FILE, 2, "bad scale"},
        {H "conv1: 3c010a14 \n", 0, TC_STATUS_CORRUPT_FILE, 2, "bad scale"},
        {H "conv1: bf800000\n", 0, TC_STATUS_CORRUPT_FILE, 2, "not positive"},
        {H "conv1: 80000000\n", 0, TC_STATUS_CORRUPT_FILE, 2, "not positive"},
        {H "conv1: 00000000\n", 0, TC_STATUS_CORRUPT_FILE, 2, "not positive"},
        {H "conv1: 7fc00000\n", 0, TC_STATUS_CORRUPT_FILE, 2, "not finite"},
        {H "conv1: 7f800000\n", 0, TC_STATUS_CORRUPT_FILE, 2, "not finite"},
        {H "conv1: 3c010a14\nconv2: 3c010a14\nconv1: 3d010a14\n", 0, TC_STATUS_CORRUPT_FILE, 4,
         "'conv1' appears twice (first on line 2)"},
        {overlong, 0, TC_STATUS_CORRUPT_FILE, 2, "longer than 300 bytes"},
        {longname, 0, TC_STATUS_CORRUPT_FILE, 2, "256 bytes (limit 255)"},
        {H "conv1 3c010a14\n", 0, TC_STATUS_CORRUPT_FILE, 2, "missing ':'"},
        {H ": 3c010a14\n", 0, TC_STATUS_CORRUPT_FILE, 2, "empty tensor name"},
        {H "conv1: 3c010a14\n\n", 0, TC_STATUS_CORRUPT_FILE, 3, "empty line"},
        {H "con\tv1: 3c010a14\n", 0, TC_STATUS_CORRUPT_FILE, 2, "control character 0x09 at column 4"},
        {H "conv\0001: 3c010a14\n", sizeof(H "conv\0001: 3c010a14\n") - 1, TC_STATUS_CORRUPT_FILE, 2,
         "control character 0x00 at column 5"},
    };
#undef H
    char path[128];
    path_for(path, sizeof path, "corrupt");
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        size_t size = bad[k].size ? bad[k].size : strlen(bad[k].text);
        write_text(path, bad[k].text, size);
        tc__err err = {0};
        tc__calib_cache *sentinel = (tc__calib_cache *)&err, *c = sentinel;
        tc_status st = tc__calib_cache_load(path, 42, &c, &err);
        char where[160];
        snprintf(where, sizeof where, "'%s' line %d: ", path, bad[k].line);
        if (st != bad[k].status || strstr(err.msg, where) == NULL || strstr(err.msg, bad[k].why) == NULL)
            fail_msg("case %zu: status %d, message \"%s\"", k, (int)st, err.msg);
        assert_ptr_equal(c, sentinel); /* the output is untouched */
        /* The in-memory parser agrees. */
        c = sentinel;
        assert_int_equal(tc__calib_cache_parse(bad[k].text, size, "x", 42, &c, NULL), bad[k].status);
        assert_ptr_equal(c, sentinel);
    }
    /* Accepted: an empty cache, CRLF line ends, names with ':' and spaces, upper-case digits. */
    const char *good = "tailcut-calibration-cache 1 minmax 000000000000002A\r\n"
                       "a:b: c: 3C010A14\r\n"
                       " lead: 3c010a14\n";
    write_text(path, good, strlen(good));
    tc__err err = {0};
    tc__calib_cache *c = NULL;
    assert_int_equal(tc__calib_cache_load(path, 42, &c, &err), TC_STATUS_OK);
    assert_int_equal(c->n, 2);
    assert_int_equal(c->method, TC__CALIB_MINMAX);
    float s = 0;
    assert_true(tc__calib_cache_find(c, "a:b: c", &s) && s > 0.0078f && s < 0.0079f);
    assert_true(tc__calib_cache_find(c, " lead", NULL));
    tc__calib_cache_free(c);
    const char *empty = "tailcut-calibration-cache 1 entropy 000000000000002a\n";
    assert_int_equal(tc__calib_cache_parse(empty, strlen(empty), "e", 42, &c, &err), TC_STATUS_OK);
    assert_int_equal(c->n, 0);
    tc__calib_cache_free(c);
    /* A missing file. */
    unlink(path);
    c = NULL;
    assert_int_equal(tc__calib_cache_load(path, 42, &c, &err), TC_STATUS_IO_ERROR);
    assert_null(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_method_names),
        cmocka_unit_test(test_minmax_known),
        cmocka_unit_test(test_percentile_uniform),
        cmocka_unit_test(test_entropy_gaussian),
        cmocka_unit_test(test_entropy_outlier),
        cmocka_unit_test(test_batches_agree),
        cmocka_unit_test(test_nan_and_inf),
        cmocka_unit_test(test_all_zero),
        cmocka_unit_test(test_constant_and_single),
        cmocka_unit_test(test_empty_and_bad_arguments),
        cmocka_unit_test(test_binning_as_before),
        cmocka_unit_test(test_cache_round_trip),
        cmocka_unit_test(test_cache_put_refusals),
        cmocka_unit_test(test_cache_corrupt_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
