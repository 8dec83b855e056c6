/*
 * cases_mmi.h - MatMulInteger cases for test_all_tactics.c (included there; uses its tcase, add_in, pick, kEdge, rng
 * and run_case): A [M, K] or [2, M, K] and B [K, N] in uint8 or int8 over their whole range, M, K and N from the edge
 * sizes (and K = 768, 769), B constant or computed, A's zero point absent or one value, B's absent, one value or one
 * per column. The outputs are int32 and must equal the reference's bytes.
 */
#ifndef TC_TESTS_CASES_MMI_H
#define TC_TESTS_CASES_MMI_H

static tc__tensor rand8(tc_dtype dt, int32_t rank, const int64_t *dims) {
    return dt == TC_DTYPE_INT8 ? etu_random(&rng, dt, rank, dims, -128, 127) : etu_random(&rng, dt, rank, dims, 0, 255);
}

static void mmi_cases(void) {
    for (int r = 0; r < 24; r++) {
        tcase c = {.op = "MatMulInteger", .opset = 10, .tol = 0};
        const tc_dtype ta = r % 2 ? TC_DTYPE_INT8 : TC_DTYPE_UINT8, tb = (r / 2) % 2 ? TC_DTYPE_UINT8 : TC_DTYPE_INT8;
        const int64_t m = pick(kEdge, 10), n = pick(kEdge, 10), k = r == 5 ? 768 : r == 6 ? 769 : pick(kEdge, 10);
        const int64_t a3[3] = {2, m, k}, b2[2] = {k, n};
        add_in(&c, rand8(ta, r % 3 == 1 ? 3 : 2, r % 3 == 1 ? a3 : a3 + 1), false);
        add_in(&c, rand8(tb, 2, b2), r % 4 != 3);
        const int za = r % 3, zb = (r / 3) % 3; /* 0: absent; A: 1, 2 one value ([] or [1]); B: 1 one, 2 per column */
        if (za || zb) {
            const int64_t one = 1;
            if (za) add_in(&c, rand8(ta, za == 2 ? 1 : 0, &one), false);
            else c.n_in++;
            if (zb) add_in(&c, rand8(tb, zb == 2 ? 1 : 0, zb == 2 ? &n : &one), true);
        }
        run_case(&c);
    }
}

#endif
