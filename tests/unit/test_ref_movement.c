/*
 * test_ref_movement.c - reference kernels of the shape and data movement operators
 * (Transpose, Concat, Split, Slice, Gather, GatherElements, Reshape, Flatten, Squeeze,
 * Unsqueeze, Identity, Dropout, Expand, Tile, ConstantOfShape, Range, Constant, Shape,
 * Size) on random data with edge shapes, checked against naive index arithmetic written
 * here, plus error cases (bad axes, out-of-range indices).
 *
 * Each case runs like the executor does: run-time shape inference on concrete inputs,
 * outputs allocated with the inferred shape, then the kernel.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/ref/ref.h"
#include "graph/op_schema.h"

/* ---- helpers ------------------------------------------------------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static int64_t rng_range(int64_t lo, int64_t hi) { return lo + (int64_t)(rng() % (uint64_t)(hi - lo + 1)); }

/* Allocates a tensor and fills it with random non-zero values. */
static void make(tc__tensor *t, tc_dtype dt, int32_t rank, const int64_t *dims) {
    assert_int_equal(tc__tensor_alloc(t, dt, rank, dims, NULL), TC_STATUS_OK);
    int64_t n = tc__tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = rng_range(1, 120) * (rng() & 1 ? 1 : -1);
        if (dt == TC_DTYPE_BOOL)
            tc__tensor_set_i64(t, i, (int64_t)(rng() & 1));
        else if (dt == TC_DTYPE_UINT8 || dt == TC_DTYPE_UINT16 || dt == TC_DTYPE_UINT32 || dt == TC_DTYPE_UINT64)
            tc__tensor_set_i64(t, i, v < 0 ? -v : v);
        else if (tc__dtype_is_float(dt))
            tc__tensor_set_f64(t, i, (double)v / 8.0);
        else
            tc__tensor_set_i64(t, i, v);
    }
}

static void make_i64(tc__tensor *t, int32_t rank, int64_t n, const int64_t *vals) {
    int64_t dims[1] = {n};
    assert_int_equal(tc__tensor_alloc(t, TC_DTYPE_INT64, rank, dims, NULL), TC_STATUS_OK);
    for (int64_t i = 0; i < (rank == 0 ? 1 : n); i++) ((int64_t *)t->data)[i] = vals[i];
}

static tc__attr a_int(const char *name, int64_t v) { return (tc__attr){.name = name, .kind = TC__ATTR_INT, .i = v}; }
static tc__attr a_ints(const char *name, const int64_t *v, size_t n) {
    return (tc__attr){.name = name, .kind = TC__ATTR_INTS, .ints = v, .n = n};
}

/* One operator invocation, run like the executor runs a node. */
typedef struct op_run {
    tc__infer_fn infer;
    tc__ref_fn kern;
    int64_t opset;
    const tc__attr *attrs;
    int n_attrs;
    int n_in;
    const tc__tensor *in[8];
    int n_out;
    bool absent[8];
    tc__tensor out[8];
    tc__err err;
} op_run;

static void vinfo_of(const tc__tensor *t, tc__vinfo *v) {
    tc__vinfo_init(v);
    v->dtype = t->dtype;
    v->shape.rank = t->rank;
    for (int32_t i = 0; i < t->rank; i++) v->shape.dims[i] = tc__dim_known(t->dims[i]);
    v->value = t;
    if (t->dtype == TC_DTYPE_INT64 && t->rank <= 1 && tc__tensor_numel(t) <= TC_MAX_RANK) {
        v->symval_len = (int32_t)tc__tensor_numel(t);
        for (int32_t i = 0; i < v->symval_len; i++) v->symval[i] = tc__dim_known(((int64_t *)t->data)[i]);
    }
}

static void run_free(op_run *r) {
    for (int o = 0; o < r->n_out; o++) tc__tensor_free(&r->out[o]);
}

