/*
 * infer_shape_ops.c - shape and type inference for the shape-manipulating operators:
 * Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze, Expand, Tile, ConstantOfShape,
 * Range, Constant, Identity and Dropout.
 *
 * Besides shapes, these functions propagate symval (the elements of small int64
 * tensors as possibly symbolic dims) so that shape arithmetic such as
 * Shape -> Gather -> Unsqueeze -> Concat -> Reshape keeps symbolic batch and
 * sequence dims. Shape-like inputs are read from their known value first (it keeps
 * negative entries such as Reshape's -1) and from their symval otherwise.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph/op_schema.h"

/* One element of a shape-like input: a literal integer (any sign) or a dim that is
 * symbolic or unknown. */
typedef struct shape_elem {
    bool lit;
    int64_t v; /* when lit */
    tc__dim d; /* when !lit */
} shape_elem;

/*
 * Reads the elements of a 1-D (or 0-D) integer input into out. *n = the element count, or
 * -1 when even the count is unknown. Only the first cap elements are stored; a count above
 * cap is reported as is so that the caller can reject it. When only the length is known,
 * every element is an unknown dim. Fails on a non-integer dtype or a rank above 1.
 */
static tc_status read_shape_elems(tc__infer_ctx *ctx, int input, const char *what, shape_elem *out, int64_t cap,
                                  int64_t *n) {
    *n = -1;
    const tc__vinfo *v = tc__infer_input(ctx, input);
    if (v == NULL) return TC_STATUS_OK;
    if (v->dtype != TC_DTYPE_UNDEFINED && v->dtype != TC_DTYPE_INT64 && v->dtype != TC_DTYPE_INT32) {
        const char *nm = tc_dtype_name(v->dtype);
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "input '%s' must be int64, got %s", what,
                        nm ? nm : "an unknown type");
    }
    if (v->shape.rank > 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "input '%s' must be 1-D, got rank %d", what,
                        (int)v->shape.rank);
    if (v->value != NULL && (v->value->dtype == TC_DTYPE_INT64 || v->value->dtype == TC_DTYPE_INT32) &&
        v->value->rank <= 1) {
        *n = tc__tensor_numel(v->value);
        for (int64_t i = 0; i < *n && i < cap; i++) {
            out[i].lit = true;
            out[i].v = tc__tensor_get_i64(v->value, i);
        }
        return TC_STATUS_OK;
    }
    if (v->symval_len >= 0) {
        for (int32_t i = 0; i < v->symval_len && i < cap; i++) {
            out[i].lit = tc__dim_is_literal(v->symval[i]);
            out[i].v = v->symval[i].value;
            out[i].d = v->symval[i];
        }
        *n = v->symval_len;
        return TC_STATUS_OK;
    }
    if (v->shape.rank == 0)
        *n = 1;
    else if (v->shape.rank == 1 && v->shape.dims[0].value >= 0)
        *n = v->shape.dims[0].value;
    for (int64_t i = 0; i < *n && i < cap; i++) {
        out[i].lit = false;
        out[i].d = tc__dim_unknown();
    }
    return TC_STATUS_OK;
}

/* Product of dims: known when all are known, a symbol when exactly one is symbolic and the
 * others multiply to 1, unknown otherwise (also on overflow). */
static tc__dim dims_product(const tc__dim *dims, int32_t n) {
    int64_t p = 1;
    int n_sym = 0, n_unknown = 0;
    tc__dim sym = tc__dim_unknown();
    for (int32_t i = 0; i < n; i++) {
        if (dims[i].value >= 0) {
            if (tc__mul_overflow_i64(p, dims[i].value, &p)) return tc__dim_unknown();
        } else if (dims[i].sym >= 0) {
            n_sym++;
            sym = dims[i];
        } else {
            n_unknown++;
        }
    }
    if (p == 0) return tc__dim_known(0);
    if (n_unknown > 0 || n_sym > 1) return tc__dim_unknown();
    if (n_sym == 1) return p == 1 ? sym : tc__dim_unknown();
    return tc__dim_known(p);
}

/* Copies symval from in to out when both are small int64 tensors (shape-preserving ops). */
static void copy_symval(const tc__vinfo *in, tc__vinfo *out) {
    if (in->symval_len < 0 || out->dtype != TC_DTYPE_INT64) return;
    out->symval_len = in->symval_len;
    memcpy(out->symval, in->symval, sizeof(tc__dim) * (size_t)in->symval_len);
}

