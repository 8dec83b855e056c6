/*
 * timing_cache.c - the timing cache file: a text file, one line per step signature,
 *   tailcut-timing-cache 3 <fingerprint hex>
 *   <signature hex> <winner index> <n> <name> <min ns> <median ns> <max ns> ... (n times)
 * where a tactic's configuration is the candidate "<name>#<index>" (tactic.h configs). Version 3 added those; version 2
 * files (no configurations) are read too, and builds that know only version 2 ignore a version 3 file (they would
 * take "<name>#<index>" for a tactic they do not have).
 * Parsed defensively: a malformed line makes the whole file count as empty (with no error, a
 * cache only saves time), another fingerprint's file likewise.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tactics/tuner.h"

typedef struct entry {
    uint64_t signature;
    tc__tune_result r;
} entry;

struct tc__timing_cache {
    uint64_t fingerprint;
    entry *e;
    int n, cap;
};

static int parse_line(char *line, entry *out) {
    char *p = line, *end;
    memset(out, 0, sizeof *out);
    errno = 0;
    out->signature = strtoull(p, &end, 16);
    if (end == p || errno) return -1;
    p = end;
    long winner = strtol(p, &end, 10);
    if (end == p) return -1;
    p = end;
    long n = strtol(p, &end, 10);
    if (end == p || n < 1 || n > TC__TUNE_MAX_CANDIDATES || winner < 0 || winner >= n) return -1;
    p = end;
    out->r.n = (int)n;
    out->r.winner = (int)winner;
    for (long k = 0; k < n; k++) {
        tc__tune_entry *c = &out->r.cand[k];
        while (*p == ' ') p++;
        size_t len = strcspn(p, " \n"), name_len = strcspn(p, " #\n");
        if (name_len == 0 || name_len >= sizeof c->name) return -1;
        memcpy(c->name, p, name_len);
        c->name[name_len] = '\0';
        c->config = -1;
        if (name_len < len) { /* "#index" */
            long j = strtol(p + name_len + 1, &end, 10);
            if (end != p + len || j < 0 || j >= TC__TACTIC_MAX_CONFIGS) return -1;
            c->config = (int32_t)j;
        }
        p += len;
        c->min_ns = strtoull(p, &end, 10);
        if (end == p) return -1;
        p = end;
        c->median_ns = strtoull(p, &end, 10);
        if (end == p) return -1;
        p = end;
        c->max_ns = strtoull(p, &end, 10);
        if (end == p) return -1;
        p = end;
    }
    return 0;
}

tc_status tc__timing_cache_load(const char *path, uint64_t fingerprint, tc__timing_cache **out, tc__err *err) {
    tc__timing_cache *c = calloc(1, sizeof *c);
    if (c == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    c->fingerprint = fingerprint;
    *out = c;
    FILE *f = path ? fopen(path, "r") : NULL;
    if (f == NULL) return TC_STATUS_OK;
    char line[4096]; /* a line holds at most TC__TUNE_MAX_CANDIDATES x (31-char name + 3 x 20 digits + 4 spaces) */
    unsigned long long fp = 0;
    int version = 0;
    bool ok = fgets(line, sizeof line, f) != NULL && sscanf(line, "tailcut-timing-cache %d %llx", &version, &fp) == 2 &&
              (version == 2 || version == 3) && fp == fingerprint;
    while (ok && fgets(line, sizeof line, f) != NULL) {
        entry e;
        if (strchr(line, '\n') == NULL || parse_line(line, &e) != 0) {
            ok = false;
            break;
        }
        if (tc__timing_cache_put(c, e.signature, &e.r, err) != TC_STATUS_OK) {
            fclose(f);
            return err->status;
        }
    }
    fclose(f);
    if (!ok) c->n = 0;
    return TC_STATUS_OK;
}

const tc__tune_result *tc__timing_cache_find(const tc__timing_cache *c, uint64_t signature) {
    for (int i = 0; c != NULL && i < c->n; i++)
        if (c->e[i].signature == signature) return &c->e[i].r;
    return NULL;
}

tc_status tc__timing_cache_put(tc__timing_cache *c, uint64_t signature, const tc__tune_result *r, tc__err *err) {
    for (int i = 0; i < c->n; i++)
        if (c->e[i].signature == signature) {
            c->e[i].r = *r;
            return TC_STATUS_OK;
        }
    if (c->n == c->cap) {
        int cap = c->cap ? c->cap * 2 : 64;
        entry *e = realloc(c->e, sizeof *e * (size_t)cap);
        if (e == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        c->e = e;
        c->cap = cap;
    }
    c->e[c->n].signature = signature;
    c->e[c->n].r = *r;
    c->n++;
    return TC_STATUS_OK;
}

tc_status tc__timing_cache_save(const tc__timing_cache *c, const char *path, tc__err *err) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL) return tc__fail(err, TC_STATUS_IO_ERROR, "cannot write timing cache '%s': %s", path, strerror(errno));
    fprintf(f, "tailcut-timing-cache 3 %016" PRIx64 "\n", c->fingerprint);
    for (int i = 0; i < c->n; i++) {
        const tc__tune_result *r = &c->e[i].r;
        fprintf(f, "%016" PRIx64 " %d %d", c->e[i].signature, r->winner, r->n);
        for (int k = 0; k < r->n; k++) {
            fprintf(f, " %s", r->cand[k].name);
            if (r->cand[k].config >= 0) fprintf(f, "#%d", (int)r->cand[k].config);
            fprintf(f, " %" PRIu64 " %" PRIu64 " %" PRIu64, r->cand[k].min_ns, r->cand[k].median_ns, r->cand[k].max_ns);
        }
        fputc('\n', f);
    }
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        return tc__fail(err, TC_STATUS_IO_ERROR, "cannot write timing cache '%s': %s", path, strerror(errno));
    return TC_STATUS_OK;
}

void tc__timing_cache_free(tc__timing_cache *c) {
    if (c == NULL) return;
    free(c->e);
    free(c);
}
