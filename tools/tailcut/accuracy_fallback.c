/* accuracy_fallback.c - INT8 layers back to FP32 (or FP16/BF16) until outputs agree (see accuracy_fallback.h). */
#include "accuracy_fallback.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_stats.h"
#include "engine_open.h"
#include "sample_dir.h"

#define FB_MAX_SAMPLES 64

typedef struct fb_layer {
    const char *name;
    double sqnr_db;
} fb_layer;

static int by_sqnr(const void *a, const void *b) {
    const double x = ((const fb_layer *)a)->sqnr_db, y = ((const fb_layer *)b)->sqnr_db;
    return x < y ? -1 : x > y ? 1 : strcmp(((const fb_layer *)a)->name, ((const fb_layer *)b)->name);
}

/* The outputs of one engine on every sample: out[s * n_out + o] (owned copies). */
typedef struct fb_outputs {
    int n_out, n_samples;
    tc_tensor *out;
} fb_outputs;

static void fb_outputs_free(fb_outputs *r) {
    for (int i = 0; r->out && i < r->n_out * r->n_samples; i++) tc_tensor_free(&r->out[i]);
    free(r->out);
    memset(r, 0, sizeof *r);
}

static int run_all(const tc_engine *e, const cli_sample_set *set, const char *const *names, fb_outputs *r,
                   cli_progress *progress, const char *what, const char *cmd) {
    cli_progress_stage(progress, what, set->n_samples);
    memset(r, 0, sizeof *r);
    r->n_out = tc_engine_num_outputs(e);
    r->n_samples = set->n_samples;
    r->out = calloc((size_t)(r->n_out * r->n_samples) + 1, sizeof *r->out);
    tc_context *ctx = NULL;
    tc_error err;
    if (r->out == NULL || tc_context_create(e, 0, &ctx, &err) != TC_STATUS_OK) {
        fprintf(stderr, "tailcut %s: cannot create a context\n", cmd);
        fb_outputs_free(r);
        return 1;
    }
    int rc = 0;
    tc_tensor in[CLI_MAX_INPUTS];
    for (int s = 0; s < set->n_samples && rc == 0; s++) {
        cli_progress_set(progress, s, NULL);
        if (cli_samples_load(set, s, in)) {
            rc = 1;
            break;
        }
        for (int i = 0; i < set->n_inputs && rc == 0; i++)
            if (tc_context_set_input(ctx, names[i], &in[i]) != TC_STATUS_OK) rc = 1;
        if (rc == 0 && tc_context_run(ctx) != TC_STATUS_OK) rc = 1;
        for (int o = 0; o < r->n_out && rc == 0; o++) {
            tc_io_info info;
            tc_tensor t;
            tc_engine_output_info(e, o, &info);
            tc_tensor *dst = &r->out[s * r->n_out + o];
            if (tc_context_tensor(ctx, info.name, &t) != TC_STATUS_OK ||
                tc_tensor_alloc(t.dtype, t.rank, t.dims, dst, &err) != TC_STATUS_OK)
                rc = 1;
            else if (t.nbytes) memcpy(dst->data, t.data, t.nbytes);
        }
        if (rc) cli_progress_note(progress, "tailcut %s: running sample %d: %s\n", cmd, s, tc_context_error(ctx));
        for (int i = 0; i < set->n_inputs; i++) tc_tensor_free(&in[i]);
    }
    tc_context_destroy(ctx);
    if (rc) fb_outputs_free(r);
    else cli_progress_set(progress, set->n_samples, NULL);
    return rc;
}

