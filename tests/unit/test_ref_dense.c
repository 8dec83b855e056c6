/*
 * test_ref_dense.c - reference MatMul (NumPy semantics: batch broadcasting,
 * 1-D promotion, float and integer types), Gemm (transposes, alpha, beta, C
 * broadcasting) and BatchNormalization (inference and training mode) against
 * naive formulas on odd shapes, plus hand-checked examples.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dense_test_util.h"

/* ---- MatMul ------------------------------------------------------------------------- */

/*
 * Naive matmul of a and b, both already of rank >= 2 after promotion (ra/rb/dims given),
 * with broadcasting of the batch dims; writes the full [batch..., M, N] result.
 */
static void naive_matmul(const tc__tensor *a, int ra, const int64_t *ad, const tc__tensor *b, int rb, const int64_t *bd,
                         int nb, const int64_t *batch, double *y) {
    int64_t m = ad[ra - 2], k = ad[ra - 1], n = bd[rb - 1];
    int64_t nbatch = 1;
    for (int i = 0; i < nb; i++) nbatch *= batch[i];
    for (int64_t t = 0; t < nbatch; t++) {
        int64_t idx[TC_MAX_RANK], rem = t;
        for (int i = nb - 1; i >= 0; i--) {
            idx[i] = rem % batch[i];
            rem /= batch[i];
        }
        int64_t aoff = 0, boff = 0;
        for (int i = 0; i < ra - 2; i++) aoff = aoff * ad[i] + (ad[i] == 1 ? 0 : idx[i + nb - (ra - 2)]);
        for (int i = 0; i < rb - 2; i++) boff = boff * bd[i] + (bd[i] == 1 ? 0 : idx[i + nb - (rb - 2)]);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                for (int64_t p = 0; p < k; p++)
                    s += dtu_get(a, aoff * m * k + i * k + p) * dtu_get(b, boff * k * n + p * n + j);
                y[(t * m + i) * n + j] = s;
            }
    }
}

static void check_matmul(uint64_t seed, tc_dtype dt, int ra, const int64_t *ad, int rb, const int64_t *bd, int ry,
                         const int64_t *yd, double tol) {
    dtu_rng r = {seed};
    tc__tensor a = dtu_random(&r, dt, ra, ad), b = dtu_random(&r, dt, rb, bd);
    const tc__tensor *in[2] = {&a, &b};
    tc__tensor y;
    dtu_run_ok(DTU_OP(MatMul), 13, NULL, 0, 2, in, 1, &y);
    dtu_assert_shape(&y, ry, yd);
    assert_int_equal(y.dtype, dt);
    /* promote 1-D operands as NumPy does, then compute naively */
    int64_t ap[TC_MAX_RANK], bp[TC_MAX_RANK];
    int rap = ra, rbp = rb;
    if (ra == 1) {
        ap[0] = 1;
        ap[1] = ad[0];
        rap = 2;
    } else {
        memcpy(ap, ad, sizeof(int64_t) * (size_t)ra);
    }
    if (rb == 1) {
        bp[0] = bd[0];
        bp[1] = 1;
        rbp = 2;
    } else {
        memcpy(bp, bd, sizeof(int64_t) * (size_t)rb);
    }
    int nb = (rap > rbp ? rap : rbp) - 2;
    int64_t batch[TC_MAX_RANK] = {0};
    for (int i = 0; i < nb; i++) {
        int ia = i - (nb - (rap - 2)), ib = i - (nb - (rbp - 2));
        int64_t da = ia >= 0 ? ap[ia] : 1, db = ib >= 0 ? bp[ib] : 1;
        batch[i] = da > db ? da : db;
    }
    double *want = calloc((size_t)tc__tensor_numel(&y) + 1, sizeof(double));
    naive_matmul(&a, rap, ap, &b, rbp, bp, nb, batch, want);
    dtu_assert_values(&y, want, tol, "MatMul");
    free(want);
    tc__tensor_free(&a);
    tc__tensor_free(&b);
    tc__tensor_free(&y);
}

