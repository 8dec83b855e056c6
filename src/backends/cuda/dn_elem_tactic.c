/*
 * dn_elem_tactic.c - tactics cuda_cast, cuda_and, cuda_or, cuda_not, cuda_equal, cuda_less, cuda_greater,
 * cuda_isnan, cuda_pow_f32 and cuda_reducemean_f32 on the kernels of dn_elem.cu:
 *   - cuda_cast: between float32, float16, int64, int32, int8, uint8 and bool, the reference's conversions;
 *   - cuda_and / cuda_or (bool), cuda_equal / cuda_less / cuda_greater (float32, int64, int32; Equal also bool):
 *     NumPy broadcasting, bool output; cuda_not (bool);
 *   - cuda_isnan: float32 or float16 input;
 *   - cuda_pow_f32: float32 base, float32 / int32 / int64 exponent, broadcast, pow in double rounded once;
 *   - cuda_reducemean_f32: float32, axes from the attribute or a constant input 1 (read from ctx->host_in at run),
 *     keepdims, noop_with_empty_axes; sums in double.
 * None takes an epilogue.
 */
#include <string.h>

#include "backends/cuda/dn_elem.h"

static bool same_shape(const tc__tensor *a, const tc__tensor *b) {
    if (a->rank != b->rank) return false;
    for (int32_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

/* ---- Cast -------------------------------------------------------------------------------------------------- */

static bool cast_dtype_ok(tc_dtype d) {
    return d == TC_DTYPE_FLOAT32 || d == TC_DTYPE_FLOAT16 || d == TC_DTYPE_INT64 || d == TC_DTYPE_INT32 ||
           d == TC_DTYPE_INT8 || d == TC_DTYPE_UINT8 || d == TC_DTYPE_BOOL;
}

static bool cast_ok(const tc__attrs *attrs, int n_in, const tc__tensor *const *in, const tc__tensor *y) {
    if (n_in != 1 || in[0] == NULL || y == NULL || !tc__attr_has(attrs, "to")) return false;
    const int64_t to = tc__attr_int(attrs, "to", 0);
    return to == (int64_t)y->dtype && cast_dtype_ok(in[0]->dtype) && cast_dtype_ok(y->dtype) && same_shape(in[0], y);
}

static bool cast_supports(const tc__step_desc *d) {
    if (!tc__epilogue_is_none(d->epi)) return tc__refuse(d, "no fused epilogue");
    if (d->n_out != 1 || !cast_ok(d->attrs, d->n_in, d->in, d->out[0]))
        return tc__refuse(d, "casts between float32, float16, int64, int32, int8, uint8 and bool only");
    return true;
}

static tc_status cast_run(const tc__kernel_ctx *ctx) {
    if (ctx->n_out < 1 || !cast_ok(ctx->attrs, ctx->n_in, ctx->in, ctx->out[0]))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Cast: a step this kernel does not compute");
    cudaError_t e = tc__cuda_dn_cast(ctx->in[0]->data, ctx->in[0]->dtype, ctx->out[0]->data, ctx->out[0]->dtype,
                                     tc__tensor_numel(ctx->out[0]), tc__cuda_stream(ctx));
    return e == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(e, ctx->err, "cast launch");
}

const tc__tactic tc__tactic_cuda_cast = {
    .name = "cuda_cast",
    .op_type = "Cast",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = 0,
    .supports = cast_supports,
    .run = cast_run,
};

/* ---- broadcasting ops with bool outputs --------------------------------------------------------------------- */

static bool bool_binary_ok(int op, int n_in, const tc__tensor *const *in, const tc__tensor *y, tc__dn_walk *w) {
    if (n_in != 2 || in[0] == NULL || in[1] == NULL || y == NULL || y->dtype != TC_DTYPE_BOOL) return false;
    const tc_dtype dt = in[0]->dtype;
    if (in[1]->dtype != dt) return false;
    if (op == TC__DN_LOGIC_AND || op == TC__DN_LOGIC_OR) {
        if (dt != TC_DTYPE_BOOL) return false;
    } else if (dt != TC_DTYPE_FLOAT32 && dt != TC_DTYPE_INT64 && dt != TC_DTYPE_INT32 &&
               !(op == TC__DN_CMP_EQ && dt == TC_DTYPE_BOOL)) {
        return false;
    }
    return tc__dn_walk_bcast(y->rank, y->dims, 2, in, w);
}

static bool bool_binary_supports(const tc__step_desc *d, int op) {
    if (!tc__epilogue_is_none(d->epi)) return tc__refuse(d, "no fused epilogue");
    tc__dn_walk w;
    if (d->n_out != 1 || !bool_binary_ok(op, d->n_in, d->in, d->out[0], &w))
        return tc__refuse(d, "inputs of one dtype (float32, int64, int32; bool for And / Or / Equal) that broadcast "
                             "to a bool output (rank <= %d)",
                          TC__CUDA_MAX_RANK);
    return true;
}

static tc_status bool_binary_run(const tc__kernel_ctx *ctx, int op) {
    tc__dn_walk w;
    if (ctx->n_out < 1 || !bool_binary_ok(op, ctx->n_in, ctx->in, ctx->out[0], &w))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: a step this kernel does not compute", ctx->op_type);
    cudaError_t e = tc__cuda_dn_binary_bool(&w, ctx->in[0]->data, ctx->in[1]->data, ctx->in[0]->dtype, op,
                                            ctx->out[0]->data, tc__cuda_stream(ctx));
    return e == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(e, ctx->err, "comparison launch");
}

#define DN_BOOL_BINARY(lname, Op, code)                                                                              \
    static bool lname##_supports(const tc__step_desc *d) { return bool_binary_supports(d, code); }                   \
    static tc_status lname##_run(const tc__kernel_ctx *ctx) { return bool_binary_run(ctx, code); }                   \
    const tc__tactic tc__tactic_cuda_##lname = {                                                                      \
        .name = "cuda_" #lname,                                                                                       \
        .op_type = #Op,                                                                                               \
        .backend = TC__BACKEND_CUDA,                                                                                  \
        .caps = 0,                                                                                                    \
        .flags = 0,                                                                                                   \
        .supports = lname##_supports,                                                                                 \
        .run = lname##_run,                                                                                           \
    };

DN_BOOL_BINARY(and, And, TC__DN_LOGIC_AND)
DN_BOOL_BINARY(or, Or, TC__DN_LOGIC_OR)
DN_BOOL_BINARY(equal, Equal, TC__DN_CMP_EQ)
DN_BOOL_BINARY(less, Less, TC__DN_CMP_LT)
DN_BOOL_BINARY(greater, Greater, TC__DN_CMP_GT)

/* ---- Not, IsNaN -------------------------------------------------------------------------------------------- */

static bool unary_bool_ok(bool is_not, int n_in, const tc__tensor *const *in, const tc__tensor *y) {
    if (n_in != 1 || in[0] == NULL || y == NULL || y->dtype != TC_DTYPE_BOOL || !same_shape(in[0], y)) return false;
    const tc_dtype dt = in[0]->dtype;
    return is_not ? dt == TC_DTYPE_BOOL : (dt == TC_DTYPE_FLOAT32 || dt == TC_DTYPE_FLOAT16);
}

static bool not_supports(const tc__step_desc *d) {
    if (!tc__epilogue_is_none(d->epi)) return tc__refuse(d, "no fused epilogue");
    if (d->n_out != 1 || !unary_bool_ok(true, d->n_in, d->in, d->out[0])) return tc__refuse(d, "bool only");
    return true;
}

static tc_status not_run(const tc__kernel_ctx *ctx) {
    if (ctx->n_out < 1 || !unary_bool_ok(true, ctx->n_in, ctx->in, ctx->out[0]))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Not: a step this kernel does not compute");
    cudaError_t e = tc__cuda_dn_not(ctx->in[0]->data, ctx->out[0]->data, tc__tensor_numel(ctx->out[0]),
                                    tc__cuda_stream(ctx));
    return e == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(e, ctx->err, "not launch");
}

const tc__tactic tc__tactic_cuda_not = {
    .name = "cuda_not",
    .op_type = "Not",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = 0,
    .supports = not_supports,
    .run = not_run,
};

static bool isnan_supports(const tc__step_desc *d) {
    if (!tc__epilogue_is_none(d->epi)) return tc__refuse(d, "no fused epilogue");
    if (d->n_out != 1 || !unary_bool_ok(false, d->n_in, d->in, d->out[0]))
        return tc__refuse(d, "float32 or float16 input only");
    return true;
}

static tc_status isnan_run(const tc__kernel_ctx *ctx) {
    if (ctx->n_out < 1 || !unary_bool_ok(false, ctx->n_in, ctx->in, ctx->out[0]))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "IsNaN: a step this kernel does not compute");
    cudaError_t e = tc__cuda_dn_isnan(ctx->in[0]->data, ctx->in[0]->dtype, ctx->out[0]->data,
                                      tc__tensor_numel(ctx->out[0]), tc__cuda_stream(ctx));
    return e == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(e, ctx->err, "isnan launch");
}

