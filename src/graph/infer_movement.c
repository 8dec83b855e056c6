/*
 * infer_movement.c - shape and type inference for the data movement operators:
 * Transpose, Concat, Split, Slice, Gather and GatherElements.
 *
 * Concat, Slice and Gather also propagate symval (the elements of small int64 tensors
 * as possibly symbolic dims), the pieces of shape arithmetic in exported models.
 */
#include <string.h>

#include "graph/op_schema.h"

/*
 * Reads a 0-D/1-D integer input as int64s (from its value, else a fully known symval).
 * *n = element count (-1 when not even that is known); *known = whether the values are.
 * Fails when the count is known and above cap, or the input is not an integer tensor.
 */
static tc_status read_ints(tc__infer_ctx *ctx, const tc__vinfo *v, const char *what, int64_t *out, int64_t cap,
                           int64_t *n, bool *known) {
    *n = -1;
    *known = false;
    if (v == NULL) return TC_STATUS_OK;
    if (v->dtype != TC_DTYPE_UNDEFINED && v->dtype != TC_DTYPE_INT64 && v->dtype != TC_DTYPE_INT32) {
        const char *nm = tc_dtype_name(v->dtype);
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "input '%s' must be int32 or int64, got %s", what,
                        nm ? nm : "an unknown type");
    }
    if (v->shape.rank > 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "input '%s' must be 1-D, got rank %d", what,
                        (int)v->shape.rank);
    if (v->value != NULL)
        *n = tc__tensor_numel(v->value);
    else if (v->symval_len >= 0)
        *n = v->symval_len;
    else if (v->shape.rank == 0)
        *n = 1;
    else if (v->shape.rank == 1 && v->shape.dims[0].value >= 0)
        *n = v->shape.dims[0].value;
    if (*n > cap)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "input '%s' has %lld elements, more than the %lld allowed", what, (long long)*n,
                        (long long)cap);
    *known = *n >= 0 && tc__infer_const_ints(v, out, cap) == *n;
    return TC_STATUS_OK;
}

/*
 * The elements of a small int64 input as dims (from its value or its symval): -1 when not
 * tracked. Negative literal values, which a dim cannot hold, become unknown dims.
 */
static int32_t read_symval(const tc__vinfo *v, tc__dim *out) {
    if (v == NULL) return -1;
    if (v->value != NULL && (v->value->dtype == TC_DTYPE_INT64 || v->value->dtype == TC_DTYPE_INT32) &&
        v->value->rank <= 1) {
        int64_t n = tc__tensor_numel(v->value);
        if (n < 0 || n > TC_MAX_RANK) return -1;
        for (int64_t i = 0; i < n; i++) {
            int64_t x = tc__tensor_get_i64(v->value, i);
            out[i] = tc__dim_literal(x);
        }
        return (int32_t)n;
    }
    if (v->symval_len < 0) return -1;
    for (int32_t i = 0; i < v->symval_len; i++) out[i] = v->symval[i];
    return v->symval_len;
}

/* ---- Transpose ---------------------------------------------------------------------- */

tc_status tc__infer_Transpose(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 1, 1, 1);
    if (st) return st;
    const tc__vinfo *in = ctx->in[0];
    tc__vinfo *out = &ctx->out[0];
    out->dtype = in->dtype;
    const int64_t *perm = NULL;
    size_t np = tc__attr_ints(ctx->attrs, "perm", &perm);
    bool has_perm = tc__attr_has(ctx->attrs, "perm");
    int32_t r = in->shape.rank;
    if (has_perm && r >= 0 && np != (size_t)r)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "perm has %zu entries but the input has rank %d", np,
                        (int)r);
    if (has_perm && np > TC_MAX_RANK)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "perm has %zu entries, above the maximum rank %d", np,
                        TC_MAX_RANK);
    if (r < 0) {
        out->shape.rank = has_perm ? (int32_t)np : TC__RANK_UNKNOWN;
        for (int32_t i = 0; i < out->shape.rank; i++) out->shape.dims[i] = tc__dim_unknown();
        return TC_STATUS_OK;
    }
    bool used[TC_MAX_RANK] = {false};
    out->shape.rank = r;
    for (int32_t i = 0; i < r; i++) {
        int64_t p = has_perm ? perm[i] : r - 1 - i;
        if (p < 0 || p >= r || used[p])
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                            "perm entry %d is %lld: perm must be a permutation of 0..%d", (int)i, (long long)p,
                            (int)r - 1);
        used[p] = true;
        out->shape.dims[i] = in->shape.dims[p];
    }
    return TC_STATUS_OK;
}

