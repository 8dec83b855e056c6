/*
 * test_cpu_gemm_bf16.c - the AVX512-BF16 GEMM (gemm_bf16_avx512bf16.h): the FP32 -> BF16
 * conversion against tc__f32_to_bf16 (ties to even, NaN, Inf, overflow, denormals), the packed
 * layouts and their sizes, the microkernel on every tile edge with accumulate, bias and ReLU, and
 * the operator on many shapes (odd and large K) against two references computed in double: one on
 * the BF16-rounded inputs, where only the FP32 summation order differs (tight bound), and one on
 * the original FP32 inputs, with the error BF16 rounding brings. Skipped when this CPU lacks
 * AVX512-BF16.
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

#include "backends/cpu/gemm_bf16_avx512bf16.h"
#include "core/cpu.h"
#include "dense_test_util.h"

#define MR TC__GEMM_BF16_MR
#define NR TC__GEMM_BF16_NR

/* True when this CPU (not capped by TAILCUT_MAX_ISA) has what the BF16 GEMM needs. */
static bool bf16_ok(void) {
    tc__cpu full;
    tc__cpu_detect(NULL, &full);
    return (TC__GEMM_BF16_ISA & ~full.isa) == 0;
}

static float f32_of_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t bits_of_f32(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* x rounded to bfloat16 as the library's scalar conversion does, back as a float. */
static float bf16_round(float x) { return tc__bf16_to_f32(tc__f32_to_bf16(x)); }

/* Random floats in [-1, 1), never zero. */
static float *rand_floats(dtu_rng *r, size_t n) {
    float *p = malloc((n ? n : 1) * sizeof(float));
    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = (float)dtu_uniform(r, -1.0, 1.0);
    return p;
}

/* ---- conversion ---------------------------------------------------------------------------- */

static uint16_t convert_one(float x) {
    uint16_t out = 0;
    tc__gemm_bf16_convert(&x, 1, &out);
    return out;
}

static bool bf16_is_nan(uint16_t b) { return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0; }

static void test_convert_special(void **state) {
    (void)state;
    if (!bf16_ok()) skip();
    /* Exact matches with tc__f32_to_bf16: ties (to even, both ways), just past ties, Inf, overflow
     * to Inf, the largest finite values, zeros, the smallest normal. */
    static const uint32_t kExact[] = {
        0x3f808000u, 0x3f818000u, 0xbf808000u, 0xbf818000u, 0x3f808001u, 0x3f817fffu, 0x3f807fffu,
        0x7f800000u, 0xff800000u, 0x7f7fffffu, 0xff7fffffu, 0x7f7f7fffu, 0x7f7f8000u, 0x00000000u,
        0x80000000u, 0x00800000u, 0x80800000u, 0x3f800000u, 0x4b7fffffu, 0x00ff8000u, 0x3effffffu,
    };
    for (size_t i = 0; i < sizeof kExact / sizeof kExact[0]; i++) {
        const float x = f32_of_bits(kExact[i]);
        const uint16_t got = convert_one(x), want = tc__f32_to_bf16(x);
        if (got != want) fail_msg("convert 0x%08x: 0x%04x, want 0x%04x", kExact[i], got, want);
    }
    /* NaN stays NaN (quiet, signalling, either sign, payload only in the low bits). */
    static const uint32_t kNaN[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu, 0x7fa00000u};
    for (size_t i = 0; i < sizeof kNaN / sizeof kNaN[0]; i++) {
        const uint16_t got = convert_one(f32_of_bits(kNaN[i]));
        if (!bf16_is_nan(got)) fail_msg("convert NaN 0x%08x: 0x%04x is not NaN", kNaN[i], got);
        assert_true(bf16_is_nan(tc__f32_to_bf16(f32_of_bits(kNaN[i]))));
    }
    /* Denormals: vcvtne2ps2bf16 flushes them to a zero of the same sign (tc__f32_to_bf16 keeps them). */
    static const uint32_t kDenormal[] = {0x00000001u, 0x80000001u, 0x007fffffu, 0x807fffffu, 0x00400000u, 0x00018000u};
    for (size_t i = 0; i < sizeof kDenormal / sizeof kDenormal[0]; i++) {
        const uint16_t got = convert_one(f32_of_bits(kDenormal[i]));
        const uint16_t sign = (uint16_t)((kDenormal[i] >> 16) & 0x8000u);
        if (got != sign) fail_msg("convert denormal 0x%08x: 0x%04x, want 0x%04x", kDenormal[i], got, sign);
    }
}

/* Random bit patterns (every exponent) and every length up to 70: bit-exact with tc__f32_to_bf16. */
static void test_convert_random(void **state) {
    (void)state;
    if (!bf16_ok()) skip();
    dtu_rng r = {0x5eed0001u};
    enum { N = 4099 };
    float *src = malloc(N * sizeof(float));
    uint16_t *dst = malloc((N + 8) * sizeof(uint16_t));
    assert_non_null(src);
    assert_non_null(dst);
    for (size_t i = 0; i < N; i++) {
        uint32_t u;
        do
            u = (uint32_t)(dtu_next(&r) >> 32);
        while ((u & 0x7f800000u) == 0 || (u & 0x7fffffffu) > 0x7f800000u); /* no denormals, no NaN */
        src[i] = f32_of_bits(u);
    }
    for (size_t n = 0; n <= 70; n++) {
        for (size_t i = 0; i < n + 8; i++)
            dst[i] = 0xdeadu;
        tc__gemm_bf16_convert(src, n, dst);
        for (size_t i = 0; i < n; i++)
            if (dst[i] != tc__f32_to_bf16(src[i])) fail_msg("n=%zu: element %zu 0x%08x", n, i, bits_of_f32(src[i]));
        for (size_t i = n; i < n + 8; i++)
            if (dst[i] != 0xdeadu) fail_msg("n=%zu: wrote past the end at %zu", n, i);
    }
    tc__gemm_bf16_convert(src, N, dst);
    for (size_t i = 0; i < N; i++)
        if (dst[i] != tc__f32_to_bf16(src[i])) fail_msg("element %zu 0x%08x", i, bits_of_f32(src[i]));
    free(src);
    free(dst);
}

/* ---- packing ------------------------------------------------------------------------------- */

static void test_pack_layout(void **state) {
    (void)state;
    if (!bf16_ok()) skip();
    dtu_rng r = {0x5eed0002u};
    static const size_t kSizes[] = {1, 2, 3, 7, 13, 16, 17, 31, 32, 33, 48, 64, 97};
    for (size_t si = 0; si < sizeof kSizes / sizeof kSizes[0]; si++)
        for (size_t sj = 0; sj < sizeof kSizes / sizeof kSizes[0]; sj++) {
            const size_t rows = kSizes[si], cols = kSizes[sj], ld = cols + 3;
            const size_t kp_b = (rows + 1) / 2, kp_a = (cols + 1) / 2;
            float *x = rand_floats(&r, rows * ld);
            /* As B (k = rows, n = cols): every (pair, column) slot, padding zero. */
            const size_t nb = tc__gemm_bf16_packed_b_size(rows, cols);
            assert_int_equal(nb, (cols + NR - 1) / NR * NR * 2 * kp_b);
            uint16_t *pb = malloc(nb * sizeof(uint16_t));
            assert_non_null(pb);
            tc__gemm_bf16_pack_b(rows, cols, x, ld, pb);
            for (size_t j = 0; j < (cols + NR - 1) / NR * NR; j++)
                for (size_t p = 0; p < 2 * kp_b; p++) {
                    const uint16_t got = pb[(j / NR) * NR * 2 * kp_b + ((p / 2) * NR + j % NR) * 2 + p % 2];
                    const uint16_t want = j < cols && p < rows ? tc__f32_to_bf16(x[p * ld + j]) : 0;
                    if (got != want) fail_msg("pack_b %zux%zu: B(%zu, %zu) 0x%04x, want 0x%04x", rows, cols, p, j, got, want);
                }
            /* As A (m = rows, k = cols): rows past m are never read, so only real rows are checked. */
            const size_t na = tc__gemm_bf16_packed_a_size(rows, cols);
            assert_int_equal(na, (rows + MR - 1) / MR * MR * 2 * kp_a);
            uint16_t *pa = malloc(na * sizeof(uint16_t));
            assert_non_null(pa);
            tc__gemm_bf16_pack_a(rows, cols, x, ld, pa);
            for (size_t i = 0; i < rows; i++)
                for (size_t p = 0; p < 2 * kp_a; p++) {
                    const uint16_t got = pa[(i / MR) * MR * 2 * kp_a + ((p / 2) * MR + i % MR) * 2 + p % 2];
                    const uint16_t want = p < cols ? tc__f32_to_bf16(x[i * ld + p]) : 0;
                    if (got != want) fail_msg("pack_a %zux%zu: A(%zu, %zu) 0x%04x, want 0x%04x", rows, cols, i, p, got, want);
                }
            free(pa);
            free(pb);
            free(x);
        }
}

/* ---- references ---------------------------------------------------------------------------- */

/* The two references of one element: on rounded and on original inputs, with their error scales. */
typedef struct ref_elem {
    double rounded, exact; /* epilogue included */
    double abs_rounded;    /* sum |bf16(a) bf16(b)| + |bias| (+ |C0|) */
    double rms_exact;      /* sqrt(sum (a b)^2) */
    double abs_exact;      /* sum |a b| + |bias| (+ |C0|) */
} ref_elem;

static ref_elem reference(size_t k, const float *a_row, const float *b, size_t ldb, size_t j, const float *bias,
                          bool relu, const float *c0) {
    ref_elem e = {0};
    double sq = 0.0;
    for (size_t p = 0; p < k; p++) {
        const double x = a_row[p], y = b[p * ldb + j];
        const double xr = bf16_round(a_row[p]), yr = bf16_round(b[p * ldb + j]);
        e.rounded += xr * yr;
        e.abs_rounded += fabs(xr * yr);
        e.exact += x * y;
        e.abs_exact += fabs(x * y);
        sq += x * y * x * y;
    }
    e.rms_exact = sqrt(sq);
    if (c0 != NULL) {
        e.rounded += *c0, e.exact += *c0;
        e.abs_rounded += fabs(*c0), e.abs_exact += fabs(*c0);
    }
    if (bias != NULL) {
        e.rounded += bias[j], e.exact += bias[j];
        e.abs_rounded += fabs(bias[j]), e.abs_exact += fabs(bias[j]);
    }
    if (relu) {
        e.rounded = e.rounded > 0.0 ? e.rounded : 0.0;
        e.exact = e.exact > 0.0 ? e.exact : 0.0;
    }
    return e;
}

/*
 * got against both references: on rounded inputs only the FP32 summation differs (1e-5 of the
 * absolute sum); on the original inputs each product also carries BF16's relative error (up to
 * 2^-8, random in sign), which grows like 2^-8 * sqrt(K) times the typical product: 6 sigma.
 */
static void check_elem(float got, const ref_elem *e, const char *what, size_t i, size_t j) {
    const double tol_rounded = 1e-5 * e->abs_rounded + 1e-30;
    if (!(fabs((double)got - e->rounded) <= tol_rounded))
        fail_msg("%s: C[%zu][%zu] = %.9g, want %.9g on BF16 inputs (tol %.3g)", what, i, j, (double)got, e->rounded,
                 tol_rounded);
    const double tol_exact = 6.0 * 0x1p-8 * e->rms_exact + 2e-5 * e->abs_exact + 1e-30;
    if (!(fabs((double)got - e->exact) <= tol_exact))
        fail_msg("%s: C[%zu][%zu] = %.9g, want %.9g on FP32 inputs (tol %.3g)", what, i, j, (double)got, e->exact,
                 tol_exact);
}

/* ---- microkernel --------------------------------------------------------------------------- */

/* One microkernel call on an mr x nr tile over k (kp pairs), guards around C. */
static void check_tile(dtu_rng *r, size_t mr, size_t nr, size_t k, bool load_c, bool use_bias, bool relu) {
    const size_t ldc = nr + 5, rows = mr + 2;
    float *a = rand_floats(r, mr * k), *b = rand_floats(r, k * nr), *bias = rand_floats(r, NR);
    float *c0 = rand_floats(r, mr * nr), *c = malloc(rows * ldc * sizeof(float));
    uint16_t *pa = malloc(tc__gemm_bf16_packed_a_size(mr, k) * sizeof(uint16_t) + 64);
    uint16_t *pb = malloc(tc__gemm_bf16_packed_b_size(k, nr) * sizeof(uint16_t) + 64);
    assert_non_null(c);
    assert_non_null(pa);
    assert_non_null(pb);
    tc__gemm_bf16_pack_a(mr, k, a, k, pa);
    tc__gemm_bf16_pack_b(k, nr, b, nr, pb);
    for (size_t i = 0; i < rows * ldc; i++)
        c[i] = 1234.5f; /* guard */
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++)
            c[i * ldc + j] = load_c ? c0[i * nr + j] : NAN;
    const tc__gemm_bf16_tile t = {.mr = mr,
                                  .nr = nr,
                                  .kp = (k + 1) / 2,
                                  .a = pa,
                                  .b = pb,
                                  .c = c,
                                  .ldc = ldc,
                                  .load_c = load_c,
                                  .bias = use_bias ? bias : NULL,
                                  .relu = relu};
    tc__gemm_bf16_avx512bf16_14x32(&t);
    char what[128];
    snprintf(what, sizeof what, "tile mr=%zu nr=%zu k=%zu loadc=%d bias=%d relu=%d", mr, nr, k, load_c, use_bias,
             relu);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < ldc; j++) {
            if (i >= mr || j >= nr) {
                if (c[i * ldc + j] != 1234.5f) fail_msg("%s: wrote outside the tile at [%zu][%zu]", what, i, j);
                continue;
            }
            const ref_elem e =
                reference(k, a + i * k, b, nr, j, use_bias ? bias : NULL, relu, load_c ? &c0[i * nr + j] : NULL);
            check_elem(c[i * ldc + j], &e, what, i, j);
        }
    free(a);
    free(b);
    free(bias);
    free(c0);
    free(c);
    free(pa);
    free(pb);
}

