/*
 * test_ref_einsum.c - Einsum: equation parsing and validation, shape inference
 * (symbolic dims, implicit outputs) and the reference kernel on random shapes
 * against formulas written out here for each pattern (batched matmul,
 * attention scores, transpose, traces and diagonals, ellipsis with
 * broadcasting, three operands, outer products, implicit output); hand-computed
 * cases; refusals of malformed equations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/einsum_eq.h"
#include "dense_test_util.h"

static tc__tensor run_eq(const char *eq, int n_in, const tc__tensor *const *in) {
    tc__attr a = dtu_attr_string("equation", eq);
    tc__tensor y;
    dtu_run_ok(DTU_OP(Einsum), 12, &a, 1, n_in, in, 1, &y);
    return y;
}

static void fails_eq(const char *eq, int n_in, const tc__tensor *const *in, const char *needle) {
    tc__attr a = dtu_attr_string("equation", eq);
    dtu_run_fails(DTU_OP(Einsum), 12, &a, 1, n_in, in, 1, TC_STATUS_INVALID_ARGUMENT, needle);
}

/* Compares y with want (n values), after checking the data are not all zero. */
static void check_values(const tc__tensor *y, const double *want, int64_t n, double tol, const char *what) {
    assert_int_equal(tc__tensor_numel(y), n);
    double mx = 0;
    for (int64_t i = 0; i < n; i++) mx = fmax(mx, fabs(want[i]));
    assert_true(mx > 0.01);
    dtu_assert_values(y, want, tol, what);
}

static int64_t rnd(dtu_rng *r, int64_t lo, int64_t hi) { return lo + (int64_t)(dtu_next(r) % (uint64_t)(hi - lo + 1)); }

static void test_einsum_matmul_patterns(void **state) {
    (void)state;
    dtu_rng r = {11};
    for (int t = 0; t < 6; t++) {
        const tc_dtype dt = t == 5 ? TC_DTYPE_FLOAT64 : TC_DTYPE_FLOAT32;
        const double tol = dt == TC_DTYPE_FLOAT64 ? 1e-12 : 1e-5;
        /* bij,bjk->bik */
        const int64_t B = rnd(&r, 1, 3), I = rnd(&r, 1, 5), J = rnd(&r, 1, 6), K = rnd(&r, 1, 4);
        tc__tensor a = dtu_random(&r, dt, 3, (int64_t[]){B, I, J}), b = dtu_random(&r, dt, 3, (int64_t[]){B, J, K});
        const tc__tensor *in[2] = {&a, &b};
        tc__tensor y = run_eq(t % 2 ? "bij, bjk -> bik" : "bij,bjk->bik", 2, in);
        dtu_assert_shape(&y, 3, (int64_t[]){B, I, K});
        double *w = calloc((size_t)(B * I * K), sizeof(double));
        for (int64_t bb = 0; bb < B; bb++)
            for (int64_t i = 0; i < I; i++)
                for (int64_t k = 0; k < K; k++)
                    for (int64_t j = 0; j < J; j++)
                        w[(bb * I + i) * K + k] += dtu_get(&a, (bb * I + i) * J + j) * dtu_get(&b, (bb * J + j) * K + k);
        check_values(&y, w, B * I * K, tol, "bij,bjk->bik");
        tc__tensor_free(&y);
        /* implicit "ij,jk" on the first batch's shapes: ik */
        tc__tensor a2 = dtu_random(&r, dt, 2, (int64_t[]){I, J}), b2 = dtu_random(&r, dt, 2, (int64_t[]){J, K});
        const tc__tensor *in2[2] = {&a2, &b2};
        y = run_eq("ij,jk", 2, in2);
        dtu_assert_shape(&y, 2, (int64_t[]){I, K});
        memset(w, 0, (size_t)(I * K) * sizeof(double));
        for (int64_t i = 0; i < I; i++)
            for (int64_t k = 0; k < K; k++)
                for (int64_t j = 0; j < J; j++) w[i * K + k] += dtu_get(&a2, i * J + j) * dtu_get(&b2, j * K + k);
        check_values(&y, w, I * K, tol, "ij,jk");
        tc__tensor_free(&y);
        /* bhid,bhjd->bhij (attention scores) */
        const int64_t H = rnd(&r, 1, 3), D = rnd(&r, 1, 5);
        tc__tensor q = dtu_random(&r, dt, 4, (int64_t[]){B, H, I, D}), k = dtu_random(&r, dt, 4, (int64_t[]){B, H, J, D});
        const tc__tensor *in3[2] = {&q, &k};
        y = run_eq("bhid,bhjd->bhij", 2, in3);
        dtu_assert_shape(&y, 4, (int64_t[]){B, H, I, J});
        double *w2 = calloc((size_t)(B * H * I * J), sizeof(double));
        for (int64_t z = 0; z < B * H; z++)
            for (int64_t i = 0; i < I; i++)
                for (int64_t j = 0; j < J; j++)
                    for (int64_t d = 0; d < D; d++)
                        w2[(z * I + i) * J + j] += dtu_get(&q, (z * I + i) * D + d) * dtu_get(&k, (z * J + j) * D + d);
        check_values(&y, w2, B * H * I * J, tol, "bhid,bhjd->bhij");
        tc__tensor_free(&y);
        free(w2);
        free(w);
        tc__tensor_free(&a);
        tc__tensor_free(&b);
        tc__tensor_free(&a2);
        tc__tensor_free(&b2);
        tc__tensor_free(&q);
        tc__tensor_free(&k);
    }
}