/* ---- Concat ------------------------------------------------------------------------- */

tc_status tc__infer_Concat(tc__infer_ctx *ctx) {
    if (ctx->n_in < 1) return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "expects at least 1 input, got 0");
    tc_status st = tc__infer_check_arity(ctx, ctx->n_in, ctx->n_in, 1);
    if (st) return st;
    if (!tc__attr_has(ctx->attrs, "axis"))
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "attribute 'axis' is required");
    int64_t axis = tc__attr_int(ctx->attrs, "axis", 0);
    tc__vinfo *out = &ctx->out[0];
    tc_dtype dt = TC_DTYPE_UNDEFINED;
    int32_t r = TC__RANK_UNKNOWN;
    for (int i = 0; i < ctx->n_in; i++) {
        const tc__vinfo *v = ctx->in[i];
        if (v->dtype != TC_DTYPE_UNDEFINED) {
            if (dt != TC_DTYPE_UNDEFINED && v->dtype != dt)
                return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "input %d has type %s but input 0 has %s", i,
                                tc_dtype_name(v->dtype) ? tc_dtype_name(v->dtype) : "?", tc_dtype_name(dt));
            dt = v->dtype;
        }
        if (v->shape.rank >= 0) {
            if (r >= 0 && v->shape.rank != r)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input %d has rank %d but others have rank %d", i,
                                (int)v->shape.rank, (int)r);
            r = v->shape.rank;
        }
    }
    out->dtype = dt;
    out->shape.rank = r;
    if (r < 0) return TC_STATUS_OK;
    if (r == 0) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "cannot concatenate scalars (rank 0)");
    int32_t ax = 0;
    st = tc__infer_axis(ctx, axis, r, &ax);
    if (st) return st;
    for (int32_t d = 0; d < r; d++) {
        if (d == ax) continue;
        tc__dim m = tc__dim_unknown();
        bool first = true, same = true;
        for (int i = 0; i < ctx->n_in; i++) {
            const tc__vinfo *v = ctx->in[i];
            if (v->shape.rank < 0) {
                same = false;
                continue;
            }
            tc__dim x = v->shape.dims[d];
            if (x.value >= 0) {
                if (m.value >= 0 && m.value != x.value)
                    return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                                    "input %d has size %lld on dim %d but another input has %lld", i,
                                    (long long)x.value, (int)d, (long long)m.value);
                m = x;
            } else if (!first && !tc__dim_same(x, m)) {
                same = false;
            } else if (first) {
                m = x;
            }
            first = false;
        }
        /* A known size wins; otherwise a symbol shared by every input. */
        out->shape.dims[d] = (m.value >= 0 || same) ? m : tc__dim_unknown();
    }
    int64_t sum = 0;
    int n_other = 0;
    tc__dim other = tc__dim_unknown();
    for (int i = 0; i < ctx->n_in; i++) {
        const tc__vinfo *v = ctx->in[i];
        tc__dim x = v->shape.rank >= 0 ? v->shape.dims[ax] : tc__dim_unknown();
        if (x.value >= 0) {
            if (tc__add_overflow_i64(sum, x.value, &sum) || sum > TC__MAX_NUMEL)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "concatenated dim %d overflows", (int)ax);
        } else {
            n_other++;
            other = x;
        }
    }
    if (n_other == 0)
        out->shape.dims[ax] = tc__dim_known(sum);
    else if (n_other == 1 && sum == 0)
        out->shape.dims[ax] = other;
    else
        out->shape.dims[ax] = tc__dim_unknown();
    /* Concatenation of shape pieces keeps their (symbolic) elements. */
    if (dt == TC_DTYPE_INT64 && r == 1) {
        tc__dim buf[TC_MAX_RANK];
        int32_t total = 0;
        for (int i = 0; i < ctx->n_in; i++) {
            const tc__vinfo *v = ctx->in[i];
            int64_t len = v->value ? tc__tensor_numel(v->value) : v->symval_len;
            if (len < 0 || total + len > TC_MAX_RANK || read_symval(v, buf + total) != len) return TC_STATUS_OK;
            total += (int32_t)len;
        }
        out->symval_len = total;
        memcpy(out->symval, buf, sizeof(tc__dim) * (size_t)total);
    }
    return TC_STATUS_OK;
}

