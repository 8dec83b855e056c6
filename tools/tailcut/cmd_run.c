/* cmd_run.c - `tailcut run MODEL.{onnx,plan} --input NAME=FILE [...] --output-dir DIR`: runs a model
 * on .npy/.pb inputs through an engine (a plan, or an .onnx built in memory with the inputs'
 * shapes) or, with --reference, the reference executor; writes each output as DIR/<name>.npy. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "model_warn.h"
#include "engine_open.h"
#include "profile_select.h"
#include "tailcut/tailcut.h"

#define MAX_INPUTS 64

typedef struct run_args {
    const char *model, *out_dir;
    const char *names[MAX_INPUTS], *files[MAX_INPUTS];
    int n_in;
    bool reference;
    cli_build_args build;
} run_args;

static void usage(FILE *f) {
    fprintf(f,
            "usage: tailcut run MODEL.{onnx,plan} [--input NAME=FILE]... [--output-dir DIR] [options]\n"
            "  --input NAME=FILE   tensor for graph input NAME from a .npy or ONNX TensorProto .pb file\n"
            "                      (for a single-input model, --input FILE is enough)\n"
            "  --output-dir DIR    where DIR/<output name>.npy files are written (default: .)\n"
            "  --reference         run the .onnx with the reference executor instead of building an engine\n"
            "build options for an .onnx (default: static shapes taken from the inputs):\n%s",
            cli_build_usage());
}

/* Output file name from a tensor name: characters other than [A-Za-z0-9._-] become '_'. */
static void safe_name(const char *name, char *out, size_t size) {
    size_t k = 0;
    for (const char *p = name; *p && k + 1 < size; p++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                 c == '-';
        out[k++] = ok ? c : '_';
    }
    out[k] = '\0';
    if (k == 0 || strcmp(out, ".") == 0 || strcmp(out, "..") == 0) snprintf(out, size, "output_%s", k ? "dots" : "unnamed");
}

static int parse(int argc, char **argv, run_args *r) {
    memset(r, 0, sizeof *r);
    r->out_dir = ".";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int b = cli_build_arg(&r->build, argc, argv, &i, "run");
        if (b < 0) return 2;
        if (b > 0) continue;
        if (strcmp(a, "--reference") == 0) {
            r->reference = true;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return -1;
        } else if (strcmp(a, "--input") == 0 || strcmp(a, "-i") == 0) {
            if (++i >= argc || r->n_in >= MAX_INPUTS) {
                fprintf(stderr, "tailcut run: --input needs NAME=FILE (at most %d)\n", MAX_INPUTS);
                return 2;
            }
            char *eq = strchr(argv[i], '=');
            if (eq != NULL) *eq = '\0';
            for (int k = 0; k < r->n_in; k++)
                if ((eq == NULL && r->names[k] == NULL) || (eq != NULL && r->names[k] && strcmp(r->names[k], argv[i]) == 0)) {
                    fprintf(stderr, "tailcut run: --input %s given twice\n", eq ? argv[i] : "(unnamed)");
                    return 2;
                }
            r->names[r->n_in] = eq ? argv[i] : NULL;
            r->files[r->n_in] = eq ? eq + 1 : argv[i];
            r->n_in++;
        } else if (strcmp(a, "--output-dir") == 0 || strcmp(a, "-o") == 0) {
            if (++i >= argc) {
                fprintf(stderr, "tailcut run: --output-dir needs a folder\n");
                return 2;
            }
            r->out_dir = argv[i];
        } else if (a[0] == '-') {
            fprintf(stderr, "tailcut run: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        } else if (r->model == NULL) {
            r->model = a;
        } else {
            fprintf(stderr, "tailcut run: unexpected argument '%s'\n", a);
            return 2;
        }
    }
    if (r->model == NULL) {
        usage(stderr);
        return 2;
    }
    return 0;
}

