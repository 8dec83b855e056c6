/* json_data.c - one-pass extraction of KServe "data" arrays from a JSON request (see json_data.h). */
#include "json_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double k_pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static const uint64_t k_pow10_u64[20] = {UINT64_C(1),
                                          UINT64_C(10),
                                          UINT64_C(100),
                                          UINT64_C(1000),
                                          UINT64_C(10000),
                                          UINT64_C(100000),
                                          UINT64_C(1000000),
                                          UINT64_C(10000000),
                                          UINT64_C(100000000),
                                          UINT64_C(1000000000),
                                          UINT64_C(10000000000),
                                          UINT64_C(100000000000),
                                          UINT64_C(1000000000000),
                                          UINT64_C(10000000000000),
                                          UINT64_C(100000000000000),
                                          UINT64_C(1000000000000000),
                                          UINT64_C(10000000000000000),
                                          UINT64_C(100000000000000000),
                                          UINT64_C(1000000000000000000),
                                          UINT64_C(10000000000000000000)};

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* One parsed number: its correctly rounded double and, separately, what it is as an integer. */
enum { NUM_INT, NUM_FRACTION, NUM_BIG };
typedef struct num {
    double d;
    int cls;      /* NUM_INT: the value is exactly (neg ? -mag : mag); NUM_FRACTION: not an integer;
                   * NUM_BIG: an integer whose magnitude is above UINT64_MAX */
    int neg;      /* NUM_INT: negative (never for 0) */
    uint64_t mag;
} num;

/* Sets x to D * 10^scale (D the decimal digits digit(0..count), which start and end with a non-zero digit). */
static void int_from_digits(const char *ib, int64_t ni, const char *fb, int64_t first, int64_t last, int64_t scale,
                            num *x) {
    if (scale < 0) {
        x->cls = NUM_FRACTION;
        return;
    }
    if (last - first + 1 + scale > 20) {
        x->cls = NUM_BIG;
        return;
    }
    uint64_t v = 0;
    for (int64_t k = first; k <= last; k++) {
        char c = k < ni ? ib[k] : fb[k - ni];
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(c - '0'), &v)) {
            x->cls = NUM_BIG;
            return;
        }
    }
    if (__builtin_mul_overflow(v, k_pow10_u64[scale], &v)) {
        x->cls = NUM_BIG;
        return;
    }
    x->cls = NUM_INT;
    x->mag = v;
}

/* The integer value of a number's text [s, e) (valid JSON grammar), digit by digit: for numbers with more
 * significant digits than parse_number keeps. */
static void int_from_text(const char *s, const char *e, num *x) {
    const char *p = s;
    if (*p == '-') p++;
    const char *ib = p;
    while (p < e && is_digit(*p)) p++;
    int64_t ni = p - ib, nf = 0;
    const char *fb = p;
    if (p < e && *p == '.') {
        fb = ++p;
        while (p < e && is_digit(*p)) p++;
        nf = p - fb;
    }
    int64_t ex = 0;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0;
        if (p < e && (*p == '+' || *p == '-')) eneg = *p++ == '-';
        for (; p < e && is_digit(*p); p++)
            if (ex < INT64_C(1000000000000000)) ex = ex * 10 + (*p - '0');
        if (eneg) ex = -ex;
    }
    int64_t first = -1, last = -1;
    for (int64_t k = 0; k < ni + nf; k++)
        if ((k < ni ? ib[k] : fb[k - ni]) != '0') {
            if (first < 0) first = k;
            last = k;
        }
    if (first < 0) {
        x->cls = NUM_INT;
        x->mag = 0;
        x->neg = 0;
        return;
    }
    /* D * 10^(ex - nf) with the trailing zeros after `last` moved into the exponent. */
    int_from_digits(ib, ni, fb, first, last, ex - nf + (ni + nf - 1 - last), x);
}

/*
 * Parses a JSON number at *pp (strict grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?).
 * The double is exact when the significand fits in 53 bits and the decimal exponent in [-22, 22]
 * (Clinger's fast path: one correctly rounded multiplication or division); otherwise strtod. The
 * integer value comes from the digits themselves, never from the double. Returns 0 or -1.
 */
