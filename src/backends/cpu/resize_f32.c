/*
 * resize_f32.c - the float32 Resize operator shared by its scalar, AVX2 and AVX-512 tactics: which steps it computes
 * (the attribute and scale rules mirror backends/ref/resize.c), the per-run index and weight tables, the threaded
 * driver over (plane, band of output rows) and the scalar row microkernels.
 */
#include "backends/cpu/resize_f32.h"

#include <math.h>
#include "core/thread_pool.h"
#include <string.h>

enum { CT_HALF_PIXEL, CT_HALF_PIXEL_SYMMETRIC, CT_PYTORCH_HALF_PIXEL, CT_ALIGN_CORNERS, CT_ASYMMETRIC, CT_TF_HALF_PIXEL_FOR_NN };
enum { NM_ROUND_PREFER_FLOOR, NM_ROUND_PREFER_CEIL, NM_FLOOR, NM_CEIL, NM_SIMPLE };
enum { RZ_MAX_BLOCK = 16, RZ_CHUNK = 256 /* columns per linear pass (a multiple of every block) */ };

typedef struct rz_params {
    bool linear;
    int coord, nearest;
    double scale[TC_MAX_RANK], len[TC_MAX_RANK]; /* per dim, as the reference's scale and length_resized */
} rz_params;

/* ---- attributes and scales (the reference's rules; NULL when supported, else why not) ---------------------- */

static const char *parse_attrs(const tc__attrs *a, int64_t opset, rz_params *p) {
    const char *m = tc__attr_string(a, "mode", "nearest");
    if (strcmp(m, "nearest") == 0) p->linear = false;
    else if (strcmp(m, "linear") == 0) p->linear = true;
    else return "only modes nearest and linear";
    if (opset < 11) {
        p->coord = CT_ASYMMETRIC;
        p->nearest = NM_SIMPLE;
        return NULL;
    }
    static const struct {
        const char *name;
        int v;
    } coords[] = {{"half_pixel", CT_HALF_PIXEL},       {"half_pixel_symmetric", CT_HALF_PIXEL_SYMMETRIC},
                  {"pytorch_half_pixel", CT_PYTORCH_HALF_PIXEL}, {"align_corners", CT_ALIGN_CORNERS},
                  {"asymmetric", CT_ASYMMETRIC},       {"tf_half_pixel_for_nn", CT_TF_HALF_PIXEL_FOR_NN}};
    const char *c = tc__attr_string(a, "coordinate_transformation_mode", "half_pixel");
    size_t i = 0;
    for (; i < sizeof coords / sizeof coords[0]; i++)
        if (strcmp(c, coords[i].name) == 0) break;
    if (i == sizeof coords / sizeof coords[0]) return "coordinate_transformation_mode not supported (tf_crop_and_resize)";
    p->coord = coords[i].v;
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    const char *n = tc__attr_string(a, "nearest_mode", "round_prefer_floor");
    for (p->nearest = 0; p->nearest < 4; p->nearest++)
        if (strcmp(n, nms[p->nearest]) == 0) break;
    if (p->nearest == 4) return "unknown nearest_mode";
    if (p->linear && tc__attr_int(a, "exclude_outside", 0) != 0) return "exclude_outside with mode linear";
    if (opset >= 18 && tc__attr_int(a, "antialias", 0) != 0) return "antialias";
    if (opset >= 18 && strcmp(tc__attr_string(a, "keep_aspect_ratio_policy", "stretch"), "stretch") != 0)
        return "keep_aspect_ratio_policy other than stretch";
    return NULL;
}

/* Scales and resized lengths per dim from the scales or sizes tensor (data set), as the reference computes them;
 * checks y's dims against them and that every dim but the last two is copied unchanged. */
