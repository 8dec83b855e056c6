/*
 * dn_index_tactic.c - tactics cuda_gather, cuda_where, cuda_expand and cuda_slice: data movement by element size
 * (any dtype of 1, 2, 4 or 8 bytes) on the kernels of dn_index.cu.
 *   - cuda_gather: int32 / int64 indices, any axis, negative indices wrap. An index out of range fails the run as
 *     the reference does: the kernel never reads out of bounds, writes NaN (float dtypes) or 0 (others) to those
 *     rows and reports it (cuda_exec.h), and the backend fails the run naming this step.
 *   - cuda_where: bool condition, X and Y of one dtype, all three broadcast (NumPy rules) to the output.
 *   - cuda_expand: the output's shape (set by shape inference, whether or not the shape input is constant) is a
 *     broadcast of the input's; the shape input itself is not read.
 *   - cuda_slice: starts / ends / axes / steps (opset >= 10: inputs, which must be constant at build time and are
 *     read from ctx->host_in at run; before 10: attributes), clamped as the reference, negative steps included.
 */
#include <string.h>

#include "backends/cuda/dn_index.h"

/* ---- Gather ------------------------------------------------------------------------------------------------ */

static bool gather_args(const tc__attrs *attrs, const tc__tensor *data, const tc__tensor *idx, const tc__tensor *y,
                        tc__cuda_gather_args *p) {
    memset(p, 0, sizeof *p);
    if (data == NULL || idx == NULL || y == NULL) return false;
    if (idx->dtype != TC_DTYPE_INT64 && idx->dtype != TC_DTYPE_INT32) return false;
    p->es = tc__dn_elem_size(data->dtype);
    if (p->es == 0 || y->dtype != data->dtype) return false;
    const int32_t r = data->rank, q = idx->rank;
    if (r < 1 || r > TC_MAX_RANK || q < 0 || q + r - 1 > TC_MAX_RANK) return false;
    int64_t axis = tc__attr_int(attrs, "axis", 0);
    if (axis < -(int64_t)r || axis >= r) return false;
    if (axis < 0) axis += r;
    int64_t dims[TC_MAX_RANK];
    int32_t k = 0;
    for (int32_t i = 0; i < axis; i++) dims[k++] = data->dims[i];
    for (int32_t i = 0; i < q; i++) dims[k++] = idx->dims[i];
    for (int32_t i = (int32_t)axis + 1; i < r; i++) dims[k++] = data->dims[i];
    if (y->rank != k) return false;
    for (int32_t i = 0; i < k; i++)
        if (y->dims[i] != dims[i]) return false;
    p->outer = tc__numel((int32_t)axis, data->dims);
    p->dim = data->dims[axis];
    p->n_idx = tc__tensor_numel(idx);
    p->inner = tc__numel(r - (int32_t)axis - 1, data->dims + axis + 1);
    if (p->outer < 0 || p->n_idx < 0 || p->inner < 0) return false;
    p->idx64 = idx->dtype == TC_DTYPE_INT64;
    /* The out-of-range fill: a quiet NaN for float dtypes (little-endian bytes), else zeros. */
    uint64_t fill = 0;
    switch (data->dtype) {
    case TC_DTYPE_FLOAT32: fill = 0x7fc00000u; break;
    case TC_DTYPE_FLOAT16: fill = 0x7e00u; break;
    case TC_DTYPE_BFLOAT16: fill = 0x7fc0u; break;
    case TC_DTYPE_FLOAT64: fill = 0x7ff8000000000000ull; break;
    default: break;
    }
    for (int b = 0; b < 8; b++) p->fill[b] = (unsigned char)(fill >> (8 * b));
    return true;
}

static bool gather_supports(const tc__step_desc *d) {
    if (!tc__epilogue_is_none(d->epi)) return tc__refuse(d, "no fused epilogue");
    tc__cuda_gather_args p;
    if (d->n_in != 2 || d->n_out != 1 || !gather_args(d->attrs, d->in[0], d->in[1], d->out[0], &p))
        return tc__refuse(d, "data of 1, 2, 4 or 8-byte elements, int32 / int64 indices, output rank <= %d",
                          TC_MAX_RANK);
    return true;
}

