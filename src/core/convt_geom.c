/* convt_geom.c - validates ConvTranspose attributes and resolves output sizes and padding (convt_geom.h). */
#include "core/convt_geom.h"

#include <stdbool.h>
#include <string.h>

/* Sizes, strides and the like stay below this so that products of two never overflow int64. */
#define CONVT_MAX ((int64_t)1 << 40)

typedef enum { AP_NOTSET, AP_SAME_UPPER, AP_SAME_LOWER, AP_VALID } auto_pad;

/* Reads an INTS attribute of exactly n values in [lo, CONVT_MAX]; dflt fills out when it is absent. */
static tc_status read_ints(const tc__attrs *a, const char *name, int n, int64_t dflt, int64_t lo, int64_t *out,
                           tc__err *err) {
    const int64_t *v;
    size_t len = tc__attr_ints(a, name, &v);
    if (v == NULL) {
        if (tc__attr_has(a, name))
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute %s is not a list of integers", name);
        for (int i = 0; i < n; i++) out[i] = dflt;
        return TC_STATUS_OK;
    }
    if (len != (size_t)n)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute %s has %zu values, expected %d", name, len, n);
    for (int i = 0; i < n; i++) {
        if (v[i] < lo || v[i] > CONVT_MAX)
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute %s[%d] is %lld, expected %lld to 2^40", name, i,
                            (long long)v[i], (long long)lo);
        out[i] = v[i];
    }
    return TC_STATUS_OK;
}

static tc_status read_auto_pad(const tc__attrs *a, auto_pad *out, tc__err *err) {
    const char *s = tc__attr_string(a, "auto_pad", "NOTSET");
    if (strcmp(s, "NOTSET") == 0 || s[0] == '\0') *out = AP_NOTSET;
    else if (strcmp(s, "SAME_UPPER") == 0) *out = AP_SAME_UPPER;
    else if (strcmp(s, "SAME_LOWER") == 0) *out = AP_SAME_LOWER;
    else if (strcmp(s, "VALID") == 0) *out = AP_VALID;
    else
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                        "attribute auto_pad is '%s', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID", s);
    return TC_STATUS_OK;
}

/* Reads kernel_shape (optional) against the weight's spatial dims wk (-1 unknown) into g->kernel. */
static tc_status read_kernel(const tc__attrs *a, int nsp, const int64_t *wk, tc__convt_geom *g, tc__err *err) {
    const int64_t *ks;
    size_t n = tc__attr_ints(a, "kernel_shape", &ks);
    if (ks != NULL && n != (size_t)nsp)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute kernel_shape has %zu values, expected %d", n, nsp);
    for (int d = 0; d < nsp; d++) {
        if (wk[d] == 0 || wk[d] > CONVT_MAX)
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "weight W has spatial dim %d of size %lld, expected 1 to 2^40",
                            d + 2, (long long)wk[d]);
        g->kernel[d] = wk[d] > 0 ? wk[d] : -1;
        if (ks == NULL) continue;
        if (ks[d] < 1 || ks[d] > CONVT_MAX)
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute kernel_shape[%d] is %lld, expected 1 to 2^40", d,
                            (long long)ks[d]);
        if (wk[d] > 0 && ks[d] != wk[d])
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                            "attribute kernel_shape[%d] is %lld but the weight's dim %d is %lld", d, (long long)ks[d],
                            d + 2, (long long)wk[d]);
        g->kernel[d] = ks[d];
    }
    return TC_STATUS_OK;
}

/* full = stride * (in - 1) + out_pad + (kernel - 1) * dilation + 1, or -1 when unknown; fails past 2^50. */
static tc_status full_size(const tc__convt_geom *g, int d, int64_t *full, tc__err *err) {
    *full = -1;
    if (g->in[d] < 0 || g->kernel[d] < 0) return TC_STATUS_OK;
    if (g->in[d] < 1)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "input X has spatial dim %d of size 0", d + 2);
    int64_t a, b, v;
    bool ovf = tc__mul_overflow_i64(g->stride[d], g->in[d] - 1, &a) ||
               tc__mul_overflow_i64(g->kernel[d] - 1, g->dilation[d], &b) || tc__add_overflow_i64(a, b, &v) ||
               tc__add_overflow_i64(v, g->out_pad[d] + 1, &v);
    if (ovf) v = INT64_MAX;
    if (v > ((int64_t)1 << 50))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                        "spatial dim %d: output size %lld (input %lld, stride %lld, kernel %lld, dilation %lld) is too "
                        "large",
                        d + 2, (long long)v, (long long)g->in[d], (long long)g->stride[d], (long long)g->kernel[d],
                        (long long)g->dilation[d]);
    *full = v;
    return TC_STATUS_OK;
}

