/* test_thread_pool.c - core/thread_pool.h: every item of every loop shape runs exactly once with the right
 * arguments (ranges 0, 1, primes, more items than threads and fewer, tiles that do not divide), on pools of 1 to 9
 * threads (more than this machine's CPUs) and on NULL; a call returns with all items done while the workers are held
 * back (a descheduled worker does not stall it); held workers that wake later join the next call; long runs of calls
 * with and without the yield flag, from two pools at once. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/thread_pool.h"

enum { MAX_ITEMS = 5000 };

typedef struct counts {
    atomic_int hit[MAX_ITEMS];
    size_t range_i, range_j, tile;
    atomic_int bad;
    pthread_t caller;
    atomic_int by_caller, by_workers;
} counts;

static void reset(counts *c, size_t ri, size_t rj, size_t tile) {
    for (size_t k = 0; k < MAX_ITEMS; k++) atomic_init(&c->hit[k], 0);
    c->range_i = ri;
    c->range_j = rj;
    c->tile = tile;
    atomic_init(&c->bad, 0);
    atomic_init(&c->by_caller, 0);
    atomic_init(&c->by_workers, 0);
    c->caller = pthread_self();
}

static void who(counts *c) {
    if (pthread_equal(pthread_self(), c->caller)) atomic_fetch_add(&c->by_caller, 1);
    else atomic_fetch_add(&c->by_workers, 1);
}

static void task_1d(void *ctx, size_t i) {
    counts *c = ctx;
    who(c);
    if (i >= c->range_i) atomic_fetch_add(&c->bad, 1);
    else atomic_fetch_add(&c->hit[i], 1);
}

static void task_1d_tile(void *ctx, size_t start, size_t n) {
    counts *c = ctx;
    who(c);
    if (start % c->tile != 0 || n == 0 || n > c->tile || start + n > c->range_i ||
        (n < c->tile && start + n != c->range_i))
        atomic_fetch_add(&c->bad, 1);
    else
        for (size_t k = start; k < start + n; k++) atomic_fetch_add(&c->hit[k], 1);
}

static void task_2d(void *ctx, size_t i, size_t j) {
    counts *c = ctx;
    who(c);
    if (i >= c->range_i || j >= c->range_j) atomic_fetch_add(&c->bad, 1);
    else atomic_fetch_add(&c->hit[i * c->range_j + j], 1);
}

static void task_2d_tile(void *ctx, size_t i, size_t start, size_t n) {
    counts *c = ctx;
    who(c);
    if (i >= c->range_i || start % c->tile != 0 || n == 0 || n > c->tile || start + n > c->range_j ||
        (n < c->tile && start + n != c->range_j))
        atomic_fetch_add(&c->bad, 1);
    else
        for (size_t k = start; k < start + n; k++) atomic_fetch_add(&c->hit[i * c->range_j + k], 1);
}

static void expect_once(counts *c, size_t n) {
    assert_int_equal(atomic_load(&c->bad), 0);
    for (size_t k = 0; k < n; k++) {
        if (atomic_load(&c->hit[k]) != 1) fail_msg("item %zu ran %d times", k, atomic_load(&c->hit[k]));
    }
    for (size_t k = n; k < MAX_ITEMS; k++) assert_int_equal(atomic_load(&c->hit[k]), 0);
}

static void run_all_shapes(tc__pool_t pool, counts *c) {
    static const size_t ranges[] = {0, 1, 2, 3, 7, 64, 97, 1000, 4999};
    for (size_t a = 0; a < sizeof ranges / sizeof ranges[0]; a++) {
        const size_t r = ranges[a];
        reset(c, r, 0, 1);
        tc__pool_parallelize_1d(pool, task_1d, c, r, 0);
        expect_once(c, r);
        for (size_t tile = 1; tile <= 9; tile += 4) {
            reset(c, r, 0, tile);
            tc__pool_parallelize_1d_tile_1d(pool, task_1d_tile, c, r, tile, a % 2 ? TC__POOL_FLAG_YIELD_WORKERS : 0);
            expect_once(c, r);
        }
    }
    static const size_t dims[][2] = {{0, 5}, {5, 0}, {1, 1}, {3, 7}, {13, 1}, {1, 13}, {31, 37}, {50, 99}};
    for (size_t a = 0; a < sizeof dims / sizeof dims[0]; a++) {
        const size_t ri = dims[a][0], rj = dims[a][1];
        reset(c, ri, rj, 1);
        tc__pool_parallelize_2d(pool, task_2d, c, ri, rj, 0);
        expect_once(c, ri * rj);
        for (size_t tile = 1; tile <= 16; tile += 5) {
            reset(c, ri, rj, tile);
            tc__pool_parallelize_2d_tile_1d(pool, task_2d_tile, c, ri, rj, tile, 0);
            expect_once(c, ri * rj);
        }
    }
}

static counts g_counts;

static void test_every_item_once(void **state) {
    (void)state;
    run_all_shapes(NULL, &g_counts);
    static const size_t threads[] = {1, 2, 3, 4, 9};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        tc__pool_t pool = tc__pool_create(threads[t]);
        assert_non_null(pool);
        assert_int_equal(tc__pool_get_threads_count(pool), threads[t]);
        run_all_shapes(pool, &g_counts);
        tc__pool_destroy(pool);
    }
    assert_int_equal(tc__pool_get_threads_count(NULL), 1);
    tc__pool_destroy(NULL);
}

/* Items that wait (bounded) until `want` threads have arrived: proves that workers take part. */
typedef struct meet {
    atomic_int arrived;
    int want;
    atomic_int met;
} meet;

