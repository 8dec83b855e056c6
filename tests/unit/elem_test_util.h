/*
 * elem_test_util.h - helpers for the elementwise / reduction / normalisation
 * kernel tests: a fixed-seed PRNG, tensor builders, attribute builders and a
 * runner that infers an op's output shapes from concrete inputs, allocates the
 * outputs and calls its reference kernel, as the executor does.
 *
 * Include after <cmocka.h>. Every helper is static: each test file is its own program.
 */
#ifndef TC_TESTS_ELEM_TEST_UTIL_H
#define TC_TESTS_ELEM_TEST_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/ref/ref.h"
#include "core/tensor.h"
#include "graph/op_schema.h"

/* ---- PRNG (xorshift64*) ----------------------------------------------------- */

typedef struct etu_rng {
    uint64_t s;
} etu_rng;

static inline uint64_t etu_next(etu_rng *r) {
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 2685821657736338717ull;
}
/* Uniform in [lo, hi), never exactly zero. */
static inline double etu_uniform(etu_rng *r, double lo, double hi) {
    for (;;) {
        double u = (double)(etu_next(r) >> 11) * (1.0 / 9007199254740992.0);
        double v = lo + (hi - lo) * u;
        if (v != 0.0) return v;
    }
}
/* Uniform integer in [lo, hi], never zero when nonzero is set. */
static inline int64_t etu_int(etu_rng *r, int64_t lo, int64_t hi, bool nonzero) {
    for (;;) {
        int64_t v = lo + (int64_t)(etu_next(r) % (uint64_t)(hi - lo + 1));
        if (!nonzero || v != 0) return v;
    }
}

/* ---- tensors ------------------------------------------------------------------ */

static inline tc__tensor etu_tensor(tc_dtype dt, int32_t rank, const int64_t *dims) {
    tc__tensor t;
    tc__err err = {0};
    assert_int_equal(tc__tensor_alloc(&t, dt, rank, dims, &err), TC_STATUS_OK);
    return t;
}
/* A tensor of random non-zero floats in [lo, hi) (integers in [lo, hi] for integer types). */
static inline tc__tensor etu_random(etu_rng *r, tc_dtype dt, int32_t rank, const int64_t *dims, double lo, double hi) {
    tc__tensor t = etu_tensor(dt, rank, dims);
    int64_t n = tc__tensor_numel(&t);
    for (int64_t i = 0; i < n; i++) {
        if (tc__dtype_is_float(dt)) tc__tensor_set_f64(&t, i, etu_uniform(r, lo, hi));
        else if (dt == TC_DTYPE_BOOL) tc__tensor_set_i64(&t, i, (int64_t)(etu_next(r) >> 63));
        else tc__tensor_set_i64(&t, i, etu_int(r, (int64_t)lo, (int64_t)hi, true));
    }
    return t;
}
static inline tc__tensor etu_from_f64(tc_dtype dt, int32_t rank, const int64_t *dims, const double *v) {
    tc__tensor t = etu_tensor(dt, rank, dims);
    int64_t n = tc__tensor_numel(&t);
    for (int64_t i = 0; i < n; i++) tc__tensor_set_f64(&t, i, v[i]);
    return t;
}
static inline tc__tensor etu_from_i64(tc_dtype dt, int32_t rank, const int64_t *dims, const int64_t *v) {
    tc__tensor t = etu_tensor(dt, rank, dims);
    int64_t n = tc__tensor_numel(&t);
    for (int64_t i = 0; i < n; i++) tc__tensor_set_i64(&t, i, v[i]);
    return t;
}
static inline tc__tensor etu_scalar_f64(tc_dtype dt, double v) { return etu_from_f64(dt, 0, NULL, &v); }
static inline tc__tensor etu_scalar_i64(tc_dtype dt, int64_t v) { return etu_from_i64(dt, 0, NULL, &v); }

/* Multi-index of linear index i in dims (row-major). */
static inline void etu_unravel(int64_t i, int32_t rank, const int64_t *dims, int64_t *idx) {
    for (int32_t d = rank - 1; d >= 0; d--) {
        idx[d] = dims[d] ? i % dims[d] : 0;
        i = dims[d] ? i / dims[d] : 0;
    }
}
/* Linear index into t of the output multi-index idx (rank out_rank) under NumPy broadcasting. */
static inline int64_t etu_bcast_index(const tc__tensor *t, int32_t out_rank, const int64_t *idx) {
    int64_t off = 0;
    for (int32_t d = 0; d < t->rank; d++) {
        int64_t j = idx[d + out_rank - t->rank];
        off = off * t->dims[d] + (t->dims[d] == 1 ? 0 : j);
    }
    return off;
}

/* Relative-or-absolute closeness of doubles; NaN matches NaN, infinities must be equal. */
static inline bool etu_close(double got, double want, double tol) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return fabs(got - want) <= tol * (1.0 + fabs(want));
}
#define ETU_ASSERT_CLOSE(got, want, tol, what, i)                                                            \
    do {                                                                                                     \
        double g_ = (got), w_ = (want);                                                                      \
        if (!etu_close(g_, w_, (tol))) fail_msg("%s: element %lld: got %.9g, want %.9g", (what), (long long)(i), g_, w_); \
    } while (0)