static tc_status gather_run(const tc__kernel_ctx *ctx) {
    tc__cuda_gather_args p;
    if (ctx->n_in != 2 || ctx->n_out < 1 || !gather_args(ctx->attrs, ctx->in[0], ctx->in[1], ctx->out[0], &p))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Gather: a step this kernel does not compute");
    if (p.outer == 0 || p.n_idx == 0 || p.inner == 0) return TC_STATUS_OK;
    if (p.dim == 0) /* every index is out of range: the reference fails; say so rather than fill */
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Gather: indices into an axis of size 0");
    p.data = ctx->in[0]->data;
    p.indices = ctx->in[1]->data;
    p.y = ctx->out[0]->data;
    p.report = tc__cuda_report_of(ctx, TC__CUDA_BAD_INDEX);
    cudaError_t e = tc__cuda_dn_gather(&p, tc__cuda_stream(ctx));
    return e == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(e, ctx->err, "gather launch");
}

const tc__tactic tc__tactic_cuda_gather = {
    .name = "cuda_gather",
    .op_type = "Gather",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = 0,
    .supports = gather_supports,
    .run = gather_run,
};

/* ---- Where ------------------------------------------------------------------------------------------------- */

static bool where_args(int n_in, const tc__tensor *const *in, const tc__tensor *y, tc__dn_walk *w, int *es) {
    if (n_in != 3 || y == NULL || in[0] == NULL || in[1] == NULL || in[2] == NULL) return false;
    if (in[0]->dtype != TC_DTYPE_BOOL || in[1]->dtype != in[2]->dtype || y->dtype != in[1]->dtype) return false;
    *es = tc__dn_elem_size(y->dtype);
    return *es != 0 && tc__dn_walk_bcast(y->rank, y->dims, 3, in, w);
}

static bool where_supports(const tc__step_desc *d) {
    if (!tc__epilogue_is_none(d->epi)) return tc__refuse(d, "no fused epilogue");
    tc__dn_walk w;
    int es;
    if (d->n_out != 1 || !where_args(d->n_in, d->in, d->out[0], &w, &es))
        return tc__refuse(d, "a bool condition, X and Y of one dtype that broadcast to the output (rank <= %d)",
                          TC__CUDA_MAX_RANK);
    return true;
}

static tc_status where_run(const tc__kernel_ctx *ctx) {
    tc__dn_walk w;
    int es;
    if (ctx->n_out < 1 || !where_args(ctx->n_in, ctx->in, ctx->out[0], &w, &es))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Where: a step this kernel does not compute");
    cudaError_t e = tc__cuda_dn_where(&w, ctx->in[0]->data, ctx->in[1]->data, ctx->in[2]->data, ctx->out[0]->data, es,
                                      tc__cuda_stream(ctx));
    return e == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(e, ctx->err, "where launch");
}

const tc__tactic tc__tactic_cuda_where = {
    .name = "cuda_where",
    .op_type = "Where",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = 0,
    .supports = where_supports,
    .run = where_run,
};

/* ---- Expand ------------------------------------------------------------------------------------------------ */

static bool expand_args(int n_in, const tc__tensor *const *in, const tc__tensor *y, tc__dn_walk *w, int *es) {
    if (n_in != 2 || in[0] == NULL || y == NULL || y->dtype != in[0]->dtype) return false;
    *es = tc__dn_elem_size(y->dtype);
    return *es != 0 && tc__dn_walk_bcast(y->rank, y->dims, 1, in, w);
}

static bool expand_supports(const tc__step_desc *d) {
    if (!tc__epilogue_is_none(d->epi)) return tc__refuse(d, "no fused epilogue");
    tc__dn_walk w;
    int es;
    if (d->n_out != 1 || !expand_args(d->n_in, d->in, d->out[0], &w, &es))
        return tc__refuse(d, "an input of 1, 2, 4 or 8-byte elements that broadcasts to the output (rank <= %d)",
                          TC__CUDA_MAX_RANK);
    return true;
}

