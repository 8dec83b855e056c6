/* http_head.c - the first request head of a connection checked before libmicrohttpd takes it (see http_head.h). The
 * rules follow libmicrohttpd 0.9.75's parser (connection.c: parse_initial_message_line, parse_http_version,
 * process_header_line, parse_connection_headers, process_request_body), so that what it would refuse in HTML is refused
 * here first with the same status; where RFC 9112 asks a server to refuse what that version lets through and another
 * party may read differently (whitespace before a header's colon, obsolete line folding, NUL), it is refused too. */
#include "http_head.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static int refuse(int status, char *msg, size_t n, const char *text) {
    snprintf(msg, n, "%s", text);
    return status;
}

/* The next line of b[*pos, len): its start and length without the line end (CRLF or a bare LF, as libmicrohttpd
 * accepts); false when no LF has arrived yet. */
static bool next_line(const char *b, size_t len, size_t *pos, size_t *start, size_t *n) {
    const char *lf = memchr(b + *pos, '\n', len - *pos);
    if (!lf) return false;
    const size_t end = (size_t)(lf - b);
    *start = *pos;
    *n = end - *pos - (end > *pos && b[end - 1] == '\r');
    *pos = end + 1;
    return true;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static int hex_value(char c) {
    return is_digit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* METHOD SP TARGET SP HTTP/d.d (spaces inside the target tolerated, as libmicrohttpd does). */
static int check_request_line(const char *l, size_t len, char *msg, size_t n) {
    static const char bad[] = "malformed request line: expected METHOD TARGET HTTP/1.1";
    if (memchr(l, '\0', len)) return refuse(400, msg, n, "malformed request line: a NUL byte");
    const char *sp = memchr(l, ' ', len), *end = l + len;
    if (!sp || sp == l) return refuse(400, msg, n, bad);
    const char *target = sp + 1;
    while (target < end && *target == ' ') target++;
    if (target == end) return refuse(400, msg, n, bad);
    const char *v = end - 1;
    while (v > target && *v == ' ') v--;
    while (v > target && *v != ' ') v--;
    if (v == target) return refuse(400, msg, n, bad);
    v++; /* the version runs to the end of the line, trailing spaces included (then it is not 8 bytes) */
    if (end - v != 8 || memcmp(v, "HTTP/", 5) != 0 || !is_digit(v[5]) || v[6] != '.' || !is_digit(v[7]))
        return refuse(400, msg, n, bad);
    if (v[5] != '1') {
        snprintf(msg, n, "HTTP version %.3s is not supported: use HTTP/1.1", v + 5);
        return 505;
    }
    return 0;
}

/* A Content-Length value: 400 unless decimal digits only, 413 when they pass 64 bits. */
static int check_length(const char *v, size_t len, char *msg, size_t n) {
    uint64_t x = 0;
    if (len == 0) return refuse(400, msg, n, "Content-Length is empty");
    for (size_t i = 0; i < len; i++) {
        if (!is_digit(v[i])) return refuse(400, msg, n, "Content-Length is not a decimal number");
    }
    for (size_t i = 0; i < len; i++) {
        const uint64_t d = (uint64_t)(v[i] - '0');
        if (x > (UINT64_MAX - d) / 10) return refuse(413, msg, n, "Content-Length is too large");
        x = x * 10 + d;
    }
    return 0;
}

/* One header line (not empty): NAME ":" VALUE. Sets *chunked from the first Transfer-Encoding. */
static int check_header(const char *l, size_t len, bool *seen_te, bool *chunked, char *msg, size_t n) {
    if (memchr(l, '\0', len)) return refuse(400, msg, n, "malformed header: a NUL byte");
    if (l[0] == ' ' || l[0] == '\t')
        return refuse(400, msg, n, "malformed header: obsolete line folding (a line that starts with whitespace)");
    const char *colon = memchr(l, ':', len);
    if (!colon) return refuse(400, msg, n, "malformed header: a line without ':'");
    if (colon == l) return refuse(400, msg, n, "malformed header: an empty name");
    if (colon[-1] == ' ' || colon[-1] == '\t') return refuse(400, msg, n, "malformed header: whitespace before ':'");
    const size_t name_len = (size_t)(colon - l);
    const char *v = colon + 1, *end = l + len;
    while (v < end && (*v == ' ' || *v == '\t')) v++;
    if (name_len == 14 && strncasecmp(l, "Content-Length", 14) == 0) return check_length(v, (size_t)(end - v), msg, n);
    if (name_len == 17 && strncasecmp(l, "Transfer-Encoding", 17) == 0 && !*seen_te) {
        *seen_te = true;
        *chunked = end - v == 7 && strncasecmp(v, "chunked", 7) == 0;
    }
    return 0;
}

/* The chunk framing of b[0, len), the body bytes that came with the head: size lines (hex, an optional ";extension"),
 * data, CRLF after each chunk, trailer lines after the last (size 0) chunk up to the empty line. Bytes not arrived yet
 * are not waited for. */
static int check_chunks(const char *b, size_t len, char *msg, size_t n) {
    static const char bad[] = "malformed chunked body: a chunk size line that is not hexadecimal digits";
    size_t pos = 0;
    for (;;) {
        if (pos == len) return 0;
        const char *lf = memchr(b + pos, '\n', len - pos);
        const size_t end = lf ? (size_t)(lf - b) : len;
        size_t digits_end = pos;
        while (digits_end < end && b[digits_end] != ';') digits_end++;
        if (digits_end == end && end > pos && b[end - 1] == '\r') digits_end--; /* CR of CRLF, or of one to come */
        if (digits_end == pos) return refuse(400, msg, n, bad); /* an empty size, or ';' or CR first */
        uint64_t size = 0;
        for (size_t i = pos; i < digits_end; i++) {
            const int d = hex_value(b[i]);
            if (d < 0) return refuse(400, msg, n, bad);
            if (size > (UINT64_MAX - (uint64_t)d) / 16) return refuse(413, msg, n, "chunk size is too large");
            size = size * 16 + (uint64_t)d;
        }
        if (!lf) return 0;
        pos = end + 1;
        if (size == 0) break;
        if (len - pos <= size) return 0;
        pos += (size_t)size;
        if (b[pos] == '\n') {
            pos++;
        } else if (b[pos] == '\r') {
            if (pos + 1 == len) return 0;
            if (b[pos + 1] != '\n') return refuse(400, msg, n, "malformed chunked body: no CRLF after a chunk's data");
            pos += 2;
        } else {
            return refuse(400, msg, n, "malformed chunked body: no CRLF after a chunk's data");
        }
    }
    /* Trailer lines up to an empty one; what follows is the next request, left to libmicrohttpd. */
    size_t s, l;
    bool first = true;
    while (next_line(b, len, &pos, &s, &l) && l > 0) {
        const char *t = b + s;
        const bool folded = !first && (t[0] == ' ' || t[0] == '\t');
        if (!folded && !memchr(t, ':', l))
            return refuse(400, msg, n, "malformed chunked body: a trailer line without ':'");
        first = false;
    }
    return 0;
}

int srv_head_check(const char *buf, size_t len, size_t limit, char *msg, size_t n) {
    const size_t scan = len < limit ? len : limit; /* the head must end within the limit */
    size_t pos = 0, s = 0, l = 0;
    do { /* empty lines before the request line are tolerated, as libmicrohttpd does */
        if (!next_line(buf, scan, &pos, &s, &l)) goto incomplete;
    } while (l == 0);
    int st = check_request_line(buf + s, l, msg, n);
    if (st) return st;
    bool seen_te = false, chunked = false;
    for (;;) {
        if (!next_line(buf, scan, &pos, &s, &l)) goto incomplete;
        if (l == 0) break;
        st = check_header(buf + s, l, &seen_te, &chunked, msg, n);
        if (st) return st;
    }
    return chunked ? check_chunks(buf + pos, len - pos, msg, n) : SRV_HEAD_OK;
incomplete:
    if (len < limit) return SRV_HEAD_MORE;
    snprintf(msg, n, "request line and headers are over the limit of %zu bytes", limit);
    return 431;
}
