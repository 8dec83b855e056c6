/*
 * error.h - internal error reporting: a status plus a formatted reason.
 *
 * Internal functions take a tc__err* and return tc_status; tc__fail() records
 * the first reason and returns its status so callers can write
 * `return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "node '%s': ...", name);`.
 */
#ifndef TC_CORE_ERROR_H
#define TC_CORE_ERROR_H

#include "tailcut/tailcut.h"

typedef struct tc__err {
    tc_status status;
    char msg[1024];
} tc__err;

/* Records status and a printf-style reason in err (NULL-safe) and returns status. */
tc_status tc__fail(tc__err *err, tc_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepends a printf-style context ("node 'x' (Conv): ") to the recorded reason. */
void tc__err_prefix(tc__err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Copies the reason into a public tc_error (NULL-safe). */
void tc__err_export(const tc__err *err, tc_error *out);

/* Checked arithmetic on sizes: return 0 on success, -1 on overflow. */
static inline int tc__mul_overflow_i64(int64_t a, int64_t b, int64_t *r) {
    return __builtin_mul_overflow(a, b, r) ? -1 : 0;
}
static inline int tc__add_overflow_i64(int64_t a, int64_t b, int64_t *r) {
    return __builtin_add_overflow(a, b, r) ? -1 : 0;
}
static inline int tc__mul_overflow_size(size_t a, size_t b, size_t *r) {
    return __builtin_mul_overflow(a, b, r) ? -1 : 0;
}

#endif
