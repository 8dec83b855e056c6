/* body_buf.h - the buffer that holds one request body in `tailcut serve`. A small body lives on the heap; a large one
 * (SRV_BODY_MAP_MIN and up) in its own anonymous mapping that grows with mremap (the kernel moves the page tables:
 * nothing received is copied again), so that a large upload costs its HTTP thread the copy of each received piece
 * and its page faults, spread over the pieces, and never one long step (copying 16 or 32 MiB to a new block) that
 * would hold up the other connections of that thread. */
#ifndef TC_SERVER_BODY_BUF_H
#define TC_SERVER_BODY_BUF_H

#include <stddef.h>

#define SRV_BODY_MAP_MIN ((size_t)2 << 20) /* bodies of this room and up get their own mapping */

typedef struct srv_body {
    char *base;   /* the allocation (heap block or mapping); NULL before the first srv_body_reserve */
    char *data;   /* base + pad: where the body starts */
    size_t len;   /* bytes held (the caller appends at data + len) */
    size_t cap;   /* room at data */
    size_t pad;   /* set by the caller before the first reserve: 0..63, so that data + pad' lands 64-byte aligned */
    size_t size;  /* bytes of the allocation: what the body costs against the server's budget */
    int mapped;   /* base is a mapping (mremap / munmap), not a heap block */
} srv_body;

/* The allocation size srv_body_reserve(b, cap) would hold (for a budget check before it). */
size_t srv_body_size_for(const srv_body *b, size_t cap);

/* Makes room for cap bytes at data, keeping the len bytes held (cap >= len). Returns 0, or 1 when out of memory
 * (the body is left as it was). Whatever is held is 64-byte aligned at base (and page aligned when mapped). */
int srv_body_reserve(srv_body *b, size_t cap);

/* Frees the allocation and empties b (pad is kept). */
void srv_body_free(srv_body *b);

#endif
