/* fuzz_timing_cache.c - libFuzzer target for the timing cache reader (tc__timing_cache_load): inputs are
 * loaded as the cache of the machine with fingerprint 000000000000002a (the seeds', so mutations reach the
 * entry lines). A malformed file must load as an empty cache; a cache that loads must hold valid entries
 * (1..TC__TUNE_MAX_CANDIDATES candidates, winner in range, non-empty names) and save and load back to the
 * same entries. Seeds: corpus_timing_cache/. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tactics/tuner.h"

#define FINGERPRINT 0x2aull

static char path_in[64], path_out[64];

/* Every signature a line of the input may name is looked up from the text itself (first token of each line). */
static void check(const tc__timing_cache *c, const tc__timing_cache *again, const uint8_t *data, size_t size) {
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        char tok[32] = {0};
        size_t len = (size_t)((nl ? nl : end) - p);
        memcpy(tok, p, len < sizeof tok - 1 ? len : sizeof tok - 1);
        unsigned long long sig;
        if (sscanf(tok, "%llx", &sig) == 1) {
            const tc__tune_result *r = tc__timing_cache_find(c, sig);
            if (r != NULL) {
                if (r->n < 1 || r->n > TC__TUNE_MAX_CANDIDATES || r->winner < 0 || r->winner >= r->n) abort();
                for (int k = 0; k < r->n; k++)
                    if (r->cand[k].name[0] == '\0' || memchr(r->cand[k].name, '\0', sizeof r->cand[k].name) == NULL)
                        abort();
                const tc__tune_result *r2 = tc__timing_cache_find(again, sig);
                if (r2 == NULL || r2->n != r->n || r2->winner != r->winner) abort();
                for (int k = 0; k < r->n; k++)
                    if (strcmp(r2->cand[k].name, r->cand[k].name) != 0 || r2->cand[k].min_ns != r->cand[k].min_ns ||
                        r2->cand[k].median_ns != r->cand[k].median_ns || r2->cand[k].max_ns != r->cand[k].max_ns)
                        abort();
            }
        }
        p = nl ? nl + 1 : end;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (path_in[0] == '\0') {
        snprintf(path_in, sizeof path_in, "/tmp/fuzz_tcache_%d.in", (int)getpid());
        snprintf(path_out, sizeof path_out, "/tmp/fuzz_tcache_%d.out", (int)getpid());
    }
    FILE *f = fopen(path_in, "wb");
    if (f == NULL) return 0;
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    tc__err err = {0};
    tc__timing_cache *c = NULL, *again = NULL;
    if (tc__timing_cache_load(path_in, FINGERPRINT, &c, &err) != TC_STATUS_OK || c == NULL) abort();
    if (tc__timing_cache_save(c, path_out, &err) != TC_STATUS_OK) abort();
    if (tc__timing_cache_load(path_out, FINGERPRINT, &again, &err) != TC_STATUS_OK || again == NULL) abort();
    check(c, again, data, size);
    tc__timing_cache_free(again);
    tc__timing_cache_free(c);
    unlink(path_in);
    unlink(path_out);
    return 0;
}
