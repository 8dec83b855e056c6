/*
 * dense_test_util.h - helpers for the dense and spatial operator tests
 * (Conv, pools, MatMul, Gemm, BatchNormalization, Resize, Pad): a fixed-seed
 * PRNG, tensor and attribute builders, and a runner that infers output shapes
 * from concrete inputs, allocates the outputs and calls the reference kernel,
 * as the executor does.
 *
 * Include after <cmocka.h>. Every helper is static: each test file is its own program.
 */
#ifndef TC_TESTS_DENSE_TEST_UTIL_H
#define TC_TESTS_DENSE_TEST_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/ref/ref.h"
#include "core/tensor.h"
#include "graph/op_schema.h"

/* ---- PRNG (xorshift64*) and random tensors ------------------------------------------ */

typedef struct dtu_rng {
    uint64_t s;
} dtu_rng;

static inline uint64_t dtu_next(dtu_rng *r) {
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 2685821657736338717ull;
}

/* Uniform in [lo, hi), never exactly zero. */
static inline double dtu_uniform(dtu_rng *r, double lo, double hi) {
    for (;;) {
        double v = lo + (hi - lo) * ((double)(dtu_next(r) >> 11) * (1.0 / 9007199254740992.0));
        if (v != 0.0) return v;
    }
}

static inline tc__tensor dtu_tensor(tc_dtype dt, int32_t rank, const int64_t *dims) {
    tc__tensor t;
    tc__err err = {0};
    if (tc__tensor_alloc(&t, dt, rank, dims, &err) != TC_STATUS_OK) fail_msg("alloc: %s", err.msg);
    return t;
}

/* Random non-zero values: floats in [-2, 2), integers in [-9, 9] (unsigned: [1, 9]). */
static inline tc__tensor dtu_random(dtu_rng *r, tc_dtype dt, int32_t rank, const int64_t *dims) {
    tc__tensor t = dtu_tensor(dt, rank, dims);
    int64_t n = tc__tensor_numel(&t);
    bool is_unsigned = dt == TC_DTYPE_UINT8 || dt == TC_DTYPE_UINT16 || dt == TC_DTYPE_UINT32 || dt == TC_DTYPE_UINT64;
    for (int64_t i = 0; i < n; i++) {
        if (tc__dtype_is_float(dt)) {
            tc__tensor_set_f64(&t, i, dtu_uniform(r, -2.0, 2.0));
        } else {
            int64_t v;
            do {
                v = (int64_t)(dtu_next(r) % 19) - 9;
                if (is_unsigned && v < 0) v = -v;
            } while (v == 0);
            tc__tensor_set_i64(&t, i, v);
        }
    }
    return t;
}

static inline tc__tensor dtu_from_f64(tc_dtype dt, int32_t rank, const int64_t *dims, const double *v) {
    tc__tensor t = dtu_tensor(dt, rank, dims);
    for (int64_t i = 0; i < tc__tensor_numel(&t); i++) tc__tensor_set_f64(&t, i, v[i]);
    return t;
}

static inline tc__tensor dtu_from_i64(tc_dtype dt, int32_t rank, const int64_t *dims, const int64_t *v) {
    tc__tensor t = dtu_tensor(dt, rank, dims);
    for (int64_t i = 0; i < tc__tensor_numel(&t); i++) tc__tensor_set_i64(&t, i, v[i]);
    return t;
}

/* A 1-D tensor of n int64 values. */
static inline tc__tensor dtu_ints(int64_t n, const int64_t *v) { return dtu_from_i64(TC_DTYPE_INT64, 1, &n, v); }
/* A 1-D tensor of n float32 values. */
static inline tc__tensor dtu_floats(int64_t n, const double *v) { return dtu_from_f64(TC_DTYPE_FLOAT32, 1, &n, v); }

/* Element i of t as double (any numeric dtype). */
static inline double dtu_get(const tc__tensor *t, int64_t i) { return tc__tensor_get_f64(t, i); }

/* ---- attributes ------------------------------------------------------------------------ */

