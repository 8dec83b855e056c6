/*
 * resize.c - reference Resize: modes nearest (four rounding rules), linear and
 * cubic (N-d, separable), optional antialias for linear/cubic downsampling,
 * exclude_outside, every coordinate_transformation_mode including
 * tf_crop_and_resize with roi and extrapolation_value, scales or sizes, axes and
 * keep_aspect_ratio_policy (opset 18). Resize-10 (X, scales) is asymmetric.
 *
 * For each axis and output index the kernel first lists the input taps and
 * their weights (clamped to the edge, as the ONNX reference pads with "edge");
 * an output element is then the sum over the product of its axes' taps.
 */
#include <math.h>
#include <string.h>

#include "backends/ref/dense_util.h"
#include "backends/ref/ref.h"

typedef enum rs_mode { RS_NEAREST, RS_LINEAR, RS_CUBIC } rs_mode;
typedef enum rs_coord {
    CT_HALF_PIXEL,
    CT_HALF_PIXEL_SYMMETRIC,
    CT_PYTORCH_HALF_PIXEL,
    CT_ALIGN_CORNERS,
    CT_ASYMMETRIC,
    CT_TF_CROP_AND_RESIZE,
    CT_TF_HALF_PIXEL_FOR_NN,
} rs_coord;
typedef enum rs_nearest { NM_ROUND_PREFER_FLOOR, NM_ROUND_PREFER_CEIL, NM_FLOOR, NM_CEIL, NM_SIMPLE } rs_nearest;

typedef struct rs_params {
    rs_mode mode;
    rs_coord coord;
    rs_nearest nearest;
    double cubic_a;
    bool exclude_outside;
    bool antialias;
    double extrapolation;
    int32_t rank;
    double scale[TC_MAX_RANK];
    double length_resized[TC_MAX_RANK]; /* output length used by align_corners / tf_crop_and_resize */
    double roi_start[TC_MAX_RANK], roi_end[TC_MAX_RANK];
} rs_params;

/* Taps of one axis: for output index o, cnt[o] taps (or -1: extrapolate) at idx/w[o * stride ...]. */
typedef struct rs_axis {
    int64_t stride;
    int64_t *cnt;
    int64_t *idx;
    double *w;
} rs_axis;

/* ---- parameters ---------------------------------------------------------------- */

static tc_status parse_strings(const tc__kernel_ctx *ctx, rs_params *p) {
    const char *m = tc__attr_string(ctx->attrs, "mode", "nearest");
    if (strcmp(m, "nearest") == 0) p->mode = RS_NEAREST;
    else if (strcmp(m, "linear") == 0) p->mode = RS_LINEAR;
    else if (strcmp(m, "cubic") == 0) p->mode = RS_CUBIC;
    else return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "mode '%s' is not supported", m);
    if (ctx->opset < 11) {
        if (p->mode == RS_CUBIC) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "mode cubic needs opset >= 11");
        p->coord = CT_ASYMMETRIC;
        p->nearest = NM_SIMPLE;
        return TC_STATUS_OK;
    }
    static const struct {
        const char *name;
        rs_coord v;
    } coords[] = {{"half_pixel", CT_HALF_PIXEL},
                  {"half_pixel_symmetric", CT_HALF_PIXEL_SYMMETRIC},
                  {"pytorch_half_pixel", CT_PYTORCH_HALF_PIXEL},
                  {"align_corners", CT_ALIGN_CORNERS},
                  {"asymmetric", CT_ASYMMETRIC},
                  {"tf_crop_and_resize", CT_TF_CROP_AND_RESIZE},
                  {"tf_half_pixel_for_nn", CT_TF_HALF_PIXEL_FOR_NN}};
    const char *c = tc__attr_string(ctx->attrs, "coordinate_transformation_mode", "half_pixel");
    size_t i = 0;
    for (; i < sizeof coords / sizeof coords[0]; i++)
        if (strcmp(c, coords[i].name) == 0) break;
    if (i == sizeof coords / sizeof coords[0])
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "coordinate_transformation_mode '%s' is not supported", c);
    p->coord = coords[i].v;
    const char *n = tc__attr_string(ctx->attrs, "nearest_mode", "round_prefer_floor");
    if (strcmp(n, "round_prefer_floor") == 0) p->nearest = NM_ROUND_PREFER_FLOOR;
    else if (strcmp(n, "round_prefer_ceil") == 0) p->nearest = NM_ROUND_PREFER_CEIL;
    else if (strcmp(n, "floor") == 0) p->nearest = NM_FLOOR;
    else if (strcmp(n, "ceil") == 0) p->nearest = NM_CEIL;
    else return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "nearest_mode '%s' is not supported", n);
    return TC_STATUS_OK;
}

