/* test_memory_plan.c - the arena planner: no two buffers with intersecting lifetimes overlap,
 * aliases share offsets, reuse makes the arena smaller than the naive sum, alignment holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "engine/memory_plan.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void check_no_overlap(const tc__mem_req *r, int n, const uint64_t *off, uint64_t total) {
    for (int i = 0; i < n; i++) {
        if (r[i].size == 0) continue;
        assert_true(off[i] % 64 == 0);
        assert_true(off[i] + r[i].size <= total);
        for (int j = i + 1; j < n; j++) {
            if (r[j].size == 0 || r[i].alias_of == j || r[j].alias_of == i) continue;
            int live = !(r[i].last < r[j].first || r[j].last < r[i].first);
            int mem = !(off[i] + r[i].size <= off[j] || off[j] + r[j].size <= off[i]);
            if (live && mem) fail_msg("buffers %d and %d overlap in time and memory", i, j);
        }
    }
}

static void test_chain_reuses_memory(void **state) {
    (void)state;
    /* A chain a -> b -> c -> d: only neighbours are alive together. */
    tc__mem_req r[4] = {{1000, 0, 1, -1}, {1000, 1, 2, -1}, {1000, 2, 3, -1}, {1000, 3, 4, -1}};
    uint64_t off[4], total;
    tc__err err = {0};
    assert_int_equal(tc__memory_plan(r, 4, 64, off, &total, &err), TC_STATUS_OK);
    check_no_overlap(r, 4, off, total);
    assert_int_equal(total, 2 * 1024);
}

static void test_alias_shares_offset(void **state) {
    (void)state;
    tc__mem_req r[3] = {{512, 0, 1, -1}, {512, 1, 3, 0}, {100, 0, 3, -1}};
    uint64_t off[3], total;
    tc__err err = {0};
    assert_int_equal(tc__memory_plan(r, 3, 64, off, &total, &err), TC_STATUS_OK);
    assert_int_equal(off[0], off[1]);
    assert_true(off[2] >= 512 || off[2] + 128 <= off[0]);
    tc__mem_req cyc[2] = {{8, 0, 1, 1}, {8, 0, 1, 0}};
    assert_int_equal(tc__memory_plan(cyc, 2, 64, off, &total, &err), TC_STATUS_INTERNAL);
}

static void test_random_lifetimes(void **state) {
    (void)state;
    for (int trial = 0; trial < 200; trial++) {
        int n = 1 + (int)(next() % 97);
        tc__mem_req *r = calloc((size_t)n, sizeof *r);
        uint64_t *off = calloc((size_t)n, sizeof *off);
        uint64_t naive = 0;
        for (int i = 0; i < n; i++) {
            r[i].size = next() % 5 == 0 ? 0 : 1 + next() % 100000;
            r[i].first = (int32_t)(next() % 50);
            r[i].last = r[i].first + (int32_t)(next() % 10);
            r[i].alias_of = -1;
            naive += (r[i].size + 63) & ~63ull;
        }
        uint64_t total;
        tc__err err = {0};
        assert_int_equal(tc__memory_plan(r, n, 64, off, &total, &err), TC_STATUS_OK);
        check_no_overlap(r, n, off, total);
        assert_true(total <= naive);
        free(r);
        free(off);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_reuses_memory),
        cmocka_unit_test(test_alias_shares_offset),
        cmocka_unit_test(test_random_lifetimes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
