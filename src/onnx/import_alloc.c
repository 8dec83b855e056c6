/*
 * import_alloc.c - the protobuf-c allocator used while unpacking a model: large blocks (tensor
 * payloads) come from the graph arena so they can be adopted without a copy; small blocks are
 * malloc'd and freed with the message. Every block carries an 8-byte tag just before it that
 * says where it came from.
 */
#include <stdlib.h>
#include <string.h>

#include "onnx/import_internal.h"

#define TAG_HEAP UINT64_C(0x7463686561700a01)  /* "tcheap" */
#define TAG_ARENA UINT64_C(0x74636172656e6102) /* "tcarena" */

/* Heap blocks: [16-byte header, tag in its last 8 bytes][payload] keeps malloc's 16-byte alignment.
 * Arena blocks: [64-byte header, tag in its last 8 bytes][payload] keeps 64-byte alignment. */
#define HEAP_HDR 16u
#define ARENA_HDR 64u

static void put_tag(unsigned char *payload, uint64_t tag) { memcpy(payload - 8, &tag, sizeof tag); }

static uint64_t get_tag(const void *payload) {
    uint64_t tag;
    memcpy(&tag, (const unsigned char *)payload - 8, sizeof tag);
    return tag;
}

static void *alloc_cb(void *data, size_t size) {
    tc__onnx_alloc *a = data;
    unsigned char *p;
    if (size >= TC__ONNX_ARENA_MIN && a->arena != NULL) {
        if (size > SIZE_MAX - ARENA_HDR) goto fail;
        p = tc__arena_alloc(a->arena, size + ARENA_HDR, 64);
        if (p == NULL) goto fail;
        put_tag(p + ARENA_HDR, TAG_ARENA);
        return p + ARENA_HDR;
    }
    if (size > SIZE_MAX - HEAP_HDR) goto fail;
    p = malloc(size + HEAP_HDR);
    if (p == NULL) goto fail;
    put_tag(p + HEAP_HDR, TAG_HEAP);
    return p + HEAP_HDR;
fail:
    a->failed = true;
    return NULL;
}

static void free_cb(void *data, void *ptr) {
    (void)data;
    if (ptr == NULL) return;
    /* Arena blocks are released with the arena. */
    if (get_tag(ptr) == TAG_HEAP) free((unsigned char *)ptr - HEAP_HDR);
}

void tc__onnx_alloc_init(tc__onnx_alloc *a, tc__arena *arena) {
    memset(a, 0, sizeof *a);
    a->pc.alloc = alloc_cb;
    a->pc.free = free_cb;
    a->pc.allocator_data = a;
    a->arena = arena;
}

bool tc__onnx_alloc_in_arena(const void *p) { return p != NULL && get_tag(p) == TAG_ARENA; }
