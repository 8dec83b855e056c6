/* cmd_calibrate.c - `tailcut calibrate MODEL.onnx --data DIR -o CALIB.cache`: INT8 calibration (implicit
 * quantization): runs FP32 on the samples, picks each activation's range by entropy, minmax or percentile
 * and writes the calibration cache that `tailcut build --int8 --calib-cache` reads. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calib_run.h"
#include "model_warn.h"
#include "cli.h"
#include "tailcut/tailcut.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: tailcut calibrate MODEL.onnx --data DIR -o CALIB.cache [options]\n"
            "  --data DIR           one .npy per sample per input, named <input name>.<k>.npy\n"
            "                       (a single-input model: any *.npy)\n"
            "  --method M           entropy (KL divergence, default), minmax or percentile\n"
            "  --percentile P       for --method percentile (default 99.99)\n"
            "  --samples N          use N samples spread evenly over the folder (default: all)\n"
            "  --seed S             with --samples: a random sample from each part of the folder, the same for\n"
            "                       the same S (default: each part's middle sample)\n"
            "  --quiet              no progress on stderr (a bar on a terminal, else a line every few seconds)\n"
            "  --verbose            print the samples run and each tensor's range\n"
            "  --export-qdq OUT     also write the calibrated model as a QDQ .onnx (QuantizeLinear/\n"
            "                       DequantizeLinear, int8 weights) that other runtimes load\n"
            "  --int8-reduce-range  with --export-qdq: weights on onnxruntime's reduce_range grid (|q| <= 64),\n"
            "                       as build --int8 --int8-reduce-range quantizes them\n");
}

int tc_cli_calibrate(int argc, char **argv) {
    const char *model_path = NULL, *data = NULL, *out = NULL, *qdq = NULL;
    tc_calib_method method = TC_CALIB_ENTROPY;
    double pct = 99.99;
    int samples = 0, verbose = 0, reduce_range = 0, quiet = 0, seeded = 0;
    uint64_t seed = 0;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const bool has_val = i + 1 < argc;
        if (strcmp(o, "-h") == 0 || strcmp(o, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(o, "--verbose") == 0) {
            verbose = 1;
        } else if (strcmp(o, "--quiet") == 0) {
            quiet = 1;
        } else if (strcmp(o, "--int8-reduce-range") == 0) {
            reduce_range = 1;
        } else if ((strcmp(o, "-o") == 0 || strcmp(o, "--data") == 0 || strcmp(o, "--method") == 0 ||
                    strcmp(o, "--export-qdq") == 0 ||
                    strcmp(o, "--percentile") == 0 || strcmp(o, "--samples") == 0 || strcmp(o, "--seed") == 0)) {
            if (!has_val) {
                fprintf(stderr, "tailcut calibrate: %s needs a value\n", o);
                return 2;
            }
            const char *v = argv[++i];
            char *end = NULL;
            if (strcmp(o, "-o") == 0) out = v;
            else if (strcmp(o, "--export-qdq") == 0) qdq = v;
            else if (strcmp(o, "--data") == 0) data = v;
            else if (strcmp(o, "--method") == 0) {
                if (cli_calib_method(v, &method, "calibrate")) return 2;
            } else if (strcmp(o, "--percentile") == 0) {
                pct = strtod(v, &end);
                if (end == v || *end || !(pct > 0.0 && pct <= 100.0)) {
                    fprintf(stderr, "tailcut calibrate: --percentile must be in (0, 100]\n");
                    return 2;
                }
            } else if (strcmp(o, "--seed") == 0) {
                errno = 0;
                unsigned long long sv = strtoull(v, &end, 10);
                if (end == v || *end || errno != 0 || v[0] == '-') {
                    fprintf(stderr, "tailcut calibrate: --seed must be an integer 0..%llu\n", (unsigned long long)UINT64_MAX);
                    return 2;
                }
                seed = (uint64_t)sv;
                seeded = 1;
            } else {
                long n = strtol(v, &end, 10);
                if (end == v || *end || n < 1 || n > 1000000) {
                    fprintf(stderr, "tailcut calibrate: --samples must be 1..1000000\n");
                    return 2;
                }
                samples = (int)n;
            }
        } else if (o[0] == '-') {
            fprintf(stderr, "tailcut calibrate: unknown option '%s'\n", o);
            usage(stderr);
            return 2;
        } else if (model_path == NULL) {
            model_path = o;
        } else {
            fprintf(stderr, "tailcut calibrate: unexpected argument '%s'\n", o);
            return 2;
        }
    }
    if (model_path == NULL || data == NULL || out == NULL) {
        usage(stderr);
        return 2;
    }
    if (reduce_range && qdq == NULL) {
        fprintf(stderr, "tailcut calibrate: --int8-reduce-range shapes the --export-qdq weights: give --export-qdq\n");
        return 2;
    }
    if (seeded && samples == 0) {
        fprintf(stderr, "tailcut calibrate: --seed picks the --samples subset: give --samples\n");
        return 2;
    }
    cli_progress *progress = cli_progress_start("calibrate", quiet);
    cli_progress_stage(progress, "loading model", 0);
    tc_error err;
    tc_model *m = NULL;
    if (tc_model_load(model_path, NULL, &m, &err) != TC_STATUS_OK) {
        cli_progress_end(progress);
        fprintf(stderr, "tailcut calibrate: %s\n", err.message);
        return 1;
    }
    cli_model_warnings(m, "calibrate", progress);
    tc_calibrator *c = NULL;
    double read_s = 0.0;
    const cli_calib_opts co = {.max_samples = samples, .seeded = seeded, .seed = seed, .list_samples = verbose,
                               .progress = progress, .read_s = &read_s};
    int rc = cli_calibrate(m, data, &co, &c, "calibrate");
    cli_progress_end(progress);
    if (rc == 0 && verbose)
        for (int i = 0; i < tc_calibrator_num_tensors(c); i++) {
            tc_calib_tensor_info ti;
            if (tc_calibrator_tensor(c, i, method, pct, &ti, &err) == TC_STATUS_OK)
                printf("%-48s amax %-10.6g SQNR %5.1f dB  %d layer(s), first %s\n", ti.name, ti.amax, ti.sqnr_db,
                       ti.num_layers, ti.num_layers ? ti.layers[0] : "-");
            else
                printf("%s\n", err.message);
        }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (rc == 0 && tc_calibrator_save(c, method, pct, out, &err) != TC_STATUS_OK) {
        fprintf(stderr, "tailcut calibrate: %s\n", err.message);
        rc = 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc == 0 && verbose) {
        tc_calib_timing tm;
        tc_calibrator_timing(c, &tm);
        printf("time: read %.3f s, engine build %.3f s (%d engine%s), engine run %.3f s, histograms %.3f s, "
               "ranges and write %.3f s\n",
               read_s, tm.build_s, tm.engines_built, tm.engines_built == 1 ? "" : "s", tm.run_s, tm.observe_s,
               (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
    }
    if (rc == 0) printf("wrote %s (%d tensors)\n", out, tc_calibrator_num_tensors(c));
    if (rc == 0 && qdq != NULL) {
        if (tc_calibrator_export_qdq_flags(c, method, pct, model_path, qdq, reduce_range ? TC_EXPORT_QDQ_REDUCE_RANGE : 0u,
                                           &err) != TC_STATUS_OK) {
            fprintf(stderr, "tailcut calibrate: %s\n", err.message);
            rc = 1;
        } else {
            printf("wrote %s (QDQ model)\n", qdq);
        }
    }
    tc_calibrator_destroy(c);
    tc_model_destroy(m);
    return rc;
}
