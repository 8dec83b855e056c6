/*
 * softmax_f32_tactic.c - tactics cuda_softmax_f32 and cuda_logsoftmax_f32: FP32 Softmax / LogSoftmax over any axis
 * (opset >= 13: one axis; before 13: the input flattened to 2-D at the axis, as the reference), with the fused
 * attention mask (tc.softmax_add: input 1 added first, broadcast to input 0) and NaN guard (tc.nan_to); kernels in
 * softmax_f32.cu. No epilogue.
 */
#include <string.h>

#include "backends/cuda/dn_common.h"
#include "backends/cuda/softmax_f32.h"
#include "core/fused_attr.h"

/* The kernel arguments (pointers excepted) of the step; false when it is not one the kernels compute. */
static bool softmax_args(int64_t opset, const tc__attrs *attrs, int n_in, const tc__tensor *const *in,
                         const tc__tensor *y, tc__cuda_softmax_args *p) {
    memset(p, 0, sizeof *p);
    const tc__tensor *x = n_in >= 1 ? in[0] : NULL;
    if (x == NULL || y == NULL || x->dtype != TC_DTYPE_FLOAT32 || y->dtype != TC_DTYPE_FLOAT32) return false;
    if (x->rank > TC__CUDA_MAX_RANK || x->rank > TC_MAX_RANK || y->rank != x->rank) return false;
    for (int32_t i = 0; i < x->rank; i++)
        if (y->dims[i] != x->dims[i] || x->dims[i] < 0) return false;
    const int32_t rank = x->rank, arank = rank == 0 ? 1 : rank;
    const bool legacy = opset < 13;
    int64_t axis = tc__attr_int(attrs, "axis", legacy ? 1 : -1);
    if (axis < -(int64_t)arank || axis > (int64_t)arank - (legacy ? 0 : 1)) return false;
    if (axis < 0) axis += arank;
    int64_t outer = 1, n = 1, inner = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (i < axis) outer *= x->dims[i];
        else if (i == axis || legacy) n *= x->dims[i];
        else inner *= x->dims[i];
    }
    p->rows = outer * inner;
    p->n = n;
    p->inner = inner;
    p->guard = tc__attr_has(attrs, TC__ATTR_NAN_TO);
    p->nan_to = p->guard ? tc__attr_float(attrs, TC__ATTR_NAN_TO, 0.0f) : 0.0f;
    p->rank = rank;
    for (int32_t i = 0; i < rank; i++) p->dims[i] = x->dims[i];
    const bool adds = tc__softmax_adds(attrs);
    if (n_in != (adds ? 2 : 1)) return false;
    if (adds) {
        const tc__tensor *m = in[1];
        int64_t st[TC_MAX_RANK];
        if (m == NULL || m->dtype != TC_DTYPE_FLOAT32 || !tc__bcast_strides(m, rank, x->dims, st)) return false;
        for (int32_t i = 0; i < rank; i++) p->mst[i] = st[i];
        p->mask_mode = rank >= 1 && inner == 1 && n == x->dims[rank - 1] ? 1 : 2;
    }
    return true;
}

static bool supports(const tc__step_desc *d) {
    if (d->n_out != 1 || d->out[0] == NULL) return tc__refuse(d, "expects one output");
    if (!tc__epilogue_is_none(d->epi)) return tc__refuse(d, "no fused epilogue");
    tc__cuda_softmax_args p;
    if (!softmax_args(d->opset, d->attrs, d->n_in, d->in, d->out[0], &p))
        return tc__refuse(d, "float32 only, rank <= %d, a mask that broadcasts to X", TC__CUDA_MAX_RANK);
    return true;
}

static tc_status run_any(const tc__kernel_ctx *ctx, bool log_out) {
    tc__cuda_softmax_args p;
    if (ctx->n_out < 1 || !softmax_args(ctx->opset, ctx->attrs, ctx->n_in, ctx->in, ctx->out[0], &p))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: a step this kernel does not compute", ctx->op_type);
    if (p.rows <= 0 || p.n <= 0) return TC_STATUS_OK;
    p.x = ctx->in[0]->data;
    p.mask = p.mask_mode != 0 ? ctx->in[1]->data : NULL;
    p.y = ctx->out[0]->data;
    p.log_out = log_out;
    cudaError_t e = tc__cuda_softmax_f32(&p, tc__cuda_stream(ctx));
    return e == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(e, ctx->err, "softmax launch");
}

static tc_status run_softmax(const tc__kernel_ctx *ctx) { return run_any(ctx, false); }
static tc_status run_logsoftmax(const tc__kernel_ctx *ctx) { return run_any(ctx, true); }

const tc__tactic tc__tactic_cuda_softmax_f32 = {
    .name = "cuda_softmax_f32",
    .op_type = "Softmax",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = 0,
    .supports = supports,
    .run = run_softmax,
};

const tc__tactic tc__tactic_cuda_logsoftmax_f32 = {
    .name = "cuda_logsoftmax_f32",
    .op_type = "LogSoftmax",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = 0,
    .supports = supports,
    .run = run_logsoftmax,
};