/* ---- Shape, Size ------------------------------------------------------------------- */

tc_status tc__infer_Shape(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 1, 1, 1);
    if (st) return st;
    const tc__vinfo *in = ctx->in[0];
    tc__vinfo *out = &ctx->out[0];
    out->dtype = TC_DTYPE_INT64;
    out->shape.rank = 1;
    out->shape.dims[0] = tc__dim_unknown();
    int32_t r = in->shape.rank;
    if (r < 0) return TC_STATUS_OK;
    int64_t start = 0, end = r;
    if (ctx->opset >= 15) {
        start = tc__attr_int(ctx->attrs, "start", 0);
        end = tc__attr_int(ctx->attrs, "end", r);
    }
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = start < 0 ? 0 : start > r ? r : start;
    end = end < 0 ? 0 : end > r ? r : end;
    int64_t len = end > start ? end - start : 0;
    out->shape.dims[0] = tc__dim_known(len);
    out->symval_len = (int32_t)len;
    for (int64_t i = 0; i < len; i++) out->symval[i] = in->shape.dims[start + i];
    return TC_STATUS_OK;
}

tc_status tc__infer_Size(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 1, 1, 1);
    if (st) return st;
    const tc__vinfo *in = ctx->in[0];
    tc__vinfo *out = &ctx->out[0];
    out->dtype = TC_DTYPE_INT64;
    out->shape.rank = 0;
    out->symval_len = 1;
    out->symval[0] = in->shape.rank >= 0 ? dims_product(in->shape.dims, in->shape.rank) : tc__dim_unknown();
    return TC_STATUS_OK;
}

/* ---- Reshape ------------------------------------------------------------------------ */

/*
 * Infers the dim at position `target` of a reshape output from the element counts:
 * numel(in) / numel(other output dims), cancelling equal symbols on both sides.
 * Returns unknown when that is not provable.
 */
static tc__dim reshape_residual(const tc__shape *in, const tc__dim *out, int32_t n, int32_t target) {
    int64_t pin = 1, pout = 1;
    int32_t sin[TC_MAX_RANK];
    int n_sin = 0;
    for (int32_t i = 0; i < in->rank; i++) {
        tc__dim d = in->dims[i];
        if (d.value >= 0) {
            if (tc__mul_overflow_i64(pin, d.value, &pin)) return tc__dim_unknown();
        } else if (d.sym >= 0) {
            sin[n_sin++] = d.sym;
        } else {
            return tc__dim_unknown();
        }
    }
    for (int32_t i = 0; i < n; i++) {
        if (i == target) continue;
        tc__dim d = out[i];
        if (d.value >= 0) {
            if (tc__mul_overflow_i64(pout, d.value, &pout)) return tc__dim_unknown();
        } else if (d.sym >= 0) {
            int k = 0;
            while (k < n_sin && sin[k] != d.sym) k++;
            if (k == n_sin) return tc__dim_unknown(); /* a symbol the input does not have */
            sin[k] = sin[--n_sin];
        } else {
            return tc__dim_unknown();
        }
    }
    /* A zero-sized side makes the missing dim ambiguous. */
    if (pin == 0 || pout == 0) return tc__dim_unknown();
    if (n_sin == 0) return pin % pout == 0 ? tc__dim_known(pin / pout) : tc__dim_unknown();
    if (n_sin == 1 && pin == pout) return (tc__dim){-1, sin[0]};
    return tc__dim_unknown();
}

