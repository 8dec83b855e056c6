/* memory_plan.c - greedy-by-size offset assignment over buffer lifetimes (see memory_plan.h). */
#include "engine/memory_plan.h"

#include <stdlib.h>

typedef struct group {
    uint64_t size;
    int32_t first, last;
    uint64_t offset;
    int placed;
} group;

static int32_t root_of(const tc__mem_req *reqs, int n, int32_t i) {
    for (int steps = 0; reqs[i].alias_of >= 0; steps++) {
        if (steps > n || reqs[i].alias_of >= n) return -1;
        i = reqs[i].alias_of;
    }
    return i;
}

static int by_size_desc(const void *a, const void *b, void *base) {
    const group *groups = base;
    const group *x = &groups[*(const int32_t *)a], *y = &groups[*(const int32_t *)b];
    if (x->size != y->size) return x->size < y->size ? 1 : -1;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    return *(const int32_t *)a - *(const int32_t *)b;
}

tc_status tc__memory_plan(const tc__mem_req *reqs, int n, uint64_t align, uint64_t *offsets, uint64_t *arena_bytes,
                          tc__err *err) {
    *arena_bytes = 0;
    if (n <= 0) return TC_STATUS_OK;
    if (align == 0 || (align & (align - 1))) return tc__fail(err, TC_STATUS_INTERNAL, "bad alignment %llu", (unsigned long long)align);
    group *groups = calloc((size_t)n, sizeof *groups);
    int32_t *root = malloc(sizeof(int32_t) * (size_t)n);
    int32_t *order = malloc(sizeof(int32_t) * (size_t)n);
    if (!groups || !root || !order) {
        free(groups), free(root), free(order);
        return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory planning memory");
    }
    tc_status st = TC_STATUS_OK;
    for (int i = 0; i < n; i++) {
        groups[i].first = INT32_MAX;
        groups[i].last = -1;
    }
    for (int i = 0; i < n && st == TC_STATUS_OK; i++) {
        root[i] = root_of(reqs, n, i);
        if (root[i] < 0) {
            st = tc__fail(err, TC_STATUS_INTERNAL, "memory plan: alias cycle at buffer %d", i);
            break;
        }
        group *gr = &groups[root[i]];
        uint64_t sz = (reqs[i].size + align - 1) & ~(align - 1);
        if (sz < reqs[i].size) {
            st = tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "memory plan: buffer %d is too large", i);
            break;
        }
        if (sz > gr->size) gr->size = sz;
        if (reqs[i].size > 0) {
            if (reqs[i].first < gr->first) gr->first = reqs[i].first;
            if (reqs[i].last > gr->last) gr->last = reqs[i].last;
        }
    }
    int m = 0;
    for (int i = 0; i < n && st == TC_STATUS_OK; i++)
        if (root[i] == i && groups[i].size > 0) order[m++] = i;
    if (st == TC_STATUS_OK) {
        qsort_r(order, (size_t)m, sizeof *order, by_size_desc, groups);
    }
    /* Place each group at the lowest gap among overlapping, already-placed groups (placed in
     * order of offset by a simple insertion list). */
    int32_t *placed = malloc(sizeof(int32_t) * (size_t)(m ? m : 1));
    if (placed == NULL && st == TC_STATUS_OK) st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    int np = 0;
    uint64_t total = 0;
    for (int k = 0; k < m && st == TC_STATUS_OK; k++) {
        group *gr = &groups[order[k]];
        uint64_t best = 0;
        /* placed[] is sorted by offset: walk it, skipping groups whose lifetimes do not intersect. */
        for (int j = 0; j < np; j++) {
            const group *o = &groups[placed[j]];
            if (o->last < gr->first || o->first > gr->last) continue;
            if (o->offset >= best + gr->size) break; /* the gap before o fits */
            if (o->offset + o->size > best) best = o->offset + o->size;
        }
        gr->offset = best;
        gr->placed = 1;
        int pos = np;
        while (pos > 0 && groups[placed[pos - 1]].offset > best) {
            placed[pos] = placed[pos - 1];
            pos--;
        }
        placed[pos] = order[k];
        np++;
        if (best + gr->size > total) total = best + gr->size;
    }
    if (st == TC_STATUS_OK) {
        for (int i = 0; i < n; i++) offsets[i] = groups[root[i]].offset;
        *arena_bytes = total;
    }
    free(placed);
    free(groups);
    free(root);
    free(order);
    return st;
}
