/*
 * test_cpu_matmul_dyn_bf16.c - the BF16 MatMul of two run-time operands (matmul_dyn_bf16_avx512bf16) against the
 * reference MatMul: attention's Q.K^T (K^T read through a view: B's columns contiguous, the transposing pack) and
 * P.V (B's rows contiguous), operands read at other strides (the gathers), alpha, batch broadcasting, and edge sizes
 * (K of 1, odd and prime K, K past 32 pairs; M and N of 1, odd, prime, non-multiples of the 6 x 64 tile). On
 * operands already holding BF16 values the only difference left is the FP32 summation order (a tight bound); on
 * random FP32 operands the bound is BF16's rounding. 1 and 2 threads give identical bits, every output element is
 * written, the scratch is what scratch_bytes() announced (a pool wider than the CPU count takes fewer slots), and
 * supports() refuses what the tactic does not do.
 */
#include <math.h>
#include "core/thread_pool.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/cpu/tactics.h"
#include "core/fused_attr.h"
#include "core/quant_attr.h"
#include "dense_test_util.h"
#include "cpu_vec_test_util.h"

static const tc__tactic *const T = &tc__tactic_matmul_dyn_bf16_avx512bf16;

typedef struct mcase {
    const tc__attr *attrs;
    int n_attrs;
    const tc__tensor *in[2];
    bool in_const[2];
    tc__epilogue epi;
    const tc__tensor *bias;
} mcase;

static tc__step_desc desc_of(const mcase *c, const tc__attrs *as, const tc__tensor *const *out) {
    return (tc__step_desc){"MatMul", 13, as, 2, c->in, c->in_const, 1, out, &c->epi, c->bias, NULL, NULL, 0};
}

/* Runs the tactic into a poisoned output shaped like y, with exactly the scratch it announced. */
static tc__tensor run_bf16(const mcase *c, const tc__tensor *like, tc__pool_t pool) {
    tc__attrs as = {c->n_attrs, c->attrs};
    const tc__tensor *outs[1] = {like};
    tc__step_desc d = desc_of(c, &as, outs);
    const size_t bytes = T->scratch_bytes(&d);
    assert_true(bytes > 0);
    tc__scratch scratch = {aligned_alloc(64, (bytes + 63) / 64 * 64), bytes, 0};
    assert_non_null(scratch.base);
    tc__tensor y = dtu_tensor(TC_DTYPE_FLOAT32, like->rank, like->dims);
    vtu_poison(&y);
    tc__tensor *out[1] = {&y};
    tc__err err = {0};
    tc__kernel_ctx kc = {.node_name = "test", .op_type = "MatMul", .opset = 13, .attrs = &as, .n_in = 2, .in = c->in,
                         .n_out = 1, .out = out, .err = &err, .scratch = &scratch, .epi = &c->epi, .exec = pool};
    tc_status st = T->run(&kc);
    if (st != TC_STATUS_OK) fail_msg("%s failed (%d): %s", T->name, (int)st, err.msg);
    assert_int_equal(scratch.used, 0);
    free(scratch.base);
    return y;
}

/* t's values rounded to BF16 (to nearest even), so that the kernel's conversion is exact. */
static void round_bf16(tc__tensor *t) {
    float *p = t->data;
    for (int64_t i = 0; i < tc__tensor_numel(t); i++) p[i] = tc__bf16_to_f32(tc__f32_to_bf16(p[i]));
}

/* Checks one case against the reference: within tol_k * (k + 1) + tol_rel * |want| (inputs in [-2, 2]). */
static void check_case(const mcase *c, int64_t k, double tol_k, double tol_rel, const char *what) {
    if (!vtu_isa_ok(T)) return;
    tc__tensor want[1];
    dtu_run_ok(DTU_OP(MatMul), 13, c->attrs, c->n_attrs, 2, c->in, 1, want);
    tc__attrs as = {c->n_attrs, c->attrs};
    const tc__tensor *outs[1] = {&want[0]};
    tc__step_desc d = desc_of(c, &as, outs);
    if (!T->supports(&d)) fail_msg("%s: not supported", what);
    tc__tensor y1 = run_bf16(c, &want[0], NULL), y2 = run_bf16(c, &want[0], vtu_pool);
    if (memcmp(y1.data, y2.data, y1.nbytes) != 0) fail_msg("%s: 1 and 2 threads differ", what);
    const float *got = y1.data;
    for (int64_t i = 0; i < tc__tensor_numel(&y1); i++) {
        const double w = dtu_get(&want[0], i);
        if (!(fabs(got[i] - w) <= tol_k * (double)(k + 1) + tol_rel * fabs(w)))
            fail_msg("%s: element %lld: got %.9g, want %.9g", what, (long long)i, (double)got[i], w);
    }
    tc__tensor_free(&y1);
    tc__tensor_free(&y2);
    tc__tensor_free(&want[0]);
}

static const tc__attr kBf16 = {.name = TC__ATTR_BF16, .kind = TC__ATTR_INT, .i = 1};

