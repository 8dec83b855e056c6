/*
 * test_cpu_softmax_mask.c - the Softmax and LogSoftmax tactics (AVX-512 and AVX2) on a step with a fused mask
 * (TC__ATTR_SOFTMAX_ADD, pass fuse_softmax_mask: Softmax(x + mask)) against the reference kernel within 1e-5
 * relative, with and without a 2-thread pool: BERT's [1, 1, S, S] mask over [1, H, S, S] scores, masks of every
 * broadcast pattern along the rows (rank 1, per batch, per row, one row for all), rows of 1 to 300 values (the
 * in-register rows up to 256 and the longer ones), -inf mask entries with the NaN guard on fully masked rows; and the
 * steps supports() rejects (a mask broadcast along the row, of another type or rank, missing, or without the
 * attribute), and the steps shape inference refuses with a message (a mask that does not broadcast, widens X, is of
 * another type, or is missing).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "backends/cpu/tactics.h"
#include "core/fused_attr.h"
#include "dense_test_util.h"

#include "cpu_vec_test_util.h"

#define NORM_TOL 1e-5

static const tc__tactic *const kSoftmax[] = {&tc__tactic_softmax_f32_avx512, &tc__tactic_softmax_f32_avx2};
static const tc__tactic *const kLogSoftmax[] = {&tc__tactic_logsoftmax_f32_avx512, &tc__tactic_logsoftmax_f32_avx2};

/* Softmax and LogSoftmax of x + m (both random unless given) with the fused mask, opset 13, last axis; with nan_to
 * the NaN guard too (then no reference output may be NaN). */
static void check_mask(const tc__tensor *x, const tc__tensor *m, const float *nan_to, const char *what) {
    tc__attr attrs[2] = {{.name = TC__ATTR_SOFTMAX_ADD, .kind = TC__ATTR_INT, .i = 1}};
    int na = 1;
    if (nan_to) attrs[na++] = (tc__attr){.name = TC__ATTR_NAN_TO, .kind = TC__ATTR_FLOAT, .f = *nan_to};
    char msg[200], sx[64], sm[64];
    for (int lg = 0; lg < 2; lg++) {
        vtu_step s = vtu_step_of(lg ? "LogSoftmax" : "Softmax", 13);
        s.attrs = attrs;
        s.n_attrs = na;
        s.n_in = 2;
        s.in[0] = x;
        s.in[1] = m;
        snprintf(msg, sizeof msg, "%s %s x %s + mask %s", what, s.op, tc__shape_str(x->rank, x->dims, sx, sizeof sx),
                 tc__shape_str(m->rank, m->dims, sm, sizeof sm));
        if (nan_to) {
            tc__tensor ref;
            vtu_reference(lg ? DTU_OP(LogSoftmax) : DTU_OP(Softmax), &s, &ref);
            for (int64_t i = 0; i < tc__tensor_numel(&ref); i++)
                if (isnan(((const float *)ref.data)[i]))
                    fail_msg("%s: the reference left a NaN at %lld", msg, (long long)i);
            tc__tensor_free(&ref);
        }
        vtu_check(lg ? DTU_OP(LogSoftmax) : DTU_OP(Softmax), &s, lg ? kLogSoftmax : kSoftmax, 2, NORM_TOL, msg);
    }
}

/* x of shape xd (rank xr) and a mask of shape md (rank mr), random in [-6, 6). */
static void check_shapes(uint64_t seed, int32_t xr, const int64_t *xd, int32_t mr, const int64_t *md,
                         const char *what) {
    dtu_rng r = {seed};
    tc__tensor x = vtu_random(&r, xr, xd, -6.0, 6.0);
    tc__tensor m = vtu_random(&r, mr, md, -6.0, 6.0);
    check_mask(&x, &m, NULL, what);
    tc__tensor_free(&m);
    tc__tensor_free(&x);
}

