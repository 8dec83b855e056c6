/*
 * test_onnx_tensor.c - unit tests of TensorProto decoding in the ONNX importer: raw_data and every
 * typed field (with narrowing, float16/bfloat16 bit patterns, bool), symval of small int64
 * initializers, payload adoption without a copy, size/type/shape errors, and .pb tensor files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "onnx_test_util.h"

/* Initializers through every typed field, with conversions and float16/bfloat16 bit patterns. */
static void test_typed_initializers(void **state) {
    (void)state;
    B *b = b_new(13);
    const int64_t d4[] = {4}, d2[] = {2}, d0[] = {0};
    Onnx__TensorProto *t;
    const int32_t i8[] = {-128, 127, -1, 5};
    t = b_init(b, b_tensor(b, "i8", TC_DTYPE_INT8, 1, d4));
    t->n_int32_data = 4, t->int32_data = b_dup(b, i8, sizeof i8);
    const int32_t u8[] = {0, 255, 7, 128};
    t = b_init(b, b_tensor(b, "u8", TC_DTYPE_UINT8, 1, d4));
    t->n_int32_data = 4, t->int32_data = b_dup(b, u8, sizeof u8);
    const int32_t i16[] = {-32768, 32767, -2, 300};
    t = b_init(b, b_tensor(b, "i16", TC_DTYPE_INT16, 1, d4));
    t->n_int32_data = 4, t->int32_data = b_dup(b, i16, sizeof i16);
    const int32_t u16[] = {65535, 0, 1, 40000};
    t = b_init(b, b_tensor(b, "u16", TC_DTYPE_UINT16, 1, d4));
    t->n_int32_data = 4, t->int32_data = b_dup(b, u16, sizeof u16);
    const int32_t bl[] = {1, 0, 0, 1};
    t = b_init(b, b_tensor(b, "bool", TC_DTYPE_BOOL, 1, d4));
    t->n_int32_data = 4, t->int32_data = b_dup(b, bl, sizeof bl);
    /* float16 1.0, -2.5, 65504 and a NaN; bfloat16 1.0, -2.0, 0.5, +inf */
    const int32_t f16[] = {0x3C00, 0xC100, 0x7BFF, 0x7E00};
    t = b_init(b, b_tensor(b, "f16", TC_DTYPE_FLOAT16, 1, d4));
    t->n_int32_data = 4, t->int32_data = b_dup(b, f16, sizeof f16);
    const int32_t bf16[] = {0x3F80, 0xC000, 0x3F00, 0x7F80};
    t = b_init(b, b_tensor(b, "bf16", TC_DTYPE_BFLOAT16, 1, d4));
    t->n_int32_data = 4, t->int32_data = b_dup(b, bf16, sizeof bf16);
    const int32_t i32[] = {INT32_MIN, INT32_MAX};
    t = b_init(b, b_tensor(b, "i32", TC_DTYPE_INT32, 1, d2));
    t->n_int32_data = 2, t->int32_data = b_dup(b, i32, sizeof i32);
    const uint64_t u32[] = {UINT32_MAX, 12};
    t = b_init(b, b_tensor(b, "u32", TC_DTYPE_UINT32, 1, d2));
    t->n_uint64_data = 2, t->uint64_data = b_dup(b, u32, sizeof u32);
    const uint64_t u64[] = {UINT64_MAX, 3};
    t = b_init(b, b_tensor(b, "u64", TC_DTYPE_UINT64, 1, d2));
    t->n_uint64_data = 2, t->uint64_data = b_dup(b, u64, sizeof u64);
    const double f64[] = {-1.0 / 3.0, 1e300};
    t = b_init(b, b_tensor(b, "f64", TC_DTYPE_FLOAT64, 1, d2));
    t->n_double_data = 2, t->double_data = b_dup(b, f64, sizeof f64);
    const float f32[] = {0.1f, -7.0f};
    t = b_init(b, b_tensor(b, "f32", TC_DTYPE_FLOAT32, 1, d2));
    t->n_float_data = 2, t->float_data = b_dup(b, f32, sizeof f32);
    const int64_t i64[] = {-1, 224, 224};
    const int64_t d3[] = {3};
    t = b_init(b, b_tensor(b, "i64", TC_DTYPE_INT64, 1, d3));
    t->n_int64_data = 3, t->int64_data = b_dup(b, i64, sizeof i64);
    const int64_t sc = 42;
    t = b_init(b, b_tensor(b, "scalar", TC_DTYPE_INT64, 0, d3));
    b_raw(b, t, &sc, sizeof sc);
    b_init(b, b_tensor(b, "empty", TC_DTYPE_FLOAT32, 1, d0)); /* no data at all: 0 elements */
    const int64_t nine[] = {9};
    const int64_t nine_v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    t = b_init(b, b_tensor(b, "i64_9", TC_DTYPE_INT64, 1, nine));
    b_raw(b, t, nine_v, sizeof nine_v);
    const uint16_t raw16[] = {0x3C00, 0xBC00};
    b_raw(b, b_init(b, b_tensor(b, "f16raw", TC_DTYPE_FLOAT16, 1, d2)), raw16, sizeof raw16);
    const uint8_t rawbool[] = {0, 1, 2, 255};
    b_raw(b, b_init(b, b_tensor(b, "boolraw", TC_DTYPE_BOOL, 1, d4)), rawbool, sizeof rawbool);

    tc__graph *g = expect_ok(b, NULL);
    const int8_t e_i8[] = {-128, 127, -1, 5};
    assert_memory_equal(init_of(g, "i8")->data, e_i8, 4);
    const uint8_t e_u8[] = {0, 255, 7, 128};
    assert_memory_equal(init_of(g, "u8")->data, e_u8, 4);
    const int16_t e_i16[] = {-32768, 32767, -2, 300};
    assert_memory_equal(init_of(g, "i16")->data, e_i16, 8);
    const uint16_t e_u16[] = {65535, 0, 1, 40000};
    assert_memory_equal(init_of(g, "u16")->data, e_u16, 8);
    const uint8_t e_bl[] = {1, 0, 0, 1};
    assert_memory_equal(init_of(g, "bool")->data, e_bl, 4);
    const tc__tensor *h = init_of(g, "f16");
    assert_int_equal(h->nbytes, 8);
    assert_true(tc__tensor_get_f64(h, 0) == 1.0);
    assert_true(tc__tensor_get_f64(h, 1) == -2.5);
    assert_true(tc__tensor_get_f64(h, 2) == 65504.0);
    assert_true(tc__tensor_get_f64(h, 3) != tc__tensor_get_f64(h, 3)); /* NaN */
    const tc__tensor *bf = init_of(g, "bf16");
    assert_true(tc__tensor_get_f64(bf, 0) == 1.0);
    assert_true(tc__tensor_get_f64(bf, 1) == -2.0);
    assert_true(tc__tensor_get_f64(bf, 2) == 0.5);
    assert_true(tc__tensor_get_f64(bf, 3) > 1e300);
    assert_memory_equal(init_of(g, "i32")->data, i32, sizeof i32);
    const uint32_t e_u32[] = {UINT32_MAX, 12};
    assert_memory_equal(init_of(g, "u32")->data, e_u32, sizeof e_u32);
    assert_memory_equal(init_of(g, "u64")->data, u64, sizeof u64);
    assert_memory_equal(init_of(g, "f64")->data, f64, sizeof f64);
    assert_memory_equal(init_of(g, "f32")->data, f32, sizeof f32);
    assert_memory_equal(init_of(g, "i64")->data, i64, sizeof i64);
    const tc__tensor *e = init_of(g, "empty");
    assert_int_equal(e->rank, 1);
    assert_int_equal(e->dims[0], 0);
    assert_int_equal(e->nbytes, 0);
    assert_non_null(e->data);
    const uint16_t *r16 = init_of(g, "f16raw")->data;
    assert_int_equal(r16[0], 0x3C00);
    assert_int_equal(r16[1], 0xBC00);
    const uint8_t *rb = init_of(g, "boolraw")->data;
    assert_int_equal(rb[0], 0);
    assert_int_equal(rb[1], 1);
    assert_int_equal(rb[2], 1); /* normalised */
    assert_int_equal(rb[3], 1);

    /* symval: small 0-D/1-D int64 initializers carry their elements as known dims. */
    const tc__value *vi64 = value(g, "i64");
    assert_int_equal(vi64->info.symval_len, 3);
    assert_int_equal(vi64->info.symval[1].value, 224);
    assert_int_equal(vi64->info.symval[2].value, 224);
    assert_int_equal(vi64->info.symval[0].value, -1); /* -1 stays as is (reads as "not known") */
    const tc__value *vs = value(g, "scalar");
    assert_int_equal(vs->info.shape.rank, 0);
    assert_int_equal(vs->info.symval_len, 1);
    assert_int_equal(vs->info.symval[0].value, 42);
    assert_int_equal(value(g, "i64_9")->info.symval_len, -1); /* more than TC_MAX_RANK elements */
    assert_int_equal(value(g, "i32")->info.symval_len, -1);
    tc__graph_destroy(g);
    b_free(b);
}

