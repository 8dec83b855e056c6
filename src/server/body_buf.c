/* body_buf.c - request body buffers of `tailcut serve` (see body_buf.h): heap blocks for small bodies, growable
 * anonymous mappings for large ones. */
#include "body_buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static size_t round_up(size_t x, size_t to) { return x > SIZE_MAX - (to - 1) ? SIZE_MAX : (x + to - 1) / to * to; }

size_t srv_body_size_for(const srv_body *b, size_t cap) {
    const size_t want = b->pad + cap < cap ? SIZE_MAX : b->pad + cap;
    /* A mapping in whole pages: the budget counts what is mapped. */
    return cap >= SRV_BODY_MAP_MIN ? round_up(want, (size_t)sysconf(_SC_PAGESIZE)) : round_up(want, 64);
}

static int reserve_mapped(srv_body *b, size_t size) {
    char *p;
    if (b->mapped) {
        p = mremap(b->base, b->size, size, MREMAP_MAYMOVE);
    } else {
        p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED && b->len) memcpy(p + b->pad, b->data, b->len); /* at most SRV_BODY_MAP_MIN bytes */
    }
    if (p == MAP_FAILED) return 1;
    /* No MADV_HUGEPAGE: fewer faults, but each fault of a huge page (zeroing 2 MiB, compaction where the kernel's THP
     * defrag setting is "madvise") stalled the HTTP thread and every connection on it: P99 of a small model at 50
     * req/s beside two uploads paced to 100 MiB/s 32-99 ms with it, 5-7 ms without (docs/performance-history.md). */
    if (!b->mapped) free(b->base);
    b->base = p;
    b->size = size;
    b->mapped = 1;
    return 0;
}

int srv_body_reserve(srv_body *b, size_t cap) {
    if (cap < b->len) cap = b->len;
    const size_t size = srv_body_size_for(b, cap);
    if (size == SIZE_MAX) return 1;
    if (cap >= SRV_BODY_MAP_MIN || b->mapped) {
        if (size > b->size || !b->mapped) {
            if (reserve_mapped(b, size)) return 1;
        }
    } else if (size > b->size || !b->base) {
        char *p = aligned_alloc(64, size);
        if (!p) return 1;
        if (b->len) memcpy(p + b->pad, b->data, b->len);
        free(b->base);
        b->base = p;
        b->size = size;
    }
    b->data = b->base + b->pad;
    b->cap = b->size - b->pad;
    return 0;
}

void srv_body_free(srv_body *b) {
    if (b->mapped) munmap(b->base, b->size);
    else free(b->base);
    const size_t pad = b->pad;
    memset(b, 0, sizeof *b);
    b->pad = pad;
}
