/*
 * context.c - an execution context: everything a run needs is allocated in
 * tc_context_create (arena sized for the profile's max shapes, kernel scratch, tensor and
 * kernel-argument tables); shapes are propagated when they change; tc_context_run then only
 * calls kernels on precomputed arguments: no allocation, no lock, no logging.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/context.h"

static tc_status ctx_fail(tc_context *c, tc_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static tc_status ctx_fail(tc_context *c, tc_status st, const char *fmt, ...) {
    c->err.status = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err.msg, sizeof c->err.msg, fmt, ap);
    va_end(ap);
    return st;
}

/* 64-byte aligned memory, not zeroed: every step writes its whole output before it is read. */
void *tc__ctx_alloc64(size_t n) {
    size_t sz = (n + 63) & ~(size_t)63;
    return aligned_alloc(64, sz ? sz : 64);
}

/* The tensor of a node input, or NULL (absent, or not an input of the node). */
static const tc__tensor *input_or_null(const tc__tensor *const *in, int8_t index) { return index >= 0 ? in[index] : NULL; }

void tc_context_destroy(tc_context *c) {
    if (c == NULL) return;
    if (c->device) tc__ctx_device_free(c);
    c->e->backend->free(TC__MEM_HOST, c->arena);
    c->e->backend->free(TC__MEM_HOST, c->scratch.base);
    free(c->tensors);
    free(c->known);
    free(c->unavail);
    free(c->bound_bytes);
    free(c->bound);
    tc__ctx_keep_free(&c->keep);
    free(c->ins);
    free(c->outs);
    free(c->kctx);
    free(c->launch);
    free(c->launch_step);
    free(c->launch_ns);
    if (c->own_exec) c->e->backend->exec_destroy(c->own_exec);
    free(c->step_ns);
    free(c);
}

