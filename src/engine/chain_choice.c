/* chain_choice.c - chain-aware precision choice along paths of chainable steps (see chain_choice.h). */
#include "engine/chain_choice.h"

#include <stdlib.h>

/* The state (of 3) with the least cost, and that cost. */
static int least(const uint64_t cost[3], uint64_t *best) {
    int s = 0;
    for (int k = 1; k < 3; k++)
        if (cost[k] < cost[s]) s = k;
    *best = cost[s];
    return s;
}

void tc__chain_choose(int n, const tc__chain_cost *c, uint8_t *choice) {
    /* cost[i][s]: the least time of the path up to step i with step i in state s (TC__CHAIN_*); from[i][s]: the state
     * of the link that gives it. Paths are chains of links: a step has at most one link, and is the link of at most
     * one later step (the first one wins). Only a step in TC__CHAIN_LOWP hands its image on. */
    uint64_t(*cost)[3] = malloc(sizeof *cost * (size_t)(n > 0 ? n : 1));
    uint8_t(*from)[3] = malloc(sizeof *from * (size_t)(n > 0 ? n : 1));
    int32_t *next = malloc(sizeof *next * (size_t)(n > 0 ? n : 1));
    if (cost == NULL || from == NULL || next == NULL) { /* no memory: each step alone */
        for (int i = 0; i < n; i++) {
            const uint64_t alone[3] = {c[i].other, c[i].lowp, c[i].solo};
            uint64_t b;
            choice[i] = (uint8_t)least(alone, &b);
        }
        free(cost), free(from), free(next);
        return;
    }
    for (int i = 0; i < n; i++) next[i] = -1;
    for (int i = 0; i < n; i++) {
        const int32_t p = c[i].link;
        const bool linked = p >= 0 && p < i && next[p] < 0;
        if (linked) next[p] = i;
        /* the link's best state, and its best state that hands no image on */
        uint64_t any = 0, plain = 0;
        int s_any = 0, s_plain = 0;
        if (linked) {
            s_any = least(cost[p], &any);
            const uint64_t no_image[3] = {cost[p][0], UINT64_MAX, cost[p][2]};
            s_plain = least(no_image, &plain);
        }
        cost[i][TC__CHAIN_OTHER] = tc__add_sat_u64(any, c[i].other);
        cost[i][TC__CHAIN_SOLO] = tc__add_sat_u64(any, c[i].solo);
        from[i][TC__CHAIN_OTHER] = from[i][TC__CHAIN_SOLO] = (uint8_t)s_any;
        /* reduced and chaining: chained after a chaining link, or alone after any other state */
        const uint64_t chained = tc__add_sat_u64(linked ? cost[p][1] : UINT64_MAX, c[i].lowp_chained);
        const uint64_t alone = tc__add_sat_u64(plain, c[i].lowp);
        from[i][TC__CHAIN_LOWP] = (uint8_t)(chained < alone ? TC__CHAIN_LOWP : s_plain);
        cost[i][TC__CHAIN_LOWP] = chained < alone ? chained : alone;
    }
    /* back from each path's last step (no later step links to it) */
    for (int i = n - 1; i >= 0; i--) {
        if (next[i] >= 0) continue;
        uint64_t b;
        int s = least(cost[i], &b);
        for (int k = i; k >= 0;) {
            choice[k] = (uint8_t)s;
            const int32_t p = c[k].link;
            const int ps = from[k][s];
            if (p < 0 || p >= k || next[p] != k) break;
            k = p, s = ps;
        }
    }
    free(cost), free(from), free(next);
}
