/* test_server_json_data.c - the server's fast "data" array extraction: numbers parse to exactly what
 * strtod gives (random decimal strings of many forms, fast path and fallback), nested arrays flatten,
 * booleans are flagged, arrays with anything else and too-short arrays are left for cJSON, markers
 * replace the array text with the same length, and 0xFF in a string is refused; integers stay exact
 * 64-bit integers whatever their size (issue 27), in every notation, and an array moves to uint64 or
 * double only when a value needs it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "server/json_data.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* A random JSON number: integers, decimals with leading zeros, exponents, long significands. */
static void random_number(char *buf, size_t cap) {
    double mag[] = {1e-30, 1e-8, 1e-3, 1.0, 1e3, 1e8, 1e17, 1e25};
    switch (rnd() % 6) {
    case 0: snprintf(buf, cap, "%lld", (long long)(rnd() % 2000000) - 1000000); break;
    case 1: snprintf(buf, cap, "%.6g", ((double)(rnd() % 2000001) - 1e6) / 1e6 * mag[rnd() % 8]); break;
    case 2: snprintf(buf, cap, "%.9g", ((double)(int64_t)rnd()) / 9e18 * mag[rnd() % 8]); break;
    case 3: snprintf(buf, cap, "%.17g", ((double)(int64_t)rnd()) / 9e18 * mag[rnd() % 8]); break;
    case 4: snprintf(buf, cap, "%lldE%+d", (long long)(rnd() % 100000), (int)(rnd() % 60) - 30); break;
    default: snprintf(buf, cap, "0.%09llu%llu", (unsigned long long)(rnd() % 1000000000ull),
                      (unsigned long long)(rnd() % 1000000000000ull)); break;
    }
}

static void test_numbers_match_strtod(void **state) {
    (void)state;
    enum { N = 20000 };
    size_t cap = (size_t)N * 48 + 64;
    char *text = malloc(cap), *copy = malloc(cap);
    double *want = malloc(sizeof(double) * N);
    assert_non_null(text);
    size_t len = (size_t)snprintf(text, cap, "{\"inputs\":[{\"data\": [");
    for (int i = 0; i < N; i++) {
        char num[64];
        random_number(num, sizeof num);
        want[i] = strtod(num, NULL);
        len += (size_t)snprintf(text + len, cap - len, "%s%s", i ? (i % 7 ? "," : " ,\n ") : "", num);
    }
    len += (size_t)snprintf(text + len, cap - len, "]}]}");
    memcpy(copy, text, len + 1);
    srv_json_arrays a;
    assert_int_equal(srv_json_extract_data(text, len, &a), 0);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.a[0].n, N);
    assert_false(a.a[0].any_bool);
    assert_int_equal(a.a[0].kind, SRV_JSON_DOUBLE);
    for (int i = 0; i < N; i++)
        if (memcmp(&a.a[0].v.d[i], &want[i], sizeof(double)) != 0)
            fail_msg("value %d: got %.17g want %.17g", i, a.a[0].v.d[i], want[i]);
    /* The array became a marker string of the same total length. */
    const char *mk = strstr(text, "\"data\": \"");
    assert_non_null(mk);
    assert_int_equal((unsigned char)mk[9], 0xFF);
    assert_int_equal(strlen(text), len);
    char s[4] = {mk[9], mk[10], 0, 0};
    assert_ptr_equal(srv_json_marker(&a, s), &a.a[0]);
    srv_json_arrays_free(&a);
    free(text);
    free(copy);
    free(want);
}

static void test_shapes_and_refusals(void **state) {
    (void)state;
    char t1[] = "{\"data\":[[1, 2.5],[true,false]], \"x\":{\"data\":[\"s\", 1]}, \"data\" : [ ], \"y\":[1,2,3], "
                "\"data\":[7]}";
    srv_json_arrays a;
    assert_int_equal(srv_json_extract_data(t1, strlen(t1), &a), 0);
    /* [[1,2.5],[true,false]] is taken; the string array, the empty and the 1-element ones are too short or not numeric. */
    assert_int_equal(a.n, 1);
    assert_int_equal(a.a[0].n, 4);
    assert_true(a.a[0].any_bool);
    assert_int_equal(a.a[0].kind, SRV_JSON_DOUBLE);
    assert_true(a.a[0].any_fraction);
    assert_true(a.a[0].v.d[1] == 2.5 && a.a[0].v.d[2] == 1.0 && a.a[0].v.d[3] == 0.0);
    assert_non_null(strstr(t1, "\"data\":[\"s\", 1]"));
    assert_non_null(strstr(t1, "\"data\":[7]"));
    srv_json_arrays_free(&a);
    const char *bad[] = {"{\"data\":[1 2, 3, 4, 5]}", "{\"data\":[1,,2, 3, 4]}", "{\"data\":[1, 2, 3, 4,]}",
                         "{\"data\":[01, 2, 3, 4]}", "{\"data\":[1.e5, 2, 3]}", "{\"data\":[null, 2, 3, 4]}",
                         "{\"data\":[1, 2, 3, 4"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s", bad[k]);
        assert_int_equal(srv_json_extract_data(buf, strlen(buf), &a), 0);
        assert_int_equal(a.n, 0); /* left unchanged for cJSON to judge */
        assert_string_equal(buf, bad[k]);
        srv_json_arrays_free(&a);
    }
    char forged[] = "{\"id\":\"\xff" "0\", \"data\":[1, 2, 3, 4]}";
    assert_int_equal(srv_json_extract_data(forged, strlen(forged), &a), 1);
    srv_json_arrays_free(&a);
    assert_null(srv_json_marker(&a, "\xff" "0"));
}

