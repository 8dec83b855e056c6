/*
 * infer_resize_pad.c - shape inference for Resize (scales or sizes, axes,
 * keep_aspect_ratio_policy) and Pad (pads as attribute before opset 11, as an
 * input from opset 11, axes input from opset 18, negative pads crop).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph/op_schema.h"

/* True when s is one of the NULL-terminated list. */
static bool one_of(const char *s, const char *const *list) {
    for (; *list != NULL; list++)
        if (strcmp(s, *list) == 0) return true;
    return false;
}

/* Known element count of a value (from its value or its shape), or -1. */
static int64_t known_numel(const tc__vinfo *v) {
    if (v == NULL) return -1;
    if (v->value != NULL) return tc__tensor_numel(v->value);
    if (v->shape.rank < 0) return -1;
    int64_t n = 1;
    for (int32_t i = 0; i < v->shape.rank; i++) {
        if (!tc__dim_is_known(v->shape.dims[i])) return -1;
        n *= v->shape.dims[i].value;
        if (n > TC__MAX_NUMEL) return -1;
    }
    return n;
}

/*
 * Normalises axes (possibly negative) against rank into out; fails on out of range
 * or repeated axes.
 */
static tc_status normalize_axes(tc__infer_ctx *ctx, const int64_t *axes, int64_t n, int32_t rank, int32_t *out) {
    for (int64_t i = 0; i < n; i++) {
        tc_status st = tc__infer_axis(ctx, axes[i], rank, &out[i]);
        if (st != TC_STATUS_OK) return st;
        for (int64_t j = 0; j < i; j++)
            if (out[j] == out[i])
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axis %d appears twice in axes", (int)out[i]);
    }
    return TC_STATUS_OK;
}

/* ---- Pad ------------------------------------------------------------------- */