static inline tc__attr dtu_attr_int(const char *name, int64_t v) {
    tc__attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.kind = TC__ATTR_INT;
    a.i = v;
    return a;
}
static inline tc__attr dtu_attr_float(const char *name, float v) {
    tc__attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.kind = TC__ATTR_FLOAT;
    a.f = v;
    return a;
}
static inline tc__attr dtu_attr_string(const char *name, const char *v) {
    tc__attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.kind = TC__ATTR_STRING;
    a.s = v;
    return a;
}
static inline tc__attr dtu_attr_ints(const char *name, const int64_t *v, size_t n) {
    tc__attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.kind = TC__ATTR_INTS;
    a.ints = v;
    a.n = n;
    return a;
}

/* ---- running an op ------------------------------------------------------------------------ */

#define DTU_MAX_IO 8

typedef struct dtu_op {
    const char *name;
    tc__infer_fn infer;
    tc__ref_fn ref;
} dtu_op;
#define DTU_OP(Name) ((dtu_op){#Name, tc__infer_##Name, tc__ref_##Name})

/* A vinfo describing a concrete tensor (value known, as at run time). */
static inline void dtu_vinfo_of(const tc__tensor *t, tc__vinfo *v) {
    tc__vinfo_init(v);
    v->dtype = t->dtype;
    v->shape.rank = t->rank;
    for (int32_t i = 0; i < t->rank; i++) v->shape.dims[i] = tc__dim_known(t->dims[i]);
    v->value = t;
}

/* Scratch lent to the second run of every kernel (enough for the test sizes). */
#define DTU_SCRATCH_BYTES ((size_t)64 << 20)

/*
 * Runs kernel fn of kc again with a lent scratch buffer (as on the engine's run
 * path) into fresh outputs, and fails unless the results are bit-identical to
 * first and every scratch block was given back.
 */
static inline tc_status dtu_rerun_with_scratch(tc__ref_fn fn, const tc__kernel_ctx *kc, const tc__tensor *first) {
    tc__tensor again[DTU_MAX_IO];
    tc__tensor *pout[DTU_MAX_IO];
    tc__scratch scratch = {malloc(DTU_SCRATCH_BYTES), DTU_SCRATCH_BYTES, 0};
    if (scratch.base == NULL) fail_msg("out of memory for the test scratch buffer");
    for (int i = 0; i < kc->n_out; i++) {
        again[i] = dtu_tensor(first[i].dtype, first[i].rank, first[i].dims);
        pout[i] = &again[i];
    }
    tc__kernel_ctx k2 = *kc;
    k2.out = pout;
    k2.scratch = &scratch;
    tc_status st = fn(&k2);
    bool same = st == TC_STATUS_OK;
    for (int i = 0; i < kc->n_out; i++) {
        if (same && memcmp(again[i].data, first[i].data, first[i].nbytes) != 0) same = false;
        tc__tensor_free(&again[i]);
    }
    size_t left = scratch.used;
    free(scratch.base);
    if (st != TC_STATUS_OK) fail_msg("%s with lent scratch failed (%d): %s", kc->op_type, (int)st, kc->err->msg);
    if (!same) fail_msg("%s with lent scratch gave different results", kc->op_type);
    if (left != 0) fail_msg("%s left %zu bytes of scratch in use", kc->op_type, left);
    return TC_STATUS_OK;
}

/*
 * Infers output shapes from the concrete inputs (in[i] may be NULL), allocates
 * n_out outputs and runs the kernel (twice: with malloc'd and with lent scratch memory). Returns the first failing status (reason in
 * err->msg); on failure no output is left allocated.
 */