/* Extracts the one array of text (a "data" array) into *a. */
static void extract_one(const char *json, srv_json_arrays *a) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", json);
    assert_int_equal(srv_json_extract_data(buf, strlen(buf), a), 0);
    assert_int_equal(a->n, 1);
}

static void test_integers_exact(void **state) {
    (void)state;
    srv_json_arrays a;
    /* Above 2^53 a double would round them (9007199254740993 -> ...992); every notation of an integer counts,
     * also with more significant digits than the fast path keeps. */
    extract_one("{\"data\":[9007199254740993, -9223372036854775808, 9223372036854775807, 1.0, 1.5e3, -0, "
                "123456789012345678900e-2, 100000000000000000000000e-5, 0.0e999999999999, 2E+1, 10000000000000000000e-19]}",
                &a);
    assert_int_equal(a.a[0].kind, SRV_JSON_INT64);
    assert_false(a.a[0].any_fraction);
    assert_false(a.a[0].any_bool);
    const int64_t w1[] = {INT64_C(9007199254740993), INT64_MIN, INT64_MAX, 1, 1500, 0,
                          INT64_C(1234567890123456789), INT64_C(1000000000000000000), 0, 20, 1};
    assert_int_equal(a.a[0].n, 11);
    for (int i = 0; i < 11; i++)
        if (a.a[0].v.i[i] != w1[i]) fail_msg("value %d: got %lld want %lld", i, (long long)a.a[0].v.i[i], (long long)w1[i]);
    srv_json_arrays_free(&a);

    /* Non-negative values above INT64_MAX: uint64, exact. */
    extract_one("{\"data\":[1, 18446744073709551615, 9223372036854775808, 18446744073709551615000e-3]}", &a);
    assert_int_equal(a.a[0].kind, SRV_JSON_UINT64);
    assert_true(a.a[0].v.u[0] == 1 && a.a[0].v.u[1] == UINT64_MAX && a.a[0].v.u[2] == UINT64_C(9223372036854775808) &&
                a.a[0].v.u[3] == UINT64_MAX);
    srv_json_arrays_free(&a);

    /* A fraction anywhere (also one a double would round to an integer), an integer beyond 64 bits, or a negative
     * value with one above INT64_MAX: doubles, flagged so that no integer datatype takes them. */
    const char *dbl[] = {"{\"data\":[1, 2, 2.5]}", "{\"data\":[1, 1.0000000000000000000001]}",
                         "{\"data\":[1, 100000000000000000000000000000000000000001e-40]}",
                         "{\"data\":[3, 1e-400]}", "{\"data\":[1, 18446744073709551616]}",
                         "{\"data\":[-9223372036854775809, 1]}", "{\"data\":[-1, 9223372036854775808]}",
                         "{\"data\":[18446744073709551615, -1]}"};
    const int frac[] = {1, 1, 1, 1, 0, 0, 0, 0};
    for (size_t k = 0; k < sizeof dbl / sizeof dbl[0]; k++) {
        extract_one(dbl[k], &a);
        if (a.a[0].kind != SRV_JSON_DOUBLE || a.a[0].any_fraction != frac[k])
            fail_msg("%s: kind %d any_fraction %d", dbl[k], a.a[0].kind, a.a[0].any_fraction);
        srv_json_arrays_free(&a);
    }
    extract_one("{\"data\":[-1, 9223372036854775808, 0.5]}", &a);
    assert_true(a.a[0].v.d[0] == -1.0 && a.a[0].v.d[1] == 9223372036854775808.0 && a.a[0].v.d[2] == 0.5);
    srv_json_arrays_free(&a);

    /* More "data" arrays than the limit: refused (one more would be left to cJSON's doubles). */
    size_t cap = 64 * (SRV_JSON_MAX_ARRAYS + 2);
    char *many = malloc(cap);
    assert_non_null(many);
    size_t len = (size_t)snprintf(many, cap, "{\"x\":[");
    for (int k = 0; k <= SRV_JSON_MAX_ARRAYS; k++)
        len += (size_t)snprintf(many + len, cap - len, "%s{\"data\":[9007199254740993, 2]}", k ? "," : "");
    len += (size_t)snprintf(many + len, cap - len, "]}");
    assert_int_equal(srv_json_extract_data(many, len, &a), 2);
    srv_json_arrays_free(&a);
    free(many);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers_match_strtod),
        cmocka_unit_test(test_shapes_and_refusals),
        cmocka_unit_test(test_integers_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