static void test_matmul_2d(void **state) {
    (void)state;
    check_matmul(1, TC_DTYPE_FLOAT32, 2, (int64_t[]){7, 13}, 2, (int64_t[]){13, 5}, 2, (int64_t[]){7, 5}, 1e-6);
    check_matmul(2, TC_DTYPE_FLOAT32, 2, (int64_t[]){1, 1}, 2, (int64_t[]){1, 1}, 2, (int64_t[]){1, 1}, 1e-6);
    check_matmul(3, TC_DTYPE_FLOAT32, 2, (int64_t[]){1, 31}, 2, (int64_t[]){31, 1}, 2, (int64_t[]){1, 1}, 1e-6);
    check_matmul(4, TC_DTYPE_FLOAT64, 2, (int64_t[]){11, 3}, 2, (int64_t[]){3, 17}, 2, (int64_t[]){11, 17}, 1e-12);
    check_matmul(5, TC_DTYPE_FLOAT16, 2, (int64_t[]){5, 7}, 2, (int64_t[]){7, 3}, 2, (int64_t[]){5, 3}, 4e-3);
}

static void test_matmul_batch_broadcast(void **state) {
    (void)state;
    check_matmul(6, TC_DTYPE_FLOAT32, 4, (int64_t[]){3, 1, 4, 6}, 3, (int64_t[]){5, 6, 2}, 4, (int64_t[]){3, 5, 4, 2},
                 1e-6);
    check_matmul(7, TC_DTYPE_FLOAT32, 3, (int64_t[]){2, 3, 7}, 2, (int64_t[]){7, 3}, 3, (int64_t[]){2, 3, 3}, 1e-6);
    check_matmul(8, TC_DTYPE_FLOAT32, 2, (int64_t[]){3, 7}, 4, (int64_t[]){2, 1, 7, 5}, 4, (int64_t[]){2, 1, 3, 5},
                 1e-6);
}

static void test_matmul_1d(void **state) {
    (void)state;
    check_matmul(9, TC_DTYPE_FLOAT32, 1, (int64_t[]){6}, 2, (int64_t[]){6, 3}, 1, (int64_t[]){3}, 1e-6);
    check_matmul(10, TC_DTYPE_FLOAT32, 3, (int64_t[]){2, 4, 6}, 1, (int64_t[]){6}, 2, (int64_t[]){2, 4}, 1e-6);
    check_matmul(11, TC_DTYPE_FLOAT32, 1, (int64_t[]){5}, 1, (int64_t[]){5}, 0, NULL, 1e-6);
    check_matmul(12, TC_DTYPE_FLOAT32, 1, (int64_t[]){7}, 3, (int64_t[]){3, 7, 2}, 2, (int64_t[]){3, 2}, 1e-6);
}

static void test_matmul_int(void **state) {
    (void)state;
    check_matmul(13, TC_DTYPE_INT32, 3, (int64_t[]){2, 5, 7}, 2, (int64_t[]){7, 3}, 3, (int64_t[]){2, 5, 3}, 0);
    check_matmul(14, TC_DTYPE_INT64, 2, (int64_t[]){3, 11}, 2, (int64_t[]){11, 4}, 2, (int64_t[]){3, 4}, 0);
    check_matmul(15, TC_DTYPE_UINT32, 2, (int64_t[]){3, 2}, 2, (int64_t[]){2, 3}, 2, (int64_t[]){3, 3}, 0);
}

static void test_matmul_hand_checked(void **state) {
    (void)state;
    int64_t d[2] = {2, 2};
    tc__tensor a = dtu_from_f64(TC_DTYPE_FLOAT32, 2, d, (const double[]){1, 2, 3, 4});
    tc__tensor b = dtu_from_f64(TC_DTYPE_FLOAT32, 2, d, (const double[]){5, 6, 7, 8});
    const tc__tensor *in[2] = {&a, &b};
    tc__tensor y;
    dtu_run_ok(DTU_OP(MatMul), 13, NULL, 0, 2, in, 1, &y);
    dtu_assert_values(&y, (const double[]){19, 22, 43, 50}, 0, "MatMul 2x2");
    tc__tensor_free(&y);
    tc__tensor c = dtu_from_f64(TC_DTYPE_FLOAT32, 2, (int64_t[]){3, 2}, (const double[]){1, 2, 3, 4, 5, 6});
    const tc__tensor *bad[2] = {&a, &c};
    dtu_run_fails(DTU_OP(MatMul), 13, NULL, 0, 2, bad, 1, TC_STATUS_INVALID_ARGUMENT, "inner");
    tc__tensor_free(&a);
    tc__tensor_free(&b);
    tc__tensor_free(&c);
}

/* ---- Gemm ---------------------------------------------------------------------------------- */

