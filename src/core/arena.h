/*
 * arena.h - a bump allocator for objects that live and die together (a graph
 * and everything it owns). Freeing the arena frees every allocation at once.
 */
#ifndef TC_CORE_ARENA_H
#define TC_CORE_ARENA_H

#include <stddef.h>

typedef struct tc__arena_chunk tc__arena_chunk;

typedef struct tc__arena {
    tc__arena_chunk *head;
    size_t total_bytes; /* bytes obtained from malloc, for reporting */
} tc__arena;

/* Returns zeroed memory aligned to align (a power of two <= 4096), or NULL. */
void *tc__arena_alloc(tc__arena *arena, size_t size, size_t align);
/* Copies n bytes of s plus a terminating NUL. */
char *tc__arena_strndup(tc__arena *arena, const char *s, size_t n);
char *tc__arena_strdup(tc__arena *arena, const char *s);
void tc__arena_free(tc__arena *arena);

#endif
