/* calib_run.c - INT8 calibration from a folder of samples (see calib_run.h). */
#include "calib_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine_open.h"
#include "sample_dir.h"

int cli_calib_method(const char *name, tc_calib_method *method, const char *cmd) {
    if (strcmp(name, "entropy") == 0) *method = TC_CALIB_ENTROPY;
    else if (strcmp(name, "minmax") == 0) *method = TC_CALIB_MINMAX;
    else if (strcmp(name, "percentile") == 0) *method = TC_CALIB_PERCENTILE;
    else {
        fprintf(stderr, "tailcut %s: unknown calibration method '%s' (entropy, minmax, percentile)\n", cmd, name);
        return 1;
    }
    return 0;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int cli_calibrate(const tc_model *model, const char *dir, const cli_calib_opts *o, tc_calibrator **out, const char *cmd) {
    const int n = tc_model_num_inputs(model);
    if (n < 1 || n > CLI_MAX_INPUTS) {
        fprintf(stderr, "tailcut %s: the model has %d inputs (1..%d supported)\n", cmd, n, CLI_MAX_INPUTS);
        return 1;
    }
    const char *names[CLI_MAX_INPUTS];
    for (int i = 0; i < n; i++) {
        tc_io_info info;
        tc_model_input_info(model, i, &info);
        names[i] = info.name;
    }
    cli_sample_set set = {0};
    if (cli_samples_open(dir, n, names, 0, &set)) return 1;
    const int found = set.n_samples;
    if (cli_samples_spread(&set, o->max_samples, o->seeded, o->seed)) {
        cli_samples_close(&set);
        return 1;
    }
    tc_error err;
    tc_calibrator *c = NULL;
    if (tc_calibrator_create(model, &c, &err) != TC_STATUS_OK) {
        fprintf(stderr, "tailcut %s: %s\n", cmd, err.message);
        cli_samples_close(&set);
        return 1;
    }
    cli_progress_stage(o->progress, "sample", set.n_samples);
    tc_tensor t[CLI_MAX_INPUTS];
    int rc = 0;
    for (int k = 0; k < set.n_samples && rc == 0; k++) {
        const char *first = set.paths[(size_t)k * (size_t)n];
        cli_progress_set(o->progress, k, first);
        if (o->list_samples) {
            printf("sample %d:", k);
            for (int i = 0; i < n; i++) printf(" %s", set.paths[(size_t)k * (size_t)n + (size_t)i]);
            printf("\n");
        }
        const double t0 = now_s();
        if (cli_samples_load(&set, k, t)) {
            rc = 1;
            break;
        }
        if (o->read_s) *o->read_s += now_s() - t0;
        if (tc_calibrator_add(c, n, names, t, &err) != TC_STATUS_OK) {
            cli_progress_note(o->progress, "tailcut %s: sample %s: %s\n", cmd, first, err.message);
            rc = 1;
        }
        for (int i = 0; i < n; i++) tc_tensor_free(&t[i]);
    }
    if (rc == 0) {
        cli_progress_set(o->progress, set.n_samples, NULL);
        if (set.n_samples < found)
            cli_progress_note(o->progress, "calibrated %d tensors on %d samples (of %d, spread evenly) from %s\n",
                              tc_calibrator_num_tensors(c), set.n_samples, found, dir);
        else
            cli_progress_note(o->progress, "calibrated %d tensors on %d samples from %s\n", tc_calibrator_num_tensors(c),
                              set.n_samples, dir);
    }
    cli_samples_close(&set);
    if (rc) {
        tc_calibrator_destroy(c);
        return rc;
    }
    *out = c;
    return 0;
}