tc_status tc__infer_Reshape(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 2, 2, 1);
    if (st) return st;
    const tc__vinfo *in = ctx->in[0];
    tc__vinfo *out = &ctx->out[0];
    out->dtype = in->dtype;
    bool allowzero = ctx->opset >= 14 && tc__attr_int(ctx->attrs, "allowzero", 0) != 0;
    shape_elem e[TC_MAX_RANK];
    int64_t n;
    st = read_shape_elems(ctx, 1, "shape", e, TC_MAX_RANK, &n);
    if (st) return st;
    if (n < 0) {
        out->shape.rank = TC__RANK_UNKNOWN;
        return TC_STATUS_OK;
    }
    if (n > TC_MAX_RANK)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "target shape has %lld dims, above the maximum rank %d",
                        (long long)n, TC_MAX_RANK);
    int32_t r = (int32_t)n;
    out->shape.rank = r;
    int32_t infer_at = -1, n_unknown = 0, unknown_at = -1;
    for (int32_t i = 0; i < r; i++) {
        tc__dim *d = &out->shape.dims[i];
        if (!e[i].lit) {
            *d = e[i].d;
            if (d->sym < 0) {
                n_unknown++;
                unknown_at = i;
            }
        } else if (e[i].v == -1) {
            if (infer_at >= 0)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                                "target shape has -1 at both dim %d and dim %d; at most one is allowed", (int)infer_at,
                                (int)i);
            infer_at = i;
            *d = tc__dim_unknown();
        } else if (e[i].v < -1) {
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "target shape has invalid dim %lld at index %d",
                            (long long)e[i].v, (int)i);
        } else if (e[i].v == 0 && !allowzero) {
            if (in->shape.rank >= 0 && i >= in->shape.rank)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                                "target shape has 0 (copy the input dim) at index %d but the input has rank %d", (int)i,
                                (int)in->shape.rank);
            *d = in->shape.rank >= 0 ? in->shape.dims[i] : tc__dim_unknown();
            if (d->value < 0 && d->sym < 0) {
                n_unknown++;
                unknown_at = i;
            }
        } else {
            *d = tc__dim_known(e[i].v);
        }
    }
    if (allowzero && infer_at >= 0) {
        for (int32_t i = 0; i < r; i++)
            if (e[i].lit && e[i].v == 0)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                                "target shape has both -1 and 0 while allowzero is set");
    }
    if (infer_at >= 0) n_unknown++, unknown_at = infer_at;
    if (in->shape.rank >= 0 && n_unknown == 0) {
        /* Fully determined: check element counts when they are known. */
        tc__dim a = dims_product(in->shape.dims, in->shape.rank), b = dims_product(out->shape.dims, r);
        if (a.value >= 0 && b.value >= 0 && a.value != b.value) {
            char buf[160];
            int64_t dims[TC_MAX_RANK];
            for (int32_t i = 0; i < r; i++) dims[i] = out->shape.dims[i].value;
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                            "cannot reshape a tensor of %lld elements to shape %s (%lld elements)", (long long)a.value,
                            tc__shape_str(r, dims, buf, sizeof buf), (long long)b.value);
        }
    } else if (in->shape.rank >= 0 && n_unknown == 1) {
        tc__dim d = reshape_residual(&in->shape, out->shape.dims, r, unknown_at);
        if (infer_at >= 0) {
            /* With everything else known, -1 must divide the element count exactly. */
            tc__dim a = dims_product(in->shape.dims, in->shape.rank);
            int64_t rest = 1;
            bool rest_known = true;
            for (int32_t i = 0; i < r; i++)
                if (i != infer_at) {
                    if (out->shape.dims[i].value < 0 || tc__mul_overflow_i64(rest, out->shape.dims[i].value, &rest))
                        rest_known = false;
                }
            if (a.value >= 0 && rest_known) {
                /* A zero product leaves -1 undetermined, which NumPy and ONNX Runtime reject too. */
                if (rest == 0 || a.value % rest != 0)
                    return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                                    "cannot reshape a tensor of %lld elements: the other target dims multiply to "
                                    "%lld, which does not determine the -1",
                                    (long long)a.value, (long long)rest);
                d = tc__dim_known(a.value / rest);
            }
        }
        out->shape.dims[unknown_at] = d;
    }
    /* A 0-D/1-D shape tensor reshaped to 0-D/1-D keeps its symbolic elements. */
    if (in->symval_len >= 0 && in->dtype == TC_DTYPE_INT64 && r <= 1) {
        int64_t len = r == 0 ? 1 : out->shape.dims[0].value;
        if (len == in->symval_len) copy_symval(in, out);
    }
    return TC_STATUS_OK;
}

/* ---- Flatten ------------------------------------------------------------------------ */