/* ---- Split -------------------------------------------------------------------------- */

tc_status tc__infer_Split(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 1, ctx->opset >= 13 ? 2 : 1, 64);
    if (st) return st;
    const tc__vinfo *in = ctx->in[0];
    int n_out = ctx->n_out;
    for (int o = 0; o < n_out; o++) {
        ctx->out[o].dtype = in->dtype;
        ctx->out[o].shape.rank = in->shape.rank;
    }
    int64_t sizes[64];
    int64_t n_split = -1;
    bool split_known = false, has_split = false;
    if (ctx->opset < 13) {
        const int64_t *s = NULL;
        size_t ns = tc__attr_ints(ctx->attrs, "split", &s);
        has_split = tc__attr_has(ctx->attrs, "split");
        if (has_split) {
            if (ns > 64) return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "%zu split sizes are too many", ns);
            for (size_t i = 0; i < ns; i++) sizes[i] = s[i];
            n_split = (int64_t)ns;
            split_known = true;
        }
    } else {
        if (tc__attr_has(ctx->attrs, "split"))
            return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "split is an input since opset 13, not an attribute");
        const tc__vinfo *sv = tc__infer_input(ctx, 1);
        has_split = sv != NULL;
        st = read_ints(ctx, sv, "split", sizes, 64, &n_split, &split_known);
        if (st) return st;
    }
    bool has_num = ctx->opset >= 18 && tc__attr_has(ctx->attrs, "num_outputs");
    if (has_num && has_split)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "split and num_outputs must not both be given");
    if (has_num && tc__attr_int(ctx->attrs, "num_outputs", 0) != n_out)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "num_outputs is %lld but the node has %d outputs",
                        (long long)tc__attr_int(ctx->attrs, "num_outputs", 0), n_out);
    if (has_split && n_split >= 0 && n_split != n_out)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "split has %lld sizes but the node has %d outputs",
                        (long long)n_split, n_out);
    int32_t r = in->shape.rank;
    if (r < 0) return TC_STATUS_OK;
    int32_t ax = 0;
    st = tc__infer_axis(ctx, tc__attr_int(ctx->attrs, "axis", 0), r, &ax);
    if (st) return st;
    for (int o = 0; o < n_out; o++) {
        ctx->out[o].shape = in->shape;
        ctx->out[o].shape.dims[ax] = tc__dim_unknown();
    }
    tc__dim d = in->shape.dims[ax];
    if (has_split) {
        if (!split_known) return TC_STATUS_OK;
        int64_t sum = 0;
        for (int o = 0; o < n_out; o++) {
            if (sizes[o] < 0)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "split size %d is negative (%lld)", o,
                                (long long)sizes[o]);
            if (tc__add_overflow_i64(sum, sizes[o], &sum))
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "split sizes overflow");
            ctx->out[o].shape.dims[ax] = tc__dim_known(sizes[o]);
        }
        if (d.value >= 0 && sum != d.value)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                            "split sizes add up to %lld but axis %d has size %lld", (long long)sum, (int)ax,
                            (long long)d.value);
        return TC_STATUS_OK;
    }
    if (n_out == 1) {
        ctx->out[0].shape.dims[ax] = d;
        return TC_STATUS_OK;
    }
    if (d.value < 0) return TC_STATUS_OK;
    if (ctx->opset < 18 && d.value % n_out != 0)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "axis %d of size %lld cannot be split into %d equal parts", (int)ax, (long long)d.value, n_out);
    /* From opset 18 the last chunk may be smaller: chunks of ceil(size / n). */
    int64_t chunk = d.value / n_out + (d.value % n_out != 0);
    int64_t last = d.value - chunk * (n_out - 1);
    if (last < 0)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axis %d of size %lld cannot be split into %d parts",
                        (int)ax, (long long)d.value, n_out);
    for (int o = 0; o < n_out; o++) ctx->out[o].shape.dims[ax] = tc__dim_known(o == n_out - 1 ? last : chunk);
    return TC_STATUS_OK;
}

