/* json_data.c - one-pass extraction of KServe "data" arrays from a JSON request (see json_data.h). */
#include "json_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double k_pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/*
 * Parses a JSON number at *pp (strict grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?).
 * Exact when the significand fits in 53 bits and the decimal exponent in [-22, 22] (Clinger's
 * fast path: one correctly rounded multiplication or division); otherwise strtod. Returns 0 or -1.
 */
static int parse_number(const char **pp, const char *end, double *out) {
    const char *p = *pp, *start = p;
    int neg = 0;
    if (p < end && *p == '-') {
        neg = 1;
        p++;
    }
    if (p >= end || !is_digit(*p)) return -1;
    uint64_t mant = 0;
    int digits = 0, exp10 = 0, inexact = 0;
    if (*p == '0') {
        p++;
    } else {
        for (; p < end && is_digit(*p); p++) {
            if (digits < 19) {
                mant = mant * 10 + (uint64_t)(*p - '0');
                digits++;
            } else {
                exp10++;
                inexact |= *p != '0';
            }
        }
    }
    if (p < end && *p == '.') {
        p++;
        if (p >= end || !is_digit(*p)) return -1;
        for (; p < end && is_digit(*p); p++) {
            if (mant == 0 && *p == '0') {
                exp10--; /* leading zeros of the fraction */
            } else if (digits < 19) {
                mant = mant * 10 + (uint64_t)(*p - '0');
                digits++;
                exp10--;
            } else {
                inexact |= *p != '0';
            }
        }
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0, e = 0;
        if (p < end && (*p == '+' || *p == '-')) eneg = *p++ == '-';
        if (p >= end || !is_digit(*p)) return -1;
        for (; p < end && is_digit(*p); p++)
            if (e < 100000) e = e * 10 + (*p - '0');
        exp10 += eneg ? -e : e;
    }
    double v;
    if (!inexact && mant <= (UINT64_C(1) << 53) && exp10 >= -22 && exp10 <= 22) {
        v = (double)mant;
        v = exp10 < 0 ? v / k_pow10[-exp10] : v * k_pow10[exp10];
        if (neg) v = -v;
    } else {
        char buf[128];
        size_t n = (size_t)(p - start);
        if (n < sizeof buf) {
            memcpy(buf, start, n);
            buf[n] = '\0';
            v = strtod(buf, NULL);
        } else {
            char *big = malloc(n + 1);
            if (!big) return -1;
            memcpy(big, start, n);
            big[n] = '\0';
            v = strtod(big, NULL);
            free(big);
        }
    }
    *pp = p;
    *out = v;
    return 0;
}

static int push(srv_json_array *a, size_t *cap, double v) {
    if ((size_t)a->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 1024;
        double *nv = realloc(a->v, nc * sizeof *nv);
        if (!nv) return -1;
        a->v = nv;
        *cap = nc;
    }
    a->v[a->n++] = v;
    return 0;
}

/*
 * Parses the array starting at text[i] == '[' into a. Returns the index after its closing ']',
 * 0 when it holds something else (or is malformed: cJSON will report it), SIZE_MAX when out of memory.
 */
static size_t parse_array(const char *text, size_t len, size_t i, srv_json_array *a) {
    const char *p = text + i, *end = text + len;
    size_t cap = 0;
    int depth = 0, want_value = 1; /* after '[' or ',' a value (or ']' right after '[') must follow */
    char prev = 0;
    while (p < end) {
        char c = *p;
        if (is_ws(c)) {
            p++;
            continue;
        }
        if (c == '[') {
            if (!want_value) return 0;
            depth++;
            p++;
            prev = '[';
            continue;
        }
        if (c == ']') {
            if (want_value && prev != '[') return 0;
            depth--;
            p++;
            prev = ']';
            want_value = 0;
            if (depth == 0) return (size_t)(p - text);
            continue;
        }
        if (c == ',') {
            if (want_value) return 0;
            want_value = 1;
            prev = ',';
            p++;
            continue;
        }
        if (!want_value) return 0;
        double v;
        if (c == 't' && end - p >= 4 && memcmp(p, "true", 4) == 0) {
            v = 1.0;
            p += 4;
            a->any_bool = 1;
        } else if (c == 'f' && end - p >= 5 && memcmp(p, "false", 5) == 0) {
            v = 0.0;
            p += 5;
            a->any_bool = 1;
        } else if (parse_number(&p, end, &v) != 0) {
            return 0;
        }
        if (push(a, &cap, v)) return SIZE_MAX;
        want_value = 0;
        prev = 'v';
    }
    return 0;
}

int srv_json_extract_data(char *text, size_t len, srv_json_arrays *out) {
    memset(out, 0, sizeof *out);
    size_t i = 0;
    while (i < len) {
        if (text[i] != '"') {
            i++;
            continue;
        }
        /* A string: find its end, refusing the byte 0xFF (never valid UTF-8, and what markers start with,
         * so no request can forge one; cJSON's \u escapes only produce valid UTF-8). */
        size_t s = i + 1, j = s;
        while (j < len && text[j] != '"') {
            if ((unsigned char)text[j] == 0xFF) return 1;
            j += text[j] == '\\' ? 2 : 1;
        }
        if (j >= len) return 0; /* unterminated: cJSON reports it */
        int is_data = j - s == 4 && memcmp(text + s, "data", 4) == 0;
        i = j + 1;
        if (!is_data) continue;
        size_t k = i;
        while (k < len && is_ws(text[k])) k++;
        if (k >= len || text[k] != ':') continue;
        k++;
        while (k < len && is_ws(text[k])) k++;
        if (k >= len || text[k] != '[' || out->n >= SRV_JSON_MAX_ARRAYS) continue;
        srv_json_array *a = &out->a[out->n];
        size_t stop = parse_array(text, len, k, a);
        if (stop == SIZE_MAX) {
            free(a->v);
            memset(a, 0, sizeof *a);
            return -1;
        }
        char marker[8];
        int mlen = snprintf(marker, sizeof marker, "\"%c%d\"", SRV_JSON_MARKER, out->n);
        if (stop == 0 || stop - k < (size_t)mlen) {
            free(a->v);
            memset(a, 0, sizeof *a);
            continue; /* left for cJSON */
        }
        memcpy(text + k, marker, (size_t)mlen);
        memset(text + k + mlen, ' ', stop - k - (size_t)mlen);
        out->n++;
        i = stop;
    }
    return 0;
}

const srv_json_array *srv_json_marker(const srv_json_arrays *arrays, const char *s) {
    if (!s || s[0] != SRV_JSON_MARKER || !is_digit(s[1])) return NULL;
    int k = 0;
    for (const char *p = s + 1; *p; p++) {
        if (!is_digit(*p) || k > SRV_JSON_MAX_ARRAYS) return NULL;
        k = k * 10 + (*p - '0');
    }
    return k < arrays->n ? &arrays->a[k] : NULL;
}

void srv_json_arrays_free(srv_json_arrays *arrays) {
    for (int k = 0; k < arrays->n; k++) free(arrays->a[k].v);
    arrays->n = 0;
}
