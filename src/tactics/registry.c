/* registry.c - per-op tactic lists from tactics.inc, plus the reference tactic of every op. */
#include <string.h>

#include "tactics/tactic.h"

static const tc__tactic *const kTactics[] = {
#define TC_TACTIC(op, name) &tc__tactic_##name,
#include "tactics/tactics.inc"
#undef TC_TACTIC
    NULL, /* keeps the array non-empty */
};

int tc__tactics_for(const char *op_type, uint64_t isa, const tc__tactic **out, int cap) {
    int n = 0;
    for (size_t i = 0; kTactics[i] != NULL; i++) {
        const tc__tactic *t = kTactics[i];
        if (strcmp(t->op_type, op_type) == 0 && (t->isa & ~isa) == 0 && n < cap - 1) out[n++] = t;
    }
    return n;
}

const tc__tactic *tc__tactic_find(const char *name, const char *op_type) {
    for (size_t i = 0; kTactics[i] != NULL; i++)
        if (strcmp(kTactics[i]->name, name) == 0 && strcmp(kTactics[i]->op_type, op_type) == 0) return kTactics[i];
    return NULL;
}
