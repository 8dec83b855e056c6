/*
 * engine_build.c - tc_engine_build: clone the model's graph, fix the profile's shapes, run the
 * optimisation passes, cut the graph into steps, plan each profile's memory at its max shapes,
 * then serialize everything as a plan and load that plan back as the engine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/layout.h"
#include "core/quant_attr.h"
#include "engine/engine.h"
#include "engine/engine_tactics.h"
#include "engine/memory_plan.h"
#include "engine/model.h"
#include "engine/plan_format.h"
#include "engine/ref_node.h"
#include "passes/passes.h"
#include "quant/calib_cache.h"
#include "quant/model_fingerprint.h"

/* Shape arithmetic results above this many elements are computed in run, not at reshape. */
#define TC__SHAPE_STEP_MAX_NUMEL 64
#define TC__ARENA_ALIGN 64

/* True when some layer of g may run INT8 (tc.int8_scale: from --int8's calibration, or a QDQ model's scales). */
static bool has_int8_layers(const tc__graph *g) {
    for (int k = 0; k < g->n_nodes; k++)
        if (!g->nodes[k].removed && tc__attr_has(&g->nodes[k].attrs, TC__ATTR_INT8_SCALE)) return true;
    return false;
}

static bool is_view_op(const char *op) {
    return strcmp(op, "Reshape") == 0 || strcmp(op, "Flatten") == 0 || strcmp(op, "Squeeze") == 0 ||
           strcmp(op, "Unsqueeze") == 0 || strcmp(op, "Identity") == 0;
}

/* Checks the user's profiles and fills tc__range per graph input (static inputs from the model). */
static tc_status make_ranges(const tc__graph *g, const tc_profile *p, tc__range *ranges, tc__err *err) {
    /* A misspelt name first: it explains a "dynamic dims" complaint about the input it was meant for. */
    for (int i = 0; p != NULL && i < p->num_inputs; i++) {
        bool found = false;
        for (int k = 0; k < g->n_inputs; k++)
            found |= p->inputs[i].name && strcmp(p->inputs[i].name, g->values[g->inputs[k]].name) == 0;
        if (!found)
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "the profile names '%s', which is not a model input",
                            p->inputs[i].name ? p->inputs[i].name : "(null)");
    }
    for (int k = 0; k < g->n_inputs; k++) {
        const tc__value *v = &g->values[g->inputs[k]];
        tc__range *r = &ranges[k];
        memset(r, 0, sizeof *r);
        r->value = g->inputs[k];
        const tc_input_range *u = NULL;
        for (int i = 0; p != NULL && i < p->num_inputs; i++)
            if (p->inputs[i].name != NULL && strcmp(p->inputs[i].name, v->name) == 0) u = &p->inputs[i];
        const tc__shape *decl = &v->info.shape;
        if (u == NULL) {
            if (!tc__shape_is_concrete(decl))
                return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                                "input '%s' has dynamic dims: give its shapes (--shapes, or --min-shapes/--opt-shapes/"
                                "--max-shapes)",
                                v->name);
            r->rank = decl->rank;
            for (int32_t d = 0; d < decl->rank; d++) r->min[d] = r->opt[d] = r->max[d] = decl->dims[d].value;
            continue;
        }
        if (u->rank < 0 || u->rank > TC_MAX_RANK || (decl->rank >= 0 && u->rank != decl->rank))
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "input '%s' has rank %d, the profile gives rank %d", v->name,
                            (int)decl->rank, (int)u->rank);
        r->rank = u->rank;
        for (int32_t d = 0; d < u->rank; d++) {
            if (u->min[d] < 0 || u->min[d] > u->opt[d] || u->opt[d] > u->max[d] || u->max[d] > ((int64_t)1 << 31))
                return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                                "input '%s' dim %d: the profile needs 0 <= min <= opt <= max (got %lld, %lld, %lld)",
                                v->name, (int)d, (long long)u->min[d], (long long)u->opt[d], (long long)u->max[d]);
            if (decl->rank >= 0 && decl->dims[d].value >= 0 &&
                (u->min[d] != decl->dims[d].value || u->max[d] != decl->dims[d].value))
                return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "input '%s' dim %d is fixed at %lld in the model", v->name,
                                (int)d, (long long)decl->dims[d].value);
            r->min[d] = u->min[d];
            r->opt[d] = u->opt[d];
            r->max[d] = u->max[d];
        }
    }
    return TC_STATUS_OK;
}

