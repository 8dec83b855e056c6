/*
 * pool_pin.c - worker pinning for the CPU backend's thread pools (pool_pin.h). The pool runs no code of ours on its
 * workers but items, so one parallel call of n items (n = the pool's threads, the caller included) runs on all of them at
 * once: every item waits at a barrier until all n have started, so no thread can take a second item, and each
 * worker pins itself to the CPU of the slot it drew. Slots count on across the pools of the process (a server's
 * instances each have one), so that successive pools' workers spread over the mask instead of piling onto its
 * first CPUs; slot 0 (the mask's first CPU) is left to the first caller.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity, CPU_* */
#endif
#include "backends/cpu/pool_pin.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


bool tc__pool_pin_wanted(void) {
    const char *e = getenv("TAILCUT_PIN_THREADS");
    return e != NULL && strcmp(e, "1") == 0;
}

typedef struct pin_job {
    pthread_t caller;
    const int *cpus; /* the mask's CPUs, in order */
    int n_cpus;
    size_t n_items;
    atomic_size_t arrived;
    atomic_int pinned;
} pin_job;

static atomic_uint g_next_slot = 1;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void pin_item(void *arg, size_t i) {
    (void)i;
    pin_job *j = arg;
    if (!pthread_equal(pthread_self(), j->caller)) {
        const unsigned slot = atomic_fetch_add(&g_next_slot, 1u);
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(j->cpus[slot % (unsigned)j->n_cpus], &set);
        if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0) atomic_fetch_add(&j->pinned, 1);
    }
    /* The barrier: every item holds its thread until all have started (bounded: 2 s, then go on regardless). */
    atomic_fetch_add(&j->arrived, 1);
    const uint64_t t0 = now_ns();
    while (atomic_load(&j->arrived) < j->n_items && now_ns() - t0 < 2000000000u) sched_yield();
}

int tc__pool_pin_workers(tc__pool_t pool) {
    const size_t n = pool ? tc__pool_get_threads_count(pool) : 0;
    if (n < 2) return 0;
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof mask, &mask) != 0) return 0;
    int cpus[CPU_SETSIZE], n_cpus = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &mask)) cpus[n_cpus++] = c;
    if (n_cpus == 0) return 0;
    pin_job j = {.caller = pthread_self(), .cpus = cpus, .n_cpus = n_cpus, .n_items = n};
    atomic_init(&j.arrived, 0);
    atomic_init(&j.pinned, 0);
    tc__pool_parallelize_1d(pool, pin_item, &j, n, 0);
    return atomic_load(&j.pinned);
}