tc_status tc__infer_Flatten(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 1, 1, 1);
    if (st) return st;
    const tc__vinfo *in = ctx->in[0];
    tc__vinfo *out = &ctx->out[0];
    out->dtype = in->dtype;
    out->shape.rank = 2;
    out->shape.dims[0] = out->shape.dims[1] = tc__dim_unknown();
    int32_t r = in->shape.rank;
    if (r < 0) return TC_STATUS_OK;
    int64_t axis = tc__attr_int(ctx->attrs, "axis", 1);
    if (axis < -(int64_t)r || axis > r)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axis %lld is out of range [%d, %d] for rank %d",
                        (long long)axis, -(int)r, (int)r, (int)r);
    if (axis < 0) axis += r;
    out->shape.dims[0] = dims_product(in->shape.dims, (int32_t)axis);
    out->shape.dims[1] = dims_product(in->shape.dims + axis, r - (int32_t)axis);
    return TC_STATUS_OK;
}

/* ---- Squeeze, Unsqueeze ------------------------------------------------------------- */

/*
 * Reads the axes of Squeeze/Unsqueeze: an attribute before opset 13, input 1 from 13 on.
 * *n = their count, or -1 when their values are not all known (axes_len() then tells the
 * count when only that is known); *present = false when no axes were given at all.
 */
static tc_status read_axes(tc__infer_ctx *ctx, int64_t *axes, int64_t *n, bool *present) {
    *n = -1;
    *present = true;
    if (ctx->opset < 13) {
        const int64_t *a = NULL;
        size_t na = tc__attr_ints(ctx->attrs, "axes", &a);
        if (!tc__attr_has(ctx->attrs, "axes")) {
            *present = false;
            return TC_STATUS_OK;
        }
        if (na > TC_MAX_RANK)
            return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "%zu axes is above the maximum rank %d", na, TC_MAX_RANK);
        for (size_t i = 0; i < na; i++) axes[i] = a[i];
        *n = (int64_t)na;
        return TC_STATUS_OK;
    }
    if (tc__attr_has(ctx->attrs, "axes"))
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "axes is an input since opset 13, not an attribute");
    if (tc__infer_input(ctx, 1) == NULL) {
        *present = false;
        return TC_STATUS_OK;
    }
    shape_elem e[TC_MAX_RANK];
    int64_t m;
    tc_status st = read_shape_elems(ctx, 1, "axes", e, TC_MAX_RANK, &m);
    if (st) return st;
    if (m > TC_MAX_RANK)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "%lld axes is above the maximum rank %d", (long long)m,
                        TC_MAX_RANK);
    *n = m;
    for (int64_t i = 0; i < m; i++) {
        if (!e[i].lit) {
            *n = -1;
            break;
        }
        axes[i] = e[i].v;
    }
    return TC_STATUS_OK;
}

/* Number of axes given as input 1 when only its length is known, else -1. */
static int64_t axes_len(const tc__infer_ctx *ctx) {
    if (ctx->opset < 13) return -1;
    const tc__vinfo *v = tc__infer_input(ctx, 1);
    if (v == NULL) return -1;
    if (v->shape.rank == 1 && v->shape.dims[0].value >= 0) return v->shape.dims[0].value;
    if (v->shape.rank == 0) return 1;
    return -1;
}

/* Normalises axes against rank and rejects duplicates; marks them in used[]. */
static tc_status normalize_axes(tc__infer_ctx *ctx, int64_t *axes, int64_t n, int32_t rank, bool *used) {
    for (int32_t i = 0; i < rank; i++) used[i] = false;
    for (int64_t i = 0; i < n; i++) {
        int32_t a = 0;
        tc_status st = tc__infer_axis(ctx, axes[i], rank, &a);
        if (st) return st;
        if (used[a]) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "axis %lld is repeated", (long long)axes[i]);
        used[a] = true;
        axes[i] = a;
    }
    return TC_STATUS_OK;
}

