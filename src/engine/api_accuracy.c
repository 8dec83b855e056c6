/* api_accuracy.c - tc_engine_build_accurate: INT8 layers back to FP32 (or FP16/BF16), or first to 8-bit weights, in
 * order of their input's estimated SQNR, until the engine's outputs agree with the FP32 engine's on the samples
 * (what `tailcut build --accuracy-threshold` and the Python package's accuracy_threshold do). */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "tailcut/tailcut.h"

typedef struct acc_layer {
    const char *name;
    double sqnr_db;
} acc_layer;

static int by_sqnr(const void *a, const void *b) {
    const double x = ((const acc_layer *)a)->sqnr_db, y = ((const acc_layer *)b)->sqnr_db;
    return x < y ? -1 : x > y ? 1 : strcmp(((const acc_layer *)a)->name, ((const acc_layer *)b)->name);
}

static void logf_(const tc_accuracy_options *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(const tc_accuracy_options *a, const char *fmt, ...) {
    if (a->log == NULL) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    a->log(a->log_user, line);
}

/* The outputs of one engine on every sample: out[s * n_out + o] (owned copies). */
typedef struct acc_outputs {
    int n_out, n_samples;
    tc_tensor *out;
} acc_outputs;

static void outputs_free(acc_outputs *r) {
    for (int i = 0; r->out && i < r->n_out * r->n_samples; i++) tc_tensor_free(&r->out[i]);
    free(r->out);
    memset(r, 0, sizeof *r);
}

static tc_status run_all(const tc_engine *e, const tc_accuracy_options *a, acc_outputs *r, tc__err *err) {
    memset(r, 0, sizeof *r);
    r->n_out = tc_engine_num_outputs(e);
    r->n_samples = a->num_samples;
    r->out = calloc((size_t)(r->n_out * r->n_samples) + 1, sizeof *r->out);
    if (r->out == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "accuracy: out of memory");
    tc_context *ctx = NULL;
    tc_error e2;
    tc_status st = tc_context_create(e, 0, &ctx, &e2);
    if (st != TC_STATUS_OK) {
        outputs_free(r);
        return tc__fail(err, st, "accuracy: %s", e2.message);
    }
    for (int s = 0; s < a->num_samples && st == TC_STATUS_OK; s++) {
        for (int i = 0; i < a->num_inputs && st == TC_STATUS_OK; i++)
            st = tc_context_set_input(ctx, a->input_names[i], &a->samples[s * a->num_inputs + i]);
        if (st == TC_STATUS_OK) st = tc_context_run(ctx);
        for (int o = 0; o < r->n_out && st == TC_STATUS_OK; o++) {
            tc_io_info info;
            tc_tensor t;
            tc_engine_output_info(e, o, &info);
            tc_tensor *dst = &r->out[s * r->n_out + o];
            st = tc_context_tensor(ctx, info.name, &t);
            if (st == TC_STATUS_OK) st = tc_tensor_alloc(t.dtype, t.rank, t.dims, dst, &e2);
            if (st == TC_STATUS_OK && t.nbytes) memcpy(dst->data, t.data, t.nbytes);
        }
        if (st != TC_STATUS_OK) tc__fail(err, st, "accuracy: running sample %d: %s", s, tc_context_error(ctx));
    }
    tc_context_destroy(ctx);
    if (st != TC_STATUS_OK) outputs_free(r);
    return st;
}

/* The metric of b against a: its lowest value over the float outputs (1 when there is none). */
static double agreement(const acc_outputs *a, const acc_outputs *b, tc_accuracy_metric metric) {
    double worst = 1.0;
    for (int o = 0; o < a->n_out; o++) {
        tc_compare_stats st;
        memset(&st, 0, sizeof st);
        bool ok = true;
        for (int s = 0; s < a->n_samples && ok; s++) {
            const tc_tensor *x = &a->out[s * a->n_out + o], *y = &b->out[s * b->n_out + o];
            ok = tc_compare_add(&st, x, y, NULL) == TC_STATUS_OK && !st.exact;
        }
        if (!ok) continue;
        const double v = metric == TC_ACCURACY_TOP1 ? (st.rows ? (double)st.top1 / (double)st.rows : 1.0)
                                                    : tc_compare_cosine(&st);
        if (!(v >= worst) || st.nan_mismatches) worst = st.nan_mismatches ? 0.0 : v; /* NaN counts as worst */
    }
    return worst;
}

static tc_status check_args(const tc_model *model, const tc_build_options *o, const tc_accuracy_options *a,
                            tc_engine **engine, tc__err *err) {
    if (model == NULL || o == NULL || a == NULL || engine == NULL || a->calibrator == NULL)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "tc_engine_build_accurate: NULL argument");
    if (a->struct_size < sizeof *a)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "tc_engine_build_accurate: tc_accuracy_options.struct_size %u "
                        "< %zu", a->struct_size, sizeof *a);
    if (!(o->flags & TC_BUILD_INT8))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "an accuracy threshold needs TC_BUILD_INT8");
    if (!(a->threshold > 0.0 && a->threshold <= 1.0))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "the accuracy threshold must be in (0, 1], not %g",
                        a->threshold);
    if (a->metric != TC_ACCURACY_COSINE && a->metric != TC_ACCURACY_TOP1)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "unknown accuracy metric %d", (int)a->metric);
    if (a->num_samples < 1 || a->num_inputs < 1 || a->samples == NULL || a->input_names == NULL)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "an accuracy threshold measures on samples: none given");
    return TC_STATUS_OK;
}

