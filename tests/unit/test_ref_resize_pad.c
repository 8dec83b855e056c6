/*
 * test_ref_resize_pad.c - reference Pad (constant, reflect, edge, wrap,
 * negative pads, axes, the opset-2 attribute form) and Resize (nearest
 * rounding rules, linear, cubic, exclude_outside, antialias, every
 * coordinate_transformation_mode, scales or sizes, axes, keep_aspect_ratio_policy,
 * integer rounding) on small hand-checked cases and random data against
 * naive formulas.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dense_test_util.h"

/* ---- Pad ---------------------------------------------------------------------------------- */

/* Runs Pad (opset 18) on x with pads (and optional axes / constant) and checks the values. */
static void check_pad(const char *mode, const tc__tensor *x, int64_t npads, const int64_t *pads, const tc__tensor *cv,
                      const tc__tensor *axes, int32_t yrank, const int64_t *ydims, const double *want) {
    tc__tensor p = dtu_ints(npads, pads), y;
    tc__attr at = dtu_attr_string("mode", mode);
    const tc__tensor *in[4] = {x, &p, cv, axes};
    dtu_run_ok(DTU_OP(Pad), 18, &at, 1, axes ? 4 : (cv ? 3 : 2), in, 1, &y);
    dtu_assert_shape(&y, yrank, ydims);
    dtu_assert_values(&y, want, 0, mode);
    tc__tensor_free(&y);
    tc__tensor_free(&p);
}

static void test_pad_modes_hand_checked(void **state) {
    (void)state;
    tc__tensor x2 = dtu_from_f64(TC_DTYPE_FLOAT32, 2, (int64_t[]){2, 2}, (const double[]){1, 2, 3, 4});
    tc__tensor nine = dtu_from_f64(TC_DTYPE_FLOAT32, 0, NULL, (const double[]){9});
    check_pad("constant", &x2, 4, (const int64_t[]){1, 0, 0, 2}, &nine, NULL, 2, (int64_t[]){3, 4},
              (const double[]){9, 9, 9, 9, 1, 2, 9, 9, 3, 4, 9, 9});
    check_pad("constant", &x2, 4, (const int64_t[]){0, 1, 1, 0}, NULL, NULL, 2, (int64_t[]){3, 3},
              (const double[]){0, 1, 2, 0, 3, 4, 0, 0, 0});
    tc__tensor x1 = dtu_from_f64(TC_DTYPE_FLOAT32, 1, (int64_t[]){3}, (const double[]){1, 2, 3});
    check_pad("reflect", &x1, 2, (const int64_t[]){2, 2}, NULL, NULL, 1, (int64_t[]){7},
              (const double[]){3, 2, 1, 2, 3, 2, 1});
    check_pad("reflect", &x1, 2, (const int64_t[]){5, 0}, NULL, NULL, 1, (int64_t[]){8},
              (const double[]){2, 1, 2, 3, 2, 1, 2, 3});
    check_pad("edge", &x1, 2, (const int64_t[]){2, 1}, NULL, NULL, 1, (int64_t[]){6}, (const double[]){1, 1, 1, 2, 3, 3});
    check_pad("wrap", &x1, 2, (const int64_t[]){2, 4}, NULL, NULL, 1, (int64_t[]){9},
              (const double[]){2, 3, 1, 2, 3, 1, 2, 3, 1});
    tc__tensor_free(&x2);
    tc__tensor_free(&x1);
    tc__tensor_free(&nine);
}