static void test_einsum_unary_patterns(void **state) {
    (void)state;
    dtu_rng r = {12};
    for (int t = 0; t < 5; t++) {
        const int64_t B = rnd(&r, 1, 4), N = rnd(&r, 1, 6), M = rnd(&r, 1, 5);
        tc__tensor x = dtu_random(&r, TC_DTYPE_FLOAT32, 3, (int64_t[]){B, N, N});
        const tc__tensor *in[1] = {&x};
        /* ...ii->...i: batched diagonal */
        tc__tensor y = run_eq("...ii ->...i", 1, in);
        dtu_assert_shape(&y, 2, (int64_t[]){B, N});
        double w[64];
        for (int64_t b = 0; b < B; b++)
            for (int64_t i = 0; i < N; i++) w[b * N + i] = dtu_get(&x, (b * N + i) * N + i);
        check_values(&y, w, B * N, 0, "...ii->...i");
        tc__tensor_free(&y);
        /* bii->b: batched trace; implicit "bii" is "b" too */
        for (int e = 0; e < 2; e++) {
            y = run_eq(e ? "bii" : "bii->b", 1, in);
            dtu_assert_shape(&y, 1, (int64_t[]){B});
            for (int64_t b = 0; b < B; b++) {
                w[b] = 0;
                for (int64_t i = 0; i < N; i++) w[b] += dtu_get(&x, (b * N + i) * N + i);
            }
            check_values(&y, w, B, 1e-6, "bii->b");
            tc__tensor_free(&y);
        }
        tc__tensor_free(&x);
        /* ij->ji, ij->i, ij-> and the implicit transpose "ji" (output "ij": j's size first) */
        tc__tensor m = dtu_random(&r, TC_DTYPE_FLOAT32, 2, (int64_t[]){N, M});
        const tc__tensor *inm[1] = {&m};
        const char *eqs[4] = {"ij->ji", "ji", "ij->i", "ij->"};
        for (int e = 0; e < 4; e++) {
            y = run_eq(eqs[e], 1, inm);
            double s = 0;
            for (int64_t i = 0; i < N; i++) {
                double row = 0;
                for (int64_t j = 0; j < M; j++) {
                    const double v = dtu_get(&m, i * M + j);
                    if (e < 2) w[j * N + i] = v;
                    row += v;
                }
                if (e == 2) w[i] = row;
                s += row;
            }
            if (e == 3) w[0] = s;
            if (e < 2) dtu_assert_shape(&y, 2, (int64_t[]){M, N});
            check_values(&y, w, e < 2 ? N * M : e == 2 ? N : 1, 1e-6, eqs[e]);
            tc__tensor_free(&y);
        }
        tc__tensor_free(&m);
    }
}

