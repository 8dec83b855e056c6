/*
 * cases_dense.h - more generated cases for test_all_tactics.c, for what its own generators do not reach and the dense
 * CUDA tactics (the dense tactics in src/backends/cuda) compute: MatMul through tc.a_perm / tc.b_perm /
 * tc.y_perm with tc.alpha and batch broadcasting (1-D operands too), Gemm with transA / transB / alpha / beta and every
 * shape of C, Softmax with the fused mask (tc.softmax_add) and NaN guard (tc.nan_to), other axes, opset 11 and long
 * rows, LogSoftmax, LayerNormalization over two dims and long rows, Gather (int64 / int32 / scalar indices, negative
 * ones, axes 0, 1 and -1, 1 / 4 / 8-byte data), Where of other dtypes with broadcasting, Cast (special values, every
 * pair of float32, float16, int64, int32, int8, uint8, bool the CUDA tactic takes), And / Or / Not, Equal / Less /
 * Greater (float32 with NaN and ties, int64, int32), IsNaN of float16, Expand, Slice (negative steps, clamping, the
 * opset 9 attributes), ReduceMean (attribute and input axes, keepdims, noop) and Pow.
 *
 * #included into test_all_tactics.c after its helpers (tcase, add_in, rand_t, run_case, rand_shape, pick, kEdge, rng);
 * dense_extra_cases() runs them all. Operands that a tactic reads as parameters (Slice's starts, ReduceMean's axes,
 * Expand's shape) are constant inputs.
 */
#ifndef TC_TESTS_UNIT_CASES_DENSE_H
#define TC_TESTS_UNIT_CASES_DENSE_H

#include "core/fused_attr.h"

/* A tensor of integer dtype dt (or bool) with values in [lo, hi]. */
static tc__tensor dn_rand_int(tc_dtype dt, int32_t rank, const int64_t *dims, int64_t lo, int64_t hi) {
    tc__tensor t = etu_tensor(dt, rank, dims);
    for (int64_t i = 0; i < tc__tensor_numel(&t); i++) tc__tensor_set_i64(&t, i, etu_int(&rng, lo, hi, false));
    return t;
}

/* A float32 tensor of small integers in [lo, hi] (ties for the comparisons), every 7th element NaN when nan. */
static tc__tensor dn_rand_ties(int32_t rank, const int64_t *dims, int64_t lo, int64_t hi, bool nan) {
    tc__tensor t = etu_tensor(TC_DTYPE_FLOAT32, rank, dims);
    float *v = t.data;
    for (int64_t i = 0; i < tc__tensor_numel(&t); i++) v[i] = nan && i % 7 == 3 ? NAN : (float)etu_int(&rng, lo, hi, false);
    return t;
}

static tc__tensor dn_i64_1d(int64_t n, const int64_t *v) { return etu_from_i64(TC_DTYPE_INT64, 1, &n, v); }

/* ---- MatMul views, scale and batch broadcasting ------------------------------------------------------------- */

