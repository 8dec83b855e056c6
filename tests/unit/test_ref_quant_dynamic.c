/*
 * test_ref_quant_dynamic.c - reference DynamicQuantizeLinear, MatMulInteger and ConvInteger and their inference:
 * the ONNX documentation's DynamicQuantizeLinear example and random ranges (all positive, all negative, mixed)
 * against the formula; MatMulInteger and ConvInteger on random 8-bit operands over the whole range with per-tensor,
 * per-row / per-column / per-channel zero points, batches, padding, strides and groups against plain loops written
 * here; the refusals (NaN input, int32 overflow, zero points of the wrong shape or type, float operands).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dense_test_util.h"

/* A tensor of random 8-bit values over the whole range of dt (uint8 or int8). */
static tc__tensor random8(dtu_rng *r, tc_dtype dt, int32_t rank, const int64_t *dims) {
    tc__tensor t = dtu_tensor(dt, rank, dims);
    for (int64_t i = 0; i < tc__tensor_numel(&t); i++)
        tc__tensor_set_i64(&t, i, (int64_t)(dtu_next(r) % 256) - (dt == TC_DTYPE_INT8 ? 128 : 0));
    return t;
}

/* ---- DynamicQuantizeLinear ----------------------------------------------------------------- */

static void test_dql_documented(void **state) {
    (void)state;
    const int64_t n = 6;
    const double xv[6] = {0, 2, -3, -2.5, 1.34, 0.5};
    tc__tensor x = dtu_from_f64(TC_DTYPE_FLOAT32, 1, &n, xv), y[3];
    const tc__tensor *in[1] = {&x};
    dtu_run_ok(DTU_OP(DynamicQuantizeLinear), 11, NULL, 0, 1, in, 3, y);
    const double want[6] = {153, 255, 0, 26, 221, 179};
    assert_int_equal(y[0].dtype, TC_DTYPE_UINT8);
    dtu_assert_values(&y[0], want, 0, "y");
    assert_int_equal(y[1].rank, 0);
    assert_float_equal(*(float *)y[1].data, 5.0f / 255.0f, 0);
    assert_int_equal(*(uint8_t *)y[2].data, 153);
    for (int i = 0; i < 3; i++) tc__tensor_free(&y[i]);
    tc__tensor_free(&x);
}

static void test_dql_random(void **state) {
    (void)state;
    dtu_rng r = {5};
    const double ranges[4][2] = {{-3.0, 5.0}, {0.25, 7.0}, {-9.0, -0.5}, {-1e-3, 2e-3}};
    for (int k = 0; k < 4; k++) {
        const int64_t dims[3] = {2, 3, 17};
        tc__tensor x = dtu_tensor(TC_DTYPE_FLOAT32, 3, dims), y[3];
        float *xv = x.data;
        for (int64_t i = 0; i < 102; i++) xv[i] = (float)dtu_uniform(&r, ranges[k][0], ranges[k][1]);
        const tc__tensor *in[1] = {&x};
        dtu_run_ok(DTU_OP(DynamicQuantizeLinear), 11, NULL, 0, 1, in, 3, y);
        float lo = 0, hi = 0;
        for (int64_t i = 0; i < 102; i++) lo = fminf(lo, xv[i]), hi = fmaxf(hi, xv[i]);
        const float scale = (hi - lo) / 255.0f;
        const float zp = rintf(fminf(255.0f, fmaxf(0.0f, -lo / scale)));
        assert_float_equal(*(float *)y[1].data, scale, 0);
        assert_int_equal(*(uint8_t *)y[2].data, (uint8_t)zp);
        bool low = false, top = false; /* the range's ends reach the code's ends */
        for (int64_t i = 0; i < 102; i++) {
            const float q = fminf(255.0f, fmaxf(0.0f, rintf(xv[i] / scale) + zp));
            assert_int_equal(((uint8_t *)y[0].data)[i], (uint8_t)q);
            /* dequantized, every value is within half a step of x */
            assert_true(fabs(((double)q - zp) * scale - xv[i]) <= 0.5001 * scale);
            low = low || q == 0, top = top || q == 255;
        }
        assert_true(low || zp == 0);
        assert_true(top || zp == 255);
        for (int i = 0; i < 3; i++) tc__tensor_free(&y[i]);
        tc__tensor_free(&x);
    }
}

