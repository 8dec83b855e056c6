/* engine_open.c - profile options (trtexec-style --shapes / --min-shapes / --opt-shapes /
 * --max-shapes name:1x3x224x224,...) and opening an engine from a .plan or an .onnx. */
#include "engine_open.h"

#include "accuracy_fallback.h"
#include "calib_run.h"
#include "model_warn.h"
#include "progress.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


const char *cli_build_usage(void) {
    return "  --backend NAME                the backend to build for: cpu (default) or cuda\n"
           "  --profile-index N             on a plan: run in profile N (default: the first that holds the shapes)\n"
           "  --shapes NAME:DxDx..,...      static input shapes (min = opt = max)\n"
           "  --min-shapes/--opt-shapes/--max-shapes NAME:DxD..,...\n"
           "                                a dynamic-shape profile; repeat the trio for more profiles\n"
           "  --batch N                     shorthand: every input's symbolic first dim is N\n"
           "  --threads N                   threads per context (default: all cores)\n"
           "  --timing-cache FILE           reuse and update the auto-tuner's timings (fast rebuilds)\n"
           "  --tactics-fixed               choose kernels by heuristic order, without timing them\n"
           "  --quiet                       no progress on stderr while building (a bar on a terminal, else\n"
           "                                a line every few seconds: tuning step i of n, calibration sample)\n"
           "  --disable-pass NAME           switch off an optimisation pass (tailcut build --help lists them), or 'all'\n"
           "  --int8                        allow INT8 Conv/MatMul/Gemm layers where faster (needs scales:)\n"
           "  --int8-reduce-range           with --int8: weights may take 7 bits where a kernel is faster so\n"
           "                                (onnxruntime's reduce_range; AVX2 CPUs without VNNI; changes results)\n"
           "  --fp16                        allow FP16 Conv/MatMul/Gemm layers where faster (AVX512-FP16;\n"
           "                                on --backend cuda: Tensor Cores through cuBLASLt)\n"
           "  --bf16                        allow BF16 Conv/MatMul/Gemm layers where faster (AVX512-BF16)\n"
           "  --calib-cache FILE            activation scales from `tailcut calibrate` (written when\n"
           "                                --calib-data is given too)\n"
           "  --calib-data DIR              calibrate now on DIR (<input>.<k>.npy files)\n"
           "  --calib-method M              entropy (default), minmax or percentile (with --calib-data)\n"
           "  --percentile P                for --calib-method percentile (default 99.99)\n"
           "  --calib-samples N             calibrate on N samples spread evenly over DIR (default: all)\n"
           "  --layer-precision NAME:fp32   keep node NAME in FP32 with --int8/--fp16/--bf16\n"
           "  --layer-precision NAME:int8   with --int8-reduce-range: node NAME keeps 8-bit INT8 weights\n"
           "  --accuracy-threshold X        (with --calib-data) keep the layers with the noisiest INT8 input\n"
           "                                in FP32 until the outputs agree with FP32 on the calibration\n"
           "                                samples by at least X (e.g. 0.999)\n"
           "  --accuracy-metric M           cosine (default: the lowest output cosine similarity) or top1\n"
           "                                (the lowest top-1 agreement over the last dim)\n";
}

int cli_parse_dims(const char *s, int64_t *dims) {
    int rank = 0;
    if (*s == '\0') return 0;
    for (;;) {
        if (rank >= TC_MAX_RANK) return -1;
        errno = 0;
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s || errno || v < 0) return -1;
        dims[rank++] = v;
        if (*end == '\0' || *end == ',') return rank;
        if (*end != 'x' && *end != 'X') return -1;
        s = end + 1;
    }
}