static void check_gemm(uint64_t seed, int64_t m, int64_t k, int64_t n, int ta, int tb, float alpha, float beta,
                       int c_rank, const int64_t *c_dims) {
    dtu_rng r = {seed};
    int64_t ad[2] = {ta ? k : m, ta ? m : k}, bd[2] = {tb ? n : k, tb ? k : n};
    tc__tensor a = dtu_random(&r, TC_DTYPE_FLOAT32, 2, ad), b = dtu_random(&r, TC_DTYPE_FLOAT32, 2, bd);
    tc__tensor c = dtu_random(&r, TC_DTYPE_FLOAT32, c_rank < 0 ? 0 : c_rank, c_dims);
    tc__attr at[4] = {dtu_attr_int("transA", ta), dtu_attr_int("transB", tb), dtu_attr_float("alpha", alpha),
                      dtu_attr_float("beta", beta)};
    const tc__tensor *in[3] = {&a, &b, &c};
    tc__tensor y;
    dtu_run_ok(DTU_OP(Gemm), 13, at, 4, c_rank < 0 ? 2 : 3, in, 1, &y);
    dtu_assert_shape(&y, 2, (int64_t[]){m, n});
    double *want = calloc((size_t)(m * n), sizeof(double));
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t p = 0; p < k; p++) {
                double av = ta ? dtu_get(&a, p * m + i) : dtu_get(&a, i * k + p);
                double bv = tb ? dtu_get(&b, j * k + p) : dtu_get(&b, p * n + j);
                s += av * bv;
            }
            double cv = 0;
            if (c_rank == 0) cv = dtu_get(&c, 0);
            else if (c_rank == 1) cv = dtu_get(&c, c_dims[0] == 1 ? 0 : j);
            else if (c_rank == 2) cv = dtu_get(&c, (c_dims[0] == 1 ? 0 : i) * c_dims[1] + (c_dims[1] == 1 ? 0 : j));
            want[i * n + j] = (double)alpha * s + (c_rank < 0 ? 0.0 : (double)beta * cv);
        }
    dtu_assert_values(&y, want, 1e-6, "Gemm");
    free(want);
    tc__tensor_free(&a);
    tc__tensor_free(&b);
    tc__tensor_free(&c);
    tc__tensor_free(&y);
}

static void test_gemm_random(void **state) {
    (void)state;
    uint64_t seed = 20;
    for (int ta = 0; ta <= 1; ta++)
        for (int tb = 0; tb <= 1; tb++) {
            check_gemm(seed++, 5, 7, 3, ta, tb, 1.0f, 1.0f, -1, NULL);
            check_gemm(seed++, 5, 7, 3, ta, tb, 0.5f, -1.25f, 2, (int64_t[]){5, 3});
            check_gemm(seed++, 1, 13, 11, ta, tb, 2.0f, 0.75f, 1, (int64_t[]){11});
        }
    check_gemm(seed++, 4, 3, 6, 0, 0, 1.0f, 1.0f, 0, NULL);
    check_gemm(seed++, 4, 3, 6, 1, 0, 1.0f, 2.0f, 1, (int64_t[]){1});
    check_gemm(seed++, 4, 3, 6, 0, 1, 1.0f, 2.0f, 2, (int64_t[]){4, 1});
    check_gemm(seed++, 4, 3, 6, 0, 0, 1.0f, 2.0f, 2, (int64_t[]){1, 6});
    check_gemm(seed++, 1, 1, 1, 1, 1, 3.0f, 1.0f, 2, (int64_t[]){1, 1});
}

static void test_gemm_hand_checked(void **state) {
    (void)state;
    tc__tensor a = dtu_from_f64(TC_DTYPE_FLOAT32, 2, (int64_t[]){2, 3}, (const double[]){1, 2, 3, 4, 5, 6});
    tc__tensor b = dtu_from_f64(TC_DTYPE_FLOAT32, 2, (int64_t[]){2, 3}, (const double[]){1, 0, 2, 0, 1, 1});
    tc__tensor c = dtu_from_f64(TC_DTYPE_FLOAT32, 1, (int64_t[]){2}, (const double[]){NAN, 10});
    /* A * B^T = [[7, 5], [16, 11]]; alpha 2; beta 0 ignores C (even its NaN) */
    tc__attr at[3] = {dtu_attr_int("transB", 1), dtu_attr_float("alpha", 2.0f), dtu_attr_float("beta", 0.0f)};
    const tc__tensor *in[3] = {&a, &b, &c};
    tc__tensor y;
    dtu_run_ok(DTU_OP(Gemm), 13, at, 3, 3, in, 1, &y);
    dtu_assert_values(&y, (const double[]){14, 10, 32, 22}, 0, "Gemm transB alpha");
    tc__tensor_free(&y);
    tc__tensor c2 = dtu_from_f64(TC_DTYPE_FLOAT32, 2, (int64_t[]){3, 2}, (const double[]){1, 2, 3, 4, 5, 6});
    const tc__tensor *bad[3] = {&a, &b, &c2};
    dtu_run_fails(DTU_OP(Gemm), 13, at, 1, 3, bad, 1, TC_STATUS_INVALID_ARGUMENT, "broadcast");
    tc__tensor_free(&a);
    tc__tensor_free(&b);
    tc__tensor_free(&c);
    tc__tensor_free(&c2);
}