static void test_einsum_broadcast_and_three_operands(void **state) {
    (void)state;
    dtu_rng r = {13};
    for (int t = 0; t < 5; t++) {
        const int64_t P = rnd(&r, 2, 3), Q = rnd(&r, 1, 3), I = rnd(&r, 1, 4), J = rnd(&r, 1, 4), K = rnd(&r, 1, 4);
        /* ...ij,...jk->...ik with a [P, 1, I, J] against [Q, J, K]: ellipsis [P, Q] */
        tc__tensor a = dtu_random(&r, TC_DTYPE_FLOAT32, 4, (int64_t[]){P, 1, I, J});
        tc__tensor b = dtu_random(&r, TC_DTYPE_FLOAT32, 3, (int64_t[]){Q, J, K});
        const tc__tensor *in[2] = {&a, &b};
        tc__tensor y = run_eq("...ij,...jk->...ik", 2, in);
        dtu_assert_shape(&y, 4, (int64_t[]){P, Q, I, K});
        double *w = calloc((size_t)(P * Q * I * K), sizeof(double));
        for (int64_t p = 0; p < P; p++)
            for (int64_t q = 0; q < Q; q++)
                for (int64_t i = 0; i < I; i++)
                    for (int64_t k = 0; k < K; k++)
                        for (int64_t j = 0; j < J; j++)
                            w[((p * Q + q) * I + i) * K + k] +=
                                dtu_get(&a, (p * I + i) * J + j) * dtu_get(&b, (q * J + j) * K + k);
        check_values(&y, w, P * Q * I * K, 1e-5, "...ij,...jk->...ik");
        tc__tensor_free(&y);
        free(w);
        /* ij,jk,kl->li: a chain of three, output transposed */
        const int64_t L = rnd(&r, 1, 4);
        tc__tensor c = dtu_random(&r, TC_DTYPE_FLOAT32, 2, (int64_t[]){K, L});
        tc__tensor a2 = dtu_random(&r, TC_DTYPE_FLOAT32, 2, (int64_t[]){I, J});
        tc__tensor b2 = dtu_random(&r, TC_DTYPE_FLOAT32, 2, (int64_t[]){J, K});
        const tc__tensor *in3[3] = {&a2, &b2, &c};
        y = run_eq("ij,jk,kl->li", 3, in3);
        dtu_assert_shape(&y, 2, (int64_t[]){L, I});
        double w3[16] = {0};
        for (int64_t l = 0; l < L; l++)
            for (int64_t i = 0; i < I; i++)
                for (int64_t j = 0; j < J; j++)
                    for (int64_t k = 0; k < K; k++)
                        w3[l * I + i] += dtu_get(&a2, i * J + j) * dtu_get(&b2, j * K + k) * dtu_get(&c, k * L + l);
        check_values(&y, w3, L * I, 1e-5, "ij,jk,kl->li");
        tc__tensor_free(&y);
        /* i,j->ij outer product; "i,i" inner product (implicit scalar) */
        tc__tensor u = dtu_random(&r, TC_DTYPE_FLOAT64, 1, (int64_t[]){I}), v = dtu_random(&r, TC_DTYPE_FLOAT64, 1, (int64_t[]){J});
        tc__tensor u2 = dtu_random(&r, TC_DTYPE_FLOAT64, 1, (int64_t[]){I});
        const tc__tensor *uv[2] = {&u, &v}, *uu[2] = {&u, &u2};
        y = run_eq("i,j->ij", 2, uv);
        for (int64_t i = 0; i < I; i++)
            for (int64_t j = 0; j < J; j++) w3[i * J + j] = dtu_get(&u, i) * dtu_get(&v, j);
        check_values(&y, w3, I * J, 1e-12, "i,j->ij");
        tc__tensor_free(&y);
        y = run_eq("i,i", 2, uu);
        assert_int_equal(y.rank, 0);
        w3[0] = 0;
        for (int64_t i = 0; i < I; i++) w3[0] += dtu_get(&u, i) * dtu_get(&u2, i);
        check_values(&y, w3, 1, 1e-12, "i,i");
        tc__tensor_free(&y);
        tc__tensor_free(&a);
        tc__tensor_free(&b);
        tc__tensor_free(&c);
        tc__tensor_free(&a2);
        tc__tensor_free(&b2);
        tc__tensor_free(&u);
        tc__tensor_free(&v);
        tc__tensor_free(&u2);
    }
}