int cli_build_arg(cli_build_args *a, int argc, char **argv, int *i, const char *cmd) {
    const char *o = argv[*i];
    const char **slot = NULL;
    int *count = NULL;
    bool all = false;
    if (strcmp(o, "--shapes") == 0) all = true;
    else if (strcmp(o, "--min-shapes") == 0) slot = a->min, count = &a->n_min;
    else if (strcmp(o, "--opt-shapes") == 0) slot = a->opt, count = &a->n_opt;
    else if (strcmp(o, "--max-shapes") == 0) slot = a->max, count = &a->n_max;
    else if (strcmp(o, "--tactics-fixed") == 0) {
        a->flags |= TC_BUILD_TACTICS_FIXED;
        return 1;
    } else if (strcmp(o, "--int8") == 0) {
        a->flags |= TC_BUILD_INT8;
        return 1;
    } else if (strcmp(o, "--quiet") == 0) {
        a->quiet = true;
        return 1;
    } else if (strcmp(o, "--int8-reduce-range") == 0) {
        a->flags |= TC_BUILD_INT8_REDUCE_RANGE;
        return 1;
    } else if (strcmp(o, "--fp16") == 0 || strcmp(o, "--bf16") == 0) {
        a->flags |= o[2] == 'f' ? TC_BUILD_FP16 : TC_BUILD_BF16;
        return 1;
    } else if (strcmp(o, "--threads") != 0 && strcmp(o, "--disable-pass") != 0 && strcmp(o, "--batch") != 0 &&
               strcmp(o, "--timing-cache") != 0 && strcmp(o, "--calib-cache") != 0 && strcmp(o, "--calib-data") != 0 &&
               strcmp(o, "--calib-method") != 0 && strcmp(o, "--percentile") != 0 &&
               strcmp(o, "--calib-samples") != 0 && strcmp(o, "--layer-precision") != 0 &&
               strcmp(o, "--accuracy-threshold") != 0 && strcmp(o, "--accuracy-metric") != 0 &&
               strcmp(o, "--backend") != 0 && strcmp(o, "--profile-index") != 0)
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "tailcut %s: %s needs a value\n", cmd, o);
        return -1;
    }
    const char *val = argv[++*i];
    if (strcmp(o, "--timing-cache") == 0) {
        a->timing_cache = val;
        return 1;
    }
    if (strcmp(o, "--profile-index") == 0) {
        char *end = NULL;
        long v = strtol(val, &end, 10);
        if (end == val || *end || v < 0 || v > 63) {
            fprintf(stderr, "tailcut %s: --profile-index must be 0..63, not '%s'\n", cmd, val);
            return -1;
        }
        a->profile_index = (int)v + 1;
        return 1;
    }
    if (strcmp(o, "--backend") == 0) { /* the library names the known backends and says which this build lacks */
        a->backend = val;
        return 1;
    }
    if (strcmp(o, "--calib-cache") == 0 || strcmp(o, "--calib-data") == 0) {
        *(strcmp(o, "--calib-cache") == 0 ? &a->calib_cache : &a->calib_data) = val;
        return 1;
    }
    if (strcmp(o, "--calib-method") == 0) {
        tc_calib_method m;
        if (cli_calib_method(val, &m, cmd)) return -1;
        a->calib_method = (int)m;
        return 1;
    }
    if (strcmp(o, "--percentile") == 0 || strcmp(o, "--calib-samples") == 0) {
        char *end = NULL;
        double v = strtod(val, &end);
        if (end == val || *end || (o[2] == 'p' ? !(v > 0.0 && v <= 100.0) : !(v >= 1 && v <= 1e6 && v == (int)v))) {
            fprintf(stderr, "tailcut %s: %s: bad value '%s'\n", cmd, o, val);
            return -1;
        }
        if (o[2] == 'p') a->percentile = v;
        else a->calib_samples = (int)v;
        return 1;
    }
    if (strcmp(o, "--accuracy-threshold") == 0) {
        char *end = NULL;
        a->accuracy_threshold = strtod(val, &end);
        if (end == val || *end || !(a->accuracy_threshold > 0.0 && a->accuracy_threshold <= 1.0)) {
            fprintf(stderr, "tailcut %s: --accuracy-threshold must be in (0, 1]\n", cmd);
            return -1;
        }
        return 1;
    }
    if (strcmp(o, "--accuracy-metric") == 0) {
        if (strcmp(val, "cosine") == 0) a->accuracy_metric = CLI_METRIC_COSINE;
        else if (strcmp(val, "top1") == 0) a->accuracy_metric = CLI_METRIC_TOP1;
        else {
            fprintf(stderr, "tailcut %s: --accuracy-metric is cosine or top1, not '%s'\n", cmd, val);
            return -1;
        }
        return 1;
    }
    if (strcmp(o, "--layer-precision") == 0) {
        const char *colon = strrchr(val, ':');
        if (colon == NULL || colon == val || (strcmp(colon + 1, "fp32") != 0 && strcmp(colon + 1, "int8") != 0)) {
            fprintf(stderr, "tailcut %s: --layer-precision wants NAME:fp32 or NAME:int8, got '%s'\n", cmd, val);
            return -1;
        }
        if (a->n_layer_precision >= CLI_MAX_LAYER_PRECISION) {
            fprintf(stderr, "tailcut %s: at most %d --layer-precision options\n", cmd, CLI_MAX_LAYER_PRECISION);
            return -1;
        }
        a->layer_precision[a->n_layer_precision++] = val; /* the name is cut at the colon when building */
        return 1;
    }
    if (strcmp(o, "--threads") == 0) {
        a->threads = atoi(val);
        if (a->threads < 0 || a->threads > 1024) {
            fprintf(stderr, "tailcut %s: --threads must be 0..1024\n", cmd);
            return -1;
        }
        return 1;
    }
    if (strcmp(o, "--batch") == 0) {
        a->batch = atoll(val);
        if (a->batch < 1) {
            fprintf(stderr, "tailcut %s: --batch must be at least 1\n", cmd);
            return -1;
        }
        return 1;
    }
    if (strcmp(o, "--disable-pass") == 0) {
        if (strcmp(val, "all") == 0) {
            a->disabled_passes = ~0u;
            return 1;
        }
        for (int k = 0; k < tc_pass_count(); k++)
            if (strcmp(val, tc_pass_name(k)) == 0) {
                a->disabled_passes |= tc_pass_flag(k);
                return 1;
            }
        fprintf(stderr, "tailcut %s: unknown pass '%s' (tailcut build --help lists them)\n", cmd, val);
        return -1;
    }
    if (all) {
        if (a->n_min >= CLI_MAX_PROFILES || a->n_min != a->n_opt || a->n_opt != a->n_max) {
            fprintf(stderr, "tailcut %s: --shapes cannot be mixed with an unfinished min/opt/max profile\n", cmd);
            return -1;
        }
        a->min[a->n_min++] = a->opt[a->n_opt++] = a->max[a->n_max++] = val;
        a->shapes_given = true;
        return 1;
    }
    if (*count >= CLI_MAX_PROFILES) {
        fprintf(stderr, "tailcut %s: at most %d profiles\n", cmd, CLI_MAX_PROFILES);
        return -1;
    }
    slot[(*count)++] = val;
    return 1;
}