/* Layers by the SQNR of their input, lowest first, without the caller's FP32 layers; *n set. */
static acc_layer *ordered_layers(const tc_build_options *o, const tc_accuracy_options *a, int *n) {
    const tc_calibrator *c = a->calibrator;
    int total = 0;
    for (int t = 0; t < tc_calibrator_num_tensors(c); t++) {
        tc_calib_tensor_info ti;
        if (tc_calibrator_tensor(c, t, a->method, a->percentile, &ti, NULL) == TC_STATUS_OK) total += ti.num_layers;
    }
    acc_layer *layers = calloc((size_t)total + 1, sizeof *layers);
    int k = 0;
    for (int t = 0; layers && t < tc_calibrator_num_tensors(c); t++) {
        tc_calib_tensor_info ti;
        if (tc_calibrator_tensor(c, t, a->method, a->percentile, &ti, NULL) != TC_STATUS_OK) continue;
        for (int l = 0; l < ti.num_layers; l++) {
            bool user = false;
            for (int u = 0; u < o->num_fp32_layers; u++) user |= strcmp(o->fp32_layers[u], ti.layers[l]) == 0;
            if (!user) layers[k++] = (acc_layer){ti.layers[l], ti.sqnr_db};
        }
    }
    if (layers) qsort(layers, (size_t)k, sizeof *layers, by_sqnr);
    *n = k;
    return layers;
}

