/* trace.h - writes Chrome trace-event JSON ({"traceEvents": [...]}) that chrome://tracing and
 * Perfetto open: "X" complete events with timestamps and durations in microseconds. */
#ifndef TC_CLI_TRACE_H
#define TC_CLI_TRACE_H

#include <stdio.h>

typedef struct cli_trace {
    FILE *f;
    int n_events;
} cli_trace;

/* Writes s as a JSON string literal, quotes included, escaping what JSON requires (also used
 * by bench's --json). NULL is written as "". */
void cli_json_string(FILE *f, const char *s);

/* Creates path and writes the header. Returns 0, or -1 (errno set) when the file cannot be created. */
int cli_trace_open(cli_trace *t, const char *path);

/* Names the process (pid 1) or one of its threads (tid) in the viewer ("M" metadata events). */
void cli_trace_process_name(cli_trace *t, const char *name);
void cli_trace_thread_name(cli_trace *t, int tid, const char *name);

/* One complete ("X") event on thread tid of pid 1; ts_us and dur_us in microseconds.
 * args is NULL or n_args pairs of strings {key0, value0, key1, value1, ...}; strings are escaped. */
void cli_trace_complete(cli_trace *t, const char *name, const char *cat, int tid, double ts_us, double dur_us,
                        const char *const *args, int n_args);

/* Writes the trailer and closes the file. Returns 0, or -1 when any write failed. */
int cli_trace_close(cli_trace *t);

#endif
