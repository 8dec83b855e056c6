/*
 * test_cpu_verf.c - the inline AVX-512 erf and GELU (verf_f32_avx512.h) through the two kernels that use them, the GEMM
 * epilogue's activation row function (tc__gemm_act_f32_avx512) and the unary op microkernel (tc__vunary_f32_avx512),
 * against erf and 0.5 x erfc(-x / sqrt 2) in double: a dense grid over [-12, 12] (both sides of the 0.921875 split
 * and of the 3.925 clamp), tiny and huge values, signed zeros, infinities and NaN, row lengths with masked tails.
 * Skipped without AVX-512.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/cpu/gemm.h"
#include "backends/cpu/vunary_f32.h"
#include "core/cpu.h"

static bool has_avx512(void) {
    tc__cpu cpu;
    tc__cpu_detect(NULL, &cpu);
    return (TC__GEMM_ISA_AVX512 & ~cpu.isa) == 0;
}

/* The inputs: a grid with a step that is not a multiple of anything special, plus edge values. */
static float *inputs(size_t *n_out) {
    static const float edges[] = {0.0f,   -0.0f,     1e-30f,    -1e-30f,   1e-7f,     -1e-7f,   0.921875f, -0.921875f,
                                  1.30375f, -1.30375f, 5.5508f,  -5.5508f,  5.5509f,  -5.5509f, 3.925f,    -3.925f,
                                  20.0f,  -20.0f,    1e30f,     -1e30f,    3.0e38f,   -3.0e38f, 0.5f,      -0.5f};
    const size_t grid = 240001, ne = sizeof edges / sizeof edges[0];
    float *x = malloc((grid + ne) * sizeof(float));
    assert_non_null(x);
    for (size_t i = 0; i < grid; i++)
        x[i] = (float)(-12.0 + 24.0 * (double)i / (double)(grid - 1));
    memcpy(x + grid, edges, sizeof edges);
    *n_out = grid + ne;
    return x;
}

static double gelu_ref(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }

/* |got - want| <= rel |want| + abs, or both NaN, or equal infinities. */
static void check(const char *what, const float *x, const float *got, size_t n, double (*ref)(double), double rel,
                  double abs_tol) {
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double w = ref((double)x[i]), g = (double)got[i];
        if (isnan(w) || isnan(g)) {
            if (!(isnan(w) && isnan(g))) fail_msg("%s(%.9g) = %.9g, want %.9g", what, (double)x[i], g, w);
            continue;
        }
        if (isinf(w) || isinf(g)) {
            if (g != w) fail_msg("%s(%.9g) = %.9g, want %.9g", what, (double)x[i], g, w);
            continue;
        }
        const double err = fabs(g - w);
        if (!(err <= rel * fabs(w) + abs_tol))
            fail_msg("%s(%.9g) = %.9g, want %.9g (error %.3g)", what, (double)x[i], g, w, err);
        if (err > worst) worst = err;
    }
    print_message("%s: %zu values, largest error %.3g\n", what, n, worst);
}

static void test_gelu_gemm_epilogue(void **state) {
    (void)state;
    if (!has_avx512()) skip();
    size_t n;
    float *x = inputs(&n);
    /* rows of 37 columns (two full vectors and a masked tail) with a row stride of 40 */
    const size_t cols = 37, ld = 40, rows = (n + cols - 1) / cols;
    float *c = calloc(rows * ld, sizeof(float)), *got = malloc(n * sizeof(float));
    assert_non_null(c);
    assert_non_null(got);
    for (size_t i = 0; i < n; i++)
        c[i / cols * ld + i % cols] = x[i];
    for (size_t r = 0; r < rows; r++)
        c[r * ld + cols] = 7.0f; /* past the row: must stay */
    const tc__gemm_epi e = {.alpha = 1.0f, .res_scale = 1.0f, .act = TC__ACT_GELU_ERF};
    tc__gemm_act_f32_avx512(c, ld, rows, cols, &e);
    for (size_t i = 0; i < n; i++)
        got[i] = c[i / cols * ld + i % cols];
    for (size_t r = 0; r < rows; r++)
        assert_true(c[r * ld + cols] == 7.0f);
    check("GELU epilogue", x, got, n, gelu_ref, 2e-6, 2e-7);
    free(c);
    free(got);
    free(x);
}

static void test_unary(void **state) {
    (void)state;
    if (!has_avx512()) skip();
    size_t n;
    float *x = inputs(&n), *y = malloc(n * sizeof(float)), *y2 = malloc(n * sizeof(float));
    assert_non_null(y);
    assert_non_null(y2);
    tc__vact a = {.kind = TC__VACT_ERF};
    tc__vunary_f32_avx512(x, y, (int64_t)n, &a);
    check("Erf", x, y, n, erf, 2e-6, 2e-7);
    a.kind = TC__VACT_GELU_ERF;
    tc__vunary_f32_avx512(x, y, (int64_t)n, &a);
    check("Gelu", x, y, n, gelu_ref, 2e-6, 2e-7);
    /* a tail of 1..15 elements gives the same values as whole vectors */
    for (int64_t len = 1; len < 16; len++) {
        tc__vunary_f32_avx512(x + 1000, y2, len, &a);
        assert_memory_equal(y2, y + 1000, (size_t)len * sizeof(float));
    }
    free(x);
    free(y);
    free(y2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gelu_gemm_epilogue),
        cmocka_unit_test(test_unary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
