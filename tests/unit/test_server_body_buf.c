/* test_server_body_buf.c - request body buffers of the server (src/server/body_buf.c): bodies grown piece by piece
 * across the heap / mapping boundary keep every byte, data sits at base + pad with base 64-byte aligned (page aligned
 * when mapped), the size reported for the budget covers the room asked for, large bodies are mapped and grow in place of
 * a copy, and freeing empties the buffer. Random sizes and random non-zero bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/body_buf.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_rand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Appends n random bytes to b (room made as a server would: doubling) and to the reference copy; returns 1 when it
 * had to grow b. */
static int append(srv_body *b, unsigned char *ref, size_t n) {
    const int grow = b->len + n > b->cap;
    if (grow) {
        size_t cap = b->cap ? b->cap * 2 : 1000;
        if (cap < b->len + n) cap = b->len + n;
        const size_t want = srv_body_size_for(b, cap);
        assert_int_equal(srv_body_reserve(b, cap), 0);
        assert_int_equal(b->size, want);
        assert_true(b->cap >= cap);
        assert_true(b->size >= b->pad + b->cap);
    }
    uint64_t r = 0;
    for (size_t i = 0; i < n; i++) {
        if (i % 8 == 0) r = next_rand() | 0x0101010101010101ull; /* no zero byte */
        ref[b->len + i] = b->data[b->len + i] = (unsigned char)(r >> (i % 8 * 8));
    }
    b->len += n;
    return grow;
}

static void check_layout(const srv_body *b) {
    assert_ptr_equal(b->data, b->base + b->pad);
    assert_int_equal((uintptr_t)b->base % 64, 0);
    if (b->mapped) assert_int_equal((uintptr_t)b->base % (uintptr_t)sysconf(_SC_PAGESIZE), 0);
    if (b->mapped) assert_true(b->cap >= SRV_BODY_MAP_MIN);
    else assert_true(b->cap < SRV_BODY_MAP_MIN + 64);
}

static void test_grow_keeps_bytes(void **state) {
    (void)state;
    const size_t max = (size_t)9 << 20; /* crosses SRV_BODY_MAP_MIN and grows mapped twice */
    unsigned char *ref = malloc(max);
    assert_non_null(ref);
    for (int round = 0; round < 6; round++) {
        srv_body b;
        memset(&b, 0, sizeof b);
        b.pad = (size_t)(next_rand() % 64);
        const size_t total = round == 0 ? 1 : round == 1 ? SRV_BODY_MAP_MIN : (size_t)(next_rand() % max) + 1;
        int was_mapped = 0;
        while (b.len < total) {
            size_t n = (size_t)(next_rand() % (round % 2 ? 4096 : 300000)) + 1; /* pieces as recv hands them */
            if (n > total - b.len) n = total - b.len;
            if (append(&b, ref, n)) { /* grown: everything held before is still there */
                check_layout(&b);
                if (was_mapped) assert_true(b.mapped); /* never back to the heap */
                was_mapped = b.mapped;
                assert_memory_equal(b.data, ref, b.len);
            }
        }
        assert_memory_equal(b.data, ref, b.len);
        if (total >= SRV_BODY_MAP_MIN) assert_true(b.mapped);
        const size_t pad = b.pad;
        srv_body_free(&b);
        assert_null(b.base);
        assert_null(b.data);
        assert_int_equal(b.len + b.cap + b.size + (size_t)b.mapped, 0);
        assert_int_equal(b.pad, pad);
    }
    free(ref);
}

/* A reserve of less than what is held keeps everything; reserving at once the final size of a large body maps it. */
static void test_reserve_edges(void **state) {
    (void)state;
    srv_body b;
    memset(&b, 0, sizeof b);
    b.pad = 63;
    assert_int_equal(srv_body_reserve(&b, 0), 0); /* an empty body still gets a block (the terminator's byte) */
    assert_non_null(b.base);
    assert_true(b.cap >= 1);
    assert_int_equal(srv_body_reserve(&b, SRV_BODY_MAP_MIN - 1), 0);
    assert_false(b.mapped);
    memset(b.data, 0x5a, SRV_BODY_MAP_MIN - 1);
    b.len = SRV_BODY_MAP_MIN - 1;
    assert_int_equal(srv_body_reserve(&b, 10), 0); /* smaller than held: nothing lost */
    assert_true(b.cap >= b.len);
    assert_int_equal(srv_body_reserve(&b, SRV_BODY_MAP_MIN), 0);
    assert_true(b.mapped);
    check_layout(&b);
    for (size_t i = 0; i < b.len; i++) assert_int_equal((unsigned char)b.data[i], 0x5a);
    assert_int_equal(b.size % (size_t)sysconf(_SC_PAGESIZE), 0);
    assert_int_equal(srv_body_reserve(&b, (size_t)-1), 1); /* impossible: refused, body unchanged */
    assert_true(b.mapped);
    assert_int_equal((unsigned char)b.data[b.len - 1], 0x5a);
    srv_body_free(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grow_keeps_bytes),
        cmocka_unit_test(test_reserve_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
