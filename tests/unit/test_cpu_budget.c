/* test_cpu_budget.c - the CPU budget (core/cpu_budget.h) on fixture folders: cgroup v2 cpu.max and v1
 * cpu.cfs_quota_us / cpu.cfs_period_us (alone and as "cpu,cpuacct"), "max" and -1 quotas, quotas below one CPU,
 * a parent's smaller quota, missing and malformed files; the affinity mask against the quota; the default thread
 * count of a CPU execution handle. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "core/cpu_budget.h"
#include "tailcut/tailcut.h"

static char root[256];

/* Writes text to root/rel, making its folders. */
static void put(const char *rel, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s%s", root, rel);
    for (char *p = path + strlen(root) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0755);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state) {
    (void)state;
    snprintf(root, sizeof root, "/tmp/tc_budget_%d", (int)getpid());
    mkdir(root, 0755);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    return system(cmd) == 0 ? 0 : 1;
}

static void fresh(void) {
    teardown(NULL);
    setup(NULL);
}

static void test_v2(void **state) {
    (void)state;
    fresh();
    assert_true(tc__cgroup_cpu_quota(root) == 0); /* no /proc/self/cgroup */
    put("/proc/self/cgroup", "0::/kubepods/pod1/ctr\n");
    assert_true(tc__cgroup_cpu_quota(root) == 0); /* no cpu.max anywhere */
    put("/sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", "max 100000\n");
    assert_true(tc__cgroup_cpu_quota(root) == 0); /* "max": no limit */
    put("/sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", "250000 100000\n");
    assert_true(tc__cgroup_cpu_quota(root) == 2.5);
    tc__cpu_budget b = tc__cpu_budget_detect(root, 64, 64);
    assert_int_equal(b.cpus, 3); /* rounded up */
    assert_int_equal(b.source, TC__BUDGET_CGROUP);
    assert_string_equal(tc__budget_source_name(b.source), "cgroup");
    /* A parent's smaller quota wins. */
    put("/sys/fs/cgroup/kubepods/cpu.max", "150000 100000\n");
    assert_true(tc__cgroup_cpu_quota(root) == 1.5);
    assert_int_equal(tc__cpu_budget_detect(root, 64, 64).cpus, 2);
    /* Below one CPU: one. */
    put("/sys/fs/cgroup/kubepods/pod1/cpu.max", "20000 100000\n");
    tc__cpu_budget low = tc__cpu_budget_detect(root, 64, 64);
    assert_int_equal(low.cpus, 1);
    assert_true(low.quota == 0.2);
    /* The affinity mask narrower than the quota: the mask. */
    put("/sys/fs/cgroup/kubepods/pod1/cpu.max", "max 100000\n");
    tc__cpu_budget aff = tc__cpu_budget_detect(root, 64, 1);
    assert_int_equal(aff.cpus, 1);
    assert_int_equal(aff.source, TC__BUDGET_AFFINITY);
    /* Malformed files are no limit. */
    put("/sys/fs/cgroup/kubepods/cpu.max", "lots 100000\n");
    put("/sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", "100000 0\n");
    assert_true(tc__cgroup_cpu_quota(root) == 0);
    tc__cpu_budget none = tc__cpu_budget_detect(root, 8, 0);
    assert_int_equal(none.cpus, 8);
    assert_int_equal(none.affinity, 8);
    assert_int_equal(none.source, TC__BUDGET_ONLINE);
    /* A path that climbs out of the hierarchy is not followed. */
    put("/proc/self/cgroup", "0::/../../etc\n");
    assert_true(tc__cgroup_cpu_quota(root) == 0);
}

static void test_v1(void **state) {
    (void)state;
    fresh();
    put("/proc/self/cgroup", "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n");
    put("/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1\n");
    put("/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
    assert_true(tc__cgroup_cpu_quota(root) == 0); /* -1: no limit */
    put("/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "300000\n");
    assert_true(tc__cgroup_cpu_quota(root) == 3.0);
    assert_int_equal(tc__cpu_budget_detect(root, 16, 16).cpus, 3);
    /* No period file: no limit. */
    put("/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "\n");
    assert_true(tc__cgroup_cpu_quota(root) == 0);
    /* The controller mounted as "cpu" alone (the list's folder missing). */
    fresh();
    put("/proc/self/cgroup", "3:cpuacct,cpu:/job\n");
    put("/sys/fs/cgroup/cpu/job/cpu.cfs_quota_us", "50000\n");
    put("/sys/fs/cgroup/cpu/job/cpu.cfs_period_us", "100000\n");
    assert_true(tc__cgroup_cpu_quota(root) == 0.5);
    assert_int_equal(tc__cpu_budget_detect(root, 4, 4).cpus, 1);
    /* A memory-only hierarchy has no say. */
    fresh();
    put("/proc/self/cgroup", "4:memory:/x\n");
    put("/sys/fs/cgroup/memory/x/cpu.cfs_quota_us", "100000\n");
    put("/sys/fs/cgroup/memory/x/cpu.cfs_period_us", "100000\n");
    assert_true(tc__cgroup_cpu_quota(root) == 0);
}

/* The process's own budget feeds the public view and the CPU backend's default pool. */
static void test_defaults(void **state) {
    (void)state;
    const tc__cpu_budget *b = tc__cpu_budget_get();
    assert_true(b->cpus >= 1 && b->cpus <= b->online);
    tc_cpu_budget_info info;
    tc_cpu_budget(&info);
    assert_int_equal(info.cpus, b->cpus);
    assert_string_equal(info.source, tc__budget_source_name(b->source));
    void *exec = NULL;
    tc__err err = {0};
    assert_int_equal(tc__backend_cpu.exec_create(0, &exec, &err), TC_STATUS_OK);
    assert_int_equal(tc__backend_cpu.exec_threads(exec), b->cpus);
    tc__backend_cpu.exec_destroy(exec);
    assert_int_equal(tc__backend_cpu.exec_create(3, &exec, &err), TC_STATUS_OK); /* an explicit count wins */
    assert_int_equal(tc__backend_cpu.exec_threads(exec), 3);
    tc__backend_cpu.exec_destroy(exec);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v2),
        cmocka_unit_test(test_v1),
        cmocka_unit_test(test_defaults),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