static const char *read_scales(const tc__attrs *a, int64_t opset, const tc__tensor *x, const tc__tensor *y,
                               const tc__tensor *scales, const tc__tensor *sizes, rz_params *p) {
    const int32_t rank = x->rank;
    int32_t axes[TC_MAX_RANK], naxes = rank;
    for (int32_t i = 0; i < rank; i++) axes[i] = i;
    const int64_t *av = NULL;
    size_t an = opset >= 18 ? tc__attr_ints(a, "axes", &av) : 0;
    if (av != NULL) {
        if (an > (size_t)rank) return "axes longer than the rank";
        for (size_t i = 0; i < an; i++) {
            if (av[i] < -rank || av[i] >= rank) return "axes out of range";
            axes[i] = (int32_t)(av[i] < 0 ? av[i] + rank : av[i]);
        }
        naxes = (int32_t)an;
    }
    const tc__tensor *given = scales ? scales : sizes;
    if (tc__tensor_numel(given) != naxes) return "scales or sizes of the wrong length";
    for (int32_t d = 0; d < rank; d++) p->scale[d] = 1.0, p->len[d] = (double)x->dims[d];
    if (scales) {
        for (int32_t i = 0; i < naxes; i++) {
            double s = tc__tensor_get_f64(scales, i);
            if (!(s > 0.0) || !isfinite(s)) return "scales must be > 0";
            p->scale[axes[i]] = s;
        }
        for (int32_t d = 0; d < rank; d++) {
            p->len[d] = p->scale[d] * (double)x->dims[d];
            if (p->len[d] > (double)TC__MAX_NUMEL || y->dims[d] != (int64_t)floor(p->len[d]))
                return "output dims do not match the scales";
        }
    } else {
        for (int32_t i = 0; i < naxes; i++) {
            int64_t in = x->dims[axes[i]], out = tc__tensor_get_i64(sizes, i);
            if (in == 0 || out != y->dims[axes[i]]) return "output dims do not match the sizes";
            p->scale[axes[i]] = (double)out / (double)in;
            p->len[axes[i]] = (double)out;
        }
    }
    /* tf_half_pixel_for_nn maps index o to o + 0.5 even at scale 1: rounded up, or interpolated, it moves the plane */
    const bool shifts = p->coord == CT_TF_HALF_PIXEL_FOR_NN &&
                        (p->linear || p->nearest == NM_ROUND_PREFER_CEIL || p->nearest == NM_CEIL);
    for (int32_t d = 0; d + 2 < rank; d++)
        if (y->dims[d] != x->dims[d] || (x->dims[d] != 1 && (p->scale[d] != 1.0 || shifts)))
            return "resizes a dim other than the last two";
    return NULL;
}

/* The scales (or sizes) tensor of a Resize's inputs, NULL when absent or empty. */
static const tc__tensor *given_input(int n_in, const tc__tensor *const *in, int64_t opset, bool want_sizes) {
    int i = opset < 11 ? (want_sizes ? -1 : 1) : (want_sizes ? 3 : 2);
    if (i < 0 || i >= n_in || in[i] == NULL || tc__tensor_numel(in[i]) == 0) return NULL;
    return in[i];
}

static bool plain_shapes(const tc__tensor *x, const tc__tensor *y) {
    if (x->dtype != TC_DTYPE_FLOAT32 || y->dtype != TC_DTYPE_FLOAT32 || x->rank < 2 || y->rank != x->rank) return false;
    const int64_t *xd = x->dims + x->rank - 2, *yd = y->dims + y->rank - 2;
    return xd[0] > 0 && xd[1] > 0 && xd[0] < INT32_MAX && xd[1] < INT32_MAX && yd[0] < INT32_MAX && yd[1] < INT32_MAX;
}

