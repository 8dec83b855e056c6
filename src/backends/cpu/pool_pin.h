/*
 * pool_pin.h - pins a thread pool's worker threads each to one CPU of the process's affinity mask, so that the OS
 * does not migrate them mid-run (issue 30). The calling thread (which pthreadpool also runs work on) is the
 * application's and is left as it is.
 *
 * Policy (tc__pool_pin_wanted): TAILCUT_PIN_THREADS=0 never pins, =1 always pins (for measuring), unset or anything
 * else pins when the CPU budget comes from the affinity mask (taskset, numactl, a Kubernetes static cpuset).
 */
#ifndef TC_BACKENDS_CPU_POOL_PIN_H
#define TC_BACKENDS_CPU_POOL_PIN_H

#include <stdbool.h>

#include <pthreadpool.h>

/* Whether a new pool's workers are pinned (the policy above; the environment is read on every call). */
bool tc__pool_pin_wanted(void);

/* Pins pool's workers to distinct CPUs of the calling thread's affinity mask (round robin when there are more workers
 * than CPUs; the first CPU of the mask is left to the calling thread). Returns the number of workers pinned (0 when
 * the pool has none, or the mask cannot be read). Must not run concurrently with other work on pool. */
int tc__pool_pin_workers(pthreadpool_t pool);

#endif
