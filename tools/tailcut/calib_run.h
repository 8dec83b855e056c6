/* calib_run.h - INT8 calibration from a folder of samples, shared by `tailcut calibrate` and
 * `tailcut build --int8 --calib-data DIR`. */
#ifndef TC_CLI_CALIB_RUN_H
#define TC_CLI_CALIB_RUN_H

#include "tailcut/tailcut.h"

/* Parses a method name ("entropy", "minmax", "percentile"); returns non-zero (message printed) if unknown. */
int cli_calib_method(const char *name, tc_calib_method *method, const char *cmd);
/* Runs up to max_samples (0: all) samples of dir through a calibrator of model and returns it in *out.
 * Prints the reason and returns non-zero on failure. */
int cli_calibrate(const tc_model *model, const char *dir, int max_samples, tc_calibrator **out, const char *cmd);

#endif