/* Fills axes[0..*naxes) from the axes attribute (opset 18) or all dims. */
static tc_status read_axes(const tc__kernel_ctx *ctx, int32_t rank, int32_t *axes, int32_t *naxes) {
    const int64_t *a = NULL;
    size_t n = ctx->opset >= 18 ? tc__attr_ints(ctx->attrs, "axes", &a) : 0;
    if (a == NULL) {
        for (int32_t i = 0; i < rank; i++) axes[i] = i;
        *naxes = rank;
        return TC_STATUS_OK;
    }
    if (n > (size_t)rank)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute axes has %zu values for rank %d", n, (int)rank);
    for (size_t i = 0; i < n; i++) {
        if (a[i] < -rank || a[i] >= rank)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axes[%zu] = %lld is out of range for rank %d", i,
                            (long long)a[i], (int)rank);
        axes[i] = (int32_t)(a[i] < 0 ? a[i] + rank : a[i]);
        for (size_t j = 0; j < i; j++)
            if (axes[j] == axes[i])
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axis %d appears twice in axes", (int)axes[i]);
    }
    *naxes = (int32_t)n;
    return TC_STATUS_OK;
}

/* Scales per axis from the scales or sizes input; checks the output shape against them. */
static tc_status read_scales(const tc__kernel_ctx *ctx, const tc__tensor *x, const tc__tensor *y, rs_params *p) {
    const int32_t rank = x->rank;
    int32_t axes[TC_MAX_RANK], naxes = 0;
    tc_status st = read_axes(ctx, rank, axes, &naxes);
    if (st != TC_STATUS_OK) return st;
    bool legacy = ctx->opset < 11;
    const tc__tensor *scales = ctx->n_in > (legacy ? 1 : 2) ? ctx->in[legacy ? 1 : 2] : NULL;
    const tc__tensor *sizes = !legacy && ctx->n_in > 3 ? ctx->in[3] : NULL;
    const tc__tensor *roi = !legacy && ctx->n_in > 1 ? ctx->in[1] : NULL;
    if (scales && tc__tensor_numel(scales) == 0) scales = NULL;
    if (sizes && tc__tensor_numel(sizes) == 0) sizes = NULL;
    if (roi && tc__tensor_numel(roi) == 0) roi = NULL;
    if ((scales == NULL) == (sizes == NULL))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "exactly one of scales and sizes must be non-empty");
    const tc__tensor *given = scales ? scales : sizes;
    if (tc__tensor_numel(given) != naxes)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s has %lld values, expected %d",
                        scales ? "scales" : "sizes", (long long)tc__tensor_numel(given), (int)naxes);
    if (scales && !tc__dtype_is_float(scales->dtype))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "scales must be a float tensor");
    if (sizes && sizes->dtype != TC_DTYPE_INT64)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "sizes must be an int64 tensor");

    p->rank = rank;
    for (int32_t d = 0; d < rank; d++) {
        p->scale[d] = 1.0;
        p->roi_start[d] = 0.0;
        p->roi_end[d] = 1.0;
    }
    if (scales) {
        for (int32_t i = 0; i < naxes; i++) {
            double s = tc__tensor_get_f64(scales, i);
            if (!(s > 0.0) || !isfinite(s))
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "scales[%d] is %g, expected > 0", (int)i, s);
            p->scale[axes[i]] = s;
        }
        for (int32_t d = 0; d < rank; d++) {
            p->length_resized[d] = p->scale[d] * (double)x->dims[d];
            if (p->length_resized[d] > (double)TC__MAX_NUMEL || y->dims[d] != (int64_t)floor(p->length_resized[d]))
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output dim %d is %lld, expected floor(%g * %lld)",
                                (int)d, (long long)y->dims[d], p->scale[d], (long long)x->dims[d]);
        }
    } else {
        const char *policy = ctx->opset >= 18 ? tc__attr_string(ctx->attrs, "keep_aspect_ratio_policy", "stretch")
                                              : "stretch";
        bool stretch = strcmp(policy, "stretch") == 0, not_larger = strcmp(policy, "not_larger") == 0;
        if (!stretch && !not_larger && strcmp(policy, "not_smaller") != 0)
            return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "keep_aspect_ratio_policy '%s' is not supported", policy);
        double common = 0.0;
        for (int32_t i = 0; i < naxes; i++) {
            int64_t in = x->dims[axes[i]], out = tc__tensor_get_i64(sizes, i);
            if (in == 0 && out != 0)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "cannot resize empty axis %d to %lld",
                                (int)axes[i], (long long)out);
            double s = in == 0 ? 1.0 : (double)out / (double)in;
            p->scale[axes[i]] = s;
            if (i == 0 || (not_larger ? s < common : s > common)) common = s;
        }
        for (int32_t d = 0; d < rank; d++) p->length_resized[d] = (double)x->dims[d];
        for (int32_t i = 0; i < naxes; i++) {
            int32_t d = axes[i];
            int64_t want = tc__tensor_get_i64(sizes, i);
            if (!stretch) {
                p->scale[d] = common;
                want = (int64_t)floor(common * (double)x->dims[d] + 0.5);
                p->length_resized[d] = common * (double)x->dims[d];
            } else {
                p->length_resized[d] = (double)want;
            }
            if (y->dims[d] != want)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output dim %d is %lld, expected %lld", (int)d,
                                (long long)y->dims[d], (long long)want);
        }
        for (int32_t d = 0; d < rank; d++)
            if (y->dims[d] != x->dims[d] && p->scale[d] == 1.0)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output dim %d is %lld, expected %lld", (int)d,
                                (long long)y->dims[d], (long long)x->dims[d]);
    }
    if (p->coord == CT_TF_CROP_AND_RESIZE) {
        if (roi == NULL)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "coordinate_transformation_mode tf_crop_and_resize needs roi");
        if (tc__tensor_numel(roi) != 2 * naxes || !tc__dtype_is_float(roi->dtype))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "roi must hold %d float values, got %lld", 2 * naxes,
                            (long long)tc__tensor_numel(roi));
        for (int32_t i = 0; i < naxes; i++) {
            p->roi_start[axes[i]] = tc__tensor_get_f64(roi, i);
            p->roi_end[axes[i]] = tc__tensor_get_f64(roi, naxes + i);
            if (!isfinite(p->roi_start[axes[i]]) || !isfinite(p->roi_end[axes[i]]))
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "roi values must be finite");
        }
    }
    return TC_STATUS_OK;
}