static void dn_matmul_cases(void) {
    static const int64_t p0213[4] = {0, 2, 1, 3}, p0231[4] = {0, 2, 3, 1}, p021[3] = {0, 2, 1}, p102[3] = {1, 0, 2},
                         p10[2] = {1, 0};
    for (int r = 0; r < 6; r++) { /* attention scores: Q, K [B, S, H, D] read as [B, H, S, D] and [B, H, D, S], scaled */
        tcase c = {.op = "MatMul", .opset = 13, .tol = 2e-5};
        const int64_t b = 1 + r % 2, s = r == 0 ? 130 : pick(kEdge, 10), h = 1 + r % 3, d = r == 1 ? 64 : pick(kEdge, 10);
        const int64_t q[4] = {b, s, h, d};
        add_in(&c, rand_t(4, q, -1, 1), false);
        add_in(&c, rand_t(4, q, -1, 1), r % 2 == 0);
        c.attrs[c.n_attrs++] = etu_attr_ints(TC__ATTR_MM_A_PERM, p0213, 4);
        c.attrs[c.n_attrs++] = etu_attr_ints(TC__ATTR_MM_B_PERM, p0231, 4);
        c.attrs[c.n_attrs++] = etu_attr_float(TC__ATTR_MM_ALPHA, 0.125f);
        run_case(&c);
    }
    for (int r = 0; r < 4; r++) { /* attention context: P [B, H, S, S] by V [B, S, H, D] read as [B, H, S, D], written
                                     back as [B, S, H, D] */
        tcase c = {.op = "MatMul", .opset = 13, .tol = 2e-5};
        const int64_t b = 1 + r % 2, s = pick(kEdge, 10), h = 2 + r % 2, d = pick(kEdge, 10);
        const int64_t pd[4] = {b, h, s, s}, vd[4] = {b, s, h, d};
        add_in(&c, rand_t(4, pd, 0, 1), false);
        add_in(&c, rand_t(4, vd, -1, 1), false);
        c.attrs[c.n_attrs++] = etu_attr_ints(TC__ATTR_MM_B_PERM, p0213, 4);
        c.attrs[c.n_attrs++] = etu_attr_ints(TC__ATTR_MM_Y_PERM, p0213, 4);
        run_case(&c);
    }
    for (int r = 0; r < 4; r++) { /* outputs whose last dim is M or a batch dim; a transposed 2-D A */
        tcase c = {.op = "MatMul", .opset = 13, .tol = 2e-5};
        const int64_t m = pick(kEdge, 10), k = pick(kEdge, 10), n = pick(kEdge, 10);
        const int64_t a3[3] = {3, m, k}, b2[2] = {k, n}, at[2] = {k, m};
        if (r < 2) {
            add_in(&c, rand_t(3, a3, -1, 1), false);
            add_in(&c, rand_t(2, b2, -1, 1), r == 1);
            c.attrs[c.n_attrs++] = etu_attr_ints(TC__ATTR_MM_Y_PERM, r == 0 ? p021 : p102, 3);
        } else {
            add_in(&c, rand_t(2, at, -1, 1), false);
            add_in(&c, rand_t(2, b2, -1, 1), false);
            c.attrs[c.n_attrs++] = etu_attr_ints(TC__ATTR_MM_A_PERM, p10, 2);
            if (r == 3) c.attrs[c.n_attrs++] = etu_attr_ints(TC__ATTR_MM_Y_PERM, p10, 2);
            c.attrs[c.n_attrs++] = etu_attr_float(TC__ATTR_MM_ALPHA, -1.5f);
        }
        run_case(&c);
    }
    for (int r = 0; r < 7; r++) { /* NumPy batch broadcasting and 1-D operands */
        tcase c = {.op = "MatMul", .opset = 13, .tol = 2e-5};
        const int64_t m = pick(kEdge, 10), k = r == 0 ? 300 : pick(kEdge, 10), n = pick(kEdge, 10);
        int64_t ad[4], bd[4];
        int32_t ra = 0, rb = 0;
        switch (r) {
        case 0: ad[0] = 2, ad[1] = 1, ad[2] = m, ad[3] = k, ra = 4, bd[0] = 3, bd[1] = k, bd[2] = n, rb = 3; break;
        case 1: ad[0] = m, ad[1] = k, ra = 2, bd[0] = 4, bd[1] = k, bd[2] = n, rb = 3; break;
        case 2: ad[0] = k, ra = 1, bd[0] = 2, bd[1] = k, bd[2] = n, rb = 3; break;
        case 3: ad[0] = 2, ad[1] = m, ad[2] = k, ra = 3, bd[0] = k, rb = 1; break;
        case 4: ad[0] = k, ra = 1, bd[0] = k, rb = 1; break;
        case 5: ad[0] = 3, ad[1] = 1, ad[2] = m, ad[3] = k, ra = 4, bd[0] = 1, bd[1] = 2, bd[2] = k, bd[3] = n, rb = 4; break;
        default: ad[0] = 1, ad[1] = k, ra = 2, bd[0] = k, bd[1] = 1, rb = 2; break;
        }
        add_in(&c, rand_t(ra, ad, -1, 1), false);
        add_in(&c, rand_t(rb, bd, -1, 1), r % 2 == 1);
        run_case(&c);
    }
}

/* ---- Gemm: transA / transB, alpha, beta, C of every broadcast shape ----------------------------------------- */