static int parse_number(const char **pp, const char *end, num *out) {
    const char *p = *pp, *start = p;
    int neg = 0;
    if (p < end && *p == '-') {
        neg = 1;
        p++;
    }
    if (p >= end || !is_digit(*p)) return -1;
    uint64_t mant = 0;
    int digits = 0, inexact = 0;
    int64_t exp10 = 0;
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
        int eneg = 0;
        int64_t e = 0;
        if (p < end && (*p == '+' || *p == '-')) eneg = *p++ == '-';
        if (p >= end || !is_digit(*p)) return -1;
        for (; p < end && is_digit(*p); p++)
            if (e < INT64_C(1000000000000000)) e = e * 10 + (*p - '0');
        exp10 += eneg ? -e : e;
    }
    /* As an integer: mant * 10^exp10 exactly unless non-zero digits were dropped (inexact). */
    out->neg = neg;
    if (inexact) {
        int_from_text(start, p, out);
    } else if (mant == 0) {
        out->cls = NUM_INT;
        out->mag = 0;
    } else if (exp10 >= 0) {
        out->cls = exp10 > 19 || __builtin_mul_overflow(mant, k_pow10_u64[exp10], &out->mag) ? NUM_BIG : NUM_INT;
    } else if (exp10 < -19 || mant % k_pow10_u64[-exp10] != 0) {
        out->cls = NUM_FRACTION;
    } else {
        out->cls = NUM_INT;
        out->mag = mant / k_pow10_u64[-exp10];
    }
    if (out->cls != NUM_INT || out->mag == 0) out->neg = 0;
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
    out->d = v;
    return 0;
}

/* Converts the values stored so far to doubles, in place (each the correctly rounded value of its integer). */
static void to_double(srv_json_array *a) {
    for (int64_t k = 0; k < a->n; k++) {
        double d = a->kind == SRV_JSON_UINT64 ? (double)a->v.u[k] : (double)a->v.i[k];
        memcpy(&a->v.d[k], &d, sizeof d);
    }
    a->kind = SRV_JSON_DOUBLE;
}

/* Appends x, moving the array to a wider kind (int64 -> uint64 or double) when x needs it. */
static int push(srv_json_array *a, size_t *cap, const num *x) {
    if ((size_t)a->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 1024;
        double *nv = realloc(a->v.d, nc * sizeof *nv);
        if (!nv) return -1;
        a->v.d = nv;
        *cap = nc;
    }
    int is_int = x->cls == NUM_INT;
    a->any_neg |= is_int && x->neg;
    a->any_fraction |= x->cls == NUM_FRACTION;
    if (a->kind == SRV_JSON_INT64 && is_int) {
        if (x->neg && x->mag <= (uint64_t)INT64_MAX + 1) {
            a->v.i[a->n++] = x->mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)x->mag;
            return 0;
        }
        if (!x->neg && x->mag <= (uint64_t)INT64_MAX) {
            a->v.i[a->n++] = (int64_t)x->mag;
            return 0;
        }
        if (!x->neg && !a->any_neg) a->kind = SRV_JSON_UINT64; /* every value so far is >= 0: same bits */
    }
    if (a->kind == SRV_JSON_UINT64 && is_int && !x->neg) {
        a->v.u[a->n++] = x->mag;
        return 0;
    }
    if (a->kind != SRV_JSON_DOUBLE) to_double(a);
    a->v.d[a->n++] = x->d;
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
        num v = {.cls = NUM_INT};
        if (c == 't' && end - p >= 4 && memcmp(p, "true", 4) == 0) {
            v.d = 1.0;
            v.mag = 1;
            p += 4;
            a->any_bool = 1;
        } else if (c == 'f' && end - p >= 5 && memcmp(p, "false", 5) == 0) {
            p += 5;
            a->any_bool = 1;
        } else if (parse_number(&p, end, &v) != 0) {
            return 0;
        }
        if (push(a, &cap, &v)) return SIZE_MAX;
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
        if (k >= len || text[k] != '[') continue;
        /* Beyond the limit an array would be left to cJSON, whose doubles lose integers above 2^53: refused. */
        if (out->n >= SRV_JSON_MAX_ARRAYS) return 2;
        srv_json_array *a = &out->a[out->n];
        size_t stop = parse_array(text, len, k, a);
        if (stop == SIZE_MAX) {
            free(a->v.d);
            memset(a, 0, sizeof *a);
            return -1;
        }
        char marker[8];
        int mlen = snprintf(marker, sizeof marker, "\"%c%d\"", SRV_JSON_MARKER, out->n);
        if (stop == 0 || stop - k < (size_t)mlen) {
            free(a->v.d);
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
    for (int k = 0; k < arrays->n; k++) free(arrays->a[k].v.d);
    arrays->n = 0;
}
