/* file.c - whole-file reading with a size limit. */
#include "core/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

tc_status tc__read_file(const char *path, size_t max_size, void **data, size_t *size, tc__err *err) {
    *data = NULL;
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL) return tc__fail(err, TC_STATUS_IO_ERROR, "cannot open '%s': %s", path, strerror(errno));
    struct stat stt;
    if (fstat(fileno(f), &stt) != 0 || !S_ISREG(stt.st_mode)) {
        fclose(f);
        return tc__fail(err, TC_STATUS_IO_ERROR, "'%s' is not a regular file", path);
    }
    if (stt.st_size < 0 || (unsigned long long)stt.st_size > max_size) {
        fclose(f);
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "'%s' is too large (%lld bytes, limit %zu)", path,
                        (long long)stt.st_size, max_size);
    }
    size_t n = (size_t)stt.st_size;
    void *buf = malloc(n ? n : 1);
    if (buf == NULL) {
        fclose(f);
        return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory reading '%s' (%zu bytes)", path, n);
    }
    if (n && fread(buf, 1, n, f) != n) {
        fclose(f);
        free(buf);
        return tc__fail(err, TC_STATUS_IO_ERROR, "short read from '%s'", path);
    }
    fclose(f);
    *data = buf;
    *size = n;
    return TC_STATUS_OK;
}