/* Classifies nodes into steps: shape arithmetic, views, computation. */
static tc_status make_steps(const tc__graph *g, tc__step **out, tc__err *err) {
    tc__step *steps = calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *steps);
    bool *known = calloc((size_t)(g->n_values ? g->n_values : 1), sizeof *known);
    if (steps == NULL || known == NULL) {
        free(steps), free(known);
        return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    for (int v = 0; v < g->n_values; v++) known[v] = g->values[v].init != NULL;
    for (int n = 0; n < g->n_nodes; n++) {
        const tc__node *node = &g->nodes[n];
        tc__step *s = &steps[n];
        s->node = n;
        /* until a tactic is chosen (and for the steps that are no compute step: shape arithmetic, evaluated on the
         * host by the reference kernels): the CPU's fallback tactic, "ref" */
        const tc__tactic *host = tc__tactic_fallback(tc__backend_get(TC__BACKEND_CPU), node->op_type);
        snprintf(s->tactic, sizeof s->tactic, "%s", host != NULL ? host->name : "");
        strcpy(s->precision, "fp32");
        s->backend = TC__BACKEND_CPU;
        bool inputs_known = true, small_ints = true, small_any = true;
        for (int i = 0; i < node->n_in; i++) /* a guard says when a step runs: shape arithmetic runs at any rate */
            if (node->in[i] >= 0 && !known[node->in[i]] && i != node->guard) inputs_known = false;
        for (int o = 0; o < node->n_out; o++) {
            int32_t v = node->out[o];
            if (v < 0) continue;
            const tc__vinfo *vi = &g->values[v].info;
            bool ints = vi->dtype == TC_DTYPE_INT64 || vi->dtype == TC_DTYPE_INT32 || vi->dtype == TC_DTYPE_BOOL;
            bool small = vi->shape.rank == 0 ||
                         (vi->shape.rank == 1 && vi->shape.dims[0].value >= 0 &&
                          vi->shape.dims[0].value <= TC__SHAPE_STEP_MAX_NUMEL) ||
                         (vi->shape.rank == 1 && vi->symval_len >= 0);
            if (!ints || !small || g->values[v].is_output) small_ints = false;
            if (!small || g->values[v].is_output) small_any = false;
        }
        bool shape_op = strcmp(node->op_type, "Shape") == 0 || strcmp(node->op_type, "Size") == 0;
        /* A small value of any dtype computed from known ones is shape arithmetic too: torch exports arange(end=w,
         * dtype=float) as Range(0.0, Cast(Shape(x)[3], float), 1.0), whose length is known only when that Cast ran
         * (YOLOv8's anchors, issue 26 defect 4). */
        if ((shape_op && small_ints) || (inputs_known && small_any)) {
            s->kind = TC__STEP_SHAPE;
            for (int o = 0; o < node->n_out; o++)
                if (node->out[o] >= 0) known[node->out[o]] = true;
            continue;
        }
        int32_t x = node->n_op_in > 0 ? node->in[0] : -1, y = node->n_out == 1 ? node->out[0] : -1;
        if (is_view_op(node->op_type) && tc__epilogue_is_none(&node->epi) && !tc__layout_any_blocked(&node->attrs) &&
            x >= 0 && y >= 0 && !known[x] &&
            !g->values[x].is_input && !g->values[x].is_output && !g->values[y].is_output &&
            g->values[x].info.dtype == g->values[y].info.dtype)
            s->kind = TC__STEP_VIEW;
        else
            s->kind = TC__STEP_COMPUTE;
    }
    free(known);
    *out = steps;
    return TC_STATUS_OK;
}