/* Views, alpha and shapes: each case on BF16-valued operands (tight) and on FP32 ones (BF16 rounding). */
static void test_matmul_views(void **state) {
    (void)state;
    dtu_rng r = {0xbf16u};
    static const struct {
        int ra, rb, ry;
        int64_t a[4], b[4];
        int64_t pa[4], pb[4], py[4]; /* pa[0] < 0: no view */
        float alpha;                 /* 0: none */
    } kCases[] = {
        {4, 4, 4, {1, 128, 12, 64}, {1, 128, 12, 64}, {0, 2, 1, 3}, {0, 2, 3, 1}, {-1}, 0.125f},  /* BERT's Q.K^T */
        {4, 4, 4, {1, 12, 128, 128}, {1, 128, 12, 64}, {-1}, {0, 2, 1, 3}, {0, 2, 1, 3}, 0.0f},   /* BERT's P.V */
        {4, 4, 4, {1, 9, 3, 8}, {1, 11, 3, 8}, {0, 2, 1, 3}, {0, 2, 3, 1}, {-1}, 0.125f},
        {4, 4, 4, {1, 3, 9, 11}, {1, 11, 3, 8}, {-1}, {0, 2, 1, 3}, {0, 2, 1, 3}, 0.0f},
        {3, 2, 3, {5, 17, 2}, {7, 2}, {1, 0, 2}, {1, 0}, {1, 0, 2}, -1.5f},      /* both operands transposed, K 2 */
        {3, 3, 3, {13, 2, 6}, {1, 6, 5}, {1, 0, 2}, {-1}, {-1}, 0.0f},           /* B broadcast over the batch */
        {2, 2, 2, {6, 7}, {6, 19}, {1, 0}, {-1}, {-1}, 2.0f},                    /* A column-strided: gathers */
        {2, 2, 2, {41, 7}, {41, 19}, {1, 0}, {-1}, {-1}, 0.0f},                  /* the same past 32 values of K */
        {3, 3, 3, {2, 33, 67}, {67, 2, 29}, {-1}, {1, 0, 2}, {-1}, 0.0f},        /* K 67: odd, past 32 pairs */
        {3, 3, 3, {3, 5, 97}, {3, 37, 97}, {-1}, {0, 2, 1}, {-1}, 0.5f},         /* K^T, K 97, N 37 */
        {2, 2, 2, {1, 1}, {1, 1}, {-1}, {-1}, {-1}, 0.0f},                       /* 1 x 1 x 1 */
        {2, 2, 2, {7, 1}, {1, 131}, {-1}, {-1}, {-1}, 0.0f},                     /* K 1, N 131 */
        {2, 2, 2, {1, 64}, {64, 1}, {-1}, {-1}, {-1}, 0.0f},                     /* M 1, N 1 */
        {2, 2, 2, {61, 2}, {2, 65}, {-1}, {-1}, {-1}, 0.0f},                     /* K 2: one pair */
    };
    for (size_t i = 0; i < sizeof kCases / sizeof kCases[0]; i++) {
        for (int rounded = 1; rounded >= 0; rounded--) {
            tc__attr attrs[5];
            int na = 0;
            attrs[na++] = kBf16;
            if (kCases[i].pa[0] >= 0) attrs[na++] = dtu_attr_ints(TC__ATTR_MM_A_PERM, kCases[i].pa, (size_t)kCases[i].ra);
            if (kCases[i].pb[0] >= 0) attrs[na++] = dtu_attr_ints(TC__ATTR_MM_B_PERM, kCases[i].pb, (size_t)kCases[i].rb);
            if (kCases[i].py[0] >= 0) attrs[na++] = dtu_attr_ints(TC__ATTR_MM_Y_PERM, kCases[i].py, (size_t)kCases[i].ry);
            if (kCases[i].alpha != 0.0f) attrs[na++] = dtu_attr_float(TC__ATTR_MM_ALPHA, kCases[i].alpha);
            tc__tensor a = dtu_random(&r, TC_DTYPE_FLOAT32, kCases[i].ra, kCases[i].a);
            tc__tensor b = dtu_random(&r, TC_DTYPE_FLOAT32, kCases[i].rb, kCases[i].b);
            if (rounded) round_bf16(&a), round_bf16(&b);
            const int64_t k = kCases[i].pa[0] >= 0 ? kCases[i].a[kCases[i].pa[kCases[i].ra - 1]]
                                                   : kCases[i].a[kCases[i].ra - 1];
            mcase c = {attrs, na, {&a, &b}, {false, false}, tc__epilogue_none(), NULL};
            char what[96];
            snprintf(what, sizeof what, "case %zu (%s operands)", i, rounded ? "bf16" : "fp32");
            /* |a|, |b| <= 2, |alpha| <= 2: FP32 sums of k products of at most 8 (pairs summed in another order);
             * unrounded, each product is off by up to 2^-8 of itself (2^-9 per operand) */
            if (rounded) check_case(&c, k, 8.0 * 4e-7, 1e-6, what);
            else check_case(&c, k, 8.0 * 4e-3, 1e-6, what);
            tc__tensor_free(&a);
            tc__tensor_free(&b);
        }
    }
}