const tc__tactic tc__tactic_cuda_isnan = {
    .name = "cuda_isnan",
    .op_type = "IsNaN",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = 0,
    .supports = isnan_supports,
    .run = isnan_run,
};

/* ---- Pow --------------------------------------------------------------------------------------------------- */

static bool pow_ok(int n_in, const tc__tensor *const *in, const tc__tensor *y, tc__dn_walk *w) {
    if (n_in != 2 || in[0] == NULL || in[1] == NULL || y == NULL) return false;
    const tc_dtype bt = in[1]->dtype;
    if (in[0]->dtype != TC_DTYPE_FLOAT32 || y->dtype != TC_DTYPE_FLOAT32 ||
        (bt != TC_DTYPE_FLOAT32 && bt != TC_DTYPE_INT32 && bt != TC_DTYPE_INT64))
        return false;
    return tc__dn_walk_bcast(y->rank, y->dims, 2, in, w);
}

static bool pow_supports(const tc__step_desc *d) {
    if (!tc__epilogue_is_none(d->epi)) return tc__refuse(d, "no fused epilogue");
    tc__dn_walk w;
    if (d->n_out != 1 || !pow_ok(d->n_in, d->in, d->out[0], &w))
        return tc__refuse(d, "a float32 base and a float32 / int32 / int64 exponent that broadcast (rank <= %d)",
                          TC__CUDA_MAX_RANK);
    return true;
}

