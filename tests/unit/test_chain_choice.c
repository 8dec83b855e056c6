/*
 * test_chain_choice.c - the chain-aware precision choice (engine/chain_choice.h) on hand-made paths: a reduced step
 * slower alone than its FP32 rival is still chosen when the chain makes the path faster, and not when it does not;
 * unlinked steps are chosen alone; a step that two later steps link to is the link of the first only; times of
 * UINT64_MAX (no candidate) never win.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/chain_choice.h"

#define NONE UINT64_MAX

static void choose(int n, const tc__chain_cost *c, const bool *want, const char *what) {
    bool got[8] = {0};
    tc__chain_choose(n, c, got);
    for (int i = 0; i < n; i++)
        if (got[i] != want[i]) fail_msg("%s: step %d: %s, want %s", what, i, got[i] ? "reduced" : "other", want[i] ? "reduced" : "other");
}

static void test_paths(void **state) {
    (void)state;
    /* expand (INT8 alone 12 > 10) -> depthwise (alone 9 > 8, chained 3) -> project (alone 5 > 4, chained 2):
     * all reduced, 12 + 3 + 2 = 17 < 10 + 8 + 4 */
    const tc__chain_cost a[3] = {{12, NONE, 10, -1}, {9, 3, 8, 0}, {5, 2, 4, 1}};
    choose(3, a, (const bool[]){true, true, true}, "chain pays");
    /* the same with chained times that do not pay: each alone */
    const tc__chain_cost b[3] = {{12, NONE, 10, -1}, {9, 8, 8, 0}, {5, 4, 4, 1}};
    choose(3, b, (const bool[]){false, false, false}, "chain does not pay");
    /* no links: each step alone */
    const tc__chain_cost c[3] = {{5, NONE, 6, -1}, {9, 1, 8, -1}, {3, 1, 4, -1}};
    choose(3, c, (const bool[]){true, false, true}, "unlinked");
    /* a path in the middle of others: 0 alone; 1 -> 2 pays, 3 links to 0 (then 0 -> 3 as well) */
    const tc__chain_cost d[4] = {{5, NONE, 6, -1}, {11, NONE, 10, -1}, {9, 1, 8, 1}, {7, 1, 7, 0}};
    choose(4, d, (const bool[]){true, true, true, true}, "two paths");
    /* two steps link to step 0: only the first (1) may chain; 2 is alone */
    const tc__chain_cost e[3] = {{6, NONE, 5, -1}, {9, 1, 8, 0}, {9, 1, 8, 0}};
    choose(3, e, (const bool[]){true, true, false}, "one reader");
    /* no reduced candidate, or no other */
    const tc__chain_cost f[3] = {{NONE, NONE, 5, -1}, {NONE, NONE, 3, 0}, {4, 1, NONE, 1}};
    choose(3, f, (const bool[]){false, false, true}, "missing candidates");
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_paths)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