static void test_gemm_int(void **state) {
    (void)state;
    tc__tensor a = dtu_from_i64(TC_DTYPE_INT32, 2, (int64_t[]){2, 2}, (const int64_t[]){1, -2, 3, 4});
    tc__tensor b = dtu_from_i64(TC_DTYPE_INT32, 2, (int64_t[]){2, 2}, (const int64_t[]){5, 6, -7, 8});
    tc__tensor c = dtu_from_i64(TC_DTYPE_INT32, 1, (int64_t[]){2}, (const int64_t[]){100, -100});
    const tc__tensor *in[3] = {&a, &b, &c};
    tc__tensor y;
    dtu_run_ok(DTU_OP(Gemm), 13, NULL, 0, 3, in, 1, &y);
    dtu_assert_values(&y, (const double[]){119, -110, 87, -50}, 0, "int Gemm");
    tc__tensor_free(&y);
    tc__attr alpha = dtu_attr_float("alpha", 2.0f);
    dtu_run_fails(DTU_OP(Gemm), 13, &alpha, 1, 3, in, 1, TC_STATUS_UNSUPPORTED, "alpha");
    tc__tensor_free(&a);
    tc__tensor_free(&b);
    tc__tensor_free(&c);
}

/* ---- BatchNormalization ---------------------------------------------------------------------- */

static void test_batchnorm_inference(void **state) {
    (void)state;
    dtu_rng r = {40};
    const int64_t shapes[3][4] = {{2, 3, 5, 4}, {7, 3, 1, 1}, {5, 3}};
    const int ranks[3] = {4, 4, 2};
    for (int s = 0; s < 3; s++) {
        tc_dtype dt = s == 1 ? TC_DTYPE_FLOAT64 : TC_DTYPE_FLOAT32;
        tc__tensor x = dtu_random(&r, dt, ranks[s], shapes[s]);
        tc__tensor p[4];
        for (int i = 0; i < 4; i++) p[i] = dtu_random(&r, dt, 1, (int64_t[]){3});
        for (int64_t i = 0; i < 3; i++) tc__tensor_set_f64(&p[3], i, fabs(dtu_get(&p[3], i))); /* var >= 0 */
        tc__attr eps = dtu_attr_float("epsilon", 1e-3f);
        const tc__tensor *in[5] = {&x, &p[0], &p[1], &p[2], &p[3]};
        tc__tensor y;
        dtu_run_ok(DTU_OP(BatchNormalization), 15, &eps, 1, 5, in, 1, &y);
        dtu_assert_shape(&y, ranks[s], shapes[s]);
        int64_t inner = tc__numel(ranks[s] - 2, shapes[s] + 2), n = tc__tensor_numel(&x);
        double *want = calloc((size_t)n, sizeof(double));
        for (int64_t i = 0; i < n; i++) {
            int64_t c = (i / inner) % 3;
            want[i] = dtu_get(&p[0], c) * (dtu_get(&x, i) - dtu_get(&p[2], c)) / sqrt(dtu_get(&p[3], c) + (double)1e-3f) +
                      dtu_get(&p[1], c);
        }
        dtu_assert_values(&y, want, 1e-6, "BatchNormalization");
        free(want);
        tc__tensor_free(&x);
        tc__tensor_free(&y);
        for (int i = 0; i < 4; i++) tc__tensor_free(&p[i]);
    }
}