/* ---- per-axis taps ---------------------------------------------------------------- */

/* Input coordinate of output index o along axis d; *outside for tf_crop_and_resize beyond the input. */
static double original_coord(const rs_params *p, int d, int64_t o, int64_t in, int64_t out, bool *outside) {
    const double x = (double)o, s = p->scale[d], len = p->length_resized[d];
    *outside = false;
    switch (p->coord) {
    case CT_HALF_PIXEL: return (x + 0.5) / s - 0.5;
    case CT_HALF_PIXEL_SYMMETRIC: {
        double adjustment = (double)out / len;
        double offset = (double)in / 2.0 * (1.0 - adjustment);
        return offset + (x + 0.5) / s - 0.5;
    }
    case CT_PYTORCH_HALF_PIXEL: return out > 1 ? (x + 0.5) / s - 0.5 : 0.0;
    case CT_ALIGN_CORNERS: return len == 1.0 ? 0.0 : x * (double)(in - 1) / (len - 1.0);
    case CT_ASYMMETRIC: return x / s;
    case CT_TF_HALF_PIXEL_FOR_NN: return (x + 0.5) / s;
    case CT_TF_CROP_AND_RESIZE: {
        double r0 = p->roi_start[d], r1 = p->roi_end[d], v;
        if (len == 1.0) v = (r1 - r0) * (double)(in - 1) / 2.0;
        else v = x * (r1 - r0) * (double)(in - 1) / (len - 1.0);
        v += r0 * (double)(in - 1);
        *outside = v < 0.0 || v > (double)(in - 1);
        return v;
    }
    }
    return 0.0;
}

static int64_t nearest_index(rs_nearest nm, double x, double scale) {
    double f = floor(x);
    if (x == f) return (int64_t)f;
    double frac = x - f;
    switch (nm) {
    case NM_ROUND_PREFER_FLOOR: return (int64_t)f + (frac > 0.5);
    case NM_ROUND_PREFER_CEIL: return (int64_t)f + (frac >= 0.5);
    case NM_FLOOR: return (int64_t)f;
    case NM_CEIL: return (int64_t)f + 1;
    case NM_SIMPLE: return scale < 1.0 ? (int64_t)f + 1 : (int64_t)f;
    }
    return (int64_t)f;
}

/* Cubic convolution kernel (Keys) with parameter a at distance t >= 0. */
static double cubic_kernel(double t, double a) {
    if (t <= 1.0) return ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
    if (t < 2.0) return ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a;
    return 0.0;
}

