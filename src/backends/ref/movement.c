/*
 * movement.c - reference kernels for the data movement operators: Transpose, Concat,
 * Split, Slice, Gather and GatherElements. They copy elements by size, so every dtype
 * works. Each kernel re-derives the output shape from its inputs and fails rather than
 * read or write out of bounds when the shape it was given does not match.
 */
#include <stdio.h>
#include <string.h>

#include "backends/ref/ref.h"

void tc__ref_row_strides(int32_t rank, const int64_t *dims, int64_t *strides) {
    int64_t s = 1;
    for (int32_t i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
}

/* Fails with INTERNAL when output o does not have the expected dtype and shape. */
static tc_status check_out(const tc__kernel_ctx *ctx, int o, tc_dtype dtype, int32_t rank, const int64_t *dims) {
    const tc__tensor *t = ctx->out[o];
    bool ok = t->dtype == dtype && t->rank == rank && t->data != NULL;
    for (int32_t i = 0; ok && i < rank; i++) ok = t->dims[i] == dims[i];
    if (ok) return TC_STATUS_OK;
    char a[160], b[160];
    return tc__fail(ctx->err, TC_STATUS_INTERNAL, "output %d was given shape %s (%s) but the inputs give %s (%s)", o,
                    tc__shape_str(t->rank, t->dims, a, sizeof a),
                    tc_dtype_name(t->dtype) ? tc_dtype_name(t->dtype) : "?", tc__shape_str(rank, dims, b, sizeof b),
                    tc_dtype_name(dtype) ? tc_dtype_name(dtype) : "?");
}

void tc__ref_strided_copy(void *dst_, const void *src_, int32_t rank, const int64_t *dims, const int64_t *src_strides,
                          int64_t offset, size_t es) {
    char *dst = dst_;
    const char *src = src_;
    int64_t n = tc__numel(rank, dims);
    if (n <= 0) return;
    int64_t c[TC_MAX_RANK] = {0};
    int64_t pos = offset;
    for (int64_t k = 0; k < n; k++) {
        memcpy(dst + (size_t)k * es, src + (size_t)pos * es, es);
        for (int32_t i = rank - 1; i >= 0; i--) {
            pos += src_strides[i];
            if (++c[i] < dims[i]) break;
            pos -= src_strides[i] * dims[i];
            c[i] = 0;
        }
    }
}

/* Reads an integer input tensor's elements (int32/int64 only); n is its element count. */
static tc_status read_int_input(const tc__kernel_ctx *ctx, int i, const char *what, int64_t *out, int64_t cap,
                                int64_t *n) {
    const tc__tensor *t = ctx->in[i];
    if (t->dtype != TC_DTYPE_INT64 && t->dtype != TC_DTYPE_INT32) return tc__ref_unsupported_dtype(ctx, i, t->dtype);
    if (t->rank > 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input '%s' must be 1-D, got rank %d", what,
                        (int)t->rank);
    *n = tc__tensor_numel(t);
    if (*n > cap)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "input '%s' has %lld elements, more than the %lld allowed", what, (long long)*n,
                        (long long)cap);
    for (int64_t k = 0; k < *n; k++) out[k] = tc__tensor_get_i64(t, k);
    return TC_STATUS_OK;
}

static tc_status normalize_axis(const tc__kernel_ctx *ctx, int64_t axis, int32_t rank, int32_t *out) {
    if (axis < -(int64_t)rank || axis >= rank)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axis %lld is out of range for rank %d", (long long)axis,
                        (int)rank);
    *out = (int32_t)(axis < 0 ? axis + rank : axis);
    return TC_STATUS_OK;
}

/* ---- Transpose ---------------------------------------------------------------------- */

