/*
 * chain_choice.h - chain-aware precision choice (TensorRT times reformats with each tactic; this is our narrow
 * version of it). The tuner times each step alone: a reduced-precision (INT8) candidate then pays for quantizing
 * its FP32 input, which the chain (lowp_chain.c) removes when its producer is reduced too. Along each path of
 * steps that could chain (every step the only reader of the previous one's output), this picks per step the other
 * (FP32) candidate, the best reduced one that chains, or the best reduced one that does not chain (the AVX2 u8w7
 * variant), for the least total time, where a chaining reduced step after a chaining reduced one costs its chained
 * time.
 */
#ifndef TC_ENGINE_CHAIN_CHOICE_H
#define TC_ENGINE_CHAIN_CHOICE_H

#include <stdbool.h>
#include <stdint.h>

/* One step's times (ns; UINT64_MAX: no such candidate) and its link. */
typedef struct tc__chain_cost {
    uint64_t lowp;         /* the best reduced-precision candidate that chains, alone (quantizing its input) */
    uint64_t lowp_chained; /* the same when its input is the producer's image (used when `link` is in TC__CHAIN_LOWP) */
    uint64_t other;        /* the best other candidate */
    int32_t link;          /* the step (index < this one) whose image this one would read, or -1 */
    uint64_t solo;         /* the best reduced-precision candidate that does not chain */
} tc__chain_cost;

/* The choice for a step. */
enum { TC__CHAIN_OTHER = 0, TC__CHAIN_LOWP = 1, TC__CHAIN_SOLO = 2 };

/* a + b, saturating at UINT64_MAX (a time that is not known). */
static inline uint64_t tc__add_sat_u64(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

/* Sets choice[i] (TC__CHAIN_*) for each of the n steps: the least summed time over each chained path. */
void tc__chain_choose(int n, const tc__chain_cost *c, uint8_t *choice);

#endif
