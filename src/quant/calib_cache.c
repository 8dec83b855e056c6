/*
 * calib_cache.c - reading, writing and looking up the calibration cache file (format in
 * calib_cache.h). The reader trusts nothing: every line is checked for length, control characters
 * and shape, every scale for being a finite positive float, every name for length and uniqueness,
 * and the first problem is reported with the file name and line number.
 */
#include "quant/calib_cache.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"

#define MAGIC "tailcut-calibration-cache"

/* ---- the in-memory cache ---- */

static uint64_t name_hash(const char *name, size_t len) {
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)name[i]) * 0x100000001b3ull;
    return h;
}

/* Returns the index of the entry called name (len bytes), or -1. */
static long find_index(const tc__calib_cache *c, const char *name, size_t len) {
    if (c->nslots == 0) return -1;
    size_t mask = c->nslots - 1;
    for (size_t s = name_hash(name, len) & mask;; s = (s + 1) & mask) {
        uint32_t e = c->slots[s];
        if (e == 0) return -1;
        const char *got = c->entries[e - 1].name;
        if (strncmp(got, name, len) == 0 && got[len] == '\0') return (long)(e - 1);
    }
}

static void index_insert(tc__calib_cache *c, size_t k) {
    size_t mask = c->nslots - 1;
    const char *name = c->entries[k].name;
    size_t s = name_hash(name, strlen(name)) & mask;
    while (c->slots[s] != 0) s = (s + 1) & mask;
    c->slots[s] = (uint32_t)(k + 1);
}

/* Makes room for one more entry: the entry array grows by doubling, the index stays under half full. */
static tc_status reserve_one(tc__calib_cache *c, tc__err *err) {
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64, bytes;
        if (tc__mul_overflow_size(cap, sizeof *c->entries, &bytes) != 0)
            return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "calibration cache: too many entries");
        tc__calib_entry *e = realloc(c->entries, bytes);
        if (e == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory for the calibration cache");
        c->entries = e;
        c->cap = cap;
    }
    if ((c->n + 1) * 2 > c->nslots) {
        size_t nslots = c->nslots ? c->nslots * 2 : 128;
        uint32_t *slots = calloc(nslots, sizeof *slots);
        if (slots == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory for the calibration cache");
        free(c->slots);
        c->slots = slots;
        c->nslots = nslots;
        for (size_t k = 0; k < c->n; k++) index_insert(c, k);
    }
    return TC_STATUS_OK;
}

/* Why a name (len bytes) cannot be stored, or NULL when it can. */
static const char *name_problem(const char *name, size_t len) {
    if (len == 0) return "empty tensor name";
    if (len > TC__CALIB_CACHE_MAX_NAME) return "tensor name longer than 255 bytes";
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f) return "control character in tensor name";
    return NULL;
}

/* Why a scale cannot be stored, or NULL when it can. */
static const char *scale_problem(float scale) {
    if (!isfinite(scale)) return "scale is not finite";
    if (!(scale > 0.0f)) return "scale is not positive";
    return NULL;
}

/* Adds name (len bytes, not necessarily NUL-terminated) after the checks of tc__calib_cache_put. */
static tc_status put_n(tc__calib_cache *c, const char *name, size_t len, float scale, tc__err *err) {
    const char *why = name_problem(name, len);
    if (why != NULL) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "%s", why);
    why = scale_problem(scale);
    if (why != NULL)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "tensor '%.*s': %s (%g)", (int)len, name, why, (double)scale);
    long dup = find_index(c, name, len);
    if (dup >= 0)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "tensor '%.*s' appears twice (first as entry %ld)", (int)len,
                        name, dup + 1);
    if (c->n >= TC__CALIB_CACHE_MAX_ENTRIES)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "more than %d tensors", TC__CALIB_CACHE_MAX_ENTRIES);
    tc_status st = reserve_one(c, err);
    if (st != TC_STATUS_OK) return st;
    tc__calib_entry *e = &c->entries[c->n];
    memcpy(e->name, name, len);
    e->name[len] = '\0';
    e->scale = scale;
    index_insert(c, c->n);
    c->n++;
    return TC_STATUS_OK;
}

