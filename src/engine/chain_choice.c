/* chain_choice.c - chain-aware precision choice along paths of chainable steps (see chain_choice.h). */
#include "engine/chain_choice.h"

#include <stdlib.h>

void tc__chain_choose(int n, const tc__chain_cost *c, bool *lowp) {
    /* cost[i][s]: the least time of the path up to step i with step i reduced (s = 1) or not (s = 0); from[i][s]:
     * the state of the link that gives it. Paths are chains of links: a step has at most one link, and is the
     * link of at most one later step (the first one wins). */
    uint64_t(*cost)[2] = malloc(sizeof *cost * (size_t)(n > 0 ? n : 1));
    uint8_t(*from)[2] = malloc(sizeof *from * (size_t)(n > 0 ? n : 1));
    int32_t *next = malloc(sizeof *next * (size_t)(n > 0 ? n : 1));
    if (cost == NULL || from == NULL || next == NULL) { /* no memory: each step alone */
        for (int i = 0; i < n; i++) lowp[i] = c[i].lowp < c[i].other;
        free(cost), free(from), free(next);
        return;
    }
    for (int i = 0; i < n; i++) next[i] = -1;
    for (int i = 0; i < n; i++) {
        const int32_t p = c[i].link;
        const bool linked = p >= 0 && p < i && next[p] < 0;
        if (linked) next[p] = i;
        const uint64_t p0 = linked ? cost[p][0] : 0, p1 = linked ? cost[p][1] : UINT64_MAX;
        /* not reduced: after either state of the link */
        from[i][0] = (uint8_t)(p1 < p0);
        cost[i][0] = tc__add_sat_u64(p1 < p0 ? p1 : p0, c[i].other);
        /* reduced: chained after a reduced link, or alone */
        const uint64_t chained = tc__add_sat_u64(p1, c[i].lowp_chained), alone = tc__add_sat_u64(p0, c[i].lowp);
        from[i][1] = (uint8_t)(chained < alone);
        cost[i][1] = chained < alone ? chained : alone;
    }
    /* back from each path's last step (no later step links to it) */
    for (int i = n - 1; i >= 0; i--) {
        if (next[i] >= 0) continue;
        int s = cost[i][1] < cost[i][0];
        for (int k = i; k >= 0;) {
            lowp[k] = s == 1;
            const int32_t p = c[k].link;
            const int ps = from[k][s];
            if (p < 0 || p >= k || next[p] != k) break;
            k = p, s = ps;
        }
    }
    free(cost), free(from), free(next);
}