/* Payloads of at least 4 KiB are adopted from the parser's buffers: check they survive intact. */

/* Payloads of at least 4 KiB are adopted from the parser's buffers: check they survive intact. */
static void test_large_initializers(void **state) {
    (void)state;
    B *b = b_new(13);
    enum { N = 3000 };
    const int64_t dn[] = {N};
    float *f = b_alloc(b, N * sizeof *f);
    int32_t *i8 = b_alloc(b, N * sizeof *i8);
    int64_t *i64 = b_alloc(b, N * sizeof *i64);
    for (int i = 0; i < N; i++) {
        f[i] = (float)i * 0.5f - 700.0f;
        i8[i] = (i % 255) - 127;
        i64[i] = (int64_t)i * 1000003 - 5;
    }
    b_raw(b, b_init(b, b_tensor(b, "raw", TC_DTYPE_FLOAT32, 1, dn)), f, N * sizeof *f);
    Onnx__TensorProto *t = b_init(b, b_tensor(b, "fd", TC_DTYPE_FLOAT32, 1, dn));
    t->n_float_data = N, t->float_data = f;
    t = b_init(b, b_tensor(b, "i8", TC_DTYPE_INT8, 1, dn));
    t->n_int32_data = N, t->int32_data = i8;
    t = b_init(b, b_tensor(b, "i64", TC_DTYPE_INT64, 1, dn));
    t->n_int64_data = N, t->int64_data = i64;
    Onnx__NodeProto *n = b_node(b, "c", "Constant", NULL, "k");
    t = b_tensor(b, "", TC_DTYPE_FLOAT32, 1, dn);
    b_raw(b, t, f, N * sizeof *f);
    b_attr(b, n, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR)->t = t;
    tc__graph *g = expect_ok(b, NULL);
    assert_memory_equal(init_of(g, "raw")->data, f, N * sizeof *f);
    assert_memory_equal(init_of(g, "fd")->data, f, N * sizeof *f);
    assert_memory_equal(init_of(g, "i64")->data, i64, N * sizeof *i64);
    const int8_t *p8 = init_of(g, "i8")->data;
    for (int i = 0; i < N; i++) assert_int_equal(p8[i], i8[i]);
    const tc__tensor *k = tc__attr_tensor(&g->nodes[0].attrs, "value");
    assert_int_equal((uintptr_t)k->data % 64, 0);
    assert_memory_equal(k->data, f, N * sizeof *f);
    tc__graph_destroy(g);
    b_free(b);
}