tc_status tc_context_create(const tc_engine *e, int profile, tc_context **out, tc_error *error) {
    tc__err err = {0};
    if (e == NULL || out == NULL || profile < 0 || profile >= e->n_profiles) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "tc_context_create: bad engine or profile %d", profile);
        tc__err_export(&err, error);
        return err.status;
    }
    *out = NULL;
    const tc__graph *g = e->g;
    const tc__profile *pr = &e->profiles[profile];
    int nv = g->n_values, ns = e->n_steps;
    tc_context *c = calloc(1, sizeof *c);
    if (c == NULL) goto oom;
    c->e = e;
    c->prof = pr;
    const tc__backend *be = e->backend;
    c->arena = be->alloc(TC__MEM_HOST, pr->arena_bytes);
    c->scratch.base = be->alloc(TC__MEM_HOST, pr->scratch_bytes);
    c->scratch.cap = pr->scratch_bytes;
    c->tensors = calloc((size_t)nv + 1, sizeof *c->tensors);
    c->known = calloc((size_t)nv + 1, sizeof *c->known);
    c->unavail = calloc((size_t)nv + 1, sizeof *c->unavail);
    c->bound_bytes = calloc((size_t)nv + 1, sizeof *c->bound_bytes);
    c->bound = calloc((size_t)nv + 1, sizeof *c->bound);
    c->ins = calloc((size_t)ns * TC__CTX_MAX_IN + 1, sizeof *c->ins);
    c->outs = calloc((size_t)ns * TC__CTX_MAX_OUT + 1, sizeof *c->outs);
    c->kctx = calloc((size_t)ns + 1, sizeof *c->kctx);
    /* a device backend's list also uploads each input and downloads each output */
    const size_t n_launch_max = (size_t)ns + (size_t)g->n_inputs + (size_t)g->n_outputs + 1;
    c->launch = calloc(n_launch_max, sizeof *c->launch);
    c->launch_step = calloc(n_launch_max, sizeof *c->launch_step);
    c->launch_ns = calloc(n_launch_max, sizeof *c->launch_ns);
    c->step_ns = calloc((size_t)ns + 1, sizeof *c->step_ns);
    if (!c->arena || !c->scratch.base || !c->tensors || !c->known || !c->unavail || !c->bound_bytes || !c->bound || !c->ins ||
        !c->outs || !c->kctx || !c->launch || !c->launch_step || !c->launch_ns || !c->step_ns)
        goto oom;
    if (be->exec_create(e->threads, &c->own_exec, &err) != TC_STATUS_OK) goto fail;
    c->exec = c->own_exec;
    for (int v = 0; v < nv; v++) {
        const tc__value *val = &g->values[v];
        tc__tensor *t = &c->tensors[v];
        if (val->init) {
            *t = *val->init;
            c->known[v] = true;
        } else if (pr->offset[v] != TC__NOT_IN_ARENA) {
            t->data = c->arena + pr->offset[v];
        }
        t->dtype = val->info.dtype;
        if (val->init) t->dtype = val->init->dtype;
    }
    c->device = be->mem == TC__MEM_DEVICE;
    if (c->device) {
        if (e->dev_weights == NULL) {
            tc__fail(&err, TC_STATUS_INTERNAL, "the engine's weights are not on the device");
            goto fail;
        }
        if (tc__ctx_device_create(c, &err) != TC_STATUS_OK) goto fail;
        /* uploads first: launch k < n_inputs uploads input k */
        for (int k = 0; k < g->n_inputs; k++) c->launch_step[c->n_launch++] = -1;
    }
    /* the tensors the kernels read and write: the host table, or the device view */
    tc__tensor *kt = c->device ? c->dev.tensors : c->tensors;
    for (int k = 0; k < pr->n_ranges; k++) {
        const tc__range *r = &pr->ranges[k];
        tc__tensor *t = &c->tensors[r->value];
        t->rank = r->rank;
        memcpy(t->dims, r->opt, sizeof r->opt);
        int64_t n = tc__numel(t->rank, t->dims);
        t->nbytes = n > 0 ? (size_t)n * tc_dtype_size(t->dtype) : 0;
    }
    for (int k = 0; k < ns; k++) {
        const tc__node *node = &g->nodes[e->steps[k].node];
        if (node->n_in > TC__CTX_MAX_IN || node->n_out > TC__CTX_MAX_OUT) {
            tc__fail(&err, TC_STATUS_UNSUPPORTED, "step '%s' has too many inputs or outputs", node->name);
            goto fail;
        }
        const tc__tensor **in = &c->ins[(size_t)k * TC__CTX_MAX_IN];
        tc__tensor **o = &c->outs[(size_t)k * TC__CTX_MAX_OUT];
        for (int i = 0; i < node->n_in; i++) in[i] = node->in[i] >= 0 ? &kt[node->in[i]] : NULL;
        for (int j = 0; j < node->n_out; j++) o[j] = node->out[j] >= 0 ? &kt[node->out[j]] : NULL;
        const tc__tensor **hin = c->device ? &c->dev.hins[(size_t)k * TC__CTX_MAX_IN] : NULL;
        for (int i = 0; hin && i < node->n_in; i++) hin[i] = node->in[i] >= 0 ? &c->dev.hview[node->in[i]] : NULL;
        const tc__tactic *t = e->tactics ? e->tactics[k] : NULL;
        const bool fused = t && (t->flags & TC__TACTIC_FUSES_EPILOGUE);
        c->kctx[k] = (tc__kernel_ctx){.node_name = node->name,
                                      .op_type = node->op_type,
                                      .opset = g->opset,
                                      .attrs = &node->attrs,
                                      .n_in = node->n_op_in,
                                      .in = in,
                                      .n_out = node->n_out,
                                      .out = o,
                                      .err = &c->run_err,
                                      .scratch = c->device ? &c->dev.scratch : &c->scratch, /* device scratch for device kernels */
                                      .epi = fused ? &node->epi : NULL,
                                      .bias = fused ? input_or_null(in, node->epi.bias_input) : NULL,
                                      .residual = fused ? input_or_null(in, node->epi.residual_input) : NULL,
                                      .exec = t ? c->exec : NULL,
                                      .host_in = hin,
                                      .config = e->params ? e->params[(size_t)profile * (size_t)ns + (size_t)k] : NULL};
        if (e->steps[k].kind != TC__STEP_COMPUTE) continue;
        if (t == NULL) { /* (the load resolves every compute step's tactic) */
            tc__fail(&err, TC_STATUS_UNSUPPORTED, "step '%s': no kernel for %s", node->name, node->op_type);
            goto fail;
        }
        const tc__kernel_fn fn = t->run;
        const bool post = !fused && !tc__epilogue_is_none(&node->epi);
        if (node->guard >= 0 && c->tensors[node->in[node->guard]].dtype != TC_DTYPE_BOOL) {
            tc__fail(&err, TC_STATUS_CORRUPT_FILE, "step '%s': its guard '%s' is not a bool", node->name,
                     g->values[node->in[node->guard]].name);
            goto fail;
        }
        if (c->device && node->guard >= 0) {
            tc__fail(&err, TC_STATUS_UNSUPPORTED, "step '%s' belongs to an If branch decided at run time, which only "
                     "the CPU backend runs so far", node->name);
            goto fail;
        }
        if (c->device && (t == NULL || post)) {
            tc__fail(&err, TC_STATUS_CORRUPT_FILE, "step '%s' has no %s kernel that applies its whole epilogue",
                     node->name, be->name);
            goto fail;
        }
        c->launch_step[c->n_launch] = k;
        c->launch[c->n_launch++] = (tc__launch){.fn = fn, .kc = &c->kctx[k], .post = post ? &node->epi : NULL,
                                                .post_bias = post ? input_or_null(in, node->epi.bias_input) : NULL,
                                                .post_residual = post ? input_or_null(in, node->epi.residual_input) : NULL,
                                                .guard = node->guard >= 0 ? &c->tensors[node->in[node->guard]] : NULL};
    }
    if (c->device) {
        /* downloads last: the launches after the steps download output k */
        const int first_out = c->n_launch;
        for (int k = 0; k < g->n_outputs; k++) c->launch_step[c->n_launch++] = -1;
        tc__ctx_device_launches(c, c->launch, c->launch + first_out);
    }
    c->dirty = true;
    *out = c;
    return TC_STATUS_OK;
