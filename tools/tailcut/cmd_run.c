/* cmd_run.c - `tailcut run MODEL.onnx --input NAME=FILE [...] --output-dir DIR`: runs a model
 * with the reference executor on .npy/.pb inputs and writes each output as DIR/<name>.npy. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "tailcut/tailcut.h"

#define MAX_INPUTS 64

static void usage(FILE *f) {
    fprintf(f,
            "usage: tailcut run MODEL.onnx [--input NAME=FILE]... [--output-dir DIR]\n"
            "  --input NAME=FILE   tensor for graph input NAME from a .npy or ONNX TensorProto .pb file\n"
            "                      (for a single-input model, --input FILE is enough)\n"
            "  --output-dir DIR    where DIR/<output name>.npy files are written (default: .)\n");
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

static void print_shape(const tc_tensor *t) {
    printf("[");
    for (int32_t i = 0; i < t->rank; i++) printf("%s%lld", i ? "," : "", (long long)t->dims[i]);
    printf("]");
}

int tc_cli_run(int argc, char **argv) {
    const char *model_path = NULL, *out_dir = ".";
    const char *names[MAX_INPUTS];
    const char *files[MAX_INPUTS];
    int n_in = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--input") == 0 || strcmp(a, "-i") == 0) {
            if (++i >= argc) {
                fprintf(stderr, "tailcut run: --input needs NAME=FILE\n");
                return 2;
            }
            if (n_in >= MAX_INPUTS) {
                fprintf(stderr, "tailcut run: at most %d inputs\n", MAX_INPUTS);
                return 2;
            }
            char *eq = strchr(argv[i], '=');
            if (eq != NULL) {
                *eq = '\0';
                names[n_in] = argv[i];
                files[n_in] = eq + 1;
            } else {
                names[n_in] = NULL;
                files[n_in] = argv[i];
            }
            n_in++;
        } else if (strcmp(a, "--output-dir") == 0 || strcmp(a, "-o") == 0) {
            if (++i >= argc) {
                fprintf(stderr, "tailcut run: --output-dir needs a folder\n");
                return 2;
            }
            out_dir = argv[i];
        } else if (a[0] == '-') {
            fprintf(stderr, "tailcut run: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        } else if (model_path == NULL) {
            model_path = a;
        } else {
            fprintf(stderr, "tailcut run: unexpected argument '%s'\n", a);
            return 2;
        }
    }
    if (model_path == NULL) {
        usage(stderr);
        return 2;
    }
    tc_error err;
    tc_model *model = NULL;
    tc_status st = tc_model_load(model_path, NULL, &model, &err);
    if (st) {
        fprintf(stderr, "tailcut run: %s\n", err.message);
        return 1;
    }
    int rc = 1;
    tc_tensor inputs[MAX_INPUTS];
    memset(inputs, 0, sizeof inputs);
    int n_outputs = tc_model_num_outputs(model);
    tc_tensor *outputs = calloc((size_t)(n_outputs > 0 ? n_outputs : 1), sizeof(tc_tensor));
    if (outputs == NULL) goto done;
    for (int k = 0; k < n_in; k++) {
        if (names[k] == NULL) {
            tc_io_info info;
            if (tc_model_num_inputs(model) != 1 || n_in != 1) {
                fprintf(stderr, "tailcut run: the model has %d inputs: give each as --input NAME=FILE\n",
                        tc_model_num_inputs(model));
                goto done;
            }
            tc_model_input_info(model, 0, &info);
            names[k] = info.name;
        }
        st = tc_tensor_load(files[k], &inputs[k], NULL, 0, &err);
        if (st) {
            fprintf(stderr, "tailcut run: input '%s': %s\n", names[k], err.message);
            goto done;
        }
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    st = tc_model_run_reference(model, n_in, names, inputs, outputs, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (st) {
        fprintf(stderr, "tailcut run: %s\n", err.message);
        goto done;
    }
    if (mkdir(out_dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "tailcut run: cannot create '%s': %s\n", out_dir, strerror(errno));
        goto done;
    }
    printf("ran %s in %.1f ms (reference executor)\n", model_path,
           (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
    for (int k = 0; k < n_outputs; k++) {
        tc_io_info info;
        tc_model_output_info(model, k, &info);
        char fname[256], path[4096];
        safe_name(info.name, fname, sizeof fname);
        snprintf(path, sizeof path, "%s/%s.npy", out_dir, fname);
        st = tc_tensor_save_npy(path, &outputs[k], &err);
        if (st) {
            fprintf(stderr, "tailcut run: output '%s': %s\n", info.name, err.message);
            goto done;
        }
        printf("  %s %s ", info.name, tc_dtype_name(outputs[k].dtype));
        print_shape(&outputs[k]);
        printf(" -> %s\n", path);
    }
    rc = 0;
done:
    for (int k = 0; k < n_in; k++) tc_tensor_free(&inputs[k]);
    if (outputs != NULL)
        for (int k = 0; k < n_outputs; k++) tc_tensor_free(&outputs[k]);
    free(outputs);
    tc_model_destroy(model);
    return rc;
}
