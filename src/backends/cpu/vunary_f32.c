/*
 * vunary_f32.c - the elementwise activation ops shared by the AVX-512 and AVX2 tactics: which
 * steps they compute, the activation (with the reference kernel's parameters and defaults)
 * of each op, and the driver that walks the tensor in chunks over the thread pool.
 */
#include "backends/cpu/vunary_f32.h"

#include <float.h>
#include <math.h>
#include "core/thread_pool.h"
#include <string.h>

/* Elements per task. */
#define VUN_TILE 8192

/* Clip's optional bound input i: absent or empty, or one float32 element (value read when data is set). */
static bool clip_bound(int n_in, const tc__tensor *const *in, int i, float dflt, float *out) {
    *out = dflt;
    if (i >= n_in || in[i] == NULL) return true;
    const tc__tensor *t = in[i];
    int64_t n = tc__tensor_numel(t);
    if (t->dtype != TC_DTYPE_FLOAT32 || n > 1 || n < 0) return false;
    if (n == 1 && t->data != NULL) *out = *(const float *)t->data;
    return true;
}

/* The activation of op_type with these attributes and inputs; false when it is not one we compute. */
static bool vunary_act(const char *op, int64_t opset, const tc__attrs *attrs, int n_in, const tc__tensor *const *in,
                       tc__vact *a) {
    *a = (tc__vact){TC__VACT_NONE, 0.0f, 0.0f, 0.0f};
    if (strcmp(op, "Relu") == 0) a->kind = TC__VACT_RELU_NAN;
    else if (strcmp(op, "Sigmoid") == 0) a->kind = TC__VACT_SIGMOID;
    else if (strcmp(op, "Tanh") == 0) a->kind = TC__VACT_TANH;
    else if (strcmp(op, "Erf") == 0) a->kind = TC__VACT_ERF;
    else if (strcmp(op, "HardSwish") == 0) a->kind = TC__VACT_HARDSWISH;
    else if (strcmp(op, "Gelu") == 0) {
        const char *approx = tc__attr_string(attrs, "approximate", "none");
        if (strcmp(approx, "none") == 0) a->kind = TC__VACT_GELU_ERF;
        else if (strcmp(approx, "tanh") == 0) a->kind = TC__VACT_GELU_TANH;
        else return false;
    } else if (strcmp(op, "HardSigmoid") == 0) {
        a->kind = TC__VACT_HARDSIGMOID;
        a->alpha = tc__attr_float(attrs, "alpha", 0.2f);
        a->beta = tc__attr_float(attrs, "beta", 0.5f);
    } else if (strcmp(op, "LeakyRelu") == 0) {
        a->kind = TC__VACT_LEAKY_RELU;
        a->alpha = tc__attr_float(attrs, "alpha", 0.01f);
    } else if (strcmp(op, "Clip") == 0) {
        a->kind = TC__VACT_CLIP;
        if (opset < 11) {
            a->alpha = tc__attr_float(attrs, "min", -FLT_MAX);
            a->beta = tc__attr_float(attrs, "max", FLT_MAX);
        } else if (!clip_bound(n_in, in, 1, -INFINITY, &a->alpha) || !clip_bound(n_in, in, 2, INFINITY, &a->beta)) {
            return false;
        }
    } else {
        return false;
    }
    return true;
}

bool tc__vunary_f32_supports(const tc__step_desc *d) {
    if (d->n_in < 1 || d->in[0] == NULL || d->n_out != 1 || d->out[0] == NULL) return false;
    if (strcmp(d->op_type, "Clip") == 0 ? d->n_in > 3 : d->n_in != 1) return false;
    if (d->in[0]->dtype != TC_DTYPE_FLOAT32 || !tc__vact_same_f32_shape(d->out[0], d->in[0])) return false;
    tc__vact a;
    return vunary_act(d->op_type, d->opset, d->attrs, d->n_in, d->in, &a);
}

typedef struct vun_job {
    tc__vunary_f32_ukernel uk;
    const float *x;
    float *y;
    tc__vact act;
} vun_job;

static void vun_task(void *arg, size_t start, size_t count) {
    const vun_job *j = arg;
    j->uk(j->x + start, j->y + start, (int64_t)count, &j->act);
}

tc_status tc__vunary_f32_run(const tc__kernel_ctx *ctx, tc__vunary_f32_ukernel uk) {
    if (ctx->n_in < 1 || ctx->in[0] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects input X and output Y");
    const tc__tensor *x = ctx->in[0];
    tc__tensor *y = ctx->out[0];
    if (x->dtype != TC_DTYPE_FLOAT32 || !tc__vact_same_f32_shape(y, x))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "X and Y must be float32 of the same shape");
    vun_job j = {uk, x->data, y->data, {TC__VACT_NONE, 0.0f, 0.0f, 0.0f}};
    if (!vunary_act(ctx->op_type, ctx->opset, ctx->attrs, ctx->n_in, ctx->in, &j.act))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "%s with these attributes or inputs is not computed here",
                        ctx->op_type);
    const int64_t n = tc__tensor_numel(x);
    if (n <= 0) return TC_STATUS_OK;
    tc__pool_t pool = ctx->exec;
    if (pool == NULL || n <= VUN_TILE || tc__pool_get_threads_count(pool) <= 1) {
        uk(j.x, j.y, n, &j.act);
        return TC_STATUS_OK;
    }
    tc__pool_parallelize_1d_tile_1d(pool, vun_task, &j, (size_t)n, VUN_TILE, 0);
    return TC_STATUS_OK;
}