/* Sizes every value at the given input dims (sizes[v] = max(sizes[v], bytes)) and the scratch steps need. */
static tc_status measure(const tc__graph *g, const tc__step *steps, const tc__range *ranges, int which, uint64_t *sizes,
                         uint64_t *scratch, tc__err *err) {
    tc__shapes s;
    tc_status st = tc__shapes_at(g, steps, ranges, which, &s, err);
    if (st == TC_STATUS_OK) {
        for (int v = 0; v < g->n_values; v++)
            if (!g->values[v].init && s.t[v].nbytes > sizes[v]) sizes[v] = s.t[v].nbytes;
        for (int k = 0; k < g->n_nodes; k++) {
            if (steps[k].kind == TC__STEP_VIEW) continue;
            uint64_t need = tc__step_scratch_bytes(g, &steps[k], &s);
            if (need > *scratch) *scratch = need;
        }
    }
    tc__shapes_free(&s);
    return st;
}

static tc_status plan_profile(const tc__graph *g, const tc__step *steps, tc__profile *pr, tc__err *err) {
    int nv = g->n_values;
    uint64_t *sizes = calloc((size_t)nv, sizeof *sizes);
    int32_t *first = malloc(sizeof(int32_t) * (size_t)nv), *last = malloc(sizeof(int32_t) * (size_t)nv);
    tc__mem_req *reqs = calloc((size_t)nv, sizeof *reqs);
    pr->offset = malloc(sizeof(uint64_t) * (size_t)nv);
    pr->capacity = calloc((size_t)nv, sizeof(uint64_t));
    tc_status st = TC_STATUS_OK;
    if (!sizes || !first || !last || !reqs || !pr->offset || !pr->capacity) {
        st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        goto out;
    }
    uint64_t scratch = 0;
    for (int which = 0; which < 3 && st == TC_STATUS_OK; which++)
        st = measure(g, steps, pr->ranges, which, sizes, &scratch, err);
    if (st) goto out;
    for (int v = 0; v < nv; v++) first[v] = -1, last[v] = -1;
    for (int k = 0; k < g->n_nodes; k++) {
        const tc__node *node = &g->nodes[steps[k].node];
        for (int o = 0; o < node->n_out; o++)
            if (node->out[o] >= 0) first[node->out[o]] = steps[k].kind == TC__STEP_SHAPE ? 0 : k;
        for (int i = 0; i < node->n_in; i++)
            if (node->in[i] >= 0) last[node->in[i]] = k;
    }
    for (int o = 0; o < g->n_outputs; o++) last[g->outputs[o]] = g->n_nodes;
    /* Shape-step values are computed when input shapes are set, not on each run: they must outlive every run, or a
     * later step's output reuses their bytes and the next run (same shapes, nothing recomputed) reads that instead
     * (a dynamic BERT-base plan failed its second run in its embeddings' Slice). */
    for (int k = 0; k < g->n_nodes; k++)
        if (steps[k].kind == TC__STEP_SHAPE) {
            const tc__node *node = &g->nodes[steps[k].node];
            for (int o = 0; o < node->n_out; o++)
                if (node->out[o] >= 0) last[node->out[o]] = g->n_nodes;
        }
    uint64_t naive = 0;
    for (int v = 0; v < nv; v++) {
        const tc__value *val = &g->values[v];
        bool in_arena = !val->init && !val->is_input && first[v] >= 0;
        reqs[v].size = in_arena ? (sizes[v] ? sizes[v] : 1) : 0;
        reqs[v].first = first[v] < 0 ? 0 : first[v];
        reqs[v].last = last[v] < reqs[v].first ? reqs[v].first : last[v];
        reqs[v].alias_of = -1;
        pr->capacity[v] = in_arena ? sizes[v] : UINT64_MAX;
        if (in_arena) naive += (sizes[v] + TC__ARENA_ALIGN - 1) & ~(uint64_t)(TC__ARENA_ALIGN - 1);
    }
    for (int k = 0; k < g->n_nodes; k++)
        if (steps[k].kind == TC__STEP_VIEW) {
            const tc__node *node = &g->nodes[steps[k].node];
            reqs[node->out[0]].alias_of = node->in[0];
        }
    uint64_t total = 0;
    st = tc__memory_plan(reqs, nv, TC__ARENA_ALIGN, pr->offset, &total, err);
    if (st) goto out;
    for (int v = 0; v < nv; v++)
        if (reqs[v].size == 0) pr->offset[v] = TC__NOT_IN_ARENA;
    pr->arena_bytes = total;
    pr->naive_bytes = naive;
    pr->scratch_bytes = scratch;
out:
    free(sizes), free(first), free(last), free(reqs);
    return st;
}

