/*
 * scheduler.c - runs each test case in its own process, like libuv's test
 * runner: a fork per case, up to `jobs` at once, a pipe that carries the
 * result back, and a timeout after which the case is killed. A crash, a hang
 * or a non-zero exit (a sanitizer report) fails that case only. A child's
 * stderr goes to a memory file; for a failure, the telling line of it (a
 * sanitizer's "runtime error:" or "SUMMARY:" line, else the last line) joins
 * the message, and the whole of it is echoed to stderr.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"

/* One running case. */
typedef struct slot {
    pid_t pid;
    int fd;     /* read end of the result pipe */
    int err_fd; /* memory file holding the child's stderr, or -1 */
    int index;
    double start;
    size_t len;
    char buf[CONF_MESSAGE_SIZE + 1];
} slot;

static const char outcome_tags[] = "PFS"; /* indexed by conf_outcome */

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void write_all(int fd, const char *data, size_t size) {
    while (size > 0) {
        ssize_t n = write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        data += n;
        size -= (size_t)n;
    }
}

static void set_result(conf_case *c, conf_outcome outcome, const char *message, double seconds) {
    free(c->message);
    c->outcome = outcome;
    c->message = strdup(message ? message : "");
    c->seconds = seconds;
}

static void print_progress(const conf_case *c, int done, int total) {
    static const char *const words[] = {"PASS", "FAIL", "SKIP"};
    printf("[%4d/%d] %s %s [%s] (%.2f s)%s%s\n", done, total, words[c->outcome], c->name, c->op,
           c->seconds, c->message && c->message[0] ? ": " : "", c->message ? c->message : "");
    fflush(stdout);
}

/* Reads up to size-1 bytes of the child's captured stderr (its end, if longer) into buf. */
static size_t read_stderr(int fd, char *buf, size_t size) {
    buf[0] = '\0';
    if (fd < 0) return 0;
    off_t end = lseek(fd, 0, SEEK_END);
    if (end <= 0) return 0;
    off_t from = end > (off_t)(size - 1) ? end - (off_t)(size - 1) : 0;
    ssize_t n = pread(fd, buf, (size_t)(end - from), from);
    if (n < 0) n = 0;
    buf[n] = '\0';
    return (size_t)n;
}

/* The most telling line of a stderr capture, copied into line. */
static void telling_line(const char *log, char *line, size_t size) {
    static const char *const marks[] = {"runtime error:", "SUMMARY:", "ERROR:"};
    line[0] = '\0';
    for (size_t m = 0; m < sizeof marks / sizeof marks[0]; m++) {
        const char *hit = strstr(log, marks[m]);
        if (!hit) continue;
        const char *start = hit;
        while (start > log && start[-1] != '\n') start--;
        snprintf(line, size, "%.*s", (int)strcspn(start, "\n"), start);
        return;
    }
    const char *end = log + strlen(log);
    while (end > log && (end[-1] == '\n' || end[-1] == ' ')) end--;
    const char *start = end;
    while (start > log && start[-1] != '\n') start--;
    snprintf(line, size, "%.*s", (int)(end - start), start);
}

