/*
 * cpu_budget.h - how many CPUs this process may use: the smaller of its affinity mask (sched_getaffinity:
 * taskset, numactl, a Kubernetes cpuset) and its cgroup CPU quota (v2 cpu.max, v1 cpu.cfs_quota_us /
 * cpu.cfs_period_us, rounded up, at least 1; a Kubernetes limits.cpu), else the online CPUs. Every default
 * thread count (contexts, the tuner, the calibrator's engine, the server's instances) derives from it; an
 * explicit thread count still wins. Detected once (thread-safe), immutable afterwards.
 *
 * The cgroup files are read below a root folder: "/" for the machine, or the folder that the environment
 * variable TAILCUT_CGROUP_ROOT names (a fixture: <root>/proc/self/cgroup and <root>/sys/fs/cgroup/...).
 */
#ifndef TC_CORE_CPU_BUDGET_H
#define TC_CORE_CPU_BUDGET_H

typedef enum tc__budget_source {
    TC__BUDGET_ONLINE = 0,   /* no narrower limit: the online CPUs */
    TC__BUDGET_AFFINITY = 1, /* the affinity mask */
    TC__BUDGET_CGROUP = 2,   /* the cgroup CPU quota */
} tc__budget_source;

typedef struct tc__cpu_budget {
    int cpus;          /* the budget, at least 1 */
    int source;        /* tc__budget_source */
    int online;        /* online CPUs */
    int affinity;      /* CPUs in the affinity mask (online when unknown) */
    double quota;      /* cgroup quota in CPUs (quota / period), 0 when none */
} tc__cpu_budget;

/* The budget of this process, detected on first call (pthread_once). */
const tc__cpu_budget *tc__cpu_budget_get(void);

/*
 * Detects the budget with the cgroup files below root ("" or NULL: "/"), online CPUs `online` and an affinity of
 * `affinity` CPUs (<= 0: unknown). For tests; tc__cpu_budget_get uses the process's own.
 */
tc__cpu_budget tc__cpu_budget_detect(const char *root, int online, int affinity);

/*
 * The cgroup CPU quota below root in CPUs (quota / period of the process's cgroup and each of its ancestors, the
 * smallest), or 0 when there is none ("max", -1, missing or unreadable files).
 */
double tc__cgroup_cpu_quota(const char *root);

/* "online", "affinity" or "cgroup". */
const char *tc__budget_source_name(int source);

#endif