tc_status tc__ref_Transpose(const tc__kernel_ctx *ctx) {
    const tc__tensor *in = ctx->in[0];
    int32_t r = in->rank;
    const int64_t *perm_attr = NULL;
    size_t np = tc__attr_ints(ctx->attrs, "perm", &perm_attr);
    bool has_perm = tc__attr_has(ctx->attrs, "perm");
    if (has_perm && np != (size_t)r)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "perm has %zu entries but the input has rank %d", np,
                        (int)r);
    int64_t in_strides[TC_MAX_RANK], dims[TC_MAX_RANK], strides[TC_MAX_RANK];
    bool used[TC_MAX_RANK] = {false};
    tc__ref_row_strides(r, in->dims, in_strides);
    for (int32_t i = 0; i < r; i++) {
        int64_t p = has_perm ? perm_attr[i] : r - 1 - i;
        if (p < 0 || p >= r || used[p])
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                            "perm entry %d is %lld: perm must be a permutation of 0..%d", (int)i, (long long)p,
                            (int)r - 1);
        used[p] = true;
        dims[i] = in->dims[p];
        strides[i] = in_strides[p];
    }
    tc_status st = check_out(ctx, 0, in->dtype, r, dims);
    if (st) return st;
    tc__ref_strided_copy(ctx->out[0]->data, in->data, r, dims, strides, 0, tc_dtype_size(in->dtype));
    return TC_STATUS_OK;
}

/* ---- Concat, Split ------------------------------------------------------------------ */

tc_status tc__ref_Concat(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 1) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects at least 1 input");
    const tc__tensor *in0 = ctx->in[0];
    int32_t r = in0->rank;
    if (r == 0) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "cannot concatenate scalars (rank 0)");
    int32_t ax = 0;
    tc_status st = normalize_axis(ctx, tc__attr_int(ctx->attrs, "axis", 0), r, &ax);
    if (st) return st;
    int64_t dims[TC_MAX_RANK] = {0};
    memcpy(dims, in0->dims, sizeof(int64_t) * (size_t)r);
    dims[ax] = 0;
    for (int i = 0; i < ctx->n_in; i++) {
        const tc__tensor *t = ctx->in[i];
        if (t == NULL) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input %d is missing", i);
        if (t->dtype != in0->dtype || t->rank != r)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                            "input %d has type %s and rank %d, input 0 has %s and %d", i,
                            tc_dtype_name(t->dtype) ? tc_dtype_name(t->dtype) : "?", (int)t->rank,
                            tc_dtype_name(in0->dtype) ? tc_dtype_name(in0->dtype) : "?", (int)r);
        for (int32_t d = 0; d < r; d++)
            if (d != ax && t->dims[d] != in0->dims[d])
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                                "input %d has size %lld on dim %d, input 0 has %lld", i, (long long)t->dims[d], (int)d,
                                (long long)in0->dims[d]);
        dims[ax] += t->dims[ax];
    }
    st = check_out(ctx, 0, in0->dtype, r, dims);
    if (st) return st;
    size_t es = tc_dtype_size(in0->dtype);
    int64_t outer = tc__numel(ax, dims), inner = tc__numel(r - ax - 1, dims + ax + 1);
    char *dst = ctx->out[0]->data;
    for (int64_t o = 0; o < outer; o++) {
        for (int i = 0; i < ctx->n_in; i++) {
            size_t block = (size_t)(ctx->in[i]->dims[ax] * inner) * es;
            memcpy(dst, (const char *)ctx->in[i]->data + (size_t)o * block, block);
            dst += block;
        }
    }
    return TC_STATUS_OK;
}

