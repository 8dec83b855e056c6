/* test_server_codec.c - the KServe v2 request decoder and response encoder of `tailcut serve` on a one-input model
 * description (issue 27): JSON integers reach INT64/UINT64 tensors exactly above 2^53 and come back as written; every
 * integer datatype (INT8..UINT64, BOOL) takes its whole range and refuses one past either end, non-integers, and
 * booleans, with HTTP 400 and a message naming the input, the element and the range; FP32 refuses values that would
 * become infinity; the request id is echoed whole (a long UTF-8 id stays valid JSON). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "server/codec.h"

static srv_model model;

/* One input "x" and one output "y" of dtype dt, rank 1, 1..64 elements, no batching. */
static srv_model *model_of(tc_dtype dt) {
    memset(&model, 0, sizeof model);
    strcpy(model.name, "m");
    model.n_in = model.n_out = 1;
    model.in[0] = (tc_io_info){.name = "x", .dtype = dt, .rank = 1, .dims = {-1}};
    model.out[0] = (tc_io_info){.name = "y", .dtype = dt, .rank = 1, .dims = {-1}};
    model.range[0] = (tc_input_range){.name = "x", .rank = 1, .min = {1}, .opt = {1}, .max = {64}};
    model.max_values = 64;
    return &model;
}

/* Decodes a request whose input x has datatype `kserve` and the JSON data `data` (count elements). Returns the HTTP
 * status (0 = accepted); *out receives the request (caller frees it with srv_request_free). */
static int decode(tc_dtype dt, const char *kserve, int count, const char *data, const char *id, srv_request **out) {
    srv_model *m = model_of(dt);
    char body[8192];
    int n = snprintf(body, sizeof body, "{%s%s%s\"inputs\":[{\"name\":\"x\",\"datatype\":\"%s\",\"shape\":[%d],\"data\":%s}]}",
                     id ? "\"id\":\"" : "", id ? id : "", id ? "\"," : "", kserve, count, data);
    assert_true(n > 0 && (size_t)n < sizeof body);
    srv_request *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->model = m;
    int st = srv_decode_infer(m, body, (size_t)n, SRV_NO_BINARY, r);
    *out = r;
    return st;
}

static void expect_refused(tc_dtype dt, const char *kserve, int count, const char *data, const char *word) {
    srv_request *r = NULL;
    int st = decode(dt, kserve, count, data, NULL, &r);
    if (st != 400 || strstr(r->error, word) == NULL || strstr(r->error, "input 'x'") == NULL)
        fail_msg("%s %s: status %d, error '%s' (want 400 and '%s')", kserve, data, st, r->error, word);
    srv_request_free(r);
}

/* Encodes r's input back as its output (what an Identity model answers) and returns the response (free it). */
static char *echo(srv_request *r) {
    r->out[0] = r->in[0];
    r->out[0].data = malloc(r->in[0].bytes ? r->in[0].bytes : 1);
    assert_non_null(r->out[0].data);
    memcpy(r->out[0].data, r->in[0].data, r->in[0].bytes);
    r->out[0].borrowed = 0;
    r->want_out[0] = 1;
    r->status = 200;
    size_t len = 0, json_len = 0;
    char *resp = srv_encode_infer(r, &len, &json_len);
    assert_non_null(resp);
    assert_true(json_len == SRV_NO_BINARY);
    return resp;
}

static void test_int64_exact_above_2_53(void **state) {
    (void)state;
    srv_request *r = NULL;
    /* The array is long enough for json_data.c's fast path. */
    assert_int_equal(decode(TC_DTYPE_INT64, "INT64", 5, "[9007199254740993, -9223372036854775808, 9223372036854775807, "
                            "-9007199254740993, 1234567890123456789]", NULL, &r), 0);
    const int64_t want[] = {INT64_C(9007199254740993), INT64_MIN, INT64_MAX, -INT64_C(9007199254740993),
                            INT64_C(1234567890123456789)};
    assert_int_equal(r->in[0].bytes, sizeof want);
    assert_memory_equal(r->in[0].data, want, sizeof want);
    char *resp = echo(r);
    assert_non_null(strstr(resp, "\"data\":[9007199254740993,-9223372036854775808,9223372036854775807,"
                                 "-9007199254740993,1234567890123456789]"));
    free(resp);
    srv_request_free(r);

    assert_int_equal(decode(TC_DTYPE_UINT64, "UINT64", 3, "[18446744073709551615, 9007199254740993, 0]", NULL, &r), 0);
    const uint64_t wu[] = {UINT64_MAX, UINT64_C(9007199254740993), 0};
    assert_memory_equal(r->in[0].data, wu, sizeof wu);
    resp = echo(r);
    assert_non_null(strstr(resp, "\"data\":[18446744073709551615,9007199254740993,0]"));
    free(resp);
    srv_request_free(r);

    /* Integral values in other notations are integers; a double would have rounded the last one. */
    assert_int_equal(decode(TC_DTYPE_INT64, "INT64", 3, "[2.0, 1e3, 90071992547409930e-1]", NULL, &r), 0);
    const int64_t w2[] = {2, 1000, INT64_C(9007199254740993)};
    assert_memory_equal(r->in[0].data, w2, sizeof w2);
    srv_request_free(r);
}

