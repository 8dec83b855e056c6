/* npy.c - NumPy .npy format: a magic, a version, a header length, a Python-dict header
 * ({'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }) padded with spaces, then data. */
#include "core/npy.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

bool tc__npy_is_npy(const void *buf, size_t size) { return size >= 6 && memcmp(buf, kMagic, 6) == 0; }

static const struct {
    const char *descr;
    tc_dtype dtype;
} kDescr[] = {
    {"<f4", TC_DTYPE_FLOAT32}, {"<f8", TC_DTYPE_FLOAT64}, {"<f2", TC_DTYPE_FLOAT16}, {"|i1", TC_DTYPE_INT8},
    {"|u1", TC_DTYPE_UINT8},   {"<i2", TC_DTYPE_INT16},   {"<u2", TC_DTYPE_UINT16},  {"<i4", TC_DTYPE_INT32},
    {"<u4", TC_DTYPE_UINT32},  {"<i8", TC_DTYPE_INT64},   {"<u8", TC_DTYPE_UINT64},  {"|b1", TC_DTYPE_BOOL},
};

/* Finds the value text following 'key': in the header; NULL when absent. */
static const char *find_key(const char *h, const char *key) {
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(h, pat);
    if (p == NULL) return NULL;
    p += strlen(pat);
    while (*p == ' ') p++;
    if (*p != ':') return NULL;
    p++;
    while (*p == ' ') p++;
    return p;
}

static tc_status parse_header(const char *h, tc_dtype *dtype, int32_t *rank, int64_t *dims, tc__err *err) {
    const char *d = find_key(h, "descr");
    if (d == NULL || (*d != '\'' && *d != '"')) return tc__fail(err, TC_STATUS_CORRUPT_FILE, ".npy header has no 'descr'");
    char quote = *d++;
    const char *e = strchr(d, quote);
    if (e == NULL || e - d > 15) return tc__fail(err, TC_STATUS_CORRUPT_FILE, ".npy header has a bad 'descr'");
    char descr[16];
    memcpy(descr, d, (size_t)(e - d));
    descr[e - d] = '\0';
    /* Single-byte types may be written with '<', '>', '=' or '|'. */
    if (strlen(descr) == 3 && descr[2] == '1' && strchr("<>=|", descr[0])) descr[0] = '|';
    if (descr[0] == '=') descr[0] = '<';
    *dtype = TC_DTYPE_UNDEFINED;
    for (size_t i = 0; i < sizeof kDescr / sizeof kDescr[0]; i++)
        if (strcmp(kDescr[i].descr, descr) == 0) *dtype = kDescr[i].dtype;
    if (*dtype == TC_DTYPE_UNDEFINED)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, ".npy data type '%s' is not supported (big-endian or non-numeric)", descr);
    const char *f = find_key(h, "fortran_order");
    if (f == NULL) return tc__fail(err, TC_STATUS_CORRUPT_FILE, ".npy header has no 'fortran_order'");
    if (strncmp(f, "True", 4) == 0)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, ".npy file is in Fortran order; save it C-contiguous");
    if (strncmp(f, "False", 5) != 0) return tc__fail(err, TC_STATUS_CORRUPT_FILE, ".npy header has a bad 'fortran_order'");
    const char *s = find_key(h, "shape");
    if (s == NULL || *s != '(') return tc__fail(err, TC_STATUS_CORRUPT_FILE, ".npy header has no 'shape'");
    s++;
    *rank = 0;
    for (;;) {
        while (*s == ' ' || *s == ',') s++;
        if (*s == ')') break;
        if (!isdigit((unsigned char)*s)) return tc__fail(err, TC_STATUS_CORRUPT_FILE, ".npy header has a bad 'shape'");
        if (*rank >= TC_MAX_RANK)
            return tc__fail(err, TC_STATUS_UNSUPPORTED, ".npy tensor rank is above %d", TC_MAX_RANK);
        errno = 0;
        char *end;
        long long v = strtoll(s, &end, 10);
        if (errno != 0 || v < 0 || end == s) return tc__fail(err, TC_STATUS_CORRUPT_FILE, ".npy shape dim out of range");
        dims[(*rank)++] = v;
        s = end;
        while (*s == ' ') s++;
        if (*s != ',' && *s != ')') return tc__fail(err, TC_STATUS_CORRUPT_FILE, ".npy header has a bad 'shape'");
    }
    return TC_STATUS_OK;
}