/* B read with neither stride 1 (the general, gathering pack): [k, n, 2] seen as [2, k, n]. */
static void test_matmul_strided_b(void **state) {
    (void)state;
    dtu_rng r = {0x5b2u};
    const int64_t ad[3] = {2, 13, 21}, bd[3] = {21, 18, 2}, pb[3] = {2, 0, 1};
    tc__tensor a = dtu_random(&r, TC_DTYPE_FLOAT32, 3, ad), b = dtu_random(&r, TC_DTYPE_FLOAT32, 3, bd);
    round_bf16(&a);
    round_bf16(&b);
    tc__attr attrs[2] = {kBf16, dtu_attr_ints(TC__ATTR_MM_B_PERM, pb, 3)};
    mcase c = {attrs, 2, {&a, &b}, {false, false}, tc__epilogue_none(), NULL};
    check_case(&c, 21, 8.0 * 4e-7, 1e-6, "B strided both ways");
    tc__tensor_free(&a);
    tc__tensor_free(&b);
}

/* A pool of more threads than the scratch was sized for (the CPU count): fewer slots, the same bits. */
static void test_more_threads_than_scratch(void **state) {
    (void)state;
    if (!vtu_isa_ok(T)) return;
    dtu_rng r = {0x3e4u};
    const int64_t ad[3] = {12, 50, 64}, bd[3] = {12, 64, 40};
    tc__tensor a = dtu_random(&r, TC_DTYPE_FLOAT32, 3, ad), b = dtu_random(&r, TC_DTYPE_FLOAT32, 3, bd);
    mcase c = {&kBf16, 1, {&a, &b}, {false, false}, tc__epilogue_none(), NULL};
    tc__tensor want[1];
    dtu_run_ok(DTU_OP(MatMul), 13, &kBf16, 1, 2, c.in, 1, want);
    tc__pool_t wide = tc__pool_create(tc__cpu_get()->logical_cpus * 2 + 1);
    assert_non_null(wide);
    tc__tensor y1 = run_bf16(&c, &want[0], NULL), y2 = run_bf16(&c, &want[0], wide);
    assert_memory_equal(y1.data, y2.data, y1.nbytes);
    tc__pool_destroy(wide);
    tc__tensor_free(&y1);
    tc__tensor_free(&y2);
    tc__tensor_free(&want[0]);
    tc__tensor_free(&a);
    tc__tensor_free(&b);
}

/* supports(): a constant B (the hconv tactics pack it), no tc.bf16 mark, a fused bias, float64, a 1-D operand. */
static void test_rejects(void **state) {
    (void)state;
    dtu_rng r = {0x7e1u};
    int64_t ad[2] = {4, 8}, bd[2] = {8, 5}, yd[2] = {4, 5}, five = 5, eight = 8, y1d[1] = {4};
    tc__tensor a = dtu_random(&r, TC_DTYPE_FLOAT32, 2, ad), b = dtu_random(&r, TC_DTYPE_FLOAT32, 2, bd);
    tc__tensor y = dtu_tensor(TC_DTYPE_FLOAT32, 2, yd), bias = dtu_random(&r, TC_DTYPE_FLOAT32, 1, &five);
    tc__tensor a64 = dtu_random(&r, TC_DTYPE_FLOAT64, 2, ad), b1 = dtu_random(&r, TC_DTYPE_FLOAT32, 1, &eight);
    tc__tensor y1 = dtu_tensor(TC_DTYPE_FLOAT32, 1, y1d);
    mcase c = {&kBf16, 1, {&a, &b}, {false, false}, tc__epilogue_none(), NULL};
    tc__attrs as = {1, &kBf16};
    const tc__tensor *outs[1] = {&y}, *outs1[1] = {&y1};
    tc__step_desc d = desc_of(&c, &as, outs);
    assert_true(T->supports(&d));
    c.in_const[1] = true;
    d = desc_of(&c, &as, outs);
    assert_false(T->supports(&d));
    c.in_const[1] = false;
    tc__attrs none = {0, NULL};
    d = desc_of(&c, &none, outs);
    assert_false(T->supports(&d));
    c.epi.bias_input = 2;
    c.bias = &bias;
    d = desc_of(&c, &as, outs);
    assert_false(T->supports(&d));
    c.epi = tc__epilogue_none();
    c.bias = NULL;
    c.in[0] = &a64;
    d = desc_of(&c, &as, outs);
    assert_false(T->supports(&d));
    c.in[0] = &a;
    c.in[1] = &b1;
    d = desc_of(&c, &as, outs1);
    assert_false(T->supports(&d));
    tc__tensor_free(&a);
    tc__tensor_free(&b);
    tc__tensor_free(&y);
    tc__tensor_free(&bias);
    tc__tensor_free(&a64);
    tc__tensor_free(&b1);
    tc__tensor_free(&y1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_views),
        cmocka_unit_test(test_matmul_strided_b),
        cmocka_unit_test(test_more_threads_than_scratch),
        cmocka_unit_test(test_rejects),
    };
    return cmocka_run_group_tests(tests, vtu_setup, vtu_teardown);
}