static void test_dql_refusals(void **state) {
    (void)state;
    const int64_t n = 3;
    const double xv[3] = {1.0, NAN, -2.0};
    tc__tensor x = dtu_from_f64(TC_DTYPE_FLOAT32, 1, &n, xv);
    const tc__tensor *in[1] = {&x};
    dtu_run_fails(DTU_OP(DynamicQuantizeLinear), 11, NULL, 0, 1, in, 3, TC_STATUS_INVALID_ARGUMENT, "NaN or infinity");
    dtu_run_fails(DTU_OP(DynamicQuantizeLinear), 11, NULL, 0, 1, in, 2, TC_STATUS_INVALID_GRAPH, "expected 3");
    tc__tensor_free(&x);
    tc__tensor d = dtu_from_f64(TC_DTYPE_FLOAT64, 1, &n, (const double[]){1, 2, 3});
    in[0] = &d;
    dtu_run_fails(DTU_OP(DynamicQuantizeLinear), 11, NULL, 0, 1, in, 3, TC_STATUS_UNSUPPORTED, "float32");
    tc__tensor_free(&d);
}

/* ---- MatMulInteger --------------------------------------------------------------------------- */

/* za: NULL, one value or per row of A's matrices ([M]); zb: NULL, one value or per column ([N]). A [batch, M, K]
 * or [M, K], B [K, N] (shared by the batch). */
static void check_mmi(uint64_t seed, tc_dtype ta, tc_dtype tb, int64_t batch, int64_t m, int64_t k, int64_t n,
                      int za_kind, int zb_kind) {
    dtu_rng r = {seed};
    const int64_t ad[3] = {batch, m, k}, bd[2] = {k, n};
    const int32_t ar = batch > 0 ? 3 : 2;
    tc__tensor a = random8(&r, ta, ar, batch > 0 ? ad : ad + 1), b = random8(&r, tb, 2, bd);
    const int64_t zan = za_kind == 2 ? m : 1, zbn = zb_kind == 2 ? n : 1;
    tc__tensor za = random8(&r, ta, za_kind == 2 ? 1 : 0, &zan), zb = random8(&r, tb, zb_kind == 2 ? 1 : 0, &zbn);
    const tc__tensor *in[4] = {&a, &b, za_kind ? &za : NULL, zb_kind ? &zb : NULL};
    tc__tensor y;
    dtu_run_ok(DTU_OP(MatMulInteger), 10, NULL, 0, 4, in, 1, &y);
    assert_int_equal(y.dtype, TC_DTYPE_INT32);
    const int64_t nb = batch > 0 ? batch : 1;
    double *want = malloc((size_t)(nb * m * n) * sizeof(double));
    double peak = 0;
    for (int64_t t = 0; t < nb; t++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                int64_t s = 0;
                for (int64_t p = 0; p < k; p++) {
                    const int64_t av = tc__tensor_get_i64(&a, (t * m + i) * k + p) -
                                       (za_kind ? tc__tensor_get_i64(&za, za_kind == 2 ? i : 0) : 0);
                    const int64_t bv = tc__tensor_get_i64(&b, p * n + j) -
                                       (zb_kind ? tc__tensor_get_i64(&zb, zb_kind == 2 ? j : 0) : 0);
                    s += av * bv;
                }
                want[(t * m + i) * n + j] = (double)s;
                peak = fmax(peak, fabs((double)s));
            }
    assert_true(peak > 100); /* not all zero */
    dtu_assert_values(&y, want, 0, "MatMulInteger");
    free(want);
    tc__tensor_free(&y);
    tc__tensor_free(&zb);
    tc__tensor_free(&za);
    tc__tensor_free(&b);
    tc__tensor_free(&a);
}

