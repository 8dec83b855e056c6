/*
 * cases_cnn.h - generated cases for the convolution, pooling, elementwise and data movement ops that
 * test_all_tactics.c's own generators do not reach (written for the CUDA tactics of src/backends/cuda/, run against
 * the reference like every other case): Concat, Identity / Flatten / Reshape / Squeeze / Unsqueeze (several dtypes),
 * Transpose of rank 5-6 and large 2-D planes, Sqrt / Exp / Neg / Abs / Reciprocal, Gelu tanh, HardSigmoid with its
 * attributes, Clip before opset 11 and with one bound, broadcasts of rank 5-6 from both sides, grouped, 1-D,
 * asymmetric-pad, SAME-padded and computed-weight convolutions, pools with ceil_mode, count_include_pad, dilations
 * and 1-D windows, GlobalAveragePool of rank 3 and 5.
 * #included into test_all_tactics.c after its helpers (tcase,
 * add_in, rand_t, run_case, rand_shape, pick, kEdge, rng); cnn_cases() runs them all. The harness's cases carry no
 * epilogue, so the fused residual + activation paths are not reached from here.
 */
#ifndef TC_TESTS_UNIT_CASES_CNN_H
#define TC_TESTS_UNIT_CASES_CNN_H

#include "core/quant_attr.h"

/* A random tensor of any dtype (integers and bools from etu_random, floats in [-4, 4)). */
static tc__tensor cnn_rand_any(tc_dtype dt, int32_t rank, const int64_t *dims) {
    return etu_random(&rng, dt, rank, dims, dt == TC_DTYPE_UINT8 ? 1 : -100, 100);
}

static void cnn_concat_cases(void) {
    static const tc_dtype dts[] = {TC_DTYPE_FLOAT32, TC_DTYPE_FLOAT32, TC_DTYPE_INT64, TC_DTYPE_UINT8,
                                   TC_DTYPE_FLOAT16, TC_DTYPE_INT32};
    for (int r = 0; r < 12; r++) {
        const tc_dtype dt = dts[r % 6];
        tcase c = {.op = "Concat", .opset = 13, .tol = 0};
        int64_t dims[4];
        const int32_t rank = rand_shape(dims);
        const int32_t ax = (int32_t)etu_int(&rng, 0, rank - 1, false);
        const int n_in = 1 + r % 5; /* 1 to 5 inputs */
        for (int i = 0; i < n_in; i++) {
            int64_t d[4];
            memcpy(d, dims, sizeof d);
            d[ax] = i == 1 && r % 3 == 0 ? 0 : pick(kEdge, 10); /* an empty input now and then */
            add_in(&c, dt == TC_DTYPE_FLOAT32 ? rand_t(rank, d, -1, 1) : cnn_rand_any(dt, rank, d), r % 4 == 1);
        }
        c.attrs[c.n_attrs++] = etu_attr_int("axis", r % 2 ? ax - rank : ax); /* negative axes too */
        run_case(&c);
    }
}

/* Identity, Flatten, Reshape, Squeeze, Unsqueeze: the engine runs them as steps only where it cannot make views. */
static void cnn_view_cases(void) {
    static const tc_dtype dts[] = {TC_DTYPE_FLOAT32, TC_DTYPE_INT64, TC_DTYPE_FLOAT16, TC_DTYPE_UINT8,
                                   TC_DTYPE_BOOL};
    for (int r = 0; r < 5; r++) {
        const tc_dtype dt = dts[r % 5];
        int64_t dims[4];
        int32_t rank = rand_shape(dims);
        { /* Identity */
            tcase c = {.op = "Identity", .opset = 16, .tol = 0};
            add_in(&c, cnn_rand_any(dt, rank, dims), false);
            run_case(&c);
        }
        { /* Flatten at some axis */
            tcase c = {.op = "Flatten", .opset = 13, .tol = 0};
            add_in(&c, cnn_rand_any(dt, rank, dims), false);
            c.attrs[c.n_attrs++] = etu_attr_int("axis", etu_int(&rng, 0, rank, false));
            run_case(&c);
        }
        { /* Reshape to [-1, last] with a constant shape */
            tcase c = {.op = "Reshape", .opset = 14, .tol = 0};
            const int64_t two = 2, shape[2] = {-1, dims[rank - 1]};
            add_in(&c, cnn_rand_any(dt, rank, dims), false);
            add_in(&c, etu_from_i64(TC_DTYPE_INT64, 1, &two, shape), true);
            run_case(&c);
        }
        { /* Unsqueeze axes [0, rank + 1] (opset 13: an input), then Squeeze them back */
            int64_t two = 2, axes[2] = {0, rank + 1}, ud[6] = {1};
            for (int32_t d = 0; d < rank; d++) ud[d + 1] = dims[d];
            ud[rank + 1] = 1;
            tcase u = {.op = "Unsqueeze", .opset = 13, .tol = 0};
            add_in(&u, cnn_rand_any(dt, rank, dims), false);
            add_in(&u, etu_from_i64(TC_DTYPE_INT64, 1, &two, axes), true);
            run_case(&u);
            tcase s = {.op = "Squeeze", .opset = 13, .tol = 0};
            add_in(&s, cnn_rand_any(dt, rank + 2, ud), false);
            add_in(&s, etu_from_i64(TC_DTYPE_INT64, 1, &two, axes), true);
            run_case(&s);
        }
    }
}

