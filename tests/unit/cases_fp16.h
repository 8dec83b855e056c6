/*
 * cases_fp16.h - generated cases for the FP16 tactics (the cuda_*_fp16_lt tactics of src/backends/cuda: FP16 Tensor
 * Cores through cuBLASLt; on the CPU the AVX512-FP16 ones where this CPU has it): steps marked tc.fp16 = 1 as the --fp16 precision
 * pass marks them (a constant weight), against the FP32 reference with a bound for FP16 operands summed in FP32
 * (1e-2 of the output's peak for K up to 3072). MatMul [M, K] and [B, M, K] by a constant [K, N], Gemm with transB
 * 0 / 1, alpha / beta and a C bias ([N], [1, N], a scalar, none), Conv 1x1 (the direct path) and 3x3 (pads, stride
 * 2, dilation, a bias), 1-D Conv; shapes including BERT's 128x768x768 / 128x768x3072 / 128x3072x768 and ResNet-like
 * 64..256 channels at 14..56 pixels, and K, N, M, OH * OW not multiples of 8.
 *
 * #included into test_all_tactics.c after its helpers (tcase, add_in, rand_t, run_case, pick, kEdge, rng);
 * fp16_cases() runs them all.
 */
#ifndef TC_TESTS_UNIT_CASES_FP16_H
#define TC_TESTS_UNIT_CASES_FP16_H

#include "core/quant_attr.h"

#define FP16_TOL 1e-2

static void fp16_mark(tcase *c) { c->attrs[c->n_attrs++] = etu_attr_int(TC__ATTR_FP16, 1); }

static void fp16_matmul_cases(void) {
    /* (batch 0: A [M, K]; else [batch, M, K]) x [K, N] */
    static const int64_t shapes[][4] = {
        {0, 128, 768, 768}, {0, 128, 768, 3072}, {0, 128, 3072, 768}, {2, 64, 768, 768}, /* BERT */
        {0, 1, 64, 64},     {0, 33, 100, 17},    {3, 7, 13, 31},      {0, 16, 5, 9},     /* K 100, 13, 5; N 17, 31, 9 */
        {2, 1, 8, 1},       {0, 65, 264, 130},                                          /* N 1; M 65, N 130 */
    };
    for (size_t r = 0; r < sizeof shapes / sizeof shapes[0]; r++) {
        tcase c = {.op = "MatMul", .opset = 13, .tol = FP16_TOL};
        const int64_t bt = shapes[r][0], m = shapes[r][1], k = shapes[r][2], n = shapes[r][3];
        const int64_t a3[3] = {bt, m, k}, b2[2] = {k, n};
        add_in(&c, rand_t(bt ? 3 : 2, bt ? a3 : a3 + 1, -1, 1), false);
        add_in(&c, rand_t(2, b2, -1, 1), true);
        fp16_mark(&c);
        run_case(&c);
    }
    for (int r = 0; r < 6; r++) { /* random edge sizes (K >= 4 for the FP16 packing) */
        tcase c = {.op = "MatMul", .opset = 13, .tol = FP16_TOL};
        const int64_t m = pick(kEdge, 10), k = 4 + pick(kEdge, 10), n = pick(kEdge, 10);
        const int64_t a3[3] = {2, m, k}, b2[2] = {k, n};
        add_in(&c, rand_t(r % 2 ? 3 : 2, r % 2 ? a3 : a3 + 1, -1, 1), false);
        add_in(&c, rand_t(2, b2, -1, 1), true);
        fp16_mark(&c);
        run_case(&c);
    }
}

static void fp16_gemm_cases(void) {
    static const int64_t shapes[][3] = {
        {128, 768, 768}, {128, 768, 3072}, {1, 2048, 1000}, /* BERT, a ResNet classifier */
        {17, 33, 15},    {8, 12, 7},       {3, 4, 1},        {40, 300, 65}, {1, 9, 16},
    };
    for (size_t r = 0; r < sizeof shapes / sizeof shapes[0]; r++) {
        tcase c = {.op = "Gemm", .opset = 13, .tol = FP16_TOL};
        const int64_t m = shapes[r][0], k = shapes[r][1], n = shapes[r][2];
        const bool tb = r % 2 == 1;
        const int64_t a[2] = {m, k}, b[2] = {tb ? n : k, tb ? k : n};
        add_in(&c, rand_t(2, a, -1, 1), false);
        add_in(&c, rand_t(2, b, -1, 1), true);
        const int64_t c2[2] = {1, n};
        switch (r % 4) { /* C: [N], [1, N], a scalar, none */
        case 0: add_in(&c, rand_t(1, &n, -1, 1), true); break;
        case 1: add_in(&c, rand_t(2, c2, -1, 1), r % 3 != 0); break;
        case 2: add_in(&c, etu_scalar_f64(TC_DTYPE_FLOAT32, 0.75), true); break;
        default: break;
        }
        if (tb) c.attrs[c.n_attrs++] = etu_attr_int("transB", 1);
        if (r % 3 == 1) c.attrs[c.n_attrs++] = etu_attr_float("alpha", 0.5f);
        if (r % 3 == 2) c.attrs[c.n_attrs++] = etu_attr_float("beta", r % 2 ? 0.0f : -1.5f);
        fp16_mark(&c);
        run_case(&c);
    }
}