/* Runs inference then the kernel; outputs of an earlier run of r are freed first. */
static tc_status run(op_run *r) {
    run_free(r);
    tc__vinfo vin[8], vout[8];
    const tc__vinfo *pin[8];
    for (int i = 0; i < r->n_in; i++) {
        pin[i] = NULL;
        if (r->in[i] != NULL) {
            vinfo_of(r->in[i], &vin[i]);
            pin[i] = &vin[i];
        }
    }
    for (int o = 0; o < r->n_out; o++) tc__vinfo_init(&vout[o]);
    tc__attrs attrs = {r->n_attrs, r->attrs};
    memset(&r->err, 0, sizeof r->err);
    tc__infer_ctx ic = {"node", "op", r->opset ? r->opset : 17, &attrs, r->n_in, pin, r->n_out, vout, &r->err};
    tc_status st = r->infer(&ic);
    if (st) return st;
    tc__tensor *pout[8];
    for (int o = 0; o < r->n_out; o++) {
        pout[o] = NULL;
        memset(&r->out[o], 0, sizeof r->out[o]);
        if (r->absent[o]) continue;
        assert_true(tc__shape_is_concrete(&vout[o].shape));
        assert_null(vout[o].value);
        int64_t dims[TC_MAX_RANK];
        for (int32_t i = 0; i < vout[o].shape.rank; i++) dims[i] = vout[o].shape.dims[i].value;
        tc_status ast = tc__tensor_alloc(&r->out[o], vout[o].dtype, vout[o].shape.rank, dims, &r->err);
        if (ast) fprintf(stderr, "output %d: %s\n", o, r->err.msg);
        assert_int_equal(ast, TC_STATUS_OK);
        pout[o] = &r->out[o];
    }
    tc__kernel_ctx kc = {"node", "op", ic.opset, &attrs, r->n_in, r->in, r->n_out, pout, &r->err, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    return r->kern(&kc);
}

static void expect_shape(const tc__tensor *t, int32_t rank, const int64_t *dims) {
    assert_int_equal(t->rank, rank);
    for (int32_t i = 0; i < rank; i++) assert_int_equal(t->dims[i], dims[i]);
}

/* Decodes a flat row-major index into a multi-index. */
static void unflatten(int64_t k, int32_t rank, const int64_t *dims, int64_t *idx) {
    for (int32_t i = rank - 1; i >= 0; i--) {
        idx[i] = k % dims[i];
        k /= dims[i];
    }
}
static int64_t flatten_idx(int32_t rank, const int64_t *dims, const int64_t *idx) {
    int64_t k = 0;
    for (int32_t i = 0; i < rank; i++) k = k * dims[i] + idx[i];
    return k;
}
static const char *elem(const tc__tensor *t, int64_t k) {
    return (const char *)t->data + (size_t)k * tc_dtype_size(t->dtype);
}

static const tc_dtype kDtypes[] = {TC_DTYPE_FLOAT32, TC_DTYPE_INT8,    TC_DTYPE_INT64, TC_DTYPE_FLOAT16,
                                   TC_DTYPE_BOOL,    TC_DTYPE_FLOAT64, TC_DTYPE_UINT16};
static const int64_t kSizes[] = {1, 2, 3, 5, 7};

static void random_dims(int32_t rank, int64_t *dims) {
    for (int32_t i = 0; i < rank; i++) dims[i] = kSizes[rng() % 5];
}

/* ---- Transpose ---------------------------------------------------------------------- */

static void test_transpose_random(void **state) {
    (void)state;
    for (int iter = 0; iter < 60; iter++) {
        int32_t r = (int32_t)rng_range(0, 5);
        int64_t dims[TC_MAX_RANK], perm[TC_MAX_RANK];
        random_dims(r, dims);
        for (int32_t i = 0; i < r; i++) perm[i] = i;
        for (int32_t i = r - 1; i > 0; i--) {
            int32_t j = (int32_t)(rng() % (uint64_t)(i + 1));
            int64_t t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        bool dflt = iter % 4 == 0;
        if (dflt)
            for (int32_t i = 0; i < r; i++) perm[i] = r - 1 - i;
        tc__tensor x;
        make(&x, kDtypes[iter % 7], r, dims);
        tc__attr at[1] = {a_ints("perm", perm, (size_t)r)};
        op_run o = {.infer = tc__infer_Transpose,
                    .kern = tc__ref_Transpose,
                    .attrs = at,
                    .n_attrs = dflt ? 0 : 1,
                    .n_in = 1,
                    .in = {&x},
                    .n_out = 1};
        assert_int_equal(run(&o), TC_STATUS_OK);
        int64_t odims[TC_MAX_RANK];
        for (int32_t i = 0; i < r; i++) odims[i] = dims[perm[i]];
        expect_shape(&o.out[0], r, odims);
        int64_t n = tc__tensor_numel(&x), oi[TC_MAX_RANK], ii[TC_MAX_RANK];
        size_t es = tc_dtype_size(x.dtype);
        for (int64_t k = 0; k < n; k++) {
            unflatten(k, r, odims, oi);
            for (int32_t i = 0; i < r; i++) ii[perm[i]] = oi[i];
            assert_memory_equal(elem(&o.out[0], k), elem(&x, flatten_idx(r, dims, ii)), es);
        }
        run_free(&o);
        tc__tensor_free(&x);
    }
}

static void test_transpose_bad_perm(void **state) {
    (void)state;
    int64_t dims[3] = {2, 3, 5}, perm[3] = {0, 2, 0};
    tc__tensor x, y;
    make(&x, TC_DTYPE_FLOAT32, 3, dims);
    make(&y, TC_DTYPE_FLOAT32, 3, dims);
    tc__attr at[1] = {a_ints("perm", perm, 3)};
    tc__attrs attrs = {1, at};
    tc__err err = {0};
    const tc__tensor *in[1] = {&x};
    tc__tensor *out[1] = {&y};
    tc__kernel_ctx kc = {"n", "Transpose", 17, &attrs, 1, in, 1, out, &err, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    assert_int_equal(tc__ref_Transpose(&kc), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "perm"));
    /* A shape that does not match the permutation is refused, not written out of bounds. */
    int64_t ident[3] = {0, 1, 2}, wrong[3] = {2, 5, 3};
    tc__attr at2[1] = {a_ints("perm", ident, 3)};
    attrs.items = at2;
    tc__tensor z;
    make(&z, TC_DTYPE_FLOAT32, 3, wrong);
    out[0] = &z;
    assert_int_equal(tc__ref_Transpose(&kc), TC_STATUS_INTERNAL);
    /* A perm of the wrong length. */
    tc__attr at3[1] = {a_ints("perm", ident, 2)};
    attrs.items = at3;
    assert_int_equal(tc__ref_Transpose(&kc), TC_STATUS_INVALID_ARGUMENT);
    tc__tensor_free(&x);
    tc__tensor_free(&y);
    tc__tensor_free(&z);
}

/* ---- Concat ------------------------------------------------------------------------- */

static void test_concat_random(void **state) {
    (void)state;
    for (int iter = 0; iter < 40; iter++) {
        int32_t r = (int32_t)rng_range(1, 4);
        int64_t base[TC_MAX_RANK];
        random_dims(r, base);
        int32_t ax = (int32_t)rng_range(0, r - 1);
        int n_in = (int)rng_range(1, 4);
        tc__tensor x[4];
        tc_dtype dt = kDtypes[iter % 7];
        int64_t total = 0;
        for (int i = 0; i < n_in; i++) {
            int64_t d[TC_MAX_RANK];
            memcpy(d, base, sizeof d);
            d[ax] = rng_range(0, 4); /* includes empty inputs */
            total += d[ax];
            make(&x[i], dt, r, d);
        }
        int64_t axis_attr = iter % 2 ? ax - r : ax;
        tc__attr at[1] = {a_int("axis", axis_attr)};
        op_run o = {
            .infer = tc__infer_Concat, .kern = tc__ref_Concat, .attrs = at, .n_attrs = 1, .n_in = n_in, .n_out = 1};
        for (int i = 0; i < n_in; i++) o.in[i] = &x[i];
        assert_int_equal(run(&o), TC_STATUS_OK);
        int64_t odims[TC_MAX_RANK];
        memcpy(odims, base, sizeof odims);
        odims[ax] = total;
        expect_shape(&o.out[0], r, odims);
        int64_t n = tc__tensor_numel(&o.out[0]), idx[TC_MAX_RANK];
        for (int64_t k = 0; k < n; k++) {
            unflatten(k, r, odims, idx);
            int i = 0;
            while (idx[ax] >= x[i].dims[ax]) idx[ax] -= x[i++].dims[ax];
            assert_memory_equal(elem(&o.out[0], k), elem(&x[i], flatten_idx(r, x[i].dims, idx)), tc_dtype_size(dt));
        }
        run_free(&o);
        for (int i = 0; i < n_in; i++) tc__tensor_free(&x[i]);
    }
}

static void test_concat_errors(void **state) {
    (void)state;
    int64_t d1[2] = {2, 3}, d2[2] = {3, 3};
    tc__tensor a, b;
    make(&a, TC_DTYPE_FLOAT32, 2, d1);
    make(&b, TC_DTYPE_FLOAT32, 2, d2);
    tc__attr at[1] = {a_int("axis", 1)};
    op_run o = {.infer = tc__infer_Concat,
                .kern = tc__ref_Concat,
                .attrs = at,
                .n_attrs = 1,
                .n_in = 2,
                .in = {&a, &b},
                .n_out = 1};
    assert_int_equal(run(&o), TC_STATUS_INVALID_ARGUMENT); /* dim 0 differs: 2 vs 3 */
    at[0] = a_int("axis", 2);
    assert_int_equal(run(&o), TC_STATUS_INVALID_ARGUMENT); /* axis out of range */
    tc__tensor_free(&a);
    tc__tensor_free(&b);
}

/* ---- Split -------------------------------------------------------------------------- */

/* Checks outputs of a split of x along ax into pieces of the given sizes. */
static void check_split(const op_run *o, const tc__tensor *x, int32_t ax, const int64_t *sizes) {
    int64_t off = 0;
    for (int p = 0; p < o->n_out; p++) {
        if (!o->absent[p]) {
            const tc__tensor *y = &o->out[p];
            int64_t d[TC_MAX_RANK], idx[TC_MAX_RANK];
            memcpy(d, x->dims, sizeof d);
            d[ax] = sizes[p];
            expect_shape(y, x->rank, d);
            for (int64_t k = 0; k < tc__tensor_numel(y); k++) {
                unflatten(k, x->rank, d, idx);
                idx[ax] += off;
                assert_memory_equal(elem(y, k), elem(x, flatten_idx(x->rank, x->dims, idx)), tc_dtype_size(x->dtype));
            }
        }
        off += sizes[p];
    }
}

static void test_split_variants(void **state) {
    (void)state;
    int64_t dims[3] = {3, 7, 2};
    tc__tensor x;
    make(&x, TC_DTYPE_FLOAT32, 3, dims);
    /* opset 18 num_outputs: chunks of ceil(7/3) = 3, last 1. */
    tc__attr at[2] = {a_int("axis", -2), a_int("num_outputs", 3)};
    op_run o = {.infer = tc__infer_Split,
                .kern = tc__ref_Split,
                .opset = 18,
                .attrs = at,
                .n_attrs = 2,
                .n_in = 1,
                .in = {&x},
                .n_out = 3};
    assert_int_equal(run(&o), TC_STATUS_OK);
    check_split(&o, &x, 1, (int64_t[]){3, 3, 1});
    run_free(&o);
    /* opset 13 split input, zero-sized piece, one absent output. */
    tc__tensor s;
    make_i64(&s, 1, 4, (int64_t[]){2, 0, 4, 1});
    op_run o2 = {.infer = tc__infer_Split,
                 .kern = tc__ref_Split,
                 .opset = 13,
                 .attrs = at,
                 .n_attrs = 1,
                 .n_in = 2,
                 .in = {&x, &s},
                 .n_out = 4,
                 .absent = {false, false, true, false}};
    assert_int_equal(run(&o2), TC_STATUS_OK);
    check_split(&o2, &x, 1, (int64_t[]){2, 0, 4, 1});
    run_free(&o2);
    /* opset 11 split attribute on axis 0. */
    int64_t sp[2] = {1, 2};
    tc__attr at3[1] = {a_ints("split", sp, 2)};
    op_run o3 = {.infer = tc__infer_Split,
                 .kern = tc__ref_Split,
                 .opset = 11,
                 .attrs = at3,
                 .n_attrs = 1,
                 .n_in = 1,
                 .in = {&x},
                 .n_out = 2};
    assert_int_equal(run(&o3), TC_STATUS_OK);
    check_split(&o3, &x, 0, sp);
    run_free(&o3);
    /* Equal split by output count. */
    op_run o4 = {.infer = tc__infer_Split, .kern = tc__ref_Split, .opset = 13, .n_in = 1, .in = {&x}, .n_out = 3};
    assert_int_equal(run(&o4), TC_STATUS_OK);
    check_split(&o4, &x, 0, (int64_t[]){1, 1, 1});
    run_free(&o4);
    /* 7 is not divisible by 2 before opset 18. */
    tc__attr at5[1] = {a_int("axis", 1)};
    op_run o5 = {.infer = tc__infer_Split,
                 .kern = tc__ref_Split,
                 .opset = 13,
                 .attrs = at5,
                 .n_attrs = 1,
                 .n_in = 1,
                 .in = {&x},
                 .n_out = 2};
    assert_int_equal(run(&o5), TC_STATUS_INVALID_ARGUMENT);
    /* Sizes that do not add up. */
    tc__tensor bad;
    make_i64(&bad, 1, 2, (int64_t[]){2, 4});
    op_run o6 = {.infer = tc__infer_Split,
                 .kern = tc__ref_Split,
                 .opset = 13,
                 .attrs = at5,
                 .n_attrs = 1,
                 .n_in = 2,
                 .in = {&x, &bad},
                 .n_out = 2};
    assert_int_equal(run(&o6), TC_STATUS_INVALID_ARGUMENT);
    tc__tensor_free(&bad);
    tc__tensor_free(&s);
    tc__tensor_free(&x);
}

/* ---- Slice -------------------------------------------------------------------------- */

/*
 * The ONNX rule as the spec words it, counting by enumeration: negative values count
 * from the end; starts clamp to [0, dim] (step > 0) or [0, dim-1] (step < 0), ends to
 * [0, dim] or [-1, dim-1]. (It differs from NumPy for a negative step with a start below
 * -dim: the spec, ONNX Runtime and ONNX shape inference take element 0, NumPy none.)
 */
static int64_t spec_slice(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first) {
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    int64_t slo = 0, shi = step > 0 ? dim : dim - 1, elo = step > 0 ? 0 : -1, ehi = step > 0 ? dim : dim - 1;
    if (start < slo) start = slo;
    if (start > shi) start = shi;
    if (end < elo) end = elo;
    if (end > ehi) end = ehi;
    *first = start;
    int64_t n = 0;
    for (int64_t i = start; step > 0 ? i < end : i > end; i += step) n++;
    return dim == 0 ? 0 : n;
}

static void test_slice_random(void **state) {
    (void)state;
    for (int iter = 0; iter < 80; iter++) {
        int32_t r = (int32_t)rng_range(1, 4);
        int64_t dims[TC_MAX_RANK];
        random_dims(r, dims);
        int64_t na = rng_range(1, r);
        int64_t st[TC_MAX_RANK], en[TC_MAX_RANK], ax[TC_MAX_RANK], sp[TC_MAX_RANK];
        bool used[TC_MAX_RANK] = {false};
        for (int64_t i = 0; i < na; i++) {
            int32_t a;
            do a = (int32_t)rng_range(0, r - 1);
            while (used[a]);
            used[a] = true;
            ax[i] = rng() & 1 ? a : a - r;
            st[i] = rng_range(-9, 9);
            en[i] = rng_range(-9, 9);
            if (iter % 5 == 0) en[i] = INT64_MAX;
            if (iter % 7 == 0) st[i] = INT64_MIN;
            sp[i] = rng_range(1, 3) * (rng() & 1 ? 1 : -1);
        }
        tc__tensor x, ts, te, ta, tp;
        make(&x, kDtypes[iter % 7], r, dims);
        make_i64(&ts, 1, na, st);
        make_i64(&te, 1, na, en);
        make_i64(&ta, 1, na, ax);
        make_i64(&tp, 1, na, sp);
        op_run o = {.infer = tc__infer_Slice,
                    .kern = tc__ref_Slice,
                    .opset = 13,
                    .n_in = 5,
                    .in = {&x, &ts, &te, &ta, &tp},
                    .n_out = 1};
        assert_int_equal(run(&o), TC_STATUS_OK);
        int64_t first[TC_MAX_RANK], step[TC_MAX_RANK], odims[TC_MAX_RANK];
        for (int32_t i = 0; i < r; i++) {
            first[i] = 0;
            step[i] = 1;
            odims[i] = dims[i];
        }
        for (int64_t i = 0; i < na; i++) {
            int64_t a = ax[i] < 0 ? ax[i] + r : ax[i];
            odims[a] = spec_slice(dims[a], st[i], en[i], sp[i], &first[a]);
            step[a] = sp[i];
        }
        expect_shape(&o.out[0], r, odims);
        int64_t idx[TC_MAX_RANK];
        for (int64_t k = 0; k < tc__tensor_numel(&o.out[0]); k++) {
            unflatten(k, r, odims, idx);
            for (int32_t i = 0; i < r; i++) idx[i] = first[i] + idx[i] * step[i];
            assert_memory_equal(elem(&o.out[0], k), elem(&x, flatten_idx(r, dims, idx)), tc_dtype_size(x.dtype));
        }
        run_free(&o);
        tc__tensor_free(&x);
        tc__tensor_free(&ts);
        tc__tensor_free(&te);
        tc__tensor_free(&ta);
        tc__tensor_free(&tp);
    }
}

static void test_slice_onnx_cases(void **state) {
    (void)state;
    /* test_slice_neg_steps: x 20x10x5, starts [20,10,4] ends [0,0,1] axes [0,1,2] steps [-1,-3,-2] -> 19x3x2. */
    int64_t dims[3] = {20, 10, 5};
    tc__tensor x, ts, te, ta, tp;
    make(&x, TC_DTYPE_FLOAT32, 3, dims);
    make_i64(&ts, 1, 3, (int64_t[]){20, 10, 4});
    make_i64(&te, 1, 3, (int64_t[]){0, 0, 1});
    make_i64(&ta, 1, 3, (int64_t[]){0, 1, 2});
    make_i64(&tp, 1, 3, (int64_t[]){-1, -3, -2});
    op_run o = {.infer = tc__infer_Slice,
                .kern = tc__ref_Slice,
                .opset = 13,
                .n_in = 5,
                .in = {&x, &ts, &te, &ta, &tp},
                .n_out = 1};
    assert_int_equal(run(&o), TC_STATUS_OK);
    expect_shape(&o.out[0], 3, (int64_t[]){19, 3, 2});
    /* y[0,0,0] = x[19,9,4]; y[1,2,1] = x[18,3,2]. */
    const float *y = o.out[0].data, *xf = x.data;
    assert_true(y[0] == xf[19 * 50 + 9 * 5 + 4]);
    assert_true(y[1 * 6 + 2 * 2 + 1] == xf[18 * 50 + 3 * 5 + 2]);
    run_free(&o);
    /* test_slice_start_out_of_bounds: starts [1000] ends [1000] axes [1] -> 20x0x5. */
    tc__tensor_free(&ts);
    tc__tensor_free(&te);
    tc__tensor_free(&ta);
    make_i64(&ts, 1, 1, (int64_t[]){1000});
    make_i64(&te, 1, 1, (int64_t[]){1000});
    make_i64(&ta, 1, 1, (int64_t[]){1});
    op_run o2 = {
        .infer = tc__infer_Slice, .kern = tc__ref_Slice, .opset = 13, .n_in = 4, .in = {&x, &ts, &te, &ta}, .n_out = 1};
    assert_int_equal(run(&o2), TC_STATUS_OK);
    expect_shape(&o2.out[0], 3, (int64_t[]){20, 0, 5});
    run_free(&o2);
    /* Negative step with a start below -dim clamps to element 0 (the spec's rule). */
    tc__tensor_free(&ts);
    tc__tensor_free(&te);
    tc__tensor_free(&tp);
    make_i64(&ts, 1, 1, (int64_t[]){-100});
    make_i64(&te, 1, 1, (int64_t[]){-200});
    make_i64(&tp, 1, 1, (int64_t[]){-1});
    op_run o5 = {.infer = tc__infer_Slice,
                 .kern = tc__ref_Slice,
                 .opset = 13,
                 .n_in = 5,
                 .in = {&x, &ts, &te, &ta, &tp},
                 .n_out = 1};
    assert_int_equal(run(&o5), TC_STATUS_OK);
    expect_shape(&o5.out[0], 3, (int64_t[]){20, 1, 5});
    assert_true(((float *)o5.out[0].data)[5] == xf[50]);
    run_free(&o5);
    /* A zero step is an error. */
    tc__tensor_free(&tp);
    make_i64(&tp, 1, 1, (int64_t[]){0});
    op_run o3 = {.infer = tc__infer_Slice,
                 .kern = tc__ref_Slice,
                 .opset = 13,
                 .n_in = 5,
                 .in = {&x, &ts, &te, &ta, &tp},
                 .n_out = 1};
    assert_int_equal(run(&o3), TC_STATUS_INVALID_ARGUMENT);
    /* Opset 9: attributes. */
    int64_t s9[1] = {-3}, e9[1] = {INT64_MAX}, a9[1] = {2};
    tc__attr at[3] = {a_ints("starts", s9, 1), a_ints("ends", e9, 1), a_ints("axes", a9, 1)};
    op_run o4 = {.infer = tc__infer_Slice,
                 .kern = tc__ref_Slice,
                 .opset = 9,
                 .attrs = at,
                 .n_attrs = 3,
                 .n_in = 1,
                 .in = {&x},
                 .n_out = 1};
    assert_int_equal(run(&o4), TC_STATUS_OK);
    expect_shape(&o4.out[0], 3, (int64_t[]){20, 10, 3});
    assert_true(((float *)o4.out[0].data)[4] == xf[1 * 5 + 3]);
    run_free(&o4);
    tc__tensor_free(&x);
    tc__tensor_free(&ts);
    tc__tensor_free(&te);
    tc__tensor_free(&ta);
    tc__tensor_free(&tp);
}

/* ---- Gather, GatherElements --------------------------------------------------------- */

static void test_gather_random(void **state) {
    (void)state;
    for (int iter = 0; iter < 60; iter++) {
        int32_t r = (int32_t)rng_range(1, 4), q = (int32_t)rng_range(0, 2);
        int64_t dims[TC_MAX_RANK], qd[TC_MAX_RANK];
        random_dims(r, dims);
        random_dims(q, qd);
        int32_t ax = (int32_t)rng_range(0, r - 1);
        tc__tensor x, ind;
        make(&x, kDtypes[iter % 7], r, dims);
        tc_dtype it = iter % 2 ? TC_DTYPE_INT32 : TC_DTYPE_INT64;
        assert_int_equal(tc__tensor_alloc(&ind, it, q, qd, NULL), TC_STATUS_OK);
        for (int64_t j = 0; j < tc__tensor_numel(&ind); j++)
            tc__tensor_set_i64(&ind, j, rng_range(-dims[ax], dims[ax] - 1));
        tc__attr at[1] = {a_int("axis", iter % 3 ? ax : ax - r)};
        op_run o = {.infer = tc__infer_Gather,
                    .kern = tc__ref_Gather,
                    .attrs = at,
                    .n_attrs = 1,
                    .n_in = 2,
                    .in = {&x, &ind},
                    .n_out = 1};
        assert_int_equal(run(&o), TC_STATUS_OK);
        int64_t od[TC_MAX_RANK];
        int32_t ro = 0;
        for (int32_t i = 0; i < ax; i++) od[ro++] = dims[i];
        for (int32_t i = 0; i < q; i++) od[ro++] = qd[i];
        for (int32_t i = ax + 1; i < r; i++) od[ro++] = dims[i];
        expect_shape(&o.out[0], ro, od);
        int64_t oi[TC_MAX_RANK], ii[TC_MAX_RANK];
        for (int64_t k = 0; k < tc__tensor_numel(&o.out[0]); k++) {
            unflatten(k, ro, od, oi);
            int64_t v = tc__tensor_get_i64(&ind, flatten_idx(q, qd, oi + ax));
            for (int32_t i = 0; i < ax; i++) ii[i] = oi[i];
            ii[ax] = v < 0 ? v + dims[ax] : v;
            for (int32_t i = ax + 1; i < r; i++) ii[i] = oi[i + q - 1];
            assert_memory_equal(elem(&o.out[0], k), elem(&x, flatten_idx(r, dims, ii)), tc_dtype_size(x.dtype));
        }
        run_free(&o);
        tc__tensor_free(&x);
        tc__tensor_free(&ind);
    }
}

static void test_gather_bad_index(void **state) {
    (void)state;
    int64_t dims[2] = {3, 5}, qd[2] = {2, 5};
    tc__tensor x, ind, y;
    make(&x, TC_DTYPE_FLOAT32, 2, dims);
    make_i64(&ind, 1, 3, (int64_t[]){0, -3, 0});
    int64_t od[2] = {3, 3};
    make(&y, TC_DTYPE_FLOAT32, 2, od);
    tc__attr at[1] = {a_int("axis", 1)};
    tc__attrs attrs = {1, at};
    tc__err err = {0};
    const tc__tensor *in[2] = {&x, &ind};
    tc__tensor *out[1] = {&y};
    tc__kernel_ctx kc = {"n", "Gather", 13, &attrs, 2, in, 1, out, &err, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    assert_int_equal(tc__ref_Gather(&kc), TC_STATUS_OK);
    ((int64_t *)ind.data)[1] = 5; /* axis 1 has size 5: valid range [-5, 4] */
    assert_int_equal(tc__ref_Gather(&kc), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "index 5"));
    ((int64_t *)ind.data)[1] = -6;
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__ref_Gather(&kc), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "index -6"));
    /* Non-integer indices are refused. */
    tc__tensor fi;
    make(&fi, TC_DTYPE_FLOAT32, 1, (int64_t[]){3});
    in[1] = &fi;
    assert_int_equal(tc__ref_Gather(&kc), TC_STATUS_UNSUPPORTED);
    tc__tensor_free(&fi);
    /* GatherElements with the same bad index. */
    tc__tensor ge, gy;
    assert_int_equal(tc__tensor_alloc(&ge, TC_DTYPE_INT32, 2, qd, NULL), TC_STATUS_OK);
    for (int k = 0; k < 10; k++) tc__tensor_set_i64(&ge, k, k % 3 - 3);
    make(&gy, TC_DTYPE_FLOAT32, 2, qd);
    tc__attr at0[1] = {a_int("axis", 0)};
    attrs.items = at0;
    in[1] = &ge;
    out[0] = &gy;
    assert_int_equal(tc__ref_GatherElements(&kc), TC_STATUS_OK);
    ((int32_t *)ge.data)[7] = 3;
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__ref_GatherElements(&kc), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "index 3"));
    tc__tensor_free(&ge);
    tc__tensor_free(&gy);
    tc__tensor_free(&x);
    tc__tensor_free(&ind);
    tc__tensor_free(&y);
}

