/* lrn_params.c - reads and validates LRN's attributes (ONNX defaults: alpha 1e-4, beta 0.75, bias 1). */
#include "core/lrn_params.h"

#include <math.h>

/* Reads a float attribute with a default; fails when it has another kind or is not finite. */
static tc_status read_float(const tc__attrs *attrs, const char *name, float dflt, double *out, tc__err *err) {
    const tc__attr *a = tc__attr_find(attrs, name);
    if (a != NULL && a->kind != TC__ATTR_FLOAT)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute %s must be a float", name);
    const float v = a != NULL ? a->f : dflt;
    if (!isfinite(v)) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute %s is %g, expected a finite value", name, v);
    *out = v;
    return TC_STATUS_OK;
}

tc_status tc__lrn_params_read(const tc__attrs *attrs, tc__lrn_params *p, tc__err *err) {
    const tc__attr *s = tc__attr_find(attrs, "size");
    if (s == NULL) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute size is required");
    if (s->kind != TC__ATTR_INT) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute size must be an integer");
    if (s->i < 1 || s->i > ((int64_t)1 << 40))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute size is %lld, expected 1 to 2^40", (long long)s->i);
    p->size = s->i;
    p->before = (s->i - 1) / 2;
    p->after = s->i / 2; /* ceil((size - 1) / 2) */
    tc_status st = read_float(attrs, "alpha", 1e-4f, &p->alpha, err);
    if (st == TC_STATUS_OK) st = read_float(attrs, "beta", 0.75f, &p->beta, err);
    if (st == TC_STATUS_OK) st = read_float(attrs, "bias", 1.0f, &p->bias, err);
    return st;
}