static void fp16_conv_cases(void) {
    static int64_t ks[2], st[2], pads[4], dil[2];
    /* {N, Cin, H, W, Cout, k, stride, pad, dilation, bias} */
    static const int64_t shapes[][10] = {
        {1, 64, 56, 56, 64, 1, 1, 0, 1, 1},   {1, 64, 56, 56, 64, 3, 1, 1, 1, 1},   {1, 64, 56, 56, 256, 1, 1, 0, 1, 0},
        {1, 128, 28, 28, 128, 3, 1, 1, 1, 1}, {1, 128, 56, 56, 128, 3, 2, 1, 1, 1}, {1, 256, 14, 14, 256, 3, 1, 1, 1, 1},
        {2, 256, 14, 14, 64, 1, 1, 0, 1, 1},  {1, 256, 14, 14, 512, 1, 2, 0, 1, 1}, {2, 3, 31, 29, 16, 3, 2, 1, 1, 1},
        {1, 5, 9, 11, 7, 1, 1, 0, 1, 1},      {1, 16, 17, 13, 9, 3, 1, 2, 2, 0},    {3, 12, 7, 7, 33, 3, 1, 1, 1, 1},
    };
    for (size_t r = 0; r < sizeof shapes / sizeof shapes[0]; r++) {
        const int64_t *s = shapes[r];
        tcase c = {.op = "Conv", .opset = 11, .tol = FP16_TOL};
        const int64_t cout = s[4], k = s[5];
        const int64_t x[4] = {s[0], s[1], s[2], s[3]}, w[4] = {cout, s[1], k, k};
        add_in(&c, rand_t(4, x, -1, 1), false);
        add_in(&c, rand_t(4, w, -1, 1), true);
        if (s[9]) add_in(&c, rand_t(1, &cout, -1, 1), r % 2 == 0);
        ks[0] = ks[1] = k;
        st[0] = st[1] = s[6];
        for (int p = 0; p < 4; p++) pads[p] = s[7];
        dil[0] = dil[1] = s[8];
        c.attrs[c.n_attrs++] = etu_attr_ints("kernel_shape", ks, 2);
        c.attrs[c.n_attrs++] = etu_attr_ints("strides", st, 2);
        c.attrs[c.n_attrs++] = etu_attr_ints("pads", pads, 4);
        c.attrs[c.n_attrs++] = etu_attr_ints("dilations", dil, 2);
        fp16_mark(&c);
        run_case(&c);
    }
    { /* 1-D: [2, 8, 50] by [12, 8, 5], stride 2, pads 2 / 1 */
        static int64_t k1[1] = {5}, s1[1] = {2}, p1[2] = {2, 1};
        tcase c = {.op = "Conv", .opset = 11, .tol = FP16_TOL};
        const int64_t x[3] = {2, 8, 50}, w[3] = {12, 8, 5}, cout = 12;
        add_in(&c, rand_t(3, x, -1, 1), false);
        add_in(&c, rand_t(3, w, -1, 1), true);
        add_in(&c, rand_t(1, &cout, -1, 1), true);
        c.attrs[c.n_attrs++] = etu_attr_ints("kernel_shape", k1, 1);
        c.attrs[c.n_attrs++] = etu_attr_ints("strides", s1, 1);
        c.attrs[c.n_attrs++] = etu_attr_ints("pads", p1, 2);
        fp16_mark(&c);
        run_case(&c);
    }
}

static void fp16_cases(void) {
    fp16_matmul_cases();
    fp16_gemm_cases();
    fp16_conv_cases();
}

#endif