tc_status tc__calib_cache_create(uint64_t fingerprint, tc__calib_method method, tc__calib_cache **cache,
                                 tc__err *err) {
    if (cache == NULL) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "calibration cache: NULL output");
    if ((unsigned)method >= TC__CALIB_METHOD_COUNT)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "calibration cache: unknown method %d", (int)method);
    tc__calib_cache *c = calloc(1, sizeof *c);
    if (c == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory for the calibration cache");
    c->fingerprint = fingerprint;
    c->method = method;
    *cache = c;
    return TC_STATUS_OK;
}

void tc__calib_cache_free(tc__calib_cache *cache) {
    if (cache == NULL) return;
    free(cache->entries);
    free(cache->slots);
    free(cache);
}

tc_status tc__calib_cache_put(tc__calib_cache *cache, const char *name, float scale, tc__err *err) {
    if (cache == NULL || name == NULL) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "calibration cache: NULL argument");
    tc__err e = {0};
    if (put_n(cache, name, strnlen(name, TC__CALIB_CACHE_MAX_NAME + 1), scale, &e) != TC_STATUS_OK)
        return tc__fail(err, e.status, "calibration cache: %s", e.msg);
    return TC_STATUS_OK;
}

bool tc__calib_cache_find(const tc__calib_cache *cache, const char *name, float *scale) {
    if (cache == NULL || name == NULL) return false;
    long k = find_index(cache, name, strlen(name));
    if (k < 0) return false;
    if (scale != NULL) *scale = cache->entries[k].scale;
    return true;
}

/* ---- reading ---- */

