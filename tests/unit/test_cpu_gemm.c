/*
 * test_cpu_gemm.c - the FP32 GEMM microkernels (AVX-512 14x32 and 8x48, AVX2, scalar: each called
 * directly, skipped when this CPU lacks its ISA) and the GEMM operator (packing, blocking,
 * batching, threading) against the reference MatMul plus the epilogue computed in double with
 * tc__act_eval: every tile size and remainder, packed and strided operands, every activation, with
 * and without a 2-thread pool, and bit-identical results for any thread count.
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "backends/cpu/gemm.h"
#include "core/cpu.h"
#include "dense_test_util.h"

static const tc__gemm_config *const kConfigs[] = {&tc__gemm_config_f32_avx512, &tc__gemm_config_f32_avx512_8x48,
                                                  &tc__gemm_config_f32_avx2, &tc__gemm_config_f32_scalar};
#define N_CONFIGS (sizeof kConfigs / sizeof kConfigs[0])

/* True when this CPU (uncapped) can run cfg. */
static bool cpu_has(const tc__gemm_config *cfg) {
    tc__cpu cpu;
    tc__cpu_detect(NULL, &cpu);
    return (cfg->isa & ~cpu.isa) == 0;
}

/* Random floats in [-1, 1), never zero. */
static float *rand_floats(dtu_rng *r, size_t n) {
    float *p = malloc((n ? n : 1) * sizeof(float));
    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = (float)dtu_uniform(r, -1.0, 1.0);
    return p;
}

/* A row-major m x k matrix as a float32 tensor (copied). */
static tc__tensor matrix_tensor(size_t m, size_t k, const float *src) {
    int64_t dims[2] = {(int64_t)m, (int64_t)k};
    tc__tensor t = dtu_tensor(TC_DTYPE_FLOAT32, 2, dims);
    if (m * k > 0) memcpy(t.data, src, m * k * sizeof(float));
    return t;
}

/* A(i,p) * B(p,j) summed by the reference MatMul (double accumulation, rounded to float). */
static float *ref_product(size_t m, size_t n, size_t k, const float *a, const float *b) {
    float *out = malloc((m * n > 0 ? m * n : 1) * sizeof(float));
    assert_non_null(out);
    if (k == 0) {
        for (size_t i = 0; i < m * n; i++)
            out[i] = 0.0f;
        return out;
    }
    tc__tensor ta = matrix_tensor(m, k, a), tb = matrix_tensor(k, n, b);
    int64_t ydims[2] = {(int64_t)m, (int64_t)n};
    tc__tensor ty = dtu_tensor(TC_DTYPE_FLOAT32, 2, ydims);
    const tc__tensor *in[2] = {&ta, &tb};
    tc__tensor *out_t[1] = {&ty};
    tc__err err = {0};
    tc__attrs none = {0, NULL};
    tc__kernel_ctx kc = {.node_name = "test",
                         .op_type = "MatMul",
                         .opset = 13,
                         .attrs = &none,
                         .n_in = 2,
                         .in = in,
                         .n_out = 1,
                         .out = out_t,
                         .err = &err};
    if (tc__ref_MatMul(&kc) != TC_STATUS_OK) fail_msg("reference MatMul: %s", err.msg);
    memcpy(out, ty.data, m * n * sizeof(float));
    tc__tensor_free(&ta);
    tc__tensor_free(&tb);
    tc__tensor_free(&ty);
    return out;
}

/* Sum over p of |A(i,p) B(p,j)|, the scale of the rounding error of element (i, j). */
static double abs_dot(size_t k, const float *a, size_t a_step, const float *b, size_t b_step) {
    double s = 0.0;
    for (size_t p = 0; p < k; p++)
        s += fabs((double)a[p * a_step] * (double)b[p * b_step]);
    return s;
}