static void test_mmi_random(void **state) {
    (void)state;
    const tc_dtype t8[2] = {TC_DTYPE_UINT8, TC_DTYPE_INT8};
    dtu_rng r = {11};
    for (int c = 0; c < 24; c++) {
        const int64_t batch = (int64_t)(dtu_next(&r) % 3), m = 1 + (int64_t)(dtu_next(&r) % 9);
        const int64_t k = 1 + (int64_t)(dtu_next(&r) % 70), n = 1 + (int64_t)(dtu_next(&r) % 17);
        check_mmi(100 + (uint64_t)c, t8[c % 2], t8[(c / 2) % 2], batch, m, k, n, (c / 4) % 3, (c / 3) % 3);
    }
    check_mmi(7, TC_DTYPE_UINT8, TC_DTYPE_INT8, 2, 33, 768, 65, 1, 2); /* quantize_dynamic's per-channel BERT case */
}

static void test_mmi_refusals(void **state) {
    (void)state;
    dtu_rng r = {3};
    const int64_t ad[2] = {2, 4}, bd[2] = {4, 3}, z2[1] = {2}, z5[1] = {5};
    tc__tensor a = random8(&r, TC_DTYPE_UINT8, 2, ad), b = random8(&r, TC_DTYPE_INT8, 2, bd);
    tc__tensor zb_bad = random8(&r, TC_DTYPE_INT8, 1, z5), zb_u8 = random8(&r, TC_DTYPE_UINT8, 1, z2);
    const tc__tensor *in[4] = {&a, &b, NULL, &zb_bad};
    dtu_run_fails(DTU_OP(MatMulInteger), 10, NULL, 0, 4, in, 1, TC_STATUS_INVALID_ARGUMENT, "b_zero_point has shape");
    in[3] = NULL;
    in[2] = &zb_u8; /* A's zero point of two values for two rows is fine ... */
    tc__tensor y;
    dtu_run_ok(DTU_OP(MatMulInteger), 10, NULL, 0, 4, in, 1, &y);
    tc__tensor_free(&y);
    in[2] = NULL;
    in[3] = &zb_u8; /* ... B's of another type is not */
    dtu_run_fails(DTU_OP(MatMulInteger), 10, NULL, 0, 4, in, 1, TC_STATUS_INVALID_GRAPH, "zero point is uint8");
    tc__tensor f = dtu_random(&r, TC_DTYPE_FLOAT32, 2, bd);
    in[1] = &f;
    in[3] = NULL;
    dtu_run_fails(DTU_OP(MatMulInteger), 10, NULL, 0, 4, in, 1, TC_STATUS_UNSUPPORTED, "B of type float32");
    /* 70000 products of 255 * 127 do not fit int32 */
    const int64_t ld[2] = {1, 70000}, rd[2] = {70000, 1};
    tc__tensor la = dtu_tensor(TC_DTYPE_UINT8, 2, ld), lb = dtu_tensor(TC_DTYPE_INT8, 2, rd);
    memset(la.data, 255, 70000);
    memset(lb.data, 127, 70000);
    const tc__tensor *big[2] = {&la, &lb};
    dtu_run_fails(DTU_OP(MatMulInteger), 10, NULL, 0, 2, big, 1, TC_STATUS_INVALID_ARGUMENT, "int32 result overflows");
    tc__tensor_free(&lb);
    tc__tensor_free(&la);
    tc__tensor_free(&f);
    tc__tensor_free(&zb_u8);
    tc__tensor_free(&zb_bad);
    tc__tensor_free(&b);
    tc__tensor_free(&a);
}

/* ---- ConvInteger ----------------------------------------------------------------------------- */