/* A 1 MiB payload lands in the graph once: the arena holds it without a second copy. */

/* A 1 MiB payload lands in the graph once: the arena holds it without a second copy. */
static void test_payload_not_copied(void **state) {
    (void)state;
    B *b = b_new(13);
    enum { N = 1 << 18 };
    const int64_t dn[] = {N};
    float *f = b_alloc(b, N * sizeof *f);
    for (int i = 0; i < N; i++) f[i] = (float)(i % 1000) - 499.5f;
    b_raw(b, b_init(b, b_tensor(b, "big", TC_DTYPE_FLOAT32, 1, dn)), f, N * sizeof *f);
    tc__graph *g = expect_ok(b, NULL);
    assert_memory_equal(init_of(g, "big")->data, f, N * sizeof *f);
    assert_true(g->arena.total_bytes < N * sizeof *f + 256 * 1024);
    tc__graph_destroy(g);
    b_free(b);
}

static void test_initializer_errors(void **state) {
    (void)state;
    const int64_t d4[] = {4}, d2x2[] = {2, 2};
    const float f4[] = {1, 2, 3, 4};
    B *b = b_new(13);
    b_raw(b, b_init(b, b_tensor(b, "short", TC_DTYPE_FLOAT32, 1, d4)), f4, 12);
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'short'", "12 bytes", "expected 16", NULL);
    b_free(b);

    b = b_new(13);
    Onnx__TensorProto *t = b_init(b, b_tensor(b, "few", TC_DTYPE_FLOAT32, 2, d2x2));
    t->n_float_data = 3, t->float_data = b_dup(b, f4, 12);
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'few'", "float_data", "3 values", "expected 4", NULL);
    b_free(b);

    b = b_new(13);
    b_init(b, b_tensor(b, "none", TC_DTYPE_FLOAT32, 1, d4));
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'none'", "expected 4", NULL);
    b_free(b);

    b = b_new(13);
    t = b_init(b, b_tensor(b, "wrongfield", TC_DTYPE_FLOAT32, 1, d4));
    const int64_t i4[] = {1, 2, 3, 4};
    t->n_int64_data = 4, t->int64_data = b_dup(b, i4, sizeof i4);
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'wrongfield'", "int64_data", NULL);
    b_free(b);

    b = b_new(13);
    t = b_init(b, b_tensor(b, "both", TC_DTYPE_FLOAT32, 1, d4));
    b_raw(b, t, f4, 16);
    t->n_float_data = 4, t->float_data = b_dup(b, f4, 16);
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'both'", "raw_data", NULL);
    b_free(b);

    b = b_new(13);
    t = b_init(b, b_tensor(b, "i8", TC_DTYPE_INT8, 1, d4));
    const int32_t bad8[] = {1, 2, 300, 4};
    t->n_int32_data = 4, t->int32_data = b_dup(b, bad8, sizeof bad8);
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'i8'", "300", "range", NULL);
    b_free(b);

    b = b_new(13);
    t = b_init(b, b_tensor(b, "u32", TC_DTYPE_UINT32, 1, d4));
    const uint64_t bad32[] = {1, 2, 3, (uint64_t)1 << 32};
    t->n_uint64_data = 4, t->uint64_data = b_dup(b, bad32, sizeof bad32);
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'u32'", "range", NULL);
    b_free(b);

    b = b_new(13);
    t = b_init(b, b_tensor(b, "str", 8, 1, d4));
    expect_fail(b, NULL, TC_STATUS_UNSUPPORTED, "'str'", "string", NULL);
    b_free(b);

    b = b_new(13);
    b_raw(b, b_init(b, b_tensor(b, "f8", 17, 1, d4)), f4, 4);
    expect_fail(b, NULL, TC_STATUS_UNSUPPORTED, "'f8'", "float8e4m3fn", NULL);
    b_free(b);

    b = b_new(13);
    b_raw(b, b_init(b, b_tensor(b, "i4", 22, 1, d4)), f4, 2);
    expect_fail(b, NULL, TC_STATUS_UNSUPPORTED, "'i4'", "int4", NULL);
    b_free(b);

    b = b_new(13);
    b_raw(b, b_init(b, b_tensor(b, "c64", 14, 1, d4)), f4, 16);
    expect_fail(b, NULL, TC_STATUS_UNSUPPORTED, "complex64", NULL);
    b_free(b);

    b = b_new(13);
    b_raw(b, b_init(b, b_tensor(b, "undef", 0, 1, d4)), f4, 16);
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'undef'", "no data type", NULL);
    b_free(b);

    b = b_new(13);
    const int64_t d9[] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    b_raw(b, b_init(b, b_tensor(b, "rank9", TC_DTYPE_FLOAT32, 9, d9)), f4, 4);
    expect_fail(b, NULL, TC_STATUS_UNSUPPORTED, "'rank9'", "rank 9", NULL);
    b_free(b);

    b = b_new(13);
    const int64_t dneg[] = {2, -2};
    b_raw(b, b_init(b, b_tensor(b, "neg", TC_DTYPE_FLOAT32, 2, dneg)), f4, 16);
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'neg'", "-2", NULL);
    b_free(b);

    b = b_new(13);
    const int64_t dhuge[] = {INT64_MAX / 2, 4};
    b_raw(b, b_init(b, b_tensor(b, "huge", TC_DTYPE_FLOAT32, 2, dhuge)), f4, 16);
    expect_fail(b, NULL, TC_STATUS_UNSUPPORTED, "'huge'", NULL);
    b_free(b);

    b = b_new(13);
    t = b_init(b, b_tensor(b, "seg", TC_DTYPE_FLOAT32, 1, d4));
    b_raw(b, t, f4, 16);
    t->segment = b_alloc(b, sizeof *t->segment);
    onnx__tensor_proto__segment__init(t->segment);
    expect_fail(b, NULL, TC_STATUS_UNSUPPORTED, "'seg'", "segmented", NULL);
    b_free(b);

    b = b_new(13);
    t = b_init(b, b_tensor(b, "loc", TC_DTYPE_FLOAT32, 1, d4));
    b_raw(b, t, f4, 16);
    t->has_data_location = 1;
    t->data_location = (Onnx__TensorProto__DataLocation)5;
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'loc'", "data_location", NULL);
    b_free(b);
}

