/* api_compare.c - the public comparison API (tc_compare_*): agreement statistics of a tensor computed twice
 * (cosine similarity, absolute and relative errors, SQNR, top-1 / top-5 agreement over the last dim, NaN
 * mismatches), accumulated sample by sample; `tailcut compare` and the Python package report them. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/error.h"
#include "tailcut/tailcut.h"

#define REL_FLOOR 1e-6 /* denominator floor of the relative error */

static bool is_float(tc_dtype t) {
    return t == TC_DTYPE_FLOAT32 || t == TC_DTYPE_FLOAT64 || t == TC_DTYPE_FLOAT16 || t == TC_DTYPE_BFLOAT16;
}

static double half_to_double(uint16_t h) {
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

static double element(const void *data, tc_dtype t, size_t i) {
    const unsigned char *p = data;
    switch (t) {
    case TC_DTYPE_FLOAT32: {
        float v;
        memcpy(&v, p + 4 * i, 4);
        return v;
    }
    case TC_DTYPE_FLOAT64: {
        double v;
        memcpy(&v, p + 8 * i, 8);
        return v;
    }
    case TC_DTYPE_FLOAT16: {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        return half_to_double(h);
    }
    default: { /* bfloat16 */
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        uint32_t bits = (uint32_t)h << 16;
        float v;
        memcpy(&v, &bits, 4);
        return v;
    }
    }
}

/* Index of the largest non-NaN value of row[0..n) (first on ties), or -1 when there is none. */
static int64_t argmax_row(const void *data, tc_dtype t, size_t base, int64_t n) {
    int64_t best = -1;
    double bv = 0;
    for (int64_t j = 0; j < n; j++) {
        double v = element(data, t, base + (size_t)j);
        if (!isnan(v) && (best < 0 || v > bv)) best = j, bv = v;
    }
    return best;
}

/* True when index `want` is among the 5 largest non-NaN values of row[0..n) (earlier index first on ties). */
static bool in_top5(const void *data, tc_dtype t, size_t base, int64_t n, int64_t want) {
    int64_t idx[5];
    double val[5];
    int m = 0;
    for (int64_t j = 0; j < n; j++) {
        double v = element(data, t, base + (size_t)j);
        if (isnan(v) || (m == 5 && !(v > val[4]))) continue;
        int pos = m < 5 ? m++ : 4;
        while (pos > 0 && v > val[pos - 1]) {
            val[pos] = val[pos - 1];
            idx[pos] = idx[pos - 1];
            pos--;
        }
        val[pos] = v;
        idx[pos] = j;
    }
    for (int q = 0; q < m; q++)
        if (idx[q] == want) return true;
    return false;
}

/* Elements of a tensor whose dtype, rank and buffer size are valid, else 0 with the reason in err. */
static size_t checked_elements(const tc_tensor *t, char side, tc__err *err) {
    const size_t es = tc_dtype_size(t->dtype);
    if (es == 0 || t->rank < 0 || t->rank > TC_MAX_RANK) {
        tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "tc_compare_add: tensor %c has an invalid dtype (%d) or rank (%d)",
                 side, (int)t->dtype, (int)t->rank);
        return 0;
    }
    size_t n = 1;
    for (int32_t d = 0; d < t->rank; d++) {
        if (t->dims[d] < 0 || (t->dims[d] > 0 && n > SIZE_MAX / es / (size_t)t->dims[d])) {
            tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "tc_compare_add: tensor %c has an invalid dim %lld", side,
                     (long long)t->dims[d]);
            return 0;
        }
        n *= (size_t)t->dims[d];
    }
    if (n * es > t->nbytes || (n > 0 && t->data == NULL)) {
        tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "tc_compare_add: tensor %c holds %zu bytes, its shape needs %zu", side,
                 t->nbytes, n * es);
        return 0;
    }
    return n;
}