/* The epilogue in double, with the activation of the reference. */
static double ref_epilogue(const tc__gemm_epi *e, double sum, size_t i, size_t j, double *scale) {
    double v = e->alpha * sum, s = fabs(e->alpha) * *scale;
    if (e->bias_m) v += e->bias_m[i], s += fabs(e->bias_m[i]);
    if (e->bias_n) v += e->bias_n[j], s += fabs(e->bias_n[j]);
    if (e->res)
        v += (double)e->res_scale * e->res[i * e->ld_res + j], s += fabs(e->res_scale * e->res[i * e->ld_res + j]);
    *scale = s;
    return tc__act_eval((tc__act)e->act, v, e->act_alpha, e->act_beta);
}

/* |got - want| within a float-accumulation bound that grows with sqrt(K). */
static void check_close(float got, double want, double scale, size_t k, const char *what, size_t i, size_t j) {
    const double tol = 4e-6 * sqrt((double)k + 1.0) * (scale + fabs(want)) + 2e-6 * fabs(want) + 1e-6;
    if (!(fabs((double)got - want) <= tol))
        fail_msg("%s: C[%zu][%zu] = %.9g, want %.9g (tol %.3g)", what, i, j, (double)got, want, tol);
}

/* A random epilogue over an m x n output (vectors and residual owned by the caller via *mem). */
typedef struct epi_mem {
    float *bias_m, *bias_n, *res;
} epi_mem;

static tc__gemm_epi random_epi(dtu_rng *r, size_t m, size_t n, uint8_t act, epi_mem *mem) {
    tc__gemm_epi e = {.alpha = 1.0f, .res_scale = 1.0f, .act = act};
    memset(mem, 0, sizeof *mem);
    const uint64_t bits = dtu_next(r);
    if (bits & 1) e.alpha = (float)dtu_uniform(r, -2.0, 2.0);
    if (bits & 2) e.bias_m = mem->bias_m = rand_floats(r, m);
    if (bits & 4) e.bias_n = mem->bias_n = rand_floats(r, n);
    if (bits & 8) {
        e.res = mem->res = rand_floats(r, m * n);
        e.ld_res = n;
        if (bits & 16) e.res_scale = (float)dtu_uniform(r, -2.0, 2.0);
    }
    switch (act) {
    case TC__ACT_CLIP: e.act_alpha = -0.5f, e.act_beta = 0.75f; break;
    case TC__ACT_HARDSIGMOID: e.act_alpha = 0.2f, e.act_beta = 0.5f; break;
    case TC__ACT_LEAKY_RELU: e.act_alpha = 0.01f; break;
    default: break;
    }
    return e;
}

static void free_epi(epi_mem *mem) {
    free(mem->bias_m);
    free(mem->bias_n);
    free(mem->res);
}

/* ---- microkernels ------------------------------------------------------------------------ */

/* One microkernel call on an mr x nr tile with kc, every operand form, checked with guards around C. */
static void check_tile(const tc__gemm_config *cfg, dtu_rng *r, size_t mr, size_t nr, size_t kc, bool a_packed,
                       bool b_packed, bool load_c, int act /* -1: no epilogue */) {
    const size_t lda = kc + 3, ldb = b_packed ? nr : nr + 5, ldc = nr + 7, rows = mr + 2;
    float *a = rand_floats(r, mr * kc), *b = rand_floats(r, kc * nr); /* contiguous mr x kc and kc x nr */
    float *a_mem = rand_floats(r, mr * lda), *b_mem = rand_floats(r, kc * ldb + 1);
    for (size_t i = 0; i < mr; i++)
        for (size_t p = 0; p < kc; p++) {
            if (a_packed)
                a_mem[p * mr + i] = a[i * kc + p];
            else
                a_mem[i * lda + p] = a[i * kc + p];
        }
    for (size_t p = 0; p < kc; p++)
        for (size_t j = 0; j < nr; j++)
            b_mem[p * ldb + j] = b[p * nr + j];
    float *c = malloc(rows * ldc * sizeof(float)), *c0 = rand_floats(r, mr * nr);
    assert_non_null(c);
    for (size_t i = 0; i < rows * ldc; i++)
        c[i] = 1234.5f; /* guard */
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++)
            c[i * ldc + j] = load_c ? c0[i * nr + j] : NAN;
    epi_mem mem;
    tc__gemm_epi e = random_epi(r, mr, nr, act < 0 ? TC__ACT_NONE : (uint8_t)act, &mem);
    tc__gemm_tile t = {.mr = mr,
                       .nr = nr,
                       .kc = kc,
                       .a = a_mem,
                       .rs_a = a_packed ? 1 : lda,
                       .cs_a = a_packed ? mr : 1,
                       .b = b_mem,
                       .rs_b = ldb,
                       .c = c,
                       .ldc = ldc,
                       .load_c = load_c,
                       .epi = act < 0 ? NULL : &e};
    cfg->ukernel(&t);
    float *prod = ref_product(mr, nr, kc, a, b);
    char what[160];
    snprintf(what, sizeof what, "%s mr=%zu nr=%zu kc=%zu apack=%d bpack=%d loadc=%d act=%d", cfg->name, mr, nr, kc,
             a_packed, b_packed, load_c, act);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < ldc; j++) {
            if (i >= mr || j >= nr) {
                if (c[i * ldc + j] != 1234.5f) fail_msg("%s: wrote outside the tile at [%zu][%zu]", what, i, j);
                continue;
            }
            double scale = abs_dot(kc, a + i * kc, 1, b + j, nr);
            double sum = (double)prod[i * nr + j] + (load_c ? c0[i * nr + j] : 0.0);
            if (load_c) scale += fabs(c0[i * nr + j]);
            double want = act < 0 ? sum : ref_epilogue(&e, sum, i, j, &scale);
            check_close(c[i * ldc + j], want, scale, kc, what, i, j);
        }
    free(prod);
    free_epi(&mem);
    free(c);
    free(c0);
    free(a_mem);
    free(b_mem);
    free(a);
    free(b);
}

