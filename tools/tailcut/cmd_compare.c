/* cmd_compare.c - `tailcut compare A B --data DIR`: runs two models (each a plan, an .onnx built in memory,
 * or an .onnx on the reference executor) on the same input samples and reports, per graph output, how far
 * their outputs agree: cosine similarity, absolute/relative errors, top-1/top-5 agreement, NaN mismatches;
 * --per-layer adds each reduced-precision step's output SQNR (compare_layers.c).
 * --min-cosine / --min-top1 turn it into an accuracy gate (exit status 1 when an output falls short). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model_warn.h"
#include "engine_open.h"
#include "compare_layers.h"
#include "compare_stats.h"
#include "sample_dir.h"
#include "tailcut/tailcut.h"
#include "trace.h"


typedef struct compare_args {
    const char *path[2];
    bool reference[2];
    const char *data;
    int samples; /* 0: all */
    bool json, has_min_cosine, has_min_top1, per_layer;
    double min_cosine, min_top1;
    cli_build_args build;
} compare_args;

/* One side of the comparison (A or B) and what running it needs. */
typedef struct side {
    const char *path;
    char label;           /* 'A' or 'B' */
    bool reference;       /* the reference executor runs the .onnx */
    bool per_shape;       /* .onnx without shape options: built for each new set of sample shapes */
    tc_model *model;      /* the imported .onnx: run by the reference executor, or (per_shape) its I/O
                             description (cli_open_engine imports the file again for each build) */
    tc_engine *engine;    /* engine sides */
    tc_context **ctx;     /* one per profile, created when a sample first needs it */
    tc_context *cur;      /* the context that ran the current sample */
    int n_ctx;
    int n_in, n_out;
    tc_io_info *in, *out; /* strings belong to model (reference, per_shape) or engine */
    tc_tensor *built;     /* per_shape: shapes (no data) the engine was built for, in sample input order */
    tc_tensor *ref_out;   /* reference: outputs of the current sample (owned) */
    tc_tensor *view;      /* the current outputs, in this side's output order */
} side;


static void usage(FILE *f) {
    fprintf(f,
            "usage: tailcut compare A B --data DIR [options]\n"
            "  A, B are each a .plan or an .onnx (built in memory at the samples' shapes, or with the build\n"
            "  options below); both must have the same input and output names.\n"
            "  --data DIR        input samples: DIR/<input name>.<k>.npy for every input and sample k (gaps allowed);\n"
            "                    for a single-input model any DIR/*.npy (natural name order)\n"
            "  --samples N       use the first N samples (default: all)\n"
            "  --reference-a     run A (an .onnx) with the reference executor instead of an engine\n"
            "  --reference-b     the same for B\n"
            "  --json            print one JSON object instead of the table\n"
            "  --per-layer       also compare, for each step of B not in fp32 (INT8, ...; every step when none\n"
            "                    is), its output tensor with A's tensor of the same name: SQNR in dB\n"
            "                    (10*log10(sum a^2 / sum (a-b)^2), A as the reference), cosine, max abs error;\n"
            "                    a tensor A lacks (fused differently) is listed with '-' and a note. Both sides\n"
            "                    must be engines (it reads intermediate tensors): not with --reference-a/-b\n"
            "  --min-cosine X    exit 1 when a float output's cosine similarity is below X\n"
            "  --min-top1 X      exit 1 when an output's top-1 agreement is below X\n"
            "                    (with either threshold, any NaN/Inf mismatch and any differing element of a\n"
            "                    non-float output fail too)\n"
            "Per output, over all elements of all samples (a = A's value, b = B's value, in double):\n"
            "  cosine      sum(a*b) / sqrt(sum(a*a) * sum(b*b)) (1 when both are all zero)\n"
            "  max_abs     max |a - b|;  mean_abs: mean |a - b|\n"
            "  max_rel     max |a - b| / max(|a|, |b|, 1e-6) (symmetric, at most 2)\n"
            "  rel_l2      sqrt(sum((a - b)^2)) / sqrt(sum(a*a))\n"
            "  top1        float outputs whose last dim is >= 2, a row being one index of the leading dims:\n"
            "              the fraction of rows where argmax(A) == argmax(B); top5 (last dim >= 5): the\n"
            "              fraction where argmax(B) is among A's 5 largest\n"
            "  nan         elements where A and B are not both NaN and not the same infinity, but one is\n"
            "              NaN or infinite; such elements are left out of the figures above\n"
            "  Non-float outputs are compared exactly: the count of differing elements.\n"
            "Exit status: 0 agreed (or no threshold), 1 a threshold failed or an error, 2 a usage error.\n"
            "build options for an .onnx engine (default: static shapes taken from each sample):\n%s",
            cli_build_usage());
}

