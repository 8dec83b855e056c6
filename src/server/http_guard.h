/* http_guard.h - checks on a request's headers made before its body is read (Content-Encoding, header size), so
 * that the server answers them itself, with a KServe JSON error, instead of misreading the body or leaving the
 * answer to libmicrohttpd's HTML error pages. */
#pragma once
#include <microhttpd.h>
#include <stddef.h>

/* Request line + headers (bytes) above which a request gets 431 from the server. It stays well under the connection
 * memory pool (SRV_CONNECTION_MEMORY), where libmicrohttpd 0.9.75 would answer 431 itself with an HTML page. */
#define SRV_MAX_HEADER_BYTES ((size_t)64 * 1024)
#define SRV_CONNECTION_MEMORY ((size_t)256 * 1024)
/* Connections libmicrohttpd serves at once (its own default, FD_SETSIZE - 4) and connections the front stage
 * (http_front.c) holds while their first request head arrives. */
#define SRV_MAX_CONNECTIONS 1020
#define SRV_MAX_PENDING ((size_t)1024)

/* The request's headers checked: returns 0 when they are acceptable, else the HTTP status (431 for headers over
 * SRV_MAX_HEADER_BYTES, 501 for a Transfer-Encoding other than "chunked", 415 for a Content-Encoding other than
 * identity) with the error message in msg. */
int srv_guard_headers(struct MHD_Connection *c, const char *method, const char *url, char *msg, size_t n);