tc_status tc__infer_Pad(tc__infer_ctx *ctx) {
    static const char *const modes[] = {"constant", "reflect", "edge", "wrap", NULL};
    tc_status st;
    bool pads_input = ctx->opset >= 11;
    if ((st = tc__infer_check_arity(ctx, pads_input ? 2 : 1, pads_input ? (ctx->opset >= 18 ? 4 : 3) : 1, 1)) !=
        TC_STATUS_OK)
        return st;
    const char *mode = tc__attr_string(ctx->attrs, "mode", "constant");
    if (!one_of(mode, modes))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "attribute mode is '%s', expected constant, reflect, edge or wrap", mode);
    const tc__vinfo *x = ctx->in[0];
    const tc__vinfo *cv = pads_input ? tc__infer_input(ctx, 2) : NULL;
    if (cv != NULL && cv->dtype != TC_DTYPE_UNDEFINED && x->dtype != TC_DTYPE_UNDEFINED && cv->dtype != x->dtype) {
        const char *a = tc_dtype_name(cv->dtype), *b = tc_dtype_name(x->dtype);
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "constant_value has data type %s, expected %s like data",
                        a ? a : "?", b ? b : "?");
    }
    ctx->out[0].dtype = x->dtype;
    tc__shape *out = &ctx->out[0].shape;
    int32_t rank = x->shape.rank;

    /* pads: attribute (opset < 11, called "paddings" in opset 1) or input 1. */
    int64_t pads[2 * TC_MAX_RANK];
    int64_t npads = -1;
    if (!pads_input) {
        const int64_t *p;
        size_t n = tc__attr_ints(ctx->attrs, "pads", &p);
        if (p == NULL) n = tc__attr_ints(ctx->attrs, "paddings", &p);
        if (p == NULL) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute pads is required");
        if (n > 2 * TC_MAX_RANK)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute pads has %zu values, too many", n);
        npads = (int64_t)n;
        memcpy(pads, p, n * sizeof *p);
    } else {
        const tc__vinfo *pv = ctx->in[1];
        if (pv->dtype != TC_DTYPE_UNDEFINED && pv->dtype != TC_DTYPE_INT64)
            return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "input pads has data type %s, expected int64",
                            tc_dtype_name(pv->dtype) ? tc_dtype_name(pv->dtype) : "?");
        if (pv->shape.rank > 1)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input pads has rank %d, expected 1",
                            (int)pv->shape.rank);
        npads = tc__infer_const_ints(pv, pads, 2 * TC_MAX_RANK);
    }

    /* axes (opset 18): which dims the pads apply to. */
    int32_t axes[TC_MAX_RANK];
    int64_t naxes = -1; /* -1: not known */
    const tc__vinfo *av = pads_input ? tc__infer_input(ctx, 3) : NULL;
    if (av == NULL && rank >= 0) {
        naxes = rank;
        for (int32_t i = 0; i < rank; i++) axes[i] = i;
    } else if (av != NULL && rank >= 0) {
        int64_t raw[TC_MAX_RANK];
        naxes = tc__infer_const_ints(av, raw, TC_MAX_RANK);
        if (naxes >= 0 && (st = normalize_axes(ctx, raw, naxes, rank, axes)) != TC_STATUS_OK) return st;
    }
    if (rank < 0 && npads >= 0 && av == NULL) rank = (int32_t)(npads / 2);
    if (rank < 0) {
        out->rank = TC__RANK_UNKNOWN;
        return TC_STATUS_OK;
    }
    if (rank == 0 && npads > 0)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "cannot pad a scalar (rank 0) input");
    out->rank = rank;
    for (int32_t i = 0; i < rank; i++) out->dims[i] = x->shape.rank >= 0 ? x->shape.dims[i] : tc__dim_unknown();
    if (naxes < 0) {
        for (int32_t i = 0; i < rank; i++) out->dims[i] = tc__dim_unknown();
        return TC_STATUS_OK;
    }
    if (npads >= 0 && npads != 2 * naxes)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "pads has %lld values, expected %lld (2 per padded axis)",
                        (long long)npads, (long long)(2 * naxes));
    for (int64_t i = 0; i < naxes; i++) {
        int32_t ax = axes[i];
        if (npads < 0) {
            out->dims[ax] = tc__dim_unknown();
            continue;
        }
        int64_t add;
        if (tc__add_overflow_i64(pads[i], pads[naxes + i], &add) || add > TC__MAX_NUMEL || add < -TC__MAX_NUMEL)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "pads %lld and %lld on axis %d are too large",
                            (long long)pads[i], (long long)pads[naxes + i], (int)ax);
        tc__dim in = out->dims[ax];
        if (!tc__dim_is_known(in)) {
            if (add != 0) out->dims[ax] = tc__dim_unknown();
            continue;
        }
        int64_t o = in.value + add;
        if (o < 0 || pads[i] < -in.value || pads[naxes + i] < -in.value)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                            "pads %lld and %lld on axis %d crop more than its size %lld", (long long)pads[i],
                            (long long)pads[naxes + i], (int)ax, (long long)in.value);
        int64_t kept = in.value + (pads[i] < 0 ? pads[i] : 0) + (pads[naxes + i] < 0 ? pads[naxes + i] : 0);
        if (o > 0 && kept <= 0 && strcmp(mode, "constant") != 0)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "mode %s cannot pad axis %d, which is empty after cropping",
                            mode, (int)ax);
        out->dims[ax] = tc__dim_known(o);
    }
    return TC_STATUS_OK;
}

/* ---- Resize ---------------------------------------------------------------- */