/* 2-D ConvInteger with pads p, stride s, groups g; per-channel w zero point when per_ch. */
static void check_convi(uint64_t seed, tc_dtype tx, tc_dtype tw, int64_t nb, int64_t c, int64_t h, int64_t w, int64_t m,
                        int64_t kh, int64_t kw, int64_t p, int64_t s, int64_t g, bool per_ch) {
    dtu_rng r = {seed};
    const int64_t xd[4] = {nb, c, h, w}, wd[4] = {m, c / g, kh, kw}, mz[1] = {m};
    tc__tensor x = random8(&r, tx, 4, xd), wt = random8(&r, tw, 4, wd);
    tc__tensor xz = random8(&r, tx, 0, NULL), wz = random8(&r, tw, per_ch ? 1 : 0, mz);
    const int64_t pads[4] = {p, p, p, p}, strides[2] = {s, s};
    tc__attr at[3] = {dtu_attr_ints("pads", pads, 4), dtu_attr_ints("strides", strides, 2), dtu_attr_int("group", g)};
    const tc__tensor *in[4] = {&x, &wt, &xz, &wz};
    tc__tensor y;
    dtu_run_ok(DTU_OP(ConvInteger), 10, at, 3, 4, in, 1, &y);
    const int64_t oh = (h + 2 * p - kh) / s + 1, ow = (w + 2 * p - kw) / s + 1;
    const int64_t yd[4] = {nb, m, oh, ow};
    dtu_assert_shape(&y, 4, yd);
    assert_int_equal(y.dtype, TC_DTYPE_INT32);
    double *want = calloc((size_t)(nb * m * oh * ow), sizeof(double));
    const int64_t x0 = tc__tensor_get_i64(&xz, 0), cg = c / g, mg = m / g;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t o = 0; o < m; o++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    int64_t sum = 0;
                    for (int64_t q = 0; q < cg; q++)
                        for (int64_t u = 0; u < kh; u++)
                            for (int64_t v = 0; v < kw; v++) {
                                const int64_t yy = i * s - p + u, xx = j * s - p + v, ci = (o / mg) * cg + q;
                                if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue; /* padding: X's zero point */
                                const int64_t xv = tc__tensor_get_i64(&x, ((b * c + ci) * h + yy) * w + xx) - x0;
                                const int64_t wv = tc__tensor_get_i64(&wt, ((o * cg + q) * kh + u) * kw + v) -
                                                   tc__tensor_get_i64(&wz, per_ch ? o : 0);
                                sum += xv * wv;
                            }
                    want[((b * m + o) * oh + i) * ow + j] = (double)sum;
                }
    dtu_assert_values(&y, want, 0, "ConvInteger");
    free(want);
    tc__tensor_free(&y);
    tc__tensor_free(&wz);
    tc__tensor_free(&xz);
    tc__tensor_free(&wt);
    tc__tensor_free(&x);
}

static void test_convi_random(void **state) {
    (void)state;
    check_convi(1, TC_DTYPE_UINT8, TC_DTYPE_INT8, 2, 4, 7, 6, 6, 3, 3, 1, 1, 1, true);
    check_convi(2, TC_DTYPE_UINT8, TC_DTYPE_UINT8, 1, 6, 9, 9, 6, 3, 3, 1, 2, 6, false); /* depthwise, stride 2 */
    check_convi(3, TC_DTYPE_INT8, TC_DTYPE_INT8, 1, 4, 5, 8, 8, 1, 1, 0, 1, 2, true);    /* 1x1, 2 groups */
    check_convi(4, TC_DTYPE_UINT8, TC_DTYPE_INT8, 1, 3, 8, 7, 5, 5, 3, 2, 2, 1, true);   /* 5x3 kernel, pads 2 */
}

static void test_convi_refusals(void **state) {
    (void)state;
    dtu_rng r = {9};
    const int64_t xd[4] = {1, 2, 4, 4}, wd[4] = {3, 2, 3, 3}, z2[1] = {2};
    tc__tensor x = random8(&r, TC_DTYPE_UINT8, 4, xd), wt = random8(&r, TC_DTYPE_INT8, 4, wd);
    tc__tensor xz2 = random8(&r, TC_DTYPE_UINT8, 1, z2), wz2 = random8(&r, TC_DTYPE_INT8, 1, z2);
    const tc__tensor *in[4] = {&x, &wt, &xz2, NULL};
    dtu_run_fails(DTU_OP(ConvInteger), 10, NULL, 0, 4, in, 1, TC_STATUS_UNSUPPORTED, "only one is supported");
    in[2] = NULL;
    in[3] = &wz2;
    dtu_run_fails(DTU_OP(ConvInteger), 10, NULL, 0, 4, in, 1, TC_STATUS_INVALID_ARGUMENT, "2 values for 3 output channels");
    tc__tensor_free(&wz2);
    tc__tensor_free(&xz2);
    tc__tensor_free(&wt);
    tc__tensor_free(&x);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dql_documented), cmocka_unit_test(test_dql_random),
        cmocka_unit_test(test_dql_refusals),   cmocka_unit_test(test_mmi_random),
        cmocka_unit_test(test_mmi_refusals),   cmocka_unit_test(test_convi_random),
        cmocka_unit_test(test_convi_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