static void cnn_transpose_cases(void) {
    static const tc_dtype dts[] = {TC_DTYPE_FLOAT32, TC_DTYPE_INT64, TC_DTYPE_FLOAT16, TC_DTYPE_UINT8};
    for (int r = 0; r < 8; r++) {
        const tc_dtype dt = dts[r % 4];
        tcase c = {.op = "Transpose", .opset = 13, .tol = 0};
        int64_t dims[6], perm[6];
        int32_t rank;
        if (r < 4) { /* rank 5-6, a random permutation, small dims */
            rank = 5 + r % 2;
            for (int32_t d = 0; d < rank; d++) dims[d] = 1 + etu_int(&rng, 0, 4, false), perm[d] = d;
            for (int32_t d = rank - 1; d > 0; d--) { /* Fisher-Yates */
                const int32_t j = (int32_t)etu_int(&rng, 0, d, false);
                const int64_t t = perm[d];
                perm[d] = perm[j], perm[j] = t;
            }
        } else { /* batched 2-D planes larger than a 32 x 32 tile: NCHW <-> NHWC and [B, R, C] -> [B, C, R] */
            rank = r % 2 ? 4 : 3;
            const int64_t d4[4] = {2, 33 + r, 17, 40 - r}, p4[4] = {0, 2, 3, 1}, d3[3] = {3, 70 + r, 45}, p3[3] = {0, 2, 1};
            memcpy(dims, rank == 4 ? d4 : d3, sizeof(int64_t) * (size_t)rank);
            memcpy(perm, rank == 4 ? p4 : p3, sizeof(int64_t) * (size_t)rank);
        }
        add_in(&c, dt == TC_DTYPE_FLOAT32 ? rand_t(rank, dims, -1, 1) : cnn_rand_any(dt, rank, dims), false);
        c.attrs[c.n_attrs++] = etu_attr_ints("perm", perm, (size_t)rank);
        run_case(&c);
    }
    { /* no perm attribute: the dims reversed */
        tcase c = {.op = "Transpose", .opset = 13, .tol = 0};
        int64_t dims[4];
        const int32_t rank = rand_shape(dims);
        add_in(&c, rand_t(rank, dims, -1, 1), false);
        run_case(&c);
    }
}

static void cnn_unary_cases(void) {
    static const char *const ops[] = {"Sqrt", "Exp", "Neg", "Abs", "Reciprocal"};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (int r = 0; r < 4; r++) {
            tcase c = {.op = ops[o], .opset = 13, .tol = 2e-5};
            int64_t dims[4];
            const int32_t rank = rand_shape(dims);
            const bool positive = strcmp(ops[o], "Sqrt") == 0;
            tc__tensor x = rand_t(rank, dims, positive ? 0.01 : 0.25, positive ? 9 : 4);
            if (!positive) /* both signs; Reciprocal away from zero */
                for (int64_t i = 0; i < tc__tensor_numel(&x); i++)
                    ((float *)x.data)[i] *= etu_next(&rng) & 1 ? 1.0f : -1.0f;
            add_in(&c, x, false);
            run_case(&c);
        }
    for (int r = 0; r < 3; r++) { /* Gelu tanh; HardSigmoid with its attributes; Clip-6 attributes, Clip with min only */
        int64_t dims[4];
        int32_t rank = rand_shape(dims);
        tcase g = {.op = "Gelu", .opset = 20, .tol = 2e-5};
        add_in(&g, rand_t(rank, dims, -6, 6), false);
        g.attrs[g.n_attrs++] = etu_attr_string("approximate", "tanh");
        run_case(&g);
        tcase h = {.op = "HardSigmoid", .opset = 6, .tol = 2e-5};
        add_in(&h, rand_t(rank, dims, -6, 6), false);
        h.attrs[h.n_attrs++] = etu_attr_float("alpha", 0.1666667f);
        h.attrs[h.n_attrs++] = etu_attr_float("beta", 0.45f);
        run_case(&h);
        tcase c6 = {.op = "Clip", .opset = 6, .tol = 0};
        add_in(&c6, rand_t(rank, dims, -8, 8), false);
        c6.attrs[c6.n_attrs++] = etu_attr_float("min", 0.0f);
        c6.attrs[c6.n_attrs++] = etu_attr_float("max", 6.0f);
        run_case(&c6);
        tcase c13 = {.op = "Clip", .opset = 13, .tol = 0};
        add_in(&c13, rand_t(rank, dims, -8, 8), false);
        add_in(&c13, etu_scalar_f64(TC_DTYPE_FLOAT32, -0.5), true);
        run_case(&c13);
    }
}

