/* attention_step.c - the geometry and kernel arguments the CUDA attention tactics share (attention_step.h). */
#include "backends/cuda/attention_step.h"

#include "backends/cuda/dn_common.h"
#include "backends/cuda/row16.h"

bool tc__cuda_attn_step_geometry(const tc__step_desc *d, const tc__attrs *attrs, int n_in, const tc__tensor *const *in,
                                 int n_out, const tc__tensor *const *out, tc__attn_geom *g) {
    if (n_in < 3 || n_in > 4 || n_out != 1 || out[0] == NULL || in[0] == NULL || in[1] == NULL || in[2] == NULL)
        return d ? tc__refuse(d, "expects Q, K, V, an optional mask and the one output Y") : false;
    const tc__tensor *q = in[0], *k = in[1], *v = in[2], *m = n_in > 3 ? in[3] : NULL, *y = out[0];
    if (q->dtype != TC_DTYPE_FLOAT32 || k->dtype != TC_DTYPE_FLOAT32 || v->dtype != TC_DTYPE_FLOAT32 ||
        y->dtype != TC_DTYPE_FLOAT32 || (m != NULL && m->dtype != TC_DTYPE_FLOAT32 && m->dtype != TC_DTYPE_BOOL))
        return d ? tc__refuse(d, "float32 Q, K, V and Y, a float32 or boolean mask") : false;
    tc__err err = {0};
    if (tc__attn_geometry(attrs, q->rank, q->dims, k->rank, k->dims, v->rank, v->dims, m ? m->rank : 0,
                          m ? m->dims : NULL, m != NULL && m->dtype == TC_DTYPE_BOOL, g, &err) != TC_STATUS_OK)
        return d ? tc__refuse(d, "%s", err.msg) : false;
    if (g->b * g->hq > 65535) return d ? tc__refuse(d, "more than 65535 batch x heads") : false;
    return true;
}

/* The start of K or V: `off` elements past the packed tensor's start (0 unpacked), FP16 or float. (Each input is a
 * whole packed tensor: in an engine the same one three times, in the tuner three.) */
static const void *at(const tc__tensor *t, bool is16, int64_t off) {
    return (const unsigned char *)t->data + (size_t)off * (is16 ? 2u : 4u);
}

tc_status tc__cuda_attn_step_args(const tc__kernel_ctx *ctx, const char *tactic, tc__cuda_attn_args *a) {
    *a = (tc__cuda_attn_args){0};
    if (!tc__cuda_attn_step_geometry(NULL, ctx->attrs, ctx->n_in, ctx->in, ctx->n_out,
                                     (const tc__tensor *const *)ctx->out, &a->g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: a step it does not take", tactic);
    a->q16 = tc__row16_in(ctx->attrs, 0);
    a->k16 = tc__row16_in(ctx->attrs, 1);
    a->v16 = tc__row16_in(ctx->attrs, 2);
    a->y16 = tc__row16_out(ctx->attrs);
    if (a->g.packed && (a->k16 != a->q16 || a->v16 != a->q16))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: packed Q|K|V read as two types", tactic);
    a->q = ctx->in[0]->data;
    a->k = at(ctx->in[1], a->k16, a->g.k_off);
    a->v = at(ctx->in[2], a->v16, a->g.v_off);
    a->mask = ctx->n_in > 3 && ctx->in[3] != NULL ? ctx->in[3]->data : NULL;
    a->y = ctx->out[0]->data;
    return TC_STATUS_OK;
}