static void free_profiles(tc__profile *p, int n) {
    for (int i = 0; p && i < n; i++) {
        free(p[i].ranges);
        free(p[i].offset);
        free(p[i].capacity);
    }
    free(p);
}

/* A list of layer names of the build options (what: "FP32", "no-INT8"): each must name a node of the model. */
static tc_status check_layers(const tc__graph *model_graph, int32_t n, const char *const *names, const char *what,
                              tc__err *err) {
    if (n < 0 || (n > 0 && names == NULL))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "%d %s layers but no names", (int)n, what);
    for (int i = 0; i < n; i++) {
        bool found = false;
        for (int k = 0; k < model_graph->n_nodes && !found; k++)
            found = names[i] != NULL && strcmp(model_graph->nodes[k].name, names[i]) == 0;
        if (!found)
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "the %s layer '%s' is not a node of the model", what,
                            names[i] ? names[i] : "(null)");
    }
    return TC_STATUS_OK;
}

static tc_status check_fp32_layers(const tc__graph *model_graph, const tc_build_options *o, tc__err *err) {
    tc_status st = check_layers(model_graph, o->num_fp32_layers, o->fp32_layers, "FP32", err);
    if (st == TC_STATUS_OK && (o->flags & TC_BUILD_INT8))
        st = check_layers(model_graph, o->num_no_int8_layers, o->no_int8_layers, "no-INT8", err);
    if (st == TC_STATUS_OK && o->num_int8_w8_layers != 0 && !(o->flags & TC_BUILD_INT8_REDUCE_RANGE))
        st = tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "8-bit-weight layers are for reduce range (TC_BUILD_INT8_REDUCE_RANGE)");
    if (st == TC_STATUS_OK && (o->flags & TC_BUILD_INT8_REDUCE_RANGE))
        st = check_layers(model_graph, o->num_int8_w8_layers, o->int8_w8_layers, "8-bit-weight", err);
    return st;
}

/* The precision pass's lookup of a calibrated scale (passes.h tc__scale_lookup) in a calibration cache. */
static bool cache_scale(const void *cache, const char *name, float *scale) {
    return tc__calib_cache_find(cache, name, scale);
}

/* --int8: the calibration cache's scales on the quantizable nodes (precision pass), minus the FP32 layers. */
static tc_status apply_int8(const tc__graph *model_graph, tc__graph *g, const tc_build_options *o, tc__err *err) {
    if (o->calib_cache == NULL)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "INT8 needs a calibration cache (tailcut calibrate, --calib-cache)");
    /* Out of INT8: the FP32 layers and the no-INT8 layers. */
    const int n_ex = o->num_fp32_layers + o->num_no_int8_layers;
    const char **ex = calloc((size_t)n_ex + 1, sizeof *ex);
    if (ex == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < o->num_fp32_layers; i++) ex[i] = o->fp32_layers[i];
    for (int i = 0; i < o->num_no_int8_layers; i++) ex[o->num_fp32_layers + i] = o->no_int8_layers[i];
    tc__calib_cache *cache = NULL;
    tc_status st = tc__calib_cache_load(o->calib_cache, tc__model_fingerprint(model_graph), &cache, err);
    if (st == TC_STATUS_OK) {
        tc__pass_ctx pc = {.g = g, .eval = tc__ref_eval, .eval_user = &g->opset, .err = err};
        const tc__int8_lists lists = {ex, n_ex, o->int8_w8_layers, o->num_int8_w8_layers};
        st = tc__pass_precision_int8(&pc, cache_scale, cache, &lists, (o->flags & TC_BUILD_INT8_REDUCE_RANGE) != 0);
    }
    tc__calib_cache_free(cache);
    free(ex);
    return st;
}