static void test_integer_ranges(void **state) {
    (void)state;
    static const struct {
        tc_dtype dt;
        const char *name, *lo, *hi, *below, *above;
    } types[] = {
        {TC_DTYPE_INT8, "INT8", "-128", "127", "-129", "128"},
        {TC_DTYPE_INT16, "INT16", "-32768", "32767", "-32769", "32768"},
        {TC_DTYPE_INT32, "INT32", "-2147483648", "2147483647", "-2147483649", "2147483648"},
        {TC_DTYPE_INT64, "INT64", "-9223372036854775808", "9223372036854775807", "-9223372036854775809",
         "9223372036854775808"},
        {TC_DTYPE_UINT8, "UINT8", "0", "255", "-1", "256"},
        {TC_DTYPE_UINT16, "UINT16", "0", "65535", "-1", "65536"},
        {TC_DTYPE_UINT32, "UINT32", "0", "4294967295", "-1", "4294967296"},
        {TC_DTYPE_UINT64, "UINT64", "0", "18446744073709551615", "-1", "18446744073709551616"},
        {TC_DTYPE_BOOL, "BOOL", "0", "1", "-1", "2"},
    };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        char data[256];
        srv_request *r = NULL;
        /* Both ends are taken, exactly (read back through the encoder). */
        snprintf(data, sizeof data, "[%s, %s, %s]", types[k].lo, types[k].hi, types[k].lo);
        int st = decode(types[k].dt, types[k].name, 3, data, NULL, &r);
        if (st) fail_msg("%s %s: status %d: %s", types[k].name, data, st, r->error);
        char *resp = echo(r);
        char want[256];
        if (types[k].dt == TC_DTYPE_BOOL) snprintf(want, sizeof want, "\"data\":[false,true,false]");
        else snprintf(want, sizeof want, "\"data\":[%s,%s,%s]", types[k].lo, types[k].hi, types[k].lo);
        if (!strstr(resp, want)) fail_msg("%s: response %s lacks %s", types[k].name, resp, want);
        free(resp);
        srv_request_free(r);
        /* One past either end is refused, in a long array (fast path) and a short one (cJSON) alike. */
        snprintf(data, sizeof data, "[1, 0, %s]", types[k].below);
        expect_refused(types[k].dt, types[k].name, 3, data, "outside the range");
        snprintf(data, sizeof data, "[1, 0, %s]", types[k].above);
        expect_refused(types[k].dt, types[k].name, 3, data, "outside the range");
        /* Not integers. */
        expect_refused(types[k].dt, types[k].name, 3, "[1, 0, 0.5]", "not an integer");
        expect_refused(types[k].dt, types[k].name, 2, "[1, 1.0000000000000000000001]", "not an integer");
        expect_refused(types[k].dt, types[k].name, 1, "[0.5]", "not an integer");
    }
    expect_refused(TC_DTYPE_BOOL, "BOOL", 1, "[2]", "outside the range"); /* too short for the fast path: cJSON */
    expect_refused(TC_DTYPE_INT8, "INT8", 3, "[1, 200, 3]", "data[1] = 200 is outside the range of INT8 [-128, 127]");
    expect_refused(TC_DTYPE_INT32, "INT32", 2, "[true, false]", "true/false");
    expect_refused(TC_DTYPE_INT64, "INT64", 2, "[-1, 9223372036854775808]", "outside the range");
    /* FP32: a value that would round to infinity is refused; FLT_MAX is not. */
    expect_refused(TC_DTYPE_FLOAT32, "FP32", 2, "[1e39, 1]", "outside the range");
    srv_request *r = NULL;
    assert_int_equal(decode(TC_DTYPE_FLOAT32, "FP32", 2, "[3.4028234663852886e38, -16777217]", NULL, &r), 0);
    assert_true(((float *)r->in[0].data)[0] == 3.4028234663852886e38f && ((float *)r->in[0].data)[1] == -16777216.0f);
    srv_request_free(r);
}

static void test_long_utf8_id_echoed_whole(void **state) {
    (void)state;
    char id[1024] = "";
    for (int k = 0; k < 200; k++) strcat(id, "\xc3\xa9"); /* 400 bytes of "é": a 127-byte cut splits one */
    srv_request *r = NULL;
    assert_int_equal(decode(TC_DTYPE_INT32, "INT32", 2, "[1, 2]", id, &r), 0);
    char *resp = echo(r);
    cJSON *j = cJSON_Parse(resp);
    assert_non_null(j);
    const cJSON *jid = cJSON_GetObjectItemCaseSensitive(j, "id");
    assert_true(cJSON_IsString(jid));
    assert_string_equal(jid->valuestring, id);
    cJSON_Delete(j);
    free(resp);
    srv_request_free(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_int64_exact_above_2_53),
        cmocka_unit_test(test_integer_ranges),
        cmocka_unit_test(test_long_utf8_id_echoed_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
