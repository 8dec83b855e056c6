/* accuracy_fallback.c - `--accuracy-threshold`: the calibration samples of a folder given to the library's
 * tc_engine_build_accurate, its rounds printed (see accuracy_fallback.h). */
#include "accuracy_fallback.h"

#include <stdio.h>
#include <stdlib.h>

#include "engine_open.h"
#include "sample_dir.h"

#define FB_MAX_SAMPLES 64

/* A round's report line, after clearing a terminal's progress bar (user: the cli_progress, or NULL). */
static void print_line(void *user, const char *line) { cli_progress_note(user, "%s\n", line); }

int cli_accuracy_fallback(const tc_model *model, const tc_build_options *o, const tc_calibrator *c,
                          tc_calib_method method, double percentile, const char *dir, int max_samples,
                          cli_accuracy_metric metric, double threshold, cli_progress *progress, tc_engine **engine,
                          const char *cmd) {
    const int n_in = tc_model_num_inputs(model);
    const char *names[CLI_MAX_INPUTS];
    for (int i = 0; i < n_in && i < CLI_MAX_INPUTS; i++) {
        tc_io_info info;
        tc_model_input_info(model, i, &info);
        names[i] = info.name;
    }
    cli_sample_set set = {0};
    if (cli_samples_open(dir, n_in, names, max_samples > 0 ? max_samples : FB_MAX_SAMPLES, &set)) return 1;
    tc_tensor *samples = calloc((size_t)(set.n_samples * n_in) + 1, sizeof *samples);
    int rc = samples == NULL, loaded = 0;
    if (rc) fprintf(stderr, "tailcut %s: out of memory\n", cmd);
    for (; rc == 0 && loaded < set.n_samples; loaded++)
        if (cli_samples_load(&set, loaded, &samples[loaded * n_in])) rc = 1;
    if (rc == 0) {
        tc_accuracy_options a = {.struct_size = sizeof a, .calibrator = c, .method = method, .percentile = percentile,
                                 .metric = (tc_accuracy_metric)metric, .threshold = threshold,
                                 .num_samples = set.n_samples, .num_inputs = n_in, .input_names = names,
                                 .samples = samples, .log = print_line, .log_user = progress};
        tc_error err;
        cli_progress_stage(progress, "accuracy rounds: building and running", 0);
        if (tc_engine_build_accurate(model, o, &a, engine, NULL, &err) != TC_STATUS_OK) {
            cli_progress_note(progress, "tailcut %s: %s\n", cmd, err.message);
            rc = 1;
        }
    }
    for (int i = 0; samples && i < loaded * n_in; i++) tc_tensor_free(&samples[i]);
    free(samples);
    cli_samples_close(&set);
    return rc;
}