/* Frees the layer names layer_names() copied. */
static void free_layer_names(const tc_build_options *o, char **names) {
    for (int i = 0; i < o->num_fp32_layers; i++) free(names[i]);
    for (int i = 0; i < o->num_int8_w8_layers; i++) free(names[CLI_MAX_LAYER_PRECISION - 1 - i]);
}

/* The --layer-precision names, copied into names[] (CLI_MAX_LAYER_PRECISION slots): NAME:fp32 from the front, the build
 * options' FP32 layers; NAME:int8 from the back, their 8-bit-weight layers (with --int8-reduce-range only). */
static int layer_names(const cli_build_args *a, tc_build_options *o, char **names, const char *cmd) {
    o->num_fp32_layers = o->num_int8_w8_layers = 0;
    for (int i = 0; i < a->n_layer_precision; i++) {
        const char *colon = strrchr(a->layer_precision[i], ':');
        const bool w8 = strcmp(colon + 1, "int8") == 0;
        char *name = strndup(a->layer_precision[i], (size_t)(colon - a->layer_precision[i]));
        if (name == NULL) {
            free_layer_names(o, names);
            fprintf(stderr, "tailcut %s: out of memory\n", cmd);
            return 1;
        }
        if (w8) names[CLI_MAX_LAYER_PRECISION - 1 - o->num_int8_w8_layers++] = name;
        else names[o->num_fp32_layers++] = name;
    }
    o->fp32_layers = (const char *const *)names;
    o->int8_w8_layers = (const char *const *)names + CLI_MAX_LAYER_PRECISION - o->num_int8_w8_layers;
    return 0;
}