tc_status tc__infer_Squeeze(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 1, ctx->opset >= 13 ? 2 : 1, 1);
    if (st) return st;
    const tc__vinfo *in = ctx->in[0];
    tc__vinfo *out = &ctx->out[0];
    out->dtype = in->dtype;
    out->shape.rank = TC__RANK_UNKNOWN;
    int64_t axes[TC_MAX_RANK], n;
    bool present;
    st = read_axes(ctx, axes, &n, &present);
    if (st) return st;
    int32_t r = in->shape.rank;
    if (r < 0) return TC_STATUS_OK;
    bool used[TC_MAX_RANK];
    if (!present) {
        /* Remove every dim of size 1: only possible when no dim might be 1 unseen. */
        for (int32_t i = 0; i < r; i++) {
            if (in->shape.dims[i].value < 0) return TC_STATUS_OK;
            used[i] = in->shape.dims[i].value == 1;
        }
    } else if (n < 0) {
        int64_t len = axes_len(ctx);
        if (len >= 0 && len <= r) {
            out->shape.rank = r - (int32_t)len;
            for (int32_t i = 0; i < out->shape.rank; i++) out->shape.dims[i] = tc__dim_unknown();
        }
        return TC_STATUS_OK;
    } else {
        st = normalize_axes(ctx, axes, n, r, used);
        if (st) return st;
        for (int32_t i = 0; i < r; i++)
            if (used[i] && in->shape.dims[i].value >= 0 && in->shape.dims[i].value != 1)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "cannot squeeze axis %d of size %lld (must be 1)",
                                (int)i, (long long)in->shape.dims[i].value);
    }
    int32_t k = 0;
    for (int32_t i = 0; i < r; i++)
        if (!used[i]) out->shape.dims[k++] = in->shape.dims[i];
    out->shape.rank = k;
    if (k <= 1 && r <= 1) copy_symval(in, out);
    return TC_STATUS_OK;
}

tc_status tc__infer_Unsqueeze(tc__infer_ctx *ctx) {
    tc_status st = ctx->opset >= 13 ? tc__infer_check_arity(ctx, 2, 2, 1) : tc__infer_check_arity(ctx, 1, 1, 1);
    if (st) return st;
    const tc__vinfo *in = ctx->in[0];
    tc__vinfo *out = &ctx->out[0];
    out->dtype = in->dtype;
    out->shape.rank = TC__RANK_UNKNOWN;
    int64_t axes[TC_MAX_RANK], n;
    bool present;
    st = read_axes(ctx, axes, &n, &present);
    if (st) return st;
    if (!present) return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "axes are required");
    int32_t r = in->shape.rank;
    bool values_known = n >= 0;
    if (n < 0) n = axes_len(ctx);
    if (r < 0 || n < 0) return TC_STATUS_OK;
    if (r + n > TC_MAX_RANK)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "output rank %lld is above the maximum rank %d",
                        (long long)(r + n), TC_MAX_RANK);
    int32_t ro = r + (int32_t)n;
    if (!values_known) {
        out->shape.rank = ro;
        for (int32_t i = 0; i < ro; i++) out->shape.dims[i] = tc__dim_unknown();
        return TC_STATUS_OK;
    }
    bool used[TC_MAX_RANK];
    st = normalize_axes(ctx, axes, n, ro, used);
    if (st) return st;
    int32_t k = 0;
    for (int32_t i = 0; i < ro; i++) out->shape.dims[i] = used[i] ? tc__dim_known(1) : in->shape.dims[k++];
    out->shape.rank = ro;
    if (r == 0 && ro == 1) copy_symval(in, out);
    return TC_STATUS_OK;
}

/* ---- Expand, Tile, ConstantOfShape --------------------------------------------------- */

tc_status tc__infer_Expand(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 2, 2, 1);
    if (st) return st;
    const tc__vinfo *in = ctx->in[0];
    tc__vinfo *out = &ctx->out[0];
    out->dtype = in->dtype;
    out->shape.rank = TC__RANK_UNKNOWN;
    shape_elem e[TC_MAX_RANK];
    int64_t n;
    st = read_shape_elems(ctx, 1, "shape", e, TC_MAX_RANK, &n);
    if (st) return st;
    if (n < 0) return TC_STATUS_OK;
    if (n > TC_MAX_RANK)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "shape has %lld dims, above the maximum rank %d", (long long)n,
                        TC_MAX_RANK);
    tc__shape s = {.rank = (int32_t)n};
    for (int64_t i = 0; i < n; i++) {
        if (e[i].lit && e[i].v < 0)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "shape has negative dim %lld at index %lld",
                            (long long)e[i].v, (long long)i);
        s.dims[i] = e[i].lit ? tc__dim_known(e[i].v) : e[i].d;
    }
    return tc__infer_broadcast(ctx, &in->shape, &s, &out->shape);
}

