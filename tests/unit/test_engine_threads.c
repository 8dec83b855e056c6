/*
 * test_engine_threads.c - threads of execution contexts: contexts sharing one tc_thread_pool add
 * no kernel threads beyond the pool's (counted in /proc/self/status), contexts with their own pools
 * each add theirs, and contexts sharing a pool give the reference results while they run at the
 * same time from different threads; tc_context_set_threads gives a context its own pool back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "engine_test_model.h"

#define N_CTX 4
#define RUNS 25

/* Threads of this process, from /proc/self/status. */
static int process_threads(void) {
    FILE *f = fopen("/proc/self/status", "r");
    assert_non_null(f);
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1) break;
    fclose(f);
    assert_true(n > 0);
    return n;
}

/* Threads of this process once they settle on want: a joined thread's exit may still be counted for a moment
 * (pthread_join returns when the kernel clears its tid, before it leaves the thread group), so this waits up to
 * a second for the count to reach want and returns the last count. */
static int process_threads_settled(int want) {
    int n = process_threads();
    for (int i = 0; i < 100 && n != want; i++) {
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
        n = process_threads();
    }
    return n;
}

typedef struct runner {
    tc_context *ctx;
    const tc_tensor *x;
    const tc_tensor *want;
    int failures;
} runner;

static void *run_many(void *arg) {
    runner *r = arg;
    float y[5 * 4];
    for (int i = 0; i < RUNS; i++) {
        if (tc_context_set_input_shape(r->ctx, "x", 4, r->x->dims) || tc_context_set_tensor(r->ctx, "x", r->x->data, r->x->nbytes) ||
            tc_context_set_tensor(r->ctx, "y", y, sizeof y) || tc_context_run(r->ctx)) {
            r->failures++;
            continue;
        }
        const float *want = r->want->data;
        for (size_t k = 0; k < r->want->nbytes / sizeof(float); k++)
            if (fabsf(y[k] - want[k]) > 1e-4f * (1.0f + fabsf(want[k]))) r->failures++;
    }
    return NULL;
}

static void test_shared_pool_bounds_threads(void **state) {
    (void)state;
    tc_model *m = etm_model();
    tc_engine *e = etm_engine(m, 1, 2, 4, 0);
    tc_thread_pool *pool = NULL;
    assert_int_equal(tc_thread_pool_create(2, &pool, NULL), TC_STATUS_OK);
    assert_int_equal(tc_thread_pool_threads(pool), 2);
    const int base = process_threads(); /* the pool's worker is already counted */
    tc_context *c[N_CTX];
    for (int i = 0; i < N_CTX; i++) {
        assert_int_equal(tc_context_create(e, 0, &c[i], NULL), TC_STATUS_OK);
        assert_int_equal(tc_context_set_threads(c[i], 2), TC_STATUS_OK);
    }
    assert_int_equal(process_threads(), base + N_CTX); /* own pools: one worker each */
    for (int i = 0; i < N_CTX; i++) assert_int_equal(tc_context_set_thread_pool(c[i], pool), TC_STATUS_OK);
    assert_int_equal(process_threads(), base); /* shared: nothing beyond the pool's worker */

    tc_tensor x[2] = {etm_input(3), etm_input(4)};
    tc_tensor want[2] = {etm_reference(m, &x[0]), etm_reference(m, &x[1])};
    runner r[2] = {{c[0], &x[0], &want[0], 0}, {c[1], &x[1], &want[1], 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&t[i], NULL, run_many, &r[i]), 0);
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(r[0].failures, 0);
    assert_int_equal(r[1].failures, 0);
    assert_int_equal(process_threads_settled(base), base);

    assert_int_equal(tc_context_set_threads(c[0], 2), TC_STATUS_OK); /* back to its own pool */
    assert_int_equal(process_threads(), base + 1);
    run_many(&r[0]);
    assert_int_equal(r[0].failures, 0);

    assert_int_equal(tc_context_set_thread_pool(c[0], NULL), TC_STATUS_INVALID_ARGUMENT);
    tc_thread_pool *bad = NULL;
    assert_int_equal(tc_thread_pool_create(-1, &bad, NULL), TC_STATUS_INVALID_ARGUMENT);
    assert_null(bad);
    for (int i = 0; i < N_CTX; i++) tc_context_destroy(c[i]);
    tc_thread_pool_destroy(pool);
    for (int i = 0; i < 2; i++) {
        tc_tensor_free(&x[i]);
        tc_tensor_free(&want[i]);
    }
    tc_engine_destroy(e);
    tc_model_destroy(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_shared_pool_bounds_threads)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
