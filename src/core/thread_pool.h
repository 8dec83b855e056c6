/*
 * thread_pool.h - tailcut's CPU thread pool: parallel loops over 1-D and 2-D index ranges, run by the
 * calling thread and the pool's workers together. The API follows pthreadpool's (the library it replaces;
 * kernels were written against it), with one difference that matters for tail latency on a busy machine:
 *
 *   a call returns as soon as every item has run, whether or not every worker showed up.
 *
 * pthreadpool's call waits until each worker has woken, taken part and checked out, even when the others did
 * all the work; with more runnable threads than cores (a neighbour compiling, two models, a container
 * sharing its CPUs), a descheduled worker stalls each parallel step for a scheduler time slice. Measured on
 * the 2-core machine while another job ran: ResNet-50 at 2 threads 3.6x onnxruntime's latency, whose pool
 * lets the caller take back work a late worker has not started (docs/performance-history.md, "thread pool").
 *
 * Here the range is cut into one contiguous part per thread; each thread runs its own part from the front
 * and then steals single items from the backs of the others'. The caller does the same, so the parts of
 * workers that have not woken are done by whoever is running. A worker that wakes after the items are all
 * taken leaves without touching the call; the caller only waits for workers that took an item and are
 * still running it. Which thread runs which item is not fixed: kernels must not depend on it (they never
 * have: pthreadpool steals too). Calls on one pool are serialised (a mutex), as pthreadpool's are; an item
 * must not call into the pool that runs it.
 *
 * Idle workers spin for a short while (TC__POOL_SPIN_NS) for the next call, then sleep on a futex.
 * TC__POOL_FLAG_YIELD_WORKERS sends them to sleep as soon as the call's items are taken.
 */
#ifndef TC_CORE_THREAD_POOL_H
#define TC_CORE_THREAD_POOL_H

#include <stddef.h>
#include <stdint.h>

typedef struct tc__pool *tc__pool_t;

/* After this call, workers sleep at once instead of spinning for the next call. */
#define TC__POOL_FLAG_YIELD_WORKERS 0x2u

/* How long an idle worker spins for the next call before it sleeps, in nanoseconds. */
#define TC__POOL_SPIN_NS 200000u

typedef void (*tc__pool_task_1d_t)(void *ctx, size_t i);
typedef void (*tc__pool_task_1d_tile_1d_t)(void *ctx, size_t start, size_t count);
typedef void (*tc__pool_task_2d_t)(void *ctx, size_t i, size_t j);
typedef void (*tc__pool_task_2d_tile_1d_t)(void *ctx, size_t i, size_t start_j, size_t count_j);
typedef void (*tc__pool_task_1d_with_thread_t)(void *ctx, size_t thread, size_t i);

/* A pool of `threads` threads in all, the caller included (threads - 1 workers); 0: one per online CPU.
 * NULL when threads or memory cannot be had. */
tc__pool_t tc__pool_create(size_t threads);

/* Stops and joins the workers; NULL is fine. No call may be running on the pool. */
void tc__pool_destroy(tc__pool_t pool);

/* Threads that run a call (the caller included): 1 for NULL. */
size_t tc__pool_get_threads_count(tc__pool_t pool);

/* fn(ctx, i) for i in [0, range). A NULL pool (or a 1-thread pool, or range 1) runs them in the caller. */
void tc__pool_parallelize_1d(tc__pool_t pool, tc__pool_task_1d_t fn, void *ctx, size_t range, uint32_t flags);

/* fn(ctx, thread, i) for i in [0, range), where thread (< tc__pool_get_threads_count) names the thread running
 * the item: no two items with the same thread run at once, so an item may use per-thread state (a packing
 * buffer) indexed by it. Items still go to whichever thread is free. */
void tc__pool_parallelize_1d_with_thread(tc__pool_t pool, tc__pool_task_1d_with_thread_t fn, void *ctx, size_t range,
                                         uint32_t flags);

/* fn(ctx, start, min(tile, range - start)) for start = 0, tile, 2*tile, ... < range. */
void tc__pool_parallelize_1d_tile_1d(tc__pool_t pool, tc__pool_task_1d_tile_1d_t fn, void *ctx, size_t range,
                                     size_t tile, uint32_t flags);

/* fn(ctx, i, j) for i in [0, range_i), j in [0, range_j). */
void tc__pool_parallelize_2d(tc__pool_t pool, tc__pool_task_2d_t fn, void *ctx, size_t range_i, size_t range_j,
                             uint32_t flags);

/* fn(ctx, i, start_j, min(tile_j, range_j - start_j)) for i in [0, range_i), start_j = 0, tile_j, ... */
void tc__pool_parallelize_2d_tile_1d(tc__pool_t pool, tc__pool_task_2d_tile_1d_t fn, void *ctx, size_t range_i,
                                     size_t range_j, size_t tile_j, uint32_t flags);

/* For tests: while held, a worker that wakes for a call waits (yielding) before it joins, as a descheduled one
 * would; calls meanwhile run on the caller alone. */
void tc__pool_hold_workers(tc__pool_t pool, int hold);

#endif
