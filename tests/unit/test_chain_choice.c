/*
 * test_chain_choice.c - the chain-aware precision choice (engine/chain_choice.h) on hand-made paths: a reduced step
 * slower alone than its FP32 rival is still chosen when the chain makes the path faster, and not when it does not;
 * unlinked steps are chosen alone; a step that two later steps link to is the link of the first only; times of
 * UINT64_MAX (no candidate) never win; a reduced candidate that does not chain (solo) wins only where no chain through
 * the step pays more, and hands no image on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/chain_choice.h"

#define NONE UINT64_MAX

#define O TC__CHAIN_OTHER
#define L TC__CHAIN_LOWP
#define S TC__CHAIN_SOLO

static void choose(int n, const tc__chain_cost *c, const uint8_t *want, const char *what) {
    static const char *const names[3] = {"other", "reduced", "solo"};
    uint8_t got[8] = {0};
    tc__chain_choose(n, c, got);
    for (int i = 0; i < n; i++)
        if (got[i] != want[i]) fail_msg("%s: step %d: %s, want %s", what, i, names[got[i] % 3], names[want[i] % 3]);
}

static void test_paths(void **state) {
    (void)state;
    /* expand (INT8 alone 12 > 10) -> depthwise (alone 9 > 8, chained 3) -> project (alone 5 > 4, chained 2):
     * all reduced, 12 + 3 + 2 = 17 < 10 + 8 + 4 */
    const tc__chain_cost a[3] = {{12, NONE, 10, -1, NONE}, {9, 3, 8, 0, NONE}, {5, 2, 4, 1, NONE}};
    choose(3, a, (const uint8_t[]){L, L, L}, "chain pays");
    /* the same with chained times that do not pay: each alone */
    const tc__chain_cost b[3] = {{12, NONE, 10, -1, NONE}, {9, 8, 8, 0, NONE}, {5, 4, 4, 1, NONE}};
    choose(3, b, (const uint8_t[]){O, O, O}, "chain does not pay");
    /* no links: each step alone */
    const tc__chain_cost c[3] = {{5, NONE, 6, -1, NONE}, {9, 1, 8, -1, NONE}, {3, 1, 4, -1, NONE}};
    choose(3, c, (const uint8_t[]){L, O, L}, "unlinked");
    /* a path in the middle of others: 0 alone; 1 -> 2 pays, 3 links to 0 (then 0 -> 3 as well) */
    const tc__chain_cost d[4] = {{5, NONE, 6, -1, NONE}, {11, NONE, 10, -1, NONE}, {9, 1, 8, 1, NONE}, {7, 1, 7, 0, NONE}};
    choose(4, d, (const uint8_t[]){L, L, L, L}, "two paths");
    /* two steps link to step 0: only the first (1) may chain; 2 is alone */
    const tc__chain_cost e[3] = {{6, NONE, 5, -1, NONE}, {9, 1, 8, 0, NONE}, {9, 1, 8, 0, NONE}};
    choose(3, e, (const uint8_t[]){L, L, O}, "one reader");
    /* no reduced candidate, or no other */
    const tc__chain_cost f[3] = {{NONE, NONE, 5, -1, NONE}, {NONE, NONE, 3, 0, NONE}, {4, 1, NONE, 1, NONE}};
    choose(3, f, (const uint8_t[]){O, O, L}, "missing candidates");
}

/* A reduced candidate that does not chain (solo): chosen where it is fastest alone and no chain pays more; it breaks
 * the chain on both sides. */
static void test_solo(void **state) {
    (void)state;
    /* unlinked: the fastest of the three */
    const tc__chain_cost a[2] = {{5, NONE, 6, -1, 4}, {5, NONE, 6, -1, 7}};
    choose(2, a, (const uint8_t[]){S, L}, "alone");
    /* 0 -> 1 -> 2: solo is the fastest alone at 1 (4 < 5), but 1 chained (1) with 2 chained (1) pays more:
     * L L L = 6 + 1 + 1 = 8 against L S L = 6 + 4 + 5 = 15 */
    const tc__chain_cost b[3] = {{6, NONE, 7, -1, NONE}, {5, 1, 9, 0, 4}, {5, 1, 9, 1, NONE}};
    choose(3, b, (const uint8_t[]){L, L, L}, "chain beats solo");
    /* the chain saves little: solo in the middle (6 + 2 + 5 = 13 < 6 + 4 + 4 = 14) */
    const tc__chain_cost c[3] = {{6, NONE, 7, -1, NONE}, {9, 4, 9, 0, 2}, {5, 4, 9, 1, NONE}};
    choose(3, c, (const uint8_t[]){L, S, L}, "solo in the middle");
    /* after a solo link, a chaining step pays its time alone, not its chained time */
    const tc__chain_cost d[2] = {{NONE, NONE, 9, -1, 1}, {5, 1, 4, 0, NONE}};
    choose(2, d, (const uint8_t[]){S, O}, "no image after solo");
    /* only solo and other */
    const tc__chain_cost e[2] = {{NONE, NONE, 3, -1, 2}, {NONE, NONE, 3, 0, 4}};
    choose(2, e, (const uint8_t[]){S, O}, "solo or other");
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_paths), cmocka_unit_test(test_solo)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
