/*
 * import_external.c - reads a tensor's external data (TensorProto.data_location = EXTERNAL):
 * parses the location/offset/length entries, refuses paths that leave the model's folder, checks
 * the byte range against the file and the tensor's size, then preads the bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx/import_internal.h"

/* Thread-safe strerror (GNU or XSI strerror_r). */
static const char *errno_str(int e, char *buf, size_t n) {
#if defined(_GNU_SOURCE) && defined(__GLIBC__)
    return strerror_r(e, buf, n);
#else
    return strerror_r(e, buf, n) == 0 ? buf : "unknown error";
#endif
}

/* Parses a non-negative decimal integer (the whole string, at most INT64_MAX). */
static int parse_u63(const char *s, uint64_t *out) {
    if (s == NULL || *s == '\0') return -1;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return -1;
        if (v > (uint64_t)(INT64_MAX - (*s - '0')) / 10) return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

static bool is_sep(char c) { return c == '/' || c == '\\'; }

/* Refuses absolute paths and any ".." component (with either separator). */
static tc_status check_path(const char *loc, const char *what, tc__err *err) {
    bool drive = ((loc[0] >= 'A' && loc[0] <= 'Z') || (loc[0] >= 'a' && loc[0] <= 'z')) && loc[1] == ':';
    if (is_sep(loc[0]) || drive)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                        "%s: external data path '%s' is absolute; only paths relative to the model's folder are allowed",
                        what, loc);
    for (const char *p = loc; *p;) {
        const char *q = p;
        while (*q && !is_sep(*q)) q++;
        if (q - p == 2 && p[0] == '.' && p[1] == '.')
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                            "%s: external data path '%s' has a '..' component; it must stay inside the model's folder",
                            what, loc);
        p = *q ? q + 1 : q;
    }
    return TC_STATUS_OK;
}

/* The external_data entries that matter. */
typedef struct ext_info {
    const char *location;
    uint64_t offset, length;
    bool has_length;
} ext_info;

static tc_status parse_entries(const Onnx__TensorProto *tp, const char *what, ext_info *x, tc__err *err) {
    memset(x, 0, sizeof *x);
    bool seen_loc = false, seen_off = false;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const char *key = tc__onnx_str(tp->external_data[i]->key);
        const char *val = tc__onnx_str(tp->external_data[i]->value);
        bool *seen = NULL;
        if (strcmp(key, "location") == 0) {
            seen = &seen_loc;
            x->location = val;
        } else if (strcmp(key, "offset") == 0 || strcmp(key, "length") == 0) {
            bool is_off = key[0] == 'o';
            seen = is_off ? &seen_off : &x->has_length;
            if (parse_u63(val, is_off ? &x->offset : &x->length))
                return tc__fail(err, TC_STATUS_CORRUPT_FILE, "%s: external data %s '%s' is not a non-negative integer",
                                what, key, val);
        } else {
            continue; /* checksum and future keys are ignored */
        }
        if (*seen)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "%s: external data key '%s' appears twice", what, key);
        *seen = true;
    }
    if (x->location == NULL || x->location[0] == '\0')
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "%s: external data has no location", what);
    return TC_STATUS_OK;
}

/* Reads exactly n bytes at offset, retrying short reads. */
static tc_status read_all(int fd, void *dst, size_t n, uint64_t offset, const char *what, const char *path,
                          tc__err *err) {
    unsigned char *p = dst;
    while (n > 0) {
        size_t chunk = n > ((size_t)1 << 30) ? (size_t)1 << 30 : n;
        ssize_t r = pread(fd, p, chunk, (off_t)offset);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            char eb[128];
            return tc__fail(err, TC_STATUS_IO_ERROR, "%s: reading external data file '%s' failed: %s", what, path,
                            r < 0 ? errno_str(errno, eb, sizeof eb) : "unexpected end of file");
        }
        p += r;
        n -= (size_t)r;
        offset += (uint64_t)r;
    }
    return TC_STATUS_OK;
}

tc_status tc__onnx_external_read(const tc__onnx_tensor_ctx *ctx, const Onnx__TensorProto *tp, const char *what,
                                 size_t nbytes, void **dst, tc__err *err) {
    const char *base_dir = ctx->base_dir;
    ext_info x;
    tc_status st = parse_entries(tp, what, &x, err);
    if (st == TC_STATUS_OK) st = check_path(x.location, what, err);
    if (st != TC_STATUS_OK) return st;

    char path[4096];
    int w = snprintf(path, sizeof path, "%s/%s", base_dir != NULL && base_dir[0] != '\0' ? base_dir : ".",
                     x.location);
    if (w < 0 || (size_t)w >= sizeof path)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "%s: external data path '%s' is too long", what, x.location);

    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        char eb[128];
        return tc__fail(err, TC_STATUS_IO_ERROR, "%s: cannot open external data file '%s': %s", what, path,
                        errno_str(errno, eb, sizeof eb));
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return tc__fail(err, TC_STATUS_IO_ERROR, "%s: external data file '%s' is not a regular file", what, path);
    }
    const uint64_t fsize = (uint64_t)sb.st_size;
    if (x.offset > fsize) {
        close(fd);
        return tc__fail(err, TC_STATUS_CORRUPT_FILE,
                        "%s: external data offset %llu lies beyond the end of '%s' (%llu bytes)", what,
                        (unsigned long long)x.offset, path, (unsigned long long)fsize);
    }
    uint64_t length = x.has_length ? x.length : fsize - x.offset;
    if (length != (uint64_t)nbytes) {
        close(fd);
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "%s: external data length is %llu bytes, expected %zu", what,
                        (unsigned long long)length, nbytes);
    }
    if (length > fsize - x.offset) {
        close(fd);
        return tc__fail(err, TC_STATUS_CORRUPT_FILE,
                        "%s: external data range [%llu, %llu + %llu) lies beyond the end of '%s' (%llu bytes)", what,
                        (unsigned long long)x.offset, (unsigned long long)x.offset, (unsigned long long)length, path,
                        (unsigned long long)fsize);
    }
    /* Only now is the size known to be backed by the file: allocate and read. */
    st = tc__onnx_payload_alloc(ctx, nbytes, what, dst, err);
    if (st == TC_STATUS_OK) {
        st = read_all(fd, *dst, nbytes, x.offset, what, path, err);
        if (st != TC_STATUS_OK && ctx->arena == NULL) {
            free(*dst);
            *dst = NULL;
        }
    }
    close(fd);
    return st;
}