static void test_pad_negative_and_axes(void **state) {
    (void)state;
    tc__tensor x = dtu_from_f64(TC_DTYPE_FLOAT32, 2, (int64_t[]){2, 4}, (const double[]){1, 2, 3, 4, 5, 6, 7, 8});
    check_pad("constant", &x, 4, (const int64_t[]){0, -1, 0, -1}, NULL, NULL, 2, (int64_t[]){2, 2},
              (const double[]){2, 3, 6, 7});
    /* crop one column at the start, then reflect the cropped rows at the end */
    check_pad("reflect", &x, 4, (const int64_t[]){0, -1, 0, 2}, NULL, NULL, 2, (int64_t[]){2, 5},
              (const double[]){2, 3, 4, 3, 2, 6, 7, 8, 7, 6});
    tc__tensor axes = dtu_ints(1, (const int64_t[]){-2});
    check_pad("edge", &x, 2, (const int64_t[]){1, -1}, NULL, &axes, 2, (int64_t[]){2, 4},
              (const double[]){1, 2, 3, 4, 1, 2, 3, 4});
    tc__tensor_free(&axes);
    tc__tensor_free(&x);
}

/* Pad-2 takes pads and value as attributes; integer data and a constant_value input of its type. */
static void test_pad_attribute_form_and_ints(void **state) {
    (void)state;
    tc__tensor x = dtu_from_i64(TC_DTYPE_INT32, 1, (int64_t[]){2}, (const int64_t[]){7, -8});
    int64_t pads[2] = {1, 2};
    tc__attr at[2] = {dtu_attr_ints("pads", pads, 2), dtu_attr_float("value", 5.0f)};
    const tc__tensor *in[1] = {&x};
    tc__tensor y;
    dtu_run_ok(DTU_OP(Pad), 2, at, 2, 1, in, 1, &y);
    dtu_assert_values(&y, (const double[]){5, 7, -8, 5, 5}, 0, "Pad-2");
    tc__tensor_free(&y);
    tc__tensor cv = dtu_from_i64(TC_DTYPE_INT32, 0, NULL, (const int64_t[]){-3});
    check_pad("constant", &x, 2, (const int64_t[]){0, 1}, &cv, NULL, 1, (int64_t[]){3}, (const double[]){7, -8, -3});
    tc__tensor cf = dtu_from_f64(TC_DTYPE_FLOAT32, 0, NULL, (const double[]){1});
    tc__tensor p = dtu_ints(2, (const int64_t[]){0, 1});
    const tc__tensor *bad[3] = {&x, &p, &cf};
    dtu_run_fails(DTU_OP(Pad), 18, NULL, 0, 3, bad, 1, TC_STATUS_INVALID_GRAPH, "constant_value");
    tc__tensor p2 = dtu_ints(2, (const int64_t[]){0, -3});
    const tc__tensor *crop[2] = {&x, &p2};
    dtu_run_fails(DTU_OP(Pad), 18, NULL, 0, 2, crop, 1, TC_STATUS_INVALID_ARGUMENT, "crop");
    tc__tensor p3 = dtu_ints(2, (const int64_t[]){-2, 1});
    const tc__tensor *all[2] = {&x, &p3};
    tc__attr edge = dtu_attr_string("mode", "edge");
    dtu_run_fails(DTU_OP(Pad), 18, &edge, 1, 2, all, 1, TC_STATUS_INVALID_ARGUMENT, "empty after cropping");
    tc__tensor_free(&p3);
    tc__tensor_free(&x);
    tc__tensor_free(&cv);
    tc__tensor_free(&cf);
    tc__tensor_free(&p);
    tc__tensor_free(&p2);
}

/* Index of padded position i along an axis of cropped length m, by repeated mirroring / shifting. */
static int64_t naive_pad_index(const char *mode, int64_t i, int64_t m) {
    if (mode[0] == 'c') return i >= 0 && i < m ? i : -1;
    if (mode[0] == 'e') return i < 0 ? 0 : (i >= m ? m - 1 : i);
    if (mode[0] == 'w') {
        while (i < 0) i += m;
        while (i >= m) i -= m;
        return i;
    }
    if (m == 1) return 0;
    while (i < 0 || i >= m) {
        if (i < 0) i = -i;
        if (i >= m) i = 2 * (m - 1) - i;
    }
    return i;
}