static int parse_number(const char *opt, const char *s, double lo, double hi, double *v) {
    errno = 0;
    char *end;
    *v = strtod(s, &end);
    if (end == s || *end != '\0' || errno != 0 || !(*v >= lo && *v <= hi)) {
        fprintf(stderr, "tailcut compare: %s wants a number in [%g, %g], not '%s'\n", opt, lo, hi, s);
        return -1;
    }
    return 0;
}

static int parse(int argc, char **argv, compare_args *a) {
    memset(a, 0, sizeof *a);
    int n_paths = 0;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        int b = cli_build_arg(&a->build, argc, argv, &i, "compare");
        if (b < 0) return 2;
        if (b > 0) continue;
        if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
            usage(stdout);
            return -1;
        } else if (strcmp(o, "--json") == 0) {
            a->json = true;
        } else if (strcmp(o, "--per-layer") == 0) {
            a->per_layer = true;
        } else if (strcmp(o, "--reference-a") == 0) {
            a->reference[0] = true;
        } else if (strcmp(o, "--reference-b") == 0) {
            a->reference[1] = true;
        } else if (strcmp(o, "--data") == 0 || strcmp(o, "--samples") == 0 || strcmp(o, "--min-cosine") == 0 ||
                   strcmp(o, "--min-top1") == 0) {
            if (++i >= argc) {
                fprintf(stderr, "tailcut compare: %s needs a value\n", o);
                return 2;
            }
            double v;
            if (strcmp(o, "--data") == 0) {
                a->data = argv[i];
            } else if (strcmp(o, "--samples") == 0) {
                if (parse_number(o, argv[i], 1, 1e9, &v)) return 2;
                if (v != floor(v)) {
                    fprintf(stderr, "tailcut compare: --samples wants a whole number, not '%s'\n", argv[i]);
                    return 2;
                }
                a->samples = (int)v;
            } else if (strcmp(o, "--min-cosine") == 0) {
                if (parse_number(o, argv[i], -1, 1, &a->min_cosine)) return 2;
                a->has_min_cosine = true;
            } else {
                if (parse_number(o, argv[i], 0, 1, &a->min_top1)) return 2;
                a->has_min_top1 = true;
            }
        } else if (o[0] == '-' && o[1] != '\0') {
            fprintf(stderr, "tailcut compare: unknown option '%s'\n", o);
            usage(stderr);
            return 2;
        } else if (n_paths < 2) {
            a->path[n_paths++] = o;
        } else {
            fprintf(stderr, "tailcut compare: unexpected argument '%s'\n", o);
            return 2;
        }
    }
    if (n_paths < 2) {
        fprintf(stderr, "tailcut compare: give two models, A and B\n");
        usage(stderr);
        return 2;
    }
    if (a->data == NULL) {
        fprintf(stderr, "tailcut compare: --data DIR is required (a folder of input samples)\n");
        return 2;
    }
    for (int s = 0; s < 2; s++)
        if (a->reference[s] && cli_is_plan(a->path[s])) {
            fprintf(stderr, "tailcut compare: --reference-%c needs an .onnx model, not the plan '%s'\n", "ab"[s],
                    a->path[s]);
            return 2;
        } else if (a->reference[s] && a->per_layer) {
            fprintf(stderr, "tailcut compare: --per-layer reads each step's output from engines; the reference "
                            "executor (--reference-%c) gives only the graph outputs\n", "ab"[s]);
            return 2;
        }
    return 0;
}

/* "[1,3,224,224]"; a dim < 0 is written as its symbol (when names != NULL and it has one) or '?'. */
static void fmt_shape(int32_t rank, const int64_t *dims, const char *const *names, char *out, size_t size) {
    size_t off = (size_t)snprintf(out, size, rank < 0 ? "[?" : "[");
    for (int32_t d = 0; d < rank && off < size; d++) {
        const char *sep = d ? "," : "";
        if (dims[d] >= 0) off += (size_t)snprintf(out + off, size - off, "%s%lld", sep, (long long)dims[d]);
        else off += (size_t)snprintf(out + off, size - off, "%s%s", sep, names && names[d] ? names[d] : "?");
    }
    if (off < size) snprintf(out + off, size - off, "]");
}

/* "'f0', 'f1'": the files of sample k. */
static void sample_files(const cli_sample_set *set, int k, char *out, size_t size) {
    size_t off = 0;
    out[0] = '\0';
    for (int i = 0; i < set->n_inputs && off < size; i++)
        off += (size_t)snprintf(out + off, size - off, "%s'%s'", i ? ", " : "",
                                set->paths[(size_t)k * (size_t)set->n_inputs + (size_t)i]);
}

/* ---- sides ------------------------------------------------------------------------------------- */

