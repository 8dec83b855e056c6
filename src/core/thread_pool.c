/*
 * thread_pool.c - the CPU thread pool of thread_pool.h: per-thread parts with stealing, a caller that never
 * waits for a worker that has not started an item, futex sleep after a short spin.
 *
 * Protocol of one call (generation g), the caller holding call_mutex:
 *   1. the caller writes the job and the parts, then state = g|OPEN, then bumps seq (the futex word) and wakes
 *      sleepers;
 *   2. a worker that sees seq move increments active, then reads state: closed, it leaves at once (it has
 *      touched nothing of the call); open, it runs its own part, then steals, then decrements active;
 *   3. the caller runs its part and steals until every part is empty, stores state = g (closed), then waits
 *      until active is 0.
 * The increment of active and the load of state (worker), the store of state and the load of active (caller)
 * are sequentially consistent, so either the caller sees the worker (and waits for it) or the worker sees
 * the call closed (and leaves): a worker never reads a call the caller has finished with. Items' writes
 * reach the caller through active's release decrement and the caller's acquire load.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* syscall */
#endif
#include "core/thread_pool.h"

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

#define STATE_OPEN 1u
#define STATE_YIELD 2u
#define STATE_GEN_SHIFT 2

typedef enum job_kind { JOB_1D, JOB_1D_WITH_THREAD, JOB_1D_TILE_1D, JOB_2D, JOB_2D_TILE_1D } job_kind;

typedef struct pool_job {
    job_kind kind;
    union {
        tc__pool_task_1d_t d1;
        tc__pool_task_1d_tile_1d_t d1t;
        tc__pool_task_2d_t d2;
        tc__pool_task_2d_tile_1d_t d2t;
        tc__pool_task_1d_with_thread_t d1w;
    } fn;
    void *ctx;
    size_t range;   /* 1D: items; 1D tiled: the range; 2D: range_i */
    size_t range_j; /* 2D: the inner range */
    size_t tile;    /* tiled: the tile of the (inner) range */
    size_t per_i;   /* 2D: items per i (range_j, or its tiles) */
} pool_job;

/* One thread's part of a call: items [front, back) not yet taken, `left` of them. */
typedef struct pool_part {
    _Alignas(64) atomic_size_t left;
    size_t front;        /* the owner's next item (only the owner moves it) */
    atomic_size_t back;  /* thieves take back - 1 */
} pool_part;

struct tc__pool {
    size_t threads;
    pthread_t *tids; /* [threads]; tids[0] unused (the caller) */
    pool_part *parts;
    pthread_mutex_t call_mutex;
    pool_job job;
    uint64_t gen;
    _Alignas(64) atomic_uint seq; /* the futex word workers sleep on */
    _Alignas(64) _Atomic uint64_t state;
    _Alignas(64) atomic_int active;
    atomic_int sleepers;
    atomic_bool stop;
    atomic_int hold; /* tc__pool_hold_workers */
};