static void test_pad_random(void **state) {
    (void)state;
    dtu_rng r = {70};
    const char *modes[4] = {"constant", "reflect", "edge", "wrap"};
    int64_t xd[3] = {3, 5, 7};
    tc__tensor x = dtu_random(&r, TC_DTYPE_FLOAT32, 3, xd);
    const int64_t padsets[3][6] = {{1, 0, 3, 2, 4, 1}, {-1, 2, -2, 1, -1, 9}, {0, -4, 5, -2, 3, -6}};
    tc__tensor cv = dtu_from_f64(TC_DTYPE_FLOAT32, 0, NULL, (const double[]){-7.5});
    for (int m = 0; m < 4; m++)
        for (int s = 0; s < 3; s++) {
            const int64_t *pd = padsets[s];
            tc__tensor p = dtu_ints(6, pd), y;
            tc__attr at = dtu_attr_string("mode", modes[m]);
            const tc__tensor *in[3] = {&x, &p, &cv};
            dtu_run_ok(DTU_OP(Pad), 13, &at, 1, 3, in, 1, &y);
            int64_t yd[3], crop[3], len[3];
            for (int d = 0; d < 3; d++) {
                yd[d] = xd[d] + pd[d] + pd[3 + d];
                crop[d] = pd[d] < 0 ? -pd[d] : 0;
                len[d] = xd[d] - crop[d] - (pd[3 + d] < 0 ? -pd[3 + d] : 0);
            }
            dtu_assert_shape(&y, 3, yd);
            int64_t at_i = 0;
            for (int64_t a = 0; a < yd[0]; a++)
                for (int64_t b = 0; b < yd[1]; b++)
                    for (int64_t c = 0; c < yd[2]; c++) {
                        int64_t o[3] = {a, b, c}, off = 0;
                        bool constant = false;
                        for (int d = 0; d < 3; d++) {
                            int64_t lead = pd[d] > 0 ? pd[d] : 0;
                            int64_t i = naive_pad_index(modes[m], o[d] - lead, len[d]);
                            if (i < 0) constant = true;
                            off = off * xd[d] + (i < 0 ? 0 : i + crop[d]);
                        }
                        double want = constant ? -7.5 : dtu_get(&x, off);
                        if (dtu_get(&y, at_i) != want)
                            fail_msg("Pad %s set %d element %lld: got %g want %g", modes[m], s, (long long)at_i,
                                     dtu_get(&y, at_i), want);
                        at_i++;
                    }
            tc__tensor_free(&y);
            tc__tensor_free(&p);
        }
    tc__tensor_free(&x);
    tc__tensor_free(&cv);
}

/* ---- Resize -------------------------------------------------------------------------------- */

typedef struct rs_case {
    const char *mode, *coord, *nearest;
    int exclude_outside, antialias;
    float extrapolation;
} rs_case;

/* Runs Resize (opset 19) with the given strings and one of scales / sizes (and roi). */
static tc__tensor run_resize(const rs_case *c, const tc__tensor *x, int64_t n, const double *scales,
                             const int64_t *sizes, const double *roi) {
    tc__attr at[6];
    int na = 0;
    at[na++] = dtu_attr_string("mode", c->mode);
    if (c->coord) at[na++] = dtu_attr_string("coordinate_transformation_mode", c->coord);
    if (c->nearest) at[na++] = dtu_attr_string("nearest_mode", c->nearest);
    at[na++] = dtu_attr_int("exclude_outside", c->exclude_outside);
    at[na++] = dtu_attr_int("antialias", c->antialias);
    at[na++] = dtu_attr_float("extrapolation_value", c->extrapolation);
    tc__tensor troi = roi ? dtu_floats(2 * n, roi) : dtu_floats(0, NULL);
    tc__tensor tsc = scales ? dtu_floats(n, scales) : dtu_floats(0, NULL);
    tc__tensor tsz = sizes ? dtu_ints(n, sizes) : dtu_ints(0, NULL);
    const tc__tensor *in[4] = {x, &troi, &tsc, &tsz};
    tc__tensor y;
    dtu_run_ok(DTU_OP(Resize), 19, at, na, sizes ? 4 : 3, in, 1, &y);
    tc__tensor_free(&troi);
    tc__tensor_free(&tsc);
    tc__tensor_free(&tsz);
    return y;
}

