/* tactic.c - a refusing tactic's reason (tactic.h tc__refuse). */
#include <stdarg.h>
#include <stdio.h>

#include "backends/tactic.h"

bool tc__refuse(const tc__step_desc *d, const char *fmt, ...) {
    if (d == NULL || d->why == NULL || d->why_size == 0 || d->why[0] != '\0') return false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->why, d->why_size, fmt, ap);
    va_end(ap);
    return false;
}
