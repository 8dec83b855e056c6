/* sample_dir.h - a folder of input samples: one .npy per sample per input, named <input name>.<k>.npy
 * (k = 0, 1, ...); for a single-input model any *.npy files (sorted by name, numbers compared numerically).
 * Used by `tailcut compare` and `tailcut calibrate`. */
#ifndef TC_CLI_SAMPLE_DIR_H
#define TC_CLI_SAMPLE_DIR_H

#include <stdbool.h>
#include <stdint.h>

#include "tailcut/tailcut.h"

typedef struct cli_sample_set {
    int n_inputs;              /* as given to cli_samples_open */
    int n_samples;
    char **paths;              /* paths[k * n_inputs + i]: file of input i in sample k (owned) */
} cli_sample_set;

/* Lists the samples in dir for the model inputs names[0..n_inputs) (at most max_samples when > 0).
 * Every sample must have a file for every input; a missing one, an empty folder, or no matching files is an
 * error naming the folder and the missing file. Prints the reason to stderr and returns non-zero on failure.
 * Samples are ordered by k (gaps allowed). An input name is used as is: a name with '/' names a file in a
 * subfolder of dir; names with an empty, "." or ".." path component are refused. Files starting with '.'
 * are ignored. names are not kept after the call. */
int cli_samples_open(const char *dir, int n_inputs, const char *const *names, int max_samples, cli_sample_set *s);
/* Loads sample k into tensors[0..n_inputs) with tc_tensor_load (caller frees each with tc_tensor_free).
 * Prints the reason (file name) and returns non-zero on failure; then nothing is left allocated. */
int cli_samples_load(const cli_sample_set *s, int k, tc_tensor *tensors);
/* Keeps n of the set's samples (all when n <= 0 or n >= their count), spread evenly over it: the folder's order cut
 * into n equal strata, one sample from each, its middle one unless seeded, then one at random (from seed; the same
 * seed picks the same samples). The order stays the folder's. Returns 0, or non-zero when out of memory (printed). */
int cli_samples_spread(cli_sample_set *s, int n, bool seeded, uint64_t seed);
/* The index in 0..count-1 (count >= n >= 1) of the sample that cli_samples_spread keeps for stratum i (0..n-1). */
int cli_samples_spread_index(int count, int n, int i, bool seeded, uint64_t seed);
/* Frees the paths and zeroes the set. NULL-safe, and safe on a zeroed or already closed set. */
void cli_samples_close(cli_sample_set *s);

#endif