static void test_gather_elements_random(void **state) {
    (void)state;
    for (int iter = 0; iter < 40; iter++) {
        int32_t r = (int32_t)rng_range(1, 4);
        int64_t dims[TC_MAX_RANK], id[TC_MAX_RANK];
        random_dims(r, dims);
        int32_t ax = (int32_t)rng_range(0, r - 1);
        for (int32_t i = 0; i < r; i++) id[i] = i == ax ? rng_range(1, 6) : rng_range(1, dims[i]);
        tc__tensor x, ind;
        make(&x, kDtypes[iter % 7], r, dims);
        tc_dtype it = iter % 2 ? TC_DTYPE_INT32 : TC_DTYPE_INT64;
        assert_int_equal(tc__tensor_alloc(&ind, it, r, id, NULL), TC_STATUS_OK);
        for (int64_t j = 0; j < tc__tensor_numel(&ind); j++)
            tc__tensor_set_i64(&ind, j, rng_range(-dims[ax], dims[ax] - 1));
        tc__attr at[1] = {a_int("axis", iter % 2 ? ax : ax - r)};
        op_run o = {.infer = tc__infer_GatherElements,
                    .kern = tc__ref_GatherElements,
                    .attrs = at,
                    .n_attrs = 1,
                    .n_in = 2,
                    .in = {&x, &ind},
                    .n_out = 1};
        assert_int_equal(run(&o), TC_STATUS_OK);
        expect_shape(&o.out[0], r, id);
        int64_t oi[TC_MAX_RANK];
        for (int64_t k = 0; k < tc__tensor_numel(&o.out[0]); k++) {
            unflatten(k, r, id, oi);
            int64_t v = tc__tensor_get_i64(&ind, k);
            oi[ax] = v < 0 ? v + dims[ax] : v;
            assert_memory_equal(elem(&o.out[0], k), elem(&x, flatten_idx(r, dims, oi)), tc_dtype_size(x.dtype));
        }
        run_free(&o);
        tc__tensor_free(&x);
        tc__tensor_free(&ind);
    }
}