tc_status tc__infer_Tile(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 2, 2, 1);
    if (st) return st;
    const tc__vinfo *in = ctx->in[0];
    tc__vinfo *out = &ctx->out[0];
    out->dtype = in->dtype;
    out->shape.rank = in->shape.rank;
    shape_elem e[TC_MAX_RANK];
    int64_t n;
    st = read_shape_elems(ctx, 1, "repeats", e, TC_MAX_RANK, &n);
    if (st) return st;
    int32_t r = in->shape.rank;
    if (r >= 0 && n >= 0 && n != r)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "repeats has %lld elements but the input has rank %d",
                        (long long)n, (int)r);
    if (r < 0) {
        if (n < 0 || n > TC_MAX_RANK) return TC_STATUS_OK;
        out->shape.rank = (int32_t)n;
        for (int64_t i = 0; i < n; i++) out->shape.dims[i] = tc__dim_unknown();
        return TC_STATUS_OK;
    }
    for (int32_t i = 0; i < r; i++) {
        tc__dim d = in->shape.dims[i], *o = &out->shape.dims[i];
        if (n < 0 || !e[i].lit) {
            /* x.repeat(batch, 1, 1) on a dim of 1 gives batch; a dim of 0 stays 0. */
            bool sym_rep = n >= 0 && e[i].d.sym >= 0 && d.value == 1;
            *o = d.value == 0 ? d : sym_rep ? e[i].d : tc__dim_unknown();
            continue;
        }
        if (e[i].v < 0)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "repeats has negative value %lld at index %d",
                            (long long)e[i].v, (int)i);
        if (e[i].v == 1)
            *o = d;
        else if (e[i].v == 0)
            *o = tc__dim_known(0);
        else if (d.value >= 0) {
            int64_t p;
            if (tc__mul_overflow_i64(d.value, e[i].v, &p) || p > TC__MAX_NUMEL)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "dim %d (%lld) times repeats %lld overflows",
                                (int)i, (long long)d.value, (long long)e[i].v);
            *o = tc__dim_known(p);
        } else {
            *o = tc__dim_unknown();
        }
    }
    return TC_STATUS_OK;
}

tc_status tc__infer_ConstantOfShape(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 1, 1, 1);
    if (st) return st;
    tc__vinfo *out = &ctx->out[0];
    out->dtype = TC_DTYPE_FLOAT32;
    const tc__tensor *val = tc__attr_tensor(ctx->attrs, "value");
    if (tc__attr_has(ctx->attrs, "value") && val == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "attribute 'value' must be a tensor");
    if (val != NULL) {
        if (!tc__dtype_valid(val->dtype))
            return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "attribute 'value' has unsupported data type %d",
                            (int)val->dtype);
        if (tc__tensor_numel(val) != 1)
            return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "attribute 'value' must have 1 element, got %lld",
                            (long long)tc__tensor_numel(val));
        out->dtype = val->dtype;
    }
    shape_elem e[TC_MAX_RANK];
    int64_t n;
    st = read_shape_elems(ctx, 0, "input", e, TC_MAX_RANK, &n);
    if (st) return st;
    out->shape.rank = TC__RANK_UNKNOWN;
    if (n < 0) return TC_STATUS_OK;
    if (n > TC_MAX_RANK)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "shape has %lld dims, above the maximum rank %d", (long long)n,
                        TC_MAX_RANK);
    out->shape.rank = (int32_t)n;
    for (int64_t i = 0; i < n; i++) {
        if (e[i].lit && e[i].v < 0)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "shape has negative dim %lld at index %lld",
                            (long long)e[i].v, (long long)i);
        out->shape.dims[i] = e[i].lit ? tc__dim_known(e[i].v) : e[i].d;
    }
    return TC_STATUS_OK;
}

/* ---- Range -------------------------------------------------------------------------- */

/* Reads a known scalar as double and int64; false when unknown. */
static bool scalar_value(const tc__vinfo *v, double *f, int64_t *i) {
    if (v->value == NULL || tc__tensor_numel(v->value) != 1) return false;
    *f = tc__tensor_get_f64(v->value, 0);
    *i = tc__tensor_get_i64(v->value, 0);
    return true;
}