static void test_resize_nearest_modes(void **state) {
    (void)state;
    tc__tensor x = dtu_from_f64(TC_DTYPE_FLOAT32, 1, (int64_t[]){4}, (const double[]){10, 20, 30, 40});
    const char *modes[4] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    /* asymmetric: x_original = o / scale */
    const double want2[4][8] = {{10, 10, 20, 20, 30, 30, 40, 40},
                                {10, 20, 20, 30, 30, 40, 40, 40},
                                {10, 10, 20, 20, 30, 30, 40, 40},
                                {10, 20, 20, 30, 30, 40, 40, 40}};
    const double want15[4][6] = {{10, 20, 20, 30, 40, 40},
                                 {10, 20, 20, 30, 40, 40},
                                 {10, 10, 20, 30, 30, 40},
                                 {10, 20, 30, 30, 40, 40}};
    for (int m = 0; m < 4; m++) {
        rs_case c = {"nearest", "asymmetric", modes[m], 0, 0, 0};
        tc__tensor y = run_resize(&c, &x, 1, (const double[]){2.0}, NULL, NULL);
        dtu_assert_values(&y, want2[m], 0, modes[m]);
        tc__tensor_free(&y);
        y = run_resize(&c, &x, 1, (const double[]){1.5}, NULL, NULL);
        dtu_assert_values(&y, want15[m], 0, modes[m]);
        tc__tensor_free(&y);
    }
    tc__tensor_free(&x);
    /* The ONNX example: 2x2 upsampled by 2x3 with the defaults. */
    tc__tensor x4 = dtu_from_f64(TC_DTYPE_FLOAT32, 4, (int64_t[]){1, 1, 2, 2}, (const double[]){1, 2, 3, 4});
    rs_case c = {"nearest", NULL, NULL, 0, 0, 0};
    tc__tensor y = run_resize(&c, &x4, 4, (const double[]){1, 1, 2, 3}, NULL, NULL);
    dtu_assert_shape(&y, 4, (int64_t[]){1, 1, 4, 6});
    dtu_assert_values(&y, (const double[]){1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}, 0,
                      "nearest 2x3");
    tc__tensor_free(&y);
    tc__tensor_free(&x4);
}

static void test_resize_linear_coordinate_modes(void **state) {
    (void)state;
    tc__tensor x = dtu_from_f64(TC_DTYPE_FLOAT32, 1, (int64_t[]){4}, (const double[]){1, 2, 3, 4});
    rs_case hp = {"linear", "half_pixel", NULL, 0, 0, 0};
    tc__tensor y = run_resize(&hp, &x, 1, (const double[]){2.0}, NULL, NULL);
    dtu_assert_values(&y, (const double[]){1, 1.25, 1.75, 2.25, 2.75, 3.25, 3.75, 4}, 1e-7, "linear half_pixel");
    tc__tensor_free(&y);
    rs_case ac = {"linear", "align_corners", NULL, 0, 0, 0};
    y = run_resize(&ac, &x, 1, NULL, (const int64_t[]){7}, NULL);
    dtu_assert_values(&y, (const double[]){1, 1.5, 2, 2.5, 3, 3.5, 4}, 1e-7, "linear align_corners");
    tc__tensor_free(&y);
    /* one output: pytorch_half_pixel samples 0, half_pixel samples 1.5 */
    rs_case php = {"linear", "pytorch_half_pixel", NULL, 0, 0, 0};
    y = run_resize(&php, &x, 1, NULL, (const int64_t[]){1}, NULL);
    dtu_assert_values(&y, (const double[]){1}, 1e-7, "linear pytorch_half_pixel");
    tc__tensor_free(&y);
    y = run_resize(&hp, &x, 1, NULL, (const int64_t[]){1}, NULL);
    dtu_assert_values(&y, (const double[]){2.5}, 1e-7, "linear half_pixel size 1");
    tc__tensor_free(&y);
    /* roi [0.4, 1.2]: x_original = 1.2 o + 1.2 -> 1.2, 2.4, 3.6 (outside: extrapolated) */
    rs_case tf = {"linear", "tf_crop_and_resize", NULL, 0, 0, 10.0f};
    y = run_resize(&tf, &x, 1, NULL, (const int64_t[]){3}, (const double[]){0.4, 1.2});
    dtu_assert_values(&y, (const double[]){2.2, 3.4, 10}, 1e-6, "tf_crop_and_resize");
    tc__tensor_free(&y);
    tc__tensor_free(&x);
}

