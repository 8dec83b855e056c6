/*
 * engine_blob.c - the plan's ENGINE section: steps (node, kind, tactic, precision) and
 * profiles (input ranges, arena/scratch sizes, per-value offsets and capacities).
 * Layout, all little-endian: "TCEN" u32 version | u32 threads | u32 n_steps | steps (48 bytes
 * each: u32 node, u8 kind, u8 backend (TC__BACKEND_*), 2 pad, char tactic[32], char precision[8]) | per step the tuner's
 * candidates: u32 n, u32 winner, n x (char name[32]: a configuration's "name#index", u64 median_ns, u64 max_ns) |
 * u32 n_profiles |
 * per profile: u32 n_ranges, per range (u32 value, u32 rank, i64 min[8], opt[8], max[8]),
 * u64 arena, naive, scratch, u32 n_values, u64 offset[n_values], u64 capacity[n_values] | per profile, per step
 * the parameter blob (the tactic's configuration): u32 size, size bytes, zeros to a multiple of 4 | per step the
 * tactics that were no candidate: u32 n, n x (char name[32], char why[96]).
 * Version 3 added the step's backend and the parameter blobs, version 4 the rejected tactics.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

#define BLOB_MAGIC 0x4e454354u /* "TCEN" */
#define BLOB_VERSION 4u
#define PARAM_MAX 4096u /* bytes of one step's configuration */

typedef struct wbuf {
    unsigned char *p;
    size_t n, cap;
    bool oom;
} wbuf;

static void put(wbuf *w, const void *src, size_t n) {
    if (w->oom) return;
    if (w->n + n > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < w->n + n) cap *= 2;
        unsigned char *p = realloc(w->p, cap);
        if (p == NULL) {
            w->oom = true;
            return;
        }
        memset(p + w->cap, 0, cap - w->cap);
        w->p = p;
        w->cap = cap;
    }
    memcpy(w->p + w->n, src, n);
    w->n += n;
}
static void put_u32(wbuf *w, uint32_t v) { put(w, &v, 4); }
static void put_u64(wbuf *w, uint64_t v) { put(w, &v, 8); }

tc_status tc__engine_blob_write(const tc_engine *e, void **out, size_t *size, tc__err *err) {
    wbuf w = {0};
    put_u32(&w, BLOB_MAGIC);
    put_u32(&w, BLOB_VERSION);
    put_u32(&w, (uint32_t)e->threads);
    put_u32(&w, (uint32_t)e->n_steps);
    for (int k = 0; k < e->n_steps; k++) {
        const tc__step *s = &e->steps[k];
        unsigned char rec[48] = {0};
        memcpy(rec, &s->node, 4);
        rec[4] = s->kind;
        rec[5] = s->backend;
        memcpy(rec + 8, s->tactic, sizeof s->tactic);
        memcpy(rec + 40, s->precision, sizeof s->precision);
        put(&w, rec, sizeof rec);
    }
    for (int k = 0; k < e->n_steps; k++) {
        const tc__tune_result *r = e->tuning ? &e->tuning[k] : NULL;
        put_u32(&w, r ? (uint32_t)r->n : 0);
        put_u32(&w, r ? (uint32_t)r->winner : 0);
        for (int c = 0; r && c < r->n; c++) {
            char name[32] = {0}; /* (a configuration's candidate: "name#index", for inspect) */
            if (r->cand[c].config >= 0)
                snprintf(name, sizeof name, "%.26s#%d", r->cand[c].name, (int)(r->cand[c].config % 100));
            else
                memcpy(name, r->cand[c].name, strnlen(r->cand[c].name, 31));
            put(&w, name, sizeof name);
            put_u64(&w, r->cand[c].median_ns);
            put_u64(&w, r->cand[c].max_ns);
        }
    }
    put_u32(&w, (uint32_t)e->n_profiles);
    for (int p = 0; p < e->n_profiles; p++) {
        const tc__profile *pr = &e->profiles[p];
        put_u32(&w, (uint32_t)pr->n_ranges);
        for (int r = 0; r < pr->n_ranges; r++) {
            const tc__range *rg = &pr->ranges[r];
            put_u32(&w, (uint32_t)rg->value);
            put_u32(&w, (uint32_t)rg->rank);
            for (int i = 0; i < TC_MAX_RANK; i++) put_u64(&w, (uint64_t)(i < rg->rank ? rg->min[i] : 0));
            for (int i = 0; i < TC_MAX_RANK; i++) put_u64(&w, (uint64_t)(i < rg->rank ? rg->opt[i] : 0));
            for (int i = 0; i < TC_MAX_RANK; i++) put_u64(&w, (uint64_t)(i < rg->rank ? rg->max[i] : 0));
        }
        put_u64(&w, pr->arena_bytes);
        put_u64(&w, pr->naive_bytes);
        put_u64(&w, pr->scratch_bytes);
        put_u32(&w, (uint32_t)e->g->n_values);
        for (int v = 0; v < e->g->n_values; v++) put_u64(&w, pr->offset[v]);
        for (int v = 0; v < e->g->n_values; v++) put_u64(&w, pr->capacity[v]);
    }
    for (int p = 0; p < e->n_profiles; p++)
        for (int k = 0; k < e->n_steps; k++) {
            const size_t i = (size_t)p * (size_t)e->n_steps + (size_t)k;
            const uint32_t n = e->param_size ? e->param_size[i] : 0;
            if (n > PARAM_MAX) {
                free(w.p);
                return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "step %d: a %u-byte configuration (at most %u)", k, n,
                                PARAM_MAX);
            }
            static const unsigned char zeros[4] = {0};
            put_u32(&w, n);
            if (n) put(&w, e->params[i], n);
            put(&w, zeros, (4 - n % 4) % 4);
        }
    for (int k = 0; k < e->n_steps; k++) {
        const tc__tune_result *r = e->tuning ? &e->tuning[k] : NULL;
        put_u32(&w, r ? (uint32_t)r->n_rejected : 0);
        for (int j = 0; r && j < r->n_rejected; j++) {
            tc__tune_reject rec;
            memset(&rec, 0, sizeof rec);
            memcpy(rec.name, r->rejected[j].name, strnlen(r->rejected[j].name, sizeof rec.name - 1));
            memcpy(rec.why, r->rejected[j].why, strnlen(r->rejected[j].why, sizeof rec.why - 1));
            put(&w, rec.name, sizeof rec.name);
            put(&w, rec.why, sizeof rec.why);
        }
    }
    if (w.oom) {
        free(w.p);
        return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory writing the engine section");
    }
    *out = w.p;
    *size = w.n;
    return TC_STATUS_OK;
}