/* The reduced-precision build options: for INT8 the calibration cache (calibrated now on --calib-data, into
 * --calib-cache or a temporary file whose name goes to tmp_cache); the FP32 and 8-bit-weight layers (names copied into
 * names[], layer_names). */
static int precision_options(const tc_model *model, const cli_build_args *a, tc_build_options *o, char **names,
                             char *tmp_cache, tc_calibrator **keep, cli_progress *progress, const char *cmd) {
    if (a->n_layer_precision && !(a->flags & (TC_BUILD_INT8 | TC_BUILD_FP16 | TC_BUILD_BF16))) {
        fprintf(stderr, "tailcut %s: --layer-precision needs --int8, --fp16 or --bf16\n", cmd);
        return 2;
    }
    for (int i = 0; i < a->n_layer_precision; i++)
        if (strcmp(strrchr(a->layer_precision[i], ':') + 1, "int8") == 0 && !(a->flags & TC_BUILD_INT8_REDUCE_RANGE)) {
            fprintf(stderr, "tailcut %s: --layer-precision %s: NAME:int8 (8-bit weights) is for --int8-reduce-range\n",
                    cmd, a->layer_precision[i]);
            return 2;
        }
    if (!(a->flags & TC_BUILD_INT8)) {
        if (a->calib_cache || a->calib_data || a->accuracy_threshold > 0 || (a->flags & TC_BUILD_INT8_REDUCE_RANGE)) {
            fprintf(stderr, "tailcut %s: --calib-cache, --calib-data, --accuracy-threshold and --int8-reduce-range need --int8\n",
                    cmd);
            return 2;
        }
        return layer_names(a, o, names, cmd);
    }
    if (a->accuracy_threshold > 0 && a->calib_data == NULL) {
        fprintf(stderr, "tailcut %s: --accuracy-threshold measures on the calibration samples: give --calib-data\n",
                cmd);
        return 2;
    }
    if (a->calib_cache == NULL && a->calib_data == NULL) {
        fprintf(stderr, "tailcut %s: --int8 needs --calib-cache FILE or --calib-data DIR\n", cmd);
        return 2;
    }
    o->calib_cache = a->calib_cache;
    if (a->calib_data != NULL) {
        const char *path = a->calib_cache;
        if (path == NULL) {
            strcpy(tmp_cache, "/tmp/tailcut-calib-XXXXXX");
            int fd = mkstemp(tmp_cache);
            if (fd < 0) {
                fprintf(stderr, "tailcut %s: cannot create a temporary calibration cache: %s\n", cmd, strerror(errno));
                tmp_cache[0] = '\0';
                return 1;
            }
            close(fd);
            path = tmp_cache;
        }
        tc_calibrator *c = NULL;
        const cli_calib_opts co = {.max_samples = a->calib_samples, .progress = progress};
        if (cli_calibrate(model, a->calib_data, &co, &c, cmd)) return 1;
        tc_error err;
        tc_status st = tc_calibrator_save(c, (tc_calib_method)a->calib_method, a->percentile > 0 ? a->percentile : 99.99,
                                          path, &err);
        if (keep != NULL && a->accuracy_threshold > 0 && st == TC_STATUS_OK) *keep = c;
        else tc_calibrator_destroy(c);
        if (st != TC_STATUS_OK) {
            fprintf(stderr, "tailcut %s: %s\n", cmd, err.message);
            return 1;
        }
        o->calib_cache = path;
    }
    return layer_names(a, o, names, cmd);
}

