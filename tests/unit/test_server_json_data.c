/* test_server_json_data.c - the server's fast "data" array extraction: numbers parse to exactly what
 * strtod gives (random decimal strings of many forms, fast path and fallback), nested arrays flatten,
 * booleans are flagged, arrays with anything else and too-short arrays are left for cJSON, markers
 * replace the array text with the same length, and 0xFF in a string is refused. */
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
    for (int i = 0; i < N; i++)
        if (memcmp(&a.a[0].v[i], &want[i], sizeof(double)) != 0)
            fail_msg("value %d: got %.17g want %.17g", i, a.a[0].v[i], want[i]);
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
    assert_true(a.a[0].v[1] == 2.5 && a.a[0].v[2] == 1.0 && a.a[0].v[3] == 0.0);
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers_match_strtod),
        cmocka_unit_test(test_shapes_and_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