/* Half-width (in input pixels) of the interpolation kernel along axis d. */
static int64_t tap_radius(const rs_params *p, int d) {
    double support = p->mode == RS_LINEAR ? 1.0 : 2.0;
    double s = p->antialias && p->scale[d] < 1.0 ? p->scale[d] : 1.0;
    return (int64_t)ceil(support / s);
}

static tc_status plan_axis(const tc__kernel_ctx *ctx, const rs_params *p, int d, int64_t in, int64_t out, rs_axis *ax) {
    int64_t radius = p->mode == RS_NEAREST ? 0 : tap_radius(p, d);
    if (radius > ((int64_t)1 << 20))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "antialias with scale %g on axis %d needs too many taps",
                        p->scale[d], d);
    ax->stride = radius == 0 ? 1 : 2 * radius;
    int64_t n;
    size_t bytes;
    if (tc__mul_overflow_i64(out > 0 ? out : 1, ax->stride, &n) || tc__mul_overflow_size((size_t)n, 8, &bytes))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output too large");
    ax->cnt = tc__kernel_alloc(ctx, sizeof(int64_t) * (size_t)(out > 0 ? out : 1));
    ax->idx = tc__kernel_alloc(ctx, bytes);
    ax->w = tc__kernel_alloc(ctx, bytes);
    if (!ax->cnt || !ax->idx || !ax->w) return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of memory for Resize taps");
    const double aa = p->antialias && p->scale[d] < 1.0 ? p->scale[d] : 1.0;
    for (int64_t o = 0; o < out; o++) {
        bool outside;
        double x = original_coord(p, d, o, in, out, &outside);
        int64_t *ci = ax->idx + o * ax->stride;
        double *cw = ax->w + o * ax->stride;
        if (outside) {
            ax->cnt[o] = -1;
            continue;
        }
        if (p->mode == RS_NEAREST) {
            int64_t i = nearest_index(p->nearest, x, p->scale[d]);
            ci[0] = i < 0 ? 0 : (i >= in ? in - 1 : i);
            cw[0] = 1.0;
            ax->cnt[o] = 1;
            continue;
        }
        const int64_t first = (int64_t)floor(x) - radius + 1;
        double sum = 0.0;
        for (int64_t j = 0; j < 2 * radius; j++) {
            int64_t pos = first + j;
            double t = fabs(((double)pos - x) * aa), w;
            if (p->mode == RS_LINEAR) w = t < 1.0 ? 1.0 - t : 0.0;
            else w = cubic_kernel(t, p->cubic_a);
            if (p->exclude_outside && (pos < 0 || pos >= in)) w = 0.0;
            ci[j] = pos < 0 ? 0 : (pos >= in ? in - 1 : pos);
            cw[j] = w;
            sum += w;
        }
        if ((p->antialias || p->exclude_outside) && sum != 0.0)
            for (int64_t j = 0; j < 2 * radius; j++) cw[j] /= sum;
        int64_t k = 0; /* keep the taps with a non-zero weight */
        for (int64_t j = 0; j < 2 * radius; j++)
            if (cw[j] != 0.0) {
                ci[k] = ci[j];
                cw[k] = cw[j];
                k++;
            }
        ax->cnt[o] = k;
    }
    return TC_STATUS_OK;
}

/* ---- kernel ------------------------------------------------------------------------ */

/* Stores v into element i of an integer tensor: round half to even, then saturate. */
static void store_int(tc__tensor *t, int64_t i, double v) {
    double lo, hi;
    switch (t->dtype) {
    case TC_DTYPE_INT8: lo = -128; hi = 127; break;
    case TC_DTYPE_UINT8: lo = 0; hi = 255; break;
    case TC_DTYPE_INT16: lo = -32768; hi = 32767; break;
    case TC_DTYPE_UINT16: lo = 0; hi = 65535; break;
    case TC_DTYPE_INT32: lo = -2147483648.0; hi = 2147483647.0; break;
    case TC_DTYPE_UINT32: lo = 0; hi = 4294967295.0; break;
    default: lo = -9223372036854775808.0; hi = 9223372036854774784.0; break;
    }
    if (t->dtype == TC_DTYPE_UINT64) lo = 0;
    v = nearbyint(v);
    if (isnan(v)) v = 0;
    v = v < lo ? lo : (v > hi ? hi : v);
    if (t->dtype == TC_DTYPE_UINT64) ((uint64_t *)t->data)[i] = (uint64_t)v;
    else tc__tensor_set_i64(t, i, (int64_t)v);
}