bool tc__resize_f32_supports(const tc__step_desc *d) {
    if (d->n_in < 2 || d->in[0] == NULL || d->n_out != 1 || d->out[0] == NULL) return false;
    if (!plain_shapes(d->in[0], d->out[0])) return tc__refuse(d, "float32 of rank >= 2 with non-empty H and W only");
    rz_params p;
    const char *why = parse_attrs(d->attrs, d->opset, &p);
    if (why) return tc__refuse(d, "%s", why);
    const tc__tensor *scales = given_input(d->n_in, d->in, d->opset, false);
    const tc__tensor *sizes = given_input(d->n_in, d->in, d->opset, true);
    if ((scales == NULL) == (sizes == NULL)) return tc__refuse(d, "needs exactly one of scales and sizes");
    if (scales && scales->dtype != TC_DTYPE_FLOAT32 && scales->dtype != TC_DTYPE_FLOAT64)
        return tc__refuse(d, "scales must be float");
    if (sizes && sizes->dtype != TC_DTYPE_INT64) return tc__refuse(d, "sizes must be int64");
    const tc__tensor *given = scales ? scales : sizes;
    if (given->data == NULL) return tc__refuse(d, "scales or sizes computed at run time");
    why = read_scales(d->attrs, d->opset, d->in[0], d->out[0], scales, sizes, &p);
    return why ? tc__refuse(d, "%s", why) : true;
}

/* ---- tables --------------------------------------------------------------------------------------------- */

static double source_coord(const rz_params *p, int d, int64_t o, int64_t in, int64_t out) {
    const double x = (double)o, s = p->scale[d], len = p->len[d];
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
    default: return (x + 0.5) / s; /* tf_half_pixel_for_nn */
    }
}

static int64_t nearest_index(int nm, double x, double scale) {
    double f = floor(x);
    if (x == f) return (int64_t)f;
    double frac = x - f;
    switch (nm) {
    case NM_ROUND_PREFER_FLOOR: return (int64_t)f + (frac > 0.5);
    case NM_ROUND_PREFER_CEIL: return (int64_t)f + (frac >= 0.5);
    case NM_FLOOR: return (int64_t)f;
    case NM_CEIL: return (int64_t)f + 1;
    default: return scale < 1.0 ? (int64_t)f + 1 : (int64_t)f; /* Resize-10 */
    }
}

static int32_t clamp_i(int64_t i, int64_t in) { return (int32_t)(i < 0 ? 0 : (i >= in ? in - 1 : i)); }

static void plan_axis(const rz_params *p, int d, int64_t in, int64_t out, tc__resize_axis *ax) {
    for (int64_t o = 0; o < out; o++) {
        const double x = source_coord(p, d, o, in, out);
        if (!p->linear) {
            ax->i0[o] = ax->i1[o] = clamp_i(nearest_index(p->nearest, x, p->scale[d]), in);
            ax->w0[o] = 1.0f;
            ax->w1[o] = 0.0f;
            continue;
        }
        const double f = floor(x);
        const double t0 = fabs(f - x), t1 = fabs(f + 1.0 - x);
        ax->i0[o] = clamp_i((int64_t)f, in);
        ax->i1[o] = clamp_i((int64_t)f + 1, in);
        ax->w0[o] = (float)(t0 < 1.0 ? 1.0 - t0 : 0.0);
        ax->w1[o] = (float)(t1 < 1.0 ? 1.0 - t1 : 0.0);
    }
}

static void plan_blocks(tc__resize_plan *p) {
    const int64_t b = p->block;
    for (int64_t k = 0; k * b < p->ow; k++) {
        int32_t lo = INT32_MAX, hi = -1;
        for (int64_t o = k * b; o < p->ow && o < (k + 1) * b; o++) {
            if (p->w.i0[o] < lo) lo = p->w.i0[o];
            if (p->w.i1[o] > hi) hi = p->w.i1[o];
        }
        p->base[k] = lo;
        p->span[k] = hi - lo + 1 <= b ? hi - lo + 1 : 0;
    }
}

static size_t plan_bytes(int64_t oh, int64_t ow) {
    return (size_t)(4 * oh + 4 * ow + 2 * (ow / 8 + 1)) * 4 + 64;
}