static void test_microkernels_tiles(void **state) {
    (void)state;
    dtu_rng r = {0x5eed1234u};
    for (size_t ci = 0; ci < N_CONFIGS; ci++) {
        const tc__gemm_config *cfg = kConfigs[ci];
        if (!cpu_has(cfg)) {
            fprintf(stderr, "skipping %s: ISA not available\n", cfg->name);
            continue;
        }
        /* Edges of the tile and of each 16-column vector (widths above NR are skipped). */
        const size_t nrs[] = {1, 2, 16, 17, 32, 33, cfg->nr / 2, cfg->nr / 2 + 1, cfg->nr - 1, cfg->nr};
        const size_t kcs[] = {0, 1, 3, 17, 64};
        for (size_t mr = 1; mr <= cfg->mr; mr++)
            for (size_t ni = 0; ni < sizeof nrs / sizeof nrs[0]; ni++)
                for (size_t ki = 0; ki < sizeof kcs / sizeof kcs[0]; ki++) {
                    if (nrs[ni] > cfg->nr) continue;
                    const unsigned form = (unsigned)(dtu_next(&r) & 7);
                    check_tile(cfg, &r, mr, nrs[ni], kcs[ki], form & 1, form & 2, form & 4, -1);
                }
    }
}

static void test_microkernels_epilogues(void **state) {
    (void)state;
    dtu_rng r = {0xe91109u};
    for (size_t ci = 0; ci < N_CONFIGS; ci++) {
        const tc__gemm_config *cfg = kConfigs[ci];
        if (!cpu_has(cfg)) continue;
        /* every activation but FAKE_QUANT (one rounding step exceeds this tolerance; test_cpu_qconv checks it bit
         * for bit) */
        for (int act = 0; act < TC__ACT_FAKE_QUANT; act++)
            for (int rep = 0; rep < 6; rep++) {
                const size_t mr = 1 + (size_t)(dtu_next(&r) % cfg->mr), nr = 1 + (size_t)(dtu_next(&r) % cfg->nr);
                check_tile(cfg, &r, mr, rep == 0 ? cfg->nr : nr, 1 + (size_t)(dtu_next(&r) % 40), rep & 1, rep & 2,
                           rep == 3, act);
            }
    }
}

/* ---- operator ------------------------------------------------------------------------------ */

typedef enum operand_form { FORM_ROWS, FORM_TRANSPOSED, FORM_PACKED } operand_form;

typedef struct op_case {
    size_t m, n, k;
    operand_form fa, fb;
    int act; /* -1: random epilogue terms off */
    bool threads;
} op_case;