static void dn_gemm_cases(void) {
    for (int r = 0; r < 12; r++) {
        tcase c = {.op = "Gemm", .opset = 13, .tol = 2e-5};
        const int64_t m = r == 0 ? 140 : pick(kEdge, 10), k = r == 1 ? 200 : pick(kEdge, 10), n = pick(kEdge, 10);
        const bool ta = r % 2 == 1, tb = r % 4 >= 2;
        const int64_t a[2] = {ta ? k : m, ta ? m : k}, b[2] = {tb ? n : k, tb ? k : n};
        add_in(&c, rand_t(2, a, -1, 1), false);
        add_in(&c, rand_t(2, b, -1, 1), r % 3 == 0);
        int64_t cd[2];
        switch (r % 6) { /* C: [N], [M, N], [M, 1], [1, N], a scalar, none */
        case 0: cd[0] = n, add_in(&c, rand_t(1, cd, -1, 1), true); break;
        case 1: cd[0] = m, cd[1] = n, add_in(&c, rand_t(2, cd, -1, 1), false); break;
        case 2: cd[0] = m, cd[1] = 1, add_in(&c, rand_t(2, cd, -1, 1), true); break;
        case 3: cd[0] = 1, cd[1] = n, add_in(&c, rand_t(2, cd, -1, 1), true); break;
        case 4: add_in(&c, etu_scalar_f64(TC_DTYPE_FLOAT32, 0.75), true); break;
        default: break;
        }
        if (ta) c.attrs[c.n_attrs++] = etu_attr_int("transA", 1);
        if (tb) c.attrs[c.n_attrs++] = etu_attr_int("transB", 1);
        if (r % 3 != 2) c.attrs[c.n_attrs++] = etu_attr_float("alpha", r % 3 == 0 ? 0.5f : -2.0f);
        if (r % 4 != 3) c.attrs[c.n_attrs++] = etu_attr_float("beta", r % 4 == 0 ? 0.0f : 1.75f);
        run_case(&c);
    }
}

/* ---- Softmax / LogSoftmax ---------------------------------------------------------------------------------- */

static void dn_softmax_cases(void) {
    for (int r = 0; r < 8; r++) { /* attention: scores [B, H, S, S] + mask (0 / -10000 / -inf), NaN guard */
        tcase c = {.op = "Softmax", .opset = 13, .tol = 1e-5};
        const int64_t b = 1 + r % 2, h = 1 + r % 3, s = r == 0 ? 300 : r == 1 ? 1100 : pick(kEdge, 10);
        const int64_t x[4] = {b, h, s, s};
        int64_t md[4] = {b, 1, 1, s};
        int32_t mr = 4;
        switch (r % 4) { /* mask [B, 1, 1, S], [S], [B, H, S, S], [1, H, S, 1] */
        case 1: mr = 1, md[0] = s; break;
        case 2: md[1] = h, md[2] = s; break;
        case 3: md[0] = 1, md[1] = h, md[2] = s, md[3] = 1; break;
        default: break;
        }
        add_in(&c, rand_t(4, x, -8, 8), false);
        tc__tensor m = rand_t(mr, md, -1, 1);
        float *mv = m.data;
        const int64_t mn = tc__tensor_numel(&m);
        for (int64_t i = 0; i < mn; i++) mv[i] = i % 5 == 2 ? -10000.0f : (i % 3 == 1 ? -INFINITY : 0.0f);
        if (r % 4 == 3 || mn == 1) mv[0] = -INFINITY; /* a row (or all) of -inf: NaN, then the guard's value */
        add_in(&c, m, r % 2 == 0);
        c.attrs[c.n_attrs++] = etu_attr_int(TC__ATTR_SOFTMAX_ADD, 1);
        if (r != 5) c.attrs[c.n_attrs++] = etu_attr_float(TC__ATTR_NAN_TO, r % 3 == 0 ? 0.0f : -1.0f);
        c.attrs[c.n_attrs++] = etu_attr_int("axis", -1);
        run_case(&c);
    }
    for (int r = 0; r < 8; r++) { /* other axes, opset 11 flattening, NaN inputs with the guard, long rows */
        static const char *const ops[] = {"Softmax", "LogSoftmax"};
        tcase c = {.op = ops[r % 2], .opset = r < 4 ? 11 : 13, .tol = 1e-5};
        int64_t dims[4] = {pick(kEdge, 10), pick(kEdge, 10), pick(kEdge, 10), r >= 6 ? 5000 : pick(kEdge, 10)};
        if (r >= 6) dims[0] = 2, dims[1] = 1;
        tc__tensor x = rand_t(4, dims, -8, 8);
        if (r == 4) ((float *)x.data)[0] = NAN;
        add_in(&c, x, false);
        if (r == 0 || r == 5) c.attrs[c.n_attrs++] = etu_attr_int("axis", r == 0 ? 2 : 1);
        if (r == 2) c.attrs[c.n_attrs++] = etu_attr_int("axis", -3);
        if (r == 4) c.attrs[c.n_attrs++] = etu_attr_float(TC__ATTR_NAN_TO, 0.0f);
        run_case(&c);
    }
    { /* opset 11 with a mask: the flattened rows span dims of x the mask broadcasts along */
        tcase c = {.op = "Softmax", .opset = 11, .tol = 1e-5};
        const int64_t x[3] = {3, 5, 7}, md[2] = {1, 7};
        add_in(&c, rand_t(3, x, -4, 4), false);
        add_in(&c, rand_t(2, md, -2, 0), true);
        c.attrs[c.n_attrs++] = etu_attr_int(TC__ATTR_SOFTMAX_ADD, 1);
        run_case(&c);
    }
}

