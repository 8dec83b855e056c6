/* arena.c - bump allocator in malloc'd chunks; large requests get their own chunk. */
#include "core/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TC__ARENA_CHUNK (64u * 1024u)

struct tc__arena_chunk {
    tc__arena_chunk *next;
    size_t size, used;
    _Alignas(64) unsigned char data[];
};

void *tc__arena_alloc(tc__arena *arena, size_t size, size_t align) {
    if (align == 0) align = 1;
    if (align > 4096 || (align & (align - 1)) != 0) return NULL;
    if (size == 0) size = 1;
    tc__arena_chunk *c = arena->head;
    if (c != NULL) {
        uintptr_t base = (uintptr_t)c->data;
        uintptr_t p = (base + c->used + (align - 1)) & ~(uintptr_t)(align - 1);
        size_t off = (size_t)(p - base);
        if (off <= c->size && size <= c->size - off) {
            c->used = off + size;
            return c->data + off;
        }
    }
    size_t need;
    if (__builtin_add_overflow(size, align, &need)) return NULL;
    size_t chunk = need > TC__ARENA_CHUNK ? need : TC__ARENA_CHUNK;
    size_t total;
    if (__builtin_add_overflow(chunk, sizeof(tc__arena_chunk), &total)) return NULL;
    tc__arena_chunk *n = calloc(1, total);
    if (n == NULL) return NULL;
    n->size = chunk;
    arena->total_bytes += total;
    /* A dedicated chunk for a large request goes behind the current one so the
     * current chunk's free space stays usable. */
    if (c != NULL && need > TC__ARENA_CHUNK) {
        n->next = c->next;
        c->next = n;
    } else {
        n->next = c;
        arena->head = n;
    }
    uintptr_t base = (uintptr_t)n->data;
    uintptr_t p = (base + (align - 1)) & ~(uintptr_t)(align - 1);
    n->used = (size_t)(p - base) + size;
    return (void *)p;
}

char *tc__arena_strndup(tc__arena *arena, const char *s, size_t n) {
    char *d = tc__arena_alloc(arena, n + 1, 1);
    if (d == NULL) return NULL;
    if (n) memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *tc__arena_strdup(tc__arena *arena, const char *s) {
    return tc__arena_strndup(arena, s ? s : "", s ? strlen(s) : 0);
}

void tc__arena_free(tc__arena *arena) {
    tc__arena_chunk *c = arena->head;
    while (c != NULL) {
        tc__arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    arena->head = NULL;
    arena->total_bytes = 0;
}
