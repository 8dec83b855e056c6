/* error.c - internal error recording and conversion to the public tc_error. */
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

tc_status tc__fail(tc__err *err, tc_status status, const char *fmt, ...) {
    if (err != NULL && err->status == TC_STATUS_OK) {
        err->status = status;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return status;
}

void tc__err_prefix(tc__err *err, const char *fmt, ...) {
    if (err == NULL) return;
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    char joined[sizeof err->msg];
    size_t np = strlen(prefix), nm = strlen(err->msg);
    if (np >= sizeof joined) np = sizeof joined - 1;
    if (nm > sizeof joined - 1 - np) nm = sizeof joined - 1 - np;
    memcpy(joined, prefix, np);
    memcpy(joined + np, err->msg, nm);
    joined[np + nm] = '\0';
    memcpy(err->msg, joined, np + nm + 1);
}

void tc__err_export(const tc__err *err, tc_error *out) {
    if (out == NULL) return;
    if (err == NULL || err->msg[0] == '\0') {
        snprintf(out->message, sizeof out->message, "%s",
                 tc_status_str(err ? err->status : TC_STATUS_INTERNAL));
        return;
    }
    snprintf(out->message, sizeof out->message, "%s", err->msg);
}
