/* trace.c - writes Chrome trace-event JSON ({"traceEvents": [...]}) that chrome://tracing and
 * Perfetto open: "X" complete events with timestamps and durations in microseconds. */
#include "trace.h"

#include <string.h>

void cli_json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20) fprintf(f, "\\u%04x", *p);
            else fputc(*p, f);
        }
    }
    fputc('"', f);
}

int cli_trace_open(cli_trace *t, const char *path) {
    memset(t, 0, sizeof *t);
    t->f = fopen(path, "w");
    if (t->f == NULL) return -1;
    fputs("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n", t->f);
    return 0;
}

static void begin_event(cli_trace *t) {
    if (t->n_events++) fputs(",\n", t->f);
}

static void metadata(cli_trace *t, const char *what, int tid, const char *name) {
    if (t->f == NULL) return;
    begin_event(t);
    fprintf(t->f, "{\"name\": \"%s\", \"ph\": \"M\", \"pid\": 1, \"tid\": %d, \"args\": {\"name\": ", what, tid);
    cli_json_string(t->f, name);
    fputs("}}", t->f);
}

void cli_trace_process_name(cli_trace *t, const char *name) { metadata(t, "process_name", 0, name); }

void cli_trace_thread_name(cli_trace *t, int tid, const char *name) { metadata(t, "thread_name", tid, name); }

void cli_trace_complete(cli_trace *t, const char *name, const char *cat, int tid, double ts_us, double dur_us,
                        const char *const *args, int n_args) {
    if (t->f == NULL) return;
    begin_event(t);
    fputs("{\"name\": ", t->f);
    cli_json_string(t->f, name);
    fputs(", \"cat\": ", t->f);
    cli_json_string(t->f, cat);
    fprintf(t->f, ", \"ph\": \"X\", \"pid\": 1, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f", tid, ts_us,
            dur_us < 0 ? 0.0 : dur_us);
    if (args != NULL && n_args > 0) {
        fputs(", \"args\": {", t->f);
        for (int k = 0; k < n_args; k++) {
            if (k) fputs(", ", t->f);
            cli_json_string(t->f, args[2 * k]);
            fputs(": ", t->f);
            cli_json_string(t->f, args[2 * k + 1]);
        }
        fputc('}', t->f);
    }
    fputc('}', t->f);
}

int cli_trace_close(cli_trace *t) {
    if (t->f == NULL) return -1;
    fputs("\n]}\n", t->f);
    int bad = ferror(t->f) != 0;
    if (fclose(t->f) != 0) bad = 1;
    t->f = NULL;
    return bad ? -1 : 0;
}