oom:
    tc__fail(&err, TC_STATUS_OUT_OF_MEMORY, "out of memory creating a context");
fail:
    tc_context_destroy(c);
    tc__err_export(&err, error);
    return err.status;
}

const char *tc_context_error(const tc_context *c) { return c ? c->err.msg : "no context"; }

/* Index of the graph input named name, or -1. */
static int input_index(const tc_context *c, const char *name) {
    const tc__graph *g = c->e->g;
    for (int k = 0; k < g->n_inputs; k++)
        if (strcmp(g->values[g->inputs[k]].name, name) == 0) return k;
    return -1;
}

tc_status tc_context_set_input_shape(tc_context *c, const char *name, int32_t rank, const int64_t *dims) {
    if (c == NULL) return TC_STATUS_INVALID_ARGUMENT;
    memset(&c->err, 0, sizeof c->err);
    if (name == NULL || (rank > 0 && dims == NULL)) return ctx_fail(c, TC_STATUS_INVALID_ARGUMENT, "NULL argument");
    int k = input_index(c, name);
    if (k < 0) return ctx_fail(c, TC_STATUS_INVALID_ARGUMENT, "the engine has no input named '%s'", name);
    const tc__range *r = &c->prof->ranges[k];
    if (rank != r->rank)
        return ctx_fail(c, TC_STATUS_INVALID_ARGUMENT, "input '%s' has rank %d, got %d", name, (int)r->rank, (int)rank);
    for (int32_t d = 0; d < rank; d++)
        if (dims[d] < r->min[d] || dims[d] > r->max[d])
            return ctx_fail(c, TC_STATUS_INVALID_ARGUMENT,
                            "input '%s' dim %d is %lld, outside the profile's range [%lld, %lld]", name, (int)d,
                            (long long)dims[d], (long long)r->min[d], (long long)r->max[d]);
    tc__tensor *t = &c->tensors[r->value];
    /* the same shape again changes nothing (a device backend keeps its captured graph) */
    if (t->rank == rank && (rank == 0 || memcmp(t->dims, dims, sizeof(int64_t) * (size_t)rank) == 0))
        return TC_STATUS_OK;
    t->rank = rank;
    for (int32_t d = 0; d < rank; d++) t->dims[d] = dims[d];
    t->nbytes = (size_t)tc__numel(rank, dims) * tc_dtype_size(t->dtype);
    c->dirty = true;
    return TC_STATUS_OK;
}

