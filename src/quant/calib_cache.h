/*
 * calib_cache.h - the calibration cache file: the INT8 scale of every calibrated tensor of one
 * model, so that a rebuild needs no calibration data. A small text file in the spirit of
 * TensorRT's calibration cache:
 *
 *   tailcut-calibration-cache 1 entropy 0123456789abcdef
 *   conv1_out: 3c010a14
 *   ...
 *
 * The header holds the format version, the method and the model fingerprint (16 hex digits, given
 * by the caller); each further line is `<name>: <scale>`, the scale as the 8 hex digits of its
 * IEEE-754 float32 bits (bit-exact, as TensorRT writes them). A name is 1 to 255 bytes without
 * control characters and may contain ':' (a line is split at its last ": "). Every line ends in
 * '\n' ("\r\n" is accepted). Reading validates everything and names the file and line of the
 * first problem; writing is atomic (a temporary file renamed over the old one).
 */
#ifndef TC_QUANT_CALIB_CACHE_H
#define TC_QUANT_CALIB_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "quant/calib.h"

#define TC__CALIB_CACHE_VERSION 1
#define TC__CALIB_CACHE_MAX_NAME 255
/* Longest line accepted, without its '\n': a longest name, ": ", 8 digits and a '\r', with room. */
#define TC__CALIB_CACHE_MAX_LINE 300
#define TC__CALIB_CACHE_MAX_ENTRIES (1 << 18)
#define TC__CALIB_CACHE_MAX_FILE ((size_t)TC__CALIB_CACHE_MAX_ENTRIES * (TC__CALIB_CACHE_MAX_LINE + 1))

typedef struct tc__calib_entry {
    char name[TC__CALIB_CACHE_MAX_NAME + 1];
    float scale;
} tc__calib_entry;

/* Entries keep the order in which they were put or read. Owned by the cache. */
typedef struct tc__calib_cache {
    uint64_t fingerprint;
    tc__calib_method method;
    size_t n, cap;
    tc__calib_entry *entries;
    uint32_t *slots; /* open-addressing index: entry index + 1, 0 = free; nslots is a power of two */
    size_t nslots;
} tc__calib_cache;

/* Creates an empty cache for the model with this fingerprint; free it with tc__calib_cache_free(). */
tc_status tc__calib_cache_create(uint64_t fingerprint, tc__calib_method method, tc__calib_cache **cache,
                                 tc__err *err);

void tc__calib_cache_free(tc__calib_cache *cache);

/* Adds a tensor's scale (name is copied). Refuses a bad name (empty, over 255 bytes, control
 * characters), a scale that is not finite and positive, a name already present, and more than
 * TC__CALIB_CACHE_MAX_ENTRIES entries; the cache is unchanged on failure. */
tc_status tc__calib_cache_put(tc__calib_cache *cache, const char *name, float scale, tc__err *err);

/* Looks a tensor up; returns false (and leaves *scale alone) when it is absent. */
bool tc__calib_cache_find(const tc__calib_cache *cache, const char *name, float *scale);

/* Parses a cache held in memory (text need not end in NUL); file names the source in messages.
 * Fails with TC_STATUS_CORRUPT_FILE on malformed text, TC_STATUS_UNSUPPORTED on another format
 * version and TC_STATUS_INVALID_ARGUMENT when the file belongs to another model fingerprint.
 * *cache is written only on success. */
tc_status tc__calib_cache_parse(const char *text, size_t size, const char *file, uint64_t fingerprint,
                                tc__calib_cache **cache, tc__err *err);

/* Reads and parses the file at path (see tc__calib_cache_parse). *cache is written only on success. */
tc_status tc__calib_cache_load(const char *path, uint64_t fingerprint, tc__calib_cache **cache, tc__err *err);

/* Formats the cache as the file's text into a malloc'd, NUL-terminated buffer (freed by the caller). */
tc_status tc__calib_cache_format(const tc__calib_cache *cache, char **text, size_t *size, tc__err *err);

/* Writes the cache to path atomically: a temporary file in the same folder, flushed to disk, then
 * renamed over path. On failure path is left as it was. */
tc_status tc__calib_cache_save(const tc__calib_cache *cache, const char *path, tc__err *err);

#endif