/* ---- Copies: Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout --------------------- */

static void expect_same_data(const tc__tensor *a, const tc__tensor *b) {
    assert_int_equal(a->nbytes, b->nbytes);
    assert_memory_equal(a->data, b->data, a->nbytes);
}

static void test_reshape_family(void **state) {
    (void)state;
    int64_t dims[3] = {3, 1, 7};
    tc__tensor x, shp;
    make(&x, TC_DTYPE_FLOAT16, 3, dims);
    make_i64(&shp, 1, 3, (int64_t[]){0, -1, 1});
    op_run o = {.infer = tc__infer_Reshape, .kern = tc__ref_Reshape, .n_in = 2, .in = {&x, &shp}, .n_out = 1};
    assert_int_equal(run(&o), TC_STATUS_OK);
    expect_shape(&o.out[0], 3, (int64_t[]){3, 7, 1});
    expect_same_data(&o.out[0], &x);
    run_free(&o);
    tc__tensor_free(&shp);
    make_i64(&shp, 1, 2, (int64_t[]){4, -1});
    assert_int_equal(run(&o), TC_STATUS_INVALID_ARGUMENT); /* 21 is not divisible by 4 */
    tc__tensor_free(&shp);
    /* Flatten with a negative axis. */
    tc__attr fa[1] = {a_int("axis", -1)};
    op_run f = {.infer = tc__infer_Flatten,
                .kern = tc__ref_Flatten,
                .attrs = fa,
                .n_attrs = 1,
                .n_in = 1,
                .in = {&x},
                .n_out = 1};
    assert_int_equal(run(&f), TC_STATUS_OK);
    expect_shape(&f.out[0], 2, (int64_t[]){3, 7});
    expect_same_data(&f.out[0], &x);
    run_free(&f);
    fa[0] = a_int("axis", 0);
    assert_int_equal(run(&f), TC_STATUS_OK);
    expect_shape(&f.out[0], 2, (int64_t[]){1, 21});
    run_free(&f);
    /* Squeeze (input axes) and Unsqueeze (opset 11 attribute). */
    tc__tensor axes;
    make_i64(&axes, 1, 1, (int64_t[]){-2});
    op_run s = {
        .infer = tc__infer_Squeeze, .kern = tc__ref_Squeeze, .opset = 13, .n_in = 2, .in = {&x, &axes}, .n_out = 1};
    assert_int_equal(run(&s), TC_STATUS_OK);
    expect_shape(&s.out[0], 2, (int64_t[]){3, 7});
    expect_same_data(&s.out[0], &x);
    run_free(&s);
    ((int64_t *)axes.data)[0] = 0;
    assert_int_equal(run(&s), TC_STATUS_INVALID_ARGUMENT); /* dim 0 is 3, not 1 */
    int64_t ua[2] = {0, -1};
    tc__attr uat[1] = {a_ints("axes", ua, 2)};
    op_run u = {.infer = tc__infer_Unsqueeze,
                .kern = tc__ref_Unsqueeze,
                .opset = 11,
                .attrs = uat,
                .n_attrs = 1,
                .n_in = 1,
                .in = {&x},
                .n_out = 1};
    assert_int_equal(run(&u), TC_STATUS_OK);
    expect_shape(&u.out[0], 5, (int64_t[]){1, 3, 1, 7, 1});
    expect_same_data(&u.out[0], &x);
    run_free(&u);
    /* Identity. */
    op_run id = {.infer = tc__infer_Identity, .kern = tc__ref_Identity, .n_in = 1, .in = {&x}, .n_out = 1};
    assert_int_equal(run(&id), TC_STATUS_OK);
    expect_shape(&id.out[0], 3, dims);
    expect_same_data(&id.out[0], &x);
    run_free(&id);
    tc__tensor_free(&axes);
    tc__tensor_free(&x);
}