static tc_status expand_run(const tc__kernel_ctx *ctx) {
    tc__dn_walk w;
    int es;
    if (ctx->n_out < 1 || !expand_args(ctx->n_in, ctx->in, ctx->out[0], &w, &es))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Expand: a step this kernel does not compute");
    cudaError_t e = tc__cuda_dn_strided_copy(&w, ctx->in[0]->data, ctx->out[0]->data, es, tc__cuda_stream(ctx));
    return e == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(e, ctx->err, "expand launch");
}

const tc__tactic tc__tactic_cuda_expand = {
    .name = "cuda_expand",
    .op_type = "Expand",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = 0,
    .supports = expand_supports,
    .run = expand_run,
};

/* ---- Slice ------------------------------------------------------------------------------------------------- */

/* The elements of 1-D (or scalar) int32 / int64 host tensor t into out (at most cap); -1 when it is not one. */
static int64_t read_ints(const tc__tensor *t, int64_t *out, int64_t cap) {
    if (t == NULL || (t->dtype != TC_DTYPE_INT64 && t->dtype != TC_DTYPE_INT32) || t->rank > 1) return -1;
    const int64_t n = tc__tensor_numel(t);
    if (n < 0 || n > cap || (n > 0 && t->data == NULL)) return -1;
    for (int64_t k = 0; k < n; k++)
        out[k] = t->dtype == TC_DTYPE_INT64 ? ((const int64_t *)t->data)[k] : ((const int32_t *)t->data)[k];
    return n;
}

/* The reference's clamping (movement.c slice_count): the count along an axis of size dim, *start the first index. */
static int64_t slice_count(int64_t dim, int64_t *start, int64_t end, int64_t step) {
    int64_t s = *start, e = end;
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    if (step > 0) {
        s = s < 0 ? 0 : s > dim ? dim : s;
        e = e < 0 ? 0 : e > dim ? dim : e;
        *start = s;
        if (e <= s) return 0;
        return (e - s) / step + ((e - s) % step != 0);
    }
    if (dim == 0) {
        *start = 0;
        return 0;
    }
    s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
    e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
    *start = s;
    if (s <= e) return 0;
    if (step == INT64_MIN) return 1;
    return (s - e) / -step + ((s - e) % -step != 0);
}

