/* test_cpu_movement.c - the portable Transpose, Where and IsNaN tactics against the reference
 * kernels on random shapes (sizes 1, odd, primes), every permutation of rank 1..4, broadcasting
 * patterns, NaN inputs, and supports() refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backends/cpu/tactics.h"
#include "backends/ref/ref.h"

static uint64_t rng = 0x853c49e6748fea9bull;
static uint64_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static tc__tensor make(tc_dtype dt, int32_t rank, const int64_t *dims) {
    tc__tensor t;
    assert_int_equal(tc__tensor_alloc(&t, dt, rank, dims, NULL), TC_STATUS_OK);
    for (int64_t i = 0; i < tc__tensor_numel(&t); i++) {
        if (dt == TC_DTYPE_BOOL) ((uint8_t *)t.data)[i] = next() & 1;
        else if (dt == TC_DTYPE_FLOAT32) ((float *)t.data)[i] = (float)((int64_t)(next() % 2001) - 1000) / 7.0f + 0.5f;
        else ((int32_t *)t.data)[i] = (int32_t)(next() % 100000) - 50000;
    }
    return t;
}

/* Runs the reference kernel and the tactic on the same inputs and checks the outputs are equal. */
static void check(const tc__tactic *t, tc__ref_fn ref, const tc__attrs *attrs, int n_in, const tc__tensor *const *in,
                  tc_dtype out_dt, int32_t out_rank, const int64_t *out_dims) {
    tc__tensor a = make(out_dt, out_rank, out_dims), b = make(out_dt, out_rank, out_dims);
    tc__tensor *pa[1] = {&a}, *pb[1] = {&b};
    tc__err err = {0};
    tc__kernel_ctx kc = {.node_name = "t", .op_type = t->op_type, .opset = 17, .attrs = attrs, .n_in = n_in, .in = in,
                         .n_out = 1, .out = pa, .err = &err};
    assert_int_equal(ref(&kc), TC_STATUS_OK);
    bool cst[3] = {false, false, false};
    const tc__tensor *po[1] = {&b};
    tc__epilogue none = tc__epilogue_none();
    tc__step_desc d = {.op_type = t->op_type, .opset = 17, .attrs = attrs, .n_in = n_in, .in = in, .in_const = cst,
                       .n_out = 1, .out = po, .epi = &none};
    assert_true(t->supports(&d));
    kc.out = pb;
    assert_int_equal(t->run(&kc), TC_STATUS_OK);
    assert_memory_equal(a.data, b.data, a.nbytes);
    tc__tensor_free(&a);
    tc__tensor_free(&b);
}

static void test_transpose_all_perms(void **state) {
    (void)state;
    const int64_t sizes[] = {1, 2, 3, 5, 7, 13, 17};
    for (int32_t rank = 1; rank <= 4; rank++) {
        int64_t perm[4] = {0, 1, 2, 3};
        /* Iterate over all permutations of rank elements (Heap's algorithm would do; brute force is fine). */
        for (int code = 0; code < 256; code++) {
            int64_t p[4];
            bool used[4] = {false};
            bool ok = true;
            for (int32_t i = 0, c = code; i < rank; i++, c /= 4) {
                p[i] = c % 4;
                if (p[i] >= rank || used[p[i]]) ok = false;
                else used[p[i]] = true;
            }
            if (!ok) continue;
            (void)perm;
            int64_t dims[4], odims[4];
            for (int32_t i = 0; i < rank; i++) dims[i] = sizes[next() % 7];
            for (int32_t i = 0; i < rank; i++) odims[i] = dims[p[i]];
            tc__attr attr = {.name = "perm", .kind = TC__ATTR_INTS, .n = (size_t)rank, .ints = p};
            tc__attrs attrs = {1, &attr};
            tc_dtype dt = (code & 1) ? TC_DTYPE_FLOAT32 : TC_DTYPE_INT32;
            tc__tensor x = make(dt, rank, dims);
            const tc__tensor *in[1] = {&x};
            check(&tc__tactic_transpose_x32, tc__ref_Transpose, &attrs, 1, in, dt, rank, odims);
            tc__tensor_free(&x);
        }
    }
    /* Default perm (reverse) and a BERT head split [1,128,12,64] -> [1,12,64,128]. */
    int64_t dims[4] = {1, 33, 12, 64}, od[4] = {64, 12, 33, 1};
    tc__tensor x = make(TC_DTYPE_FLOAT32, 4, dims);
    const tc__tensor *in[1] = {&x};
    tc__attrs none = {0, NULL};
    check(&tc__tactic_transpose_x32, tc__ref_Transpose, &none, 1, in, TC_DTYPE_FLOAT32, 4, od);
    int64_t p[4] = {0, 2, 3, 1}, od2[4] = {1, 12, 64, 33};
    tc__attr attr = {.name = "perm", .kind = TC__ATTR_INTS, .n = 4, .ints = p};
    tc__attrs attrs = {1, &attr};
    check(&tc__tactic_transpose_x32, tc__ref_Transpose, &attrs, 1, in, TC_DTYPE_FLOAT32, 4, od2);
    tc__tensor_free(&x);
}