static void side_close(side *sd) {
    for (int p = 0; p < sd->n_ctx; p++) tc_context_destroy(sd->ctx[p]);
    free(sd->ctx);
    if (sd->ref_out)
        for (int k = 0; k < sd->n_out; k++) tc_tensor_free(&sd->ref_out[k]);
    free(sd->ref_out);
    free(sd->view);
    free(sd->built);
    free(sd->in);
    free(sd->out);
    tc_engine_destroy(sd->engine);
    tc_model_destroy(sd->model);
    memset(sd, 0, sizeof *sd);
}

/* Drops the engine and its contexts (before a rebuild). */
static void side_drop_engine(side *sd) {
    for (int p = 0; p < sd->n_ctx; p++) tc_context_destroy(sd->ctx[p]);
    free(sd->ctx);
    sd->ctx = NULL;
    sd->cur = NULL;
    sd->n_ctx = 0;
    tc_engine_destroy(sd->engine);
    sd->engine = NULL;
}

/* Opens side s: imports the .onnx (reference, or built per sample shapes) or gets the engine. */
static int side_open(side *sd, const compare_args *a, int s) {
    memset(sd, 0, sizeof *sd);
    sd->path = a->path[s];
    sd->label = "AB"[s];
    sd->reference = a->reference[s];
    const cli_build_args *b = &a->build;
    bool shape_opts = b->n_min || b->n_opt || b->n_max || b->batch > 0;
    sd->per_shape = !sd->reference && !cli_is_plan(sd->path) && !shape_opts;
    tc_error err;
    if (sd->reference || sd->per_shape) {
        if (tc_model_load(sd->path, NULL, &sd->model, &err) != TC_STATUS_OK) {
            fprintf(stderr, "tailcut compare: %c: %s\n", sd->label, err.message);
            return 1;
        }
        cli_model_warnings(sd->model, "compare", NULL);
        sd->n_in = tc_model_num_inputs(sd->model);
        sd->n_out = tc_model_num_outputs(sd->model);
    } else {
        int rc = cli_open_engine(sd->path, b, "compare", &sd->engine, NULL);
        if (rc) return rc;
        sd->n_in = tc_engine_num_inputs(sd->engine);
        sd->n_out = tc_engine_num_outputs(sd->engine);
    }
    if (sd->n_in < 1 || sd->n_out < 1) {
        fprintf(stderr, "tailcut compare: %c: '%s' has %d inputs and %d outputs\n", sd->label, sd->path, sd->n_in,
                sd->n_out);
        return 1;
    }
    sd->in = calloc((size_t)sd->n_in, sizeof(tc_io_info));
    sd->out = calloc((size_t)sd->n_out, sizeof(tc_io_info));
    sd->view = calloc((size_t)sd->n_out, sizeof(tc_tensor));
    sd->built = calloc((size_t)sd->n_in, sizeof(tc_tensor));
    sd->ref_out = sd->reference ? calloc((size_t)sd->n_out, sizeof(tc_tensor)) : NULL;
    if (!sd->in || !sd->out || !sd->view || !sd->built || (sd->reference && !sd->ref_out)) {
        fprintf(stderr, "tailcut compare: out of memory\n");
        return 1;
    }
    for (int i = 0; i < sd->n_in; i++)
        if (sd->model ? tc_model_input_info(sd->model, i, &sd->in[i]) : tc_engine_input_info(sd->engine, i, &sd->in[i]))
            return 1;
    for (int i = 0; i < sd->n_out; i++)
        if (sd->model ? tc_model_output_info(sd->model, i, &sd->out[i])
                      : tc_engine_output_info(sd->engine, i, &sd->out[i]))
            return 1;
    return 0;
}

static int find_io(const tc_io_info *io, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(io[i].name, name) == 0) return i;
    return -1;
}

/* "name:DxD,name:DxD" for a static profile at the shapes of inputs (malloc'd), or NULL (reason printed) when
 * out of memory. *expressible is false when a name holds ':' or ',', which the shape syntax cannot carry. */
static char *shape_spec(int n_in, const char *const *names, const tc_tensor *inputs, bool *expressible) {
    size_t size = 1;
    *expressible = true;
    for (int i = 0; i < n_in; i++) {
        *expressible &= strpbrk(names[i], ":,") == NULL;
        size += strlen(names[i]) + 2 + (size_t)inputs[i].rank * 21;
    }
    char *spec = malloc(size);
    if (spec == NULL) {
        fprintf(stderr, "tailcut compare: out of memory\n");
        return NULL;
    }
    size_t off = 0;
    for (int i = 0; i < n_in; i++) {
        off += (size_t)snprintf(spec + off, size - off, "%s%s:", i ? "," : "", names[i]);
        for (int32_t d = 0; d < inputs[i].rank; d++)
            off += (size_t)snprintf(spec + off, size - off, "%s%lld", d ? "x" : "", (long long)inputs[i].dims[d]);
    }
    return spec;
}

/* Builds the per_shape engine for the shapes of inputs (named names), as `tailcut run` does, unless it
 * already was; every build option applies. With input names that a shape spec cannot carry, the build
 * takes the model's own (static) shapes. Returns 0, or the status of cli_open_engine (reason printed). */