/* Turns what a finished child left (its pipe bytes and wait status) into a result. */
static void finish(conf_case *c, const slot *s, int wstatus, int timed_out, double timeout,
                   int verbose) {
    double seconds = now_seconds() - s->start;
    /* The child sends one tag byte (outcome_tags) and then its message. */
    const char *tag = s->len >= 1 && s->buf[0] ? strchr(outcome_tags, s->buf[0]) : NULL;
    int have = tag != NULL;
    conf_outcome reported = have ? (conf_outcome)(tag - outcome_tags) : CONF_FAIL;
    char text[CONF_MESSAGE_SIZE];
    snprintf(text, sizeof text, "%.*s", have ? (int)s->len - 1 : 0, s->buf + 1);
    static const char *const words[] = {"PASS", "FAIL", "SKIP"};
    char msg[CONF_MESSAGE_SIZE + 256];

    if (timed_out) {
        snprintf(msg, sizeof msg, "timed out after %g s (killed)", timeout);
        set_result(c, CONF_FAIL, msg, seconds);
    } else if (WIFSIGNALED(wstatus)) {
        int sig = WTERMSIG(wstatus);
        const char *abbrev = sigabbrev_np(sig);
        if (have)
            snprintf(msg, sizeof msg, "crashed: signal %d (SIG%s, %s) after reporting %s%s%s", sig,
                     abbrev ? abbrev : "?", strsignal(sig), words[reported], text[0] ? ": " : "",
                     text);
        else
            snprintf(msg, sizeof msg, "crashed: signal %d (SIG%s, %s)", sig, abbrev ? abbrev : "?",
                     strsignal(sig));
        set_result(c, CONF_FAIL, msg, seconds);
    } else if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) != 0) {
        snprintf(msg, sizeof msg, "exited with status %d%s%s%s%s", WEXITSTATUS(wstatus),
                 have ? " after reporting " : "", have ? words[reported] : "",
                 have && text[0] ? ": " : "", have ? text : "");
        set_result(c, CONF_FAIL, msg, seconds);
    } else if (!have) {
        set_result(c, CONF_FAIL, "exited without reporting a result", seconds);
    } else {
        set_result(c, reported, text, seconds);
    }

    static char log[16384];
    read_stderr(s->err_fd, log, sizeof log);
    if (log[0] && (c->outcome == CONF_FAIL || verbose)) {
        fprintf(stderr, "---- stderr of %s ----\n%s%s---- end of %s ----\n", c->name, log,
                log[strlen(log) - 1] == '\n' ? "" : "\n", c->name);
        fflush(stderr);
    }
    int clean_exit = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0 && have && !timed_out;
    if (log[0] && c->outcome == CONF_FAIL && !clean_exit) {
        char line[512];
        telling_line(log, line, sizeof line);
        if (line[0]) {
            snprintf(msg, sizeof msg, "%s; stderr: %s", c->message, line);
            set_result(c, CONF_FAIL, msg, seconds);
        }
    }
}

static void run_in_process(conf_case *c) {
    char msg[CONF_MESSAGE_SIZE];
    double start = now_seconds();
    conf_outcome outcome = conf_run_case(c->dir, msg, sizeof msg);
    set_result(c, outcome, msg, now_seconds() - start);
}

/* Forks the child for case index into s. Returns 0 in the parent, -1 on a system error, and
 * CONF_SCHED_CHILD in the child once it has run the case and sent its result. */
static int spawn(conf_case *cases, int index, slot *s, const slot *slots, int num_slots) {
    int fds[2];
    if (pipe(fds) != 0) {
        perror("tc_conformance: pipe");
        return -1;
    }
    int err_fd = memfd_create("tc_conformance_stderr", MFD_CLOEXEC);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("tc_conformance: fork");
        close(fds[0]);
        close(fds[1]);
        if (err_fd >= 0) close(err_fd);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        for (int i = 0; i < num_slots; i++)
            if (slots[i].pid > 0) {
                close(slots[i].fd);
                if (slots[i].err_fd >= 0) close(slots[i].err_fd);
            }
        if (err_fd >= 0) dup2(err_fd, STDERR_FILENO);
        char msg[CONF_MESSAGE_SIZE];
        conf_outcome outcome = conf_run_case(cases[index].dir, msg, sizeof msg);
        char tag = outcome_tags[outcome];
        write_all(fds[1], &tag, 1);
        write_all(fds[1], msg, strlen(msg));
        close(fds[1]);
        /* The child returns all the way out of main, freeing what it holds, so that
         * LeakSanitizer (which checks at exit) reports only what the library leaked. */
        return CONF_SCHED_CHILD;
    }
    close(fds[1]);
    s->pid = pid;
    s->fd = fds[0];
    s->err_fd = err_fd;
    s->index = index;
    s->start = now_seconds();
    s->len = 0;
    return 0;
}

static pid_t wait_child(pid_t pid, int *wstatus) {
    pid_t r;
    do r = waitpid(pid, wstatus, 0);
    while (r < 0 && errno == EINTR);
    return r;
}