/* ---- Slice -------------------------------------------------------------------------- */

/*
 * Clamps start and end as the ONNX spec says and returns the number of elements
 * along an axis of size dim (*start gets the first index taken). step must be non-zero.
 * (The reference kernel in backends/ref/movement.c computes the same.)
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

tc_status tc__infer_Slice(tc__infer_ctx *ctx) {
    tc_status st = ctx->opset >= 10 ? tc__infer_check_arity(ctx, 3, 5, 1) : tc__infer_check_arity(ctx, 1, 1, 1);
    if (st) return st;
    const tc__vinfo *in = ctx->in[0];
    tc__vinfo *out = &ctx->out[0];
    out->dtype = in->dtype;
    out->shape = in->shape;
    int32_t r = in->shape.rank;
    int64_t starts[TC_MAX_RANK] = {0}, ends[TC_MAX_RANK] = {0}, axes[TC_MAX_RANK] = {0}, steps[TC_MAX_RANK] = {0};
    int64_t ns = -1, ne = -1, na = -1, nst = -1;
    bool ks = false, ke = false, ka = false, kst = false, has_axes, has_steps;
    if (ctx->opset >= 10) {
        st = read_ints(ctx, ctx->in[1], "starts", starts, TC_MAX_RANK, &ns, &ks);
        if (!st) st = read_ints(ctx, ctx->in[2], "ends", ends, TC_MAX_RANK, &ne, &ke);
        if (!st) st = read_ints(ctx, tc__infer_input(ctx, 3), "axes", axes, TC_MAX_RANK, &na, &ka);
        if (!st) st = read_ints(ctx, tc__infer_input(ctx, 4), "steps", steps, TC_MAX_RANK, &nst, &kst);
        if (st) return st;
        has_axes = tc__infer_input(ctx, 3) != NULL;
        has_steps = tc__infer_input(ctx, 4) != NULL;
    } else {
        const int64_t *p;
        static const char *const names[3] = {"starts", "ends", "axes"};
        int64_t *dst[3] = {starts, ends, axes}, *cnt[3] = {&ns, &ne, &na};
        for (int k = 0; k < 3; k++) {
            size_t n = tc__attr_ints(ctx->attrs, names[k], &p);
            if (n > TC_MAX_RANK)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "attribute '%s' has %zu entries, more than %d",
                                names[k], n, TC_MAX_RANK);
            if (n > 0) memcpy(dst[k], p, n * sizeof(int64_t));
            *cnt[k] = (int64_t)n;
        }
        has_axes = tc__attr_has(ctx->attrs, "axes");
        has_steps = false;
        if (!tc__attr_has(ctx->attrs, "starts") || !tc__attr_has(ctx->attrs, "ends"))
            return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "attributes 'starts' and 'ends' are required");
        ks = ke = ka = true;
    }
    int64_t n = ns >= 0 ? ns : ne;
    if ((ns >= 0 && ne >= 0 && ns != ne) || (has_axes && na >= 0 && n >= 0 && na != n) ||
        (has_steps && nst >= 0 && n >= 0 && nst != n))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "starts, ends, axes and steps must have one length, got %lld, %lld, %lld, %lld", (long long)ns,
                        (long long)ne, (long long)(has_axes ? na : n), (long long)(has_steps ? nst : n));
    if (r < 0) return TC_STATUS_OK;
    if (n > r)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%lld axes are sliced but the input has rank %d",
                        (long long)n, (int)r);
    if ((has_axes && !ka) || (!has_axes && n < 0)) {
        /* Which axes are sliced is not known. */
        for (int32_t i = 0; i < r; i++) out->shape.dims[i] = tc__dim_unknown();
        return TC_STATUS_OK;
    }
    if (!has_axes)
        for (int64_t i = 0; i < n; i++) axes[i] = i;
    if (n < 0) n = na;
    bool used[TC_MAX_RANK] = {false};
    for (int64_t i = 0; i < n; i++) {
        int32_t a = 0;
        st = tc__infer_axis(ctx, axes[i], r, &a);
        if (st) return st;
        if (used[a]) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axis %lld is repeated", (long long)axes[i]);
        used[a] = true;
        axes[i] = a;
        if (has_steps && kst && steps[i] == 0)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "step for axis %d is 0", (int)a);
    }
    bool all_known = ks && ke && (!has_steps || kst);
    /* Ends may be partly symbolic (x[:, :seq] with seq taken from another tensor's shape). */
    tc__dim endsym[TC_MAX_RANK];
    int32_t n_endsym = ctx->opset >= 10 && !ke ? read_symval(ctx->in[2], endsym) : -1;
    for (int64_t i = 0; i < n; i++) {
        tc__dim *d = &out->shape.dims[axes[i]];
        int64_t step = has_steps ? steps[i] : 1, s = starts[i], e = ends[i];
        bool end_known = ke;
        if (!ke && n_endsym == n && endsym[i].value >= 0) {
            e = endsym[i].value;
            end_known = true;
        }
        if (!ks || (has_steps && !kst)) {
            *d = tc__dim_unknown();
        } else if (!end_known) {
            /* Taking [0, seq) of a dim assumes seq fits in it, as a valid model must. */
            bool prefix = n_endsym == n && endsym[i].sym >= 0 && s == 0 && step == 1 &&
                          (d->value >= 0 || tc__dim_same(*d, endsym[i]));
            *d = prefix ? endsym[i] : tc__dim_unknown();
        } else if (d->value >= 0) {
            *d = tc__dim_known(slice_count(d->value, &s, e, step));
        } else {
            /* A symbolic dim survives a slice that takes all of it, forwards or backwards
             * (exporters write "to the end" as INT64_MAX or INT32_MAX). */
            bool whole = (step == 1 && s == 0 && e >= INT32_MAX) ||
                         (step == -1 && (s == -1 || s >= INT32_MAX) && e <= INT32_MIN);
            if (!whole) *d = tc__dim_unknown();
        }
    }
    /* Slicing a shape tensor keeps its (symbolic) elements. */
    tc__dim sv[TC_MAX_RANK];
    int32_t len = read_symval(in, sv);
    if (all_known && r == 1 && n == 1 && in->dtype == TC_DTYPE_INT64 && len >= 0) {
        int64_t step = has_steps ? steps[0] : 1, s = starts[0];
        int64_t cnt = slice_count(len, &s, ends[0], step);
        out->symval_len = (int32_t)cnt;
        for (int64_t k = 0; k < cnt; k++) out->symval[k] = sv[s + k * step];
    } else if (r == 1 && n == 0 && len >= 0 && in->dtype == TC_DTYPE_INT64) {
        out->symval_len = len;
        memcpy(out->symval, sv, sizeof(tc__dim) * (size_t)len);
    }
    return TC_STATUS_OK;
}