static int32_t io_value(const tc_context *c, const char *name, bool *is_input) {
    const tc__graph *g = c->e->g;
    for (int k = 0; k < g->n_inputs; k++)
        if (strcmp(g->values[g->inputs[k]].name, name) == 0) {
            *is_input = true;
            return g->inputs[k];
        }
    for (int k = 0; k < g->n_outputs; k++)
        if (strcmp(g->values[g->outputs[k]].name, name) == 0) {
            *is_input = false;
            return g->outputs[k];
        }
    return -1;
}

tc_status tc_context_pinned_buffer(tc_context *c, const char *name, void **data, size_t *bytes) {
    if (c == NULL) return TC_STATUS_INVALID_ARGUMENT;
    memset(&c->err, 0, sizeof c->err);
    if (name == NULL || data == NULL || bytes == NULL) return ctx_fail(c, TC_STATUS_INVALID_ARGUMENT, "NULL argument");
    bool is_input;
    const int32_t v = io_value(c, name, &is_input);
    if (v < 0) return ctx_fail(c, TC_STATUS_INVALID_ARGUMENT, "the engine has no input or output named '%s'", name);
    if (!c->device)
        return ctx_fail(c, TC_STATUS_UNSUPPORTED, "the %s backend runs on host memory: bind any buffer",
                        c->e->backend->name);
    tc__err err = {0};
    const tc_status st = tc__ctx_device_pinned(c, v, data, bytes, &err);
    return st ? ctx_fail(c, st, "%s", err.msg) : TC_STATUS_OK;
}

tc_status tc_context_set_tensor(tc_context *c, const char *name, void *data, size_t bytes) {
    if (c == NULL) return TC_STATUS_INVALID_ARGUMENT;
    memset(&c->err, 0, sizeof c->err);
    if (name == NULL || data == NULL) return ctx_fail(c, TC_STATUS_INVALID_ARGUMENT, "NULL argument");
    bool is_input;
    int32_t v = io_value(c, name, &is_input);
    if (v < 0) return ctx_fail(c, TC_STATUS_INVALID_ARGUMENT, "the engine has no input or output named '%s'", name);
    if (!is_input && c->e->g->values[v].init != NULL)
        return ctx_fail(c, TC_STATUS_INVALID_ARGUMENT, "output '%s' is a constant and cannot be bound", name);
    c->tensors[v].data = data;
    c->bound_bytes[v] = bytes;
    c->bound[v] = true;
    return TC_STATUS_OK;
}

tc_status tc_context_set_input(tc_context *c, const char *name, const tc_tensor *tensor) {
    if (c == NULL) return TC_STATUS_INVALID_ARGUMENT;
    memset(&c->err, 0, sizeof c->err);
    if (name == NULL || tensor == NULL) return ctx_fail(c, TC_STATUS_INVALID_ARGUMENT, "NULL argument");
    int k = input_index(c, name);
    if (k < 0) return ctx_fail(c, TC_STATUS_INVALID_ARGUMENT, "the engine has no input named '%s'", name);
    const tc__value *v = &c->e->g->values[c->e->g->inputs[k]];
    tc__err err = {0};
    if (tc__check_input_dtype(v->name, v->info.dtype, tensor->dtype, &err) != TC_STATUS_OK)
        return ctx_fail(c, err.status, "%s", err.msg);
    int64_t n = tc__numel(tensor->rank, tensor->dims);
    if (n < 0 || tensor->nbytes != (size_t)n * tc_dtype_size(tensor->dtype))
        return ctx_fail(c, TC_STATUS_INVALID_ARGUMENT, "input '%s': %zu bytes do not hold its %s shape", name,
                        tensor->nbytes, tc_dtype_name(tensor->dtype));
    if (tensor->data == NULL) return ctx_fail(c, TC_STATUS_INVALID_ARGUMENT, "input '%s' has no data", name);
    tc_status st = tc_context_set_input_shape(c, name, tensor->rank, tensor->dims);
    if (st) return st;
    return tc_context_set_tensor(c, name, tensor->data, tensor->nbytes);
}