tc_status tc_engine_build_accurate(const tc_model *model, const tc_build_options *o, const tc_accuracy_options *a,
                                   tc_engine **engine, double *achieved, tc_error *error) {
    tc__err err = {0};
    if (check_args(model, o, a, engine, &err) != TC_STATUS_OK) {
        tc__err_export(&err, error);
        return err.status;
    }
    *engine = NULL;
    int n_layers = 0;
    acc_layer *layers = ordered_layers(o, a, &n_layers);
    const char **fp32 = calloc((size_t)(n_layers + o->num_fp32_layers) + 1, sizeof *fp32);
    const char **w8 = calloc((size_t)(n_layers + o->num_int8_w8_layers) + 1, sizeof *w8);
    acc_outputs ref = {0}, got = {0};
    tc_engine *e = NULL;
    tc_error e2;
    tc_status st = layers && fp32 && w8 ? TC_STATUS_OK : tc__fail(&err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int u = 0; st == TC_STATUS_OK && u < o->num_fp32_layers; u++) fp32[u] = o->fp32_layers[u];
    /* The FP32 engine's outputs are the reference. */
    tc_build_options fo = *o;
    fo.flags &= ~(uint32_t)(TC_BUILD_INT8 | TC_BUILD_FP16 | TC_BUILD_BF16 | TC_BUILD_INT8_REDUCE_RANGE);
    fo.num_fp32_layers = 0, fo.fp32_layers = NULL, fo.calib_cache = NULL;
    fo.num_int8_w8_layers = 0, fo.int8_w8_layers = NULL;
    fo.num_no_int8_layers = 0, fo.no_int8_layers = NULL;
    if (st == TC_STATUS_OK && (st = tc_engine_build(model, &fo, &e, &e2)) != TC_STATUS_OK)
        tc__fail(&err, st, "FP32 reference build: %s", e2.message);
    if (st == TC_STATUS_OK) st = run_all(e, a, &ref, &err);
    tc_engine_destroy(e);
    e = NULL;
    /* With FP16/BF16 too, a layer moved out of INT8 may still take that type (the no-INT8 list). With reduce range,
     * layers first move to 8-bit weights (stage 0: still INT8, the 8-bit kernels' speed), and out of INT8 (stage 1)
     * only when every layer has 8-bit weights and the threshold is still missed. */
    const bool half = (o->flags & (TC_BUILD_FP16 | TC_BUILD_BF16)) != 0;
    const char *dest = half ? (o->flags & TC_BUILD_FP16 ? "fp16/fp32" : "bf16/fp32") : "fp32";
    const char *metric = a->metric == TC_ACCURACY_TOP1 ? "top-1 agreement" : "cosine";
    const int n_user_w8 = o->num_int8_w8_layers;
    for (int u = 0; st == TC_STATUS_OK && u < n_user_w8; u++) w8[u] = o->int8_w8_layers[u];
    int stage = (o->flags & TC_BUILD_INT8_REDUCE_RANGE) ? 0 : 1;
    for (int moved = 0; st == TC_STATUS_OK;) {
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
        if ((st = tc_engine_build(model, &io, &e, &e2)) != TC_STATUS_OK) {
            tc__fail(&err, st, "INT8 build: %s", e2.message);
            break;
        }
        if ((st = run_all(e, a, &got, &err)) != TC_STATUS_OK) break;
        const double v = agreement(&ref, &got, a->metric);
        outputs_free(&got);
        if (achieved) *achieved = v;
        const bool last = stage == 1 && moved == n_layers;
        char what[64];
        if (stage == 0) snprintf(what, sizeof what, "given 8-bit weights");
        else snprintf(what, sizeof what, "kept out of INT8 (%s)", dest);
        logf_(a, "accuracy: %d layer(s) %s by the threshold: %s %.6f (threshold %g) on %d samples%s", moved, what,
              metric, v, a->threshold, a->num_samples,
              v >= a->threshold ? "" : last ? ": not met even with every layer in FP32" : "");
        if (v >= a->threshold || last) break;
        tc_engine_destroy(e);
        e = NULL;
        int prev = moved;
        if (stage == 0 && moved == n_layers) { /* every layer has 8-bit weights: now out of INT8 */
            stage = 1;
            prev = moved = 0;
        }
        moved = moved == 0 ? 1 : (moved * 2 < n_layers ? moved * 2 : n_layers);
        for (int i = prev; i < moved; i++)
            logf_(a, "  to %s: %s (input SQNR %.1f dB)", stage == 0 ? "8-bit weights" : dest, layers[i].name,
                  layers[i].sqnr_db);
    }
    free(w8);
    outputs_free(&ref);
    free(layers);
    free(fp32);
    if (st != TC_STATUS_OK) {
        tc_engine_destroy(e);
        tc__err_export(&err, error);
        return st;
    }
    *engine = e;
    return TC_STATUS_OK;
}