static void test_resize_cubic_and_antialias(void **state) {
    (void)state;
    tc__tensor x = dtu_from_f64(TC_DTYPE_FLOAT32, 1, (int64_t[]){4}, (const double[]){1, 2, 3, 4});
    /* Keys kernel, a = -0.75: weights 0.59375 at distance 0.5 and -0.09375 at 1.5 */
    rs_case cu = {"cubic", "asymmetric", NULL, 0, 0, 0};
    tc__tensor y = run_resize(&cu, &x, 1, (const double[]){2.0}, NULL, NULL);
    dtu_assert_values(&y, (const double[]){1, 1.40625, 2, 2.5, 3, 3.59375, 4, 4.09375}, 1e-6, "cubic");
    tc__tensor_free(&y);
    /* exclude_outside drops taps outside the input and renormalises: 1.5 / 1.09375 */
    rs_case ex = {"cubic", "asymmetric", NULL, 1, 0, 0};
    y = run_resize(&ex, &x, 1, (const double[]){2.0}, NULL, NULL);
    dtu_assert_values(&y, (const double[]){1, 1.5 / 1.09375, 2, 2.5, 3, 3.62857143, 4, 4.1875}, 1e-6,
                      "cubic exclude_outside");
    tc__tensor_free(&y);
    tc__tensor_free(&x);
    /* antialiased linear halving: triangle of half-width 2, weights 1/8 3/8 3/8 1/8 */
    double v8[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    tc__tensor x8 = dtu_from_f64(TC_DTYPE_FLOAT32, 1, (int64_t[]){8}, v8);
    rs_case aa = {"linear", NULL, NULL, 0, 1, 0};
    y = run_resize(&aa, &x8, 1, (const double[]){0.5}, NULL, NULL);
    dtu_assert_values(&y, (const double[]){1.625, 3.5, 5.5, 7.375}, 1e-6, "linear antialias");
    tc__tensor_free(&y);
    tc__tensor_free(&x8);
}

/* Bilinear (half_pixel) on random 4-D data against the textbook formula with clamped coordinates. */
static void test_resize_bilinear_random(void **state) {
    (void)state;
    dtu_rng r = {80};
    int64_t xd[4] = {2, 3, 5, 7};
    tc__tensor x = dtu_random(&r, TC_DTYPE_FLOAT32, 4, xd);
    const double scales[4] = {1, 1, 1.6, 0.75};
    rs_case c = {"linear", NULL, NULL, 0, 0, 0};
    tc__tensor y = run_resize(&c, &x, 4, scales, NULL, NULL);
    int64_t oh = 8, ow = 5; /* floor(5 * 1.6), floor(7 * 0.75) */
    dtu_assert_shape(&y, 4, (int64_t[]){2, 3, oh, ow});
    int64_t at = 0;
    for (int64_t p = 0; p < 6; p++)
        for (int64_t h = 0; h < oh; h++)
            for (int64_t w = 0; w < ow; w++) {
                double fh = fmin(fmax(((double)h + 0.5) / 1.6 - 0.5, 0.0), 4.0);
                double fw = fmin(fmax(((double)w + 0.5) / 0.75 - 0.5, 0.0), 6.0);
                int64_t h0 = (int64_t)floor(fh), w0 = (int64_t)floor(fw);
                int64_t h1 = h0 + 1 < 5 ? h0 + 1 : 4, w1 = w0 + 1 < 7 ? w0 + 1 : 6;
                double lh = fh - (double)h0, lw = fw - (double)w0;
                const int64_t base = p * 35;
                double want = (1 - lh) * (1 - lw) * dtu_get(&x, base + h0 * 7 + w0) +
                              (1 - lh) * lw * dtu_get(&x, base + h0 * 7 + w1) +
                              lh * (1 - lw) * dtu_get(&x, base + h1 * 7 + w0) + lh * lw * dtu_get(&x, base + h1 * 7 + w1);
                double got = dtu_get(&y, at++);
                if (fabs(got - want) > 1e-5) fail_msg("bilinear at %lld: got %g want %g", (long long)at - 1, got, want);
            }
    tc__tensor_free(&y);
    tc__tensor_free(&x);
}

static void test_resize_sizes_axes_policy(void **state) {
    (void)state;
    tc__tensor x = dtu_from_f64(TC_DTYPE_FLOAT32, 4, (int64_t[]){1, 1, 2, 4}, (const double[]){1, 2, 3, 4, 5, 6, 7, 8});
    const tc__tensor *roi = NULL;
    tc__tensor sizes = dtu_ints(2, (const int64_t[]){4, 4});
    tc__tensor empty = dtu_floats(0, NULL);
    int64_t axes[2] = {2, 3};
    const struct {
        const char *policy;
        int64_t h, w;
    } cases[3] = {{"stretch", 4, 4}, {"not_larger", 2, 4}, {"not_smaller", 4, 8}};
    for (int i = 0; i < 3; i++) {
        tc__attr at[2] = {dtu_attr_ints("axes", axes, 2), dtu_attr_string("keep_aspect_ratio_policy", cases[i].policy)};
        const tc__tensor *in[4] = {&x, roi, &empty, &sizes};
        tc__tensor y;
        dtu_run_ok(DTU_OP(Resize), 18, at, 2, 4, in, 1, &y);
        dtu_assert_shape(&y, 4, (int64_t[]){1, 1, cases[i].h, cases[i].w});
        tc__tensor_free(&y);
    }
    /* not_smaller doubles both axes: nearest (half_pixel, round_prefer_floor) repeats each element twice */
    tc__attr at[2] = {dtu_attr_ints("axes", axes, 2), dtu_attr_string("keep_aspect_ratio_policy", "not_smaller")};
    const tc__tensor *in[4] = {&x, NULL, NULL, &sizes};
    tc__tensor y;
    dtu_run_ok(DTU_OP(Resize), 18, at, 2, 4, in, 1, &y);
    for (int64_t h = 0; h < 4; h++)
        for (int64_t w = 0; w < 8; w++) assert_true(dtu_get(&y, h * 8 + w) == dtu_get(&x, (h / 2) * 4 + w / 2));
    tc__tensor_free(&y);
    /* scales on one axis only */
    int64_t ax3[1] = {3};
    tc__tensor sc = dtu_floats(1, (const double[]){0.5});
    tc__attr a1 = dtu_attr_ints("axes", ax3, 1);
    const tc__tensor *in1[3] = {&x, NULL, &sc};
    dtu_run_ok(DTU_OP(Resize), 18, &a1, 1, 3, in1, 1, &y);
    dtu_assert_shape(&y, 4, (int64_t[]){1, 1, 2, 2});
    /* half_pixel 0.5: x_original = 2 o + 0.5 -> round_prefer_floor 0, 2 */
    dtu_assert_values(&y, (const double[]){1, 3, 5, 7}, 0, "nearest axes [3]");
    tc__tensor_free(&y);
    tc__tensor_free(&sc);
    tc__tensor_free(&sizes);
    tc__tensor_free(&empty);
    tc__tensor_free(&x);
}

static void test_resize_legacy_and_ints(void **state) {
    (void)state;
    /* Resize-10: (X, scales), asymmetric, nearest floors when upsampling */
    tc__tensor x = dtu_from_f64(TC_DTYPE_FLOAT32, 1, (int64_t[]){3}, (const double[]){1, 2, 3});
    tc__tensor sc = dtu_floats(1, (const double[]){2});
    const tc__tensor *in[2] = {&x, &sc};
    tc__tensor y;
    dtu_run_ok(DTU_OP(Resize), 10, NULL, 0, 2, in, 1, &y);
    dtu_assert_values(&y, (const double[]){1, 1, 2, 2, 3, 3}, 0, "Resize-10");
    tc__tensor_free(&y);
    /* uint8 linear rounds half to even after interpolating: 63.75 -> 64, 191.25 -> 191 */
    tc__tensor xu = dtu_from_i64(TC_DTYPE_UINT8, 1, (int64_t[]){2}, (const int64_t[]){0, 255});
    rs_case c = {"linear", NULL, NULL, 0, 0, 0};
    y = run_resize(&c, &xu, 1, (const double[]){2}, NULL, NULL);
    assert_int_equal(y.dtype, TC_DTYPE_UINT8);
    dtu_assert_values(&y, (const double[]){0, 64, 191, 255}, 0, "uint8 linear");
    tc__tensor_free(&y);
    tc__tensor_free(&xu);
    tc__tensor_free(&x);
    tc__tensor_free(&sc);
}

static void test_resize_errors(void **state) {
    (void)state;
    tc__tensor x = dtu_from_f64(TC_DTYPE_FLOAT32, 1, (int64_t[]){3}, (const double[]){1, 2, 3});
    tc__tensor sc = dtu_floats(1, (const double[]){2}), sz = dtu_ints(1, (const int64_t[]){6});
    const tc__tensor *both[4] = {&x, NULL, &sc, &sz};
    dtu_run_fails(DTU_OP(Resize), 13, NULL, 0, 4, both, 1, TC_STATUS_INVALID_ARGUMENT, "scales");
    const tc__tensor *none[2] = {&x, NULL};
    dtu_run_fails(DTU_OP(Resize), 13, NULL, 0, 2, none, 1, TC_STATUS_INVALID_ARGUMENT, "sizes");
    const tc__tensor *one[3] = {&x, NULL, &sc};
    tc__attr bad = dtu_attr_string("mode", "bicubic");
    dtu_run_fails(DTU_OP(Resize), 13, &bad, 1, 3, one, 1, TC_STATUS_INVALID_ARGUMENT, "bicubic");
    tc__attr aa[2] = {dtu_attr_string("mode", "nearest"), dtu_attr_int("antialias", 1)};
    dtu_run_fails(DTU_OP(Resize), 18, aa, 2, 3, one, 1, TC_STATUS_INVALID_ARGUMENT, "antialias");
    tc__attr tf = dtu_attr_string("coordinate_transformation_mode", "tf_crop_and_resize");
    dtu_run_fails(DTU_OP(Resize), 13, &tf, 1, 3, one, 1, TC_STATUS_INVALID_ARGUMENT, "roi");
    tc__tensor_free(&x);
    tc__tensor_free(&sc);
    tc__tensor_free(&sz);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pad_modes_hand_checked),
        cmocka_unit_test(test_pad_negative_and_axes),
        cmocka_unit_test(test_pad_attribute_form_and_ints),
        cmocka_unit_test(test_pad_random),
        cmocka_unit_test(test_resize_nearest_modes),
        cmocka_unit_test(test_resize_linear_coordinate_modes),
        cmocka_unit_test(test_resize_cubic_and_antialias),
        cmocka_unit_test(test_resize_bilinear_random),
        cmocka_unit_test(test_resize_sizes_axes_policy),
        cmocka_unit_test(test_resize_legacy_and_ints),
        cmocka_unit_test(test_resize_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