static tc_status reshape(tc_context *c) {
    const tc__graph *g = c->e->g;
    for (int v = 0; v < g->n_values; v++) c->known[v] = g->values[v].init != NULL;
    tc__shape_state s = {.tensors = c->tensors, .known = c->known, .capacity = c->prof->capacity,
                         .alloc_shape_values = false, .owned = NULL, .scratch = &c->scratch, .unavail = c->unavail};
    tc__err err = {0};
    tc_status st = tc__engine_propagate(g, c->e->steps, c->e->n_steps, &s, &err);
    for (int i = 0; st == TC_STATUS_OK && i < c->n_launch; i++) { /* steps of If branches that cannot run now */
        const int k = c->launch_step[i];
        const tc__node *node = k >= 0 ? &g->nodes[c->e->steps[k].node] : NULL;
        c->launch[i].unrunnable = false;
        for (int o = 0; node && o < node->n_out; o++)
            if (node->out[o] >= 0 && c->unavail[node->out[o]]) c->launch[i].unrunnable = true;
    }
    if (st == TC_STATUS_OK && c->device) st = tc__ctx_device_sync(c, &err);
    if (st) return ctx_fail(c, st, "%s", err.msg);
    c->dirty = false;
    return TC_STATUS_OK;
}

tc_status tc_context_tensor(tc_context *c, const char *name, tc_tensor *tensor) {
    if (c == NULL || name == NULL || tensor == NULL) return TC_STATUS_INVALID_ARGUMENT;
    memset(&c->err, 0, sizeof c->err);
    bool is_input;
    int32_t v = io_value(c, name, &is_input);
    const bool io = v >= 0;
    if (!io) v = tc__graph_find_value(c->e->g, name);
    if (v < 0)
        return ctx_fail(c, TC_STATUS_INVALID_ARGUMENT,
                        "the engine has no tensor named '%s' (tc_engine_step_info names each step's output; a "
                        "tensor of the model that the optimizer fused away has none)", name);
    if (c->dirty) {
        tc_status st = reshape(c);
        if (st) return st;
    }
    if (!io) return tc__ctx_keep_tensor(c, v, tensor);
    *tensor = c->tensors[v];
    return TC_STATUS_OK;
}

tc_status tc_context_run(tc_context *c) {
    if (c == NULL) return TC_STATUS_INVALID_ARGUMENT;
    memset(&c->err, 0, sizeof c->err);
    if (c->dirty) {
        tc_status st = reshape(c);
        if (st) return st;
    }
    const tc_engine *e = c->e;
    const tc__graph *g = e->g;
    for (int k = 0; k < g->n_inputs; k++) {
        int32_t v = g->inputs[k];
        const tc__tensor *t = &c->tensors[v];
        if (t->data == NULL)
            return ctx_fail(c, TC_STATUS_INVALID_ARGUMENT, "input '%s' is not bound (tc_context_set_tensor)",
                            g->values[v].name);
        if (c->bound_bytes[v] < t->nbytes)
            return ctx_fail(c, TC_STATUS_INVALID_ARGUMENT, "input '%s' needs %zu bytes, the bound buffer has %zu",
                            g->values[v].name, t->nbytes, c->bound_bytes[v]);
    }
    for (int k = 0; k < g->n_outputs; k++) {
        int32_t v = g->outputs[k];
        if (c->bound_bytes[v] != 0 && c->bound_bytes[v] < c->tensors[v].nbytes)
            return ctx_fail(c, TC_STATUS_INVALID_ARGUMENT, "output '%s' needs %zu bytes, the bound buffer has %zu",
                            g->values[v].name, c->tensors[v].nbytes, c->bound_bytes[v]);
    }
    int failed = -1;
    if (c->device) tc__ctx_device_stage_in(c);
    tc_status st = e->backend->run(c->exec, c->launch, c->n_launch, c->profiling ? c->launch_ns : NULL, &failed);
    if (st == TC_STATUS_OK && c->device) tc__ctx_device_stage_out(c);
    if (st != TC_STATUS_OK) {
        const tc__kernel_ctx *kc = failed >= 0 && failed < c->n_launch ? c->launch[failed].kc : NULL;
        return ctx_fail(c, st, "step '%s' (%s): %s", kc ? kc->node_name : "?", kc ? kc->op_type : "?",
                        c->run_err.msg[0] ? c->run_err.msg : tc_status_str(st));
    }
    if (c->profiling)
        for (int i = 0; i < c->n_launch; i++)
            if (c->launch_step[i] >= 0) c->step_ns[c->launch_step[i]] = c->launch_ns[i];
    return TC_STATUS_OK;
}