static tc_status pow_run(const tc__kernel_ctx *ctx) {
    tc__dn_walk w;
    if (ctx->n_out < 1 || !pow_ok(ctx->n_in, ctx->in, ctx->out[0], &w))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Pow: a step this kernel does not compute");
    cudaError_t e = tc__cuda_dn_pow_f32(&w, ctx->in[0]->data, ctx->in[1]->data, ctx->in[1]->dtype, ctx->out[0]->data,
                                        tc__cuda_stream(ctx));
    return e == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(e, ctx->err, "pow launch");
}

const tc__tactic tc__tactic_cuda_pow_f32 = {
    .name = "cuda_pow_f32",
    .op_type = "Pow",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = 0,
    .supports = pow_supports,
    .run = pow_run,
};

/* ---- ReduceMean -------------------------------------------------------------------------------------------- */

/* The reduction of x into y with the axes of `axes_t` (host tensor, NULL: the attribute), the reference's rules
 * (reduce.c reduce_mask). */
static bool reduce_args(int64_t opset, const tc__attrs *attrs, int n_in, const tc__tensor *x, const tc__tensor *axes_t,
                        const tc__tensor *y, tc__cuda_reduce_args *p) {
    memset(p, 0, sizeof *p);
    if (x == NULL || y == NULL || x->dtype != TC_DTYPE_FLOAT32 || y->dtype != TC_DTYPE_FLOAT32) return false;
    const int32_t rank = x->rank;
    if (rank > TC__CUDA_MAX_RANK || rank > TC_MAX_RANK) return false;
    const int64_t *attr_axes = NULL;
    const size_t n_attr = tc__attr_ints(attrs, "axes", &attr_axes);
    if (n_in >= 2 && axes_t != NULL && (n_attr > 0 || opset < 18)) return false;
    int64_t n;
    const int64_t *ax;
    if (n_in >= 2 && axes_t != NULL) {
        if (axes_t->dtype != TC_DTYPE_INT64 || axes_t->rank > 1) return false;
        n = tc__tensor_numel(axes_t);
        ax = axes_t->data;
        if (n > 0 && ax == NULL) return false;
    } else {
        n = (int64_t)n_attr;
        ax = attr_axes;
    }
    bool mask[TC_MAX_RANK] = {false};
    if (n == 0) {
        if (tc__attr_int(attrs, "noop_with_empty_axes", 0) == 0)
            for (int32_t i = 0; i < rank; i++) mask[i] = true;
    } else {
        for (int64_t k = 0; k < n; k++) {
            int64_t a = ax[k];
            if (a < -(int64_t)rank || a >= (int64_t)rank) return false;
            if (a < 0) a += rank;
            if (mask[a]) return false;
            mask[a] = true;
        }
    }
    /* Kept and reduced dims with x's strides, each collapsed as a one-input walk. */
    tc__dn_walk kw, rw;
    memset(&kw, 0, sizeof kw);
    memset(&rw, 0, sizeof rw);
    kw.n_in = rw.n_in = 1;
    int64_t s = 1, on = 1, count = 1;
    int64_t kd[TC_MAX_RANK], ks[TC_MAX_RANK], rd[TC_MAX_RANK], rs[TC_MAX_RANK];
    int32_t nk = 0, nr = 0;
    int64_t st[TC_MAX_RANK];
    for (int32_t i = rank - 1; i >= 0; i--) st[i] = s, s *= x->dims[i];
    for (int32_t i = 0; i < rank; i++) {
        if (x->dims[i] < 0) return false;
        if (mask[i]) rd[nr] = x->dims[i], rs[nr++] = st[i], count *= x->dims[i];
        else kd[nk] = x->dims[i], ks[nk++] = st[i], on *= x->dims[i];
    }
    if (tc__tensor_numel(y) != on) return false;
    kw.rank = nk;
    rw.rank = nr;
    for (int32_t i = 0; i < nk; i++) kw.dims[i] = kd[i], kw.st[0][i] = ks[i];
    for (int32_t i = 0; i < nr; i++) rw.dims[i] = rd[i], rw.st[0][i] = rs[i];
    tc__dn_walk_collapse(&kw);
    tc__dn_walk_collapse(&rw);
    p->n_out = on;
    p->count = count;
    p->krank = kw.rank;
    p->rrank = rw.rank;
    for (int32_t i = 0; i < TC__CUDA_MAX_RANK; i++) {
        p->kdims[i] = kw.dims[i], p->kst[i] = kw.st[0][i];
        p->rdims[i] = rw.dims[i], p->rst[i] = rw.st[0][i];
    }
    return true;
}