/* The metric of b against a: its lowest value over the float outputs (1 when there is none). */
static double agreement(const fb_outputs *a, const fb_outputs *b, cli_accuracy_metric metric) {
    double worst = 1.0;
    for (int o = 0; o < a->n_out; o++) {
        out_stats st = {0};
        bool ok = true;
        for (int s = 0; s < a->n_samples && ok; s++) {
            const tc_tensor *x = &a->out[s * a->n_out + o], *y = &b->out[s * b->n_out + o];
            ok = cli_is_float(x->dtype) && x->dtype == y->dtype && x->nbytes == y->nbytes;
            if (ok) cli_stats_add(&st, x, y, x->nbytes / tc_dtype_size(x->dtype));
        }
        if (!ok) continue;
        const double v = metric == CLI_METRIC_TOP1 ? (st.rows ? (double)st.top1 / (double)st.rows : 1.0)
                                                   : cli_stats_cosine(&st);
        if (!(v >= worst) || st.nan_mismatches) worst = st.nan_mismatches ? 0.0 : v; /* NaN counts as worst */
    }
    return worst;
}

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
    /* Layers by the SQNR of their input, lowest first (the user's FP32 layers are already out). */
    int n_layers = 0;
    for (int t = 0; t < tc_calibrator_num_tensors(c); t++) {
        tc_calib_tensor_info ti;
        if (tc_calibrator_tensor(c, t, method, percentile, &ti, NULL) == TC_STATUS_OK) n_layers += ti.num_layers;
    }
    fb_layer *layers = calloc((size_t)n_layers + 1, sizeof *layers);
    const char **fp32 = calloc((size_t)(n_layers + o->num_fp32_layers) + 1, sizeof *fp32);
    fb_outputs ref = {0}, got = {0};
    tc_engine *e = NULL;
    tc_error err;
    int rc = layers == NULL || fp32 == NULL;
    int k = 0;
    for (int t = 0; rc == 0 && t < tc_calibrator_num_tensors(c); t++) {
        tc_calib_tensor_info ti;
        if (tc_calibrator_tensor(c, t, method, percentile, &ti, NULL) != TC_STATUS_OK) continue;
        for (int l = 0; l < ti.num_layers; l++) {
            bool user = false;
            for (int u = 0; u < o->num_fp32_layers; u++) user |= strcmp(o->fp32_layers[u], ti.layers[l]) == 0;
            if (!user) layers[k++] = (fb_layer){ti.layers[l], ti.sqnr_db};
        }
    }
    n_layers = k;
    qsort(layers, (size_t)n_layers, sizeof *layers, by_sqnr);
    for (int u = 0; rc == 0 && u < o->num_fp32_layers; u++) fp32[u] = o->fp32_layers[u];
    /* The FP32 engine's outputs are the reference. */
    tc_build_options fo = *o;
    fo.flags &= ~(uint32_t)(TC_BUILD_INT8 | TC_BUILD_FP16 | TC_BUILD_BF16 | TC_BUILD_INT8_REDUCE_RANGE);
    fo.num_fp32_layers = 0, fo.fp32_layers = NULL, fo.calib_cache = NULL;
    fo.num_int8_w8_layers = 0, fo.int8_w8_layers = NULL;
    cli_progress_stage(progress, "accuracy: FP32 reference build", 0);
    if (rc == 0 && tc_engine_build(model, &fo, &e, &err) != TC_STATUS_OK) {
        cli_progress_note(progress, "tailcut %s: FP32 reference build: %s\n", cmd, err.message);
        rc = 1;
    }
    if (rc == 0) rc = run_all(e, &set, names, &ref, progress, "accuracy: FP32 reference, sample", cmd);
    tc_engine_destroy(e);
    e = NULL;
    /* With --fp16/--bf16 too, a layer moved out of INT8 may still take that type (the no-INT8 list). With
     * --int8-reduce-range, layers first move to 8-bit weights (stage 0: still INT8, the 8-bit kernels' speed),
     * and out of INT8 (stage 1) only when every layer has 8-bit weights and the threshold is still missed. */
    const bool half = (o->flags & (TC_BUILD_FP16 | TC_BUILD_BF16)) != 0;
    const char *dest = half ? (o->flags & TC_BUILD_FP16 ? "fp16/fp32" : "bf16/fp32") : "fp32";
    const int n_user_w8 = o->num_int8_w8_layers;
    const char **w8 = calloc((size_t)(n_layers + n_user_w8) + 1, sizeof *w8);
    if (w8 == NULL) rc = 1;
    for (int u = 0; rc == 0 && u < n_user_w8; u++) w8[u] = o->int8_w8_layers[u];
    int stage = (o->flags & TC_BUILD_INT8_REDUCE_RANGE) ? 0 : 1;
    for (int moved = 0, round = 1; rc == 0; round++) {
        tc_build_options io = *o;
        const int n_w8 = stage == 0 ? moved : (o->flags & TC_BUILD_INT8_REDUCE_RANGE) ? n_layers : 0;
        for (int i = 0; i < n_w8; i++) w8[n_user_w8 + i] = layers[i].name;
        io.num_int8_w8_layers = n_user_w8 + n_w8;
        io.int8_w8_layers = w8;
        const int out = stage == 1 ? moved : 0;
        if (half) {
            for (int i = 0; i < out; i++) fp32[i] = layers[i].name;
            io.num_no_int8_layers = out;
            io.no_int8_layers = fp32;
        } else {
            for (int i = 0; i < out; i++) fp32[o->num_fp32_layers + i] = layers[i].name;
            io.num_fp32_layers = o->num_fp32_layers + out;
            io.fp32_layers = fp32;
        }
        char what[64];
        snprintf(what, sizeof what, "accuracy round %d: INT8 build", round);
        cli_progress_stage(progress, what, 0);
        if (tc_engine_build(model, &io, &e, &err) != TC_STATUS_OK) {
            cli_progress_note(progress, "tailcut %s: INT8 build: %s\n", cmd, err.message);
            rc = 1;
            break;
        }
        snprintf(what, sizeof what, "accuracy round %d: sample", round);
        if ((rc = run_all(e, &set, names, &got, progress, what, cmd)) != 0) break;
        const double v = agreement(&ref, &got, metric);
        fb_outputs_free(&got);
        const bool last = stage == 1 && moved == n_layers;
        char moved_to[48];
        snprintf(moved_to, sizeof moved_to, stage == 0 ? "given 8-bit weights" : "kept out of INT8 (%s)", dest);
        cli_progress_note(progress, "accuracy: %d layer(s) %s by the threshold: %s %.6f (threshold %g) on %d samples%s\n",
                          moved, moved_to,
                          metric == CLI_METRIC_TOP1 ? "top-1 agreement" : "cosine", v, threshold, set.n_samples,
                          v >= threshold ? "" : last ? ": not met even with every layer in FP32" : "");
        if (v >= threshold || last) break;
        tc_engine_destroy(e);
        e = NULL;
        int prev = moved;
        if (stage == 0 && moved == n_layers) { /* every layer has 8-bit weights: now out of INT8 */
            stage = 1;
            prev = moved = 0;
        }
        moved = moved == 0 ? 1 : (moved * 2 < n_layers ? moved * 2 : n_layers);
        for (int i = prev; i < moved; i++)
            cli_progress_note(progress, "  to %s: %s (input SQNR %.1f dB)\n", stage == 0 ? "8-bit weights" : dest,
                              layers[i].name, layers[i].sqnr_db);
    }
    free(w8);
    fb_outputs_free(&ref);
    cli_samples_close(&set);
    free(layers);
    free(fp32);
    if (rc) {
        tc_engine_destroy(e);
        return rc;
    }
    *engine = e;
    return 0;
}
