/*
 * api_calibrator.c - tc_calibrator, in the API layer beside the engine it builds and runs: implicit INT8
 * calibration. The model's graph is cloned with every tensor an
 * INT8 layer may read made a graph output; an FP32 engine of that graph (built at the first sample's
 * shapes, fixed tactics, plain layout) runs each sample, and every such tensor feeds its histogram
 * (calib.h), one tensor per task on a thread pool of the CPU budget's size. Saving picks each tensor's amax by the chosen method and writes the calibration cache
 * (calib_cache.h) keyed to the model's fingerprint.
 */
#include "core/thread_pool.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "engine/model.h"
#include "onnx/onnx_import.h"
#include "passes/passes.h"
#include "quant/calib.h"
#include "quant/calib_cache.h"
#include "quant/model_fingerprint.h"
#include "graph/quantizable.h"
#include "tailcut/tailcut.h"

#define CAL_BINS 2048

/* One observed tensor's values in the current sample, for a histogram task. */
typedef struct cal_job {
    tc__calib_hist *hist;
    const float *data;
    size_t n;
    tc_status st;
} cal_job;

struct tc_calibrator {
    const tc_model *model;
    tc__graph *g;          /* the clone with the observed tensors as outputs */
    tc_model shadow;       /* wraps g for tc_engine_build */
    tc_engine *engine;     /* built at the first sample */
    tc_context *ctx;
    int n_obs;
    int32_t *obs;          /* observed values of g */
    const char **layers;   /* node names reading obs[i]: layers[layer_at[i] .. layer_at[i + 1]) */
    int *layer_at;
    tc__calib_hist **hist;
    int n_samples;
    uint64_t fingerprint;
    tc__pool_t pool;    /* histogram updates, one tensor per task (created at the first sample) */
    cal_job *jobs;    /* per observed tensor: its data in the current sample */
    tc_calib_timing timing;
};

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static tc_status cal_fail(tc__err *err, tc_error *error) {
    if (error) tc__err_export(err, error);
    return err->status;
}

/* The data input of a node an INT8 tactic may take (weights may still be Constant nodes here), or -1. */
static int32_t quantizable_input(const tc__graph *g, const tc__node *n) {
    tc__qlayer q;
    return tc__quantizable_layer(g, n, true, &q) ? q.x : -1;
}

/* Operand i of node n when n is a two-input float Add and that operand is a quantizable layer's output, else -1. */
static int32_t residual_operand(const tc__graph *g, const tc__node *n, int i) {
    if (n->removed || strcmp(n->op_type, "Add") != 0 || n->n_op_in != 2 || n->in[i] < 0) return -1;
    const int32_t v = n->in[i], p = g->values[v].producer;
    tc__qlayer q;
    if (p < 0 || g->values[v].info.dtype != TC_DTYPE_FLOAT32 || !tc__quantizable_layer(g, &g->nodes[p], true, &q)) return -1;
    return g->nodes[p].out[0] == v ? v : -1;
}

void tc_calibrator_destroy(tc_calibrator *c) {
    if (c == NULL) return;
    tc_context_destroy(c->ctx);
    tc_engine_destroy(c->engine);
    if (c->pool) tc__pool_destroy(c->pool);
    free(c->jobs);
    for (int i = 0; c->hist && i < c->n_obs; i++) tc__calib_hist_destroy(c->hist[i]);
    free(c->hist);
    free(c->obs);
    free(c->layers);
    free(c->layer_at);
    tc__graph_destroy(c->g);
    free(c);
}