typedef struct worker_arg {
    struct tc__pool *pool;
    size_t index;
} worker_arg;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void futex_wait(atomic_uint *word, unsigned expected) {
    syscall(SYS_futex, (unsigned *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void futex_wake_all(atomic_uint *word) {
    syscall(SYS_futex, (unsigned *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void run_item(const pool_job *j, size_t t, size_t k) {
    switch (j->kind) {
    case JOB_1D:
        j->fn.d1(j->ctx, k);
        break;
    case JOB_1D_WITH_THREAD:
        j->fn.d1w(j->ctx, t, k);
        break;
    case JOB_1D_TILE_1D: {
        const size_t start = k * j->tile, rest = j->range - start;
        j->fn.d1t(j->ctx, start, rest < j->tile ? rest : j->tile);
        break;
    }
    case JOB_2D:
        j->fn.d2(j->ctx, k / j->per_i, k % j->per_i);
        break;
    case JOB_2D_TILE_1D: {
        const size_t start = (k % j->per_i) * j->tile, rest = j->range_j - start;
        j->fn.d2t(j->ctx, k / j->per_i, start, rest < j->tile ? rest : j->tile);
        break;
    }
    }
}

static bool try_take(atomic_size_t *left) {
    size_t v = atomic_load_explicit(left, memory_order_relaxed);
    while (v > 0)
        if (atomic_compare_exchange_weak_explicit(left, &v, v - 1, memory_order_acq_rel, memory_order_relaxed))
            return true;
    return false;
}

/* Thread t's share of the open call: its own part from the front, then the others' from their backs. */
static void run_parts(struct tc__pool *p, size_t t) {
    const pool_job *j = &p->job;
    pool_part *own = &p->parts[t];
    while (try_take(&own->left)) run_item(j, t, own->front++);
    for (size_t k = 1; k < p->threads; k++) {
        pool_part *q = &p->parts[(t + k) % p->threads];
        while (try_take(&q->left)) run_item(j, t, atomic_fetch_sub_explicit(&q->back, 1, memory_order_relaxed) - 1);
    }
}

/* Waits until seq differs from seen: a bounded spin (unless told to sleep at once), then the futex. */
static unsigned wait_call(struct tc__pool *p, unsigned seen, bool sleep_now) {
    if (!sleep_now) {
        const uint64_t t0 = now_ns();
        for (unsigned k = 1;; k++) {
            const unsigned s = atomic_load_explicit(&p->seq, memory_order_acquire);
            if (s != seen) return s;
            cpu_relax();
            if ((k & 63u) == 0 && now_ns() - t0 > TC__POOL_SPIN_NS) break;
        }
    }
    for (;;) {
        atomic_fetch_add(&p->sleepers, 1);
        if (atomic_load(&p->seq) == seen) futex_wait(&p->seq, seen);
        atomic_fetch_sub(&p->sleepers, 1);
        const unsigned s = atomic_load(&p->seq);
        if (s != seen) return s;
    }
}

static void *worker_main(void *arg) {
    worker_arg *wa = arg;
    struct tc__pool *p = wa->pool;
    const size_t t = wa->index;
    free(wa);
    unsigned seen = 0; /* seq starts at 0 */
    bool sleep_now = true;
    for (;;) {
        seen = wait_call(p, seen, sleep_now);
        while (atomic_load_explicit(&p->hold, memory_order_relaxed) && !atomic_load(&p->stop)) sched_yield();
        if (atomic_load(&p->stop)) break;
        atomic_fetch_add(&p->active, 1);
        const uint64_t st = atomic_load(&p->state);
        if (st & STATE_OPEN) run_parts(p, t);
        sleep_now = (st & STATE_YIELD) != 0;
        atomic_fetch_sub_explicit(&p->active, 1, memory_order_release);
    }
    return NULL;
}

static void stop_workers(struct tc__pool *p, size_t started) {
    atomic_store(&p->stop, true);
    atomic_fetch_add(&p->seq, 1);
    futex_wake_all(&p->seq);
    for (size_t t = 1; t < started; t++) pthread_join(p->tids[t], NULL);
}

tc__pool_t tc__pool_create(size_t threads) {
    if (threads == 0) {
        const long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (size_t)n : 1;
    }
    if (threads > 4096) return NULL;
    struct tc__pool *p = calloc(1, sizeof *p);
    if (p == NULL) return NULL;
    p->threads = threads;
    p->tids = calloc(threads, sizeof *p->tids);
    p->parts = aligned_alloc(64, threads * sizeof *p->parts);
    if (p->tids == NULL || p->parts == NULL || pthread_mutex_init(&p->call_mutex, NULL) != 0) {
        free(p->tids);
        free(p->parts);
        free(p);
        return NULL;
    }
    for (size_t t = 0; t < threads; t++) {
        atomic_init(&p->parts[t].left, 0);
        atomic_init(&p->parts[t].back, 0);
        p->parts[t].front = 0;
    }
    atomic_init(&p->seq, 0);
    atomic_init(&p->state, 0);
    atomic_init(&p->active, 0);
    atomic_init(&p->sleepers, 0);
    atomic_init(&p->stop, false);
    atomic_init(&p->hold, 0);
    for (size_t t = 1; t < threads; t++) {
        worker_arg *wa = malloc(sizeof *wa);
        if (wa != NULL) *wa = (worker_arg){.pool = p, .index = t};
        if (wa == NULL || pthread_create(&p->tids[t], NULL, worker_main, wa) != 0) {
            free(wa);
            stop_workers(p, t);
            pthread_mutex_destroy(&p->call_mutex);
            free(p->tids);
            free(p->parts);
            free(p);
            return NULL;
        }
    }
    return p;
}

void tc__pool_destroy(tc__pool_t p) {
    if (p == NULL) return;
    stop_workers(p, p->threads);
    pthread_mutex_destroy(&p->call_mutex);
    free(p->tids);
    free(p->parts);
    free(p);
}

void tc__pool_hold_workers(tc__pool_t p, int hold) {
    if (p) atomic_store(&p->hold, hold != 0);
}

size_t tc__pool_get_threads_count(tc__pool_t p) { return p ? p->threads : 1; }

/* Runs items [0, n) of job j on p (or in the caller when there is nothing to share). */
static void run_call(struct tc__pool *p, const pool_job *j, size_t n, uint32_t flags) {
    if (n == 0) return;
    if (p == NULL || p->threads < 2 || n == 1) {
        for (size_t k = 0; k < n; k++) run_item(j, 0, k);
        return;
    }
    pthread_mutex_lock(&p->call_mutex);
    p->job = *j;
    const size_t T = p->threads, base = n / T, extra = n % T;
    size_t start = 0;
    for (size_t t = 0; t < T; t++) {
        const size_t count = base + (t < extra ? 1 : 0);
        p->parts[t].front = start;
        atomic_store_explicit(&p->parts[t].back, start + count, memory_order_relaxed);
        atomic_store_explicit(&p->parts[t].left, count, memory_order_relaxed);
        start += count;
    }
    p->gen++;
    const uint64_t yield = (flags & TC__POOL_FLAG_YIELD_WORKERS) ? STATE_YIELD : 0;
    atomic_store(&p->state, (p->gen << STATE_GEN_SHIFT) | yield | STATE_OPEN);
    atomic_fetch_add(&p->seq, 1);
    if (atomic_load(&p->sleepers) > 0) futex_wake_all(&p->seq);
    run_parts(p, 0);
    atomic_store(&p->state, (p->gen << STATE_GEN_SHIFT) | yield);
    for (unsigned k = 1; atomic_load(&p->active) != 0; k++) {
        if (k < 4096) cpu_relax();
        else sched_yield();
    }
    atomic_thread_fence(memory_order_acquire);
    pthread_mutex_unlock(&p->call_mutex);
}

void tc__pool_parallelize_1d(tc__pool_t p, tc__pool_task_1d_t fn, void *ctx, size_t range, uint32_t flags) {
    const pool_job j = {.kind = JOB_1D, .fn.d1 = fn, .ctx = ctx, .range = range};
    run_call(p, &j, range, flags);
}

void tc__pool_parallelize_1d_with_thread(tc__pool_t p, tc__pool_task_1d_with_thread_t fn, void *ctx, size_t range,
                                         uint32_t flags) {
    const pool_job j = {.kind = JOB_1D_WITH_THREAD, .fn.d1w = fn, .ctx = ctx, .range = range};
    run_call(p, &j, range, flags);
}

void tc__pool_parallelize_1d_tile_1d(tc__pool_t p, tc__pool_task_1d_tile_1d_t fn, void *ctx, size_t range,
                                     size_t tile, uint32_t flags) {
    if (tile == 0) tile = 1;
    const pool_job j = {.kind = JOB_1D_TILE_1D, .fn.d1t = fn, .ctx = ctx, .range = range, .tile = tile};
    run_call(p, &j, range / tile + (range % tile != 0), flags);
}

void tc__pool_parallelize_2d(tc__pool_t p, tc__pool_task_2d_t fn, void *ctx, size_t range_i, size_t range_j,
                             uint32_t flags) {
    if (range_i == 0 || range_j == 0) return;
    if (range_i > SIZE_MAX / range_j) { /* more items than a size_t counts: row by row */
        for (size_t i = 0; i < range_i; i++)
            for (size_t jj = 0; jj < range_j; jj++) fn(ctx, i, jj);
        return;
    }
    const pool_job j = {.kind = JOB_2D, .fn.d2 = fn, .ctx = ctx, .range = range_i, .range_j = range_j,
                        .per_i = range_j};
    run_call(p, &j, range_i * range_j, flags);
}

void tc__pool_parallelize_2d_tile_1d(tc__pool_t p, tc__pool_task_2d_tile_1d_t fn, void *ctx, size_t range_i,
                                     size_t range_j, size_t tile_j, uint32_t flags) {
    if (range_i == 0 || range_j == 0) return;
    if (tile_j == 0) tile_j = 1;
    const size_t tiles = range_j / tile_j + (range_j % tile_j != 0);
    if (range_i > SIZE_MAX / tiles) { /* more items than a size_t counts: row by row */
        for (size_t i = 0; i < range_i; i++)
            for (size_t s = 0; s < range_j; s += tile_j) fn(ctx, i, s, range_j - s < tile_j ? range_j - s : tile_j);
        return;
    }
    const pool_job j = {.kind = JOB_2D_TILE_1D, .fn.d2t = fn, .ctx = ctx, .range = range_i, .range_j = range_j,
                        .tile = tile_j, .per_i = tiles};
    run_call(p, &j, range_i * tiles, flags);
}
