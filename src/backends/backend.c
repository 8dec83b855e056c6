/* backend.c - the list of backends this build has (backends.inc) and their tactic lists, by id and name. */
#include <string.h>

#include "backends/backend.h"

static const tc__backend *const kBackends[] = {
#define TC_BACKEND(name, id) &tc__backend_##name,
#include "backends/backends.inc"
#undef TC_BACKEND
    NULL,
};

const tc__backend *tc__backend_get(uint32_t id) {
    for (size_t i = 0; kBackends[i] != NULL; i++)
        if (kBackends[i]->id == id) return kBackends[i];
    return NULL;
}

const char *tc__backend_name(uint32_t id) {
#define TC__BACKEND_NAME_(name, bid, text) \
    if (id == bid) return text;
    TC__BACKEND_MAP(TC__BACKEND_NAME_)
#undef TC__BACKEND_NAME_
    return "unknown";
}

const tc__backend *tc__backend_find(const char *name, tc__err *err) {
    if (name == NULL || name[0] == '\0') name = "cpu";
    uint32_t id = 0;
#define TC__BACKEND_ID_(sym, bid, text) \
    if (strcmp(name, text) == 0) id = bid;
    TC__BACKEND_MAP(TC__BACKEND_ID_)
#undef TC__BACKEND_ID_
    if (id == 0) {
        tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "unknown backend '%s' (known: cpu, cuda)", name);
        return NULL;
    }
    const tc__backend *be = tc__backend_get(id);
    if (be == NULL) {
        tc__fail(err, TC_STATUS_UNSUPPORTED,
                 "this build of tailcut has no %s backend (not built with %s): use --backend cpu, or rebuild tailcut "
                 "where the toolkit is installed", name, id == TC__BACKEND_CUDA ? "CUDA" : name);
        return NULL;
    }
    tc__err perr = {0};
    if (be->probe(&perr) != TC_STATUS_OK) {
        tc__fail(err, perr.status, "backend %s cannot run here: %s", name, perr.msg);
        return NULL;
    }
    return be;
}

int tc__tactics_for(const tc__backend *be, const char *op_type, uint64_t caps, const tc__tactic **out, int cap) {
    int n = 0;
    for (size_t i = 0; be->tactics[i] != NULL; i++) {
        const tc__tactic *t = be->tactics[i];
        if (strcmp(t->op_type, op_type) == 0 && (t->caps & ~caps) == 0 && n < cap) out[n++] = t;
    }
    return n;
}

const tc__tactic *tc__tactic_fallback(const tc__backend *be, const char *op_type) {
    for (size_t i = 0; be != NULL && be->tactics[i] != NULL; i++)
        if ((be->tactics[i]->flags & TC__TACTIC_FALLBACK) && strcmp(be->tactics[i]->op_type, op_type) == 0)
            return be->tactics[i];
    return NULL;
}

const tc__tactic *tc__tactic_find(const tc__backend *be, const char *name, const char *op_type) {
    for (size_t i = 0; be->tactics[i] != NULL; i++)
        if (strcmp(be->tactics[i]->name, name) == 0 && strcmp(be->tactics[i]->op_type, op_type) == 0)
            return be->tactics[i];
    return NULL;
}

const tc__tactic *tc__tactic_named(const char *name) {
    for (size_t b = 0; kBackends[b] != NULL; b++)
        for (size_t i = 0; kBackends[b]->tactics[i] != NULL; i++)
            if (strcmp(kBackends[b]->tactics[i]->name, name) == 0) return kBackends[b]->tactics[i];
    return NULL;
}