/* Validates the string attributes of Resize. */
static tc_status resize_check_attrs(tc__infer_ctx *ctx) {
    static const char *const modes[] = {"nearest", "linear", "cubic", NULL};
    static const char *const ctms[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                       "asymmetric", "tf_crop_and_resize", "tf_half_pixel_for_nn", NULL};
    static const char *const nearest_modes[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", NULL};
    static const char *const policies[] = {"stretch", "not_larger", "not_smaller", NULL};
    const char *s = tc__attr_string(ctx->attrs, "mode", "nearest");
    if (!one_of(s, modes))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute mode is '%s', expected nearest, linear or cubic",
                        s);
    s = tc__attr_string(ctx->attrs, "coordinate_transformation_mode", "half_pixel");
    if (!one_of(s, ctms))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute coordinate_transformation_mode is '%s', "
                        "which is not a known mode", s);
    s = tc__attr_string(ctx->attrs, "nearest_mode", "round_prefer_floor");
    if (!one_of(s, nearest_modes))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "attribute nearest_mode is '%s', expected round_prefer_floor, round_prefer_ceil, floor or ceil",
                        s);
    s = tc__attr_string(ctx->attrs, "keep_aspect_ratio_policy", "stretch");
    if (!one_of(s, policies))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "attribute keep_aspect_ratio_policy is '%s', expected stretch, not_larger or not_smaller", s);
    return TC_STATUS_OK;
}

