/* http_guard.c - early header checks of `tailcut serve` (see http_guard.h): a compressed body is refused with 415
 * naming its encoding (the server reads bodies as sent, and would call gzip "malformed JSON"), and request headers
 * over SRV_MAX_HEADER_BYTES get a JSON 431 before libmicrohttpd's own, HTML, limit is reached; a Transfer-Encoding
 * other than plain "chunked" gets 501 (libmicrohttpd would read such a body until the client closes: both would wait). */
#include "http_guard.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef struct header_scan {
    size_t bytes;        /* "Name: value\r\n" of every header */
    const char *coding;  /* the first Content-Encoding other than identity */
    const char *transfer; /* the first Transfer-Encoding other than chunked */
} header_scan;

/* True when v is a Content-Encoding list of "identity" only (or empty), spaces and commas ignored. */
static int identity_only(const char *v) {
    const char *p = v;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',') p++;
        if (!*p) break;
        size_t k = strcspn(p, " \t,");
        if (!(k == 8 && strncasecmp(p, "identity", 8) == 0)) return 0;
        p += k;
    }
    return 1;
}

static enum MHD_Result scan_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    header_scan *h = cls;
    const char *v = value ? value : "";
    h->bytes += strlen(key) + strlen(v) + 4;
    if (!h->coding && strcasecmp(key, MHD_HTTP_HEADER_CONTENT_ENCODING) == 0 && !identity_only(v)) h->coding = v;
    if (!h->transfer && strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0 && strcasecmp(v, "chunked") != 0)
        h->transfer = v;
    return MHD_YES;
}

/* Query arguments count towards the request line. */
static enum MHD_Result count_argument(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    header_scan *h = cls;
    h->bytes += strlen(key) + (value ? strlen(value) + 1 : 0) + 1;
    return MHD_YES;
}

/* Copies at most 64 bytes of s into out (>= 68 bytes), printable ASCII kept and anything else as '?', so that the
 * error message stays valid UTF-8 (JSON) whatever the client sent. */
static void printable(const char *s, char *out) {
    size_t i = 0;
    for (; s[i] && i < 64; i++) out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    if (s[i]) out[i++] = '.', out[i++] = '.', out[i++] = '.';
    out[i] = '\0';
}

int srv_guard_headers(struct MHD_Connection *c, const char *method, const char *url, char *msg, size_t n) {
    header_scan h = {0, NULL, NULL};
    MHD_get_connection_values(c, MHD_HEADER_KIND, scan_header, &h);
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, count_argument, &h);
    const size_t total = h.bytes + strlen(method) + strlen(url) + 12; /* + " HTTP/1.1\r\n" */
    if (total > SRV_MAX_HEADER_BYTES) {
        snprintf(msg, n, "request line and headers of %zu bytes are over the limit of %zu bytes", total,
                 SRV_MAX_HEADER_BYTES);
        return 431;
    }
    if (h.transfer) {
        char shown[72];
        printable(h.transfer, shown);
        snprintf(msg, n, "Transfer-Encoding '%s' is not supported: send the body with Content-Length or chunked", shown);
        return 501;
    }
    if (h.coding) {
        char shown[72];
        printable(h.coding, shown);
        snprintf(msg, n, "Content-Encoding '%s' is not supported: send the body uncompressed (identity)", shown);
        return 415;
    }
    return 0;
}