static void meet_item(void *ctx, size_t i) {
    (void)i;
    meet *m = ctx;
    atomic_fetch_add(&m->arrived, 1);
    for (long k = 0; k < 200000000L && atomic_load(&m->arrived) < m->want; k++) sched_yield();
    if (atomic_load(&m->arrived) >= m->want) atomic_fetch_add(&m->met, 1);
}

static void test_held_workers_do_not_stall(void **state) {
    (void)state;
    counts *c = &g_counts;
    tc__pool_t pool = tc__pool_create(3);
    assert_non_null(pool);
    tc__pool_hold_workers(pool, 1);
    for (int round = 0; round < 50; round++) {
        reset(c, 1000, 0, 1);
        tc__pool_parallelize_1d(pool, task_1d, c, 1000, round % 3 == 0 ? TC__POOL_FLAG_YIELD_WORKERS : 0);
        expect_once(c, 1000); /* returned, everything done, by the caller alone */
        assert_int_equal(atomic_load(&c->by_caller), 1000);
        assert_int_equal(atomic_load(&c->by_workers), 0);
    }
    tc__pool_hold_workers(pool, 0);
    /* Released, the workers take part again: 3 items that each wait for all 3 threads complete together. */
    meet m = {.want = 3};
    atomic_init(&m.arrived, 0);
    atomic_init(&m.met, 0);
    tc__pool_parallelize_1d(pool, meet_item, &m, 3, 0);
    assert_int_equal(atomic_load(&m.met), 3);
    reset(c, 4999, 0, 1);
    tc__pool_parallelize_1d(pool, task_1d, c, 4999, 0);
    expect_once(c, 4999);
    tc__pool_destroy(pool);
}

typedef struct stress_arg {
    tc__pool_t pool;
    counts c;
    int failures;
} stress_arg;

static void *stress_thread(void *arg) {
    stress_arg *s = arg;
    for (int round = 0; round < 3000; round++) {
        const size_t n = 1 + (size_t)(round * 7919) % 300;
        reset(&s->c, n, 0, 1);
        tc__pool_parallelize_1d(s->pool, task_1d, &s->c, n, round % 5 == 0 ? TC__POOL_FLAG_YIELD_WORKERS : 0);
        if (atomic_load(&s->c.bad) != 0) s->failures++;
        for (size_t k = 0; k < n; k++)
            if (atomic_load(&s->c.hit[k]) != 1) s->failures++;
    }
    return NULL;
}

/* Two pools driven at once from two threads (more threads than CPUs), many short calls each. */
static void test_stress_two_pools(void **state) {
    (void)state;
    static stress_arg s[2];
    pthread_t th[2];
    for (int k = 0; k < 2; k++) {
        s[k].pool = tc__pool_create(2 + (size_t)k);
        assert_non_null(s[k].pool);
        s[k].failures = 0;
        assert_int_equal(pthread_create(&th[k], NULL, stress_thread, &s[k]), 0);
    }
    for (int k = 0; k < 2; k++) {
        assert_int_equal(pthread_join(th[k], NULL), 0);
        assert_int_equal(s[k].failures, 0);
        tc__pool_destroy(s[k].pool);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_item_once),
        cmocka_unit_test(test_held_workers_do_not_stall),
        cmocka_unit_test(test_stress_two_pools),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
