/* test_npy.c - .npy parsing and writing: round trips of every dtype, header variants, and
 * truncated / malformed files that must fail cleanly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/file.h"
#include "core/npy.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint8_t rand_byte(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint8_t)(rng_state >> 24);
}

static void tmp_path(char *buf, size_t size, const char *tag) {
    snprintf(buf, size, "/tmp/tc_test_npy_%d_%s.npy", (int)getpid(), tag);
}

static void test_round_trip_all_dtypes(void **state) {
    (void)state;
    const tc_dtype types[] = {TC_DTYPE_FLOAT32, TC_DTYPE_FLOAT64, TC_DTYPE_FLOAT16, TC_DTYPE_INT8, TC_DTYPE_UINT8,
                              TC_DTYPE_INT16,   TC_DTYPE_UINT16,  TC_DTYPE_INT32,   TC_DTYPE_UINT32, TC_DTYPE_INT64,
                              TC_DTYPE_UINT64,  TC_DTYPE_BOOL};
    const int64_t shapes[][3] = {{3, 5, 7}, {1, 1, 1}, {13, 1, 2}};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        for (size_t s = 0; s < 3; s++) {
            for (int32_t rank = 0; rank <= 3; rank++) {
                tc__tensor a;
                tc__err err = {0};
                assert_int_equal(tc__tensor_alloc(&a, types[t], rank, shapes[s], &err), TC_STATUS_OK);
                for (size_t i = 0; i < a.nbytes; i++) ((uint8_t *)a.data)[i] = rand_byte() | 1;
                if (types[t] == TC_DTYPE_BOOL)
                    for (size_t i = 0; i < a.nbytes; i++) ((uint8_t *)a.data)[i] &= 1;
                char path[128];
                tmp_path(path, sizeof path, "rt");
                assert_int_equal(tc__npy_save(path, &a, &err), TC_STATUS_OK);
                void *buf;
                size_t size;
                assert_int_equal(tc__read_file(path, 1 << 20, &buf, &size, &err), TC_STATUS_OK);
                tc__tensor b;
                assert_int_equal(tc__npy_parse(buf, size, &b, &err), TC_STATUS_OK);
                assert_int_equal(b.dtype, a.dtype);
                assert_int_equal(b.rank, a.rank);
                for (int32_t i = 0; i < rank; i++) assert_int_equal(b.dims[i], a.dims[i]);
                assert_int_equal(b.nbytes, a.nbytes);
                assert_memory_equal(b.data, a.data, a.nbytes);
                free(buf);
                unlink(path);
                tc__tensor_free(&a);
                tc__tensor_free(&b);
            }
        }
    }
}

/* Builds a version-1.0 .npy image with the given header text and data size. */
static size_t make_npy(unsigned char *buf, const char *header, size_t data_bytes) {
    size_t hl = strlen(header);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(hl & 0xff);
    buf[9] = (unsigned char)(hl >> 8);
    memcpy(buf + 10, header, hl);
    for (size_t i = 0; i < data_bytes; i++) buf[10 + hl + i] = (unsigned char)(i * 7 + 1);
    return 10 + hl + data_bytes;
}

static void test_header_variants(void **state) {
    (void)state;
    unsigned char buf[512];
    tc__tensor t;
    tc__err err = {0};
    /* A scalar, written by numpy as shape (). */
    size_t n = make_npy(buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }\n", 4);
    assert_int_equal(tc__npy_parse(buf, n, &t, &err), TC_STATUS_OK);
    assert_int_equal(t.rank, 0);
    tc__tensor_free(&t);
    /* A 1-D shape with a trailing comma and a bool written as '|b1'. */
    n = make_npy(buf, "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }\n", 5);
    assert_int_equal(tc__npy_parse(buf, n, &t, &err), TC_STATUS_OK);
    assert_int_equal(t.dtype, TC_DTYPE_BOOL);
    assert_int_equal(t.dims[0], 5);
    tc__tensor_free(&t);
    /* Zero elements. */
    n = make_npy(buf, "{'descr': '<i8', 'fortran_order': False, 'shape': (0, 3), }\n", 0);
    assert_int_equal(tc__npy_parse(buf, n, &t, &err), TC_STATUS_OK);
    assert_int_equal(t.nbytes, 0);
    tc__tensor_free(&t);
}

static void expect_fail(const char *header, size_t data_bytes, tc_status want) {
    unsigned char buf[512];
    size_t n = make_npy(buf, header, data_bytes);
    tc__tensor t;
    tc__err err = {0};
    assert_int_equal(tc__npy_parse(buf, n, &t, &err), want);
    assert_true(err.msg[0] != '\0');
    assert_null(t.data);
}

static void test_bad_headers(void **state) {
    (void)state;
    expect_fail("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8, TC_STATUS_UNSUPPORTED);
    expect_fail("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8, TC_STATUS_UNSUPPORTED);
    expect_fail("{'descr': '<U8', 'fortran_order': False, 'shape': (2,), }", 8, TC_STATUS_UNSUPPORTED);
    expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 8, TC_STATUS_CORRUPT_FILE);
    expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 12, TC_STATUS_CORRUPT_FILE);
    expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 8, TC_STATUS_CORRUPT_FILE);
    expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 8, TC_STATUS_CORRUPT_FILE);
    expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 8,
                TC_STATUS_CORRUPT_FILE);
    expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", 4, TC_STATUS_UNSUPPORTED);
    expect_fail("{'fortran_order': False, 'shape': (2,), }", 8, TC_STATUS_CORRUPT_FILE);
    expect_fail("{'descr': '<f4', 'shape': (2,), }", 8, TC_STATUS_CORRUPT_FILE);
    expect_fail("{'descr': '<f4', 'fortran_order': False, }", 8, TC_STATUS_CORRUPT_FILE);
    expect_fail("{'descr': '<f4', 'fortran_order': False, 'shape': (2x), }", 8, TC_STATUS_CORRUPT_FILE);
}

/* Every truncation and many random byte changes of a valid file must parse or fail cleanly. */
static void test_truncation_and_mutation(void **state) {
    (void)state;
    unsigned char good[512];
    size_t n = make_npy(good, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }      \n", 48);
    tc__err err;
    tc__tensor t;
    for (size_t len = 0; len < n; len++) {
        memset(&err, 0, sizeof err);
        assert_int_not_equal(tc__npy_parse(good, len, &t, &err), TC_STATUS_OK);
        assert_true(err.msg[0] != '\0');
    }
    unsigned char bad[512];
    for (int k = 0; k < 5000; k++) {
        memcpy(bad, good, n);
        int changes = 1 + rand_byte() % 4;
        for (int c = 0; c < changes; c++) bad[(rand_byte() | (rand_byte() << 8)) % n] = rand_byte();
        memset(&err, 0, sizeof err);
        if (tc__npy_parse(bad, n, &t, &err) == TC_STATUS_OK)
            tc__tensor_free(&t);
        else
            assert_true(err.msg[0] != '\0');
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_all_dtypes),
        cmocka_unit_test(test_header_variants),
        cmocka_unit_test(test_bad_headers),
        cmocka_unit_test(test_truncation_and_mutation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
