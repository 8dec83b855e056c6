/* cmd_bench.c - `tailcut bench MODEL.{onnx,plan}`: runs one context on seeded random inputs and
 * reports latency percentiles (nearest rank), mean, throughput and load time; optionally a
 * per-step profile (--profile), a JSON summary (--json) and a Chrome trace (--trace). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_inputs.h"
#include "cli.h"
#include "engine_open.h"
#include "stats.h"
#include "tailcut/tailcut.h"
#include "trace.h"

#define TRACE_STEP_RUNS 20  /* runs whose steps go into the trace (the last ones) */
#define PROFILE_TOP 25      /* rows of the printed per-step table */
#define MAX_SAMPLES 4000000 /* bound of the sample buffers of a --duration run */

typedef struct bench_args {
    const char *model, *json, *trace;
    long iterations, warmup, idle_ms;
    bool iterations_given, profile;
    double duration_s;
    uint64_t seed;
    cli_build_args build;
} bench_args;

/* What one benchmark measured; the arrays are allocated before the timed loop. */
typedef struct bench_result {
    size_t n, cap;
    double *ms;       /* run durations, in run order */
    double *start_us; /* run start times relative to the first timed run */
    int n_steps;
    uint64_t *step_sum_ns;  /* per step, summed over all timed runs (profiling) */
    uint64_t *step_last_ns; /* ring of TRACE_STEP_RUNS rows of n_steps (tracing) */
    uint64_t *step_now;     /* scratch row for tc_context_step_times */
    bool buffer_full;
} bench_result;

static void usage(FILE *f) {
    fprintf(f,
            "usage: tailcut bench MODEL.{onnx,plan} [options]\n"
            "  --iterations N     timed runs (default 200)\n"
            "  --warmup N         untimed runs first (default 10)\n"
            "  --duration S       run for S seconds instead of a fixed count (--iterations, if given, caps it)\n"
            "  --idle-ms N        sleep N ms between runs, outside the timed region (cold caches, idle cores)\n"
            "  --seed N           seed of the random inputs (default 0)\n"
            "  --profile          per-step times (step name, ops, tactic, mean ms, %% of total)\n"
            "  --json FILE        write samples, p50_ms, p90_ms, p99_ms, p999_ms, mean_ms, min_ms, max_ms,\n"
            "                     throughput_per_s, load_ms, build_ms, cv (a fraction) and steps (the profile)\n"
            "  --trace FILE       Chrome trace-event JSON (chrome://tracing, ui.perfetto.dev): every run and,\n"
            "                     profiling implied, the steps of the last %d runs\n"
            "Inputs take the opt shapes of the engine's first profile and are filled with seeded random\n"
            "non-zero data: floats ~N(0,1), integer ids in [1,100) (names with 'mask'/'token_type': 1), bools true.\n"
            "load_ms is tc_engine_load + tc_context_create for a plan; for an .onnx it is tc_context_create and\n"
            "build_ms is the import + tc_engine_build time. A P99 needs at least 1000 samples.\n"
            "build options for an .onnx (default: --batch 1):\n%s",
            TRACE_STEP_RUNS, cli_build_usage());
}