tc_status tc_calibrator_create(const tc_model *model, tc_calibrator **out, tc_error *error) {
    tc__err err = {0};
    if (model == NULL || out == NULL) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "tc_calibrator_create: NULL argument");
        return cal_fail(&err, error);
    }
    *out = NULL;
    if (!model->runnable) {
        tc__fail(&err, TC_STATUS_UNSUPPORTED, "the model has unsupported nodes (see tailcut inspect)");
        return cal_fail(&err, error);
    }
    tc_calibrator *c = calloc(1, sizeof *c);
    if (c == NULL) {
        tc__fail(&err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        return cal_fail(&err, error);
    }
    c->model = model;
    c->fingerprint = tc__model_fingerprint(model->graph);
    tc_status st = tc__graph_clone(model->graph, &c->g, &err);
    tc__graph *g = c->g;
    if (st == TC_STATUS_OK) {
        c->obs = malloc(sizeof(int32_t) * (size_t)(g->n_values + 1));
        bool *seen = calloc((size_t)g->n_values + 1, sizeof *seen);
        if (c->obs == NULL || seen == NULL) st = tc__fail(&err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        for (int n = 0; st == TC_STATUS_OK && n < g->n_nodes; n++) {
            int32_t v = quantizable_input(g, &g->nodes[n]);
            if (v >= 0 && !seen[v]) seen[v] = true, c->obs[c->n_obs++] = v;
        }
        /* An Add of two quantizable layers' outputs (ResNet's conv3 + downsample): both operands too, so that the one
         * the engine fuses as a residual can be an INT8 image (engine/lowp_chain.c); they have no INT8 readers. */
        for (int n = 0; st == TC_STATUS_OK && n < g->n_nodes; n++) {
            const int32_t a = residual_operand(g, &g->nodes[n], 0), b = residual_operand(g, &g->nodes[n], 1);
            if (a < 0 || b < 0) continue;
            if (!seen[a]) seen[a] = true, c->obs[c->n_obs++] = a;
            if (!seen[b]) seen[b] = true, c->obs[c->n_obs++] = b;
        }
        free(seen);
    }
    /* The quantizable nodes reading each observed tensor, grouped by tensor. */
    if (st == TC_STATUS_OK) {
        c->layers = malloc(sizeof(char *) * (size_t)(g->n_nodes + 1));
        c->layer_at = malloc(sizeof(int) * (size_t)(c->n_obs + 1));
        if (c->layers == NULL || c->layer_at == NULL) st = tc__fail(&err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        int n_layers = 0;
        for (int i = 0; st == TC_STATUS_OK && i < c->n_obs; i++) {
            c->layer_at[i] = n_layers;
            for (int n = 0; n < g->n_nodes; n++)
                if (quantizable_input(g, &g->nodes[n]) == c->obs[i]) c->layers[n_layers++] = g->nodes[n].name;
        }
        if (st == TC_STATUS_OK) c->layer_at[c->n_obs] = n_layers;
    }
    if (st == TC_STATUS_OK && c->n_obs == 0)
        st = tc__fail(&err, TC_STATUS_UNSUPPORTED, "the model has no Conv, MatMul or Gemm with constant weights to calibrate");
    /* Observed tensors become graph outputs (graph inputs are read from the samples themselves). */
    int extra = 0;
    for (int i = 0; st == TC_STATUS_OK && i < c->n_obs; i++) extra += !g->values[c->obs[i]].is_output && !g->values[c->obs[i]].is_input;
    if (st == TC_STATUS_OK && extra > 0) {
        int32_t *outs = tc__arena_alloc(&g->arena, sizeof(int32_t) * (size_t)(g->n_outputs + extra), _Alignof(int32_t));
        if (outs == NULL) st = tc__fail(&err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        else {
            memcpy(outs, g->outputs, sizeof(int32_t) * (size_t)g->n_outputs);
            int n = g->n_outputs;
            for (int i = 0; i < c->n_obs; i++) {
                tc__value *v = &g->values[c->obs[i]];
                if (v->is_output || v->is_input) continue;
                v->is_output = true;
                outs[n++] = c->obs[i];
            }
            g->outputs = outs;
            g->n_outputs = n;
        }
    }
    if (st == TC_STATUS_OK) {
        c->hist = calloc((size_t)c->n_obs, sizeof *c->hist);
        c->jobs = calloc((size_t)c->n_obs, sizeof *c->jobs);
        if (c->hist == NULL || c->jobs == NULL) st = tc__fail(&err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        for (int i = 0; st == TC_STATUS_OK && i < c->n_obs; i++) st = tc__calib_hist_create(CAL_BINS, &c->hist[i], &err);
    }
    if (st != TC_STATUS_OK) {
        tc_calibrator_destroy(c);
        return cal_fail(&err, error);
    }
    c->shadow.graph = c->g;
    c->shadow.runnable = true;
    *out = c;
    return TC_STATUS_OK;
}

/* Builds the FP32 engine at the sample's shapes. */
static tc_status cal_build(tc_calibrator *c, int n, const char *const *names, const tc_tensor *in, tc_error *error) {
    tc_input_range *r = n > 0 ? calloc((size_t)n, sizeof *r) : NULL;
    if (n > 0 && r == NULL) {
        tc__err err = {0};
        tc__fail(&err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        return cal_fail(&err, error);
    }
    for (int i = 0; i < n; i++) {
        r[i].name = names[i];
        r[i].rank = in[i].rank;
        for (int32_t d = 0; d < in[i].rank && d < TC_MAX_RANK; d++) r[i].min[d] = r[i].opt[d] = r[i].max[d] = in[i].dims[d];
    }
    tc_profile p = {.num_inputs = n, .inputs = r};
    tc_build_options o = {.struct_size = sizeof o, .num_profiles = 1, .profiles = &p,
                          .disabled_passes = TC_PASS_LAYOUT, .flags = TC_BUILD_TACTICS_FIXED};
    tc_status st = tc_engine_build(&c->shadow, &o, &c->engine, error);
    free(r);
    if (st == TC_STATUS_OK) st = tc_context_create(c->engine, 0, &c->ctx, error);
    return st;
}

static void observe_task(void *ctx, size_t i) {
    cal_job *j = &((cal_job *)ctx)[i];
    tc__err err = {0};
    j->st = j->n > 0 ? tc__calib_hist_observe(j->hist, j->data, j->n, &err) : TC_STATUS_OK;
}

/* True when engine e (one profile) was built for the sample's shapes. */
static bool cal_engine_takes(const tc_engine *e, int n, const char *const *names, const tc_tensor *in) {
    for (int i = 0; i < n; i++) {
        int k = 0;
        tc_io_info info;
        while (k < tc_engine_num_inputs(e) && tc_engine_input_info(e, k, &info) == TC_STATUS_OK &&
               strcmp(info.name, names[i]) != 0)
            k++;
        tc_input_range r;
        if (k == tc_engine_num_inputs(e) || tc_engine_profile_range(e, 0, k, &r) != TC_STATUS_OK || r.rank != in[i].rank)
            return false;
        for (int32_t d = 0; d < r.rank; d++)
            if (in[i].dims[d] < r.min[d] || in[i].dims[d] > r.max[d]) return false;
    }
    return true;
}

tc_status tc_calibrator_add(tc_calibrator *c, int n, const char *const *names, const tc_tensor *in, tc_error *error) {
    tc__err err = {0};
    if (c == NULL || (n > 0 && (names == NULL || in == NULL))) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "tc_calibrator_add: NULL argument");
        return cal_fail(&err, error);
    }
    if (n != c->g->n_inputs) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "the model has %d inputs, the sample %d", c->g->n_inputs, n);
        return cal_fail(&err, error);
    }
    /* Every sample tensor must have its input's type: the engine and the histograms would read other bytes as it. */
    for (int i = 0; i < n; i++) {
        int32_t v = -1;
        for (int k = 0; k < c->g->n_inputs && names[i] != NULL; k++)
            if (strcmp(c->g->values[c->g->inputs[k]].name, names[i]) == 0) v = c->g->inputs[k];
        if (v < 0) {
            tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "the model has no input named '%s'", names[i] ? names[i] : "(null)");
            return cal_fail(&err, error);
        }
        if (tc__check_input_dtype(names[i], c->g->values[v].info.dtype, in[i].dtype, &err) != TC_STATUS_OK)
            return cal_fail(&err, error);
    }
    /* The engine is built at a sample's shapes; a sample of other shapes (e.g. another sequence length) gets an
     * engine of its own shapes: the histograms carry over. */
    if (c->engine != NULL && !cal_engine_takes(c->engine, n, names, in)) {
        tc_context_destroy(c->ctx), tc_engine_destroy(c->engine);
        c->ctx = NULL, c->engine = NULL;
    }
    const double t_start = now_s();
    if (c->engine == NULL) {
        c->timing.engines_built++;
        tc_status st = cal_build(c, n, names, in, error);
        if (st != TC_STATUS_OK) {
            tc_context_destroy(c->ctx), tc_engine_destroy(c->engine);
            c->ctx = NULL, c->engine = NULL;
            return st;
        }
    }
    const double t_built = now_s();
    c->timing.build_s += t_built - t_start;
    for (int i = 0; i < n; i++) {
        tc_status st = tc_context_set_input_shape(c->ctx, names[i], in[i].rank, in[i].dims);
        if (st == TC_STATUS_OK) st = tc_context_set_tensor(c->ctx, names[i], in[i].data, in[i].nbytes);
        if (st != TC_STATUS_OK) {
            tc__fail(&err, st, "%s", tc_context_error(c->ctx)); /* names the input */
            return cal_fail(&err, error);
        }
    }
    if (tc_context_run(c->ctx) != TC_STATUS_OK) {
        tc__fail(&err, TC_STATUS_INTERNAL, "running the calibration engine: %s", tc_context_error(c->ctx));
        return cal_fail(&err, error);
    }
    const double t_run = now_s();
    c->timing.run_s += t_run - t_built;
    for (int i = 0; i < c->n_obs; i++) {
        const tc__value *v = &c->g->values[c->obs[i]];
        tc_tensor t = {0};
        tc_status st = TC_STATUS_OK;
        if (v->is_input) {
            for (int k = 0; k < n; k++)
                if (strcmp(names[k], v->name) == 0) t = in[k];
        } else {
            st = tc_context_tensor(c->ctx, v->name, &t);
            if (st) tc__fail(&err, st, "reading '%s': %s", v->name, tc_context_error(c->ctx));
        }
        if (st == TC_STATUS_OK && t.data == NULL && t.nbytes > 0)
            st = tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "no data for '%s'", v->name);
        if (st == TC_STATUS_OK && t.nbytes > 0 && t.dtype != TC_DTYPE_FLOAT32)
            st = tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "tensor '%s' is not float32", v->name);
        if (st) return cal_fail(&err, error);
        c->jobs[i] = (cal_job){.hist = c->hist[i], .data = t.data, .n = t.nbytes / sizeof(float)};
    }
    /* Every histogram is its own: one task per tensor, on the CPU budget's threads. */
    if (c->pool == NULL) {
        tc_cpu_budget_info b;
        tc_cpu_budget(&b);
        c->pool = tc__pool_create((size_t)b.cpus);
    }
    /* YIELD_WORKERS: the workers sleep when done instead of spinning against the engine's own threads */
    if (c->pool != NULL)
        tc__pool_parallelize_1d(c->pool, observe_task, c->jobs, (size_t)c->n_obs, TC__POOL_FLAG_YIELD_WORKERS);
    else for (int i = 0; i < c->n_obs; i++) observe_task(c->jobs, (size_t)i);
    for (int i = 0; i < c->n_obs; i++)
        if (c->jobs[i].st != TC_STATUS_OK) {
            tc__fail(&err, c->jobs[i].st, "histogram of '%s' refused its values", c->g->values[c->obs[i]].name);
            return cal_fail(&err, error);
        }
    c->timing.observe_s += now_s() - t_run;
    c->n_samples++;
    return TC_STATUS_OK;
}

