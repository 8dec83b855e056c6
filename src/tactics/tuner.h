/*
 * tuner.h - the auto-tuner: times every candidate tactic of a step on this machine (a warm-up
 * round, then rounds of one run of each candidate, interleaved: minimum, median and maximum) and
 * remembers results in a timing cache keyed by the target fingerprint and the step's signature,
 * so rebuilds skip the timing.
 *
 * Candidates are ranked by their fastest run. Interference (another process on a core, a pool
 * worker descheduled mid-run) only ever adds time, and on a busy machine it adds most to the
 * multi-threaded tactics: ranked by median, a build on a loaded 2-core machine chose the
 * single-threaded reference and scalar kernels for most of ResNet-50 (3x slower when quiet).
 */
#ifndef TC_TACTICS_TUNER_H
#define TC_TACTICS_TUNER_H

#include "backends/backend.h"
#include "backends/tactic.h"

#define TC__TUNE_MAX_CANDIDATES 40

typedef struct tc__tune_entry {
    char name[32];
    uint64_t min_ns;    /* fastest run: what candidates are ranked by; UINT64_MAX: not timed (cut off,
                           or heuristic choice) */
    uint64_t median_ns; /* UINT64_MAX as min_ns */
    uint64_t max_ns;
    int32_t config;     /* which of the tactic's configurations for the step (tc__tactic.configs), -1: none */
} tc__tune_entry;

/* A tactic of the step's op that was not a candidate, and why (for inspect --verbose, as oneDNN's verbose mode). */
typedef struct tc__tune_reject {
    char name[32];
    char why[96];
} tc__tune_reject;

typedef struct tc__tune_result {
    int n;
    tc__tune_entry cand[TC__TUNE_MAX_CANDIDATES];
    int winner; /* index into cand */
    int n_rejected;
    tc__tune_reject rejected[TC__TUNE_MAX_CANDIDATES];
} tc__tune_result;

/* A step signature for the timing cache: op, attributes, shapes, constness, epilogue. */
uint64_t tc__step_signature(const tc__step_desc *d);

/*
 * Times candidates, in the backend list's order (the fallback ones, the reference kernels, last; a tactic with
 * configurations, tactic.h, is one candidate per configuration: entries of its name with config 0, 1, ...), on random
 * non-zero inputs at the desc's shapes; constant inputs use the desc's data (packed per tactic). Fills out with the min, median and max per candidate and the winner
 * (least min). `runs` rounds of one timed run of each candidate after a warm-up round; a candidate
 * twice slower than 4x another's best so far runs no more.
 *
 * be: the candidates' backend, pool its execution handle. On a host backend (or be NULL) each candidate is timed by
 * its own backend's clock. On a device backend (be->mem == TC__MEM_DEVICE; every candidate be's, pool an exec of
 * be's) the candidates run on device copies of the inputs (uploaded once and
 * shared; each candidate's packed constant inputs its own), with device outputs and scratch and ctx->host_in the
 * inputs' host view (constant ones with data); a sample is several launches between be's timer events (enough for
 * about 20 us, at most 64, chosen in the warm-up), its time the elapsed over the launches.
 */
tc_status tc__tune_step(const tc__step_desc *d, const tc__tactic *const *cands, int n, int runs, const tc__backend *be,
                        void *pool, tc__tune_result *out, tc__err *err);

/* The same on a step whose constant inputs are already packed (the engine after packing its weights: the
 * configurations of a step's chosen tactic timed again with the attributes the FP16 chains gave it); the candidates
 * must share their packing (TC_STATUS_INTERNAL otherwise). */
tc_status tc__tune_step_packed(const tc__step_desc *d, const tc__tactic *const *cands, int n, int runs,
                               const tc__backend *be, void *pool, tc__tune_result *out, tc__err *err);

/*
 * Whether tactic t computes the same output bytes as its proof (tactic.h) on step d: both run once on the same
 * random inputs (each with its own packing). *same is true when t has no proof; false when either fails to run.
 */
tc_status tc__tactic_proven(const tc__step_desc *d, const tc__tactic *t, void *pool, bool *same, tc__err *err);

/* The same on a step whose constant inputs are already packed for t (the engine after packing its weights): t and
 * its proof must share the packing (TC_STATUS_INTERNAL otherwise). */
tc_status tc__tactic_proven_packed(const tc__step_desc *d, const tc__tactic *t, void *pool, bool *same, tc__err *err);

/* Timing cache: entries per (fingerprint, signature). */
typedef struct tc__timing_cache tc__timing_cache;

/* Loads path (missing file = empty cache); entries of another fingerprint are ignored. */
tc_status tc__timing_cache_load(const char *path, uint64_t fingerprint, tc__timing_cache **out, tc__err *err);
const tc__tune_result *tc__timing_cache_find(const tc__timing_cache *c, uint64_t signature);
tc_status tc__timing_cache_put(tc__timing_cache *c, uint64_t signature, const tc__tune_result *r, tc__err *err);
tc_status tc__timing_cache_save(const tc__timing_cache *c, const char *path, tc__err *err);
void tc__timing_cache_free(tc__timing_cache *c);

#endif