static inline tc_status dtu_run(dtu_op op, int64_t opset, const tc__attr *attrs, int n_attrs, int n_in,
                                const tc__tensor *const *in, int n_out, tc__tensor *out, tc__err *err) {
    tc__attrs as = {n_attrs, attrs};
    tc__vinfo vin[DTU_MAX_IO], vout[DTU_MAX_IO];
    const tc__vinfo *pin[DTU_MAX_IO];
    for (int i = 0; i < n_in; i++) {
        pin[i] = NULL;
        if (in[i]) {
            dtu_vinfo_of(in[i], &vin[i]);
            pin[i] = &vin[i];
        }
    }
    for (int i = 0; i < n_out; i++) tc__vinfo_init(&vout[i]);
    tc__infer_ctx ic = {"test", op.name, opset, &as, n_in, pin, n_out, vout, err};
    tc_status st = op.infer(&ic);
    if (st) return st;
    for (int i = 0; i < n_out; i++) {
        int64_t dims[TC_MAX_RANK];
        if (!tc__shape_is_concrete(&vout[i].shape)) st = tc__fail(err, TC_STATUS_INTERNAL, "output %d not concrete", i);
        for (int32_t d = 0; st == TC_STATUS_OK && d < vout[i].shape.rank; d++) dims[d] = vout[i].shape.dims[d].value;
        if (st == TC_STATUS_OK) st = tc__tensor_alloc(&out[i], vout[i].dtype, vout[i].shape.rank, dims, err);
        if (st) {
            for (int j = 0; j < i; j++) tc__tensor_free(&out[j]);
            return st;
        }
    }
    tc__tensor *pout[DTU_MAX_IO];
    for (int i = 0; i < n_out; i++) pout[i] = &out[i];
    tc__kernel_ctx kc = {"test", op.name, opset, &as, n_in, in, n_out, pout, err, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    st = op.ref(&kc);
    if (st == TC_STATUS_OK) st = dtu_rerun_with_scratch(op.ref, &kc, out);
    if (st)
        for (int i = 0; i < n_out; i++) tc__tensor_free(&out[i]);
    return st;
}

/* dtu_run that must succeed. */
static inline void dtu_run_ok(dtu_op op, int64_t opset, const tc__attr *attrs, int n_attrs, int n_in,
                              const tc__tensor *const *in, int n_out, tc__tensor *out) {
    tc__err err = {0};
    tc_status st = dtu_run(op, opset, attrs, n_attrs, n_in, in, n_out, out, &err);
    if (st) fail_msg("%s (opset %lld) failed with status %d: %s", op.name, (long long)opset, (int)st, err.msg);
}

/* dtu_run that must fail with status want; the message must contain needle (if not NULL). */
static inline void dtu_run_fails(dtu_op op, int64_t opset, const tc__attr *attrs, int n_attrs, int n_in,
                                 const tc__tensor *const *in, int n_out, tc_status want, const char *needle) {
    tc__err err = {0};
    tc__tensor out[DTU_MAX_IO];
    tc_status st = dtu_run(op, opset, attrs, n_attrs, n_in, in, n_out, out, &err);
    if (st == TC_STATUS_OK) {
        for (int i = 0; i < n_out; i++) tc__tensor_free(&out[i]);
        fail_msg("%s unexpectedly succeeded", op.name);
    }
    if (st != want) fail_msg("%s failed with status %d (%s), expected %d", op.name, (int)st, err.msg, (int)want);
    if (needle && !strstr(err.msg, needle)) fail_msg("%s: message '%s' does not mention '%s'", op.name, err.msg, needle);
}

static inline void dtu_assert_shape(const tc__tensor *t, int32_t rank, const int64_t *dims) {
    assert_int_equal(t->rank, rank);
    for (int32_t i = 0; i < rank; i++) assert_int_equal(t->dims[i], dims[i]);
}

/* Every element of got within tol * (1 + |want|) of want[i]. */
static inline void dtu_assert_values(const tc__tensor *got, const double *want, double tol, const char *what) {
    int64_t n = tc__tensor_numel(got);
    for (int64_t i = 0; i < n; i++) {
        double g = dtu_get(got, i), w = want[i];
        bool ok = isnan(w) ? isnan(g) : fabs(g - w) <= tol * (1.0 + fabs(w));
        if (!ok) fail_msg("%s: element %lld: got %.9g, want %.9g", what, (long long)i, g, w);
    }
}

/* Compares two tensors of equal size element by element. */
static inline void dtu_assert_close(const tc__tensor *got, const tc__tensor *want, double tol, const char *what) {
    assert_int_equal(tc__tensor_numel(got), tc__tensor_numel(want));
    int64_t n = tc__tensor_numel(got);
    for (int64_t i = 0; i < n; i++) {
        double g = dtu_get(got, i), w = dtu_get(want, i);
        bool ok = isnan(w) ? isnan(g) : fabs(g - w) <= tol * (1.0 + fabs(w));
        if (!ok) fail_msg("%s: element %lld: got %.9g, want %.9g", what, (long long)i, g, w);
    }
}

#endif