/* Element count of Range: max(ceil((limit - start) / delta), 0), with overflow checks.
 * (The reference kernel computes the same in backends/ref/shape_ops.c.) */
static tc_status range_count(tc__infer_ctx *ctx, tc_dtype dt, double fs, double fl, double fd, int64_t is, int64_t il,
                             int64_t id, int64_t *n) {
    if (tc__dtype_is_float(dt)) {
        if (fd == 0.0 || isnan(fs) || isnan(fl) || isnan(fd))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                            "delta must be non-zero and no input NaN (start %g, limit %g, delta %g)", fs, fl, fd);
        double diff = fl - fs;
        if (dt == TC_DTYPE_FLOAT32) diff = (float)diff;
        double c = ceil(diff / fd);
        if (!(c <= (double)TC__MAX_NUMEL))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "range from %g to %g by %g has too many elements", fs,
                            fl, fd);
        *n = c > 0 ? (int64_t)c : 0;
        return TC_STATUS_OK;
    }
    if (id == 0) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "delta must be non-zero");
    int64_t diff;
    if (__builtin_sub_overflow(il, is, &diff))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "limit %lld - start %lld overflows", (long long)il,
                        (long long)is);
    int64_t c = 0;
    if ((id > 0 && diff > 0) || (id < 0 && diff < 0)) {
        /* Same signs: the quotient is positive and cannot overflow unless delta is -1 and diff INT64_MIN. */
        if (id == -1 && diff == INT64_MIN)
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "range has too many elements");
        c = diff / id + (diff % id != 0);
    }
    if (c > TC__MAX_NUMEL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "range from %lld to %lld by %lld has too many elements",
                        (long long)is, (long long)il, (long long)id);
    *n = c;
    return TC_STATUS_OK;
}

tc_status tc__infer_Range(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 3, 3, 1);
    if (st) return st;
    tc_dtype dt = TC_DTYPE_UNDEFINED;
    static const char *const names[3] = {"start", "limit", "delta"};
    for (int i = 0; i < 3; i++) {
        const tc__vinfo *v = ctx->in[i];
        if (v->shape.rank > 1 || (v->shape.rank == 1 && v->shape.dims[0].value >= 0 && v->shape.dims[0].value != 1))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "input '%s' must be a scalar, got rank %d", names[i],
                            (int)v->shape.rank);
        if (v->dtype == TC_DTYPE_UNDEFINED) continue;
        if (dt != TC_DTYPE_UNDEFINED && v->dtype != dt)
            return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "inputs must have one type, got %s and %s",
                            tc_dtype_name(dt), tc_dtype_name(v->dtype) ? tc_dtype_name(v->dtype) : "?");
        dt = v->dtype;
    }
    if (dt != TC_DTYPE_UNDEFINED && dt != TC_DTYPE_FLOAT32 && dt != TC_DTYPE_FLOAT64 && dt != TC_DTYPE_INT16 &&
        dt != TC_DTYPE_INT32 && dt != TC_DTYPE_INT64) {
        const char *nm = tc_dtype_name(dt);
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED,
                        "type %s is not supported (float32, float64, int16, int32, int64 are)", nm ? nm : "?");
    }
    tc__vinfo *out = &ctx->out[0];
    out->dtype = dt;
    out->shape.rank = 1;
    out->shape.dims[0] = tc__dim_unknown();
    double f[3];
    int64_t iv[3];
    bool known = true;
    for (int i = 0; i < 3; i++) known = known && scalar_value(ctx->in[i], &f[i], &iv[i]);
    if (known && dt != TC_DTYPE_UNDEFINED) {
        int64_t n = 0;
        st = range_count(ctx, dt, f[0], f[1], f[2], iv[0], iv[1], iv[2], &n);
        if (st) return st;
        out->shape.dims[0] = tc__dim_known(n);
        return TC_STATUS_OK;
    }
    /* Range(0, n, 1) over a symbolic integer n has n elements (position ids). */
    const tc__vinfo *lim = ctx->in[1];
    if (dt != TC_DTYPE_UNDEFINED && !tc__dtype_is_float(dt) && scalar_value(ctx->in[0], &f[0], &iv[0]) &&
        scalar_value(ctx->in[2], &f[2], &iv[2]) && iv[0] == 0 && iv[2] == 1 && lim->symval_len == 1 &&
        lim->symval[0].sym >= 0)
        out->shape.dims[0] = lim->symval[0];
    return TC_STATUS_OK;
}