static void test_tensor_pb(void **state) {
    (void)state;
    size_t size;
    uint8_t *buf = read_file("matmul_2d_input_0.pb", &size);
    tc__tensor t;
    tc__err err = {0};
    char name[16];
    assert_int_equal(tc__onnx_tensor_from_pb(buf, size, &t, name, sizeof name, &err), TC_STATUS_OK);
    assert_string_equal(name, "a");
    assert_int_equal(t.dtype, TC_DTYPE_FLOAT32);
    assert_int_equal(t.rank, 2);
    assert_int_equal(t.dims[0], 3);
    assert_int_equal(t.dims[1], 4);
    assert_int_equal(t.nbytes, 48);
    const float *f = t.data;
    assert_float_equal(f[0], 1.7640524f, 1e-7);
    assert_float_equal(f[1], 0.4001572f, 1e-7);
    assert_float_equal(f[11], 1.4542735f, 1e-7);
    tc__tensor_free(&t);

    /* Truncated name buffer, and a cut-short file. */
    char tiny[1];
    assert_int_equal(tc__onnx_tensor_from_pb(buf, size, &t, tiny, sizeof tiny, &err), TC_STATUS_OK);
    assert_string_equal(tiny, "");
    tc__tensor_free(&t);
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__onnx_tensor_from_pb(buf, size - 1, &t, NULL, 0, &err), TC_STATUS_CORRUPT_FILE);
    assert_null(t.data);
    assert_true(err.msg[0] != '\0');
    free(buf);

    buf = read_file("gather_0_input_1.pb", &size);
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__onnx_tensor_from_pb(buf, size, &t, name, sizeof name, &err), TC_STATUS_OK);
    assert_string_equal(name, "indices");
    assert_int_equal(t.dtype, TC_DTYPE_INT64);
    const int64_t ei[] = {0, 1, 3};
    assert_int_equal(t.nbytes, sizeof ei);
    assert_memory_equal(t.data, ei, sizeof ei);
    tc__tensor_free(&t);
    free(buf);

    /* Typed fields and errors through the .pb path. */
    B *b = b_new(0);
    const int64_t d2[] = {2};
    Onnx__TensorProto *tp = b_tensor(b, "half", TC_DTYPE_FLOAT16, 1, d2);
    const int32_t bits[] = {0x3C00, 0x4000};
    tp->n_int32_data = 2, tp->int32_data = b_dup(b, bits, sizeof bits);
    size_t len = onnx__tensor_proto__get_packed_size(tp);
    uint8_t *pb = b_alloc(b, len);
    onnx__tensor_proto__pack(tp, pb);
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__onnx_tensor_from_pb(pb, len, &t, NULL, 0, &err), TC_STATUS_OK);
    assert_true(tc__tensor_get_f64(&t, 0) == 1.0 && tc__tensor_get_f64(&t, 1) == 2.0);
    tc__tensor_free(&t);

    tp->has_data_location = 1;
    tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    tp->n_int32_data = 0;
    len = onnx__tensor_proto__get_packed_size(tp);
    pb = b_alloc(b, len);
    onnx__tensor_proto__pack(tp, pb);
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__onnx_tensor_from_pb(pb, len, &t, NULL, 0, &err), TC_STATUS_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "'half'"));
    assert_null(t.data);
    b_free(b);

    memset(&err, 0, sizeof err);
    assert_int_equal(tc__onnx_tensor_from_pb("", 0, &t, NULL, 0, &err), TC_STATUS_CORRUPT_FILE);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_typed_initializers),
        cmocka_unit_test(test_large_initializers),
        cmocka_unit_test(test_payload_not_copied),
        cmocka_unit_test(test_initializer_errors),
        cmocka_unit_test(test_tensor_pb),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