static void test_microkernel_tiles(void **state) {
    (void)state;
    if (!bf16_ok()) skip();
    dtu_rng r = {0x5eed0003u};
    static const size_t kK[] = {0, 1, 2, 3, 16, 33, 64};
    for (size_t mr = 1; mr <= MR; mr++)
        for (size_t nr = 1; nr <= NR; nr++)
            for (size_t ki = 0; ki < sizeof kK / sizeof kK[0]; ki++) {
                const int v = (int)(mr * 7 + nr * 3 + ki);
                check_tile(&r, mr, nr, kK[ki], v % 2 == 0, v % 3 == 0, v % 5 < 2);
            }
}

static void test_microkernel_epilogue(void **state) {
    (void)state;
    if (!bf16_ok()) skip();
    dtu_rng r = {0x5eed0004u};
    for (int mode = 0; mode < 8; mode++) {
        const bool load_c = mode & 1, bias = mode & 2, relu = mode & 4;
        check_tile(&r, MR, NR, 97, load_c, bias, relu);
        check_tile(&r, 5, 19, 96, load_c, bias, relu);
    }
}

/* ---- operator ------------------------------------------------------------------------------ */

/* One tc__gemm_bf16_run with strided A and C, guards around C. */
static void check_run(dtu_rng *r, size_t m, size_t n, size_t k, bool use_bias, bool relu) {
    const size_t lda = k + 3, ldc = n + 2;
    float *a = rand_floats(r, m * lda + 1), *b = rand_floats(r, k * n + 1), *bias = rand_floats(r, n);
    float *c = malloc((m * ldc + 1) * sizeof(float));
    uint16_t *pb = malloc(tc__gemm_bf16_packed_b_size(k, n) * sizeof(uint16_t) + 64);
    const size_t scratch_bytes = tc__gemm_bf16_scratch_bytes(m, k);
    void *scratch = aligned_alloc(64, (scratch_bytes + 63) / 64 * 64 + 64);
    assert_non_null(c);
    assert_non_null(pb);
    assert_non_null(scratch);
    tc__gemm_bf16_pack_b(k, n, b, n, pb);
    for (size_t i = 0; i < m * ldc + 1; i++)
        c[i] = 1234.5f;
    tc__gemm_bf16_run(m, n, k, a, lda, pb, c, ldc, use_bias ? bias : NULL, relu, scratch);
    char what[128];
    snprintf(what, sizeof what, "run m=%zu n=%zu k=%zu bias=%d relu=%d", m, n, k, use_bias, relu);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < ldc; j++) {
            if (j >= n) {
                if (c[i * ldc + j] != 1234.5f) fail_msg("%s: wrote past row %zu at column %zu", what, i, j);
                continue;
            }
            const ref_elem e = reference(k, a + i * lda, b, n, j, use_bias ? bias : NULL, relu, NULL);
            check_elem(c[i * ldc + j], &e, what, i, j);
        }
    free(a);
    free(b);
    free(bias);
    free(c);
    free(pb);
    free(scratch);
}