size_t tc__resize_f32_scratch_bytes(const tc__step_desc *d) {
    const tc__tensor *y = d->out[0];
    return plan_bytes(y->dims[y->rank - 2], y->dims[y->rank - 1]);
}

/* ---- driver ---------------------------------------------------------------------------------------------- */

typedef struct rz_job {
    const tc__resize_plan *p;
    const tc__resize_ukernels *uk;
    const float *x;
    float *y;
    int64_t band, bands; /* output rows per task, tasks per plane */
    bool w_identity;
} rz_job;

static void nearest_rows(const rz_job *j, const float *x, float *y, int64_t r0, int64_t r1) {
    const tc__resize_plan *p = j->p;
    for (int64_t oy = r0; oy < r1; oy++) {
        float *yr = y + oy * p->ow;
        if (oy > r0 && p->h.i0[oy] == p->h.i0[oy - 1]) memcpy(yr, yr - p->ow, sizeof(float) * (size_t)p->ow);
        else if (j->w_identity) memcpy(yr, x + p->h.i0[oy] * p->iw, sizeof(float) * (size_t)p->ow);
        else j->uk->nearest_row(p, x + p->h.i0[oy] * p->iw, yr);
    }
}

/* One of two cached horizontally interpolated rows: the one of source row r, computed unless cached, never
 * evicting the slot holding row keep. */
typedef struct rz_slot {
    int64_t row;
    float *buf;
} rz_slot;

static const float *cached_row(const rz_job *j, const float *x, rz_slot *s, int64_t r, int64_t keep, int64_t o0,
                               int64_t n) {
    if (s[0].row == r) return s[0].buf;
    if (s[1].row == r) return s[1].buf;
    rz_slot *v = s[0].row == keep ? &s[1] : &s[0];
    j->uk->lerp_row(j->p, x + r * j->p->iw, v->buf, o0, n);
    v->row = r;
    return v->buf;
}

static void linear_rows(const rz_job *j, const float *x, float *y, int64_t r0, int64_t r1) {
    const tc__resize_plan *p = j->p;
    _Alignas(64) float buf[2][RZ_CHUNK];
    for (int64_t o0 = 0; o0 < p->ow; o0 += RZ_CHUNK) {
        const int64_t n = p->ow - o0 < RZ_CHUNK ? p->ow - o0 : RZ_CHUNK;
        rz_slot s[2] = {{-1, buf[0]}, {-1, buf[1]}};
        for (int64_t oy = r0; oy < r1; oy++) {
            const int64_t a = p->h.i0[oy], b = p->h.i1[oy];
            const float *h0 = cached_row(j, x, s, a, b, o0, n);
            const float *h1 = cached_row(j, x, s, b, a, o0, n);
            j->uk->blend_row(h0, h1, p->h.w0[oy], p->h.w1[oy], y + oy * p->ow + o0, n);
        }
    }
}

static void rz_task(void *arg, size_t t) {
    const rz_job *j = arg;
    const tc__resize_plan *p = j->p;
    const int64_t plane = (int64_t)t / j->bands, r0 = ((int64_t)t % j->bands) * j->band;
    const int64_t r1 = r0 + j->band < p->oh ? r0 + j->band : p->oh;
    const float *x = j->x + plane * p->ih * p->iw;
    float *y = j->y + plane * p->oh * p->ow;
    if (p->linear) linear_rows(j, x, y, r0, r1);
    else nearest_rows(j, x, y, r0, r1);
}