/* The walk of a Slice; params[1..4] are the host tensors of starts, ends, axes, steps (NULL when absent). */
static bool slice_args(int64_t opset, const tc__attrs *attrs, int n_in, const tc__tensor *x,
                       const tc__tensor *const *params, const tc__tensor *y, tc__dn_walk *w, int *es) {
    memset(w, 0, sizeof *w);
    if (x == NULL || y == NULL || y->dtype != x->dtype || (*es = tc__dn_elem_size(x->dtype)) == 0) return false;
    const int32_t r = x->rank;
    if (r > TC__CUDA_MAX_RANK || r > TC_MAX_RANK) return false;
    int64_t starts[TC_MAX_RANK] = {0}, ends[TC_MAX_RANK] = {0}, axes[TC_MAX_RANK] = {0}, steps[TC_MAX_RANK] = {0};
    int64_t ns, ne, na, nst;
    if (opset >= 10) {
        if (n_in < 3 || n_in > 5) return false;
        ns = read_ints(params[1], starts, r);
        ne = read_ints(params[2], ends, r);
        na = nst = ns;
        if (n_in > 3 && params[3] != NULL) na = read_ints(params[3], axes, r);
        else
            for (int64_t i = 0; i < ns; i++) axes[i] = i;
        if (n_in > 4 && params[4] != NULL) nst = read_ints(params[4], steps, r);
        else
            for (int64_t i = 0; i < ns; i++) steps[i] = 1;
    } else {
        const int64_t *p;
        ns = (int64_t)tc__attr_ints(attrs, "starts", &p);
        if (ns > r) return false;
        if (ns > 0) memcpy(starts, p, sizeof(int64_t) * (size_t)ns);
        ne = (int64_t)tc__attr_ints(attrs, "ends", &p);
        if (ne > r) return false;
        if (ne > 0) memcpy(ends, p, sizeof(int64_t) * (size_t)ne);
        na = ns;
        if (tc__attr_has(attrs, "axes")) {
            na = (int64_t)tc__attr_ints(attrs, "axes", &p);
            if (na > r) return false;
            if (na > 0) memcpy(axes, p, sizeof(int64_t) * (size_t)na);
        } else {
            for (int64_t i = 0; i < ns; i++) axes[i] = i;
        }
        nst = ns;
        for (int64_t i = 0; i < ns; i++) steps[i] = 1;
    }
    if (ns < 0 || ne != ns || na != ns || nst != ns) return false;
    int64_t first[TC_MAX_RANK], step_of[TC_MAX_RANK], dims[TC_MAX_RANK];
    bool used[TC_MAX_RANK] = {false};
    for (int32_t i = 0; i < r; i++) first[i] = 0, step_of[i] = 1, dims[i] = x->dims[i];
    for (int64_t i = 0; i < ns; i++) {
        int64_t a = axes[i];
        if (a < -(int64_t)r || a >= r) return false;
        if (a < 0) a += r;
        if (used[a] || steps[i] == 0) return false;
        used[a] = true;
        first[a] = starts[i];
        dims[a] = slice_count(x->dims[a], &first[a], ends[i], steps[i]);
        step_of[a] = steps[i];
    }
    if (y->rank != r) return false;
    for (int32_t i = 0; i < r; i++)
        if (y->dims[i] != dims[i]) return false;
    w->rank = r;
    w->n_in = 1;
    w->numel = tc__numel(r, dims);
    if (w->numel < 0) return false;
    int64_t s = 1;
    for (int32_t i = r - 1; i >= 0; i--) {
        w->dims[i] = dims[i];
        w->st[0][i] = s * step_of[i];
        if (dims[i] > 0) w->base[0] += first[i] * s;
        s *= x->dims[i];
    }
    tc__dn_walk_collapse(w);
    return true;
}

static bool slice_supports(const tc__step_desc *d) {
    if (!tc__epilogue_is_none(d->epi)) return tc__refuse(d, "no fused epilogue");
    if (d->n_out != 1 || d->n_in < 1) return tc__refuse(d, "expects data and one output");
    const tc__tensor *params[5] = {NULL, NULL, NULL, NULL, NULL};
    if (d->opset >= 10)
        for (int i = 1; i < d->n_in && i < 5; i++) {
            if (d->in[i] == NULL) continue;
            if (!tc__dn_known(d, i)) return tc__refuse(d, "input %d (starts, ends, axes, steps) is not constant", i);
            params[i] = d->in[i];
        }
    tc__dn_walk w;
    int es;
    if (!slice_args(d->opset, d->attrs, d->n_in, d->in[0], params, d->out[0], &w, &es))
        return tc__refuse(d, "data of 1, 2, 4 or 8-byte elements, rank <= %d, valid starts / ends / axes / steps",
                          TC__CUDA_MAX_RANK);
    return true;
}

static tc_status slice_run(const tc__kernel_ctx *ctx) {
    const tc__tensor *params[5] = {NULL, NULL, NULL, NULL, NULL};
    if (ctx->opset >= 10)
        for (int i = 1; i < ctx->n_in && i < 5; i++) {
            if (ctx->in[i] == NULL) continue;
            params[i] = tc__dn_host_in(ctx, i);
            if (params[i] == NULL)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Slice: input %d is not known on the host", i);
        }
    tc__dn_walk w;
    int es;
    if (ctx->n_in < 1 || ctx->n_out < 1 ||
        !slice_args(ctx->opset, ctx->attrs, ctx->n_in, ctx->in[0], params, ctx->out[0], &w, &es))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Slice: a step this kernel does not compute");
    cudaError_t e = tc__cuda_dn_strided_copy(&w, ctx->in[0]->data, ctx->out[0]->data, es, tc__cuda_stream(ctx));
    return e == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(e, ctx->err, "slice launch");
}

const tc__tactic tc__tactic_cuda_slice = {
    .name = "cuda_slice",
    .op_type = "Slice",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = 0,
    .supports = slice_supports,
    .run = slice_run,
};