static int parse_long(const char *opt, const char *val, long lo, long *out) {
    char *end;
    errno = 0;
    long v = strtol(val, &end, 10);
    if (end == val || *end || errno || v < lo) {
        fprintf(stderr, "tailcut bench: %s needs an integer >= %ld, got '%s'\n", opt, lo, val);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse(int argc, char **argv, bench_args *a) {
    memset(a, 0, sizeof *a);
    a->iterations = 200;
    a->warmup = 10;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        int b = cli_build_arg(&a->build, argc, argv, &i, "bench");
        if (b < 0) return 2;
        if (b > 0) continue;
        if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
            usage(stdout);
            return -1;
        }
        if (strcmp(o, "--profile") == 0) {
            a->profile = true;
            continue;
        }
        if (o[0] != '-') {
            if (a->model != NULL) {
                fprintf(stderr, "tailcut bench: unexpected argument '%s'\n", o);
                return 2;
            }
            a->model = o;
            continue;
        }
        static const char *const valued[] = {"--iterations", "--warmup", "--duration", "--idle-ms",
                                             "--json",       "--trace",  "--seed"};
        bool known = false;
        for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++) known |= strcmp(o, valued[k]) == 0;
        if (!known) {
            fprintf(stderr, "tailcut bench: unknown option '%s'\n", o);
            usage(stderr);
            return 2;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "tailcut bench: %s needs a value\n", o);
            return 2;
        }
        const char *v = argv[++i];
        long n = 0;
        if (strcmp(o, "--json") == 0) {
            a->json = v;
        } else if (strcmp(o, "--trace") == 0) {
            a->trace = v;
        } else if (strcmp(o, "--duration") == 0) {
            char *end;
            errno = 0;
            a->duration_s = strtod(v, &end);
            if (end == v || *end || errno || !(a->duration_s > 0) || a->duration_s > 86400) {
                fprintf(stderr, "tailcut bench: --duration needs seconds in (0, 86400], got '%s'\n", v);
                return 2;
            }
        } else if (parse_long(o, v, strcmp(o, "--iterations") == 0 ? 1 : 0, &n)) {
            return 2;
        } else if (strcmp(o, "--iterations") == 0) {
            a->iterations = n;
            a->iterations_given = true;
        } else if (strcmp(o, "--warmup") == 0) {
            a->warmup = n;
        } else if (strcmp(o, "--idle-ms") == 0) {
            a->idle_ms = n;
        } else {
            a->seed = (uint64_t)n;
        }
    }
    if (a->model == NULL) {
        usage(stderr);
        return 2;
    }
    if (a->iterations > MAX_SAMPLES) {
        fprintf(stderr, "tailcut bench: --iterations is at most %d\n", MAX_SAMPLES);
        return 2;
    }
    return 0;
}