/* Runs one operator case with config cfg (and pool when threads) and checks every element. */
static void check_operator(const tc__gemm_config *cfg, dtu_rng *r, const op_case *oc, tc__pool_t pool) {
    const size_t m = oc->m, n = oc->n, k = oc->k;
    float *a = rand_floats(r, m * k), *b = rand_floats(r, k * n);
    float *a_mem = malloc((m * k > 0 ? m * k : 1) * sizeof(float)),
          *b_mem = malloc((k * n > 0 ? k * n : 1) * sizeof(float));
    assert_non_null(a_mem);
    assert_non_null(b_mem);
    tc__gemm_f32_problem p = tc__gemm_f32_problem_init(m, n, k);
    switch (oc->fa) {
    case FORM_ROWS: memcpy(a_mem, a, m * k * sizeof(float)); break;
    case FORM_TRANSPOSED:
        for (size_t i = 0; i < m; i++)
            for (size_t q = 0; q < k; q++)
                a_mem[q * m + i] = a[i * k + q];
        p.rs_a = 1;
        p.cs_a = m;
        break;
    case FORM_PACKED:
        tc__gemm_pack_a_f32(m, k, cfg->mr, a, k, 1, a_mem);
        p.a_packed = true;
        break;
    }
    switch (oc->fb) {
    case FORM_ROWS: memcpy(b_mem, b, k * n * sizeof(float)); break;
    case FORM_TRANSPOSED:
        for (size_t q = 0; q < k; q++)
            for (size_t j = 0; j < n; j++)
                b_mem[j * k + q] = b[q * n + j];
        p.rs_b = 1;
        p.cs_b = k;
        break;
    case FORM_PACKED:
        tc__gemm_pack_b_f32(k, n, cfg->nr, b, n, 1, b_mem);
        p.b_packed = true;
        break;
    }
    p.a = a_mem;
    p.b = b_mem;
    const size_t ldc = n + (dtu_next(r) & 1) * 3;
    float *c = malloc((m * ldc > 0 ? m * ldc : 1) * sizeof(float));
    assert_non_null(c);
    for (size_t i = 0; i < m * ldc; i++)
        c[i] = NAN; /* every element must be written */
    p.c = c;
    p.ldc = ldc;
    epi_mem mem;
    memset(&mem, 0, sizeof mem);
    if (oc->act >= 0) p.epi = random_epi(r, m, n, (uint8_t)oc->act, &mem);

    /* Lend exactly the scratch the operator asks for. */
    const size_t bytes = tc__gemm_f32_scratch_bytes(&p, cfg, 2);
    tc__scratch scratch = {malloc(bytes), bytes, 0};
    assert_non_null(scratch.base);
    tc__err err = {0};
    tc__kernel_ctx kc = {
        .node_name = "test", .op_type = "Gemm", .err = &err, .scratch = &scratch, .exec = oc->threads ? pool : NULL};
    if (tc__gemm_f32_run(&p, cfg, &kc) != TC_STATUS_OK) fail_msg("%s: %s", cfg->name, err.msg);
    assert_int_equal(scratch.used, 0);

    float *prod = ref_product(m, n, k, a, b);
    char what[160];
    snprintf(what, sizeof what, "%s m=%zu n=%zu k=%zu fa=%d fb=%d act=%d threads=%d", cfg->name, m, n, k, (int)oc->fa,
             (int)oc->fb, oc->act, (int)oc->threads);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double scale = abs_dot(k, a + i * k, 1, b + j, n);
            double want = oc->act < 0 ? prod[i * n + j] : ref_epilogue(&p.epi, prod[i * n + j], i, j, &scale);
            check_close(c[i * ldc + j], want, scale, k, what, i, j);
        }
    free(prod);
    free(scratch.base);
    free_epi(&mem);
    free(c);
    free(a_mem);
    free(b_mem);
    free(a);
    free(b);
}

static const size_t kSizes[] = {1, 2, 3, 7, 13, 16, 17, 31, 33, 48, 64, 97, 129};
#define N_SIZES (sizeof kSizes / sizeof kSizes[0])