/* Records the first problem as "calibration cache 'file' line N: why". */
static tc_status bad_line(tc__err *err, tc_status st, const char *file, size_t line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static tc_status bad_line(tc__err *err, tc_status st, const char *file, size_t line, const char *fmt, ...) {
    char why[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return tc__fail(err, st, "calibration cache '%.200s' line %zu: %s", file, line, why);
}

static int hex_digit(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* Parses exactly ndigits hex digits (at most 16) of s (len bytes); returns -1 on anything else. */
static int parse_hex(const char *s, size_t len, size_t ndigits, uint64_t *value) {
    if (len != ndigits) return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        int d = hex_digit(s[i]);
        if (d < 0) return -1;
        v = v << 4 | (uint64_t)d;
    }
    *value = v;
    return 0;
}

/* Splits line at single spaces into at most max tokens; returns the count, or -1 on an empty token. */
static int split_spaces(char *line, char **tok, int max) {
    int n = 0;
    for (char *p = line;;) {
        char *sp = strchr(p, ' ');
        if (n == max) return max + 1;
        tok[n++] = p;
        if (sp == NULL) break;
        *sp = '\0';
        p = sp + 1;
    }
    for (int i = 0; i < n; i++)
        if (tok[i][0] == '\0') return -1;
    return n;
}

static tc_status parse_header(const char *s, size_t len, const char *file, uint64_t fingerprint,
                              tc__calib_cache **out, tc__err *err) {
    const char *expect = "expected '" MAGIC " <version> <method> <16 hex digits of the model fingerprint>'";
    char buf[TC__CALIB_CACHE_MAX_LINE + 1], *tok[4];
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (strncmp(buf, MAGIC " ", sizeof MAGIC) != 0)
        return bad_line(err, TC_STATUS_CORRUPT_FILE, file, 1, "not a tailcut calibration cache (%s)", expect);
    if (split_spaces(buf, tok, 4) != 4) return bad_line(err, TC_STATUS_CORRUPT_FILE, file, 1, "bad header (%s)", expect);
    if (strspn(tok[1], "0123456789") != strlen(tok[1]) || strlen(tok[1]) > 9)
        return bad_line(err, TC_STATUS_CORRUPT_FILE, file, 1, "bad version '%s' (%s)", tok[1], expect);
    long version = strtol(tok[1], NULL, 10);
    if (version != TC__CALIB_CACHE_VERSION)
        return bad_line(err, TC_STATUS_UNSUPPORTED, file, 1, "format version %ld, this build reads version %d", version,
                        TC__CALIB_CACHE_VERSION);
    tc__calib_method method;
    tc__err merr = {0};
    if (tc__calib_method_parse(tok[2], &method, &merr) != TC_STATUS_OK)
        return bad_line(err, TC_STATUS_CORRUPT_FILE, file, 1, "%s", merr.msg);
    uint64_t fp;
    if (parse_hex(tok[3], strlen(tok[3]), 16, &fp) != 0)
        return bad_line(err, TC_STATUS_CORRUPT_FILE, file, 1, "bad model fingerprint '%.32s' (%s)", tok[3], expect);
    if (fp != fingerprint)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                        "calibration cache '%.200s' belongs to the model with fingerprint %016" PRIx64
                        ", not to this one (%016" PRIx64 "): calibrate again or delete the file",
                        file, fp, fingerprint);
    return tc__calib_cache_create(fp, method, out, err);
}

/* Parses "<name>: <8 hex digits>" (the name ends at the line's last ':'). */
static tc_status parse_entry(tc__calib_cache *c, const char *s, size_t len, const char *file, size_t line,
                             tc__err *err) {
    const char *colon = NULL;
    for (size_t i = len; i > 0; i--)
        if (s[i - 1] == ':') {
            colon = s + i - 1;
            break;
        }
    if (len == 0) return bad_line(err, TC_STATUS_CORRUPT_FILE, file, line, "empty line");
    if (colon == NULL)
        return bad_line(err, TC_STATUS_CORRUPT_FILE, file, line, "missing ':' (expected '<tensor name>: <scale>')");
    size_t name_len = (size_t)(colon - s), val_len = len - name_len - 1;
    const char *val = colon + 1;
    uint64_t bits;
    if (val_len < 1 || val[0] != ' ' || parse_hex(val + 1, val_len - 1, 8, &bits) != 0)
        return bad_line(err, TC_STATUS_CORRUPT_FILE, file, line,
                        "bad scale '%.*s' (expected ': ' and the 8 hex digits of a float32)", (int)(val_len > 40 ? 40 : val_len),
                        val);
    uint32_t b32 = (uint32_t)bits;
    float scale;
    memcpy(&scale, &b32, sizeof scale);
    if (name_len > TC__CALIB_CACHE_MAX_NAME)
        return bad_line(err, TC_STATUS_CORRUPT_FILE, file, line, "tensor name is %zu bytes (limit %d)", name_len,
                        TC__CALIB_CACHE_MAX_NAME);
    const char *why = name_problem(s, name_len);
    if (why == NULL) why = scale_problem(scale);
    if (why != NULL)
        return bad_line(err, TC_STATUS_CORRUPT_FILE, file, line, "tensor '%.*s': %s (%08" PRIx32 " = %g)",
                        (int)(name_len > 64 ? 64 : name_len), s, why, b32, (double)scale);
    long dup = find_index(c, s, name_len);
    if (dup >= 0) /* entry k is on line k + 2: one header line, no blank lines */
        return bad_line(err, TC_STATUS_CORRUPT_FILE, file, line, "tensor '%.*s' appears twice (first on line %ld)",
                        (int)(name_len > 64 ? 64 : name_len), s, dup + 2);
    tc__err perr = {0};
    if (put_n(c, s, name_len, scale, &perr) != TC_STATUS_OK)
        return bad_line(err, perr.status == TC_STATUS_OUT_OF_MEMORY ? perr.status : TC_STATUS_CORRUPT_FILE, file, line,
                        "%s", perr.msg);
    return TC_STATUS_OK;
}

/* Finds the end of the line starting at pos; checks its length and bytes. Sets *len (without
 * "\n" or "\r\n") and *next (the start of the next line). */
static tc_status next_line(const char *text, size_t size, size_t pos, const char *file, size_t line, size_t *len,
                           size_t *next, tc__err *err) {
    size_t avail = size - pos, look = avail < TC__CALIB_CACHE_MAX_LINE + 1 ? avail : TC__CALIB_CACHE_MAX_LINE + 1;
    const char *nl = memchr(text + pos, '\n', look);
    if (nl == NULL) {
        if (avail > TC__CALIB_CACHE_MAX_LINE)
            return bad_line(err, TC_STATUS_CORRUPT_FILE, file, line, "line longer than %d bytes",
                            TC__CALIB_CACHE_MAX_LINE);
        return bad_line(err, TC_STATUS_CORRUPT_FILE, file, line, "no newline at the end of the line (truncated file?)");
    }
    size_t n = (size_t)(nl - (text + pos));
    *next = pos + n + 1;
    if (n > 0 && text[pos + n - 1] == '\r') n--;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)text[pos + i];
        if (ch < 0x20 || ch == 0x7f)
            return bad_line(err, TC_STATUS_CORRUPT_FILE, file, line, "control character 0x%02x at column %zu", ch,
                            i + 1);
    }
    *len = n;
    return TC_STATUS_OK;
}