int tc_calibrator_num_samples(const tc_calibrator *c) { return c ? c->n_samples : 0; }

void tc_calibrator_timing(const tc_calibrator *c, tc_calib_timing *timing) {
    if (timing == NULL) return;
    memset(timing, 0, sizeof *timing);
    if (c != NULL) *timing = c->timing;
}
int tc_calibrator_num_tensors(const tc_calibrator *c) { return c ? c->n_obs : 0; }

tc_status tc_calibrator_tensor(const tc_calibrator *c, int index, tc_calib_method method, double percentile,
                               tc_calib_tensor_info *info, tc_error *error) {
    tc__err err = {0};
    if (c == NULL || info == NULL || index < 0 || index >= c->n_obs || (int)method < 0 ||
        (int)method >= TC__CALIB_METHOD_COUNT) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "tc_calibrator_tensor: bad argument");
        return cal_fail(&err, error);
    }
    memset(info, 0, sizeof *info);
    info->name = c->g->values[c->obs[index]].name;
    info->layers = c->layers + c->layer_at[index];
    info->num_layers = c->layer_at[index + 1] - c->layer_at[index];
    tc_status st = tc__calib_amax(c->hist[index], (tc__calib_method)method, percentile, &info->amax, &err);
    if (st) {
        tc__err_prefix(&err, "tensor '%s': ", info->name);
        return cal_fail(&err, error);
    }
    info->sqnr_db = tc__calib_sqnr_db(c->hist[index], info->amax);
    return TC_STATUS_OK;
}

