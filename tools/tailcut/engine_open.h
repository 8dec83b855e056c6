/* engine_open.h - shared by build/run/bench: parse profile options and get an engine from
 * a .plan (load) or an .onnx (import + build in memory). */
#ifndef TC_CLI_ENGINE_OPEN_H
#define TC_CLI_ENGINE_OPEN_H

#include <stdbool.h>

#include "tailcut/tailcut.h"

#define CLI_MAX_PROFILES 8
#define CLI_MAX_INPUTS 64
#define CLI_MAX_LAYER_PRECISION 256

typedef struct cli_build_args {
    /* k-th occurrence of --min-shapes/--opt-shapes/--max-shapes belongs to profile k; --shapes sets all three. */
    const char *min[CLI_MAX_PROFILES], *opt[CLI_MAX_PROFILES], *max[CLI_MAX_PROFILES];
    int n_min, n_opt, n_max;
    int threads;
    int64_t batch; /* --batch N, 0 if not given */
    uint32_t disabled_passes;
    uint32_t flags;             /* TC_BUILD_* */
    const char *timing_cache;   /* --timing-cache FILE */
    const char *backend;        /* --backend NAME (NULL: cpu) */
    /* INT8 (--int8): scales from --calib-cache FILE, or calibrated now on --calib-data DIR (then written to
     * --calib-cache when given); --layer-precision NAME:fp32 keeps a layer in FP32, NAME:int8 its 8-bit weights. */
    const char *calib_cache, *calib_data;
    int calib_method;           /* tc_calib_method */
    double percentile;          /* 0: 99.99 */
    int calib_samples;          /* 0: all */
    const char *layer_precision[CLI_MAX_LAYER_PRECISION]; /* --layer-precision values, NAME:fp32 or NAME:int8 */
    int n_layer_precision;
    double accuracy_threshold;  /* --accuracy-threshold X (0: none), measured by accuracy_metric */
    int accuracy_metric;        /* cli_accuracy_metric */
    /* On a plan (run, bench): --shapes gives the run-time shapes (shapes_given: the only shape option, once) and
     * --profile-index N the profile to run them in (profile_index N + 1; 0: the first profile that holds them). */
    bool shapes_given;
    int profile_index;
    bool quiet;                 /* --quiet: no progress on stderr while building (progress.h) */
} cli_build_args;

/* Consumes a build option at argv[*i] (advancing *i past its value). Returns 1 if consumed,
 * 0 if not a build option, -1 on a usage error (message printed). */
int cli_build_arg(cli_build_args *a, int argc, char **argv, int *i, const char *cmd);
/* Help text for the build options. */
const char *cli_build_usage(void);
/* True when path names a plan file (by its contents' magic, falling back to the extension). */
bool cli_is_plan(const char *path);
/* Loads a .plan or imports and builds an .onnx; prints the reason and returns non-zero on failure. */
int cli_open_engine(const char *path, const cli_build_args *a, const char *cmd, tc_engine **engine, double *load_ms);
/* Parses "1x3x224x224" into dims; returns rank or -1. */
int cli_parse_dims(const char *s, int64_t *dims);

#endif
