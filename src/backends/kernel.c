/* kernel.c - kernel scratch memory: bump allocation from a context's preallocated buffer
 * on the engine's run path, malloc for the reference executor. */
#include <stdlib.h>

#include "backends/kernel.h"

void *tc__kernel_alloc(const tc__kernel_ctx *ctx, size_t bytes) {
    if (bytes == 0) bytes = 1;
    tc__scratch *s = ctx->scratch;
    if (s == NULL) return malloc(bytes);
    size_t at = (s->used + 63) & ~(size_t)63;
    if (at < s->used || at > s->cap || bytes > s->cap - at) return NULL;
    s->used = at + bytes;
    return s->base + at;
}

void tc__kernel_free(const tc__kernel_ctx *ctx, void *p) {
    tc__scratch *s = ctx->scratch;
    if (s == NULL) {
        free(p);
        return;
    }
    /* Stack discipline: freeing the most recent block gives its space back. */
    unsigned char *b = p;
    if (b != NULL && b >= s->base && b < s->base + s->cap && (size_t)(b - s->base) < s->used)
        s->used = (size_t)(b - s->base);
}