tc_status tc__calib_cache_parse(const char *text, size_t size, const char *file, uint64_t fingerprint,
                                tc__calib_cache **cache, tc__err *err) {
    if (cache == NULL || (text == NULL && size > 0))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "calibration cache: NULL argument");
    if (file == NULL) file = "(memory)";
    if (size == 0)
        return bad_line(err, TC_STATUS_CORRUPT_FILE, file, 1, "empty file (expected the '" MAGIC "' header)");
    tc__calib_cache *c = NULL;
    tc_status st = TC_STATUS_OK;
    size_t pos = 0, line = 0;
    while (st == TC_STATUS_OK && pos < size) {
        size_t len = 0, next = 0;
        line++;
        st = next_line(text, size, pos, file, line, &len, &next, err);
        if (st != TC_STATUS_OK) break;
        if (line == 1)
            st = parse_header(text + pos, len, file, fingerprint, &c, err);
        else
            st = parse_entry(c, text + pos, len, file, line, err);
        pos = next;
    }
    if (st != TC_STATUS_OK) {
        tc__calib_cache_free(c);
        return st;
    }
    *cache = c;
    return TC_STATUS_OK;
}

tc_status tc__calib_cache_load(const char *path, uint64_t fingerprint, tc__calib_cache **cache, tc__err *err) {
    if (path == NULL || cache == NULL)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "calibration cache: NULL argument");
    void *data = NULL;
    size_t size = 0;
    tc_status st = tc__read_file(path, TC__CALIB_CACHE_MAX_FILE, &data, &size, err);
    if (st != TC_STATUS_OK) return st;
    st = tc__calib_cache_parse(data, size, path, fingerprint, cache, err);
    free(data);
    return st;
}

/* ---- writing ---- */

tc_status tc__calib_cache_format(const tc__calib_cache *cache, char **text, size_t *size, tc__err *err) {
    if (cache == NULL || text == NULL || size == NULL)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "calibration cache: NULL argument");
    const size_t header_max = 128, line_max = TC__CALIB_CACHE_MAX_NAME + 12;
    size_t cap;
    if (tc__mul_overflow_size(cache->n, line_max, &cap) != 0 || cap > SIZE_MAX - header_max)
        return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "calibration cache: too many entries to write");
    cap += header_max;
    char *buf = malloc(cap);
    if (buf == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory writing the calibration cache");
    size_t n = (size_t)snprintf(buf, header_max, MAGIC " %d %s %016" PRIx64 "\n", TC__CALIB_CACHE_VERSION,
                                tc__calib_method_name(cache->method), cache->fingerprint);
    for (size_t k = 0; k < cache->n; k++) {
        uint32_t bits;
        memcpy(&bits, &cache->entries[k].scale, sizeof bits);
        n += (size_t)snprintf(buf + n, cap - n, "%s: %08" PRIx32 "\n", cache->entries[k].name, bits);
    }
    *text = buf;
    *size = n;
    return TC_STATUS_OK;
}

/* Writes all of data to fd; returns 0, or -1 with errno set. */
static int write_all(int fd, const char *data, size_t size) {
    while (size > 0) {
        ssize_t w = write(fd, data, size);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        data += w;
        size -= (size_t)w;
    }
    return 0;
}

tc_status tc__calib_cache_save(const tc__calib_cache *cache, const char *path, tc__err *err) {
    if (cache == NULL || path == NULL) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "calibration cache: NULL argument");
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= sizeof tmp)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "calibration cache path too long: '%.200s'", path);
    char *text = NULL;
    size_t size = 0;
    tc_status st = tc__calib_cache_format(cache, &text, &size, err);
    if (st != TC_STATUS_OK) return st;
    int fd = mkstemp(tmp);
    if (fd < 0) {
        free(text);
        return tc__fail(err, TC_STATUS_IO_ERROR, "cannot write calibration cache '%s': %s", path, strerror(errno));
    }
    /* mkstemp creates the file 0600; a cache is no secret, give it the usual 0644. */
    int bad = fchmod(fd, 0644) != 0 || write_all(fd, text, size) != 0 || fsync(fd) != 0;
    int saved = errno;
    free(text);
    if (close(fd) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    if (!bad && rename(tmp, path) != 0) {
        bad = 1;
        saved = errno;
    }
    if (bad) {
        unlink(tmp);
        return tc__fail(err, TC_STATUS_IO_ERROR, "cannot write calibration cache '%s': %s", path, strerror(saved));
    }
    return TC_STATUS_OK;
}
