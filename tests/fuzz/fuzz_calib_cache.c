/* fuzz_calib_cache.c - libFuzzer target for the calibration cache reader. Inputs are parsed as the
 * cache of the model with fingerprint 0123456789abcdef (the seeds' fingerprint, so mutations reach
 * the entry lines); a cache that parses must satisfy its invariants, format, and parse back to the
 * same entries bit for bit. Seeds: corpus_calib_cache/. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "quant/calib_cache.h"

#define FINGERPRINT 0x0123456789abcdefull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size ? size : 1); /* exact size, so ASan sees any over-read */
    if (text == NULL) return 0;
    if (size) memcpy(text, data, size);
    tc__calib_cache *sentinel = (tc__calib_cache *)&sentinel, *c = sentinel;
    tc__err err = {0};
    tc_status st = tc__calib_cache_parse(text, size, "fuzz", FINGERPRINT, &c, &err);
    if (st != TC_STATUS_OK) {
        if (c != sentinel || err.msg[0] == '\0') abort(); /* output untouched, reason given */
    } else {
        for (size_t k = 0; k < c->n; k++) {
            const tc__calib_entry *e = &c->entries[k];
            size_t len = strlen(e->name);
            if (len == 0 || len > TC__CALIB_CACHE_MAX_NAME || !isfinite(e->scale) || !(e->scale > 0.0f)) abort();
            float s;
            if (!tc__calib_cache_find(c, e->name, &s) || memcmp(&s, &e->scale, sizeof s) != 0) abort();
        }
        char *again = NULL;
        size_t again_size = 0;
        tc__calib_cache *c2 = NULL;
        if (tc__calib_cache_format(c, &again, &again_size, &err) != TC_STATUS_OK) abort();
        if (tc__calib_cache_parse(again, again_size, "again", FINGERPRINT, &c2, &err) != TC_STATUS_OK) abort();
        if (c2->n != c->n || c2->method != c->method) abort();
        for (size_t k = 0; k < c->n; k++)
            if (strcmp(c2->entries[k].name, c->entries[k].name) != 0 ||
                memcmp(&c2->entries[k].scale, &c->entries[k].scale, sizeof(float)) != 0)
                abort();
        tc__calib_cache_free(c2);
        free(again);
        tc__calib_cache_free(c);
    }
    free(text);
    return 0;
}