static void test_dropout(void **state) {
    (void)state;
    int64_t dims[2] = {3, 5};
    tc__tensor x, ratio, mode;
    make(&x, TC_DTYPE_FLOAT32, 2, dims);
    assert_int_equal(tc__tensor_alloc(&ratio, TC_DTYPE_FLOAT32, 0, NULL, NULL), TC_STATUS_OK);
    assert_int_equal(tc__tensor_alloc(&mode, TC_DTYPE_BOOL, 0, NULL, NULL), TC_STATUS_OK);
    *(float *)ratio.data = 0.25f;
    op_run o = {.infer = tc__infer_Dropout,
                .kern = tc__ref_Dropout,
                .opset = 13,
                .n_in = 3,
                .in = {&x, &ratio, &mode},
                .n_out = 2};
    assert_int_equal(run(&o), TC_STATUS_OK);
    expect_same_data(&o.out[0], &x);
    assert_int_equal(o.out[1].dtype, TC_DTYPE_BOOL);
    expect_shape(&o.out[1], 2, dims);
    for (int k = 0; k < 15; k++) assert_int_equal(((uint8_t *)o.out[1].data)[k], 1);
    run_free(&o);
    *(uint8_t *)mode.data = 1; /* training mode with ratio 0.25: random, unsupported */
    assert_int_equal(run(&o), TC_STATUS_UNSUPPORTED);
    run_free(&o);
    *(float *)ratio.data = 0.0f; /* training mode with ratio 0 is the identity */
    assert_int_equal(run(&o), TC_STATUS_OK);
    expect_same_data(&o.out[0], &x);
    run_free(&o);
    /* Old opset with a ratio attribute and no mask output. */
    tc__attr at[1] = {{.name = "ratio", .kind = TC__ATTR_FLOAT, .f = 0.2f}};
    op_run o2 = {.infer = tc__infer_Dropout,
                 .kern = tc__ref_Dropout,
                 .opset = 11,
                 .attrs = at,
                 .n_attrs = 1,
                 .n_in = 1,
                 .in = {&x},
                 .n_out = 1};
    assert_int_equal(run(&o2), TC_STATUS_OK);
    expect_same_data(&o2.out[0], &x);
    run_free(&o2);
    tc__tensor_free(&x);
    tc__tensor_free(&ratio);
    tc__tensor_free(&mode);
}