tc_status tc_calibrator_save(const tc_calibrator *c, tc_calib_method method, double percentile, const char *path,
                             tc_error *error) {
    tc__err err = {0};
    if (c == NULL || path == NULL || (int)method < 0 || (int)method >= TC__CALIB_METHOD_COUNT) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "tc_calibrator_save: bad argument");
        return cal_fail(&err, error);
    }
    if (c->n_samples == 0) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "no calibration samples were added");
        return cal_fail(&err, error);
    }
    if (method == TC_CALIB_PERCENTILE && !(percentile > 0.0 && percentile <= 100.0)) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "the percentile must be in (0, 100], not %g", percentile);
        return cal_fail(&err, error);
    }
    tc__calib_cache *cache = NULL;
    tc_status st = tc__calib_cache_create(c->fingerprint, (tc__calib_method)method, &cache, &err);
    for (int i = 0; st == TC_STATUS_OK && i < c->n_obs; i++) {
        tc__calib_stats s;
        tc__calib_hist_stats(c->hist[i], &s);
        if (s.count == 0) continue; /* never saw a finite value: the layer stays FP32 */
        double amax = 0.0;
        st = tc__calib_amax(c->hist[i], (tc__calib_method)method, percentile, &amax, &err);
        if (st == TC_STATUS_OK) st = tc__calib_cache_put(cache, c->g->values[c->obs[i]].name, tc__calib_scale(amax), &err);
    }
    if (st == TC_STATUS_OK) st = tc__calib_cache_save(cache, path, &err);
    tc__calib_cache_free(cache);
    return st ? cal_fail(&err, error) : TC_STATUS_OK;
}