/* The reference adds the mask: Softmax(x, m) with the attribute equals Softmax(x + m) computed apart. */
static void test_reference_adds(void **state) {
    (void)state;
    const int64_t xd[3] = {2, 3, 5}, md[2] = {1, 5};
    dtu_rng r = {31};
    tc__tensor x = vtu_random(&r, 3, xd, -4.0, 4.0), m = vtu_random(&r, 2, md, -4.0, 4.0);
    tc__tensor sum = dtu_tensor(TC_DTYPE_FLOAT32, 3, xd);
    const float *xp = x.data, *mp = m.data;
    for (int64_t i = 0; i < 30; i++) ((float *)sum.data)[i] = xp[i] + mp[i % 5];
    vtu_step s = vtu_step_of("Softmax", 13);
    const tc__attr add = {.name = TC__ATTR_SOFTMAX_ADD, .kind = TC__ATTR_INT, .i = 1};
    s.attrs = &add;
    s.n_attrs = 1;
    s.n_in = 2;
    s.in[0] = &x;
    s.in[1] = &m;
    tc__tensor fused, plain;
    vtu_reference(DTU_OP(Softmax), &s, &fused);
    vtu_step p = vtu_step_of("Softmax", 13);
    p.n_in = 1;
    p.in[0] = &sum;
    vtu_reference(DTU_OP(Softmax), &p, &plain);
    assert_memory_equal(fused.data, plain.data, fused.nbytes);
    tc__tensor_free(&plain);
    tc__tensor_free(&fused);
    tc__tensor_free(&sum);
    tc__tensor_free(&m);
    tc__tensor_free(&x);
}

static void test_mask_broadcasts(void **state) {
    (void)state;
    uint64_t seed = 1;
    const int64_t bert[4] = {1, 3, 128, 128}, bert_m[4] = {1, 1, 128, 128};
    check_shapes(seed++, 4, bert, 4, bert_m, "bert attention");
    const int64_t x4[4] = {2, 3, 5, 17}, per_batch[4] = {2, 1, 5, 17}, row[1] = {17}, per_head[3] = {3, 1, 17},
                  one_row[4] = {1, 1, 1, 17};
    check_shapes(seed++, 4, x4, 4, per_batch, "per batch");
    check_shapes(seed++, 4, x4, 1, row, "one row, rank 1");
    check_shapes(seed++, 4, x4, 3, per_head, "per head");
    check_shapes(seed++, 4, x4, 4, one_row, "one row, rank 4");
    check_shapes(seed++, 4, x4, 4, x4, "full shape");
    const int64_t v[1] = {37};
    check_shapes(seed++, 1, v, 1, v, "rank 1");
    /* row lengths around the vector width and the in-register limit (256), an odd row count */
    const int64_t lens[] = {1, 2, 7, 15, 16, 17, 31, 128, 241, 256, 257, 300};
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        const int64_t xd[3] = {3, 7, lens[k]}, md[2] = {7, lens[k]};
        check_shapes(seed++, 3, xd, 2, md, "row lengths");
    }
}

/* -inf in the mask (attention's padding): entries of 0 (-inf for LogSoftmax); a fully masked row is NaN, and with the
 * guard its value. */
static void test_mask_infinite(void **state) {
    (void)state;
    const float guards[2] = {0.0f, -2.5f};
    const int64_t lens[3] = {21, 128, 300};
    for (int k = 0; k < 3; k++) {
        const int64_t n = lens[k], xd[3] = {2, 4, n}, md[3] = {1, 4, n};
        dtu_rng r = {90 + (uint64_t)k};
        tc__tensor x = vtu_random(&r, 3, xd, -5.0, 5.0), m = vtu_random(&r, 3, md, -1.0, 1.0);
        float *p = m.data;
        for (int64_t j = n / 2; j < n; j++) p[0 * n + j] = -INFINITY; /* row 0: half masked */
        for (int64_t j = 0; j < n; j++) p[2 * n + j] = -INFINITY;     /* row 2: all masked */
        p[3 * n + n - 1] = -INFINITY;
        check_mask(&x, &m, NULL, "-inf entries");
        for (int gk = 0; gk < 2; gk++) check_mask(&x, &m, &guards[gk], "-inf entries, NaN guard");
        tc__tensor_free(&m);
        tc__tensor_free(&x);
    }
}