/* ---- Expand, Tile ------------------------------------------------------------------- */

static void test_expand_random(void **state) {
    (void)state;
    for (int iter = 0; iter < 40; iter++) {
        int32_t r = (int32_t)rng_range(0, 3), ro = r + (int32_t)rng_range(0, 2);
        int64_t dims[TC_MAX_RANK], od[TC_MAX_RANK], sv[TC_MAX_RANK];
        random_dims(ro, od);
        for (int32_t i = 0; i < r; i++) dims[i] = rng() % 3 == 0 ? 1 : od[ro - r + i];
        /* The shape input may hold 1 where the input is larger (bidirectional broadcast). */
        for (int32_t i = 0; i < ro; i++) {
            int32_t j = i - (ro - r);
            sv[i] = (j >= 0 && dims[j] != 1 && rng() % 2) ? 1 : od[i];
            if (j >= 0 && dims[j] != 1) od[i] = dims[j];
        }
        tc__tensor x, s;
        make(&x, kDtypes[iter % 7], r, dims);
        make_i64(&s, 1, ro, sv);
        op_run o = {.infer = tc__infer_Expand, .kern = tc__ref_Expand, .n_in = 2, .in = {&x, &s}, .n_out = 1};
        assert_int_equal(run(&o), TC_STATUS_OK);
        expect_shape(&o.out[0], ro, od);
        int64_t oi[TC_MAX_RANK], ii[TC_MAX_RANK];
        for (int64_t k = 0; k < tc__tensor_numel(&o.out[0]); k++) {
            unflatten(k, ro, od, oi);
            for (int32_t i = 0; i < r; i++) ii[i] = dims[i] == 1 ? 0 : oi[i + ro - r];
            assert_memory_equal(elem(&o.out[0], k), elem(&x, flatten_idx(r, dims, ii)), tc_dtype_size(x.dtype));
        }
        run_free(&o);
        tc__tensor_free(&x);
        tc__tensor_free(&s);
    }
    /* 3 cannot broadcast to 4. */
    tc__tensor x, s;
    make(&x, TC_DTYPE_FLOAT32, 1, (int64_t[]){3});
    make_i64(&s, 1, 2, (int64_t[]){2, 4});
    op_run o = {.infer = tc__infer_Expand, .kern = tc__ref_Expand, .n_in = 2, .in = {&x, &s}, .n_out = 1};
    assert_int_equal(run(&o), TC_STATUS_INVALID_ARGUMENT);
    tc__tensor_free(&x);
    tc__tensor_free(&s);
}