/* ---- LayerNormalization ------------------------------------------------------------------------------------ */

static void dn_layernorm_cases(void) {
    for (int r = 0; r < 7; r++) { /* r 5, 6: rows of 768 and 520 (CUDA's warp-per-row kernel with 16-byte loads) */
        tcase c = {.op = "LayerNormalization", .opset = 17, .tol = 2e-5};
        const int64_t last = r == 0 ? 3000 : r == 5 ? 768 : r == 6 ? 520 : pick(kEdge, 10);
        int64_t dims[3] = {pick(kEdge, 10), pick(kEdge, 10), last};
        if (r == 0) dims[0] = 2;
        add_in(&c, rand_t(3, dims, -4, 4), false);
        const int64_t one = 1;
        if (r == 1) { /* normalise the last two dims */
            add_in(&c, rand_t(2, dims + 1, 0.5, 1.5), true);
            add_in(&c, rand_t(2, dims + 1, -1, 1), true);
            c.attrs[c.n_attrs++] = etu_attr_int("axis", -2);
        } else if (r == 2) { /* one scale, no bias */
            add_in(&c, rand_t(1, &one, 0.5, 1.5), true);
        } else {
            add_in(&c, rand_t(1, &dims[2], 0.5, 1.5), r != 4 && r != 6);
            add_in(&c, rand_t(1, &dims[2], -1, 1), r != 4 && r != 6);
            c.attrs[c.n_attrs++] = etu_attr_int("axis", 2);
        }
        c.attrs[c.n_attrs++] = etu_attr_float("epsilon", r == 3 ? 1e-12f : 1e-5f);
        run_case(&c);
    }
}

/* ---- TcEmbedLayerNorm (tailcut's embedding layer: gather + addend + LayerNorm) ------------------------------------ */

static void dn_embed_layernorm_cases(void) {
    for (int r = 0; r < 6; r++) { /* r 0: BERT's 768 with int64 ids; r 3: no addend; r 4: a table of one row */
        tcase c = {.op = "TcEmbedLayerNorm", .opset = 17, .tol = 2e-5};
        const int64_t d = r == 0 ? 768 : r == 5 ? 520 : pick(kEdge, 10), v = r == 4 ? 1 : 3 + pick(kEdge, 10);
        const int64_t ids_dims[2] = {1 + r % 2, r == 0 ? 128 : pick(kEdge, 10)};
        const int32_t irank = r == 2 ? 1 : 2;
        const int64_t s = ids_dims[1]; /* ids' last dim either way */
        add_in(&c, dn_rand_int(r % 2 == 0 ? TC_DTYPE_INT64 : TC_DTYPE_INT32, irank, irank == 1 ? ids_dims + 1 : ids_dims,
                               -v, v - 1), false);
        const int64_t td[2] = {v, d}, ad[2] = {s, d};
        add_in(&c, rand_t(2, td, -2, 2), true);
        add_in(&c, rand_t(1, &d, 0.5, 1.5), true);
        add_in(&c, rand_t(1, &d, -1, 1), true);
        if (r != 3) add_in(&c, rand_t(2, ad, -1, 1), true);
        c.attrs[c.n_attrs++] = etu_attr_float("epsilon", r == 1 ? 1e-12f : 1e-5f);
        run_case(&c);
    }
}