static int side_build(side *sd, const compare_args *a, const char *const *names, const tc_tensor *inputs,
                      const char *files) {
    bool same = sd->engine != NULL;
    for (int i = 0; i < sd->n_in && same; i++)
        same = sd->built[i].rank == inputs[i].rank &&
               memcmp(sd->built[i].dims, inputs[i].dims, sizeof(int64_t) * (size_t)inputs[i].rank) == 0;
    if (same) return 0;
    side_drop_engine(sd);
    bool expressible;
    char *spec = shape_spec(sd->n_in, names, inputs, &expressible);
    if (spec == NULL) return 1;
    cli_build_args b = a->build;
    if (expressible) {
        b.min[0] = b.opt[0] = b.max[0] = spec;
        b.n_min = b.n_opt = b.n_max = 1;
    }
    int rc = cli_open_engine(sd->path, &b, "compare", &sd->engine, NULL);
    free(spec);
    if (rc) {
        sd->engine = NULL;
        fprintf(stderr, "tailcut compare: %c: building '%s' for the shapes of %s failed%s\n", sd->label, sd->path,
                files, expressible ? "" : " (an input name holds ':' or ',': built at the model's own shapes)");
        return rc;
    }
    for (int i = 0; i < sd->n_in; i++) {
        sd->built[i].rank = inputs[i].rank;
        memcpy(sd->built[i].dims, inputs[i].dims, sizeof inputs[i].dims);
    }
    return 0;
}

/* The first profile of the engine whose ranges hold every input's shape; 0 when none does (the engine then
 * says why the shape is refused). */
static int pick_profile(const side *sd, int n_in, const char *const *names, const tc_tensor *inputs) {
    int n_prof = tc_engine_num_profiles(sd->engine), n_eng = tc_engine_num_inputs(sd->engine);
    for (int p = 0; p < n_prof; p++) {
        bool fits = true;
        for (int j = 0; j < n_eng && fits; j++) {
            tc_input_range r;
            if (tc_engine_profile_range(sd->engine, p, j, &r) != TC_STATUS_OK || r.name == NULL) continue;
            int i = 0;
            while (i < n_in && strcmp(names[i], r.name) != 0) i++;
            if (i == n_in) continue;
            fits = inputs[i].rank == r.rank;
            for (int32_t d = 0; d < r.rank && fits; d++)
                fits = inputs[i].dims[d] >= r.min[d] && inputs[i].dims[d] <= r.max[d];
        }
        if (fits) return p;
    }
    return 0;
}

/* Checks a sample tensor against the side's description of the input (rank, static dims); its dtype is checked where
 * it is bound (tc_model_run_reference, tc_context_set_input), whose reason names both dtypes and the cast to apply. */
static int check_input(const side *sd, const char *name, const tc_tensor *t, const char *file) {
    int j = find_io(sd->in, sd->n_in, name);
    if (j < 0) {
        fprintf(stderr, "tailcut compare: %c ('%s') has no input '%s'\n", sd->label, sd->path, name);
        return 1;
    }
    const tc_io_info *io = &sd->in[j];
    bool ok = io->rank < 0 || io->rank == t->rank;
    for (int32_t d = 0; ok && io->rank >= 0 && d < io->rank; d++) ok = io->dims[d] < 0 || io->dims[d] == t->dims[d];
    if (ok) return 0;
    char got[160], want[160];
    fmt_shape(t->rank, t->dims, NULL, got, sizeof got);
    fmt_shape(io->rank, io->dims, io->dim_names, want, sizeof want);
    const char *gd = tc_dtype_name(t->dtype), *wd = tc_dtype_name(io->dtype);
    fprintf(stderr, "tailcut compare: sample file '%s' holds %s %s, but input '%s' of %c ('%s') is %s %s\n", file,
            gd ? gd : "?", got, name, sd->label, sd->path, wd ? wd : "?", want);
    return 1;
}

/* Runs side sd on sample k (inputs named names, in sample order); fills sd->view. Returns 0, 1 on a failure,
 * 2 on a usage error of the build options (reason printed). */