static const size_t kShapeSizes[] = {1, 2, 3, 7, 13, 16, 17, 31, 32, 33, 48, 64, 97, 128};

static void test_run_shapes(void **state) {
    (void)state;
    if (!bf16_ok()) skip();
    dtu_rng r = {0x5eed0005u};
    static const size_t kK[] = {1, 2, 3, 7, 16, 17, 33, 97};
    const size_t ns = sizeof kShapeSizes / sizeof kShapeSizes[0];
    for (size_t mi = 0; mi < ns; mi++)
        for (size_t ni = 0; ni < ns; ni++)
            for (size_t ki = 0; ki < sizeof kK / sizeof kK[0]; ki++) {
                const size_t v = mi + 2 * ni + 3 * ki;
                check_run(&r, kShapeSizes[mi], kShapeSizes[ni], kK[ki], v % 2 == 0, v % 3 == 0);
            }
}

/* Large and odd K (several K blocks, the last one odd) and BERT-like sizes. */
static void test_run_large(void **state) {
    (void)state;
    if (!bf16_ok()) skip();
    dtu_rng r = {0x5eed0006u};
    static const size_t kShapes[][3] = {
        {128, 768, 768}, {33, 97, 3072}, {97, 33, 3071}, {1, 768, 3072}, {17, 48, 768}, {768, 3, 64},
        {13, 64, 769},   {2, 31, 2305},  {64, 128, 577}, {3, 768, 128},  {48, 17, 1537},
    };
    for (size_t s = 0; s < sizeof kShapes / sizeof kShapes[0]; s++)
        check_run(&r, kShapes[s][0], kShapes[s][1], kShapes[s][2], s % 2 == 0, s % 3 != 1);
}

