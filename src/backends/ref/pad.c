/*
 * pad.c - reference Pad: modes constant, reflect, edge and wrap; pads from the
 * attribute (opset < 11) or input 1, constant_value input (attribute "value"
 * before opset 11), axes input (opset 18). Negative pads crop first; the
 * padding modes then see the cropped tensor. Works on raw element bytes, so
 * every dtype is supported.
 */
#include <string.h>

#include "backends/ref/ref.h"

typedef enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP } pad_mode;

/* Maps index i (may be outside [0, m)) into [0, m) per mode, or -1 for the constant. */
static int64_t map_index(pad_mode mode, int64_t i, int64_t m) {
    if (i >= 0 && i < m) return i;
    switch (mode) {
    case PAD_CONSTANT: return -1;
    case PAD_EDGE: return i < 0 ? 0 : m - 1;
    case PAD_WRAP: return ((i % m) + m) % m;
    case PAD_REFLECT: {
        if (m == 1) return 0;
        int64_t p = 2 * (m - 1);
        int64_t r = ((i % p) + p) % p;
        return r < m ? r : p - r;
    }
    }
    return -1;
}

/* Reads pads (begin..., end...) for every axis of a rank-r tensor into pb/pe. */
static tc_status read_pads(const tc__kernel_ctx *ctx, int32_t r, int64_t *pb, int64_t *pe) {
    int64_t raw[2 * TC_MAX_RANK];
    int64_t npads;
    for (int32_t d = 0; d < r; d++) pb[d] = pe[d] = 0;
    if (ctx->opset < 11) {
        const int64_t *p;
        size_t n = tc__attr_ints(ctx->attrs, "pads", &p);
        if (p == NULL) n = tc__attr_ints(ctx->attrs, "paddings", &p);
        if (p == NULL) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute pads is required");
        if (n != (size_t)(2 * r))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute pads has %zu values, expected %d", n, 2 * r);
        for (int32_t d = 0; d < r; d++) {
            pb[d] = p[d];
            pe[d] = p[r + d];
        }
        return TC_STATUS_OK;
    }
    const tc__tensor *pt = ctx->n_in > 1 ? ctx->in[1] : NULL;
    if (pt == NULL) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input pads is required");
    if ((pt->dtype != TC_DTYPE_INT64 && pt->dtype != TC_DTYPE_INT32) || pt->rank > 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input pads must be a 1-D int64 tensor");
    npads = tc__tensor_numel(pt);
    if (npads < 0 || npads > 2 * TC_MAX_RANK)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input pads has %lld values, too many", (long long)npads);
    for (int64_t i = 0; i < npads; i++) raw[i] = tc__tensor_get_i64(pt, i);

    int32_t axes[TC_MAX_RANK];
    int64_t naxes = r;
    for (int32_t d = 0; d < r; d++) axes[d] = d;
    const tc__tensor *at = ctx->opset >= 18 && ctx->n_in > 3 ? ctx->in[3] : NULL;
    if (at != NULL) {
        if ((at->dtype != TC_DTYPE_INT64 && at->dtype != TC_DTYPE_INT32) || at->rank > 1)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input axes must be a 1-D int32 or int64 tensor");
        naxes = tc__tensor_numel(at);
        if (naxes < 0 || naxes > r)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input axes has %lld values for rank %d",
                            (long long)naxes, (int)r);
        for (int64_t i = 0; i < naxes; i++) {
            int64_t a = tc__tensor_get_i64(at, i);
            if (a < -r || a >= r)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axes[%lld] = %lld is out of range for rank %d",
                                (long long)i, (long long)a, (int)r);
            axes[i] = (int32_t)(a < 0 ? a + r : a);
            for (int64_t j = 0; j < i; j++)
                if (axes[j] == axes[i])
                    return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axis %d appears twice in axes", (int)axes[i]);
        }
    }
    if (npads != 2 * naxes)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "pads has %lld values, expected %lld", (long long)npads,
                        (long long)(2 * naxes));
    for (int64_t i = 0; i < naxes; i++) {
        pb[axes[i]] = raw[i];
        pe[axes[i]] = raw[naxes + i];
    }
    return TC_STATUS_OK;
}

/* The padding value as one element of dtype x->dtype in buf (zero when not given). */
static tc_status read_constant(const tc__kernel_ctx *ctx, const tc__tensor *x, unsigned char *buf) {
    size_t es = tc_dtype_size(x->dtype);
    memset(buf, 0, 16);
    if (ctx->opset < 11) {
        tc__tensor one = {.dtype = x->dtype, .rank = 0, .data = buf, .nbytes = es};
        tc__tensor_set_f64(&one, 0, tc__attr_float(ctx->attrs, "value", 0.0f));
        return TC_STATUS_OK;
    }
    const tc__tensor *cv = ctx->n_in > 2 ? ctx->in[2] : NULL;
    if (cv == NULL || tc__tensor_numel(cv) == 0) return TC_STATUS_OK;
    if (cv->dtype != x->dtype)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "constant_value has data type %s, expected %s",
                        tc_dtype_name(cv->dtype) ? tc_dtype_name(cv->dtype) : "?", tc_dtype_name(x->dtype));
    memcpy(buf, cv->data, es);
    return TC_STATUS_OK;
}

