/*
 * test_cpu_gemm_tactics.c - the GEMM-based tactics (MatMul, Gemm, Conv as GEMM; every ISA this CPU
 * has and, for AVX-512 MatMul and Gemm, both microkernel tiles, 14x32 and 8x48; called directly)
 * against the reference kernels plus tc__epilogue_apply: batching and broadcasting, 1-D
 * operands, transposes, alpha/beta and every C shape, MatMul views (permuted operands and output, alpha), convolutions with pads, strides, dilations,
 * groups and auto_pad, fused biases, residuals and activations; packing is a permutation of the
 * same size; scratch exactly as announced; 1 and 2 threads give identical bits; supports() rejects
 * what the tactics cannot do; the registry's order.
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

#include "backends/backend.h"
#include "backends/cpu/gemm.h"
#include "core/cpu.h"
#include "core/fused_attr.h"
#include "dense_test_util.h"
#include "backends/cpu/tactics.h"

#define FAMILY_MAX 4
/* Per op family, its tactics (AVX-512 14x32 and, where there is one, 8x48; AVX2; scalar), NULL-ended. */
static const tc__tactic *const kMatMul[FAMILY_MAX + 1] = {
    &tc__tactic_matmul_f32_avx512, &tc__tactic_matmul_f32_avx512_8x48, &tc__tactic_matmul_f32_avx2,
    &tc__tactic_matmul_f32_scalar};
static const tc__tactic *const kMatMulDyn[FAMILY_MAX + 1] = {
    &tc__tactic_matmul_dyn_f32_avx512, &tc__tactic_matmul_dyn_f32_avx512_8x48, &tc__tactic_matmul_dyn_f32_avx2,
    &tc__tactic_matmul_dyn_f32_scalar};
static const tc__tactic *const kGemm[FAMILY_MAX + 1] = {&tc__tactic_gemm_f32_avx512, &tc__tactic_gemm_f32_avx512_8x48,
                                                        &tc__tactic_gemm_f32_avx2, &tc__tactic_gemm_f32_scalar};
static const tc__tactic *const kGemmDyn[FAMILY_MAX + 1] = {
    &tc__tactic_gemm_dyn_f32_avx512, &tc__tactic_gemm_dyn_f32_avx2, &tc__tactic_gemm_dyn_f32_scalar};
static const tc__tactic *const kConv1x1[FAMILY_MAX + 1] = {
    &tc__tactic_conv1x1_f32_avx512, &tc__tactic_conv1x1_f32_avx2, &tc__tactic_conv1x1_f32_scalar};
static const tc__tactic *const kConvIm2col[FAMILY_MAX + 1] = {
    &tc__tactic_conv_im2col_f32_avx512, &tc__tactic_conv_im2col_f32_avx2, &tc__tactic_conv_im2col_f32_scalar};

static bool cpu_has(const tc__tactic *t) {
    tc__cpu cpu;
    tc__cpu_detect(NULL, &cpu);
    return (t->caps & ~cpu.isa) == 0;
}

typedef struct tcase {
    const char *op;
    const tc__attr *attrs;
    int n_attrs;
    int n_in;
    const tc__tensor *in[3];
    bool in_const[3];
    tc__epilogue epi;
    const tc__tensor *bias, *residual;
    size_t k; /* reduction length, for the tolerance */
} tcase;

static dtu_op op_of(const char *name) {
    if (strcmp(name, "MatMul") == 0) return DTU_OP(MatMul);
    if (strcmp(name, "Gemm") == 0) return DTU_OP(Gemm);
    return DTU_OP(Conv);
}