static void test_where_broadcasts(void **state) {
    (void)state;
    const int64_t shapes[][4] = {{2, 3, 5, 7}, {1, 1, 5, 7}, {2, 1, 1, 7}, {1, 3, 1, 1}, {1, 1, 1, 1}};
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++)
            for (int c = 0; c < 5; c++) {
                tc__tensor cond = make(TC_DTYPE_BOOL, 4, shapes[a]);
                tc__tensor x = make(TC_DTYPE_FLOAT32, 4, shapes[b]);
                tc__tensor y = make(TC_DTYPE_FLOAT32, c == 4 ? 0 : 4, shapes[c]);
                int64_t od[4];
                for (int i = 0; i < 4; i++) {
                    od[i] = shapes[a][i];
                    if (shapes[b][i] > od[i]) od[i] = shapes[b][i];
                    if (c != 4 && shapes[c][i] > od[i]) od[i] = shapes[c][i];
                }
                const tc__tensor *in[3] = {&cond, &x, &y};
                check(&tc__tactic_where_x32, tc__ref_Where, NULL, 3, in, TC_DTYPE_FLOAT32, 4, od);
                tc__tensor_free(&cond);
                tc__tensor_free(&x);
                tc__tensor_free(&y);
            }
}

static void test_isnan_and_refusals(void **state) {
    (void)state;
    int64_t dims[2] = {3, 17};
    tc__tensor x = make(TC_DTYPE_FLOAT32, 2, dims);
    float *f = x.data;
    f[0] = __builtin_nanf("");
    f[5] = -__builtin_nanf("");
    f[7] = __builtin_inff();
    const tc__tensor *in[1] = {&x};
    check(&tc__tactic_isnan_f32, tc__ref_IsNaN, NULL, 1, in, TC_DTYPE_BOOL, 2, dims);
    tc__tensor_free(&x);
    /* Refusals: 8-byte elements for Transpose, a non-bool condition for Where, an epilogue. */
    tc__tensor d = make(TC_DTYPE_INT32, 2, dims);
    d.dtype = TC_DTYPE_FLOAT64; /* only the dtype matters to supports() */
    const tc__tensor *din[1] = {&d}, *dout[1] = {&d};
    bool cst[3] = {false, false, false};
    tc__epilogue none = tc__epilogue_none(), relu = tc__epilogue_none();
    relu.act = TC__ACT_RELU;
    tc__attrs noattrs = {0, NULL};
    tc__step_desc sd = {.op_type = "Transpose", .attrs = &noattrs, .n_in = 1, .in = din, .in_const = cst, .n_out = 1,
                        .out = dout, .epi = &none};
    assert_false(tc__tactic_transpose_x32.supports(&sd));
    d.dtype = TC_DTYPE_FLOAT32;
    sd.epi = &relu;
    assert_false(tc__tactic_transpose_x32.supports(&sd));
    const tc__tensor *win[3] = {&d, &d, &d};
    tc__step_desc wd = {.op_type = "Where", .n_in = 3, .in = win, .in_const = cst, .n_out = 1, .out = dout, .epi = &none};
    assert_false(tc__tactic_where_x32.supports(&wd));
    tc__tensor_free(&d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transpose_all_perms),
        cmocka_unit_test(test_where_broadcasts),
        cmocka_unit_test(test_isnan_and_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
