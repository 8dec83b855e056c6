/* http_head.h - the check of a connection's first request head (and of the chunk framing that arrived with it) made
 * by the front stage (http_front.c) before libmicrohttpd sees the connection: everything libmicrohttpd 0.9.75 would
 * refuse with an HTML page of its own (or by closing without a word) is refused here, with the status it would use,
 * so that the server can answer it as a KServe JSON error. A pure function of the bytes: no I/O, no allocation. */
#pragma once
#include <stddef.h>

#define SRV_HEAD_MORE (-1) /* the head is not complete yet: wait for more bytes */
#define SRV_HEAD_OK 0      /* complete and acceptable: libmicrohttpd takes it */

/* Checks buf[0, len): the bytes received so far on a new connection, of which at most `limit` may be request line and
 * headers. Returns SRV_HEAD_MORE, SRV_HEAD_OK, or the HTTP status of the refusal with the reason in msg (n bytes):
 * 400 (a request line that is not METHOD SP TARGET SP HTTP/d.d, a header line without ':' or with whitespace before it,
 * obsolete line folding, a NUL byte, a Content-Length that is not a decimal number, a malformed chunk size line or
 * chunk end or trailer among the bytes after the head), 413 (a Content-Length or chunk size beyond 64 bits), 431 (no
 * end of the head within `limit` bytes), 505 (an HTTP version other than 1.x). Bytes of the body that have not arrived
 * are not waited for: a chunk line past len is not checked. */
int srv_head_check(const char *buf, size_t len, size_t limit, char *msg, size_t n);