/* ---- Gather, Where ----------------------------------------------------------------------------------------- */

static void dn_gather_cases(void) {
    for (int r = 0; r < 8; r++) {
        tcase c = {.op = "Gather", .opset = 13, .tol = 0};
        const tc_dtype dts[4] = {TC_DTYPE_FLOAT32, TC_DTYPE_INT64, TC_DTYPE_UINT8, TC_DTYPE_FLOAT16};
        const tc_dtype dt = dts[r % 4];
        int64_t dd[3] = {pick(kEdge, 10), r == 0 ? 768 : pick(kEdge, 10), 1 + r % 3};
        const int32_t drank = r == 0 ? 2 : 3;
        const int axis = r < 3 ? 0 : r < 6 ? 1 : -1;
        const int64_t dim = dd[axis < 0 ? drank - 1 : axis];
        if (dt == TC_DTYPE_FLOAT32) add_in(&c, rand_t(drank, dd, -1, 1), r % 2 == 0);
        else if (dt == TC_DTYPE_FLOAT16) add_in(&c, etu_random(&rng, dt, drank, dd, -1, 1), false);
        else add_in(&c, dn_rand_int(dt, drank, dd, -200, 200), false);
        const int64_t id[2] = {1 + r % 2, pick(kEdge, 10)};
        const int32_t irank = r == 7 ? 0 : r % 3 == 1 ? 1 : 2; /* a scalar index, 1-D, 2-D */
        add_in(&c, dn_rand_int(r % 2 == 0 ? TC_DTYPE_INT64 : TC_DTYPE_INT32, irank, id, -dim, dim - 1), r == 3);
        if (axis != 0) c.attrs[c.n_attrs++] = etu_attr_int("axis", axis);
        run_case(&c);
    }
}

static void dn_where_cases(void) {
    for (int r = 0; r < 6; r++) {
        tcase c = {.op = "Where", .opset = 16, .tol = 0};
        int64_t dims[4];
        const int32_t rank = rand_shape(dims);
        int64_t cd[4], xd[4];
        memcpy(cd, dims, sizeof cd);
        memcpy(xd, dims, sizeof xd);
        cd[0] = 1;                         /* the condition broadcasts along dim 0 */
        if (rank > 1) xd[rank - 1] = 1;    /* X along the last dim */
        add_in(&c, dn_rand_int(TC_DTYPE_BOOL, rank, cd, 0, 1), r % 2 == 0);
        const tc_dtype dt = r % 3 == 0 ? TC_DTYPE_INT64 : r % 3 == 1 ? TC_DTYPE_BOOL : TC_DTYPE_FLOAT32;
        if (dt == TC_DTYPE_FLOAT32) {
            add_in(&c, rand_t(rank, xd, -1, 1), false);
            add_in(&c, etu_scalar_f64(dt, -3.5), true);
        } else {
            add_in(&c, dn_rand_int(dt, rank, xd, dt == TC_DTYPE_BOOL ? 0 : -9, dt == TC_DTYPE_BOOL ? 1 : 9), false);
            add_in(&c, dn_rand_int(dt, rank, dims, 0, 1), false);
        }
        run_case(&c);
    }
}

/* ---- Cast -------------------------------------------------------------------------------------------------- */