static double ms_between(const struct timespec *a, const struct timespec *b) {
    return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

static void sleep_ms(long ms) {
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Size of the sample buffers: the iteration count, or for --duration an estimate from the
 * fastest warm-up run with room to spare (bounded; the run stops early when it is full). */
static size_t sample_capacity(const bench_args *a, double fastest_warmup_ms) {
    if (a->duration_s <= 0) return (size_t)a->iterations;
    if (a->iterations_given) return (size_t)a->iterations;
    if (fastest_warmup_ms <= 0) return MAX_SAMPLES / 4; /* no warm-up to estimate from */
    double per_run = fastest_warmup_ms + (a->idle_ms > 0 ? (double)a->idle_ms : 0.0);
    double est = a->duration_s * 1e3 / per_run * 1.5 + 100;
    return est > MAX_SAMPLES ? MAX_SAMPLES : (size_t)est;
}

static int alloc_result(bench_result *r, size_t cap, int n_steps, bool steps) {
    memset(r, 0, sizeof *r);
    r->cap = cap;
    r->n_steps = n_steps;
    r->ms = malloc(cap * sizeof *r->ms);
    r->start_us = malloc(cap * sizeof *r->start_us);
    if (r->ms == NULL || r->start_us == NULL) return -1;
    if (steps && n_steps > 0) {
        r->step_sum_ns = calloc((size_t)n_steps, sizeof(uint64_t));
        r->step_now = calloc((size_t)n_steps, sizeof(uint64_t));
        r->step_last_ns = calloc((size_t)n_steps * TRACE_STEP_RUNS, sizeof(uint64_t));
        if (r->step_sum_ns == NULL || r->step_now == NULL || r->step_last_ns == NULL) return -1;
    }
    return 0;
}

static void free_result(bench_result *r) {
    free(r->ms);
    free(r->start_us);
    free(r->step_sum_ns);
    free(r->step_now);
    free(r->step_last_ns);
}

/* Warm-up runs (untimed for the report); returns the fastest, or -1 on a failed run. */
static double warm_up(tc_context *c, long runs) {
    double fastest = 0;
    for (long k = 0; k < runs; k++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        if (tc_context_run(c) != TC_STATUS_OK) return -1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ms = ms_between(&t0, &t1);
        if (k == 0 || ms < fastest) fastest = ms;
    }
    return fastest;
}

/* The timed loop. Everything it touches was allocated before; it allocates nothing. */
static int timed_runs(tc_context *c, const bench_args *a, bench_result *r) {
    struct timespec origin, deadline = {0, 0}, t0, t1;
    bool profiling = r->step_sum_ns != NULL;
    clock_gettime(CLOCK_MONOTONIC, &origin);
    if (a->duration_s > 0) {
        double end_s = (double)origin.tv_sec + (double)origin.tv_nsec / 1e9 + a->duration_s;
        deadline.tv_sec = (time_t)end_s;
        deadline.tv_nsec = (long)((end_s - (double)deadline.tv_sec) * 1e9);
    }
    bool first = true;
    for (r->n = 0; r->n < r->cap;) {
        if (a->idle_ms > 0) sleep_ms(a->idle_ms);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        tc_status st = tc_context_run(c);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (st != TC_STATUS_OK) return -1;
        if (first) origin = t0, first = false;
        r->ms[r->n] = ms_between(&t0, &t1);
        r->start_us[r->n] = ms_between(&origin, &t0) * 1e3;
        if (profiling) {
            tc_context_step_times(c, r->step_now, r->n_steps);
            uint64_t *row = r->step_last_ns + (r->n % TRACE_STEP_RUNS) * (size_t)r->n_steps;
            for (int s = 0; s < r->n_steps; s++) {
                r->step_sum_ns[s] += r->step_now[s];
                row[s] = r->step_now[s];
            }
        }
        r->n++;
        if (a->duration_s > 0 &&
            (t1.tv_sec > deadline.tv_sec || (t1.tv_sec == deadline.tv_sec && t1.tv_nsec >= deadline.tv_nsec)))
            return 0;
    }
    r->buffer_full = a->duration_s > 0 && !a->iterations_given;
    return 0;
}

/* Compute steps in decreasing order of total time (steps evaluated at reshape are left out). */
static int sorted_steps(const tc_engine *e, const bench_result *r, int *order) {
    int n = 0;
    for (int s = 0; s < r->n_steps; s++) {
        tc_step_info info;
        if (tc_engine_step_info(e, s, &info) == TC_STATUS_OK && info.runs_at_reshape) continue;
        order[n++] = s;
    }
    for (int i = 1; i < n; i++) /* insertion sort: stable, and step counts are small */
        for (int j = i; j > 0 && r->step_sum_ns[order[j]] > r->step_sum_ns[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    return n;
}

/* The last width-3 characters of long names behind "...": the end of an ONNX node name
 * ("/layer.0/attention/self/Transpose_1") tells steps apart, its start rarely does. */
static const char *name_tail(const char *name, int width, char *buf, size_t size) {
    size_t len = name ? strlen(name) : 0;
    if (name == NULL) return "?";
    if (len <= (size_t)width) return name;
    snprintf(buf, size, "...%s", name + len - (size_t)(width - 3));
    return buf;
}

static void print_profile(const tc_engine *e, const bench_result *r, const int *order, int n, double mean_ms) {
    uint64_t total = 0;
    for (int i = 0; i < n; i++) total += r->step_sum_ns[order[i]];
    double runs = (double)r->n, total_ms = (double)total / 1e6 / runs;
    printf("\nper-step profile (mean over %zu runs; profiling adds two clock reads per step to each run):\n", r->n);
    printf("  %9s %6s  %-48s %-36s %s\n", "mean ms", "%", "step", "ops", "tactic");
    double shown = 0;
    for (int i = 0; i < n && i < PROFILE_TOP; i++) {
        tc_step_info info;
        memset(&info, 0, sizeof info);
        tc_engine_step_info(e, order[i], &info);
        double ms = (double)r->step_sum_ns[order[i]] / 1e6 / runs;
        shown += ms;
        char buf[64];
        printf("  %9.4f %6.2f  %-48s %-36.36s %s\n", ms, total ? 100.0 * ms / total_ms : 0.0,
               name_tail(info.name, 48, buf, sizeof buf), info.ops ? info.ops : "?", info.tactic ? info.tactic : "?");
    }
    if (n > PROFILE_TOP)
        printf("  %9.4f %6.2f  (%d more steps)\n", total_ms - shown, total ? 100.0 * (total_ms - shown) / total_ms : 0.0,
               n - PROFILE_TOP);
    printf("  %9.4f %6.2f  total of %d steps (mean run %.4f ms; the rest is run overhead)\n", total_ms, 100.0, n,
           mean_ms);
}

/* Returns 0, or 1 when the file could not be written (reason printed). */
static int write_trace(const char *path, const tc_engine *e, const bench_result *r, const char *model) {
    cli_trace t;
    if (cli_trace_open(&t, path) != 0) {
        fprintf(stderr, "tailcut bench: cannot create '%s': %s\n", path, strerror(errno));
        return 1;
    }
    char title[512];
    snprintf(title, sizeof title, "tailcut bench %s", model);
    cli_trace_process_name(&t, title);
    cli_trace_thread_name(&t, 1, "tc_context_run");
    char label[64];
    for (size_t k = 0; k < r->n; k++) {
        snprintf(label, sizeof label, "run %zu", k);
        cli_trace_complete(&t, label, "run", 1, r->start_us[k], r->ms[k] * 1e3, NULL, 0);
    }
    /* Steps of the last runs, laid back to back from the run's start (the context reports each
     * step's duration, not its start, so gaps between steps show at the end of the run). */
    size_t first = r->n > TRACE_STEP_RUNS ? r->n - TRACE_STEP_RUNS : 0;
    for (size_t k = first; r->step_last_ns != NULL && k < r->n; k++) {
        const uint64_t *row = r->step_last_ns + (k % TRACE_STEP_RUNS) * (size_t)r->n_steps;
        double ts = r->start_us[k];
        for (int s = 0; s < r->n_steps; s++) {
            tc_step_info info;
            memset(&info, 0, sizeof info);
            if (tc_engine_step_info(e, s, &info) != TC_STATUS_OK || info.runs_at_reshape) continue;
            const char *args[] = {"ops", info.ops, "tactic", info.tactic, "precision", info.precision};
            double dur = (double)row[s] / 1e3;
            cli_trace_complete(&t, info.name, "step", 1, ts, dur, args, 3);
            ts += dur;
        }
    }
    if (cli_trace_close(&t) != 0) {
        fprintf(stderr, "tailcut bench: writing '%s' failed\n", path);
        return 1;
    }
    printf("trace: %s (%zu runs, steps of the last %zu)\n", path, r->n, r->step_last_ns ? r->n - first : 0);
    return 0;
}

typedef struct bench_report {
    cli_stats st;
    double throughput, load_ms, build_ms;
    int64_t batch;
    bool built;
    int threads;               /* the context's */
    int profile;               /* the engine profile it ran in */
    const cli_input_buf *in;   /* the inputs, with the shapes they ran at */
    int n_in;
    tc_cpu_budget_info budget; /* the process's CPU budget */
} bench_report;

/* Returns 0, or 1 when the file could not be written (reason printed). */
static int write_json(const char *path, const bench_args *a, const bench_report *rep, const tc_engine *e,
                       const bench_result *r, const int *order, int n_order) {
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "tailcut bench: cannot create '%s': %s\n", path, strerror(errno));
        return 1;
    }
    const cli_stats *s = &rep->st;
    fputs("{\n  \"model\": ", f);
    cli_json_string(f, a->model);
    fprintf(f,
            ",\n  \"batch\": %lld,\n  \"threads\": %d,\n  \"warmup\": %ld,\n  \"samples\": %zu,\n"
            "  \"p50_ms\": %.6f,\n  \"p90_ms\": %.6f,\n  \"p99_ms\": %.6f,\n  \"p999_ms\": %.6f,\n"
            "  \"mean_ms\": %.6f,\n  \"min_ms\": %.6f,\n  \"max_ms\": %.6f,\n  \"throughput_per_s\": %.3f,\n"
            "  \"load_ms\": %.3f,\n",
            (long long)rep->batch, rep->threads, a->warmup, s->n, s->p50, s->p90, s->p99, s->p999, s->mean, s->min,
            s->max, rep->throughput, rep->load_ms);
    fprintf(f, "  \"cpu_budget\": %d,\n  \"cpu_budget_source\": \"%s\",\n", rep->budget.cpus, rep->budget.source);
    fprintf(f, "  \"profile\": %d,\n  \"shapes\": {", rep->profile);
    for (int k = 0; k < rep->n_in; k++) {
        fputs(k ? ", " : "", f);
        cli_json_string(f, rep->in[k].name);
        fputs(": [", f);
        for (int32_t d = 0; d < rep->in[k].rank; d++) fprintf(f, "%s%lld", d ? ", " : "", (long long)rep->in[k].dims[d]);
        fputs("]", f);
    }
    fputs("},\n", f);
    if (rep->built) fprintf(f, "  \"build_ms\": %.3f,\n", rep->build_ms);
    else fputs("  \"build_ms\": null,\n", f);
    fprintf(f, "  \"cv\": %.6f,\n  \"steps\": [", s->cv);
    uint64_t total = 0;
    for (int i = 0; r->step_sum_ns && i < n_order; i++) total += r->step_sum_ns[order[i]];
    for (int i = 0; r->step_sum_ns && i < n_order; i++) {
        tc_step_info info;
        memset(&info, 0, sizeof info);
        tc_engine_step_info(e, order[i], &info);
        double ms = (double)r->step_sum_ns[order[i]] / 1e6 / (double)r->n;
        fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
        cli_json_string(f, info.name);
        fputs(", \"ops\": ", f);
        cli_json_string(f, info.ops);
        fputs(", \"tactic\": ", f);
        cli_json_string(f, info.tactic);
        fputs(", \"precision\": ", f);
        cli_json_string(f, info.precision);
        fprintf(f, ", \"mean_ms\": %.6f, \"percent\": %.3f}", ms,
                total ? 100.0 * (double)r->step_sum_ns[order[i]] / (double)total : 0.0);
    }
    fputs(n_order && r->step_sum_ns ? "\n  ]\n}\n" : "]\n}\n", f);
    if (ferror(f) | fclose(f)) {
        fprintf(stderr, "tailcut bench: writing '%s' failed\n", path);
        return 1;
    }
    printf("json: %s\n", path);
    return 0;
}

static void print_report(const bench_args *a, const bench_report *rep, const bench_result *r) {
    const cli_stats *s = &rep->st;
    printf("\nsamples: %zu%s\n", s->n,
           r->buffer_full ? " (the sample buffer filled before --duration ended)" : "");
    printf("latency (ms): P50 %.4f  P90 %.4f  P99 %.4f  P99.9 %.4f  mean %.4f  min %.4f  max %.4f\n", s->p50, s->p90,
           s->p99, s->p999, s->mean, s->min, s->max);
    if (s->n < 1000)
        printf("note: %zu samples < 1000: P99 and P99.9 are not meaningful (P99.9 is the max here)\n", s->n);
    else if (s->n < 10000)
        printf("note: P99.9 of %zu samples rests on its top %zu samples\n", s->n, s->n - (s->n * 999 + 999) / 1000 + 1);
    printf("throughput: %.2f inferences/s (batch %lld / mean)\n", rep->throughput, (long long)rep->batch);
    char quota[32] = "none";
    if (rep->budget.cgroup_quota > 0) snprintf(quota, sizeof quota, "%.2f CPUs", rep->budget.cgroup_quota);
    printf("threads: %d (CPU budget %d from %s: %d online, %d in the affinity mask, cgroup quota %s)\n", rep->threads,
           rep->budget.cpus, rep->budget.source, rep->budget.online, rep->budget.affinity, quota);
    printf("spread: stddev %.4f ms, CV %.1f%%\n", s->stddev, 100.0 * s->cv);
    if (s->cv > 0.05) printf("warning: CV %.1f%% > 5%%: the machine is noisy; quote medians\n", 100.0 * s->cv);
    if (a->idle_ms > 0) printf("note: %ld ms idle between runs (not timed)\n", a->idle_ms);
}

static int bench(const bench_args *a) {
    bool plan = cli_is_plan(a->model);
    cli_build_args build = a->build;
    if (!plan && build.n_min == 0 && build.batch == 0) build.batch = 1;
    if (plan && a->build.threads > 0)
        fprintf(stderr, "tailcut bench: note: a plan runs with the thread count it was built with\n");
    tc_engine *e = NULL;
    double open_ms = 0, create_ms;
    int rc = cli_open_engine(a->model, &build, "bench", &e, &open_ms);
    if (rc) return rc;
    /* On a plan, --shapes are run-time shapes: the profile that holds them (or --profile-index N) runs them. */
    static char shapes_buf[4096];
    cli_shapes shapes = {0};
    int profile = build.profile_index > 0 ? build.profile_index - 1 : 0;
    if (plan && (a->build.shapes_given || build.profile_index > 0)) {
        if (a->build.shapes_given && cli_shapes_parse(a->build.min[0], shapes_buf, sizeof shapes_buf, &shapes, "bench")) {
            tc_engine_destroy(e);
            return 2;
        }
        profile = cli_select_profile(e, &shapes, build.profile_index - 1, "bench");
        if (profile < 0) {
            tc_engine_destroy(e);
            return 1;
        }
    }
    tc_context *c = NULL;
    tc_error err;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (tc_context_create(e, profile, &c, &err) != TC_STATUS_OK) {
        fprintf(stderr, "tailcut bench: %s\n", err.message);
        tc_engine_destroy(e);
        return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    create_ms = ms_between(&t0, &t1);

    cli_input_buf *in = NULL;
    int n_in = 0;
    bench_result r;
    memset(&r, 0, sizeof r);
    int *order = NULL;
    rc = 1;
    if (cli_inputs_prepare(e, profile, shapes.n ? &shapes : NULL, a->seed, "bench", &in, &n_in)) goto done;
    bench_report rep = {.built = !plan, .batch = 1, .threads = tc_context_threads(c), .profile = profile, .in = in,
                        .n_in = n_in};
    tc_cpu_budget(&rep.budget);
    rep.load_ms = plan ? open_ms + create_ms : create_ms;
    rep.build_ms = plan ? 0 : open_ms;
    printf("model: %s (%s, engine of %d steps)\n", a->model, plan ? "plan" : "built in memory", tc_engine_num_steps(e));
    for (int k = 0; k < n_in; k++) {
        char desc[512];
        cli_input_describe(&in[k], desc, sizeof desc);
        printf("input: %s, %s (seed %llu)\n", desc, in[k].fill, (unsigned long long)a->seed);
        if (k == 0 && in[k].rank > 0) rep.batch = build.batch > 0 ? build.batch : in[k].dims[0];
        if (tc_context_set_input_shape(c, in[k].name, in[k].rank, in[k].dims) != TC_STATUS_OK ||
            tc_context_set_tensor(c, in[k].name, in[k].data, in[k].bytes) != TC_STATUS_OK) {
            fprintf(stderr, "tailcut bench: %s\n", tc_context_error(c)); /* names the input */
            goto done;
        }
    }
    if (plan) printf("load: %.2f ms (tc_engine_load %.2f + tc_context_create %.2f)\n", rep.load_ms, open_ms, create_ms);
    else printf("build: %.1f ms (import + tc_engine_build); tc_context_create: %.2f ms\n", open_ms, create_ms);

    bool steps = a->profile || a->trace != NULL;
    if (steps && tc_context_set_profiling(c, 1) != TC_STATUS_OK) {
        fprintf(stderr, "tailcut bench: cannot enable profiling: %s\n", tc_context_error(c));
        goto done;
    }
    double fastest = warm_up(c, a->warmup);
    if (fastest < 0) {
        fprintf(stderr, "tailcut bench: warm-up run failed: %s\n", tc_context_error(c));
        goto done;
    }
    size_t cap = sample_capacity(a, fastest);
    int n_steps = tc_engine_num_steps(e);
    order = malloc(sizeof(int) * (size_t)(n_steps > 0 ? n_steps : 1));
    if (order == NULL || alloc_result(&r, cap, n_steps, steps) != 0) {
        fprintf(stderr, "tailcut bench: out of memory for %zu samples\n", cap);
        goto done;
    }
    if (a->duration_s > 0) printf("running for %.1f s (at most %zu runs) ...\n", a->duration_s, cap);
    else printf("running %zu timed runs after %ld warm-up runs ...\n", cap, a->warmup);
    fflush(stdout);
    if (timed_runs(c, a, &r) != 0) {
        fprintf(stderr, "tailcut bench: run %zu failed: %s\n", r.n, tc_context_error(c));
        goto done;
    }
    int out_rc = a->trace ? write_trace(a->trace, e, &r, a->model) : 0; /* needs the samples in run order */
    double *sorted = malloc(r.n * sizeof *sorted);
    if (sorted == NULL) {
        fprintf(stderr, "tailcut bench: out of memory\n");
        goto done;
    }
    memcpy(sorted, r.ms, r.n * sizeof *sorted);
    cli_stats_compute(sorted, r.n, &rep.st);
    free(sorted);
    rep.throughput = rep.st.mean > 0 ? (double)rep.batch * 1e3 / rep.st.mean : 0.0;
    print_report(a, &rep, &r);
    int n_order = steps ? sorted_steps(e, &r, order) : 0;
    if (a->profile) print_profile(e, &r, order, n_order, rep.st.mean);
    if (a->json) out_rc |= write_json(a->json, a, &rep, e, &r, order, a->profile ? n_order : 0);
    rc = out_rc;
done:
    free(order);
    free_result(&r);
    cli_inputs_free(in, n_in);
    tc_context_destroy(c);
    tc_engine_destroy(e);
    return rc;
}

int tc_cli_bench(int argc, char **argv) {
    bench_args a;
    int rc = parse(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    return bench(&a);
}