/* --fp16 / --bf16: the FP16 / BF16 mark on the same layers, minus the FP32 layers. */
static tc_status apply_half(tc__graph *g, const tc_build_options *o, const char *attr, tc__err *err) {
    tc__pass_ctx pc = {.g = g, .eval = tc__ref_eval, .eval_user = &g->opset, .err = err};
    return tc__pass_precision_half(&pc, attr, (const char *const *)o->fp32_layers, o->num_fp32_layers);
}

/* Drops what a device pass left unread, re-sorts and re-infers the graph. */
static tc_status settle(tc__pass_ctx *pc) {
    tc_status st = tc__pass_eliminate_dead(pc);
    tc__graph_compact(pc->g);
    if (st == TC_STATUS_OK) st = tc__graph_toposort(pc->g, pc->err);
    if (st == TC_STATUS_OK) st = tc__graph_infer_shapes(pc->g, false, tc__ref_eval, &pc->g->opset, pc->err);
    return st;
}

/* Device backends: attention chains become Attention nodes (fuse_attention), the Reshapes they left go; then their Q,
 * K and V projections become one MatMul (merge_qkv), the weights they left go. */
static tc_status apply_attention(tc__graph *g, uint32_t disabled, tc__err *err) {
    tc__pass_ctx pc = {.g = g, .eval = tc__ref_eval, .eval_user = &g->opset, .err = err};
    tc_status st = disabled & TC_PASS_FUSE_ATTENTION ? TC_STATUS_OK : tc__pass_fuse_attention(&pc);
    if (st == TC_STATUS_OK && pc.changes > 0) st = settle(&pc);
    if (st != TC_STATUS_OK || (disabled & TC_PASS_MERGE_QKV)) return st;
    pc.changes = 0;
    st = tc__pass_merge_qkv(&pc);
    if (st == TC_STATUS_OK && pc.changes > 0) st = settle(&pc);
    return st;
}

/* Device backends: an embedding layer (Gather of a constant table, constant Adds, LayerNormalization) becomes one
 * TcEmbedLayerNorm node; the Gather and Adds go. */
static tc_status apply_embed_layernorm(tc__graph *g, uint32_t disabled, tc__err *err) {
    tc__pass_ctx pc = {.g = g, .eval = tc__ref_eval, .eval_user = &g->opset, .err = err};
    tc_status st = disabled & TC_PASS_FUSE_EMBED_LAYERNORM ? TC_STATUS_OK : tc__pass_fuse_embed_layernorm(&pc);
    if (st == TC_STATUS_OK && pc.changes > 0) st = settle(&pc);
    return st;
}

/* One way to run the optimised graph: the graph (owned), its steps, chosen tactics and their timings. */
typedef struct variant {
    tc__graph *g;
    tc__step *steps;
    tc__tune_result *tuning;
    uint64_t required_isa;
    uint64_t total_ns; /* the chosen tactics' fastest runs summed over the timed compute steps */
    bool blocked;      /* the layout pass made some value NCHW16c (or NCHW8c) */
} variant;

static void variant_free(variant *v) {
    tc__graph_destroy(v->g);
    free(v->steps);
    free(v->tuning);
    memset(v, 0, sizeof *v);
}

/* Builds a variant from g (sorted and inferred; taken over: it belongs to v even on failure), with the
 * layout pass in blocks of `block` channels, or without it (block 0). */