/* supports() of every Softmax and LogSoftmax tactic (all agree) on x + m, with or without the attribute. */
static bool mask_supports(const tc__tensor *x, const tc__tensor *m, bool attr) {
    const tc__attr add = {.name = TC__ATTR_SOFTMAX_ADD, .kind = TC__ATTR_INT, .i = 1};
    const tc__tensor *in[2] = {x, m};
    tc__attrs as = {attr ? 1 : 0, &add};
    return vtu_softmax_supports(kSoftmax, kLogSoftmax, 2, &as, 13, m ? 2 : 1, in, x);
}

static void test_mask_rejects(void **state) {
    (void)state;
    tc__tensor x = {TC_DTYPE_FLOAT32, 3, {2, 3, 4}, NULL, 0};
    tc__tensor m = {TC_DTYPE_FLOAT32, 2, {3, 4}, NULL, 0};
    assert_true(mask_supports(&x, &m, true));
    assert_false(mask_supports(&x, &m, false)); /* two inputs without the attribute */
    assert_false(mask_supports(&x, NULL, true)); /* the attribute without the mask */
    tc__tensor along = {TC_DTYPE_FLOAT32, 2, {3, 1}, NULL, 0}; /* broadcast along the row */
    tc__tensor wrong = {TC_DTYPE_FLOAT32, 2, {2, 4}, NULL, 0}; /* 2 is not 3 */
    tc__tensor wide = {TC_DTYPE_FLOAT32, 4, {1, 2, 3, 4}, NULL, 0}; /* more dims than x */
    tc__tensor f64 = m;
    f64.dtype = TC_DTYPE_FLOAT64;
    assert_false(mask_supports(&x, &along, true));
    assert_false(mask_supports(&x, &wrong, true));
    assert_false(mask_supports(&x, &wide, true));
    assert_false(mask_supports(&x, &f64, true));
}

/* A step (from a plan file) whose mask does not fit is refused with a message, before any kernel runs. */
static void test_mask_invalid(void **state) {
    (void)state;
    const tc__attr add = {.name = TC__ATTR_SOFTMAX_ADD, .kind = TC__ATTR_INT, .i = 1};
    const int64_t xd[3] = {2, 3, 4}, bad[2] = {2, 4}, wide[3] = {2, 3, 4}, x2[2] = {3, 4};
    tc__tensor x = dtu_tensor(TC_DTYPE_FLOAT32, 3, xd), m_bad = dtu_tensor(TC_DTYPE_FLOAT32, 2, bad);
    tc__tensor x_small = dtu_tensor(TC_DTYPE_FLOAT32, 2, x2), m_wide = dtu_tensor(TC_DTYPE_FLOAT32, 3, wide);
    tc__tensor m64 = dtu_tensor(TC_DTYPE_FLOAT64, 2, x2);
    const tc__tensor *in_bad[2] = {&x, &m_bad}, *in_wide[2] = {&x_small, &m_wide}, *in_64[2] = {&x_small, &m64};
    const tc__tensor *in_one[1] = {&x};
    dtu_run_fails(DTU_OP(Softmax), 13, &add, 1, 2, in_bad, 1, TC_STATUS_INVALID_ARGUMENT, "broadcast");
    dtu_run_fails(DTU_OP(Softmax), 13, &add, 1, 2, in_wide, 1, TC_STATUS_INVALID_GRAPH, "does not broadcast");
    dtu_run_fails(DTU_OP(Softmax), 13, &add, 1, 2, in_64, 1, TC_STATUS_INVALID_GRAPH, "type");
    dtu_run_fails(DTU_OP(Softmax), 13, &add, 1, 1, in_one, 1, TC_STATUS_INVALID_GRAPH, "inputs");
    tc__tensor_free(&m64);
    tc__tensor_free(&m_wide);
    tc__tensor_free(&x_small);
    tc__tensor_free(&m_bad);
    tc__tensor_free(&x);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_adds),
        cmocka_unit_test(test_mask_broadcasts),
        cmocka_unit_test(test_mask_infinite),
        cmocka_unit_test(test_mask_rejects),
        cmocka_unit_test(test_mask_invalid),
    };
    return cmocka_run_group_tests(tests, vtu_setup, vtu_teardown);
}