static int side_run(side *sd, const compare_args *a, const cli_sample_set *set, int k, const char *const *names,
                    tc_tensor *inputs) {
    char files[2048];
    sample_files(set, k, files, sizeof files);
    int n_in = set->n_inputs;
    for (int i = 0; i < n_in; i++)
        if (check_input(sd, names[i], &inputs[i], set->paths[(size_t)k * (size_t)n_in + (size_t)i])) return 1;
    tc_error err;
    if (sd->reference) {
        for (int o = 0; o < sd->n_out; o++) tc_tensor_free(&sd->ref_out[o]);
        if (tc_model_run_reference(sd->model, n_in, names, inputs, sd->ref_out, &err) != TC_STATUS_OK) {
            fprintf(stderr, "tailcut compare: %c (reference executor) on %s: %s\n", sd->label, files, err.message);
            return 1;
        }
        memcpy(sd->view, sd->ref_out, sizeof(tc_tensor) * (size_t)sd->n_out);
        return 0;
    }
    if (sd->per_shape) {
        int rc = side_build(sd, a, names, inputs, files);
        if (rc) return rc;
    }
    if (sd->ctx == NULL) {
        int n_prof = tc_engine_num_profiles(sd->engine);
        sd->ctx = calloc((size_t)(n_prof > 0 ? n_prof : 1), sizeof(tc_context *));
        if (sd->ctx == NULL) {
            fprintf(stderr, "tailcut compare: out of memory\n");
            return 1;
        }
        sd->n_ctx = n_prof > 0 ? n_prof : 1;
    }
    int p = pick_profile(sd, n_in, names, inputs);
    if (sd->ctx[p] == NULL && tc_context_create(sd->engine, p, &sd->ctx[p], &err) != TC_STATUS_OK) {
        sd->ctx[p] = NULL;
        fprintf(stderr, "tailcut compare: %c: %s\n", sd->label, err.message);
        return 1;
    }
    tc_context *c = sd->cur = sd->ctx[p];
    if (a->per_layer && tc_context_keep_tensors(c, 1) != TC_STATUS_OK) {
        fprintf(stderr, "tailcut compare: %c: --per-layer: %s\n", sd->label, tc_context_error(c));
        return 1;
    }
    for (int i = 0; i < n_in; i++)
        if (tc_context_set_input(c, names[i], &inputs[i]) != TC_STATUS_OK) {
            fprintf(stderr, "tailcut compare: %c ('%s'): sample file '%s' for input '%s': %s\n", sd->label, sd->path,
                    set->paths[(size_t)k * (size_t)n_in + (size_t)i], names[i], tc_context_error(c));
            return 1;
        }
    if (tc_context_run(c) != TC_STATUS_OK) {
        fprintf(stderr, "tailcut compare: %c ('%s') on %s: %s\n", sd->label, sd->path, files, tc_context_error(c));
        return 1;
    }
    for (int o = 0; o < sd->n_out; o++)
        if (tc_context_tensor(c, sd->out[o].name, &sd->view[o]) != TC_STATUS_OK) {
            fprintf(stderr, "tailcut compare: %c: output '%s': %s\n", sd->label, sd->out[o].name, tc_context_error(c));
            return 1;
        }
    return 0;
}

/* Checks that A and B have the same input and output names (and output dtypes where known);
 * fills map[o] = B's index of A's output o. */
static int match_sides(const side *sa, const side *sb, int *map) {
    for (int i = 0; i < sa->n_in; i++)
        if (find_io(sb->in, sb->n_in, sa->in[i].name) < 0) {
            fprintf(stderr, "tailcut compare: input '%s' of A ('%s') is not an input of B ('%s')\n", sa->in[i].name,
                    sa->path, sb->path);
            return 1;
        }
    if (sa->n_in != sb->n_in) {
        fprintf(stderr, "tailcut compare: A ('%s') has %d inputs, B ('%s') has %d\n", sa->path, sa->n_in, sb->path,
                sb->n_in);
        return 1;
    }
    for (int o = 0; o < sa->n_out; o++) {
        map[o] = find_io(sb->out, sb->n_out, sa->out[o].name);
        if (map[o] < 0) {
            fprintf(stderr, "tailcut compare: output '%s' of A ('%s') is not an output of B ('%s')\n", sa->out[o].name,
                    sa->path, sb->path);
            return 1;
        }
        tc_dtype da = sa->out[o].dtype, db = sb->out[map[o]].dtype;
        if (da != TC_DTYPE_UNDEFINED && db != TC_DTYPE_UNDEFINED && da != db) {
            fprintf(stderr, "tailcut compare: output '%s' is %s in A and %s in B\n", sa->out[o].name,
                    tc_dtype_name(da) ? tc_dtype_name(da) : "?", tc_dtype_name(db) ? tc_dtype_name(db) : "?");
            return 1;
        }
    }
    if (sa->n_out != sb->n_out) {
        fprintf(stderr, "tailcut compare: A ('%s') has %d outputs, B ('%s') has %d\n", sa->path, sa->n_out, sb->path,
                sb->n_out);
        return 1;
    }
    return 0;
}

/* ---- statistics -------------------------------------------------------------------------------- */