/* Broadcasts of rank 5-6 where both inputs broadcast, and rank-0 operands. */
static void cnn_binary_cases(void) {
    static const char *const ops[] = {"Add", "Sub", "Mul", "Div"};
    for (int r = 0; r < 12; r++) {
        tcase c = {.op = ops[r % 4], .opset = 14, .tol = 1e-6};
        const int32_t rank = 5 + r % 2;
        int64_t y[6], a[6], b[6];
        for (int32_t d = 0; d < rank; d++) {
            y[d] = 1 + etu_int(&rng, 0, 4, false);
            const int k = (int)etu_int(&rng, 0, 2, false); /* y's dim in both, or 1 in one of them */
            a[d] = k == 1 ? 1 : y[d];
            b[d] = k == 2 ? 1 : y[d];
        }
        const int32_t brank = r % 3 == 2 ? (r % 2 ? 0 : rank - 2) : rank; /* a rank-0 or a shorter b */
        add_in(&c, rand_t(rank, a, -3, 3), r % 5 == 0);
        tc__tensor t = rand_t(brank, b + (rank - brank), 0.5, 2); /* Div: away from zero */
        for (int64_t i = 0; i < tc__tensor_numel(&t); i++) ((float *)t.data)[i] *= etu_next(&rng) & 1 ? 1.0f : -1.0f;
        add_in(&c, t, r % 4 == 3);
        run_case(&c);
    }
}

static void cnn_conv_cases(void) {
    for (int r = 0; r < 16; r++) {
        tcase c = {.op = "Conv", .opset = 11, .tol = 5e-5};
        const int64_t group = 2 + r % 3; /* 2 to 4 */
        const bool wide = r % 4 >= 2;   /* channels per group that take the tiled GEMM path */
        const int64_t cin_g = wide ? 16 + r : 1 + r % 5, cout_g = wide ? 17 + 3 * r : 1 + r % 3;
        const int64_t k = r % 3 == 0 ? 1 : 3, kw = r % 5 == 1 ? 5 : k;
        const bool one_d = r % 7 == 6;
        int64_t x[4] = {1 + r % 2, group * cin_g, 5 + r, 7 + 2 * r}, w[4] = {group * cout_g, cin_g, k, kw};
        if (one_d) x[2] = x[3], w[2] = w[3]; /* [N, C, L] */
        const int32_t rank = one_d ? 3 : 4, nsp = rank - 2;
        add_in(&c, rand_t(rank, x, -1, 1), false);
        add_in(&c, rand_t(rank, w, -1, 1), r % 3 != 1); /* computed weights now and then */
        const int64_t m = w[0];
        if (r % 4 != 1) add_in(&c, rand_t(1, &m, -1, 1), true);
        int64_t ks[2] = {w[2], w[3]}, st[2] = {1 + r % 2, 1 + (r / 2) % 2}, dil[2] = {1 + (r == 5), 1 + (r == 9)};
        int64_t pads[4] = {r % 3, (r + 1) % 3, (r + 2) % 3, r % 2}; /* asymmetric */
        if (one_d) st[0] = st[1], dil[0] = dil[1], pads[0] = pads[1], pads[1] = pads[3];
        c.attrs[c.n_attrs++] = etu_attr_ints("kernel_shape", one_d ? ks + 1 : ks, (size_t)nsp);
        c.attrs[c.n_attrs++] = etu_attr_ints("strides", st, (size_t)nsp);
        c.attrs[c.n_attrs++] = etu_attr_ints("dilations", dil, (size_t)nsp);
        if (r % 8 == 7) c.attrs[c.n_attrs++] = etu_attr_string("auto_pad", r % 16 == 7 ? "SAME_UPPER" : "SAME_LOWER");
        else c.attrs[c.n_attrs++] = etu_attr_ints("pads", pads, (size_t)(2 * nsp));
        c.attrs[c.n_attrs++] = etu_attr_int("group", group);
        run_case(&c);
    }
    for (int r = 0; r < 3; r++) { /* one group, sizes off the 64 x 64 tile and K not a multiple of 16 */
        tcase c = {.op = "Conv", .opset = 11, .tol = 5e-5};
        int64_t x[4] = {2, 19 + r, 9, 11 + r}, w[4] = {65 + r * 31, 19 + r, 3, 3}, m = w[0];
        add_in(&c, rand_t(4, x, -1, 1), false);
        add_in(&c, rand_t(4, w, -1, 1), r != 1);
        add_in(&c, rand_t(1, &m, -1, 1), true);
        int64_t pads[4] = {1, 1, 1, 1}, st[2] = {1 + r % 2, 1 + r % 2};
        c.attrs[c.n_attrs++] = etu_attr_ints("pads", pads, 4);
        c.attrs[c.n_attrs++] = etu_attr_ints("strides", st, 2);
        run_case(&c);
    }
}