static void dn_cast_cases(void) {
    /* fv has infinities and values beyond float16's range; fin (for float32 outputs, which the harness compares
     * within a bound that an infinite value would make NaN) has neither. */
    static const double fv[] = {0.0, -0.0, 1.0, -1.0, 0.5, -3.7, 2.5, 255.5, 256.0, 300.25, -129.0, 70000.5, 65520.0,
                                1e-8, 3e9, -3e9, 1e20, -1e20, NAN, INFINITY, -INFINITY, 123456.789, 5.9604645e-8};
    static const double fin[] = {0.0, -0.0, 1.0, -1.0, 0.5, -3.7, 2.5, 255.5, 256.0, 300.25, -129.0, 65504.0,
                                 1e-8, 2049.0, -3000.5, NAN, 0.1, 5.9604645e-8, 6.1e-5, -65504.0};
    static const int64_t iv[] = {0, 1, -1, 127, 128, 255, 256, -129, 65504, 65520, 70000, 16777217, -16777217,
                                 2147483647, 2147483648ll, -2147483649ll, (1ll << 53) + 1, INT64_MAX, INT64_MIN,
                                 123456789012345ll, -7, 2049, 4097};
    const int64_t nf = (int64_t)(sizeof fv / sizeof fv[0]), nfin = (int64_t)(sizeof fin / sizeof fin[0]),
                  ni = (int64_t)(sizeof iv / sizeof iv[0]);
    static const tc_dtype all[] = {TC_DTYPE_FLOAT32, TC_DTYPE_FLOAT16, TC_DTYPE_INT64, TC_DTYPE_INT32,
                                   TC_DTYPE_INT8,    TC_DTYPE_UINT8,   TC_DTYPE_BOOL};
    for (int s = 0; s < 7; s++)
        for (int d = 0; d < 7; d++) {
            tcase c = {.op = "Cast", .opset = 13, .tol = 0};
            const tc_dtype sd = all[s];
            const bool to_f32 = all[d] == TC_DTYPE_FLOAT32;
            if (sd == TC_DTYPE_FLOAT32 || sd == TC_DTYPE_FLOAT16)
                add_in(&c, to_f32 ? etu_from_f64(sd, 1, &nfin, fin) : etu_from_f64(sd, 1, &nf, fv), false);
            else add_in(&c, etu_from_i64(sd, 1, &ni, iv), false); /* narrower types wrap on the way in */
            c.attrs[c.n_attrs++] = etu_attr_int("to", (int64_t)all[d]);
            run_case(&c);
        }
}

/* ---- logic, comparisons, IsNaN ----------------------------------------------------------------------------- */

static void dn_bool_cases(void) {
    static const char *const logic[] = {"And", "Or"};
    for (int r = 0; r < 4; r++) {
        tcase c = {.op = logic[r % 2], .opset = 7, .tol = 0};
        int64_t dims[4], bd[4];
        const int32_t rank = rand_shape(dims);
        memcpy(bd, dims, sizeof bd);
        if (r >= 2) bd[rank - 1] = 1;
        add_in(&c, dn_rand_int(TC_DTYPE_BOOL, rank, dims, 0, 1), false);
        add_in(&c, dn_rand_int(TC_DTYPE_BOOL, r == 3 ? 1 : rank, r == 3 ? dims + rank - 1 : bd, 0, 1), r % 2 == 1);
        run_case(&c);
    }
    for (int r = 0; r < 2; r++) {
        tcase c = {.op = "Not", .opset = 1, .tol = 0};
        int64_t dims[4];
        const int32_t rank = rand_shape(dims);
        add_in(&c, dn_rand_int(TC_DTYPE_BOOL, rank, dims, 0, 1), false);
        run_case(&c);
    }
    static const char *const cmp[] = {"Equal", "Less", "Greater"};
    for (int o = 0; o < 3; o++)
        for (int r = 0; r < 4; r++) {
            tcase c = {.op = cmp[o], .opset = 13, .tol = 0};
            int64_t dims[4], bd[4];
            const int32_t rank = rand_shape(dims);
            memcpy(bd, dims, sizeof bd);
            if (r % 2 == 1) bd[0] = 1;
            if (r < 2) {
                add_in(&c, dn_rand_ties(rank, dims, -2, 2, true), false);
                add_in(&c, r == 0 ? dn_rand_ties(rank, bd, -2, 2, true) : etu_scalar_f64(TC_DTYPE_FLOAT32, 1.0),
                       r == 1);
            } else {
                const tc_dtype dt = r == 2 ? TC_DTYPE_INT64 : TC_DTYPE_INT32;
                add_in(&c, dn_rand_int(dt, rank, dims, -2, 2), false);
                add_in(&c, dn_rand_int(dt, rank, bd, -2, 2), false);
            }
            run_case(&c);
        }
    for (int r = 0; r < 2; r++) {
        tcase c = {.op = "IsNaN", .opset = 13, .tol = 0};
        int64_t dims[4];
        const int32_t rank = rand_shape(dims);
        tc__tensor x = etu_random(&rng, TC_DTYPE_FLOAT16, rank, dims, -1, 1);
        uint16_t *h = x.data;
        for (int64_t i = 0; i < tc__tensor_numel(&x); i++)
            if (i % 4 == 1) h[i] = i % 8 == 1 ? 0x7c00u : 0xfe01u; /* +inf (not NaN) and a negative NaN */
        add_in(&c, x, false);
        run_case(&c);
    }
}