/* ---- Constant ----------------------------------------------------------------------- */

tc_status tc__infer_Constant(tc__infer_ctx *ctx) {
    if (ctx->n_in != 0 || ctx->n_out != 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "expects no inputs and 1 output, got %d and %d", ctx->n_in,
                        ctx->n_out);
    static const char *const unsupported[] = {"sparse_value", "value_string", "value_strings"};
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++)
        if (tc__attr_find(ctx->attrs, unsupported[i]) != NULL)
            return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "attribute '%s' is not supported", unsupported[i]);
    static const char *const kinds[] = {"value", "value_float", "value_floats", "value_int", "value_ints"};
    int found = -1, count = 0;
    for (int i = 0; i < 5; i++)
        if (tc__attr_find(ctx->attrs, kinds[i]) != NULL) {
            found = i;
            count++;
        }
    if (count != 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH,
                        "expects exactly one of value, value_float(s), value_int(s), got %d", count);
    const tc__attr *a = tc__attr_find(ctx->attrs, kinds[found]);
    tc__vinfo *out = &ctx->out[0];
    static const tc__attr_kind want[] = {TC__ATTR_TENSOR, TC__ATTR_FLOAT, TC__ATTR_FLOATS, TC__ATTR_INT, TC__ATTR_INTS};
    if (a->kind != want[found] || (found == 0 && a->t == NULL))
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "attribute '%s' has the wrong kind %d", kinds[found],
                        (int)a->kind);
    switch (found) {
    case 0:
        if (!tc__dtype_valid(a->t->dtype))
            return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "tensor of data type %d is not supported",
                            (int)a->t->dtype);
        if (a->t->rank < 0 || a->t->rank > TC_MAX_RANK)
            return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "tensor rank %d is not supported", (int)a->t->rank);
        out->dtype = a->t->dtype;
        out->shape.rank = a->t->rank;
        for (int32_t i = 0; i < a->t->rank; i++) out->shape.dims[i] = tc__dim_known(a->t->dims[i]);
        break;
    case 1:
        out->dtype = TC_DTYPE_FLOAT32;
        out->shape.rank = 0;
        break;
    case 2:
        out->dtype = TC_DTYPE_FLOAT32;
        out->shape.rank = 1;
        out->shape.dims[0] = tc__dim_known((int64_t)a->n);
        break;
    case 3:
        out->dtype = TC_DTYPE_INT64;
        out->shape.rank = 0;
        break;
    default:
        out->dtype = TC_DTYPE_INT64;
        out->shape.rank = 1;
        out->shape.dims[0] = tc__dim_known((int64_t)a->n);
        break;
    }
    return TC_STATUS_OK;
}

/* ---- Identity, Dropout -------------------------------------------------------------- */

tc_status tc__infer_Identity(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 1, 1, 1);
    if (st) return st;
    ctx->out[0].dtype = ctx->in[0]->dtype;
    ctx->out[0].shape = ctx->in[0]->shape;
    copy_symval(ctx->in[0], &ctx->out[0]);
    return TC_STATUS_OK;
}

tc_status tc__infer_Dropout(tc__infer_ctx *ctx) {
    tc_status st = tc__infer_check_arity(ctx, 1, ctx->opset >= 12 ? 3 : 1, 2);
    if (st) return st;
    const tc__vinfo *in = ctx->in[0];
    ctx->out[0].dtype = in->dtype;
    ctx->out[0].shape = in->shape;
    copy_symval(in, &ctx->out[0]);
    if (ctx->n_out > 1) {
        ctx->out[1].dtype = TC_DTYPE_BOOL;
        ctx->out[1].shape = in->shape;
    }
    const tc__vinfo *tm = tc__infer_input(ctx, 2);
    if (tm != NULL && tm->dtype != TC_DTYPE_UNDEFINED && tm->dtype != TC_DTYPE_BOOL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "training_mode must be bool, got %s",
                        tc_dtype_name(tm->dtype) ? tc_dtype_name(tm->dtype) : "?");
    return TC_STATUS_OK;
}