int tc_context_threads(const tc_context *c) { return c ? c->e->backend->exec_threads(c->exec) : 0; }

/* Points the context's kernels at exec; own (or NULL) becomes the handle the context owns. */
static void use_exec(tc_context *c, void *exec, void *own) {
    for (int k = 0; k < c->e->n_steps; k++)
        if (c->kctx[k].exec) c->kctx[k].exec = exec;
    if (c->own_exec) c->e->backend->exec_destroy(c->own_exec);
    c->dirty = true; /* a device backend's new stream has no staged shape values yet */
    c->exec = exec;
    c->own_exec = own;
}

tc_status tc_context_set_threads(tc_context *c, int threads) {
    if (c == NULL || threads < 0 || threads > 4096) return TC_STATUS_INVALID_ARGUMENT;
    void *exec = NULL;
    tc__err err = {0};
    if (c->e->backend->exec_create(threads, &exec, &err) != TC_STATUS_OK) return ctx_fail(c, err.status, "%s", err.msg);
    use_exec(c, exec, exec);
    return TC_STATUS_OK;
}

/* A CPU thread pool shared by contexts: the CPU backend's execution handle. */
struct tc_thread_pool {
    void *exec;
};

tc_status tc_thread_pool_create(int threads, tc_thread_pool **out, tc_error *error) {
    tc__err err = {0};
    if (out == NULL || threads < 0 || threads > 4096) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "tc_thread_pool_create: threads must be 0..4096 (got %d)", threads);
        tc__err_export(&err, error);
        return err.status;
    }
    *out = NULL;
    tc_thread_pool *p = calloc(1, sizeof *p);
    if (p == NULL) tc__fail(&err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    else if (tc__backend_cpu.exec_create(threads, &p->exec, &err) != TC_STATUS_OK) p->exec = NULL;
    if (p == NULL || p->exec == NULL) {
        free(p);
        tc__err_export(&err, error);
        return err.status;
    }
    *out = p;
    return TC_STATUS_OK;
}

void tc_thread_pool_destroy(tc_thread_pool *p) {
    if (p == NULL) return;
    tc__backend_cpu.exec_destroy(p->exec);
    free(p);
}

int tc_thread_pool_threads(const tc_thread_pool *p) { return p ? tc__backend_cpu.exec_threads(p->exec) : 0; }

tc_status tc_context_set_thread_pool(tc_context *c, tc_thread_pool *p) {
    if (c == NULL || p == NULL) return TC_STATUS_INVALID_ARGUMENT;
    if (c->e->backend != &tc__backend_cpu)
        return ctx_fail(c, TC_STATUS_INVALID_ARGUMENT, "a thread pool serves CPU contexts; this engine runs on %s",
                        c->e->backend->name);
    use_exec(c, p->exec, NULL);
    return TC_STATUS_OK;
}

tc_status tc_context_set_profiling(tc_context *c, int enable) {
    if (c == NULL) return TC_STATUS_INVALID_ARGUMENT;
    c->profiling = enable != 0;
    memset(c->step_ns, 0, sizeof(uint64_t) * (size_t)c->e->n_steps);
    return TC_STATUS_OK;
}

tc_status tc_context_step_times(const tc_context *c, uint64_t *ns, int count) {
    if (c == NULL || ns == NULL || count < 0) return TC_STATUS_INVALID_ARGUMENT;
    for (int k = 0; k < count && k < c->e->n_steps; k++) ns[k] = c->step_ns[k];
    return TC_STATUS_OK;
}