static void test_tile_random(void **state) {
    (void)state;
    for (int iter = 0; iter < 30; iter++) {
        int32_t r = (int32_t)rng_range(1, 3);
        int64_t dims[TC_MAX_RANK], rep[TC_MAX_RANK], od[TC_MAX_RANK];
        random_dims(r, dims);
        for (int32_t i = 0; i < r; i++) {
            rep[i] = rng_range(iter == 0 ? 0 : 1, 3);
            od[i] = dims[i] * rep[i];
        }
        tc__tensor x, t;
        make(&x, kDtypes[iter % 7], r, dims);
        make_i64(&t, 1, r, rep);
        op_run o = {.infer = tc__infer_Tile, .kern = tc__ref_Tile, .n_in = 2, .in = {&x, &t}, .n_out = 1};
        assert_int_equal(run(&o), TC_STATUS_OK);
        expect_shape(&o.out[0], r, od);
        int64_t oi[TC_MAX_RANK];
        for (int64_t k = 0; k < tc__tensor_numel(&o.out[0]); k++) {
            unflatten(k, r, od, oi);
            for (int32_t i = 0; i < r; i++) oi[i] %= dims[i];
            assert_memory_equal(elem(&o.out[0], k), elem(&x, flatten_idx(r, dims, oi)), tc_dtype_size(x.dtype));
        }
        run_free(&o);
        tc__tensor_free(&t);
        /* A negative repeat (rank 1) or a repeats of the wrong length (rank > 1). */
        make_i64(&t, 1, 1, (int64_t[]){-1});
        assert_int_equal(run(&o), TC_STATUS_INVALID_ARGUMENT);
        run_free(&o);
        tc__tensor_free(&x);
        tc__tensor_free(&t);
    }
}

/* ---- ConstantOfShape, Range, Constant, Shape, Size ----------------------------------- */

static void test_constant_of_shape(void **state) {
    (void)state;
    tc__tensor s, v;
    make_i64(&s, 1, 3, (int64_t[]){2, 1, 3});
    op_run o = {.infer = tc__infer_ConstantOfShape, .kern = tc__ref_ConstantOfShape, .n_in = 1, .in = {&s}, .n_out = 1};
    assert_int_equal(run(&o), TC_STATUS_OK); /* default: float32 zeros */
    assert_int_equal(o.out[0].dtype, TC_DTYPE_FLOAT32);
    expect_shape(&o.out[0], 3, (int64_t[]){2, 1, 3});
    for (int k = 0; k < 6; k++) assert_true(((float *)o.out[0].data)[k] == 0.0f);
    run_free(&o);
    assert_int_equal(tc__tensor_alloc(&v, TC_DTYPE_INT32, 1, (int64_t[]){1}, NULL), TC_STATUS_OK);
    *(int32_t *)v.data = -7;
    tc__attr at[1] = {{.name = "value", .kind = TC__ATTR_TENSOR, .t = &v}};
    o.attrs = at;
    o.n_attrs = 1;
    assert_int_equal(run(&o), TC_STATUS_OK);
    assert_int_equal(o.out[0].dtype, TC_DTYPE_INT32);
    for (int k = 0; k < 6; k++) assert_int_equal(((int32_t *)o.out[0].data)[k], -7);
    run_free(&o);
    tc__tensor_free(&s);
    make_i64(&s, 1, 1, (int64_t[]){0}); /* empty output */
    assert_int_equal(run(&o), TC_STATUS_OK);
    expect_shape(&o.out[0], 1, (int64_t[]){0});
    run_free(&o);
    tc__tensor_free(&s);
    make_i64(&s, 1, 2, (int64_t[]){2, -1});
    assert_int_equal(run(&o), TC_STATUS_INVALID_ARGUMENT);
    tc__tensor_free(&s);
    tc__tensor_free(&v);
}

static void scalar(tc__tensor *t, tc_dtype dt, double v) {
    assert_int_equal(tc__tensor_alloc(t, dt, 0, NULL, NULL), TC_STATUS_OK);
    tc__tensor_set_f64(t, 0, v);
}

static void test_range(void **state) {
    (void)state;
    static const struct {
        tc_dtype dt;
        double s, l, d;
        int64_t n;
    } cases[] = {
        {TC_DTYPE_FLOAT32, 1, 5, 2, 2},      {TC_DTYPE_INT32, 10, 6, -3, 2},        {TC_DTYPE_INT64, 3, 3, 1, 0},
        {TC_DTYPE_INT16, -5, 7, 5, 3},       {TC_DTYPE_FLOAT64, 0.5, -2, -0.75, 4}, {TC_DTYPE_INT64, 0, 10, -1, 0},
        {TC_DTYPE_FLOAT32, -1, 1.5, 0.5, 5},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        tc__tensor s, l, d;
        scalar(&s, cases[c].dt, cases[c].s);
        scalar(&l, cases[c].dt, cases[c].l);
        scalar(&d, cases[c].dt, cases[c].d);
        op_run o = {.infer = tc__infer_Range, .kern = tc__ref_Range, .n_in = 3, .in = {&s, &l, &d}, .n_out = 1};
        assert_int_equal(run(&o), TC_STATUS_OK);
        assert_int_equal(o.out[0].dtype, cases[c].dt);
        expect_shape(&o.out[0], 1, &cases[c].n);
        for (int64_t i = 0; i < cases[c].n; i++)
            assert_true(tc__tensor_get_f64(&o.out[0], i) == cases[c].s + (double)i * cases[c].d);
        run_free(&o);
        tc__tensor_free(&s);
        tc__tensor_free(&l);
        tc__tensor_free(&d);
    }
    /* delta 0, and an element count that overflows. */
    tc__tensor s, l, d;
    scalar(&s, TC_DTYPE_INT64, 0);
    scalar(&l, TC_DTYPE_INT64, 5);
    scalar(&d, TC_DTYPE_INT64, 0);
    op_run o = {.infer = tc__infer_Range, .kern = tc__ref_Range, .n_in = 3, .in = {&s, &l, &d}, .n_out = 1};
    assert_int_equal(run(&o), TC_STATUS_INVALID_ARGUMENT);
    *(int64_t *)s.data = INT64_MIN;
    *(int64_t *)l.data = INT64_MAX;
    *(int64_t *)d.data = 1;
    assert_int_equal(run(&o), TC_STATUS_INVALID_ARGUMENT);
    *(int64_t *)s.data = 0;
    *(int64_t *)d.data = 2;
    assert_int_equal(run(&o), TC_STATUS_INVALID_ARGUMENT); /* 2^62 elements */
    /* The kernel itself checks too, and never writes past an output of the wrong length. */
    *(int64_t *)d.data = 0;
    tc__tensor y;
    make(&y, TC_DTYPE_INT64, 1, (int64_t[]){5});
    tc__tensor *out[1] = {&y};
    tc__err err = {0};
    tc__kernel_ctx kc = {"n", "Range", 17, NULL, 3, o.in, 1, out, &err, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    assert_int_equal(tc__ref_Range(&kc), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "delta"));
    *(int64_t *)d.data = 1;
    *(int64_t *)l.data = 7;
    assert_int_equal(tc__ref_Range(&kc), TC_STATUS_INTERNAL);
    *(int64_t *)l.data = 5;
    assert_int_equal(tc__ref_Range(&kc), TC_STATUS_OK);
    for (int64_t i = 0; i < 5; i++) assert_int_equal(((int64_t *)y.data)[i], i);
    tc__tensor_free(&y);
    tc__tensor_free(&s);
    tc__tensor_free(&l);
    tc__tensor_free(&d);
}