static void test_operator_shapes(void **state) {
    tc__pool_t pool = *state;
    assert_non_null(pool);
    dtu_rng r = {0x0be7a70u};
    for (size_t ci = 0; ci < N_CONFIGS; ci++) {
        const tc__gemm_config *cfg = kConfigs[ci];
        if (!cpu_has(cfg)) continue;
        /* Every size in each role, the others random from the list. */
        for (size_t role = 0; role < 3; role++)
            for (size_t si = 0; si < N_SIZES; si++) {
                size_t d[3] = {kSizes[dtu_next(&r) % N_SIZES], kSizes[dtu_next(&r) % N_SIZES],
                               kSizes[dtu_next(&r) % N_SIZES]};
                d[role] = kSizes[si];
                op_case oc = {d[0],
                              d[1],
                              d[2],
                              (operand_form)(dtu_next(&r) % 3),
                              (operand_form)(dtu_next(&r) % 3),
                              (int)(dtu_next(&r) % (TC__ACT_FAKE_QUANT + 1)) - 1,
                              (dtu_next(&r) & 1) != 0};
                check_operator(cfg, &r, &oc, pool);
            }
    }
}

static void test_operator_large_k(void **state) {
    tc__pool_t pool = *state;
    assert_non_null(pool);
    dtu_rng r = {0x1a26e4u};
    const op_case cases[] = {
        {17, 33, 2049, FORM_ROWS, FORM_PACKED, TC__ACT_RELU, true},
        {129, 97, 2049, FORM_PACKED, FORM_ROWS, TC__ACT_GELU_ERF, false},
        {64, 64, 1000, FORM_TRANSPOSED, FORM_TRANSPOSED, -1, true},
        {3, 200, 777, FORM_ROWS, FORM_ROWS, TC__ACT_SILU, true},
        {128, 96, 768, FORM_ROWS, FORM_PACKED, TC__ACT_GELU_ERF, true}, /* BERT's M and K, whole 8x48 tiles */
    };
    for (size_t ci = 0; ci < N_CONFIGS; ci++) {
        if (!cpu_has(kConfigs[ci])) continue;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            check_operator(kConfigs[ci], &r, &cases[i], pool);
    }
}

static void test_operator_empty_k(void **state) {
    tc__pool_t pool = *state;
    assert_non_null(pool);
    dtu_rng r = {0xe3771u};
    for (size_t ci = 0; ci < N_CONFIGS; ci++) {
        if (!cpu_has(kConfigs[ci])) continue;
        const op_case oc = {5, 40, 0, FORM_ROWS, FORM_ROWS, TC__ACT_SIGMOID, true};
        check_operator(kConfigs[ci], &r, &oc, pool);
    }
}