/* Splits total padding: SAME_UPPER puts the larger half at the end, the others at the begin; negative pads nothing. */
static int64_t split_begin(int64_t total, auto_pad ap) {
    if (total <= 0) return 0;
    return ap == AP_SAME_UPPER ? total / 2 : total - total / 2;
}

tc_status tc__convt_geom_resolve(const tc__attrs *a, int nsp, const int64_t *in, const int64_t *wk, tc__convt_geom *g,
                                 tc__err *err) {
    memset(g, 0, sizeof *g);
    if (nsp < 1 || nsp > TC_MAX_RANK - 2)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "%d spatial dims, expected 1 to %d", nsp, TC_MAX_RANK - 2);
    g->nsp = nsp;
    g->group = tc__attr_int(a, "group", 1);
    if (g->group < 1 || g->group > CONVT_MAX)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute group is %lld, expected 1 to 2^40",
                        (long long)g->group);
    tc_status st;
    auto_pad ap = AP_NOTSET;
    int64_t pads[2 * TC_MAX_RANK];
    if ((st = read_kernel(a, nsp, wk, g, err)) != TC_STATUS_OK) return st;
    if ((st = read_ints(a, "strides", nsp, 1, 1, g->stride, err)) != TC_STATUS_OK) return st;
    if ((st = read_ints(a, "dilations", nsp, 1, 1, g->dilation, err)) != TC_STATUS_OK) return st;
    if ((st = read_ints(a, "output_padding", nsp, 0, 0, g->out_pad, err)) != TC_STATUS_OK) return st;
    if ((st = read_ints(a, "pads", 2 * nsp, 0, 0, pads, err)) != TC_STATUS_OK) return st;
    if ((st = read_auto_pad(a, &ap, err)) != TC_STATUS_OK) return st;

    const int64_t *os;
    size_t nos = tc__attr_ints(a, "output_shape", &os);
    if (os == NULL && tc__attr_has(a, "output_shape"))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute output_shape is not a list of integers");
    if (os != NULL && nos != (size_t)nsp && nos != (size_t)nsp + 2)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute output_shape has %zu values, expected %d (or %d)",
                        nos, nsp, nsp + 2);
    const int64_t *osp = os != NULL ? os + (nos - (size_t)nsp) : NULL;

    for (int d = 0; d < nsp; d++) {
        if (g->out_pad[d] >= g->stride[d] && g->out_pad[d] >= g->dilation[d])
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                            "attribute output_padding[%d] is %lld, expected less than the stride (%lld) or the dilation "
                            "(%lld)",
                            d, (long long)g->out_pad[d], (long long)g->stride[d], (long long)g->dilation[d]);
        if (in[d] > CONVT_MAX)
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "input X has spatial dim %d of size %lld, expected at most 2^40",
                            d + 2, (long long)in[d]);
        g->in[d] = in[d] >= 0 ? in[d] : -1;
        g->out[d] = -1;
        int64_t full;
        if ((st = full_size(g, d, &full, err)) != TC_STATUS_OK) return st;
        if (osp != NULL) {
            if (osp[d] < 1 || osp[d] > CONVT_MAX)
                return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute output_shape[%zu] is %lld, expected 1 to 2^40",
                                (size_t)d + (nos - (size_t)nsp), (long long)osp[d]);
            g->out[d] = osp[d];
            if (full >= 0) g->pad_begin[d] = split_begin(full - osp[d], ap);
        } else if (ap == AP_SAME_UPPER || ap == AP_SAME_LOWER) {
            if (g->in[d] >= 0 && (tc__mul_overflow_i64(g->in[d], g->stride[d], &g->out[d]) || g->out[d] > ((int64_t)1 << 50)))
                return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "spatial dim %d: input size %lld times stride %lld is too large",
                                d + 2, (long long)g->in[d], (long long)g->stride[d]);
            if (full >= 0) g->pad_begin[d] = split_begin(full - g->out[d], ap);
        } else if (ap == AP_VALID) {
            g->out[d] = full;
        } else {
            g->pad_begin[d] = pads[d];
            if (full >= 0) {
                g->out[d] = full - pads[d] - pads[nsp + d];
                if (g->out[d] < 1)
                    return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                                    "spatial dim %d: pads %lld+%lld leave no output of the full size %lld", d + 2,
                                    (long long)pads[d], (long long)pads[nsp + d], (long long)full);
            }
        }
    }
    return TC_STATUS_OK;
}