static bool reducemean_supports(const tc__step_desc *d) {
    if (!tc__epilogue_is_none(d->epi)) return tc__refuse(d, "no fused epilogue");
    if (d->n_in < 1 || d->n_in > 2 || d->n_out != 1) return tc__refuse(d, "expects data (and axes) and one output");
    const tc__tensor *axes_t = d->n_in > 1 ? d->in[1] : NULL;
    if (axes_t != NULL && !tc__dn_known(d, 1)) return tc__refuse(d, "the axes input is not constant");
    tc__cuda_reduce_args p;
    if (!reduce_args(d->opset, d->attrs, d->n_in, d->in[0], axes_t, d->out[0], &p))
        return tc__refuse(d, "float32 only, rank <= %d, valid axes", TC__CUDA_MAX_RANK);
    return true;
}

static tc_status reducemean_run(const tc__kernel_ctx *ctx) {
    const tc__tensor *axes_t = NULL;
    if (ctx->n_in > 1 && ctx->in[1] != NULL) {
        axes_t = tc__dn_host_in(ctx, 1);
        if (axes_t == NULL)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "ReduceMean: the axes are not known on the host");
    }
    tc__cuda_reduce_args p;
    if (ctx->n_in < 1 || ctx->n_out < 1 ||
        !reduce_args(ctx->opset, ctx->attrs, ctx->n_in, ctx->in[0], axes_t, ctx->out[0], &p))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "ReduceMean: a step this kernel does not compute");
    p.x = ctx->in[0]->data;
    p.y = ctx->out[0]->data;
    cudaError_t e = tc__cuda_dn_reducemean_f32(&p, tc__cuda_stream(ctx));
    return e == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(e, ctx->err, "reducemean launch");
}

const tc__tactic tc__tactic_cuda_reducemean_f32 = {
    .name = "cuda_reducemean_f32",
    .op_type = "ReduceMean",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = 0,
    .supports = reducemean_supports,
    .run = reducemean_run,
};