/* Compares A's and B's outputs of sample k. */
static int compare_sample(out_stats *stats, const side *sa, const side *sb, const int *map, int k,
                          const cli_sample_set *set) {
    for (int o = 0; o < sa->n_out; o++) {
        const tc_tensor *ta = &sa->view[o], *tb = &sb->view[map[o]];
        out_stats *st = &stats[o];
        bool same = ta->dtype == tb->dtype && ta->rank == tb->rank &&
                    memcmp(ta->dims, tb->dims, sizeof(int64_t) * (size_t)(ta->rank > 0 ? ta->rank : 0)) == 0;
        size_t es = tc_dtype_size(ta->dtype), n = 1;
        for (int32_t d = 0; same && d < ta->rank; d++) n *= (size_t)ta->dims[d];
        if (!same || es == 0 || ta->rank < 0 || ta->rank > TC_MAX_RANK || n * es > ta->nbytes || n * es > tb->nbytes) {
            char files[2048], sa_s[160], sb_s[160];
            sample_files(set, k, files, sizeof files);
            fmt_shape(ta->rank, ta->dims, NULL, sa_s, sizeof sa_s);
            fmt_shape(tb->rank, tb->dims, NULL, sb_s, sizeof sb_s);
            const char *da = tc_dtype_name(ta->dtype), *db = tc_dtype_name(tb->dtype);
            fprintf(stderr, "tailcut compare: output '%s' on %s: A gives %s %s, B gives %s %s\n", st->name, files,
                    da ? da : "?", sa_s, db ? db : "?", sb_s);
            return 1;
        }
        if (!st->seen) {
            st->seen = true;
            st->dtype = ta->dtype;
            st->rank = ta->rank;
            memcpy(st->dims, ta->dims, sizeof st->dims);
        } else if (st->rank != ta->rank || memcmp(st->dims, ta->dims, sizeof(int64_t) * (size_t)ta->rank) != 0) {
            st->shape_varies = true;
        }
        tc_error err;
        if (tc_compare_add(&st->s, ta, tb, &err) != TC_STATUS_OK) {
            fprintf(stderr, "tailcut compare: output '%s': %s\n", st->name, err.message);
            return 1;
        }
    }
    return 0;
}

/* ---- report ------------------------------------------------------------------------------------ */

/* Appends to fails (a newline-separated list) why output st misses the thresholds; returns the count. */
static int check_thresholds(const compare_args *a, const out_stats *st, char *fails, size_t size) {
    if (!a->has_min_cosine && !a->has_min_top1) return 0;
    int n = 0;
    size_t off = strlen(fails);
#define ADD(...)                                                                      \
    do {                                                                              \
        if (off < size) off += (size_t)snprintf(fails + off, size - off, __VA_ARGS__); \
        n++;                                                                          \
    } while (0)
    if (st->s.exact && st->s.mismatches)
        ADD("output '%s': %llu of %llu elements differ\n", st->name, (unsigned long long)st->s.mismatches,
            (unsigned long long)st->s.elements);
    if (st->s.nan_mismatches)
        ADD("output '%s': %llu NaN/Inf mismatches\n", st->name, (unsigned long long)st->s.nan_mismatches);
    if (a->has_min_cosine && !st->s.exact && st->s.finite > 0 && tc_compare_cosine(&st->s) < a->min_cosine)
        ADD("output '%s': cosine %.8f < --min-cosine %g\n", st->name, tc_compare_cosine(&st->s), a->min_cosine);
    if (a->has_min_top1 && st->s.rows > 0 && (double)st->s.top1 / (double)st->s.rows < a->min_top1)
        ADD("output '%s': top-1 agreement %.6f < --min-top1 %g\n", st->name, (double)st->s.top1 / (double)st->s.rows,
            a->min_top1);
#undef ADD
    return n;
}

static const char *mode_name(const side *sd) {
    return sd->reference ? "reference" : cli_is_plan(sd->path) ? "plan" : "onnx";
}

static void json_number(double v) {
    if (isfinite(v)) printf("%.12g", v);
    else printf("null");
}