/* Small cases worked out by hand, integers included. */
static void test_einsum_hand_checked(void **state) {
    (void)state;
    tc__tensor m = dtu_from_f64(TC_DTYPE_FLOAT32, 2, (int64_t[]){2, 2}, (const double[]){1, 2, 3, 4});
    tc__tensor n = dtu_from_f64(TC_DTYPE_FLOAT32, 2, (int64_t[]){2, 2}, (const double[]){5, 6, 7, 8});
    const tc__tensor *mn[2] = {&m, &n}, *mm[1] = {&m};
    tc__tensor y = run_eq("ij,jk->ik", 2, mn);
    dtu_assert_values(&y, (const double[]){19, 22, 43, 50}, 0, "2x2 matmul");
    tc__tensor_free(&y);
    y = run_eq("ii", 1, mm);
    dtu_assert_values(&y, (const double[]){5}, 0, "trace");
    tc__tensor_free(&y);
    y = run_eq("ij,ij->", 2, mn);
    dtu_assert_values(&y, (const double[]){5 + 12 + 21 + 32}, 0, "Frobenius product");
    tc__tensor_free(&y);
    tc__tensor s = dtu_from_f64(TC_DTYPE_FLOAT32, 0, NULL, (const double[]){2.5});
    const tc__tensor *ss[1] = {&s};
    y = run_eq("->", 1, ss);
    assert_int_equal(y.rank, 0);
    dtu_assert_values(&y, (const double[]){2.5}, 0, "scalar");
    tc__tensor_free(&y);
    tc__tensor mi = dtu_from_i64(TC_DTYPE_INT64, 2, (int64_t[]){2, 3}, (const int64_t[]){1, -2, 3, 4, 5, -6});
    const tc__tensor *ii[1] = {&mi};
    y = run_eq("ij->j", 1, ii);
    assert_int_equal(y.dtype, TC_DTYPE_INT64);
    dtu_assert_values(&y, (const double[]){5, 3, -3}, 0, "int64 column sums");
    tc__tensor_free(&y);
    tc__tensor_free(&m);
    tc__tensor_free(&n);
    tc__tensor_free(&s);
    tc__tensor_free(&mi);
}

static void test_einsum_refusals(void **state) {
    (void)state;
    dtu_rng r = {14};
    tc__tensor a = dtu_random(&r, TC_DTYPE_FLOAT32, 2, (int64_t[]){2, 3});
    tc__tensor b = dtu_random(&r, TC_DTYPE_FLOAT32, 2, (int64_t[]){4, 5});
    tc__tensor c3 = dtu_random(&r, TC_DTYPE_FLOAT32, 3, (int64_t[]){2, 3, 3});
    const tc__tensor *a1[1] = {&a}, *ab[2] = {&a, &b}, *c1[1] = {&c3};
    fails_eq("ij,jk->ik", 1, a1, "2 operands but the node has 1 inputs");
    fails_eq("ij", 2, ab, "1 operands but the node has 2 inputs");
    fails_eq("ij,jk->ik", 2, ab, "subscript 'j'");
    fails_eq("i1", 1, a1, "'1' at position 1 is not a letter");
    fails_eq("i\tj", 1, a1, "byte 0x09 at position 1");
    fails_eq("i.j", 1, a1, "not part of an ellipsis");
    fails_eq("....ij", 1, a1, "not part of an ellipsis"); /* the 4th '.' */
    fails_eq("...i...", 1, a1, "two ellipses");
    fails_eq("ij-ji", 1, a1, "is not \"->\"");
    fails_eq("ij>ji", 1, a1, "'>' at position 2");
    fails_eq("ij->jj", 1, a1, "'j' appears twice");
    fails_eq("ij->k", 1, a1, "'k' appears in no operand");
    fails_eq("ij->i->j", 1, a1, "after the output");
    fails_eq("ijk", 1, a1, "rank 2 but the equation gives it 3 subscripts");
    fails_eq("i", 1, a1, "rank 2 but the equation gives it 1 subscripts and no ellipsis");
    fails_eq("...ij->ij", 1, c1, "has no \"...\"");
    fails_eq("abcdefghi", 1, a1, "more than 8 subscripts");
    fails_eq("ij,", 1, a1, "2 operands");
    char longeq[TC__EINSUM_MAX_LEN + 8];
    memset(longeq, ' ', sizeof longeq - 1);
    longeq[sizeof longeq - 1] = '\0';
    longeq[0] = 'i';
    longeq[1] = 'j';
    fails_eq(longeq, 1, a1, "longer than");
    dtu_run_fails(DTU_OP(Einsum), 12, NULL, 0, 1, a1, 1, TC_STATUS_INVALID_ARGUMENT, "equation");
    tc__tensor_free(&a);
    tc__tensor_free(&b);
    tc__tensor_free(&c3);
}