static tc_status make_variant(tc__graph *g, int64_t block, const tc_build_options *o, const tc__backend *be,
                              const tc__profile *profiles, int n_prof, variant *v, tc__err *err) {
    memset(v, 0, sizeof *v);
    v->g = g;
    tc_status st = TC_STATUS_OK;
    if (block != 0) {
        tc__pass_ctx pc = {.g = g, .eval = tc__ref_eval, .eval_user = &g->opset, .err = err};
        st = tc__pass_layout_nchwc(&pc, block);
        v->blocked = pc.changes > 0;
        if (st == TC_STATUS_OK && v->blocked) st = tc__graph_toposort(g, err);
        if (st == TC_STATUS_OK && v->blocked) st = tc__graph_infer_shapes(g, false, tc__ref_eval, &g->opset, err);
    }
    if (st == TC_STATUS_OK) st = make_steps(g, &v->steps, err);
    if (st == TC_STATUS_OK) {
        v->tuning = calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *v->tuning);
        if (v->tuning == NULL) st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    if (st == TC_STATUS_OK) {
        bool fixed_shapes = n_prof == 1;
        for (int i = 0; fixed_shapes && i < profiles[0].n_ranges; i++)
            fixed_shapes = memcmp(profiles[0].ranges[i].min, profiles[0].ranges[i].max,
                                  sizeof(int64_t) * (size_t)profiles[0].ranges[i].rank) == 0;
        tc__tactic_opts to = {.fixed = o && (o->flags & TC_BUILD_TACTICS_FIXED),
                              .lowp_chain = fixed_shapes && !(o && (o->disabled_passes & TC_PASS_LOWP_CHAIN)),
                              .nhwc16_chain = !(o && (o->disabled_passes & TC_PASS_LOWP_CHAIN)),
                              .int8_residual_image = !(o && (o->disabled_passes & TC_PASS_INT8_RESIDUAL_IMAGE)),
                              .half_residual_image = !(o && (o->disabled_passes & TC_PASS_HALF_RESIDUAL_IMAGE)),
                              .qdq_elide = !(o && (o->disabled_passes & TC_PASS_QDQ_ELIDE)),
                              .cache_path = o ? o->timing_cache : NULL,
                              .threads = o ? o->threads : 0,
                              .backend = be,
                              .progress = o ? o->progress : NULL,
                              .progress_user_data = o ? o->progress_user_data : NULL};
        const tc__range *pr[TC__MAX_TUNE_PROFILES];
        int np = n_prof < TC__MAX_TUNE_PROFILES ? n_prof : TC__MAX_TUNE_PROFILES;
        for (int p = 0; p < np; p++) pr[p] = profiles[p].ranges;
        st = tc__engine_choose_tactics(g, v->steps, pr, np, &to, v->tuning, &v->required_isa, err);
    }
    for (int k = 0; k < g->n_nodes && st == TC_STATUS_OK; k++) {
        const tc__tune_result *r = &v->tuning[k];
        if (v->steps[k].kind != TC__STEP_COMPUTE || r->n < 1) continue;
        uint64_t t = r->cand[r->winner].min_ns;
        if (t != UINT64_MAX) v->total_ns = v->total_ns > UINT64_MAX - t ? UINT64_MAX : v->total_ns + t;
    }
    return st;
}