tc_status tc__npy_parse(const void *buf, size_t size, tc__tensor *out, tc__err *err) {
    memset(out, 0, sizeof *out);
    const unsigned char *b = buf;
    if (!tc__npy_is_npy(buf, size) || size < 10) return tc__fail(err, TC_STATUS_CORRUPT_FILE, "not a .npy file (bad magic)");
    unsigned major = b[6];
    size_t hlen, hoff;
    if (major == 1) {
        hlen = (size_t)b[8] | ((size_t)b[9] << 8);
        hoff = 10;
    } else if (major == 2 || major == 3) {
        if (size < 12) return tc__fail(err, TC_STATUS_CORRUPT_FILE, ".npy file is truncated");
        hlen = (size_t)b[8] | ((size_t)b[9] << 8) | ((size_t)b[10] << 16) | ((size_t)b[11] << 24);
        hoff = 12;
    } else {
        return tc__fail(err, TC_STATUS_UNSUPPORTED, ".npy format version %u is not supported", major);
    }
    if (hlen > size - hoff || hlen > (1u << 20))
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, ".npy header length %zu exceeds the file size %zu", hlen, size);
    char *h = malloc(hlen + 1);
    if (h == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    memcpy(h, b + hoff, hlen);
    h[hlen] = '\0';
    if (strlen(h) != hlen) {
        free(h);
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, ".npy header contains a NUL byte");
    }
    tc_dtype dtype = TC_DTYPE_UNDEFINED;
    int32_t rank = 0;
    int64_t dims[TC_MAX_RANK] = {0};
    tc_status st = parse_header(h, &dtype, &rank, dims, err);
    free(h);
    if (st) return st;
    int64_t n = tc__numel(rank, dims);
    if (n < 0) return tc__fail(err, TC_STATUS_CORRUPT_FILE, ".npy shape is too large");
    size_t need;
    if (tc__mul_overflow_size((size_t)n, tc_dtype_size(dtype), &need))
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, ".npy data size overflows");
    size_t have = size - hoff - hlen;
    if (have != need)
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, ".npy data is %zu bytes, the header's shape needs %zu", have, need);
    st = tc__tensor_alloc(out, dtype, rank, dims, err);
    if (st) return st;
    if (need) memcpy(out->data, b + hoff + hlen, need);
    return TC_STATUS_OK;
}

tc_status tc__npy_save(const char *path, const tc__tensor *t, tc__err *err) {
    const char *descr = NULL;
    for (size_t i = 0; i < sizeof kDescr / sizeof kDescr[0]; i++)
        if (kDescr[i].dtype == t->dtype) descr = kDescr[i].descr;
    if (descr == NULL)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "data type %s cannot be written as .npy",
                        tc_dtype_name(t->dtype) ? tc_dtype_name(t->dtype) : "unknown");
    int64_t n = tc__tensor_numel(t);
    if (n < 0 || (size_t)n * tc_dtype_size(t->dtype) != t->nbytes)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "tensor shape does not match its byte size");
    char shape[256];
    size_t off = 0;
    off += (size_t)snprintf(shape + off, sizeof shape - off, "(");
    for (int32_t i = 0; i < t->rank; i++)
        off += (size_t)snprintf(shape + off, sizeof shape - off, "%lld%s", (long long)t->dims[i],
                                (t->rank == 1 || i + 1 < t->rank) ? ", " : "");
    snprintf(shape + off, sizeof shape - off, ")");
    char header[512];
    int hl = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
    if (hl < 0 || (size_t)hl >= sizeof header - 70) return tc__fail(err, TC_STATUS_INTERNAL, ".npy header too long");
    size_t total = 10 + (size_t)hl + 1;
    size_t pad = (64 - total % 64) % 64;
    memset(header + hl, ' ', pad);
    header[(size_t)hl + pad] = '\n';
    size_t hlen = (size_t)hl + pad + 1;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8)};
    FILE *f = fopen(path, "wb");
    if (f == NULL) return tc__fail(err, TC_STATUS_IO_ERROR, "cannot write '%s': %s", path, strerror(errno));
    bool ok = fwrite(pre, 1, 10, f) == 10 && fwrite(header, 1, hlen, f) == hlen &&
              (t->nbytes == 0 || fwrite(t->data, 1, t->nbytes, f) == t->nbytes);
    ok = (fclose(f) == 0) && ok;
    if (!ok) return tc__fail(err, TC_STATUS_IO_ERROR, "error writing '%s'", path);
    return TC_STATUS_OK;
}
