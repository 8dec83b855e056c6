/* progress.c - progress lines and bars on standard error for long CLI work (see progress.h). */
#include "progress.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define BAR_WIDTH 24
#define TTY_REDRAW_S 0.1
#define TICK_NS 100000000L

struct cli_progress {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool has_thread, stop;
    bool tty;            /* stderr is a terminal: a bar */
    double interval;     /* plain mode: seconds between lines (0: every update) */
    double first_delay;  /* plain mode: seconds before the first line */
    char cmd[32], what[64], item[160];
    int total, done;
    double t_start, t_stage, t_last; /* t_last: the last line or bar (< 0: none yet) */
    bool bar_drawn;
};

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* "7s", "1m18s", "2h05m". */
static void fmt_duration(char *buf, size_t size, double s) {
    if (!(s >= 0.0)) s = 0.0;
    if (s > 359999.0) s = 359999.0;
    long t = (long)(s + 0.5);
    if (t < 60) snprintf(buf, size, "%lds", t);
    else if (t < 3600) snprintf(buf, size, "%ldm%02lds", t / 60, t % 60);
    else snprintf(buf, size, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
}

/* ", 6.2/s, ETA 1m18s" from the stage's count so far (nothing before the first item is done). */
static void fmt_rate(const cli_progress *p, double t, char *buf, size_t size) {
    buf[0] = '\0';
    const double dt = t - p->t_stage;
    if (p->total <= 0 || p->done <= 0 || dt <= 0.0) return;
    const double rate = (double)p->done / dt;
    char eta[32];
    fmt_duration(eta, sizeof eta, (double)(p->total - p->done) / rate);
    snprintf(buf, size, rate >= 1.0 ? ", %.1f/s, ETA %s" : ", %.2f/s, ETA %s", rate, eta);
}

static int term_width(void) {
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
    return 80;
}

/* Writes the current state: a plain line, or the terminal's bar redrawn in place. Called with mu held. */
static void emit(cli_progress *p, double t) {
    char rate[64], elapsed[32], line[512];
    fmt_rate(p, t, rate, sizeof rate);
    fmt_duration(elapsed, sizeof elapsed, t - p->t_start);
    const char *sep = p->item[0] ? " (" : "", *end = p->item[0] ? ")" : "";
    if (!p->tty) {
        if (p->total > 0)
            snprintf(line, sizeof line, "tailcut %s: %s %d/%d%s%s%s%s, %s elapsed\n", p->cmd, p->what, p->done, p->total,
                     sep, p->item, end, rate, elapsed);
        else
            snprintf(line, sizeof line, "tailcut %s: %s%s%s%s, %s elapsed\n", p->cmd, p->what, sep, p->item, end,
                     elapsed);
        fputs(line, stderr);
    } else {
        char bar[BAR_WIDTH + 1];
        int fill = p->total > 0 ? (int)((long long)BAR_WIDTH * p->done / p->total) : 0;
        for (int i = 0; i < BAR_WIDTH; i++) bar[i] = i < fill ? '#' : '.';
        bar[BAR_WIDTH] = '\0';
        if (p->total > 0)
            snprintf(line, sizeof line, "tailcut %s: [%s] %d/%d %s%s, %s%s%s", p->cmd, bar, p->done, p->total, p->what,
                     rate, elapsed, sep, p->item);
        else
            snprintf(line, sizeof line, "tailcut %s: %s, %s%s%s", p->cmd, p->what, elapsed, sep, p->item);
        const int w = term_width() - 1; /* a full-width line would wrap on some terminals */
        if ((int)strlen(line) > w) line[w] = '\0';
        fprintf(stderr, "\r\033[K%s", line);
        p->bar_drawn = true;
    }
    fflush(stderr);
    p->t_last = t;
}

static bool due(const cli_progress *p, double t) {
    if (p->what[0] == '\0') return false;
    if (p->tty) return p->t_last < 0.0 || t - p->t_last >= TTY_REDRAW_S;
    if (p->t_last < 0.0) return t - p->t_start >= p->first_delay;
    return t - p->t_last >= p->interval;
}

static void *ticker(void *arg) {
    cli_progress *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += TICK_NS;
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&p->cv, &p->mu, &ts);
        const double t = now_s();
        if (!p->stop && due(p, t)) emit(p, t);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Seconds between plain lines: TAILCUT_PROGRESS_INTERVAL (a number of seconds in [0, 3600]) or 5 (unset or empty).
 * Any other value is ignored with a warning on stderr, printed once per process however many reports start. */
static double progress_interval(void) {
    static atomic_flag warned = ATOMIC_FLAG_INIT;
    const char *env = getenv("TAILCUT_PROGRESS_INTERVAL");
    if (env == NULL || env[0] == '\0') return 5.0; /* unset or empty: the default */
    char *e = NULL;
    const double v = strtod(env, &e);
    if (e != env && *e == '\0' && v >= 0.0 && v <= 3600.0) return v;
    if (!atomic_flag_test_and_set(&warned))
        fprintf(stderr,
                "tailcut: warning: TAILCUT_PROGRESS_INTERVAL='%.64s' is not a number of seconds from 0 to 3600; "
                "using the default, 5\n", env);
    return 5.0;
}

cli_progress *cli_progress_start(const char *cmd, bool quiet) {
    if (quiet) return NULL;
    cli_progress *p = calloc(1, sizeof *p);
    if (p == NULL) return NULL;
    p->tty = isatty(STDERR_FILENO) == 1;
    p->interval = progress_interval();
    p->first_delay = p->interval < 1.0 ? p->interval : 1.0;
    snprintf(p->cmd, sizeof p->cmd, "%s", cmd ? cmd : "");
    p->t_start = p->t_stage = now_s();
    p->t_last = -1.0;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    /* A line at every update needs no clock; otherwise the ticker keeps lines coming while one item runs long. */
    if (p->tty || p->interval > 0.0) p->has_thread = pthread_create(&p->thread, NULL, ticker, p) == 0;
    return p;
}

void cli_progress_stage(cli_progress *p, const char *what, int total) {
    if (p == NULL) return;
    pthread_mutex_lock(&p->mu);
    snprintf(p->what, sizeof p->what, "%s", what ? what : "");
    p->item[0] = '\0';
    p->total = total > 0 ? total : 0;
    p->done = 0;
    p->t_stage = now_s();
    if (!p->tty && p->interval == 0.0 && p->total == 0) emit(p, p->t_stage); /* a counted stage shows at its set */
    pthread_mutex_unlock(&p->mu);
}

void cli_progress_set(cli_progress *p, int done, const char *item) {
    if (p == NULL) return;
    pthread_mutex_lock(&p->mu);
    p->done = done < 0 ? 0 : (p->total > 0 && done > p->total ? p->total : done);
    snprintf(p->item, sizeof p->item, "%s", item ? item : "");
    const double t = now_s();
    if ((!p->tty && p->interval == 0.0) || due(p, t)) emit(p, t);
    pthread_mutex_unlock(&p->mu);
}

void cli_progress_note(cli_progress *p, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (p != NULL) pthread_mutex_lock(&p->mu);
    if (p != NULL && p->bar_drawn) {
        fputs("\r\033[K", stderr);
        p->bar_drawn = false;
        p->t_last = -1.0; /* redraw at the next tick */
    }
    vfprintf(stderr, fmt, ap);
    fflush(stderr);
    if (p != NULL) pthread_mutex_unlock(&p->mu);
    va_end(ap);
}

void cli_progress_end(cli_progress *p) {
    if (p == NULL) return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (p->has_thread) pthread_join(p->thread, NULL);
    if (p->bar_drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

void cli_progress_build_cb(void *user_data, const char *phase, int done, int total, const char *item) {
    cli_progress *p = user_data;
    if (p == NULL || phase == NULL) return;
    const char *what = strcmp(phase, TC_PROGRESS_TUNE) == 0 ? "tuning step" : phase;
    pthread_mutex_lock(&p->mu);
    const bool fresh = strcmp(p->what, what) != 0 || p->total != total || done < p->done;
    pthread_mutex_unlock(&p->mu);
    if (fresh) cli_progress_stage(p, what, total);
    cli_progress_set(p, done, item);
}