typedef struct rbuf {
    const unsigned char *p;
    size_t n, at;
    bool bad;
} rbuf;

static void get(rbuf *r, void *dst, size_t n) {
    if (r->bad || n > r->n - r->at) {
        r->bad = true;
        memset(dst, 0, n);
        return;
    }
    memcpy(dst, r->p + r->at, n);
    r->at += n;
}
static uint32_t get_u32(rbuf *r) {
    uint32_t v;
    get(r, &v, 4);
    return v;
}
static uint64_t get_u64(rbuf *r) {
    uint64_t v;
    get(r, &v, 8);
    return v;
}

static tc_status corrupt(tc__err *err, const char *what) {
    return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan ENGINE section is corrupt: %s", what);
}

tc_status tc__engine_blob_read(tc_engine *e, const void *data, size_t size, tc__err *err) {
    rbuf r = {data, size, 0, false};
    const tc__graph *g = e->g;
    if (get_u32(&r) != BLOB_MAGIC) return corrupt(err, "bad magic");
    uint32_t version = get_u32(&r);
    if (version != BLOB_VERSION)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "plan engine section version %u, this build reads %u: rebuild the plan",
                        version, BLOB_VERSION);
    e->threads = (int32_t)get_u32(&r);
    uint32_t n_steps = get_u32(&r);
    if (r.bad || n_steps > (uint32_t)g->n_nodes || (size_t)n_steps * 48 > size) return corrupt(err, "step count");
    e->steps = calloc(n_steps ? n_steps : 1, sizeof *e->steps);
    if (e->steps == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    e->n_steps = (int32_t)n_steps;
    for (uint32_t k = 0; k < n_steps; k++) {
        unsigned char rec[48];
        get(&r, rec, sizeof rec);
        tc__step *s = &e->steps[k];
        memcpy(&s->node, rec, 4);
        s->kind = rec[4];
        s->backend = rec[5];
        memcpy(s->tactic, rec + 8, sizeof s->tactic);
        memcpy(s->precision, rec + 40, sizeof s->precision);
        s->tactic[sizeof s->tactic - 1] = '\0';
        s->precision[sizeof s->precision - 1] = '\0';
        if (s->node < 0 || s->node >= g->n_nodes || s->kind > TC__STEP_VIEW || rec[6] || rec[7])
            return corrupt(err, "step record");
        if (strcmp(tc__backend_name(s->backend), "unknown") == 0) return corrupt(err, "step backend");
        if (k > 0 && s->node <= e->steps[k - 1].node) return corrupt(err, "steps out of order");
    }
    e->tuning = calloc(n_steps ? n_steps : 1, sizeof *e->tuning);
    if (e->tuning == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    for (uint32_t k = 0; k < n_steps; k++) {
        tc__tune_result *res = &e->tuning[k];
        uint32_t n = get_u32(&r), winner = get_u32(&r);
        if (r.bad || n > TC__TUNE_MAX_CANDIDATES || (n > 0 && winner >= n)) return corrupt(err, "tuning record");
        res->n = (int)n;
        res->winner = (int)winner;
        for (uint32_t c = 0; c < n; c++) {
            get(&r, res->cand[c].name, sizeof res->cand[c].name);
            res->cand[c].name[sizeof res->cand[c].name - 1] = '\0';
            res->cand[c].median_ns = get_u64(&r);
            res->cand[c].max_ns = get_u64(&r);
            res->cand[c].config = -1; /* (shown as named) */
        }
    }
    uint32_t n_profiles = get_u32(&r);
    if (r.bad || n_profiles == 0 || n_profiles > 64) return corrupt(err, "profile count");
    e->profiles = calloc(n_profiles, sizeof *e->profiles);
    if (e->profiles == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    e->n_profiles = (int32_t)n_profiles;
    for (uint32_t p = 0; p < n_profiles; p++) {
        tc__profile *pr = &e->profiles[p];
        uint32_t n_ranges = get_u32(&r);
        if (r.bad || n_ranges != (uint32_t)g->n_inputs) return corrupt(err, "range count");
        pr->ranges = calloc(n_ranges ? n_ranges : 1, sizeof *pr->ranges);
        if (pr->ranges == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        pr->n_ranges = (int32_t)n_ranges;
        for (uint32_t i = 0; i < n_ranges; i++) {
            tc__range *rg = &pr->ranges[i];
            rg->value = (int32_t)get_u32(&r);
            rg->rank = (int32_t)get_u32(&r);
            for (int d = 0; d < TC_MAX_RANK; d++) rg->min[d] = (int64_t)get_u64(&r);
            for (int d = 0; d < TC_MAX_RANK; d++) rg->opt[d] = (int64_t)get_u64(&r);
            for (int d = 0; d < TC_MAX_RANK; d++) rg->max[d] = (int64_t)get_u64(&r);
            if (r.bad || rg->value != g->inputs[i] || rg->rank < 0 || rg->rank > TC_MAX_RANK)
                return corrupt(err, "input range");
            for (int d = 0; d < rg->rank; d++)
                if (rg->min[d] < 0 || rg->min[d] > rg->opt[d] || rg->opt[d] > rg->max[d]) return corrupt(err, "input range dims");
        }
        pr->arena_bytes = get_u64(&r);
        pr->naive_bytes = get_u64(&r);
        pr->scratch_bytes = get_u64(&r);
        uint32_t nv = get_u32(&r);
        if (r.bad || nv != (uint32_t)g->n_values) return corrupt(err, "value count");
        if (pr->arena_bytes > ((uint64_t)1 << 40) || pr->scratch_bytes > ((uint64_t)1 << 40))
            return corrupt(err, "arena size");
        pr->offset = calloc(nv ? nv : 1, sizeof *pr->offset);
        pr->capacity = calloc(nv ? nv : 1, sizeof *pr->capacity);
        if (pr->offset == NULL || pr->capacity == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        for (uint32_t v = 0; v < nv; v++) pr->offset[v] = get_u64(&r);
        for (uint32_t v = 0; v < nv; v++) pr->capacity[v] = get_u64(&r);
        for (uint32_t v = 0; v < nv && !r.bad; v++)
            if (pr->offset[v] != TC__NOT_IN_ARENA &&
                (pr->capacity[v] > pr->arena_bytes || pr->offset[v] > pr->arena_bytes - pr->capacity[v]))
                return corrupt(err, "buffer outside the arena");
    }
    const size_t n_params = (size_t)n_profiles * n_steps;
    e->params = calloc(n_params ? n_params : 1, sizeof *e->params);
    e->param_size = calloc(n_params ? n_params : 1, sizeof *e->param_size);
    if (e->params == NULL || e->param_size == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; i < n_params && !r.bad; i++) {
        const uint32_t n = get_u32(&r), padded = n + (4 - n % 4) % 4;
        if (r.bad || n > PARAM_MAX || padded > r.n - r.at) return corrupt(err, "parameter blob");
        e->param_size[i] = n;
        e->params[i] = n ? r.p + r.at : NULL;
        for (uint32_t b = n; b < padded; b++)
            if (r.p[r.at + b] != 0) return corrupt(err, "parameter blob padding");
        r.at += padded;
    }
    for (uint32_t k = 0; k < n_steps && !r.bad; k++) {
        tc__tune_result *res = &e->tuning[k];
        const uint32_t n = get_u32(&r);
        if (r.bad || n > TC__TUNE_MAX_CANDIDATES) return corrupt(err, "rejected tactics");
        res->n_rejected = (int)n;
        for (uint32_t j = 0; j < n; j++) {
            get(&r, res->rejected[j].name, sizeof res->rejected[j].name);
            get(&r, res->rejected[j].why, sizeof res->rejected[j].why);
            res->rejected[j].name[sizeof res->rejected[j].name - 1] = '\0';
            res->rejected[j].why[sizeof res->rejected[j].why - 1] = '\0';
        }
    }
    if (r.bad) return corrupt(err, "truncated");
    if (r.at != size) return corrupt(err, "trailing bytes");
    return TC_STATUS_OK;
}