tc_status tc__ref_Resize(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 1 || ctx->in[0] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects input X and output Y");
    const tc__tensor *x = ctx->in[0];
    tc__tensor *y = ctx->out[0];
    bool is_float = tc__dtype_is_float(x->dtype);
    if (!is_float && !tc__dtype_is_int(x->dtype)) return tc__ref_unsupported_dtype(ctx, 0, x->dtype);
    if (y->dtype != x->dtype || y->rank != x->rank || x->rank < 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output must have the data type and rank (>= 1) of X");
    rs_params p;
    memset(&p, 0, sizeof p);
    tc_status st = parse_strings(ctx, &p);
    if (st != TC_STATUS_OK) return st;
    p.cubic_a = tc__attr_float(ctx->attrs, "cubic_coeff_a", -0.75f);
    p.exclude_outside = tc__attr_int(ctx->attrs, "exclude_outside", 0) != 0;
    p.extrapolation = tc__attr_float(ctx->attrs, "extrapolation_value", 0.0f);
    p.antialias = ctx->opset >= 18 && tc__attr_int(ctx->attrs, "antialias", 0) != 0;
    if (p.antialias && p.mode == RS_NEAREST)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "antialias is defined only for modes linear and cubic");
    if ((st = read_scales(ctx, x, y, &p)) != TC_STATUS_OK) return st;

    const int32_t r = x->rank;
    const int64_t xn = tc__tensor_numel(x), yn = tc__tensor_numel(y);
    if (xn < 0 || yn < 0) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "invalid tensor sizes");
    if (yn == 0) return TC_STATUS_OK;
    if (xn == 0) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "cannot resize an empty input to a non-empty output");

    rs_axis axes[TC_MAX_RANK];
    memset(axes, 0, sizeof axes);
    const int64_t row = y->dims[r - 1];
    double *xd = tc__ref_alloc_f64(ctx, xn), *yd = tc__ref_alloc_f64(ctx, row);
    if (!xd || !yd) {
        st = tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of memory for Resize buffers");
        goto done;
    }
    for (int32_t d = 0; d < r; d++)
        if ((st = plan_axis(ctx, &p, d, x->dims[d], y->dims[d], &axes[d])) != TC_STATUS_OK) goto done;
    tc__ref_load_f64(x, 0, xn, xd);

    int64_t istr[TC_MAX_RANK];
    istr[r - 1] = 1;
    for (int32_t d = r - 2; d >= 0; d--) istr[d] = istr[d + 1] * x->dims[d + 1];
    int64_t o[TC_MAX_RANK] = {0};
    for (int64_t e = 0; e < yn; e++) {
        bool outside = false, no_taps = false;
        for (int32_t d = 0; d < r; d++) {
            if (axes[d].cnt[o[d]] < 0) outside = true;
            if (axes[d].cnt[o[d]] == 0) no_taps = true; /* every weight was zero */
        }
        double v = 0.0;
        if (outside) {
            v = p.extrapolation;
        } else if (!no_taps) {
            int64_t t[TC_MAX_RANK] = {0};
            for (;;) {
                double w = 1.0;
                int64_t off = 0;
                for (int32_t d = 0; d < r; d++) {
                    int64_t k = o[d] * axes[d].stride + t[d];
                    w *= axes[d].w[k];
                    off += axes[d].idx[k] * istr[d];
                }
                v += w * xd[off];
                int32_t d = r - 1;
                for (; d >= 0; d--) {
                    if (++t[d] < axes[d].cnt[o[d]]) break;
                    t[d] = 0;
                }
                if (d < 0) break;
            }
        }
        yd[o[r - 1]] = v;
        if (o[r - 1] == row - 1) {
            const int64_t base = e - (row - 1);
            if (is_float) tc__ref_store_f64(y, base, row, yd);
            else
                for (int64_t j = 0; j < row; j++) store_int(y, base + j, yd[j]);
        }
        for (int32_t d = r - 1; d >= 0; d--) {
            if (++o[d] < y->dims[d]) break;
            o[d] = 0;
        }
    }
    st = TC_STATUS_OK;
done:
    for (int32_t d = TC_MAX_RANK - 1; d >= 0; d--) { /* reverse order of allocation */
        tc__kernel_free(ctx, axes[d].w);
        tc__kernel_free(ctx, axes[d].idx);
        tc__kernel_free(ctx, axes[d].cnt);
    }
    tc__kernel_free(ctx, yd);
    tc__kernel_free(ctx, xd);
    return st;
}
