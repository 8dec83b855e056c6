/*
 * memory_plan.h - assigns arena offsets to activation buffers from their lifetimes
 * (greedy by size: largest first, each placed at the lowest offset that does not overlap
 * any already-placed buffer whose lifetime intersects its own).
 */
#ifndef TC_ENGINE_MEMORY_PLAN_H
#define TC_ENGINE_MEMORY_PLAN_H

#include <stdint.h>

#include "core/error.h"

typedef struct tc__mem_req {
    uint64_t size;     /* bytes; 0 = needs no space */
    int32_t first;     /* step that writes it (or 0 if live from the start) */
    int32_t last;      /* last step that reads it */
    int32_t alias_of;  /* index of another request whose buffer this one reuses in place, or -1 */
} tc__mem_req;

/*
 * Fills offsets[0..n) (aligned to align, a power of two) and *arena_bytes. An aliased request
 * shares its target's offset; the pair's lifetime is the union and its size the maximum.
 * Requests form alias chains only towards lower indices or any acyclic order (cycles are an error).
 */
tc_status tc__memory_plan(const tc__mem_req *reqs, int n, uint64_t align, uint64_t *offsets, uint64_t *arena_bytes,
                          tc__err *err);

#endif