/* Shape inference with symbolic dims and unknown ranks. */
static void test_einsum_infer_symbolic(void **state) {
    (void)state;
    tc__vinfo x, w, out;
    tc__vinfo_init(&x);
    tc__vinfo_init(&w);
    x.dtype = w.dtype = TC_DTYPE_FLOAT32;
    x.shape.rank = 3;
    x.shape.dims[0] = (tc__dim){-1, 0}; /* symbol 0: batch */
    x.shape.dims[1] = (tc__dim){-1, 1}; /* symbol 1: sequence */
    x.shape.dims[2] = tc__dim_known(16);
    w.shape.rank = 2;
    w.shape.dims[0] = tc__dim_unknown();
    w.shape.dims[1] = tc__dim_known(8);
    const tc__vinfo *in[2] = {&x, &w};
    tc__attr at = dtu_attr_string("equation", "bsd,de->bse");
    tc__attrs as = {1, &at};
    tc__err err = {0};
    tc__vinfo_init(&out);
    tc__infer_ctx ctx = {"proj", "Einsum", 12, &as, 2, in, 1, &out, &err};
    if (tc__infer_Einsum(&ctx) != TC_STATUS_OK) fail_msg("%s", err.msg);
    assert_int_equal(out.dtype, TC_DTYPE_FLOAT32);
    assert_int_equal(out.shape.rank, 3);
    assert_true(out.shape.dims[0].value < 0 && out.shape.dims[0].sym == 0);
    assert_true(out.shape.dims[1].value < 0 && out.shape.dims[1].sym == 1);
    assert_int_equal(out.shape.dims[2].value, 8);
    /* ellipsis: [1, s1] broadcast with [s0, s1] keeps the symbols */
    tc__attr at2 = dtu_attr_string("equation", "...d,...d->...");
    tc__attrs as2 = {1, &at2};
    w.shape.rank = 3;
    w.shape.dims[0] = tc__dim_known(1);
    w.shape.dims[1] = (tc__dim){-1, 1};
    w.shape.dims[2] = tc__dim_known(16);
    tc__vinfo_init(&out);
    ctx.attrs = &as2;
    if (tc__infer_Einsum(&ctx) != TC_STATUS_OK) fail_msg("%s", err.msg);
    assert_int_equal(out.shape.rank, 2);
    assert_true(out.shape.dims[0].sym == 0 && out.shape.dims[1].sym == 1);
    /* a known mismatch on a letter fails; an unknown rank leaves an explicit output's rank known */
    w.shape.dims[2] = tc__dim_known(15);
    tc__vinfo_init(&out);
    assert_int_equal(tc__infer_Einsum(&ctx), TC_STATUS_INVALID_ARGUMENT);
    ctx.attrs = &as;
    w.shape.rank = TC__RANK_UNKNOWN;
    tc__vinfo_init(&out);
    if (tc__infer_Einsum(&ctx) != TC_STATUS_OK) fail_msg("%s", err.msg);
    assert_int_equal(out.shape.rank, 3);
    /* mixed dtypes fail */
    w.dtype = TC_DTYPE_FLOAT64;
    tc__vinfo_init(&out);
    assert_int_equal(tc__infer_Einsum(&ctx), TC_STATUS_INVALID_GRAPH);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_einsum_matmul_patterns),
        cmocka_unit_test(test_einsum_unary_patterns),
        cmocka_unit_test(test_einsum_broadcast_and_three_operands),
        cmocka_unit_test(test_einsum_hand_checked),
        cmocka_unit_test(test_einsum_refusals),
        cmocka_unit_test(test_einsum_infer_symbolic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