/* The ONNX documentation example. */
static void test_batchnorm_hand_checked(void **state) {
    (void)state;
    tc__tensor x = dtu_from_f64(TC_DTYPE_FLOAT32, 4, (int64_t[]){1, 2, 1, 3}, (const double[]){-1, 0, 1, 2, 3, 4});
    tc__tensor s = dtu_floats(2, (const double[]){1, 1.5}), b = dtu_floats(2, (const double[]){0, 1});
    tc__tensor mean = dtu_floats(2, (const double[]){0, 3}), var = dtu_floats(2, (const double[]){1, 1.5});
    const tc__tensor *in[5] = {&x, &s, &b, &mean, &var};
    tc__tensor y;
    dtu_run_ok(DTU_OP(BatchNormalization), 9, NULL, 0, 5, in, 1, &y);
    double k0 = 1.0 / sqrt(1.0 + 1e-5), k1 = 1.5 / sqrt(1.5 + 1e-5);
    dtu_assert_values(&y, (const double[]){-k0, 0, k0, 1 - k1, 1, 1 + k1}, 1e-6, "BatchNormalization example");
    tc__tensor_free(&y);
    tc__tensor_free(&x);
    tc__tensor_free(&s);
    tc__tensor_free(&b);
    tc__tensor_free(&mean);
    tc__tensor_free(&var);
}

static void test_batchnorm_training(void **state) {
    (void)state;
    dtu_rng r = {41};
    int64_t xd[4] = {3, 2, 5, 1};
    tc__tensor x = dtu_random(&r, TC_DTYPE_FLOAT32, 4, xd);
    tc__tensor p[4];
    for (int i = 0; i < 4; i++) p[i] = dtu_random(&r, TC_DTYPE_FLOAT32, 1, (int64_t[]){2});
    for (int64_t i = 0; i < 2; i++) tc__tensor_set_f64(&p[3], i, fabs(dtu_get(&p[3], i)));
    tc__attr at[3] = {dtu_attr_int("training_mode", 1), dtu_attr_float("momentum", 0.75f),
                      dtu_attr_float("epsilon", 1e-2f)};
    const tc__tensor *in[5] = {&x, &p[0], &p[1], &p[2], &p[3]};
    tc__tensor y[3];
    dtu_run_ok(DTU_OP(BatchNormalization), 15, at, 3, 5, in, 3, y);
    double want[30], rm[2], rv[2];
    for (int64_t c = 0; c < 2; c++) {
        double sum = 0, sq = 0;
        for (int64_t n = 0; n < 3; n++)
            for (int64_t i = 0; i < 5; i++) sum += dtu_get(&x, (n * 2 + c) * 5 + i);
        double mu = sum / 15;
        for (int64_t n = 0; n < 3; n++)
            for (int64_t i = 0; i < 5; i++) sq += pow(dtu_get(&x, (n * 2 + c) * 5 + i) - mu, 2);
        double var = sq / 15;
        for (int64_t n = 0; n < 3; n++)
            for (int64_t i = 0; i < 5; i++) {
                int64_t j = (n * 2 + c) * 5 + i;
                want[j] = dtu_get(&p[0], c) * (dtu_get(&x, j) - mu) / sqrt(var + (double)1e-2f) + dtu_get(&p[1], c);
            }
        rm[c] = dtu_get(&p[2], c) * 0.75 + mu * 0.25;
        rv[c] = dtu_get(&p[3], c) * 0.75 + var * 0.25;
    }
    dtu_assert_values(&y[0], want, 1e-6, "BatchNormalization training Y");
    dtu_assert_values(&y[1], rm, 1e-6, "running_mean");
    dtu_assert_values(&y[2], rv, 1e-6, "running_var");
    for (int i = 0; i < 3; i++) tc__tensor_free(&y[i]);
    /* Extra outputs without training_mode are invalid. */
    dtu_run_fails(DTU_OP(BatchNormalization), 15, NULL, 0, 5, in, 3, TC_STATUS_INVALID_GRAPH, "training_mode");
    tc__tensor_free(&x);
    for (int i = 0; i < 4; i++) tc__tensor_free(&p[i]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_2d),           cmocka_unit_test(test_matmul_batch_broadcast),
        cmocka_unit_test(test_matmul_1d),           cmocka_unit_test(test_matmul_int),
        cmocka_unit_test(test_matmul_hand_checked), cmocka_unit_test(test_gemm_random),
        cmocka_unit_test(test_gemm_hand_checked),   cmocka_unit_test(test_gemm_int),
        cmocka_unit_test(test_batchnorm_inference), cmocka_unit_test(test_batchnorm_hand_checked),
        cmocka_unit_test(test_batchnorm_training),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