/* ---- Expand, Slice ----------------------------------------------------------------------------------------- */

static void dn_expand_cases(void) {
    for (int r = 0; r < 5; r++) {
        tcase c = {.op = "Expand", .opset = 13, .tol = 0};
        const int64_t n = pick(kEdge, 10);
        const int64_t xd[2] = {n, 1}, x3[3] = {n, 1, 4};
        if (r == 4) add_in(&c, dn_rand_int(TC_DTYPE_INT64, 3, x3, -50, 50), false);
        else if (r == 3) add_in(&c, dn_rand_int(TC_DTYPE_BOOL, 2, xd, 0, 1), false);
        else add_in(&c, rand_t(2, xd, -1, 1), false);
        int64_t shape[4] = {2, 1, 5, 1};
        int64_t ns = 3;
        switch (r) {
        case 0: shape[0] = 2, shape[1] = n, shape[2] = 6; break;          /* [2, n, 6] */
        case 1: shape[0] = 3, shape[1] = 1, shape[2] = 1, shape[3] = 1, ns = 4; break; /* [3, 1, n, 1] */
        case 2: shape[0] = 1, shape[1] = 7, ns = 2; break;                /* [n, 7] */
        case 3: shape[0] = 2, shape[1] = 1, shape[2] = 3; break;          /* [2, n, 3] */
        default: shape[0] = 2, shape[1] = 1, shape[2] = 3, shape[3] = 1, ns = 4; break; /* [2, n, 3, 4] */
        }
        add_in(&c, dn_i64_1d(ns, shape), true);
        run_case(&c);
    }
}

static void dn_slice_cases(void) {
    static const int64_t x[3] = {5, 7, 9};
    static const struct {
        int n;
        int64_t starts[3], ends[3], axes[3], steps[3];
        bool has_axes, has_steps;
    } sl[] = {
        {1, {1}, {4}, {0}, {1}, false, false},
        {2, {-3, 0}, {100, -1}, {2, 1}, {1, 2}, true, true},
        {1, {-1}, {-1000}, {1}, {-1}, true, true},         /* reversed */
        {3, {4, 6, 8}, {0, -100, 1}, {0, 1, 2}, {-2, -3, -4}, true, true},
        {1, {2}, {2}, {-1}, {1}, true, false},             /* empty */
        {2, {10, -20}, {20, 3}, {0, -2}, {1, 1}, true, true}, /* clamped: empty along 0 */
        {1, {0}, {INT64_MAX}, {-1}, {3}, true, true},
    };
    const int ncase = (int)(sizeof sl / sizeof sl[0]);
    for (int r = 0; r < ncase; r++) {
        tcase c = {.op = "Slice", .opset = 13, .tol = 0};
        const tc_dtype dt = r % 3 == 0 ? TC_DTYPE_FLOAT32 : r % 3 == 1 ? TC_DTYPE_INT64 : TC_DTYPE_UINT8;
        if (dt == TC_DTYPE_FLOAT32) add_in(&c, rand_t(3, x, -1, 1), false);
        else add_in(&c, dn_rand_int(dt, 3, x, 0, 250), false);
        const int64_t n = sl[r].n;
        const tc_dtype it = r == 1 ? TC_DTYPE_INT32 : TC_DTYPE_INT64; /* int32 parameters once */
        add_in(&c, etu_from_i64(it, 1, &n, sl[r].starts), true);
        add_in(&c, etu_from_i64(it, 1, &n, sl[r].ends), true);
        if (sl[r].has_axes) add_in(&c, etu_from_i64(it, 1, &n, sl[r].axes), true);
        if (sl[r].has_steps) add_in(&c, etu_from_i64(it, 1, &n, sl[r].steps), true);
        run_case(&c);
    }
    { /* opset 9: attributes */
        static const int64_t starts[2] = {1, -4}, ends[2] = {3, 1000}, axes[2] = {0, 2};
        tcase c = {.op = "Slice", .opset = 9, .tol = 0};
        add_in(&c, rand_t(3, x, -1, 1), false);
        c.attrs[c.n_attrs++] = etu_attr_ints("starts", starts, 2);
        c.attrs[c.n_attrs++] = etu_attr_ints("ends", ends, 2);
        c.attrs[c.n_attrs++] = etu_attr_ints("axes", axes, 2);
        run_case(&c);
    }
}