/* ---- attributes --------------------------------------------------------------- */

static inline tc__attr etu_attr_int(const char *name, int64_t v) {
    tc__attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.kind = TC__ATTR_INT;
    a.i = v;
    return a;
}
static inline tc__attr etu_attr_float(const char *name, float v) {
    tc__attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.kind = TC__ATTR_FLOAT;
    a.f = v;
    return a;
}
static inline tc__attr etu_attr_string(const char *name, const char *v) {
    tc__attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.kind = TC__ATTR_STRING;
    a.s = v;
    return a;
}
static inline tc__attr etu_attr_ints(const char *name, const int64_t *v, size_t n) {
    tc__attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.kind = TC__ATTR_INTS;
    a.ints = v;
    a.n = n;
    return a;
}

/* ---- running an op -------------------------------------------------------------- */

#define ETU_MAX_IO 8

typedef struct etu_op {
    const char *name;
    tc__infer_fn infer;
    tc__ref_fn ref;
} etu_op;
#define ETU_OP(Name) ((etu_op){#Name, tc__infer_##Name, tc__ref_##Name})

/* A vinfo describing a concrete tensor (value known, as at run time). */
static inline void etu_vinfo_of(const tc__tensor *t, tc__vinfo *v) {
    tc__vinfo_init(v);
    v->dtype = t->dtype;
    v->shape.rank = t->rank;
    for (int32_t i = 0; i < t->rank; i++) v->shape.dims[i] = tc__dim_known(t->dims[i]);
    v->value = t;
}

/*
 * Infers output shapes from the concrete inputs (in[i] may be NULL), allocates
 * n_out outputs and runs the kernel. Returns the first failing status with the
 * reason in err->msg; on failure no output is left allocated.
 */
static inline tc_status etu_run(etu_op op, int64_t opset, const tc__attr *attrs, int n_attrs, int n_in,
                                const tc__tensor *const *in, int n_out, tc__tensor *out, tc__err *err) {
    tc__attrs as = {n_attrs, attrs};
    tc__vinfo vin[ETU_MAX_IO], vout[ETU_MAX_IO];
    const tc__vinfo *pin[ETU_MAX_IO];
    for (int i = 0; i < n_in; i++) {
        if (in[i]) {
            etu_vinfo_of(in[i], &vin[i]);
            pin[i] = &vin[i];
        } else {
            pin[i] = NULL;
        }
    }
    for (int i = 0; i < n_out; i++) tc__vinfo_init(&vout[i]);
    tc__infer_ctx ic = {"test", op.name, opset, &as, n_in, pin, n_out, vout, err};
    tc_status st = op.infer(&ic);
    if (st) return st;
    for (int i = 0; i < n_out; i++) {
        if (!tc__shape_is_concrete(&vout[i].shape)) {
            for (int j = 0; j < i; j++) tc__tensor_free(&out[j]);
            return tc__fail(err, TC_STATUS_INTERNAL, "output %d shape is not concrete", i);
        }
        int64_t dims[TC_MAX_RANK];
        for (int32_t d = 0; d < vout[i].shape.rank; d++) dims[d] = vout[i].shape.dims[d].value;
        st = tc__tensor_alloc(&out[i], vout[i].dtype, vout[i].shape.rank, dims, err);
        if (st) {
            for (int j = 0; j < i; j++) tc__tensor_free(&out[j]);
            return st;
        }
    }
    tc__tensor *pout[ETU_MAX_IO];
    for (int i = 0; i < n_out; i++) pout[i] = &out[i];
    tc__kernel_ctx kc = {.node_name = "test", .op_type = op.name, .opset = opset, .attrs = &as, .n_in = n_in, .in = in,
                         .n_out = n_out, .out = pout, .err = err};
    st = op.ref(&kc);
    if (st)
        for (int i = 0; i < n_out; i++) tc__tensor_free(&out[i]);
    return st;
}

/* etu_run that must succeed; prints the reason otherwise. */
static inline void etu_run_ok(etu_op op, int64_t opset, const tc__attr *attrs, int n_attrs, int n_in,
                              const tc__tensor *const *in, int n_out, tc__tensor *out) {
    tc__err err = {0};
    tc_status st = etu_run(op, opset, attrs, n_attrs, n_in, in, n_out, out, &err);
    if (st) fail_msg("%s (opset %lld) failed with status %d: %s", op.name, (long long)opset, (int)st, err.msg);
}

static inline void etu_assert_shape(const tc__tensor *t, int32_t rank, const int64_t *dims) {
    assert_int_equal(t->rank, rank);
    for (int32_t i = 0; i < rank; i++) assert_int_equal(t->dims[i], dims[i]);
}

#endif