/* A batch with broadcast operands: A[3, 1, m, k] x B[1, 2, k, n] (B packed), C[3, 2, m, n]. */
static void test_operator_batch_broadcast(void **state) {
    tc__pool_t pool = *state;
    assert_non_null(pool);
    dtu_rng r = {0xba7c4u};
    const size_t m = 19, n = 45, k = 70, ba = 3, bb = 2;
    for (size_t ci = 0; ci < N_CONFIGS; ci++) {
        const tc__gemm_config *cfg = kConfigs[ci];
        if (!cpu_has(cfg)) continue;
        float *a = rand_floats(&r, ba * m * k), *b = rand_floats(&r, bb * k * n), *bp = rand_floats(&r, bb * k * n);
        for (size_t t = 0; t < bb; t++)
            tc__gemm_pack_b_f32(k, n, cfg->nr, b + t * k * n, n, 1, bp + t * k * n);
        float *c = malloc(ba * bb * m * n * sizeof(float)), *c1 = malloc(ba * bb * m * n * sizeof(float));
        assert_non_null(c);
        assert_non_null(c1);
        float *bias = rand_floats(&r, n);
        tc__gemm_f32_problem p = tc__gemm_f32_problem_init(m, n, k);
        p.a = a;
        p.b = bp;
        p.b_packed = true;
        p.c = c;
        p.epi.bias_n = bias;
        p.epi.act = TC__ACT_TANH;
        p.nb = 2;
        p.bdims[0] = ba;
        p.bdims[1] = bb;
        p.a_bs[0] = m * k;
        p.b_bs[1] = k * n;
        p.c_bs[0] = bb * m * n;
        p.c_bs[1] = m * n;
        tc__err err = {0};
        tc__kernel_ctx kc = {.err = &err, .exec = pool};
        assert_int_equal(tc__gemm_f32_run(&p, cfg, &kc), TC_STATUS_OK);
        kc.exec = NULL; /* one thread: bit-identical */
        p.c = c1;
        assert_int_equal(tc__gemm_f32_run(&p, cfg, &kc), TC_STATUS_OK);
        assert_memory_equal(c, c1, ba * bb * m * n * sizeof(float));
        for (size_t t0 = 0; t0 < ba; t0++)
            for (size_t t1 = 0; t1 < bb; t1++) {
                const float *at = a + t0 * m * k, *bt = b + t1 * k * n;
                float *prod = ref_product(m, n, k, at, bt);
                for (size_t i = 0; i < m; i++)
                    for (size_t j = 0; j < n; j++) {
                        double scale = abs_dot(k, at + i * k, 1, bt + j, n);
                        double want = ref_epilogue(&p.epi, prod[i * n + j], i, j, &scale);
                        check_close(c[((t0 * bb + t1) * m + i) * n + j], want, scale, k, cfg->name, i, j);
                    }
                free(prod);
            }
        free(bias);
        free(c);
        free(c1);
        free(a);
        free(b);
        free(bp);
    }
}

/* The same problem with 1 and 2 threads (and tiny scratch: one slot) gives identical bits. */
static void test_operator_deterministic(void **state) {
    tc__pool_t pool = *state;
    assert_non_null(pool);
    dtu_rng r = {0xde7e7u};
    const size_t m = 150, n = 300, k = 900;
    float *a = rand_floats(&r, m * k), *b = rand_floats(&r, k * n);
    float *c[3];
    for (size_t ci = 0; ci < N_CONFIGS; ci++) {
        const tc__gemm_config *cfg = kConfigs[ci];
        if (!cpu_has(cfg)) continue;
        for (int v = 0; v < 3; v++) {
            c[v] = malloc(m * n * sizeof(float));
            assert_non_null(c[v]);
            tc__gemm_f32_problem p = tc__gemm_f32_problem_init(m, n, k);
            p.a = a;
            p.b = b;
            p.c = c[v];
            p.epi.act = TC__ACT_GELU_TANH;
            const size_t bytes = tc__gemm_f32_scratch_bytes(&p, cfg, v == 2 ? 1 : 2);
            tc__scratch s = {malloc(bytes), bytes, 0};
            assert_non_null(s.base);
            tc__err err = {0};
            tc__kernel_ctx kc = {.err = &err, .scratch = &s, .exec = v == 0 ? NULL : pool};
            assert_int_equal(tc__gemm_f32_run(&p, cfg, &kc), TC_STATUS_OK);
            free(s.base);
        }
        assert_memory_equal(c[0], c[1], m * n * sizeof(float));
        assert_memory_equal(c[0], c[2], m * n * sizeof(float));
        for (int v = 0; v < 3; v++)
            free(c[v]);
    }
    free(a);
    free(b);
}

/* Too little scratch fails cleanly. */
static void test_operator_no_scratch(void **state) {
    (void)state;
    float a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 4}, c[4];
    tc__gemm_f32_problem p = tc__gemm_f32_problem_init(2, 2, 2);
    p.a = a;
    p.b = b;
    p.c = c;
    unsigned char buf[8];
    tc__scratch s = {buf, sizeof buf, 0};
    tc__err err = {0};
    tc__kernel_ctx kc = {.err = &err, .scratch = &s};
    assert_int_equal(tc__gemm_f32_run(&p, &tc__gemm_config_f32_scalar, &kc), TC_STATUS_OUT_OF_MEMORY);
}