/* ---- ReduceMean, Pow --------------------------------------------------------------------------------------- */

static void dn_reduce_pow_cases(void) {
    static const int64_t ax1[1] = {1}, axm1[1] = {-1}, ax02[2] = {0, 2};
    for (int r = 0; r < 7; r++) {
        tcase c = {.op = "ReduceMean", .opset = r < 4 ? 13 : 18, .tol = 1e-5};
        int64_t dims[3] = {pick(kEdge, 10), pick(kEdge, 10), r == 1 ? 3000 : pick(kEdge, 10)};
        add_in(&c, rand_t(3, dims, -2, 3), false);
        switch (r) {
        case 0: c.attrs[c.n_attrs++] = etu_attr_ints("axes", ax1, 1); break;
        case 1: c.attrs[c.n_attrs++] = etu_attr_ints("axes", axm1, 1), c.attrs[c.n_attrs++] = etu_attr_int("keepdims", 0); break;
        case 2: c.attrs[c.n_attrs++] = etu_attr_ints("axes", ax02, 2); break;
        case 3: c.attrs[c.n_attrs++] = etu_attr_int("keepdims", 0); break; /* every axis */
        case 4: add_in(&c, dn_i64_1d(1, axm1), true); break;
        case 5: add_in(&c, dn_i64_1d(2, ax02), true), c.attrs[c.n_attrs++] = etu_attr_int("keepdims", 0); break;
        default: c.attrs[c.n_attrs++] = etu_attr_int("noop_with_empty_axes", 1); break;
        }
        run_case(&c);
    }
    for (int r = 0; r < 6; r++) {
        tcase c = {.op = "Pow", .opset = 15, .tol = 2e-6};
        int64_t dims[4];
        const int32_t rank = rand_shape(dims);
        if (r < 3) {
            add_in(&c, rand_t(rank, dims, 0.25, 3), false);
            if (r == 0) add_in(&c, etu_scalar_f64(TC_DTYPE_FLOAT32, 2.0), true); /* LayerNorm's x^2 */
            else if (r == 1) add_in(&c, rand_t(1, dims + rank - 1, -2, 2), true);
            else add_in(&c, rand_t(rank, dims, -3, 3), false);
        } else {
            tc__tensor a = rand_t(rank, dims, -3, 3); /* negative bases: integer exponents, NaN for 0.5 */
            add_in(&c, a, false);
            if (r == 3) add_in(&c, etu_scalar_i64(TC_DTYPE_INT64, 3), true);
            else if (r == 4) add_in(&c, etu_scalar_i64(TC_DTYPE_INT32, -2), true);
            else add_in(&c, etu_scalar_f64(TC_DTYPE_FLOAT32, 0.5), true);
        }
        run_case(&c);
    }
}

static void dense_extra_cases(void) {
    dn_matmul_cases();
    dn_gemm_cases();
    dn_softmax_cases();
    dn_layernorm_cases();
    dn_embed_layernorm_cases();
    dn_gather_cases();
    dn_where_cases();
    dn_cast_cases();
    dn_bool_cases();
    dn_expand_cases();
    dn_slice_cases();
    dn_reduce_pow_cases();
}

#endif