/* Parses "a:1x2,b:3x4" into ranges; which = 0 min, 1 opt, 2 max. */
static int parse_spec(const char *spec, tc_input_range *r, int *n, int which, char *names, size_t names_size,
                      size_t *names_used, const char *cmd) {
    const char *p = spec;
    while (*p) {
        const char *colon = strchr(p, ':');
        if (colon == NULL) {
            fprintf(stderr, "tailcut %s: bad shape spec '%s' (want NAME:DxD,...)\n", cmd, spec);
            return -1;
        }
        size_t len = (size_t)(colon - p);
        int k = 0;
        while (k < *n && !(strlen(r[k].name) == len && strncmp(r[k].name, p, len) == 0)) k++;
        if (k == *n) {
            if (*n >= CLI_MAX_INPUTS || *names_used + len + 1 > names_size) {
                fprintf(stderr, "tailcut %s: too many inputs in '%s'\n", cmd, spec);
                return -1;
            }
            char *nm = names + *names_used;
            memcpy(nm, p, len);
            nm[len] = '\0';
            *names_used += len + 1;
            memset(&r[k], 0, sizeof r[k]);
            r[k].name = nm;
            r[k].rank = -1;
            (*n)++;
        }
        int64_t dims[TC_MAX_RANK];
        int rank = cli_parse_dims(colon + 1, dims);
        if (rank < 0 || (r[k].rank >= 0 && r[k].rank != rank)) {
            fprintf(stderr, "tailcut %s: bad dims for '%s' in '%s'\n", cmd, r[k].name, spec);
            return -1;
        }
        r[k].rank = rank;
        int64_t *dst = which == 0 ? r[k].min : which == 1 ? r[k].opt : r[k].max;
        memcpy(dst, dims, sizeof(int64_t) * (size_t)rank);
        const char *comma = strchr(colon, ',');
        if (comma == NULL) break;
        p = comma + 1;
    }
    return 0;
}

bool cli_is_plan(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f != NULL) {
        char magic[6] = {0};
        size_t n = fread(magic, 1, sizeof magic, f);
        fclose(f);
        if (n == sizeof magic && memcmp(magic, "TCPLAN", 6) == 0) return true;
    }
    size_t len = strlen(path);
    return len > 5 && strcmp(path + len - 5, ".plan") == 0;
}

static double ms_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static int open_onnx(const char *path, const cli_build_args *a, const char *cmd, cli_progress *progress,
                     tc_engine **engine);

int cli_open_engine(const char *path, const cli_build_args *a, const char *cmd, tc_engine **engine, double *load_ms) {
    tc_error err;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (cli_is_plan(path)) {
        if (!a->shapes_given && (a->n_min || a->n_opt || a->n_max))
            fprintf(stderr, "tailcut %s: note: a plan's profiles are fixed: --min/--opt/--max-shapes are ignored here "
                    "(--shapes gives run-time shapes)\n", cmd);
        if (tc_engine_load(path, engine, &err) != TC_STATUS_OK) {
            fprintf(stderr, "tailcut %s: %s\n", cmd, err.message);
            return 1;
        }
        if (load_ms) *load_ms = ms_since(&t0);
        return 0;
    }
    cli_progress *progress = cli_progress_start(cmd, a->quiet);
    int rc = open_onnx(path, a, cmd, progress, engine);
    cli_progress_end(progress);
    if (rc == 0 && load_ms) *load_ms = ms_since(&t0);
    return rc;
}

