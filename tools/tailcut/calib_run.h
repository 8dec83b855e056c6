/* calib_run.h - INT8 calibration from a folder of samples, shared by `tailcut calibrate` and
 * `tailcut build --int8 --calib-data DIR`. */
#ifndef TC_CLI_CALIB_RUN_H
#define TC_CLI_CALIB_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "progress.h"
#include "tailcut/tailcut.h"

/* Parses a method name ("entropy", "minmax", "percentile"); returns non-zero (message printed) if unknown. */
int cli_calib_method(const char *name, tc_calib_method *method, const char *cmd);

/* Which samples of the folder a calibration runs, and how it reports. */
typedef struct cli_calib_opts {
    int max_samples;        /* 0: all; else at most this many, spread evenly over the folder (cli_samples_spread) */
    bool seeded;            /* pick at random inside each stratum, from seed (else its middle sample) */
    uint64_t seed;
    bool list_samples;      /* print the files of each sample run to stdout ("sample K: FILE ...") */
    cli_progress *progress; /* or NULL: the stage "sample", i of n */
    double *read_s;         /* or NULL: receives the seconds spent reading the sample files */
} cli_calib_opts;

/* Runs the samples of dir chosen by o through a calibrator of model and returns it in *out.
 * Prints the reason and returns non-zero on failure. */
int cli_calibrate(const tc_model *model, const char *dir, const cli_calib_opts *o, tc_calibrator **out, const char *cmd);

#endif
