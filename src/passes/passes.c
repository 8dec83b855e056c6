/* passes.c - runs the passes of passes.inc to a fixpoint (see passes.h). */
#include "passes/passes.h"

#include <string.h>

typedef tc_status (*pass_fn)(tc__pass_ctx *);

static const struct {
    const char *name;
    uint32_t flag;
    pass_fn fn;
} kPasses[] = {
#define TC_PASS(name, flag) {#name, flag, tc__pass_##name},
#include "passes/passes.inc"
#undef TC_PASS
};

#define N_PASSES ((int)(sizeof kPasses / sizeof kPasses[0]))
#define MAX_ROUNDS 16

int tc__pass_count(void) { return N_PASSES; }
const char *tc__pass_name(int i) { return i >= 0 && i < N_PASSES ? kPasses[i].name : NULL; }
const char *tc__pass_description(int i) {
    if (i < 0 || i >= N_PASSES) return NULL;
    for (int k = 0; k < tc_pass_count(); k++)
        if (tc_pass_flag(k) == kPasses[i].flag) return tc_pass_description(k);
    return NULL;
}

/* Drops removed nodes, re-sorts and re-infers so the next pass sees a consistent graph. */
static tc_status settle(tc__graph *g, tc__eval_fn eval, void *user, tc__err *err) {
    tc__graph_compact(g);
    tc_status st = tc__graph_toposort(g, err);
    if (st == TC_STATUS_OK) st = tc__graph_infer_shapes(g, false, eval, user, err);
    return st;
}

tc_status tc__passes_run(tc__graph *g, uint32_t disabled, tc__eval_fn eval, void *eval_user, tc__pass_report *report,
                         tc__err *err) {
    _Static_assert(N_PASSES <= 16, "tc__pass_report holds 16 passes");
    tc__pass_report local;
    if (report == NULL) report = &local;
    memset(report, 0, sizeof *report);
    for (int round = 0; round < MAX_ROUNDS; round++) {
        int changed = 0;
        for (int p = 0; p < N_PASSES; p++) {
            if (disabled & kPasses[p].flag) continue;
            tc__pass_ctx ctx = {.g = g, .eval = eval, .eval_user = eval_user, .changes = 0, .err = err};
            tc_status st = kPasses[p].fn(&ctx);
            if (st != TC_STATUS_OK) {
                tc__err_prefix(err, "pass %s: ", kPasses[p].name);
                return st;
            }
            if (ctx.changes > 0) {
                st = settle(g, eval, eval_user, err);
                if (st != TC_STATUS_OK) {
                    tc__err_prefix(err, "after pass %s: ", kPasses[p].name);
                    return st;
                }
            }
            report->changes[p] += ctx.changes;
            changed += ctx.changes;
        }
        report->rounds = round + 1;
        if (changed == 0) break;
    }
    return TC_STATUS_OK;
}