/* Packing is a permutation: every value appears once, at the documented place. */
static void test_pack_layout(void **state) {
    (void)state;
    const size_t m = 23, k = 9, n = 37, mr = 6, nr = 16;
    float src[23 * 37], dst[23 * 37];
    for (size_t i = 0; i < m * n; i++)
        src[i] = (float)i + 1.0f;
    tc__gemm_pack_b_f32(k, n, nr, src, n, 1, dst); /* k x n */
    for (size_t p = 0; p < k; p++)
        for (size_t j = 0; j < n; j++) {
            const size_t q = j / nr, w = n - q * nr < nr ? n - q * nr : nr;
            assert_true(dst[q * nr * k + p * w + j % nr] == src[p * n + j]);
        }
    tc__gemm_pack_a_f32(m, k, mr, src, k, 1, dst); /* m x k */
    for (size_t i = 0; i < m; i++)
        for (size_t p = 0; p < k; p++) {
            const size_t q = i / mr, h = m - q * mr < mr ? m - q * mr : mr;
            assert_true(dst[q * mr * k + p * h + i % mr] == src[i * k + p]);
        }
}

/* In a fresh child (before any tc__cpu_get), TAILCUT_MAX_ISA caps the automatic choice. */
static int child_auto_config(const char *cap, const tc__gemm_config *want) {
    if (setenv("TAILCUT_MAX_ISA", cap, 1) != 0) return 10;
    return tc__gemm_f32_config_auto() == want ? 0 : 11;
}

/* Must run first: the parent calls tc__cpu_get only after forking these children. */
static void test_config_isa_cap(void **state) {
    (void)state;
    tc__cpu cpu;
    tc__cpu_detect(NULL, &cpu);
    const struct {
        const char *cap;
        const tc__gemm_config *want;
    } kCaps[] = {
        {"ref", &tc__gemm_config_f32_scalar},
        {"avx2", tc__gemm_f32_config(cpu.isa & TC__GEMM_ISA_AVX2)},
        {"", tc__gemm_f32_config(cpu.isa)},
    };
    for (size_t i = 0; i < sizeof kCaps / sizeof kCaps[0]; i++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) _exit(child_auto_config(kCaps[i].cap, kCaps[i].want));
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) != 0) fprintf(stderr, "TAILCUT_MAX_ISA=%s: wrong GEMM config\n", kCaps[i].cap);
        assert_int_equal(WEXITSTATUS(status), 0);
    }
}

static void test_config_dispatch(void **state) {
    (void)state;
    tc__cpu cpu;
    tc__cpu_detect(NULL, &cpu);
    assert_ptr_equal(tc__gemm_f32_config(0), &tc__gemm_config_f32_scalar);
    assert_ptr_equal(tc__gemm_f32_config(TC__GEMM_ISA_AVX2), &tc__gemm_config_f32_avx2);
    assert_ptr_equal(tc__gemm_f32_config(TC__ISA_ALL), &tc__gemm_config_f32_avx512); /* 14x32 stays the default */
    assert_true(tc__gemm_config_f32_avx512_8x48.isa == tc__gemm_config_f32_avx512.isa);
    assert_true(tc__gemm_config_f32_avx512_8x48.mr == 8 && tc__gemm_config_f32_avx512_8x48.nr == 48);
    assert_ptr_equal(tc__gemm_f32_config_auto(), tc__gemm_f32_config(tc__cpu_get()->isa));
    const tc__gemm_config *best = tc__gemm_f32_config(cpu.isa);
    assert_true((best->isa & ~cpu.isa) == 0);
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
        cmocka_unit_test(test_config_isa_cap),
        cmocka_unit_test(test_config_dispatch),
        cmocka_unit_test(test_pack_layout),
        cmocka_unit_test(test_microkernels_tiles),
        cmocka_unit_test(test_microkernels_epilogues),
        cmocka_unit_test(test_operator_shapes),
        cmocka_unit_test(test_operator_large_k),
        cmocka_unit_test(test_operator_empty_k),
        cmocka_unit_test(test_operator_batch_broadcast),
        cmocka_unit_test(test_operator_deterministic),
        cmocka_unit_test(test_operator_no_scratch),
    };
    return cmocka_run_group_tests(tests, setup_pool, teardown_pool);
}
