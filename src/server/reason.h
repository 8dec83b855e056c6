/* reason.h - why a model could not be loaded: the loading code records one message (printf-style) instead of
 * printing it, and the repository keeps it as the model's UNAVAILABLE reason and logs it once with the model's
 * name. The message is per thread, so loads on different HTTP threads do not mix their reasons. */
#ifndef TC_SERVER_REASON_H
#define TC_SERVER_REASON_H

#define SRV_REASON_MAX 1024

/* Records the reason (replacing an earlier one on this thread) and returns 1, so `return srv_fail(...)` works. */
int srv_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The last reason recorded on this thread ("" when none). Valid until the next srv_fail / srv_fail_clear. */
const char *srv_fail_reason(void);
void srv_fail_clear(void);

#endif
