/* reason.c - the per-thread "why a model could not be loaded" message (see reason.h). */
#include "reason.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char reason[SRV_REASON_MAX];

int srv_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    return 1;
}

const char *srv_fail_reason(void) { return reason; }

void srv_fail_clear(void) { reason[0] = '\0'; }