static void test_constant(void **state) {
    (void)state;
    tc__tensor v;
    make(&v, TC_DTYPE_UINT16, 2, (int64_t[]){3, 5});
    tc__attr at[1] = {{.name = "value", .kind = TC__ATTR_TENSOR, .t = &v}};
    op_run o = {.infer = tc__infer_Constant, .kern = tc__ref_Constant, .attrs = at, .n_attrs = 1, .n_out = 1};
    assert_int_equal(run(&o), TC_STATUS_OK);
    expect_same_data(&o.out[0], &v);
    expect_shape(&o.out[0], 2, v.dims);
    run_free(&o);
    float fl[3] = {1.5f, -2.25f, 3.0f};
    int64_t il[2] = {-9, 1LL << 40};
    tc__attr kinds[4] = {{.name = "value_float", .kind = TC__ATTR_FLOAT, .f = -0.5f},
                         {.name = "value_floats", .kind = TC__ATTR_FLOATS, .floats = fl, .n = 3},
                         {.name = "value_int", .kind = TC__ATTR_INT, .i = -42},
                         {.name = "value_ints", .kind = TC__ATTR_INTS, .ints = il, .n = 2}};
    for (int k = 0; k < 4; k++) {
        op_run c = {
            .infer = tc__infer_Constant, .kern = tc__ref_Constant, .attrs = &kinds[k], .n_attrs = 1, .n_out = 1};
        assert_int_equal(run(&c), TC_STATUS_OK);
        const tc__tensor *t = &c.out[0];
        switch (k) {
        case 0:
            assert_int_equal(t->rank, 0);
            assert_true(*(float *)t->data == -0.5f);
            break;
        case 1:
            expect_shape(t, 1, (int64_t[]){3});
            assert_memory_equal(t->data, fl, sizeof fl);
            break;
        case 2:
            assert_int_equal(t->rank, 0);
            assert_int_equal(*(int64_t *)t->data, -42);
            break;
        default:
            expect_shape(t, 1, (int64_t[]){2});
            assert_memory_equal(t->data, il, sizeof il);
            break;
        }
        run_free(&c);
    }
    tc__attr sparse[1] = {{.name = "sparse_value", .kind = TC__ATTR_TENSOR, .t = &v}};
    op_run sp = {.infer = tc__infer_Constant, .kern = tc__ref_Constant, .attrs = sparse, .n_attrs = 1, .n_out = 1};
    assert_int_equal(run(&sp), TC_STATUS_UNSUPPORTED);
    tc__attr two[2] = {kinds[0], kinds[2]};
    op_run tw = {.infer = tc__infer_Constant, .kern = tc__ref_Constant, .attrs = two, .n_attrs = 2, .n_out = 1};
    assert_int_equal(run(&tw), TC_STATUS_INVALID_GRAPH);
    tc__tensor_free(&v);
}

static void test_shape_size(void **state) {
    (void)state;
    int64_t dims[3] = {3, 4, 5};
    tc__tensor x;
    make(&x, TC_DTYPE_INT8, 3, dims);
    static const struct {
        bool has_start, has_end;
        int64_t start, end, n, first;
    } cases[] = {{false, false, 0, 0, 3, 0}, {true, false, 1, 0, 2, 1},  {false, true, 0, -1, 2, 0},
                 {true, true, 2, 1, 0, 0},   {false, true, 0, 10, 3, 0}, {true, false, -10, 0, 3, 0},
                 {true, true, -1, 3, 1, 2}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        tc__attr at[2];
        int na = 0;
        if (cases[c].has_start) at[na++] = a_int("start", cases[c].start);
        if (cases[c].has_end) at[na++] = a_int("end", cases[c].end);
        op_run o = {.infer = tc__infer_Shape,
                    .kern = tc__ref_Shape,
                    .opset = 15,
                    .attrs = at,
                    .n_attrs = na,
                    .n_in = 1,
                    .in = {&x},
                    .n_out = 1};
        assert_int_equal(run(&o), TC_STATUS_OK);
        expect_shape(&o.out[0], 1, &cases[c].n);
        for (int64_t i = 0; i < cases[c].n; i++)
            assert_int_equal(((int64_t *)o.out[0].data)[i], dims[cases[c].first + i]);
        run_free(&o);
    }
    op_run s = {.infer = tc__infer_Size, .kern = tc__ref_Size, .n_in = 1, .in = {&x}, .n_out = 1};
    assert_int_equal(run(&s), TC_STATUS_OK);
    assert_int_equal(s.out[0].rank, 0);
    assert_int_equal(*(int64_t *)s.out[0].data, 60);
    run_free(&s);
    tc__tensor_free(&x);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transpose_random),  cmocka_unit_test(test_transpose_bad_perm),
        cmocka_unit_test(test_concat_random),     cmocka_unit_test(test_concat_errors),
        cmocka_unit_test(test_split_variants),    cmocka_unit_test(test_slice_random),
        cmocka_unit_test(test_slice_onnx_cases),  cmocka_unit_test(test_gather_random),
        cmocka_unit_test(test_gather_bad_index),  cmocka_unit_test(test_gather_elements_random),
        cmocka_unit_test(test_reshape_family),    cmocka_unit_test(test_dropout),
        cmocka_unit_test(test_expand_random),     cmocka_unit_test(test_tile_random),
        cmocka_unit_test(test_constant_of_shape), cmocka_unit_test(test_range),
        cmocka_unit_test(test_constant),          cmocka_unit_test(test_shape_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