static int save_output(const char *dir, const char *name, const tc_tensor *t) {
    char fname[256], path[4096];
    tc_error err;
    safe_name(name, fname, sizeof fname);
    snprintf(path, sizeof path, "%s/%s.npy", dir, fname);
    if (tc_tensor_save_npy(path, t, &err) != TC_STATUS_OK) {
        fprintf(stderr, "tailcut run: output '%s': %s\n", name, err.message);
        return 1;
    }
    printf("  %s %s [", name, tc_dtype_name(t->dtype));
    for (int32_t i = 0; i < t->rank; i++) printf("%s%lld", i ? "," : "", (long long)t->dims[i]);
    printf("] -> %s\n", path);
    return 0;
}

/* mkdir -p: creates dir and any missing parents. */
static int make_dirs(const char *dir) {
    char path[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof path) return -1;
    memcpy(path, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0') continue;
        char c = path[i];
        path[i] = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST) return -1;
        path[i] = c;
    }
    return 0;
}

static double ms_between(const struct timespec *a, const struct timespec *b) {
    return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

static int run_reference(run_args *r, const tc_tensor *inputs) {
    tc_error err;
    tc_model *model = NULL;
    if (tc_model_load(r->model, NULL, &model, &err) != TC_STATUS_OK) {
        fprintf(stderr, "tailcut run: %s\n", err.message);
        return 1;
    }
    cli_model_warnings(model, "run", NULL);
    int n_out = tc_model_num_outputs(model), rc = 1;
    tc_tensor *outputs = calloc((size_t)(n_out > 0 ? n_out : 1), sizeof(tc_tensor));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (outputs != NULL && tc_model_run_reference(model, r->n_in, r->names, inputs, outputs, &err) == TC_STATUS_OK) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        printf("ran %s in %.1f ms (reference executor)\n", r->model, ms_between(&t0, &t1));
        rc = 0;
        for (int k = 0; k < n_out && rc == 0; k++) {
            tc_io_info info;
            tc_model_output_info(model, k, &info);
            rc = save_output(r->out_dir, info.name, &outputs[k]);
        }
        for (int k = 0; k < n_out; k++) tc_tensor_free(&outputs[k]);
    } else if (outputs != NULL) {
        fprintf(stderr, "tailcut run: %s\n", err.message);
    }
    free(outputs);
    tc_model_destroy(model);
    return rc;
}