static void print_json(const compare_args *a, const side *sides, const out_stats *stats, int n_out, int n_samples,
                       const char *fails, bool passed, const cli_layers *layers) {
    printf("{\n");
    for (int s = 0; s < 2; s++) {
        printf("  \"%c\": {\"path\": ", "ab"[s]);
        cli_json_string(stdout, sides[s].path);
        printf(", \"mode\": \"%s\"},\n", mode_name(&sides[s]));
    }
    printf("  \"data\": ");
    cli_json_string(stdout, a->data);
    printf(",\n  \"samples\": %d,\n  \"outputs\": {", n_samples);
    for (int o = 0; o < n_out; o++) {
        const out_stats *st = &stats[o];
        printf(o ? ",\n    " : "\n    ");
        cli_json_string(stdout, st->name);
        printf(": {\"dtype\": ");
        cli_json_string(stdout, tc_dtype_name(st->dtype));
        printf(", \"shape\": [");
        for (int32_t d = 0; d < st->rank; d++) printf("%s%lld", d ? ", " : "", (long long)st->dims[d]);
        printf("], \"shape_varies\": %s, \"elements\": %llu, \"exact\": %s", st->shape_varies ? "true" : "false",
               (unsigned long long)st->s.elements, st->s.exact ? "true" : "false");
        if (st->s.exact) {
            printf(", \"mismatches\": %llu}", (unsigned long long)st->s.mismatches);
            continue;
        }
        printf(", \"cosine\": ");
        json_number(st->s.finite ? tc_compare_cosine(&st->s) : NAN);
        printf(", \"max_abs_error\": ");
        json_number(st->s.max_abs);
        printf(", \"mean_abs_error\": ");
        json_number(st->s.finite ? st->s.sum_abs / (double)st->s.finite : NAN);
        printf(", \"max_rel_error\": ");
        json_number(st->s.max_rel);
        printf(", \"rel_l2_error\": ");
        json_number(tc_compare_rel_l2(&st->s));
        printf(", \"rows\": %llu, \"top1\": ", (unsigned long long)st->s.rows);
        json_number(st->s.rows ? (double)st->s.top1 / (double)st->s.rows : NAN);
        printf(", \"top5\": ");
        json_number(st->s.rows5 ? (double)st->s.top5 / (double)st->s.rows5 : NAN);
        printf(", \"nan_mismatches\": %llu}", (unsigned long long)st->s.nan_mismatches);
    }
    printf("\n  },\n  \"min_cosine\": ");
    json_number(a->has_min_cosine ? a->min_cosine : NAN);
    printf(",\n  \"min_top1\": ");
    json_number(a->has_min_top1 ? a->min_top1 : NAN);
    printf(",\n  \"failures\": [");
    int n = 0;
    for (const char *p = fails; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char *line = strndup(p, len);
        printf(n++ ? ", " : "");
        cli_json_string(stdout, line ? line : "(out of memory)");
        free(line);
        p += len + (e != NULL);
    }
    printf("],\n");
    if (layers) cli_layers_print_json(layers);
    printf("  \"passed\": %s\n}\n", passed ? "true" : "false");
}

static void print_table(const compare_args *a, const side *sides, const out_stats *stats, int n_out, int n_samples,
                        const cli_sample_set *set) {
    for (int s = 0; s < 2; s++) {
        const char *how = sides[s].reference ? "reference executor" : cli_is_plan(sides[s].path) ? "plan"
                          : sides[s].per_shape                     ? "built in memory at the samples' shapes"
                                                                   : "built in memory";
        printf("%c: %s (%s)\n", sides[s].label, sides[s].path, how);
    }
    printf("data: %s, %d sample%s of %d input%s\n", a->data, n_samples, n_samples == 1 ? "" : "s", set->n_inputs,
           set->n_inputs == 1 ? "" : "s");
    int w = 6;
    for (int o = 0; o < n_out; o++) {
        int l = (int)strlen(stats[o].name);
        if (l > w) w = l < 40 ? l : 40;
    }
    printf("\n%-*s  %-8s %-16s %-12s %-10s %-10s %-10s %-10s %-7s %-7s %s\n", w, "output", "dtype", "shape", "cosine",
           "max_abs", "mean_abs", "max_rel", "rel_l2", "top1", "top5", "nan");
    double worst_cos = 2, worst_top1 = 2;
    const char *worst_cos_name = NULL, *worst_top1_name = NULL;
    for (int o = 0; o < n_out; o++) {
        const out_stats *st = &stats[o];
        char shape[160];
        fmt_shape(st->rank, st->dims, NULL, shape, sizeof shape);
        if (st->shape_varies && strlen(shape) + 1 < sizeof shape) strcat(shape, "*");
        const char *dt = tc_dtype_name(st->dtype);
        printf("%-*s  %-8s %-16s ", w, st->name, dt ? dt : "?", shape);
        if (st->s.exact) {
            printf("exact: %llu of %llu elements differ\n", (unsigned long long)st->s.mismatches,
                   (unsigned long long)st->s.elements);
            continue;
        }
        double c = tc_compare_cosine(&st->s);
        if (st->s.finite) printf("%-12.8f ", c);
        else printf("%-12s ", "-");
        printf("%-10.3e %-10.3e %-10.3e %-10.3e ", st->s.max_abs, st->s.finite ? st->s.sum_abs / (double)st->s.finite : 0.0,
               st->s.max_rel, tc_compare_rel_l2(&st->s));
        if (st->s.rows) printf("%-7.4f ", (double)st->s.top1 / (double)st->s.rows);
        else printf("%-7s ", "-");
        if (st->s.rows5) printf("%-7.4f ", (double)st->s.top5 / (double)st->s.rows5);
        else printf("%-7s ", "-");
        printf("%llu\n", (unsigned long long)st->s.nan_mismatches);
        if (st->s.finite && c < worst_cos) worst_cos = c, worst_cos_name = st->name;
        if (st->s.rows && (double)st->s.top1 / (double)st->s.rows < worst_top1)
            worst_top1 = (double)st->s.top1 / (double)st->s.rows, worst_top1_name = st->name;
    }
    bool varies = false;
    for (int o = 0; o < n_out; o++) varies |= stats[o].shape_varies;
    if (varies) printf("* the shape varies between samples; the first sample's is shown\n");
    printf("\nsummary: %d output%s over %d sample%s", n_out, n_out == 1 ? "" : "s", n_samples, n_samples == 1 ? "" : "s");
    if (worst_cos_name) printf("; lowest cosine %.8f (%s)", worst_cos, worst_cos_name);
    if (worst_top1_name) printf("; lowest top-1 agreement %.4f (%s)", worst_top1, worst_top1_name);
    printf("\n");
}