/* The sizes of the Split outputs along the axis (opset-dependent sources, as the spec says). */
static tc_status split_sizes(const tc__kernel_ctx *ctx, int64_t dim, int64_t *sizes) {
    int n_out = ctx->n_out;
    int64_t n = -1;
    if (ctx->opset < 13 && tc__attr_has(ctx->attrs, "split")) {
        const int64_t *s = NULL;
        n = (int64_t)tc__attr_ints(ctx->attrs, "split", &s);
        if (n != n_out)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "split has %lld sizes but the node has %d outputs",
                            (long long)n, n_out);
        if (n > 0) memcpy(sizes, s, sizeof(int64_t) * (size_t)n);
    } else if (ctx->opset >= 13 && ctx->n_in > 1 && ctx->in[1] != NULL) {
        tc_status st = read_int_input(ctx, 1, "split", sizes, n_out, &n);
        if (st) return st;
        if (n != n_out)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "split has %lld sizes but the node has %d outputs",
                            (long long)n, n_out);
    }
    if (n >= 0) {
        int64_t sum = 0;
        for (int o = 0; o < n_out; o++) {
            if (sizes[o] < 0 || tc__add_overflow_i64(sum, sizes[o], &sum))
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "split size %d is invalid (%lld)", o,
                                (long long)sizes[o]);
        }
        if (sum != dim)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                            "split sizes add up to %lld but the axis has size %lld", (long long)sum, (long long)dim);
        return TC_STATUS_OK;
    }
    if (ctx->opset < 18 && dim % n_out != 0)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axis of size %lld cannot be split into %d equal parts",
                        (long long)dim, n_out);
    int64_t chunk = dim / n_out + (dim % n_out != 0);
    int64_t last = dim - chunk * (n_out - 1);
    if (last < 0)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axis of size %lld cannot be split into %d parts",
                        (long long)dim, n_out);
    for (int o = 0; o < n_out; o++) sizes[o] = o == n_out - 1 ? last : chunk;
    return TC_STATUS_OK;
}

tc_status tc__ref_Split(const tc__kernel_ctx *ctx) {
    const tc__tensor *in = ctx->in[0];
    int32_t r = in->rank;
    if (ctx->n_out < 1 || ctx->n_out > 64)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects 1 to 64 outputs, got %d", ctx->n_out);
    int32_t ax = 0;
    tc_status st = normalize_axis(ctx, tc__attr_int(ctx->attrs, "axis", 0), r, &ax);
    if (st) return st;
    int64_t sizes[64];
    st = split_sizes(ctx, in->dims[ax], sizes);
    if (st) return st;
    size_t es = tc_dtype_size(in->dtype);
    int64_t outer = tc__numel(ax, in->dims), inner = tc__numel(r - ax - 1, in->dims + ax + 1);
    size_t in_block = (size_t)(in->dims[ax] * inner) * es;
    int64_t offset = 0;
    for (int o = 0; o < ctx->n_out; o++) {
        if (ctx->out[o] != NULL) {
            int64_t dims[TC_MAX_RANK];
            memcpy(dims, in->dims, sizeof(int64_t) * (size_t)r);
            dims[ax] = sizes[o];
            st = check_out(ctx, o, in->dtype, r, dims);
            if (st) return st;
            size_t block = (size_t)(sizes[o] * inner) * es;
            char *dst = ctx->out[o]->data;
            const char *src = (const char *)in->data + (size_t)(offset * inner) * es;
            for (int64_t k = 0; k < outer; k++) memcpy(dst + (size_t)k * block, src + (size_t)k * in_block, block);
        }
        offset += sizes[o];
    }
    return TC_STATUS_OK;
}

/* ---- Slice -------------------------------------------------------------------------- */

/*
 * Clamps start and end as the ONNX spec says and returns the number of elements along
 * an axis of size dim (*start gets the first index taken). step must be non-zero.
 * (Shape inference in graph/infer_movement.c computes the same.)
 */
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