/* ---- Gather, GatherElements --------------------------------------------------------- */

tc_status tc__infer_Gather(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 2, 2, 1);
    if (st) return st;
    const tc__vinfo *data = ctx->in[0], *idx = ctx->in[1];
    tc__vinfo *out = &ctx->out[0];
    out->dtype = data->dtype;
    out->shape.rank = TC__RANK_UNKNOWN;
    if (idx->dtype != TC_DTYPE_UNDEFINED && idx->dtype != TC_DTYPE_INT64 && idx->dtype != TC_DTYPE_INT32) {
        const char *nm = tc_dtype_name(idx->dtype);
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "indices must be int32 or int64, got %s", nm ? nm : "?");
    }
    int32_t r = data->shape.rank, q = idx->shape.rank;
    if (r == 0) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "data must have rank >= 1, got a scalar");
    if (r < 0 || q < 0) return TC_STATUS_OK;
    int32_t ax = 0;
    st = tc__infer_axis(ctx, tc__attr_int(ctx->attrs, "axis", 0), r, &ax);
    if (st) return st;
    if (q + r - 1 > TC_MAX_RANK)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "output rank %d is above the maximum rank %d",
                        (int)(q + r - 1), TC_MAX_RANK);
    int32_t k = 0;
    for (int32_t i = 0; i < ax; i++) out->shape.dims[k++] = data->shape.dims[i];
    for (int32_t i = 0; i < q; i++) out->shape.dims[k++] = idx->shape.dims[i];
    for (int32_t i = ax + 1; i < r; i++) out->shape.dims[k++] = data->shape.dims[i];
    out->shape.rank = k;
    /* Indices known statically are checked against a known axis size. */
    int64_t iv[TC_MAX_RANK];
    int64_t ni = q <= 1 ? tc__infer_const_ints(idx, iv, TC_MAX_RANK) : -1;
    int64_t dim = data->shape.dims[ax].value;
    if (ni >= 0 && dim >= 0) {
        for (int64_t j = 0; j < ni; j++) {
            if (iv[j] < -dim || iv[j] >= dim)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                                "index %lld is out of range [%lld, %lld] for axis %d of size %lld", (long long)iv[j],
                                (long long)-dim, (long long)(dim - 1), (int)ax, (long long)dim);
            if (iv[j] < 0) iv[j] += dim;
        }
    }
    /* Picking elements of a shape tensor keeps their (symbolic) values. */
    tc__dim sv[TC_MAX_RANK];
    int32_t len = read_symval(data, sv);
    if (data->dtype == TC_DTYPE_INT64 && r == 1 && ni >= 0 && len >= 0 && dim == len) {
        out->symval_len = (int32_t)ni;
        for (int64_t j = 0; j < ni; j++) out->symval[j] = sv[iv[j]];
    }
    return TC_STATUS_OK;
}

