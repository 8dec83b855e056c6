/*
 * test_infer_quant.c - shape and type inference of QuantizeLinear and DequantizeLinear: output types from the
 * zero point (uint8 by default, output_dtype), per-tensor scales written as [] or [1], per-axis scales; and
 * the nodes refused with a reason: a non-float32 scale or input, a 2-D scale, a zero point of another type or
 * size, a per-axis scale of the wrong length or on a missing axis, block_size, an output_dtype that disagrees.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "graph/op_schema.h"

static tc__vinfo vi(tc_dtype dt, int32_t rank, const int64_t *dims) {
    tc__vinfo v;
    tc__vinfo_init(&v);
    v.dtype = dt;
    v.shape.rank = rank;
    for (int32_t i = 0; i < rank; i++) v.shape.dims[i] = tc__dim_known(dims[i]);
    return v;
}

/* Runs fn on x, scale and an optional zero point (z NULL: absent) with the attributes; returns the status. */
static tc_status run(tc__infer_fn fn, const tc__vinfo *x, const tc__vinfo *s, const tc__vinfo *z, const tc__attr *attrs,
                     int n_attrs, tc__vinfo *out, char *msg, size_t msg_size) {
    const tc__vinfo *in[3] = {x, s, z};
    tc__attrs as = {n_attrs, attrs};
    tc__err err = {0};
    tc__vinfo_init(out);
    tc__infer_ctx ctx = {"q", "Q", 21, &as, z ? 3 : 2, in, 1, out, &err};
    tc_status st = fn(&ctx);
    snprintf(msg, msg_size, "%s", err.msg);
    return st;
}

static const int64_t kX[4] = {2, 3, 4, 5}, kOne[1] = {1}, kThree[1] = {3}, kTwo[2] = {1, 3};

static void test_accepted(void **state) {
    (void)state;
    tc__vinfo x = vi(TC_DTYPE_FLOAT32, 4, kX), s0 = vi(TC_DTYPE_FLOAT32, 0, NULL), s1 = vi(TC_DTYPE_FLOAT32, 1, kOne);
    tc__vinfo z8 = vi(TC_DTYPE_INT8, 0, NULL), zu1 = vi(TC_DTYPE_UINT8, 1, kOne), out;
    char msg[1100];
    assert_int_equal(run(tc__infer_QuantizeLinear, &x, &s0, NULL, NULL, 0, &out, msg, sizeof msg), TC_STATUS_OK);
    assert_int_equal(out.dtype, TC_DTYPE_UINT8); /* no zero point: uint8 */
    assert_int_equal(out.shape.rank, 4);
    assert_int_equal(run(tc__infer_QuantizeLinear, &x, &s1, &z8, NULL, 0, &out, msg, sizeof msg), TC_STATUS_OK);
    assert_int_equal(out.dtype, TC_DTYPE_INT8); /* [1] scale with a [] zero point, as exporters write them */
    const tc__attr od = {.name = "output_dtype", .kind = TC__ATTR_INT, .i = TC_DTYPE_INT8};
    assert_int_equal(run(tc__infer_QuantizeLinear, &x, &s0, NULL, &od, 1, &out, msg, sizeof msg), TC_STATUS_OK);
    assert_int_equal(out.dtype, TC_DTYPE_INT8);
    tc__vinfo q = vi(TC_DTYPE_UINT8, 4, kX), s3 = vi(TC_DTYPE_FLOAT32, 1, kThree), z3 = vi(TC_DTYPE_UINT8, 1, kThree);
    assert_int_equal(run(tc__infer_DequantizeLinear, &q, &s3, &z3, NULL, 0, &out, msg, sizeof msg), TC_STATUS_OK);
    assert_int_equal(out.dtype, TC_DTYPE_FLOAT32); /* per axis 1 (the default) */
    assert_int_equal(run(tc__infer_DequantizeLinear, &q, &s1, &zu1, NULL, 0, &out, msg, sizeof msg), TC_STATUS_OK);
    tc__vinfo i32 = vi(TC_DTYPE_INT32, 1, kThree);
    assert_int_equal(run(tc__infer_DequantizeLinear, &i32, &s0, NULL, NULL, 0, &out, msg, sizeof msg), TC_STATUS_OK);
}

/* fn on the operands must fail and say `why`. */
static void refused(tc__infer_fn fn, const tc__vinfo *x, const tc__vinfo *s, const tc__vinfo *z, const tc__attr *attrs,
                    int n_attrs, const char *why) {
    tc__vinfo out;
    char msg[1100];
    if (run(fn, x, s, z, attrs, n_attrs, &out, msg, sizeof msg) == TC_STATUS_OK) fail_msg("accepted; wanted '%s'", why);
    if (strstr(msg, why) == NULL) fail_msg("error '%s' lacks '%s'", msg, why);
}

static void test_refused(void **state) {
    (void)state;
    tc__vinfo x = vi(TC_DTYPE_FLOAT32, 4, kX), s0 = vi(TC_DTYPE_FLOAT32, 0, NULL), q = vi(TC_DTYPE_UINT8, 4, kX);
    tc__vinfo s_f64 = vi(TC_DTYPE_FLOAT64, 0, NULL), s2d = vi(TC_DTYPE_FLOAT32, 2, kTwo), z16 = vi(TC_DTYPE_INT16, 0, NULL);
    tc__vinfo s3 = vi(TC_DTYPE_FLOAT32, 1, kThree), z1 = vi(TC_DTYPE_UINT8, 1, kOne), x64 = vi(TC_DTYPE_FLOAT64, 4, kX);
    tc__vinfo s5 = vi(TC_DTYPE_FLOAT32, 1, (const int64_t[]){5}), q16 = vi(TC_DTYPE_INT16, 4, kX);
    refused(tc__infer_QuantizeLinear, &x, &s_f64, NULL, NULL, 0, "float32 scales");
    refused(tc__infer_QuantizeLinear, &x64, &s0, NULL, NULL, 0, "float32 inputs");
    refused(tc__infer_QuantizeLinear, &x, &s2d, NULL, NULL, 0, "scalar or 1-D");
    refused(tc__infer_QuantizeLinear, &x, &s0, &z16, NULL, 0, "zero point of type");
    refused(tc__infer_QuantizeLinear, &x, &s3, &z1, NULL, 0, "differ in size");
    refused(tc__infer_QuantizeLinear, &x, &s5, NULL, NULL, 0, "5 scales for axis 1");
    const tc__attr axis9 = {.name = "axis", .kind = TC__ATTR_INT, .i = 9};
    refused(tc__infer_QuantizeLinear, &x, &s3, NULL, &axis9, 1, "axis");
    const tc__attr block = {.name = "block_size", .kind = TC__ATTR_INT, .i = 2};
    refused(tc__infer_QuantizeLinear, &x, &s0, NULL, &block, 1, "block_size");
    const tc__attr od16 = {.name = "output_dtype", .kind = TC__ATTR_INT, .i = TC_DTYPE_INT16};
    refused(tc__infer_QuantizeLinear, &x, &s0, NULL, &od16, 1, "output_dtype");
    const tc__attr od8 = {.name = "output_dtype", .kind = TC__ATTR_INT, .i = TC_DTYPE_INT8};
    refused(tc__infer_QuantizeLinear, &x, &s0, &z1, &od8, 1, "differs from the zero point");
    refused(tc__infer_DequantizeLinear, &q16, &s0, NULL, NULL, 0, "dequantizing");
    refused(tc__infer_DequantizeLinear, &q, &s0, &z16, NULL, 0, "zero point of type");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepted),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