static void cnn_pool_cases(void) {
    for (int r = 0; r < 12; r++) {
        const bool avg = r % 2 == 0;
        tcase c = {.op = avg ? "AveragePool" : "MaxPool", .opset = avg ? 19 : 12, .tol = 1e-5};
        const bool one_d = r % 6 == 5;
        int64_t x[4] = {1 + r % 2, pick(kEdge, 10), 6 + r, 5 + 2 * r};
        if (one_d) x[2] = x[3];
        const int32_t rank = one_d ? 3 : 4, nsp = rank - 2;
        add_in(&c, rand_t(rank, x, -5, 5), false);
        int64_t ks[2] = {2 + r % 3, 3 - r % 2}, st[2] = {1 + r % 3, 2}, pads[4] = {r % 2, 1, 1, r % 3 == 0};
        int64_t dil[2] = {1 + (r % 4 == 1), 1 + (r % 4 == 3)};
        if (one_d) ks[0] = ks[1], st[0] = st[1], pads[0] = pads[1], pads[1] = pads[3], dil[0] = dil[1];
        for (int p = 0; p < 2 * nsp; p++)
            if (pads[p] >= ks[p % nsp]) pads[p] = ks[p % nsp] - 1; /* pads smaller than the window */
        c.attrs[c.n_attrs++] = etu_attr_ints("kernel_shape", ks, (size_t)nsp);
        c.attrs[c.n_attrs++] = etu_attr_ints("strides", st, (size_t)nsp);
        c.attrs[c.n_attrs++] = etu_attr_ints("pads", pads, (size_t)(2 * nsp));
        c.attrs[c.n_attrs++] = etu_attr_int("ceil_mode", r % 3 != 0);
        c.attrs[c.n_attrs++] = etu_attr_ints("dilations", dil, (size_t)nsp);
        if (avg) c.attrs[c.n_attrs++] = etu_attr_int("count_include_pad", r % 4 == 0);
        /* half the MaxPools as a device --fp16 build marks them (cuda_maxpool_nhwc16 takes those: FP32 NCHW in and
         * out outside an FP16 NHWC chain, exact) */
        if (!avg && r % 4 != 1) c.attrs[c.n_attrs++] = etu_attr_int(TC__ATTR_FP16, 1);
        run_case(&c);
    }
    for (int r = 0; r < 4; r++) { /* GlobalAveragePool of rank 3 and 5, and a large plane */
        tcase c = {.op = "GlobalAveragePool", .opset = 13, .tol = 1e-5};
        int64_t x[5] = {1 + r % 2, pick(kEdge, 10), 3 + r, 4, 5};
        int32_t rank = r % 2 ? 5 : 3;
        if (r == 2) x[1] = 3, x[2] = 4099, rank = 3;
        add_in(&c, rand_t(rank, x, -5, 5), false);
        run_case(&c);
    }
}

static void cnn_cases(void) {
    cnn_concat_cases();
    cnn_view_cases();
    cnn_transpose_cases();
    cnn_unary_cases();
    cnn_binary_cases();
    cnn_conv_cases();
    cnn_pool_cases();
}

#endif
