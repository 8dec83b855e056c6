/*
 * pool_pin.h - pins a thread pool's worker threads each to one CPU of the process's affinity mask, so that the OS
 * does not migrate them mid-run (issue 30). The calling thread (which the pool also runs work on) is the
 * application's and is left as it is.
 *
 * Policy (tc__pool_pin_wanted): TAILCUT_PIN_THREADS=1 pins, anything else (unset) does not. Issue 30 asked to pin by
 * default when the CPU budget comes from the affinity mask, if that helps P99: measured on the 2-CPU machine
 * (docs/performance-history.md, "CPU budget"), pinning changed ResNet-50's P99 by 1.016x, 0.795x and 1.023x in three interleaved
 * runs: no consistent gain, so it stays opt-in until a larger machine shows one.
 */
#ifndef TC_BACKENDS_CPU_POOL_PIN_H
#define TC_BACKENDS_CPU_POOL_PIN_H

#include <stdbool.h>

#include "core/thread_pool.h"

/* Whether a new pool's workers are pinned (the policy above; the environment is read on every call). */
bool tc__pool_pin_wanted(void);

/* Pins pool's workers to distinct CPUs of the calling thread's affinity mask (round robin when there are more workers
 * than CPUs; the first CPU of the mask is left to the calling thread). Returns the number of workers pinned (0 when
 * the pool has none, or the mask cannot be read). Must not run concurrently with other work on pool. */
int tc__pool_pin_workers(tc__pool_t pool);

#endif