tc_status tc__ref_Slice(const tc__kernel_ctx *ctx) {
    const tc__tensor *in = ctx->in[0];
    int32_t r = in->rank;
    int64_t starts[TC_MAX_RANK] = {0}, ends[TC_MAX_RANK] = {0}, axes[TC_MAX_RANK] = {0}, steps[TC_MAX_RANK] = {0};
    int64_t ns, ne, na, nst;
    tc_status st = TC_STATUS_OK;
    if (ctx->opset >= 10) {
        if (ctx->n_in < 3) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects 3 to 5 inputs");
        st = read_int_input(ctx, 1, "starts", starts, r, &ns);
        if (!st) st = read_int_input(ctx, 2, "ends", ends, r, &ne);
        na = nst = ns;
        if (!st && ctx->n_in > 3 && ctx->in[3] != NULL)
            st = read_int_input(ctx, 3, "axes", axes, r, &na);
        else
            for (int64_t i = 0; i < ns; i++) axes[i] = i;
        if (!st && ctx->n_in > 4 && ctx->in[4] != NULL)
            st = read_int_input(ctx, 4, "steps", steps, r, &nst);
        else
            for (int64_t i = 0; i < ns; i++) steps[i] = 1;
        if (st) return st;
    } else {
        const int64_t *p;
        ns = (int64_t)tc__attr_ints(ctx->attrs, "starts", &p);
        if (ns > r) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "more starts than the input rank %d", (int)r);
        if (ns > 0) memcpy(starts, p, sizeof(int64_t) * (size_t)ns);
        ne = (int64_t)tc__attr_ints(ctx->attrs, "ends", &p);
        if (ne > r) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "more ends than the input rank %d", (int)r);
        if (ne > 0) memcpy(ends, p, sizeof(int64_t) * (size_t)ne);
        na = ns;
        if (tc__attr_has(ctx->attrs, "axes")) {
            na = (int64_t)tc__attr_ints(ctx->attrs, "axes", &p);
            if (na > r)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "more axes than the input rank %d", (int)r);
            if (na > 0) memcpy(axes, p, sizeof(int64_t) * (size_t)na);
        } else {
            for (int64_t i = 0; i < ns; i++) axes[i] = i;
        }
        nst = ns;
        for (int64_t i = 0; i < ns; i++) steps[i] = 1;
    }
    if (ne != ns || na != ns || nst != ns)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "starts, ends, axes and steps must have one length, got %lld, %lld, %lld, %lld", (long long)ns,
                        (long long)ne, (long long)na, (long long)nst);
    int64_t first[TC_MAX_RANK], step_of[TC_MAX_RANK], dims[TC_MAX_RANK];
    bool used[TC_MAX_RANK] = {false};
    for (int32_t i = 0; i < r; i++) {
        first[i] = 0;
        step_of[i] = 1;
        dims[i] = in->dims[i];
    }
    for (int64_t i = 0; i < ns; i++) {
        int32_t a = 0;
        st = normalize_axis(ctx, axes[i], r, &a);
        if (st) return st;
        if (used[a]) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axis %lld is repeated", (long long)axes[i]);
        used[a] = true;
        if (steps[i] == 0) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "step for axis %d is 0", (int)a);
        first[a] = starts[i];
        dims[a] = slice_count(in->dims[a], &first[a], ends[i], steps[i]);
        step_of[a] = steps[i];
    }
    st = check_out(ctx, 0, in->dtype, r, dims);
    if (st) return st;
    int64_t in_strides[TC_MAX_RANK], strides[TC_MAX_RANK], offset = 0;
    tc__ref_row_strides(r, in->dims, in_strides);
    for (int32_t i = 0; i < r; i++) {
        strides[i] = in_strides[i] * step_of[i];
        if (dims[i] > 0) offset += first[i] * in_strides[i];
    }
    tc__ref_strided_copy(ctx->out[0]->data, in->data, r, dims, strides, offset, tc_dtype_size(in->dtype));
    return TC_STATUS_OK;
}

/* ---- Gather, GatherElements --------------------------------------------------------- */

/* Normalises index value v (at flat position pos of the indices) against an axis of size dim. */
static tc_status check_index(const tc__kernel_ctx *ctx, int64_t v, int64_t pos, int32_t axis, int64_t dim,
                             int64_t *out) {
    if (v < -dim || v >= dim)
        return tc__fail(
            ctx->err, TC_STATUS_INVALID_ARGUMENT,
            "index %lld (at position %lld of indices) is out of range [%lld, %lld] for axis %d of size %lld",
            (long long)v, (long long)pos, (long long)-dim, (long long)(dim - 1), (int)axis, (long long)dim);
    *out = v < 0 ? v + dim : v;
    return TC_STATUS_OK;
}