tc_status tc_compare_add(tc_compare_stats *st, const tc_tensor *ta, const tc_tensor *tb, tc_error *error) {
    tc__err err = {0};
    if (st == NULL || ta == NULL || tb == NULL) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "tc_compare_add: NULL argument");
        tc__err_export(&err, error);
        return err.status;
    }
    const size_t n = checked_elements(ta, 'a', &err);
    if (err.status == TC_STATUS_OK) checked_elements(tb, 'b', &err);
    if (err.status == TC_STATUS_OK &&
        (ta->dtype != tb->dtype || ta->rank != tb->rank ||
         memcmp(ta->dims, tb->dims, sizeof(int64_t) * (size_t)ta->rank) != 0)) {
        const char *da = tc_dtype_name(ta->dtype), *db = tc_dtype_name(tb->dtype);
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT,
                 "tc_compare_add: a is %s of rank %d, b is %s of rank %d: the same dtype and shape are needed",
                 da ? da : "?", (int)ta->rank, db ? db : "?", (int)tb->rank);
    }
    if (err.status != TC_STATUS_OK) {
        tc__err_export(&err, error);
        return err.status;
    }
    st->exact = !is_float(ta->dtype);
    st->elements += n;
    if (st->exact) {
        size_t es = tc_dtype_size(ta->dtype);
        const unsigned char *pa = ta->data, *pb = tb->data;
        for (size_t i = 0; i < n; i++) st->mismatches += memcmp(pa + i * es, pb + i * es, es) != 0;
        return TC_STATUS_OK;
    }
    for (size_t i = 0; i < n; i++) {
        double a = element(ta->data, ta->dtype, i), b = element(tb->data, tb->dtype, i);
        if (!isfinite(a) || !isfinite(b)) {
            st->nan_mismatches += !(isnan(a) && isnan(b)) && a != b;
            continue;
        }
        double d = fabs(a - b), rel = d / fmax(fmax(fabs(a), fabs(b)), REL_FLOOR);
        st->finite++;
        st->dot += a * b;
        st->sum_a2 += a * a;
        st->sum_b2 += b * b;
        st->sum_d2 += d * d;
        st->sum_abs += d;
        if (d > st->max_abs) st->max_abs = d;
        if (rel > st->max_rel) st->max_rel = rel;
    }
    int64_t last = ta->rank > 0 ? ta->dims[ta->rank - 1] : 0;
    if (last < 2 || st->values_only) return TC_STATUS_OK;
    size_t rows = n / (size_t)last;
    for (size_t r = 0; r < rows; r++) {
        size_t base = r * (size_t)last;
        int64_t ia = argmax_row(ta->data, ta->dtype, base, last), ib = argmax_row(tb->data, tb->dtype, base, last);
        st->rows++;
        st->top1 += ia == ib;
        if (last >= 5) {
            st->rows5++;
            st->top5 += ib >= 0 && in_top5(ta->data, ta->dtype, base, last, ib);
        }
    }
    return TC_STATUS_OK;
}

double tc_compare_cosine(const tc_compare_stats *st) {
    if (st->sum_a2 == 0 && st->sum_b2 == 0) return 1.0;
    if (st->sum_a2 == 0 || st->sum_b2 == 0) return 0.0;
    if (st->sum_d2 == 0) return 1.0; /* equal: the formula's roundings could give 0.9999999999999999 */
    double c = st->dot / (sqrt(st->sum_a2) * sqrt(st->sum_b2));
    return c > 1 ? 1 : c < -1 ? -1 : c;
}

double tc_compare_rel_l2(const tc_compare_stats *st) {
    if (st->sum_a2 > 0) return sqrt(st->sum_d2) / sqrt(st->sum_a2);
    return st->sum_d2 == 0 ? 0.0 : INFINITY;
}

double tc_compare_sqnr_db(const tc_compare_stats *st) {
    if (st->sum_d2 == 0) return INFINITY;
    if (st->sum_a2 == 0) return -INFINITY;
    return 10.0 * log10(st->sum_a2 / st->sum_d2);
}