/* Imports and builds an .onnx (cli_open_engine), with progress on stderr unless NULL. */
static int open_onnx(const char *path, const cli_build_args *a, const char *cmd, cli_progress *progress,
                     tc_engine **engine) {
    tc_error err;
    if (a->n_min != a->n_opt || a->n_opt != a->n_max) {
        fprintf(stderr, "tailcut %s: give --min-shapes, --opt-shapes and --max-shapes together (once per profile)\n", cmd);
        return 2;
    }
    tc_model *model = NULL;
    cli_progress_stage(progress, "loading model", 0);
    if (tc_model_load(path, NULL, &model, &err) != TC_STATUS_OK) {
        cli_progress_note(progress, "tailcut %s: %s\n", cmd, err.message);
        return 1;
    }
    cli_model_warnings(model, cmd, progress);
    tc_input_range ranges[CLI_MAX_PROFILES][CLI_MAX_INPUTS];
    tc_profile profiles[CLI_MAX_PROFILES];
    char names[CLI_MAX_PROFILES][4096];
    int n_prof = a->n_min;
    for (int p = 0; p < n_prof; p++) {
        int n = 0;
        size_t used = 0;
        if (parse_spec(a->min[p], ranges[p], &n, 0, names[p], sizeof names[p], &used, cmd) ||
            parse_spec(a->opt[p], ranges[p], &n, 1, names[p], sizeof names[p], &used, cmd) ||
            parse_spec(a->max[p], ranges[p], &n, 2, names[p], sizeof names[p], &used, cmd)) {
            tc_model_destroy(model);
            return 2;
        }
        profiles[p].num_inputs = n;
        profiles[p].inputs = ranges[p];
    }
    if (n_prof == 0 && a->batch > 0) {
        /* --batch N: a static profile where each input's symbolic first dim is N. */
        int n = tc_model_num_inputs(model);
        if (n > CLI_MAX_INPUTS) n = CLI_MAX_INPUTS;
        for (int k = 0; k < n; k++) {
            tc_io_info info;
            tc_model_input_info(model, k, &info);
            tc_input_range *r = &ranges[0][k];
            memset(r, 0, sizeof *r);
            r->name = info.name;
            r->rank = info.rank;
            for (int32_t d = 0; d < info.rank; d++) {
                int64_t v = info.dims[d] >= 0 ? info.dims[d] : (d == 0 ? a->batch : -1);
                if (v < 0) {
                    fprintf(stderr, "tailcut %s: input '%s' dim %d is dynamic: give --shapes\n", cmd, info.name, (int)d);
                    tc_model_destroy(model);
                    return 2;
                }
                r->min[d] = r->opt[d] = r->max[d] = v;
            }
        }
        profiles[0].num_inputs = n;
        profiles[0].inputs = ranges[0];
        n_prof = 1;
    }
    tc_build_options o = {.struct_size = sizeof o, .threads = a->threads, .num_profiles = n_prof,
                          .profiles = n_prof ? profiles : NULL, .disabled_passes = a->disabled_passes,
                          .flags = a->flags, .timing_cache = a->timing_cache, .backend = a->backend,
                          .progress = progress ? cli_progress_build_cb : NULL, .progress_user_data = progress};
    char tmp_cache[64] = "";
    char *layers[CLI_MAX_LAYER_PRECISION];
    tc_calibrator *calibrator = NULL;
    int rc = precision_options(model, a, &o, layers, tmp_cache, &calibrator, progress, cmd);
    if (rc) {
        tc_calibrator_destroy(calibrator);
        if (tmp_cache[0]) unlink(tmp_cache);
        tc_model_destroy(model);
        return rc;
    }
    tc_status st = TC_STATUS_OK;
    if (calibrator != NULL) {
        rc = cli_accuracy_fallback(model, &o, calibrator, (tc_calib_method)a->calib_method,
                                   a->percentile > 0 ? a->percentile : 99.99, a->calib_data, a->calib_samples,
                                   (cli_accuracy_metric)a->accuracy_metric, a->accuracy_threshold, progress, engine, cmd);
        tc_calibrator_destroy(calibrator);
        if (rc) {
            if (tmp_cache[0]) unlink(tmp_cache);
            free_layer_names(&o, layers);
            tc_model_destroy(model);
            return rc;
        }
    } else {
        cli_progress_stage(progress, "preparing the build", 0);
        st = tc_engine_build(model, &o, engine, &err);
    }
    if (tmp_cache[0]) unlink(tmp_cache);
    free_layer_names(&o, layers);
    tc_model_destroy(model);
    if (st != TC_STATUS_OK) {
        cli_progress_note(progress, "tailcut %s: %s: %s\n", cmd, path, err.message);
        return 1;
    }
    return 0;
}