tc_status tc__ref_Gather(const tc__kernel_ctx *ctx) {
    const tc__tensor *data = ctx->in[0], *idx = ctx->in[1];
    if (idx->dtype != TC_DTYPE_INT64 && idx->dtype != TC_DTYPE_INT32)
        return tc__ref_unsupported_dtype(ctx, 1, idx->dtype);
    int32_t r = data->rank, q = idx->rank;
    if (r < 1) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "data must have rank >= 1, got a scalar");
    int32_t ax = 0;
    tc_status st = normalize_axis(ctx, tc__attr_int(ctx->attrs, "axis", 0), r, &ax);
    if (st) return st;
    if (q + r - 1 > TC_MAX_RANK)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "output rank %d is above the maximum rank %d",
                        (int)(q + r - 1), TC_MAX_RANK);
    int64_t dims[TC_MAX_RANK] = {0};
    int32_t k = 0;
    for (int32_t i = 0; i < ax; i++) dims[k++] = data->dims[i];
    for (int32_t i = 0; i < q; i++) dims[k++] = idx->dims[i];
    for (int32_t i = ax + 1; i < r; i++) dims[k++] = data->dims[i];
    st = check_out(ctx, 0, data->dtype, k, dims);
    if (st) return st;
    int64_t n_idx = tc__tensor_numel(idx), dim = data->dims[ax];
    for (int64_t j = 0; j < n_idx; j++) { /* validate every index before writing anything */
        int64_t v = 0;
        st = check_index(ctx, tc__tensor_get_i64(idx, j), j, ax, dim, &v);
        if (st) return st;
    }
    size_t es = tc_dtype_size(data->dtype);
    int64_t outer = tc__numel(ax, data->dims);
    size_t block = (size_t)tc__numel(r - ax - 1, data->dims + ax + 1) * es;
    char *dst = ctx->out[0]->data;
    const char *src = data->data;
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t j = 0; j < n_idx; j++) {
            int64_t v = tc__tensor_get_i64(idx, j);
            if (v < 0) v += dim;
            memcpy(dst, src + (size_t)(o * dim + v) * block, block);
            dst += block;
        }
    }
    return TC_STATUS_OK;
}

tc_status tc__ref_GatherElements(const tc__kernel_ctx *ctx) {
    const tc__tensor *data = ctx->in[0], *idx = ctx->in[1];
    if (idx->dtype != TC_DTYPE_INT64 && idx->dtype != TC_DTYPE_INT32)
        return tc__ref_unsupported_dtype(ctx, 1, idx->dtype);
    int32_t r = data->rank;
    if (r < 1) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "data must have rank >= 1, got a scalar");
    if (idx->rank != r)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "indices have rank %d but data has rank %d",
                        (int)idx->rank, (int)r);
    int32_t ax = 0;
    tc_status st = normalize_axis(ctx, tc__attr_int(ctx->attrs, "axis", 0), r, &ax);
    if (st) return st;
    for (int32_t i = 0; i < r; i++)
        if (i != ax && idx->dims[i] > data->dims[i])
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                            "indices have size %lld on dim %d, larger than the data's %lld", (long long)idx->dims[i],
                            (int)i, (long long)data->dims[i]);
    st = check_out(ctx, 0, data->dtype, r, idx->dims);
    if (st) return st;
    int64_t ds[TC_MAX_RANK], c[TC_MAX_RANK] = {0};
    tc__ref_row_strides(r, data->dims, ds);
    size_t es = tc_dtype_size(data->dtype);
    int64_t n = tc__tensor_numel(idx), dim = data->dims[ax];
    char *dst = ctx->out[0]->data;
    const char *src = data->data;
    for (int64_t k = 0; k < n; k++) {
        int64_t v = 0;
        st = check_index(ctx, tc__tensor_get_i64(idx, k), k, ax, dim, &v);
        if (st) return st;
        int64_t off = 0;
        for (int32_t i = 0; i < r; i++) off += (i == ax ? v : c[i]) * ds[i];
        memcpy(dst + (size_t)k * es, src + (size_t)off * es, es);
        for (int32_t i = r - 1; i >= 0; i--) {
            if (++c[i] < idx->dims[i]) break;
            c[i] = 0;
        }
    }
    return TC_STATUS_OK;
}