tc_status tc__infer_GatherElements(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 2, 2, 1);
    if (st) return st;
    const tc__vinfo *data = ctx->in[0], *idx = ctx->in[1];
    tc__vinfo *out = &ctx->out[0];
    out->dtype = data->dtype;
    out->shape = idx->shape;
    if (idx->dtype != TC_DTYPE_UNDEFINED && idx->dtype != TC_DTYPE_INT64 && idx->dtype != TC_DTYPE_INT32) {
        const char *nm = tc_dtype_name(idx->dtype);
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "indices must be int32 or int64, got %s", nm ? nm : "?");
    }
    int32_t r = data->shape.rank >= 0 ? data->shape.rank : idx->shape.rank;
    if (data->shape.rank >= 0 && idx->shape.rank >= 0 && data->shape.rank != idx->shape.rank)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "indices have rank %d but data has rank %d",
                        (int)idx->shape.rank, (int)data->shape.rank);
    if (r == 0) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "data must have rank >= 1, got a scalar");
    if (r > 0) {
        int32_t ax = 0;
        st = tc__infer_axis(ctx, tc__attr_int(ctx->attrs, "axis", 0), r, &ax);
        if (st) return st;
    }
    if (out->shape.rank < 0 && r >= 0) {
        out->shape.rank = r;
        for (int32_t i = 0; i < r; i++) out->shape.dims[i] = tc__dim_unknown();
    }
    return TC_STATUS_OK;
}
