/* cpu_budget.c - the CPUs this process may use: affinity mask and cgroup CPU quota (see cpu_budget.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif
#include "core/cpu_budget.h"

#include <math.h>
#include <stdbool.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PATH_BYTES 4096

/* Reads at most size-1 bytes of root/rel into buf (NUL-terminated); false when the file cannot be read. */
static bool read_file(const char *root, const char *rel, char *buf, size_t size) {
    char path[PATH_BYTES];
    int n = snprintf(path, sizeof path, "%s%s", root, rel);
    if (n < 0 || (size_t)n >= sizeof path) return false;
    FILE *f = fopen(path, "r");
    if (f == NULL) return false;
    size_t got = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[got] = '\0';
    return got > 0;
}

/* Parses a positive integer that fills the token (digits only, no overflow); -1 otherwise. */
static long long parse_count(const char *s, const char **end) {
    long long v = 0;
    const char *p = s;
    while (*p == ' ' || *p == '\t') p++;
    if (*p < '0' || *p > '9') return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (1ll << 50)) return -1;
        v = v * 10 + (*p - '0');
    }
    if (end) *end = p;
    return v;
}

/* CPUs of a cgroup v2 folder's cpu.max ("max 100000" or "200000 100000"); 0 when none. */
static double v2_quota(const char *root, const char *dir) {
    char rel[PATH_BYTES], buf[128];
    if (snprintf(rel, sizeof rel, "/sys/fs/cgroup%s/cpu.max", dir) >= (int)sizeof rel) return 0;
    if (!read_file(root, rel, buf, sizeof buf)) return 0;
    const char *p = NULL;
    long long quota = parse_count(buf, &p), period = quota > 0 ? parse_count(p, NULL) : -1;
    return quota > 0 && period > 0 ? (double)quota / (double)period : 0;
}

/* CPUs of a cgroup v1 cpu controller folder (cpu.cfs_quota_us / cpu.cfs_period_us; quota -1 = none); 0 when none. */
static double v1_quota(const char *root, const char *mount, const char *dir) {
    char rel[PATH_BYTES], buf[64];
    if (snprintf(rel, sizeof rel, "/sys/fs/cgroup/%s%s/cpu.cfs_quota_us", mount, dir) >= (int)sizeof rel) return 0;
    if (!read_file(root, rel, buf, sizeof buf)) return 0;
    long long quota = parse_count(buf, NULL);
    if (quota <= 0) return 0;
    if (snprintf(rel, sizeof rel, "/sys/fs/cgroup/%s%s/cpu.cfs_period_us", mount, dir) >= (int)sizeof rel) return 0;
    if (!read_file(root, rel, buf, sizeof buf)) return 0;
    long long period = parse_count(buf, NULL);
    return period > 0 ? (double)quota / (double)period : 0;
}

/* The smallest quota of dir and its ancestors ("/a/b", "/a", ""), by fn; 0 when none has one. */
static double smallest_up(const char *root, const char *mount, const char *path, bool v2) {
    char dir[PATH_BYTES];
    snprintf(dir, sizeof dir, "%s", path);
    size_t n = strlen(dir);
    while (n > 0 && dir[n - 1] == '\n') dir[--n] = '\0';
    if (n == 1 && dir[0] == '/') dir[0] = '\0';
    double best = 0;
    for (;;) {
        if (strstr(dir, "..") == NULL) { /* a path from /proc is never relative; refuse one that climbs */
            double q = v2 ? v2_quota(root, dir) : v1_quota(root, mount, dir);
            if (q > 0 && (best == 0 || q < best)) best = q;
        }
        char *slash = strrchr(dir, '/');
        if (slash == NULL) break;
        *slash = '\0';
    }
    return best;
}

double tc__cgroup_cpu_quota(const char *root) {
    if (root == NULL || strcmp(root, "/") == 0) root = "";
    char buf[8192];
    if (!read_file(root, "/proc/self/cgroup", buf, sizeof buf)) return 0;
    double best = 0;
    for (char *line = buf, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        /* "hierarchy-id:controllers:path" */
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c2 == NULL) continue;
        *c1 = '\0', *c2 = '\0';
        const char *ctrls = c1 + 1, *path = c2 + 1;
        double q = 0;
        if (strcmp(line, "0") == 0 && ctrls[0] == '\0') {
            q = smallest_up(root, NULL, path, true);
        } else {
            /* v1: the controller list names cpu (alone or as "cpu,cpuacct"); its folder is named after the list */
            bool cpu = false;
            char list[256];
            snprintf(list, sizeof list, "%s", ctrls);
            for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) cpu |= strcmp(tok, "cpu") == 0;
            if (cpu) {
                q = smallest_up(root, ctrls, path, false);
                if (q == 0 && strcmp(ctrls, "cpu") != 0) q = smallest_up(root, "cpu", path, false);
            }
        }
        if (q > 0 && (best == 0 || q < best)) best = q;
    }
    return best;
}

tc__cpu_budget tc__cpu_budget_detect(const char *root, int online, int affinity) {
    tc__cpu_budget b = {.online = online > 0 ? online : 1, .source = TC__BUDGET_ONLINE};
    b.affinity = affinity > 0 ? affinity : b.online;
    b.cpus = b.online;
    if (b.affinity < b.cpus) b.cpus = b.affinity, b.source = TC__BUDGET_AFFINITY;
    b.quota = tc__cgroup_cpu_quota(root);
    if (b.quota > 0) {
        double up = ceil(b.quota - 1e-9);
        int q = up < 1 ? 1 : up > 1e6 ? 1000000 : (int)up;
        if (q < b.cpus) b.cpus = q, b.source = TC__BUDGET_CGROUP;
    }
    return b;
}

static tc__cpu_budget g_budget;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void detect_once(void) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    int affinity = 0;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) affinity = CPU_COUNT(&set);
    const char *root = getenv("TAILCUT_CGROUP_ROOT");
    g_budget = tc__cpu_budget_detect(root && root[0] ? root : "", online > 0 && online < (1l << 20) ? (int)online : 1,
                                     affinity);
}

const tc__cpu_budget *tc__cpu_budget_get(void) {
    pthread_once(&g_once, detect_once);
    return &g_budget;
}

const char *tc__budget_source_name(int source) {
    switch (source) {
    case TC__BUDGET_AFFINITY: return "affinity";
    case TC__BUDGET_CGROUP: return "cgroup";
    default: return "online";
    }
}