/* K = 0: C = relu(bias) or 0, A never read. */
static void test_run_empty_k(void **state) {
    (void)state;
    if (!bf16_ok()) skip();
    const size_t m = 3, n = 37;
    float bias[37], c[3 * 37];
    for (size_t j = 0; j < n; j++)
        bias[j] = (float)j - 18.0f;
    uint16_t pb[1] = {0};
    unsigned char scratch[64];
    assert_true(tc__gemm_bf16_scratch_bytes(m, 0) <= sizeof scratch);
    for (int relu = 0; relu < 2; relu++) {
        for (size_t i = 0; i < m * n; i++)
            c[i] = NAN;
        tc__gemm_bf16_run(m, n, 0, NULL, 0, pb, c, n, bias, relu, scratch);
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++)
                assert_true(c[i * n + j] == (relu && bias[j] < 0.0f ? 0.0f : bias[j]));
        tc__gemm_bf16_run(m, n, 0, NULL, 0, pb, c, n, NULL, relu, scratch);
        for (size_t i = 0; i < m * n; i++)
            assert_true(c[i] == 0.0f);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_convert_special),   cmocka_unit_test(test_convert_random),
        cmocka_unit_test(test_pack_layout),       cmocka_unit_test(test_microkernel_tiles),
        cmocka_unit_test(test_microkernel_epilogue), cmocka_unit_test(test_run_shapes),
        cmocka_unit_test(test_run_large),         cmocka_unit_test(test_run_empty_k),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