tc_status tc__infer_Resize(tc__infer_ctx *ctx) {
    tc_status st;
    bool legacy = ctx->opset < 11; /* Resize-10: (X, scales) */
    int min_in = legacy ? 2 : (ctx->opset >= 13 ? 1 : 3);
    if ((st = tc__infer_check_arity(ctx, min_in, legacy ? 2 : 4, 1)) != TC_STATUS_OK) return st;
    if ((st = resize_check_attrs(ctx)) != TC_STATUS_OK) return st;
    const tc__vinfo *x = ctx->in[0];
    const tc__vinfo *scales = tc__infer_input(ctx, legacy ? 1 : 2);
    const tc__vinfo *sizes = legacy ? NULL : tc__infer_input(ctx, 3);
    /* An empty scales or sizes tensor means "not given". */
    int64_t n_scales = known_numel(scales), n_sizes = known_numel(sizes);
    if (n_scales == 0) scales = NULL;
    if (n_sizes == 0) sizes = NULL;
    if (scales != NULL && sizes != NULL) {
        if (n_scales > 0 && n_sizes > 0)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "only one of scales and sizes may be given, got both");
        if (n_sizes > 0) scales = NULL;
        else if (n_scales > 0) sizes = NULL;
        else {
            /* Both of unknown size: cannot tell which one is used. */
            ctx->out[0].dtype = x->dtype;
            ctx->out[0].shape.rank = x->shape.rank;
            for (int32_t i = 0; i < x->shape.rank; i++) ctx->out[0].shape.dims[i] = tc__dim_unknown();
            return TC_STATUS_OK;
        }
    }
    if (scales == NULL && sizes == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "one of scales and sizes must be given (non-empty)");
    bool use_sizes = sizes != NULL;

    ctx->out[0].dtype = x->dtype;
    tc__shape *out = &ctx->out[0].shape;
    int32_t rank = x->shape.rank;

    const int64_t *axes_attr = NULL;
    size_t n_axes_attr = ctx->opset >= 18 ? tc__attr_ints(ctx->attrs, "axes", &axes_attr) : 0;
    int64_t n_given = use_sizes ? n_sizes : n_scales; /* -1 when unknown */
    if (rank < 0) {
        /* Without axes, the number of scales or sizes is the rank. */
        if (axes_attr != NULL || n_given <= 0 || n_given > TC_MAX_RANK) {
            out->rank = TC__RANK_UNKNOWN;
            return TC_STATUS_OK;
        }
        rank = (int32_t)n_given;
    }
    int32_t axes[TC_MAX_RANK];
    int64_t naxes;
    if (axes_attr != NULL) {
        if (n_axes_attr > (size_t)rank)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute axes has %zu values for rank %d", n_axes_attr,
                            (int)rank);
        naxes = (int64_t)n_axes_attr;
        if ((st = normalize_axes(ctx, axes_attr, naxes, rank, axes)) != TC_STATUS_OK) return st;
    } else {
        naxes = rank;
        for (int32_t i = 0; i < rank; i++) axes[i] = i;
    }
    if (n_given >= 0 && n_given != naxes)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s has %lld values, expected %lld (%s)",
                        use_sizes ? "sizes" : "scales", (long long)n_given, (long long)naxes,
                        axes_attr ? "one per axis in axes" : "the input rank");
    out->rank = rank;
    for (int32_t i = 0; i < rank; i++) out->dims[i] = x->shape.rank >= 0 ? x->shape.dims[i] : tc__dim_unknown();

    if (!use_sizes) {
        const tc__tensor *sv = scales->value;
        if (sv != NULL && !tc__dtype_is_float(sv->dtype))
            return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "input scales must be a float tensor");
        for (int64_t i = 0; i < naxes; i++) {
            int32_t ax = axes[i];
            if (sv == NULL) {
                out->dims[ax] = tc__dim_unknown();
                continue;
            }
            double s = tc__tensor_get_f64(sv, i);
            if (!(s > 0.0) || !isfinite(s))
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "scales[%lld] is %g, expected > 0", (long long)i, s);
            if (s == 1.0) continue; /* keeps the dim, even a symbolic one */
            tc__dim in = out->dims[ax];
            if (!tc__dim_is_known(in)) {
                out->dims[ax] = tc__dim_unknown();
                continue;
            }
            double o = floor(s * (double)in.value);
            if (o > (double)TC__MAX_NUMEL)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "scales[%lld] = %g makes axis %d too large",
                                (long long)i, s, (int)ax);
            out->dims[ax] = tc__dim_known((int64_t)o);
        }
        return TC_STATUS_OK;
    }

    /* sizes */
    if (sizes->dtype != TC_DTYPE_UNDEFINED && sizes->dtype != TC_DTYPE_INT64)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "input sizes must be an int64 tensor");
    const char *policy = tc__attr_string(ctx->attrs, "keep_aspect_ratio_policy", "stretch");
    bool stretch = ctx->opset < 18 || strcmp(policy, "stretch") == 0;
    int64_t sz[TC_MAX_RANK];
    int64_t nsz = tc__infer_const_ints(sizes, sz, TC_MAX_RANK);
    if (nsz < 0) {
        /* Partly symbolic sizes (Concat of Shape pieces) still give dims in stretch mode. */
        bool sym = stretch && sizes->symval_len == naxes;
        for (int64_t i = 0; i < naxes; i++) out->dims[axes[i]] = sym ? sizes->symval[i] : tc__dim_unknown();
        return TC_STATUS_OK;
    }
    for (int64_t i = 0; i < nsz; i++)
        if (sz[i] < 0)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "sizes[%lld] is %lld, expected >= 0", (long long)i,
                            (long long)sz[i]);
    for (int64_t i = 0; i < naxes; i++)
        if (out->dims[axes[i]].value == 0 && sz[i] != 0)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "cannot resize empty axis %d to %lld", (int)axes[i],
                            (long long)sz[i]);
    if (stretch) {
        for (int64_t i = 0; i < naxes; i++) out->dims[axes[i]] = tc__dim_known(sz[i]);
        return TC_STATUS_OK;
    }
    /* not_larger / not_smaller: one scale for all axes, from the known input dims. */
    double scale = 0.0;
    for (int64_t i = 0; i < naxes; i++) {
        tc__dim in = out->dims[axes[i]];
        if (!tc__dim_is_known(in) || in.value == 0) {
            for (int64_t j = 0; j < naxes; j++) out->dims[axes[j]] = tc__dim_unknown();
            return TC_STATUS_OK;
        }
        double s = (double)sz[i] / (double)in.value;
        bool better = strcmp(policy, "not_larger") == 0 ? s < scale : s > scale; /* min or max */
        if (i == 0 || better) scale = s;
    }
    for (int64_t i = 0; i < naxes; i++) {
        int64_t in = out->dims[axes[i]].value;
        out->dims[axes[i]] = tc__dim_known((int64_t)floor(scale * (double)in + 0.5));
    }
    return TC_STATUS_OK;
}