tc_status tc__ref_Pad(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 1 || ctx->in[0] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects input data and output");
    const tc__tensor *x = ctx->in[0];
    tc__tensor *y = ctx->out[0];
    const size_t es = tc_dtype_size(x->dtype);
    if (es == 0 || es > 16) return tc__ref_unsupported_dtype(ctx, 0, x->dtype);
    if (y->dtype != x->dtype || y->rank != x->rank)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output must have the data type and rank of the input");
    const char *ms = tc__attr_string(ctx->attrs, "mode", "constant");
    pad_mode mode;
    if (strcmp(ms, "constant") == 0) mode = PAD_CONSTANT;
    else if (strcmp(ms, "reflect") == 0) mode = PAD_REFLECT;
    else if (strcmp(ms, "edge") == 0) mode = PAD_EDGE;
    else if (strcmp(ms, "wrap") == 0) mode = PAD_WRAP;
    else return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "mode '%s' is not supported", ms);

    const int32_t r = x->rank;
    int64_t pb[TC_MAX_RANK], pe[TC_MAX_RANK];
    unsigned char cval[16];
    tc_status st = read_pads(ctx, r, pb, pe);
    if (st == TC_STATUS_OK) st = read_constant(ctx, x, cval);
    if (st != TC_STATUS_OK) return st;
    if (r == 0) {
        memcpy(y->data, x->data, es);
        return TC_STATUS_OK;
    }
    int64_t total = 0;
    for (int32_t d = 0; d < r; d++) {
        int64_t n = x->dims[d];
        if (pb[d] < -n || pe[d] < -n || pb[d] > TC__MAX_NUMEL || pe[d] > TC__MAX_NUMEL || n + pb[d] + pe[d] != y->dims[d])
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                            "axis %d: input size %lld with pads %lld, %lld does not give output size %lld", (int)d,
                            (long long)n, (long long)pb[d], (long long)pe[d], (long long)y->dims[d]);
        int64_t m = n + (pb[d] < 0 ? pb[d] : 0) + (pe[d] < 0 ? pe[d] : 0);
        if (m <= 0 && y->dims[d] > 0 && mode != PAD_CONSTANT)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "mode %s cannot pad axis %d, which is empty after cropping",
                            ms, (int)d);
        total += y->dims[d];
    }
    /* map[d][o]: input index along axis d of output index o, or -1 for the constant. */
    int64_t *maps = tc__kernel_alloc(ctx, sizeof(int64_t) * (size_t)(total > 0 ? total : 1));
    if (maps == NULL) return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of memory for Pad index maps");
    int64_t *map[TC_MAX_RANK];
    int64_t istr[TC_MAX_RANK];
    int64_t *cursor = maps;
    for (int32_t d = 0; d < r; d++) {
        map[d] = cursor;
        cursor += y->dims[d];
        int64_t crop = pb[d] < 0 ? -pb[d] : 0, lead = pb[d] > 0 ? pb[d] : 0;
        int64_t m = x->dims[d] - crop - (pe[d] < 0 ? -pe[d] : 0);
        for (int64_t o = 0; o < y->dims[d]; o++) {
            int64_t i = m > 0 ? map_index(mode, o - lead, m) : -1;
            map[d][o] = i < 0 ? -1 : i + crop;
        }
    }
    istr[r - 1] = 1;
    for (int32_t d = r - 2; d >= 0; d--) istr[d] = istr[d + 1] * x->dims[d + 1];

    const int32_t last = r - 1;
    const int64_t ol = y->dims[last];
    const int64_t rows = ol > 0 ? tc__tensor_numel(y) / ol : 0;
    const unsigned char *src = x->data;
    unsigned char *dst = y->data;
    int64_t o[TC_MAX_RANK] = {0};
    for (int64_t row = 0; row < rows; row++) {
        unsigned char *out = dst + (size_t)(row * ol) * es;
        int64_t base = 0;
        bool constant_row = false;
        for (int32_t d = 0; d < last; d++) {
            int64_t i = map[d][o[d]];
            if (i < 0) constant_row = true;
            base += i * istr[d];
        }
        if (constant_row) {
            for (int64_t j = 0; j < ol; j++) memcpy(out + (size_t)j * es, cval, es);
        } else {
            const unsigned char *in = src + (size_t)base * es;
            for (int64_t j = 0; j < ol;) {
                int64_t i = map[last][j];
                if (i < 0) {
                    memcpy(out + (size_t)j * es, cval, es);
                    j++;
                    continue;
                }
                int64_t run = 1; /* copy a run of consecutive input elements at once */
                while (j + run < ol && map[last][j + run] == i + run) run++;
                memcpy(out + (size_t)j * es, in + (size_t)i * es, (size_t)run * es);
                j += run;
            }
        }
        for (int32_t d = last - 1; d >= 0; d--) {
            if (++o[d] < y->dims[d]) break;
            o[d] = 0;
        }
    }
    tc__kernel_free(ctx, maps);
    return TC_STATUS_OK;
}