tc_status tc__engine_build_plan(const tc__graph *model_graph, const tc_build_options *o, void **bytes, size_t *n_bytes,
                                tc__err *err) {
    int n_prof = o && o->num_profiles > 0 ? o->num_profiles : 1;
    if (o && o->num_profiles > 64) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "at most 64 profiles");
    if (o && o->num_profiles > 0 && o->profiles == NULL)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "num_profiles is %d but profiles is NULL", o->num_profiles);
    const tc__backend *be = tc__backend_find(o ? o->backend : NULL, err);
    if (be == NULL) return err->status;
    tc__graph *g = NULL;
    tc__profile *profiles = calloc((size_t)n_prof, sizeof *profiles);
    tc__step *steps = NULL;
    void *blob = NULL;
    size_t blob_size = 0;
    if (profiles == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    tc_status st = tc__graph_clone(model_graph, &g, err);
    for (int p = 0; p < n_prof && st == TC_STATUS_OK; p++) {
        profiles[p].ranges = calloc((size_t)(g->n_inputs ? g->n_inputs : 1), sizeof(tc__range));
        profiles[p].n_ranges = g->n_inputs;
        if (profiles[p].ranges == NULL) st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        else st = make_ranges(g, o && o->num_profiles > 0 ? &o->profiles[p] : NULL, profiles[p].ranges, err);
        if (st) tc__err_prefix(err, "profile %d: ", p);
    }
    /* With one profile, dims fixed across it become static in the graph, so shape math folds. */
    if (st == TC_STATUS_OK && n_prof == 1)
        for (int k = 0; k < g->n_inputs; k++) {
            const tc__range *r = &profiles[0].ranges[k];
            tc__shape *s = &g->values[r->value].info.shape;
            s->rank = r->rank;
            for (int32_t d = 0; d < r->rank; d++)
                if (r->min[d] == r->max[d]) s->dims[d] = tc__dim_known(r->min[d]);
        }
    if (st == TC_STATUS_OK) st = tc__graph_toposort(g, err);
    if (st == TC_STATUS_OK) st = tc__graph_infer_shapes(g, false, tc__ref_eval, &g->opset, err);
    if (st == TC_STATUS_OK)
        st = tc__passes_run(g, o ? o->disabled_passes : 0, tc__ref_eval, &g->opset, NULL, err);
    const uint32_t reduced = TC_BUILD_INT8 | TC_BUILD_FP16 | TC_BUILD_BF16;
    if (st == TC_STATUS_OK && o && (o->flags & TC_BUILD_INT8_REDUCE_RANGE) && !(o->flags & TC_BUILD_INT8))
        st = tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "TC_BUILD_INT8_REDUCE_RANGE (--int8-reduce-range) needs TC_BUILD_INT8");
    if (st == TC_STATUS_OK && o && (o->flags & (TC_BUILD_INT8 | TC_BUILD_BF16)) && be->mem == TC__MEM_DEVICE)
        st = tc__fail(err, TC_STATUS_UNSUPPORTED, "the %s backend builds FP32 and FP16 plans only so far: --int8 and "
                      "--bf16 are not available on it yet", be->name);
    for (int n = 0; st == TC_STATUS_OK && be->mem == TC__MEM_DEVICE && n < g->n_nodes; n++)
        if (g->nodes[n].guard >= 0)
            st = tc__fail(err, TC_STATUS_UNSUPPORTED, "node '%s' belongs to an If branch decided at run time, which "
                          "only the CPU backend runs so far", g->nodes[n].name);
    if (st == TC_STATUS_OK && o && (o->flags & reduced)) st = check_fp32_layers(model_graph, o, err);
    if (st == TC_STATUS_OK && o && (o->flags & TC_BUILD_INT8)) st = apply_int8(model_graph, g, o, err);
    if (st == TC_STATUS_OK && o && (o->flags & TC_BUILD_FP16)) st = apply_half(g, o, TC__ATTR_FP16, err);
    if (st == TC_STATUS_OK && o && (o->flags & TC_BUILD_BF16)) st = apply_half(g, o, TC__ATTR_BF16, err);
    if (st == TC_STATUS_OK && be->mem == TC__MEM_DEVICE) st = apply_attention(g, o ? o->disabled_passes : 0, err);
    if (st == TC_STATUS_OK && be->mem == TC__MEM_DEVICE) st = apply_embed_layernorm(g, o ? o->disabled_passes : 0, err);
    if (st == TC_STATUS_OK && be->mem == TC__MEM_DEVICE && o && (o->flags & TC_BUILD_FP16)) {
        /* the fused (or the model's own) attention may run on FP16 Tensor Cores: the tuner decides; a MaxPool may
         * pass FP16 NHWC images between FP16 convolutions (exact: the maximum of rounded values is the rounded
         * maximum) */
        tc__pass_ctx pc = {.g = g, .eval = tc__ref_eval, .eval_user = &g->opset, .err = err};
        st = tc__pass_precision_half_op(&pc, TC__ATTR_FP16, "Attention", (const char *const *)o->fp32_layers,
                                        o->num_fp32_layers);
        if (st == TC_STATUS_OK)
            st = tc__pass_precision_half_op(&pc, TC__ATTR_FP16, "MaxPool", (const char *const *)o->fp32_layers,
                                            o->num_fp32_layers);
    }
    /* The graph after the passes, with and without the NCHW16c layout: both are tuned and the one whose
     * chosen tactics take less time in total wins (a whole-graph layout choice made by timing). */
    variant best = {0}, other = {0};
    const bool fixed = o && (o->flags & TC_BUILD_TACTICS_FIXED);
    /* The backend says which layouts to try (the CPU: NCHW16c on AVX-512, NCHW8c on AVX2); without timing
     * (--tactics-fixed) a blocked one is taken when offered. */
    const uint32_t offered = o && (o->disabled_passes & TC_PASS_LAYOUT) ? 0 : be->layouts(has_int8_layers(g), fixed);
    const int64_t block = offered & TC__LAYOUT_NCHW16C  ? TC__LAYOUT_BLOCK
                          : offered & TC__LAYOUT_NCHW8C ? TC__LAYOUT_BLOCK_AVX2
                                                        : 0;
    const bool layout = block != 0;
    if (st == TC_STATUS_OK && layout) {
        tc__graph *g2 = NULL; /* a clone keeps no inferred values: sort and infer it again */
        st = tc__graph_clone(g, &g2, err);
        if (st == TC_STATUS_OK) st = tc__graph_toposort(g2, err);
        if (st == TC_STATUS_OK) st = tc__graph_infer_shapes(g2, false, tc__ref_eval, &g2->opset, err);
        if (st == TC_STATUS_OK) st = make_variant(g2, block, o, be, profiles, n_prof, &other, err);
        else tc__graph_destroy(g2);
    }
    if (st == TC_STATUS_OK && layout && (!other.blocked || fixed)) { /* no blocked step, or no timing */
        best = other;
        memset(&other, 0, sizeof other);
    } else if (st == TC_STATUS_OK) {
        st = make_variant(g, 0, o, be, profiles, n_prof, &best, err);
        g = NULL;
        if (st == TC_STATUS_OK && other.g != NULL && other.total_ns < best.total_ns) {
            variant t = best;
            best = other;
            other = t;
        }
    }
    variant_free(&other);
    if (best.g != NULL) {
        tc__graph_destroy(g);
        g = best.g;
    }
    steps = best.steps;
    tc__tune_result *tuning = best.tuning;
    const uint64_t required_isa = best.required_isa;
    for (int p = 0; p < n_prof && st == TC_STATUS_OK; p++) {
        st = plan_profile(g, steps, &profiles[p], err);
        if (st) tc__err_prefix(err, "profile %d: ", p);
    }
    tc__step_configs configs = {0}; /* the parameter blobs: the chosen configurations */
    if (st == TC_STATUS_OK) {
        const tc__range **ranges = malloc(sizeof *ranges * (size_t)n_prof);
        if (ranges == NULL) st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        for (int p = 0; p < n_prof && ranges != NULL; p++) ranges[p] = profiles[p].ranges;
        if (st == TC_STATUS_OK) st = tc__engine_step_configs(g, steps, tuning, ranges, n_prof, &configs, err);
        free(ranges);
    }
    if (st == TC_STATUS_OK) {
        tc_engine e = {.g = g, .n_steps = g->n_nodes, .steps = steps, .n_profiles = n_prof, .profiles = profiles,
                       .threads = o ? o->threads : 0, .tuning = tuning, .params = configs.params,
                       .param_size = configs.sizes};
        st = tc__engine_blob_write(&e, &blob, &blob_size, err);
    }
    tc__step_configs_free(&configs);
    if (st == TC_STATUS_OK) {
        unsigned char rec[TC__TARGET_RECORD_MAX];
        tc__plan_target_info target = {.backend = be->id, .required_caps = required_isa, .record = rec};
        target.record_size = (uint32_t)be->target_record(rec, sizeof rec);
        st = tc__plan_serialize(g, &target, blob, blob_size, bytes, n_bytes, err);
    }
    free(tuning);
    free(blob);
    free(steps);
    free_profiles(profiles, n_prof);
    tc__graph_destroy(g);
    return st;
}
