/* test_server_http_head.c - the front stage's check of a first request head (src/server/http_head.c): each request
 * libmicrohttpd 0.9.75 refused in HTML gets its status here (400, 413, 431, 505), valid requests pass whole and wait
 * ("more") when cut anywhere inside the head, chunk framing is checked only as far as it arrived, and random bytes and
 * random cuts of valid requests never read past the buffer (ASan) nor give anything but a defined answer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "server/http_head.h"

#define LIMIT 1024

static int check_n(const char *s, size_t n) {
    char msg[192];
    char *copy = malloc(n ? n : 1); /* exact size: ASan sees any read past the end */
    memcpy(copy, s, n);
    msg[0] = '\0';
    const int st = srv_head_check(copy, n, LIMIT, msg, sizeof msg);
    if (st > 0) assert_true(msg[0] != '\0'); /* a refusal says why */
    free(copy);
    return st;
}

static int check(const char *s) { return check_n(s, strlen(s)); }

static const char *const VALID[] = {
    "GET /v2 HTTP/1.1\r\nHost: x\r\n\r\n",
    "GET /v2 HTTP/1.0\n\n",                                     /* bare LF, no header */
    "\r\n\nGET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n",    /* empty lines first */
    "GET /a b HTTP/1.1\r\nHost: x\r\n\r\n",                     /* a space inside the target, as 0.9.75 takes it */
    "GET /v2 HTTP/1.9\r\nX:\r\n\r\n",                           /* HTTP/1.x, an empty value */
    "POST /v2/models/m/infer HTTP/1.1\r\nContent-Length: 18446744073709551615\r\n\r\n",
    "POST /i HTTP/1.1\r\nContent-Length:\t007\r\n\r\nabcdefg",
    "POST /i HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0;x=1\r\nT: 1\r\n\r\n",
    "POST /i HTTP/1.1\r\ntransfer-encoding: CHUNKED\r\n\r\n0000000000000000000A\nabcdefghij\n0\n\n",
    "POST /i HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\nzz\r\n",  /* not chunked: the server's 501, not here */
};

static void test_valid(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof VALID / sizeof *VALID; i++) {
        const char *s = VALID[i];
        assert_int_equal(check(s), SRV_HEAD_OK);
        /* Cut anywhere before the end of the head: wait for more (or OK once the head is whole). */
        const char *end = strstr(s, "\r\n\r\n") ? strstr(s, "\r\n\r\n") + 4 : strstr(s, "\n\n") + 2;
        const size_t head = (size_t)(end - s);
        for (size_t n = 0; n < strlen(s); n++) {
            const int st = check_n(s, n);
            if (n < head) assert_int_equal(st, SRV_HEAD_MORE);
            else assert_int_equal(st, SRV_HEAD_OK);
        }
    }
}

static void test_refused(void **state) {
    (void)state;
    static const struct {
        const char *req;
        int status;
    } cases[] = {
        {"GARBAGE\r\n\r\n", 400},
        {" GET / HTTP/1.1\r\n\r\n", 400},
        {"GET\r\n\r\n", 400},
        {"GET /v2\r\n\r\n", 400},
        {"GET  HTTP/1.1\r\n\r\n", 400},
        {"GET / HTTP/1.1 \r\n\r\n", 400},
        {"GET / HTTP/1.10\r\n\r\n", 400},
        {"GET / http/1.1\r\n\r\n", 400},
        {"GET / HTTP/1.x\r\n\r\n", 400},
        {"GET / HTTP/2.0\r\n\r\n", 505},
        {"GET / HTTP/0.9\r\n\r\n", 505},
        {"GET / HTTP/1.1\r\nHost x\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\n: x\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nA: 1\r\n 2\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\n\tA: 1\r\n\r\n", 400},
        {"POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n", 400},
        {"POST / HTTP/1.1\r\nContent-Length: 12a\r\n\r\n", 400},
        {"POST / HTTP/1.1\r\nContent-Length: 5 \r\n\r\n", 400},
        {"POST / HTTP/1.1\r\nContent-Length:\r\n\r\n", 400},
        {"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400},
        {"POST / HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n\r\n", 413},
        {"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", 413},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nz", 400},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n\r\n", 400},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n;ext\r\n", 400},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n", 400},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX", 400},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\rX", 400},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n11111111111111111\r\n", 413},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n11111111111111111", 413},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nno colon\r\n\r\n", 400},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const int st = check(cases[i].req);
        if (st != cases[i].status) fail_msg("'%s': got %d, want %d", cases[i].req, st, cases[i].status);
    }
    /* NUL in the request line or a header (sizes given: the strings hold a NUL) */
    assert_int_equal(check_n("GET /\0 HTTP/1.1\r\n\r\n", 19), 400);
    assert_int_equal(check_n("GET / HTTP/1.1\r\nA: \0\r\n\r\n", 24), 400);
}

static void test_limit(void **state) {
    (void)state;
    char *big = malloc(LIMIT * 2);
    const char *start = "GET / HTTP/1.1\r\nX: ";
    memcpy(big, start, strlen(start));
    memset(big + strlen(start), 'a', LIMIT * 2 - strlen(start));
    assert_int_equal(check_n(big, LIMIT - 1), SRV_HEAD_MORE);
    assert_int_equal(check_n(big, LIMIT), 431);
    assert_int_equal(check_n(big, LIMIT * 2), 431);
    /* a head that ends just past the limit is refused, one that ends at it passes */
    memcpy(big + LIMIT - 4, "\r\n\r\n", 4);
    assert_int_equal(check_n(big, LIMIT), SRV_HEAD_OK);
    memcpy(big + LIMIT - 4, "aa\r\n\r\n", 6);
    assert_int_equal(check_n(big, LIMIT + 2), 431);
    free(big);
}

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Random bytes drawn from the characters that matter, and valid requests with random bytes changed. */
static void test_random(void **state) {
    (void)state;
    static const char alphabet[] = "GET /HTP1.0:\r\n \t;chunkedContent-Length9aZ\0";
    char buf[256];
    for (int iter = 0; iter < 20000; iter++) {
        size_t n = rnd() % sizeof buf;
        if (iter % 2) {
            const char *v = VALID[rnd() % (sizeof VALID / sizeof *VALID)];
            n = strlen(v);
            memcpy(buf, v, n);
            for (int k = (int)(rnd() % 3); k >= 0; k--) buf[rnd() % n] = alphabet[rnd() % (sizeof alphabet - 1)];
        } else {
            for (size_t i = 0; i < n; i++) buf[i] = alphabet[rnd() % (sizeof alphabet - 1)];
        }
        const int st = check_n(buf, n);
        assert_true(st == SRV_HEAD_MORE || st == SRV_HEAD_OK || st == 400 || st == 413 || st == 431 || st == 505);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_limit),
        cmocka_unit_test(test_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