/* ---- the command ------------------------------------------------------------------------------- */

static int compare(const compare_args *a) {
    side sides[2];
    memset(sides, 0, sizeof sides);
    cli_sample_set set = {0};
    tc_tensor *inputs = NULL;
    out_stats *stats = NULL;
    cli_layers layers = {0};
    int *map = NULL;
    const char **names = NULL;
    char *fails = NULL;
    size_t fails_size = 0;
    int rc = side_open(&sides[0], a, 0);
    if (rc == 0) rc = side_open(&sides[1], a, 1);
    if (rc) goto done;
    side *sa = &sides[0], *sb = &sides[1];
    rc = 1;
    int n_in = sa->n_in, n_out = sa->n_out;
    map = calloc((size_t)n_out, sizeof(int));
    names = calloc((size_t)n_in, sizeof(char *));
    stats = calloc((size_t)n_out, sizeof(out_stats));
    inputs = calloc((size_t)n_in, sizeof(tc_tensor));
    fails_size = 1;
    for (int o = 0; o < n_out; o++) fails_size += 4 * (strlen(sa->out[o].name) + 160);
    fails = calloc(fails_size, 1);
    if (!map || !names || !stats || !inputs || !fails) {
        fprintf(stderr, "tailcut compare: out of memory\n");
        goto done;
    }
    if (match_sides(sa, sb, map)) goto done;
    for (int i = 0; i < n_in; i++) names[i] = sa->in[i].name;
    for (int o = 0; o < n_out; o++) stats[o].name = sa->out[o].name;
    if (cli_samples_open(a->data, n_in, names, a->samples, &set)) goto done;
    for (int k = 0; k < set.n_samples; k++) {
        if (cli_samples_load(&set, k, inputs)) goto done;
        int bad = side_run(sa, a, &set, k, names, inputs);
        if (!bad) bad = side_run(sb, a, &set, k, names, inputs);
        if (!bad) bad = compare_sample(stats, sa, sb, map, k, &set);
        if (!bad && a->per_layer) bad = cli_layers_add(&layers, sb->engine, sa->cur, sb->cur);
        for (int i = 0; i < n_in; i++) tc_tensor_free(&inputs[i]);
        if (bad) {
            rc = bad;
            goto done;
        }
    }
    int n_fail = 0;
    for (int o = 0; o < n_out; o++) n_fail += check_thresholds(a, &stats[o], fails, fails_size);
    const cli_layers *per_layer = a->per_layer ? &layers : NULL;
    if (a->json) print_json(a, sides, stats, n_out, set.n_samples, fails, n_fail == 0, per_layer);
    else print_table(a, sides, stats, n_out, set.n_samples, &set);
    if (per_layer && !a->json) cli_layers_print_table(per_layer);
    if (a->has_min_top1) {
        bool any = false;
        for (int o = 0; o < n_out; o++) any |= stats[o].s.rows > 0;
        if (!any) fprintf(stderr, "tailcut compare: note: no output has a top-1 figure (last dim >= 2): --min-top1 checked nothing\n");
    }
    if (n_fail) {
        for (const char *p = fails; *p;) {
            const char *e = strchr(p, '\n');
            int len = (int)(e ? e - p : (ptrdiff_t)strlen(p));
            fprintf(stderr, "tailcut compare: FAIL: %.*s\n", len, p);
            p += len + (e != NULL);
        }
    } else if ((a->has_min_cosine || a->has_min_top1) && !a->json) {
        printf("thresholds:");
        if (a->has_min_cosine) printf(" --min-cosine %g", a->min_cosine);
        if (a->has_min_top1) printf(" --min-top1 %g", a->min_top1);
        printf(": passed\n");
    }
    rc = n_fail ? 1 : 0;
done:
    cli_layers_free(&layers);
    free(fails);
    free(inputs);
    free(stats);
    free(names);
    free(map);
    cli_samples_close(&set);
    side_close(&sides[1]);
    side_close(&sides[0]);
    return rc;
}

int tc_cli_compare(int argc, char **argv) {
    compare_args a;
    int rc = parse(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    return compare(&a);
}