tc_status tc_calibrator_export_qdq(const tc_calibrator *c, tc_calib_method method, double percentile,
                                   const char *model_path, const char *out_path, tc_error *error) {
    return tc_calibrator_export_qdq_flags(c, method, percentile, model_path, out_path, 0, error);
}

tc_status tc_calibrator_export_qdq_flags(const tc_calibrator *c, tc_calib_method method, double percentile,
                                         const char *model_path, const char *out_path, uint32_t flags, tc_error *error) {
    tc__err err = {0};
    if (c == NULL || model_path == NULL || out_path == NULL || (int)method < 0 || (int)method >= TC__CALIB_METHOD_COUNT ||
        (flags & ~(uint32_t)TC_EXPORT_QDQ_REDUCE_RANGE) != 0) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "tc_calibrator_export_qdq: bad argument");
        return cal_fail(&err, error);
    }
    if (c->n_samples == 0) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "no calibration samples were added");
        return cal_fail(&err, error);
    }
    const char **names = calloc((size_t)c->n_obs, sizeof *names);
    float *scales = calloc((size_t)c->n_obs, sizeof *scales);
    uint8_t *zero_points = calloc((size_t)c->n_obs, 1);
    tc_status st = names && scales && zero_points ? TC_STATUS_OK : tc__fail(&err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    /* the engine's graph (fused epilogues) tells which tensors come out of a GELU, SiLU or HardSwish */
    tc__graph *eg = c->engine != NULL ? c->engine->g : NULL;
    int n = 0;
    for (int i = 0; st == TC_STATUS_OK && i < c->n_obs; i++) {
        tc__calib_stats s;
        tc__calib_hist_stats(c->hist[i], &s);
        if (s.count == 0) continue;
        double amax = 0.0;
        st = tc__calib_amax(c->hist[i], (tc__calib_method)method, percentile, &amax, &err);
        names[n] = c->g->values[c->obs[i]].name;
        scales[n] = tc__calib_scale(amax);
        /* the asymmetric 8-bit codes the engine's precision pass gives such a tensor (without reduce range's 7 bits: a
         * QuantizeLinear saturates at 255) */
        const int32_t v = eg != NULL ? tc__graph_find_value(eg, names[n]) : -1;
        float s8;
        int64_t z;
        if (v >= 0 && tc__int8_floor_codes(eg, v, scales[n], 255.0, &s8, &z)) scales[n] = s8, zero_points[n] = (uint8_t)z;
        n++;
    }
    /* The tensors' names are the model's; c->model->graph holds its weights. */
    if (st == TC_STATUS_OK)
        st = tc__onnx_export_qdq(model_path, c->model->graph, names, scales, zero_points, n,
                                 (flags & TC_EXPORT_QDQ_REDUCE_RANGE) != 0, out_path, &err);
    free(names);
    free(scales);
    free(zero_points);
    return st ? cal_fail(&err, error) : TC_STATUS_OK;
}
