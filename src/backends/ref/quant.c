/*
 * quant.c - reference QuantizeLinear and DequantizeLinear (see graph/infer_quant.c for what they take):
 *   QuantizeLinear    y = saturate(round_half_even(x / scale) + zero_point)  (NaN gives the zero point)
 *   DequantizeLinear  y = (x - zero_point) * scale
 * per tensor or per axis.
 */
#include <math.h>

#include "backends/ref/numeric.h"

/* The scale and zero point that apply to element i: per tensor, or per channel along axis. */
typedef struct q_params {
    const float *scale;
    const tc__tensor *zp;
    int64_t per_axis; /* 0: per tensor; else the axis' size */
    int64_t inner;    /* elements per step along the axis */
} q_params;

static tc_status q_params_of(const tc__kernel_ctx *ctx, const tc__tensor *x, q_params *p) {
    const tc__tensor *s = ctx->in[1], *z = ctx->n_in > 2 ? ctx->in[2] : NULL;
    if (s == NULL || s->dtype != TC_DTYPE_FLOAT32 || s->rank > 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "the scale must be a float32 scalar or 1-D tensor");
    const int64_t ns = tc__tensor_numel(s);
    if (z != NULL && tc__tensor_numel(z) != ns)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "the zero point has %lld values, the scale %lld",
                        (long long)tc__tensor_numel(z), (long long)ns);
    if (ns < 1) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "the scale is empty");
    *p = (q_params){.scale = s->data, .zp = z, .per_axis = 0, .inner = 1};
    if (s->rank == 1 && ns > 1) {
        int64_t axis = tc__attr_int(ctx->attrs, "axis", 1);
        if (axis < 0) axis += x->rank;
        if (axis < 0 || axis >= x->rank || x->dims[axis] != ns)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%lld scales do not match axis %lld of the input",
                            (long long)ns, (long long)axis);
        p->per_axis = ns;
        for (int32_t d = (int32_t)axis + 1; d < x->rank; d++) p->inner *= x->dims[d];
    }
    return TC_STATUS_OK;
}

static int64_t q_channel(const q_params *p, int64_t i) { return p->per_axis ? i / p->inner % p->per_axis : 0; }

static int64_t q_zero_point(const q_params *p, int64_t c) { return p->zp ? tc__tensor_get_i64(p->zp, c) : 0; }

tc_status tc__ref_QuantizeLinear(const tc__kernel_ctx *ctx) {
    const tc__tensor *x = ctx->in[0];
    if (x == NULL || x->dtype != TC_DTYPE_FLOAT32) return tc__ref_unsupported_dtype(ctx, 0, x ? x->dtype : 0);
    q_params p;
    tc_status st = q_params_of(ctx, x, &p);
    if (st) return st;
    tc__tensor *y = ctx->out[0];
    const tc_dtype dt = y->dtype;
    if (dt != TC_DTYPE_UINT8 && dt != TC_DTYPE_INT8) return tc__ref_unsupported_dtype(ctx, 0, dt);
    if ((st = tc__ref_check_io(ctx, 2, 0, dt, x))) return st;
    const double lo = dt == TC_DTYPE_UINT8 ? 0.0 : -128.0, hi = dt == TC_DTYPE_UINT8 ? 255.0 : 127.0;
    const float *xv = x->data;
    for (int64_t i = 0; i < tc__tensor_numel(x); i++) {
        const int64_t c = q_channel(&p, i);
        double v = nearbyint((double)(xv[i] / p.scale[c])) + (double)q_zero_point(&p, c);
        if (isnan(v)) v = (double)q_zero_point(&p, c);
        v = v < lo ? lo : v > hi ? hi : v;
        tc__tensor_set_i64(y, i, (int64_t)v);
    }
    return TC_STATUS_OK;
}

tc_status tc__ref_DequantizeLinear(const tc__kernel_ctx *ctx) {
    const tc__tensor *x = ctx->in[0];
    if (x == NULL || (x->dtype != TC_DTYPE_UINT8 && x->dtype != TC_DTYPE_INT8 && x->dtype != TC_DTYPE_INT32))
        return tc__ref_unsupported_dtype(ctx, 0, x ? x->dtype : 0);
    q_params p;
    tc_status st = q_params_of(ctx, x, &p);
    if (st) return st;
    if ((st = tc__ref_check_io(ctx, 2, 0, TC_DTYPE_FLOAT32, x))) return st;
    float *y = ctx->out[0]->data;
    for (int64_t i = 0; i < tc__tensor_numel(x); i++) {
        const int64_t c = q_channel(&p, i);
        y[i] = (float)(tc__tensor_get_i64(x, i) - q_zero_point(&p, c)) * p.scale[c];
    }
    return TC_STATUS_OK;
}