int conf_schedule(conf_case *cases, int num_cases, const conf_sched_options *options) {
    int done = 0;
    if (!options->fork) {
        for (int i = 0; i < num_cases; i++) {
            run_in_process(&cases[i]);
            if (options->verbose) print_progress(&cases[i], ++done, num_cases);
        }
        return 0;
    }
    int jobs = options->jobs < 1 ? 1 : options->jobs;
    slot *slots = calloc((size_t)jobs, sizeof *slots);
    struct pollfd *pfds = calloc((size_t)jobs, sizeof *pfds);
    int *pfd_slot = calloc((size_t)jobs, sizeof *pfd_slot);
    if (!slots || !pfds || !pfd_slot) {
        free(slots);
        free(pfds);
        free(pfd_slot);
        return -1;
    }
    int next = 0, active = 0, rc = 0;
    while (done < num_cases) {
        for (int i = 0; i < jobs && next < num_cases && rc == 0; i++) {
            if (slots[i].pid > 0) continue;
            int sr = spawn(cases, next, &slots[i], slots, jobs);
            if (sr == CONF_SCHED_CHILD) {
                free(slots);
                free(pfds);
                free(pfd_slot);
                return CONF_SCHED_CHILD;
            }
            if (sr != 0) {
                rc = -1;
                break;
            }
            next++;
            active++;
        }
        if (active == 0) break; /* a spawn failed and nothing is left running */

        /* Sleep until a pipe has data or the earliest deadline passes. */
        double now = now_seconds(), wait_s = 1.0;
        int npfd = 0;
        for (int i = 0; i < jobs; i++) {
            if (slots[i].pid <= 0) continue;
            double left = slots[i].start + options->timeout - now;
            if (left < wait_s) wait_s = left;
            pfds[npfd].fd = slots[i].fd;
            pfds[npfd].events = POLLIN;
            pfds[npfd].revents = 0;
            pfd_slot[npfd++] = i;
        }
        if (wait_s < 0) wait_s = 0;
        int pr = poll(pfds, (nfds_t)npfd, (int)(wait_s * 1000.0) + 1);
        if (pr < 0 && errno != EINTR) {
            perror("tc_conformance: poll");
            rc = -1;
        }

        for (int k = 0; k < npfd && pr > 0; k++) {
            if (!pfds[k].revents) continue;
            slot *s = &slots[pfd_slot[k]];
            ssize_t n;
            char scratch[512];
            size_t room = sizeof s->buf - 1 - s->len;
            do n = room ? read(s->fd, s->buf + s->len, room) : read(s->fd, scratch, sizeof scratch);
            while (n < 0 && errno == EINTR);
            if (n > 0) {
                if (room) s->len += (size_t)n;
                continue;
            }
            /* End of file: the child has exited or is about to. */
            int wstatus = 0;
            close(s->fd);
            wait_child(s->pid, &wstatus);
            finish(&cases[s->index], s, wstatus, 0, options->timeout, options->verbose);
            if (s->err_fd >= 0) close(s->err_fd);
            s->pid = 0;
            active--;
            if (options->verbose)
                print_progress(&cases[s->index], ++done, num_cases);
            else
                done++;
        }

        now = now_seconds();
        for (int i = 0; i < jobs; i++) {
            slot *s = &slots[i];
            if (s->pid <= 0 || now - s->start < options->timeout) continue;
            int wstatus = 0;
            kill(s->pid, SIGKILL);
            close(s->fd);
            wait_child(s->pid, &wstatus);
            finish(&cases[s->index], s, wstatus, 1, options->timeout, options->verbose);
            if (s->err_fd >= 0) close(s->err_fd);
            s->pid = 0;
            active--;
            if (options->verbose)
                print_progress(&cases[s->index], ++done, num_cases);
            else
                done++;
        }
        if (rc != 0 && active == 0) break;
    }
    free(slots);
    free(pfds);
    free(pfd_slot);
    return rc;
}