static int cmp_float(const void *a, const void *b) {
    const float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

/* True when dst holds the same multiset of values as src (n floats). */
static bool is_permutation(const float *src, const float *dst, size_t n) {
    float *a = malloc((n ? n : 1) * sizeof(float)), *b = malloc((n ? n : 1) * sizeof(float));
    assert_non_null(a);
    assert_non_null(b);
    memcpy(a, src, n * sizeof(float));
    memcpy(b, dst, n * sizeof(float));
    qsort(a, n, sizeof(float), cmp_float);
    qsort(b, n, sizeof(float), cmp_float);
    bool same = memcmp(a, b, n * sizeof(float)) == 0;
    free(a);
    free(b);
    return same;
}

/* Runs tactic t on case c (with pool, or none) into y (shape preset); returns the scratch it used. */
static void run_tactic(const tc__tactic *t, const tcase *c, const tc__step_desc *d, const tc__tensor *const *in_run,
                       tc__tensor *y, tc__pool_t pool) {
    const size_t bytes = t->scratch_bytes ? t->scratch_bytes(d) : 0;
    tc__scratch scratch = {malloc(bytes ? bytes : 1), bytes, 0};
    assert_non_null(scratch.base);
    float *yd = y->data;
    for (int64_t i = 0; i < tc__tensor_numel(y); i++)
        yd[i] = NAN; /* every element must be written */
    tc__attrs attrs = {c->n_attrs, c->attrs};
    tc__err err = {0};
    tc__tensor *outs[1] = {y};
    tc__kernel_ctx kc = {.node_name = "test",
                         .op_type = c->op,
                         .opset = 13,
                         .attrs = &attrs,
                         .n_in = c->n_in,
                         .in = in_run,
                         .n_out = 1,
                         .out = outs,
                         .err = &err,
                         .scratch = &scratch,
                         .epi = &c->epi,
                         .bias = c->bias,
                         .residual = c->residual,
                         .exec = pool};
    tc_status st = t->run(&kc);
    if (st != TC_STATUS_OK) fail_msg("%s failed (%d): %s", t->name, (int)st, err.msg);
    if (scratch.used != 0) fail_msg("%s left %zu bytes of scratch in use", t->name, scratch.used);
    free(scratch.base);
}

/* Checks tactic t on case c against the reference, with and without the pool. */
static void check_tactic(const tc__tactic *t, const tcase *c, tc__pool_t pool) {
    if (!cpu_has(t)) return;
    tc__attrs attrs = {c->n_attrs, c->attrs};
    tc__tensor want[1];
    dtu_run_ok(op_of(c->op), 13, c->attrs, c->n_attrs, c->n_in, c->in, 1, want);
    tc__err err = {0};
    if (tc__epilogue_apply(&c->epi, &want[0], c->bias, c->residual, &err) != TC_STATUS_OK)
        fail_msg("reference epilogue: %s", err.msg);

    const tc__tensor *outs[1] = {&want[0]};
    tc__step_desc d = {.op_type = c->op,
                       .opset = 13,
                       .attrs = &attrs,
                       .n_in = c->n_in,
                       .in = c->in,
                       .in_const = c->in_const,
                       .n_out = 1,
                       .out = outs,
                       .epi = &c->epi,
                       .bias = c->bias,
                       .residual = c->residual};
    if (!t->supports(&d)) fail_msg("%s does not support a case it should", t->name);

    /* Pack constant inputs as the engine does; the result must be a permutation. */
    tc__tensor packed[3];
    const tc__tensor *in_run[3];
    for (int i = 0; i < c->n_in; i++) {
        in_run[i] = c->in[i];
        if (c->in[i] && c->in_const[i] && t->packs_input && t->packs_input(&d, i)) {
            packed[i] = dtu_tensor(c->in[i]->dtype, c->in[i]->rank, c->in[i]->dims);
            if (t->pack(&d, i, c->in[i]->data, packed[i].data, &err) != TC_STATUS_OK)
                fail_msg("%s pack: %s", t->name, err.msg);
            assert_true(is_permutation(c->in[i]->data, packed[i].data, (size_t)tc__tensor_numel(c->in[i])));
            in_run[i] = &packed[i];
        }
    }
    tc__tensor y1 = dtu_tensor(TC_DTYPE_FLOAT32, want[0].rank, want[0].dims);
    tc__tensor y2 = dtu_tensor(TC_DTYPE_FLOAT32, want[0].rank, want[0].dims);
    run_tactic(t, c, &d, in_run, &y1, NULL);
    run_tactic(t, c, &d, in_run, &y2, pool);
    if (memcmp(y1.data, y2.data, y1.nbytes) != 0) fail_msg("%s: 1 and 2 threads differ", t->name);

    const double tol_abs = 2e-6 * (double)(c->k + 1) + 1e-6;
    const float *got = y1.data;
    for (int64_t i = 0; i < tc__tensor_numel(&y1); i++) {
        const double w = dtu_get(&want[0], i);
        if (!(fabs(got[i] - w) <= tol_abs + 2e-5 * fabs(w)))
            fail_msg("%s: element %lld: got %.9g, want %.9g", t->name, (long long)i, (double)got[i], w);
    }
    for (int i = 0; i < c->n_in; i++)
        if (in_run[i] != c->in[i]) tc__tensor_free(&packed[i]);
    tc__tensor_free(&y1);
    tc__tensor_free(&y2);
    tc__tensor_free(&want[0]);
}

static void check_family(const tc__tactic *const *family, const tcase *c, tc__pool_t pool) {
    for (int i = 0; family[i] != NULL; i++)
        check_tactic(family[i], c, pool);
}

static bool supported_by(const tc__tactic *t, const tcase *c, const tc__tensor *y) {
    tc__attrs attrs = {c->n_attrs, c->attrs};
    const tc__tensor *outs[1] = {y};
    tc__step_desc d = {.op_type = c->op,
                       .opset = 13,
                       .attrs = &attrs,
                       .n_in = c->n_in,
                       .in = c->in,
                       .in_const = c->in_const,
                       .n_out = 1,
                       .out = outs,
                       .epi = &c->epi,
                       .bias = c->bias,
                       .residual = c->residual};
    return t->supports(&d);
}

/* An epilogue with the given activation (typical parameters), bias and residual as input slots. */
static tc__epilogue make_epi(tc__act act, bool bias, bool residual, int first_slot) {
    tc__epilogue e = tc__epilogue_none();
    e.act = (uint8_t)act;
    int slot = first_slot;
    if (bias) e.bias_input = (int8_t)slot++;
    if (residual) e.residual_input = (int8_t)slot;
    if (act == TC__ACT_CLIP) e.alpha = -0.5f, e.beta = 1.5f;
    if (act == TC__ACT_HARDSIGMOID) e.alpha = 0.2f, e.beta = 0.5f;
    if (act == TC__ACT_LEAKY_RELU) e.alpha = 0.1f;
    return e;
}

static tc__tensor rnd(dtu_rng *r, int32_t rank, const int64_t *dims) {
    return dtu_random(r, TC_DTYPE_FLOAT32, rank, dims);
}

/* ---- MatMul ------------------------------------------------------------------------------ */

static const int64_t kSizes[] = {1, 2, 3, 7, 13, 16, 17, 31, 33, 48, 64, 97, 129};
#define N_SIZES (sizeof kSizes / sizeof kSizes[0])

static void test_matmul_2d(void **state) {
    tc__pool_t pool = *state;
    dtu_rng r = {0x3a73u};
    for (size_t role = 0; role < 3; role++)
        for (size_t si = 0; si < N_SIZES; si++) {
            int64_t d[3] = {kSizes[dtu_next(&r) % N_SIZES], kSizes[dtu_next(&r) % N_SIZES],
                            kSizes[dtu_next(&r) % N_SIZES]};
            d[role] = kSizes[si];
            const int64_t m = d[0], n = d[1], k = d[2];
            int64_t ad[2] = {m, k}, bd[2] = {k, n};
            tc__tensor a = rnd(&r, 2, ad), b = rnd(&r, 2, bd), bias = rnd(&r, 1, &n);
            int64_t yd[2] = {m, n};
            tc__tensor res = rnd(&r, 2, yd);
            const tc__act act = (tc__act)(dtu_next(&r) % TC__ACT_FAKE_QUANT);
            const bool use_bias = dtu_next(&r) & 1, use_res = dtu_next(&r) & 1;
            tcase c = {.op = "MatMul",
                       .n_in = 2,
                       .in = {&a, &b},
                       .in_const = {false, true},
                       .epi = make_epi(act, use_bias, use_res, 2),
                       .bias = use_bias ? &bias : NULL,
                       .residual = use_res ? &res : NULL,
                       .k = (size_t)k};
            check_family(kMatMul, &c, pool);
            c.in_const[1] = false;
            check_family(kMatMulDyn, &c, pool);
            tc__tensor_free(&a);
            tc__tensor_free(&b);
            tc__tensor_free(&bias);
            tc__tensor_free(&res);
        }
}

static void test_matmul_large_k(void **state) {
    tc__pool_t pool = *state;
    dtu_rng r = {0x1a26eu};
    /* A prime N and K; then BERT's FFN down projection (128 tokens, K = 3072) on fewer columns,
     * which the 8x48 tile covers exactly, with its bias, residual and a GELU. */
    static const struct {
        int ra;
        int64_t a[3], n;
        bool residual;
    } kCases[] = {{2, {33, 2049}, 97, false}, {3, {1, 128, 3072}, 96, true}};
    for (size_t i = 0; i < sizeof kCases / sizeof kCases[0]; i++) {
        const int ra = kCases[i].ra;
        int64_t bd[2] = {kCases[i].a[ra - 1], kCases[i].n}, yd[3];
        memcpy(yd, kCases[i].a, sizeof yd);
        yd[ra - 1] = kCases[i].n;
        tc__tensor a = rnd(&r, ra, kCases[i].a), b = rnd(&r, 2, bd), bias = rnd(&r, 1, &kCases[i].n),
                   res = rnd(&r, ra, yd);
        tcase c = {.op = "MatMul",
                   .n_in = 2,
                   .in = {&a, &b},
                   .in_const = {false, true},
                   .epi = make_epi(TC__ACT_GELU_ERF, true, kCases[i].residual, 2),
                   .bias = &bias,
                   .residual = kCases[i].residual ? &res : NULL,
                   .k = (size_t)bd[0]};
        check_family(kMatMul, &c, pool);
        c.in_const[1] = false;
        check_family(kMatMulDyn, &c, pool);
        tc__tensor_free(&a);
        tc__tensor_free(&b);
        tc__tensor_free(&bias);
        tc__tensor_free(&res);
    }
}

/* MatMul(a, b) with attributes attrs (a constant b when b_const) through the MatMul tactics against the reference:
 * plain, then with a bias, a residual (shaped like the reference's output) and activation act; k is the reduction
 * length (tolerance). Frees a and b. */
static void check_matmul(dtu_rng *r, tc__tensor *a, tc__tensor *b, const tc__attr *attrs, int na, bool b_const,
                         int64_t k, tc__act act, tc__pool_t pool) {
    tc__tensor y[1];
    const tc__tensor *in[2] = {a, b};
    dtu_run_ok(DTU_OP(MatMul), 13, attrs, na, 2, in, 1, y);
    int64_t last = y[0].rank > 0 ? y[0].dims[y[0].rank - 1] : 1;
    tc__tensor bias = rnd(r, 1, &last), res = rnd(r, y[0].rank, y[0].dims);
    for (int variant = 0; variant < 2; variant++) {
        tcase c = {.op = "MatMul",
                   .attrs = attrs,
                   .n_attrs = na,
                   .n_in = 2,
                   .in = {a, b},
                   .in_const = {false, b_const},
                   .epi = make_epi(variant ? act : TC__ACT_NONE, variant == 1, variant == 1, 2),
                   .bias = variant ? &bias : NULL,
                   .residual = variant ? &res : NULL,
                   .k = (size_t)k};
        if (b_const) {
            check_family(kMatMul, &c, pool);
            /* a constant B is its packed twin's: the run-time-B tactics refuse it, then run it as a run-time B */
            for (int t = 0; kMatMulDyn[t] != NULL; t++)
                if (supported_by(kMatMulDyn[t], &c, &y[0]))
                    fail_msg("%s takes a constant B that %s packs", kMatMulDyn[t]->name, kMatMul[t]->name);
            c.in_const[1] = false;
        }
        check_family(kMatMulDyn, &c, pool);
    }
    tc__tensor_free(&y[0]);
    tc__tensor_free(&bias);
    tc__tensor_free(&res);
    tc__tensor_free(a);
    tc__tensor_free(b);
}

/* Batch dims: folded into M, broadcast on either side, 1-D operands, batched runtime B (Q.K^T). */
static void test_matmul_batched(void **state) {
    tc__pool_t pool = *state;
    dtu_rng r = {0xba7c4u};
    static const struct {
        int ra, rb;
        int64_t a[4], b[4];
        bool b_const;
    } kCases[] = {
        {4, 2, {2, 3, 13, 40}, {40, 33}, true},        /* folds into M */
        {4, 3, {2, 1, 7, 20}, {3, 20, 17}, true},      /* broadcast both ways, B packed per matrix */
        {1, 2, {65}, {65, 31}, true},                  /* 1-D A */
        {3, 1, {3, 5, 65}, {65}, true},                /* 1-D B: output [3, 5] */
        {1, 1, {65}, {65}, true},                      /* scalar output */
        {4, 4, {2, 4, 16, 64}, {2, 4, 64, 33}, false}, /* attention scores */
        {4, 4, {1, 4, 9, 32}, {2, 1, 32, 9}, false},
        {3, 2, {3, 10, 12}, {12, 5}, false},
    };
    for (size_t i = 0; i < sizeof kCases / sizeof kCases[0]; i++) {
        tc__tensor a = rnd(&r, kCases[i].ra, kCases[i].a), b = rnd(&r, kCases[i].rb, kCases[i].b);
        check_matmul(&r, &a, &b, NULL, 0, kCases[i].b_const, kCases[i].a[kCases[i].ra - 1], TC__ACT_SILU, pool);
    }
}

static void test_matmul_rejects(void **state) {
    (void)state;
    dtu_rng r = {0x7e1u};
    int64_t ad[2] = {4, 8}, bd[2] = {8, 5}, yd[2] = {4, 5}, four = 4;
    tc__tensor a = rnd(&r, 2, ad), b = rnd(&r, 2, bd), y = dtu_tensor(TC_DTYPE_FLOAT32, 2, yd);
    tc__tensor bad_bias = rnd(&r, 1, &four), a64 = dtu_random(&r, TC_DTYPE_FLOAT64, 2, ad);
    tcase c = {.op = "MatMul", .n_in = 2, .in = {&a, &b}, .in_const = {false, false}, .epi = tc__epilogue_none()};
    assert_false(supported_by(&tc__tactic_matmul_f32_scalar, &c, &y)); /* B not constant */
    assert_true(supported_by(&tc__tactic_matmul_dyn_f32_scalar, &c, &y));
    c.epi = make_epi(TC__ACT_NONE, true, false, 2);
    c.bias = &bad_bias; /* over M, not over the last dim */
    assert_false(supported_by(&tc__tactic_matmul_dyn_f32_scalar, &c, &y));
    c.epi = tc__epilogue_none();
    c.bias = NULL;
    c.in[0] = &a64;
    assert_false(supported_by(&tc__tactic_matmul_dyn_f32_scalar, &c, &y));
    tc__tensor_free(&a);
    tc__tensor_free(&b);
    tc__tensor_free(&y);
    tc__tensor_free(&bad_bias);
    tc__tensor_free(&a64);
}

/* ---- MatMul views (fuse_matmul_views) ---------------------------------------------------- */

/* Operands read through permutations, the output written through one, the product scaled (fused_attr.h):
 * attention's Q.K^T and P.V shapes, odd and prime sizes, a broadcast batch, A read column-strided, and
 * every epilogue term with an output view (the residual has Y's shape, read where C is written). */
static void test_matmul_views(void **state) {
    tc__pool_t pool = *state;
    dtu_rng r = {0x71e3u};
    static const struct {
        int ra, rb, ry;
        int64_t a[4], b[4];
        int64_t pa[4], pb[4], py[4]; /* pa[0] < 0: no view */
        float alpha;                 /* 0: none */
    } kCases[] = {
        {4, 4, 4, {1, 9, 3, 8}, {1, 11, 3, 8}, {0, 2, 1, 3}, {0, 2, 3, 1}, {-1}, 0.125f}, /* Q.K^T, scaled */
        {4, 4, 4, {1, 3, 9, 11}, {1, 11, 3, 8}, {-1}, {0, 2, 1, 3}, {0, 2, 1, 3}, 0.0f}, /* P.V into [1,9,3,8] */
        {3, 2, 3, {5, 17, 2}, {7, 2}, {1, 0, 2}, {1, 0}, {1, 0, 2}, -1.5f},
        {3, 3, 3, {13, 2, 6}, {1, 6, 5}, {1, 0, 2}, {-1}, {-1}, 0.0f}, /* B broadcast over A's view batch */
        {2, 2, 2, {6, 7}, {6, 19}, {1, 0}, {-1}, {-1}, 2.0f},          /* A(i, p) column-strided */
        {4, 4, 4, {2, 31, 1, 16}, {2, 1, 31, 16}, {0, 2, 1, 3}, {0, 1, 3, 2}, {0, 2, 1, 3}, 0.5f},
    };
    for (size_t i = 0; i < sizeof kCases / sizeof kCases[0]; i++) {
        tc__attr attrs[4];
        int na = 0;
        if (kCases[i].pa[0] >= 0) attrs[na++] = dtu_attr_ints(TC__ATTR_MM_A_PERM, kCases[i].pa, (size_t)kCases[i].ra);
        if (kCases[i].pb[0] >= 0) attrs[na++] = dtu_attr_ints(TC__ATTR_MM_B_PERM, kCases[i].pb, (size_t)kCases[i].rb);
        if (kCases[i].py[0] >= 0) attrs[na++] = dtu_attr_ints(TC__ATTR_MM_Y_PERM, kCases[i].py, (size_t)kCases[i].ry);
        if (kCases[i].alpha != 0.0f) attrs[na++] = dtu_attr_float(TC__ATTR_MM_ALPHA, kCases[i].alpha);
        tc__tensor a = rnd(&r, kCases[i].ra, kCases[i].a), b = rnd(&r, kCases[i].rb, kCases[i].b);
        const int64_t k = kCases[i].pa[0] >= 0 ? kCases[i].a[kCases[i].pa[kCases[i].ra - 1]] : kCases[i].a[kCases[i].ra - 1];
        check_matmul(&r, &a, &b, attrs, na, false, k, TC__ACT_GELU_ERF, pool);
    }
}

/* Views the fast tactics cannot take: an output view that moves the last dim (the microkernels store
 * contiguous columns), a perm that is not one, a view of a constant (build-time packed) B. The reference
 * still computes the first. */
static void test_matmul_views_rejects(void **state) {
    (void)state;
    dtu_rng r = {0x71e4u};
    int64_t ad[3] = {2, 4, 8}, bd[3] = {2, 8, 5}, yd[3] = {2, 5, 4}, ydn[3] = {2, 4, 5};
    tc__tensor a = rnd(&r, 3, ad), b = rnd(&r, 3, bd), y = dtu_tensor(TC_DTYPE_FLOAT32, 3, yd);
    tc__tensor yn = dtu_tensor(TC_DTYPE_FLOAT32, 3, ydn);
    const int64_t moves_last[3] = {0, 2, 1}, dup[3] = {0, 0, 2}, swap_b[3] = {0, 1, 2};
    tc__attr at = dtu_attr_ints(TC__ATTR_MM_Y_PERM, moves_last, 3);
    tcase c = {.op = "MatMul", .attrs = &at, .n_attrs = 1, .n_in = 2, .in = {&a, &b}, .in_const = {false, false},
               .epi = tc__epilogue_none()};
    for (int i = 0; kMatMulDyn[i] != NULL; i++) assert_false(supported_by(kMatMulDyn[i], &c, &y));
    tc__tensor want[1];
    const tc__tensor *in[2] = {&a, &b};
    dtu_run_ok(DTU_OP(MatMul), 13, &at, 1, 2, in, 1, want);
    assert_int_equal(want[0].dims[1], 5);
    tc__tensor_free(&want[0]);
    at = dtu_attr_ints(TC__ATTR_MM_A_PERM, dup, 3);
    for (int i = 0; kMatMulDyn[i] != NULL; i++) assert_false(supported_by(kMatMulDyn[i], &c, &yn));
    at = dtu_attr_ints(TC__ATTR_MM_B_PERM, swap_b, 3);
    c.in_const[1] = true;
    assert_true(supported_by(&tc__tactic_matmul_dyn_f32_scalar, &c, &yn));
    assert_false(supported_by(&tc__tactic_matmul_f32_scalar, &c, &yn));
    tc__tensor_free(&a);
    tc__tensor_free(&b);
    tc__tensor_free(&y);
    tc__tensor_free(&yn);
}

/* ---- Gemm -------------------------------------------------------------------------------- */

static void test_gemm(void **state) {
    tc__pool_t pool = *state;
    dtu_rng r = {0x6e33u};
    for (int rep = 0; rep < 40; rep++) {
        const int64_t m = kSizes[dtu_next(&r) % N_SIZES], n = kSizes[dtu_next(&r) % N_SIZES],
                      k = kSizes[dtu_next(&r) % N_SIZES];
        const bool ta = dtu_next(&r) & 1, tb = dtu_next(&r) & 1;
        int64_t ad[2] = {ta ? k : m, ta ? m : k}, bd[2] = {tb ? n : k, tb ? k : n};
        tc__tensor a = rnd(&r, 2, ad), b = rnd(&r, 2, bd);
        /* C: none, scalar, [1], [N], [1, N], [M, 1], [M, N] */
        const int ck = rep % 7;
        int64_t cdims[2] = {1, 1};
        int crank = 0;
        switch (ck) {
        case 2: crank = 1; break;
        case 3: crank = 1, cdims[0] = n; break;
        case 4: crank = 2, cdims[1] = n; break;
        case 5: crank = 2, cdims[0] = m; break;
        case 6: crank = 2, cdims[0] = m, cdims[1] = n; break;
        default: break;
        }
        tc__tensor cm = rnd(&r, crank, cdims), bias = rnd(&r, 1, &n);
        int64_t yd[2] = {m, n};
        tc__tensor res = rnd(&r, 2, yd);
        tc__attr attrs[4] = {dtu_attr_int("transA", ta), dtu_attr_int("transB", tb),
                             dtu_attr_float("alpha", (rep & 8) ? 0.5f : 1.0f),
                             dtu_attr_float("beta", (rep & 16) ? -1.5f : ((rep & 32) ? 0.0f : 1.0f))};
        const bool use_bias = (rep % 3) == 0, use_res = ck != 6 && (rep % 4) == 1;
        tcase c = {.op = "Gemm",
                   .attrs = attrs,
                   .n_attrs = 4,
                   .n_in = ck ? 3 : 2,
                   .in = {&a, &b, ck ? &cm : NULL},
                   .in_const = {false, true, true},
                   .epi = make_epi((tc__act)(rep % TC__ACT_FAKE_QUANT), use_bias, use_res, 3),
                   .bias = use_bias ? &bias : NULL,
                   .residual = use_res ? &res : NULL,
                   .k = (size_t)k};
        check_family(kGemm, &c, pool);
        for (int t = 0; kGemmDyn[t] != NULL; t++) /* a constant B is for the packed tactics (res: the output's shape) */
            if (supported_by(kGemmDyn[t], &c, &res)) fail_msg("%s takes a constant B", kGemmDyn[t]->name);
        c.in_const[1] = false;
        check_family(kGemmDyn, &c, pool);
        tc__tensor_free(&a);
        tc__tensor_free(&b);
        tc__tensor_free(&cm);
        tc__tensor_free(&bias);
        tc__tensor_free(&res);
    }
}

static void test_gemm_rejects(void **state) {
    (void)state;
    dtu_rng r = {0x9e3u};
    int64_t ad[2] = {4, 8}, bd[2] = {8, 5}, yd[2] = {4, 5};
    tc__tensor a = rnd(&r, 2, ad), b = rnd(&r, 2, bd), cm = rnd(&r, 2, yd), res = rnd(&r, 2, yd);
    tc__tensor y = dtu_tensor(TC_DTYPE_FLOAT32, 2, yd);
    tcase c = {.op = "Gemm",
               .n_in = 3,
               .in = {&a, &b, &cm},
               .in_const = {false, true, true},
               .epi = make_epi(TC__ACT_RELU, false, true, 3),
               .residual = &res};
    assert_false(supported_by(&tc__tactic_gemm_f32_scalar, &c, &y)); /* full C and a residual */
    c.n_in = 2;
    assert_true(supported_by(&tc__tactic_gemm_f32_scalar, &c, &y));
    c.in_const[1] = false;
    assert_false(supported_by(&tc__tactic_gemm_f32_scalar, &c, &y));
    tc__tensor_free(&a);
    tc__tensor_free(&b);
    tc__tensor_free(&cm);
    tc__tensor_free(&res);
    tc__tensor_free(&y);
}

/* ---- Conv -------------------------------------------------------------------------------- */

typedef struct conv_case {
    int nsp;
    int64_t n, cin, cout, group;
    int64_t in[3], kernel[3], stride[3], dil[3], pads[6];
    const char *auto_pad;
    bool bias;
} conv_case;

static void check_conv(const conv_case *cc, dtu_rng *r, tc__pool_t pool, bool expect_1x1) {
    int64_t xd[5] = {cc->n, cc->cin}, wd[5] = {cc->cout, cc->cin / cc->group};
    for (int d = 0; d < cc->nsp; d++) {
        xd[2 + d] = cc->in[d];
        wd[2 + d] = cc->kernel[d];
    }
    tc__tensor x = rnd(r, 2 + cc->nsp, xd), w = rnd(r, 2 + cc->nsp, wd), b = rnd(r, 1, &cc->cout);
    tc__attr attrs[6];
    int na = 0;
    attrs[na++] = dtu_attr_int("group", cc->group);
    attrs[na++] = dtu_attr_ints("strides", cc->stride, (size_t)cc->nsp);
    attrs[na++] = dtu_attr_ints("dilations", cc->dil, (size_t)cc->nsp);
    if (cc->auto_pad)
        attrs[na++] = dtu_attr_string("auto_pad", cc->auto_pad);
    else
        attrs[na++] = dtu_attr_ints("pads", cc->pads, 2 * (size_t)cc->nsp);
    tc__tensor y[1];
    const tc__tensor *in[3] = {&x, &w, cc->bias ? &b : NULL};
    dtu_run_ok(DTU_OP(Conv), 13, attrs, na, cc->bias ? 3 : 2, in, 1, y);
    tc__tensor res = rnd(r, y[0].rank, y[0].dims);
    size_t k = (size_t)(cc->cin / cc->group);
    for (int d = 0; d < cc->nsp; d++)
        k *= (size_t)cc->kernel[d];
    for (int variant = 0; variant < 3; variant++) {
        const tc__act act = variant == 0 ? TC__ACT_NONE : (variant == 1 ? TC__ACT_RELU : TC__ACT_HARDSWISH);
        tcase c = {.op = "Conv",
                   .attrs = attrs,
                   .n_attrs = na,
                   .n_in = cc->bias ? 3 : 2,
                   .in = {&x, &w, in[2]},
                   .in_const = {false, true, true},
                   .epi = make_epi(act, false, variant == 2, cc->bias ? 3 : 2),
                   .residual = variant == 2 ? &res : NULL,
                   .k = k};
        check_family(kConvIm2col, &c, pool);
        if (expect_1x1)
            check_family(kConv1x1, &c, pool);
        else
            for (int i = 0; kConv1x1[i] != NULL; i++)
                assert_false(supported_by(kConv1x1[i], &c, &y[0]));
    }
    tc__tensor_free(&y[0]);
    tc__tensor_free(&res);
    tc__tensor_free(&x);
    tc__tensor_free(&w);
    tc__tensor_free(&b);
}

static void test_conv_1x1(void **state) {
    dtu_rng r = {0xc011u};
    const conv_case cases[] = {
        {2, 2, 16, 24, 1, {7, 9}, {1, 1}, {1, 1}, {1, 1}, {0}, NULL, true},
        {2, 1, 33, 17, 1, {5, 5}, {1, 1}, {1, 1}, {1, 1}, {0}, NULL, false},
        {1, 3, 8, 29, 1, {40}, {1}, {1}, {1}, {0}, NULL, true},
        {2, 1, 64, 64, 1, {14, 14}, {1, 1}, {1, 1}, {1, 1}, {0}, NULL, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_conv(&cases[i], &r, *state, true);
}

static void test_conv_im2col(void **state) {
    dtu_rng r = {0x12c01u};
    const conv_case cases[] = {
        /* 3x3 pad 1 */
        {2, 2, 8, 16, 1, {9, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, true},
        /* stride 2, asymmetric pads */
        {2, 1, 5, 7, 1, {13, 10}, {3, 3}, {2, 2}, {1, 1}, {1, 0, 2, 1}, NULL, true},
        /* dilation 2, 5x3 kernel */
        {2, 1, 4, 9, 1, {12, 12}, {5, 3}, {1, 1}, {2, 2}, {2, 1, 2, 1}, NULL, false},
        /* groups */
        {2, 2, 8, 12, 2, {6, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, true},
        /* depthwise */
        {2, 1, 6, 6, 6, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, true},
        /* auto_pad SAME_UPPER with stride 2 */
        {2, 1, 3, 5, 1, {11, 9}, {3, 3}, {2, 2}, {1, 1}, {0}, "SAME_UPPER", true},
        /* auto_pad SAME_LOWER, VALID */
        {2, 1, 3, 4, 1, {8, 8}, {4, 2}, {1, 1}, {1, 1}, {0}, "SAME_LOWER", false},
        {2, 1, 3, 4, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {0}, "VALID", true},
        /* 1-D and 3-D */
        {1, 2, 4, 6, 1, {30}, {5}, {2}, {1}, {2, 2}, NULL, true},
        {3, 1, 3, 4, 1, {5, 6, 7}, {3, 3, 3}, {1, 2, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, NULL, true},
        /* 1x1 with stride 2 (ResNet downsample): not the 1x1 tactic */
        {2, 1, 16, 32, 1, {14, 14}, {1, 1}, {2, 2}, {1, 1}, {0, 0, 0, 0}, NULL, false},
        /* more kernel taps than the AVX-512 packer's mask table (9x9; 1-D 70) */
        {2, 1, 3, 5, 1, {12, 13}, {9, 9}, {1, 1}, {1, 1}, {4, 4, 4, 4}, NULL, true},
        {1, 1, 2, 3, 1, {80}, {70}, {1}, {1}, {3, 2}, NULL, true},
        /* larger K: 64 channels 3x3 */
        {2, 1, 64, 40, 1, {10, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_conv(&cases[i], &r, *state, false);
}

static void test_conv_rejects(void **state) {
    (void)state;
    dtu_rng r = {0xbadc0u};
    int64_t xd[4] = {1, 4, 6, 6}, wd[4] = {8, 4, 1, 1}, yd[4] = {1, 8, 6, 6}, six = 6;
    tc__tensor x = rnd(&r, 4, xd), w = rnd(&r, 4, wd), y = dtu_tensor(TC_DTYPE_FLOAT32, 4, yd), wb = rnd(&r, 1, &six);
    tcase c = {.op = "Conv", .n_in = 2, .in = {&x, &w}, .in_const = {false, true}, .epi = tc__epilogue_none()};
    assert_true(supported_by(&tc__tactic_conv1x1_f32_scalar, &c, &y));
    assert_true(supported_by(&tc__tactic_conv_im2col_f32_scalar, &c, &y));
    c.epi = make_epi(TC__ACT_NONE, true, false, 2); /* a fused bias over W */
    c.bias = &wb;
    assert_false(supported_by(&tc__tactic_conv1x1_f32_scalar, &c, &y));
    assert_false(supported_by(&tc__tactic_conv_im2col_f32_scalar, &c, &y));
    c.epi = tc__epilogue_none();
    c.bias = NULL;
    c.in_const[1] = false; /* weights not constant */
    assert_false(supported_by(&tc__tactic_conv_im2col_f32_scalar, &c, &y));
    tc__tensor_free(&x);
    tc__tensor_free(&w);
    tc__tensor_free(&y);
    tc__tensor_free(&wb);
}

/* The registry lists the tactics by ISA, best first. */
/* The FP32 tactics of op (precision unset), in list order. */
static int fp32_tactics_for(const char *op, const tc__tactic **list, int cap) {
    int n = tc__tactics_for(&tc__backend_cpu, op, TC__ISA_ALL, list, cap), k = 0;
    for (int i = 0; i < n; i++)
        if (list[i]->precision == NULL) list[k++] = list[i];
    return k;
}

static void test_registry(void **state) {
    (void)state;
    const tc__tactic *list[64];
    int n = tc__tactics_for(&tc__backend_cpu, "MatMul", TC__GEMM_ISA_AVX2, list, 64);
    bool has_avx2 = false, has_avx512 = false, has_scalar = false;
    for (int i = 0; i < n; i++) {
        has_avx2 |= list[i] == &tc__tactic_matmul_f32_avx2;
        has_avx512 |= list[i] == &tc__tactic_matmul_f32_avx512;
        has_scalar |= list[i] == &tc__tactic_matmul_f32_scalar;
    }
    assert_true(has_avx2 && has_scalar && !has_avx512);
    for (int i = 0; i < n; i++) /* the 8x48 tactics need AVX-512 too */
        assert_true(list[i] != &tc__tactic_matmul_f32_avx512_8x48 && list[i] != &tc__tactic_matmul_dyn_f32_avx512_8x48);
    assert_ptr_equal(tc__tactic_find(&tc__backend_cpu, "conv_im2col_f32_avx512", "Conv"), &tc__tactic_conv_im2col_f32_avx512);
    assert_ptr_equal(tc__tactic_find(&tc__backend_cpu, "matmul_f32_avx512_8x48", "MatMul"), &tc__tactic_matmul_f32_avx512_8x48);
    assert_ptr_equal(tc__tactic_find(&tc__backend_cpu, "matmul_dyn_f32_avx512_8x48", "MatMul"), &tc__tactic_matmul_dyn_f32_avx512_8x48);
    assert_ptr_equal(tc__tactic_find(&tc__backend_cpu, "gemm_f32_avx512_8x48", "Gemm"), &tc__tactic_gemm_f32_avx512_8x48);
    /* Each 8x48 tactic right after its 14x32 one, so the heuristic (first) choice is unchanged (among the FP32
     * tactics: the INT8 ones come first but take only steps the precision pass gave a scale). */
    n = fp32_tactics_for("Gemm", list, 64);
    assert_true(n >= 2 && list[0] == &tc__tactic_gemm_f32_avx512 && list[1] == &tc__tactic_gemm_f32_avx512_8x48);
    n = fp32_tactics_for("MatMul", list, 64);
    assert_true(n >= 4 && list[0] == &tc__tactic_matmul_f32_avx512 && list[1] == &tc__tactic_matmul_f32_avx512_8x48 &&
                list[2] == &tc__tactic_matmul_dyn_f32_avx512 && list[3] == &tc__tactic_matmul_dyn_f32_avx512_8x48);
}

static int setup_pool(void **state) {
    *state = tc__pool_create(2);
    return *state == NULL ? -1 : 0;
}

static int teardown_pool(void **state) {
    tc__pool_destroy(*state);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),       cmocka_unit_test(test_matmul_2d),
        cmocka_unit_test(test_matmul_large_k), cmocka_unit_test(test_matmul_batched),
        cmocka_unit_test(test_matmul_rejects), cmocka_unit_test(test_matmul_views),
        cmocka_unit_test(test_matmul_views_rejects), cmocka_unit_test(test_gemm),
        cmocka_unit_test(test_gemm_rejects),   cmocka_unit_test(test_conv_1x1),
        cmocka_unit_test(test_conv_im2col),    cmocka_unit_test(test_conv_rejects),
    };
    return cmocka_run_group_tests(tests, setup_pool, teardown_pool);
}