static int run_engine(run_args *r, const tc_tensor *inputs) {
    /* Without shape options an .onnx is built for exactly the shapes of the given inputs. */
    static char spec[8192];
    if (!cli_is_plan(r->model) && r->build.n_min == 0 && r->build.batch == 0 && r->n_in > 0) {
        size_t off = 0;
        for (int k = 0; k < r->n_in && off < sizeof spec; k++) {
            off += (size_t)snprintf(spec + off, sizeof spec - off, "%s%s:", k ? "," : "", r->names[k]);
            for (int32_t d = 0; d < inputs[k].rank && off < sizeof spec; d++)
                off += (size_t)snprintf(spec + off, sizeof spec - off, "%s%lld", d ? "x" : "", (long long)inputs[k].dims[d]);
        }
        r->build.min[0] = r->build.opt[0] = r->build.max[0] = spec;
        r->build.n_min = r->build.n_opt = r->build.n_max = 1;
    }
    tc_engine *e = NULL;
    double load_ms = 0;
    int rc = cli_open_engine(r->model, &r->build, "run", &e, &load_ms);
    if (rc) return rc;
    /* The profile: --profile-index N, else the first whose ranges hold the inputs' shapes. */
    cli_shapes shapes = {0};
    for (int k = 0; k < r->n_in && k < 64; k++) { /* names resolved by resolve_names */
        shapes.names[k] = r->names[k];
        shapes.ranks[k] = inputs[k].rank;
        memcpy(shapes.dims[k], inputs[k].dims, sizeof shapes.dims[k]);
    }
    shapes.n = r->n_in < 64 ? r->n_in : 64;
    const int profile = cli_select_profile(e, &shapes, r->build.profile_index - 1, "run");
    if (profile < 0) {
        tc_engine_destroy(e);
        return 1;
    }
    tc_context *c = NULL;
    tc_error err;
    if (tc_context_create(e, profile, &c, &err) != TC_STATUS_OK) {
        fprintf(stderr, "tailcut run: %s\n", err.message);
        tc_engine_destroy(e);
        return 1;
    }
    rc = 1;
    /* tc_context_set_input refuses a file whose dtype is not the input's (its bytes are never reinterpreted). */
    for (int k = 0; k < r->n_in; k++)
        if (tc_context_set_input(c, r->names[k], &inputs[k]) != TC_STATUS_OK) {
            fprintf(stderr, "tailcut run: %s: %s\n", r->files[k], tc_context_error(c));
            goto done;
        }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (tc_context_run(c) != TC_STATUS_OK) {
        fprintf(stderr, "tailcut run: %s\n", tc_context_error(c));
        goto done;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("ran %s in %.1f ms (engine of %d steps; load/build %.1f ms)\n", r->model, ms_between(&t0, &t1),
           tc_engine_num_steps(e), load_ms);
    rc = 0;
    for (int k = 0; k < tc_engine_num_outputs(e) && rc == 0; k++) {
        tc_io_info info;
        tc_tensor t;
        tc_engine_output_info(e, k, &info);
        if (tc_context_tensor(c, info.name, &t) != TC_STATUS_OK) {
            fprintf(stderr, "tailcut run: %s\n", tc_context_error(c));
            rc = 1;
            break;
        }
        rc = save_output(r->out_dir, info.name, &t);
    }
done:
    tc_context_destroy(c);
    tc_engine_destroy(e);
    return rc;
}

/* Names an unnamed single input after the model's only input. */
static int resolve_names(run_args *r) {
    bool unnamed = false;
    for (int k = 0; k < r->n_in; k++) unnamed |= r->names[k] == NULL;
    if (!unnamed) return 0;
    static char name[1024];
    tc_error err;
    int n = -1;
    if (cli_is_plan(r->model)) {
        tc_engine *e = NULL;
        if (tc_engine_load(r->model, &e, &err) == TC_STATUS_OK) {
            tc_io_info info;
            n = tc_engine_num_inputs(e);
            if (n == 1 && tc_engine_input_info(e, 0, &info) == TC_STATUS_OK) snprintf(name, sizeof name, "%s", info.name);
            tc_engine_destroy(e);
        }
    } else {
        tc_model_options o = {sizeof o, TC_MODEL_ALLOW_UNSUPPORTED};
        tc_model *m = NULL;
        if (tc_model_load(r->model, &o, &m, &err) == TC_STATUS_OK) {
            tc_io_info info;
            n = tc_model_num_inputs(m);
            if (n == 1 && tc_model_input_info(m, 0, &info) == TC_STATUS_OK) snprintf(name, sizeof name, "%s", info.name);
            tc_model_destroy(m);
        }
    }
    if (n < 0) {
        fprintf(stderr, "tailcut run: %s\n", err.message);
        return 1;
    }
    if (n != 1 || r->n_in != 1) {
        fprintf(stderr, "tailcut run: the model has %d inputs: give each as --input NAME=FILE\n", n);
        return 2;
    }
    r->names[0] = name;
    return 0;
}

int tc_cli_run(int argc, char **argv) {
    run_args r;
    int rc = parse(argc, argv, &r);
    if (rc) return rc < 0 ? 0 : rc;
    if (r.reference && cli_is_plan(r.model)) {
        fprintf(stderr, "tailcut run: --reference needs an .onnx model\n");
        return 2;
    }
    rc = resolve_names(&r);
    if (rc) return rc;
    tc_tensor inputs[MAX_INPUTS];
    memset(inputs, 0, sizeof inputs);
    tc_error err;
    for (int k = 0; k < r.n_in; k++)
        if (tc_tensor_load(r.files[k], &inputs[k], NULL, 0, &err) != TC_STATUS_OK) {
            fprintf(stderr, "tailcut run: input '%s': %s\n", r.names[k], err.message);
            rc = 1;
            goto done;
        }
    if (make_dirs(r.out_dir) != 0) {
        fprintf(stderr, "tailcut run: cannot create '%s': %s\n", r.out_dir, strerror(errno));
        rc = 1;
        goto done;
    }
    rc = r.reference ? run_reference(&r, inputs) : run_engine(&r, inputs);
done:
    for (int k = 0; k < r.n_in; k++) tc_tensor_free(&inputs[k]);
    return rc;
}
