/* accuracy_fallback.h - `tailcut build --int8 --accuracy-threshold X`: keeps the least robust INT8 layers in
 * FP32 (with --fp16 / --bf16 too: in FP16 / BF16 where faster, else FP32) until the engine's outputs agree with
 * the FP32 engine's on the calibration samples; with --int8-reduce-range it gives them 8-bit weights first.
 * The library does it (tc_engine_build_accurate); this reads the samples of a folder for it. */
#ifndef TC_CLI_ACCURACY_FALLBACK_H
#define TC_CLI_ACCURACY_FALLBACK_H

#include "progress.h"
#include "tailcut/tailcut.h"

typedef enum cli_accuracy_metric {
    CLI_METRIC_COSINE = 0, /* the lowest cosine similarity of an output, over all samples */
    CLI_METRIC_TOP1 = 1,   /* the lowest top-1 agreement of an output (argmax over its last dim) */
} cli_accuracy_metric;

/*
 * Builds an INT8 engine of model with options o (TC_BUILD_INT8, o->fp32_layers the user's FP32 layers)
 * whose metric against the FP32 engine on up to max_samples samples of dir is at least threshold: layers
 * are moved out of INT8 (to FP32, or to the no-INT8 list when o allows FP16/BF16) in order of the estimated
 * SQNR of their input (calibrator c, by method), 1, 2, 4, ... at a time. With TC_BUILD_INT8_REDUCE_RANGE they
 * move to 8-bit weights first (o->int8_w8_layers), in the same order, and out of INT8 only when all of them
 * have 8-bit weights and the threshold is still missed (tc_engine_build_accurate). Prints each round (through
 * progress, which may be NULL; the builds' tuning steps show there through o->progress). Returns non-zero (message printed) on failure; otherwise *engine is set,
 * to the all-FP32-fallback engine if even that misses the threshold (with a warning).
 */
int cli_accuracy_fallback(const tc_model *model, const tc_build_options *o, const tc_calibrator *c,
                          tc_calib_method method, double percentile, const char *dir, int max_samples,
                          cli_accuracy_metric metric, double threshold, cli_progress *progress, tc_engine **engine,
                          const char *cmd);

#endif