tc_status tc__resize_f32_run(const tc__kernel_ctx *ctx, const tc__resize_ukernels *uk) {
    if (ctx->n_in < 2 || ctx->in[0] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects input X and output Y");
    const tc__tensor *x = ctx->in[0];
    tc__tensor *y = ctx->out[0];
    if (!plain_shapes(x, y)) return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "Resize shapes this kernel does not compute");
    rz_params rp;
    const char *why = parse_attrs(ctx->attrs, ctx->opset, &rp);
    const tc__tensor *scales = given_input(ctx->n_in, ctx->in, ctx->opset, false);
    const tc__tensor *sizes = given_input(ctx->n_in, ctx->in, ctx->opset, true);
    if (!why && (scales == NULL) == (sizes == NULL)) why = "needs exactly one of scales and sizes";
    if (!why) why = read_scales(ctx->attrs, ctx->opset, x, y, scales, sizes, &rp);
    if (why) return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "Resize this kernel does not compute: %s", why);
    const int32_t r = x->rank;
    tc__resize_plan p = {.linear = rp.linear, .ih = x->dims[r - 2], .iw = x->dims[r - 1], .oh = y->dims[r - 2],
                         .ow = y->dims[r - 1], .block = uk->block};
    const int64_t planes = tc__numel(r - 2, y->dims);
    if (planes == 0 || p.oh == 0 || p.ow == 0) return TC_STATUS_OK;
    unsigned char *mem = tc__kernel_alloc(ctx, plan_bytes(p.oh, p.ow));
    if (mem == NULL) return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "scratch too small for Resize tables");
    int32_t *iv = (int32_t *)mem;
    p.h.i0 = iv, p.h.i1 = iv + p.oh, p.w.i0 = iv + 2 * p.oh, p.w.i1 = iv + 2 * p.oh + p.ow;
    float *fv = (float *)(iv + 2 * p.oh + 2 * p.ow);
    p.h.w0 = fv, p.h.w1 = fv + p.oh, p.w.w0 = fv + 2 * p.oh, p.w.w1 = fv + 2 * p.oh + p.ow;
    p.base = (int32_t *)(fv + 2 * p.oh + 2 * p.ow);
    p.span = p.base + p.ow / 8 + 1;
    plan_axis(&rp, r - 2, p.ih, p.oh, &p.h);
    plan_axis(&rp, r - 1, p.iw, p.ow, &p.w);
    if (p.block > 0) plan_blocks(&p);
    bool ident = !p.linear && p.ow == p.iw;
    for (int64_t o = 0; ident && o < p.ow; o++) ident = p.w.i0[o] == o;

    tc__pool_t pool = ctx->exec;
    const size_t threads = pool ? tc__pool_get_threads_count(pool) : 1;
    int64_t band = p.oh; /* rows per task: about 16K outputs, unless the planes alone keep the threads busy */
    if (threads > 1 && planes < 4 * (int64_t)threads) {
        band = 16384 / p.ow;
        if (band < 1) band = 1;
        if (band > p.oh) band = p.oh;
    }
    rz_job j = {&p, uk, x->data, y->data, band, (p.oh + band - 1) / band, ident};
    const size_t tasks = (size_t)(planes * j.bands);
    if (threads <= 1 || tasks == 1)
        for (size_t t = 0; t < tasks; t++) rz_task(&j, t);
    else tc__pool_parallelize_1d(pool, rz_task, &j, tasks, 0);
    tc__kernel_free(ctx, mem);
    return TC_STATUS_OK;
}

/* ---- scalar microkernels --------------------------------------------------------------------------------- */

static void nearest_row_scalar(const tc__resize_plan *p, const float *src, float *y) {
    for (int64_t o = 0; o < p->ow; o++) y[o] = src[p->w.i0[o]];
}

static void lerp_row_scalar(const tc__resize_plan *p, const float *src, float *h, int64_t o0, int64_t n) {
    for (int64_t o = o0; o < o0 + n; o++) h[o - o0] = p->w.w0[o] * src[p->w.i0[o]] + p->w.w1[o] * src[p->w.i1[o]];
}

static void blend_row_scalar(const float *h0, const float *h1, float a, float b, float *y, int64_t n) {
    for (int64_t o = 0; o < n; o++) y[o] = a * h0[o] + b * h1[o];
}

const tc__resize_ukernels tc__resize_f32_scalar = {0, nearest_row_scalar, lerp_row_scalar, blend_row_scalar};
