/* test_cpu_pool_pin.c - worker pinning (backends/cpu/pool_pin.h): the policy's switches, and after pinning every worker
 * of a pool (never the calling thread) runs on exactly one CPU of the process's mask, distinct CPUs where the mask
 * has enough. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "backends/cpu/pool_pin.h"

enum { MAX_T = 8 };

typedef struct probe {
    pthread_t caller;
    size_t n;
    atomic_size_t arrived;
    atomic_int workers, single, caller_count;
    int cpu_of[MAX_T];
    atomic_int k;
    int caller_mask;
} probe;

static void probe_item(void *arg, size_t i) {
    (void)i;
    probe *p = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    if (pthread_equal(pthread_self(), p->caller)) {
        atomic_fetch_add(&p->caller_count, 1);
        p->caller_mask = CPU_COUNT(&set);
    } else {
        atomic_fetch_add(&p->workers, 1);
        if (CPU_COUNT(&set) == 1) {
            atomic_fetch_add(&p->single, 1);
            for (int c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &set)) p->cpu_of[atomic_fetch_add(&p->k, 1)] = c;
        }
    }
    atomic_fetch_add(&p->arrived, 1);
    while (atomic_load(&p->arrived) < p->n) sched_yield(); /* each thread takes one item */
}

static int mask_cpus(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    return CPU_COUNT(&set);
}

static void test_policy_switches(void **state) {
    (void)state;
    setenv("TAILCUT_PIN_THREADS", "0", 1);
    assert_false(tc__pool_pin_wanted());
    setenv("TAILCUT_PIN_THREADS", "1", 1);
    assert_true(tc__pool_pin_wanted());
    unsetenv("TAILCUT_PIN_THREADS");
    assert_false(tc__pool_pin_wanted()); /* opt-in: no measured gain (pool_pin.h) */
}

static void check_pool(size_t threads) {
    const int before = mask_cpus();
    tc__pool_t pool = tc__pool_create(threads);
    assert_non_null(pool);
    assert_int_equal(tc__pool_pin_workers(pool), (int)threads - 1);
    probe p = {.caller = pthread_self(), .n = threads};
    tc__pool_parallelize_1d(pool, probe_item, &p, threads, 0);
    assert_int_equal(p.caller_count, 1);
    assert_int_equal(p.workers, (int)threads - 1);
    assert_int_equal(p.single, (int)threads - 1); /* every worker on one CPU */
    assert_int_equal(p.caller_mask, before);      /* the caller untouched */
    if ((int)threads - 1 <= before)               /* distinct CPUs where the mask has enough */
        for (int a = 0; a < p.k; a++)
            for (int b = a + 1; b < p.k; b++) assert_int_not_equal(p.cpu_of[a], p.cpu_of[b]);
    assert_int_equal(mask_cpus(), before);
    tc__pool_destroy(pool);
}

static void test_workers_pinned(void **state) {
    (void)state;
    check_pool(2);
    check_pool(3);
    check_pool(5); /* more workers than CPUs on small machines: round robin, still one CPU each */
}

static void test_no_workers(void **state) {
    (void)state;
    tc__pool_t pool = tc__pool_create(1);
    assert_non_null(pool);
    assert_int_equal(tc__pool_pin_workers(pool), 0);
    tc__pool_destroy(pool);
    assert_int_equal(tc__pool_pin_workers(NULL), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_switches),
        cmocka_unit_test(test_workers_pinned),
        cmocka_unit_test(test_no_workers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
