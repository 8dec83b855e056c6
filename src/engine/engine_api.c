/* engine_api.c - public engine calls: build, save, load (mmap), destroy and introspection. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/layout.h"
#include "core/quant_attr.h"
#include "engine/engine.h"
#include "engine/engine_tactics.h"
#include "engine/model.h"
#include "engine/plan_format.h"
#include "backends/tactic.h"

static tc_status export_fail(tc__err *err, tc_error *error) {
    tc__err_export(err, error);
    return err->status ? err->status : TC_STATUS_INTERNAL;
}

void tc_engine_destroy(tc_engine *e) {
    if (e == NULL) return;
    if (e->backend) tc__engine_device_free(e);
    tc__graph_destroy(e->g);
    for (int p = 0; e->profiles && p < e->n_profiles; p++) {
        free(e->profiles[p].ranges);
        free(e->profiles[p].offset);
        free(e->profiles[p].capacity);
    }
    free(e->profiles);
    free(e->steps);
    free(e->tuning);
    free(e->tactics);
    free(e->params);
    free(e->param_size);
    if (e->step_ops)
        for (int k = 0; k < e->n_steps; k++) free(e->step_ops[k]);
    free(e->step_ops);
    free(e->node_branch);
    free(e->node_depth);
    if (e->mapped) munmap(e->bytes, e->n_bytes);
    else free(e->bytes);
    free(e);
}

/* "Conv+BatchNormalization+Relu": the node's op followed by what was folded or fused into it. */
static char *describe_ops(const tc__node *n) {
    size_t a = strlen(n->op_type), b = strlen(n->fused);
    char *s = malloc(a + b + 2);
    if (s == NULL) return NULL;
    memcpy(s, n->op_type, a);
    if (b) {
        s[a] = '+';
        memcpy(s + a + 1, n->fused, b + 1);
    } else {
        s[a] = '\0';
    }
    return s;
}

/* The parameter blobs of step k (one per profile): a tactic's configuration of exactly its config_bytes, which its
 * check_config accepts; nothing for tactics without configurations (the reference kernels included). An empty blob
 * for a tactic with configurations is its default (ctx->config NULL): plans built before it had configurations. */
static tc_status check_params(const tc_engine *e, int k, tc__err *err) {
    const tc__tactic *t = e->tactics[k];
    const uint32_t want = t ? t->config_bytes : 0;
    const tc__node *n = &e->g->nodes[e->steps[k].node];
    for (int p = 0; p < e->n_profiles; p++) {
        const size_t i = (size_t)p * (size_t)e->n_steps + (size_t)k;
        const uint32_t got = e->param_size ? e->param_size[i] : 0;
        if (got != want && got != 0)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan step '%s' (tactic %s) has a %u-byte configuration for "
                            "profile %d, the tactic takes %u", n->name, e->steps[k].tactic, got, p, want);
        if (got > 0 && t->check_config != NULL) {
            tc__err cerr = {0};
            if (!t->check_config(e->params[i], &cerr))
                return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan step '%s' (tactic %s), profile %d: bad configuration: "
                                "%s", n->name, e->steps[k].tactic, p, cerr.msg);
        }
    }
    return TC_STATUS_OK;
}

/* True for an initializer holding fewer bytes than its dims need: a tactic's packed weight. */
static bool is_packed(const tc__tensor *t) {
    return t != NULL && t->nbytes != (uint64_t)tc__tensor_numel(t) * tc_dtype_size(t->dtype);
}

/* Packed initializers are read by exactly one input of one compute step, whose tactic packs that input into exactly
 * those bytes (at profile 0's opt shapes); no other step reads them and no graph output is one. A plan is input from
 * outside: a kernel must never read past a packed buffer. */
static tc_status check_packed(const tc_engine *e, tc__err *err) {
    const tc__graph *g = e->g;
    bool any = false;
    for (int v = 0; v < g->n_values && !any; v++) any = is_packed(g->values[v].init);
    if (!any) return TC_STATUS_OK;
    for (int k = 0; k < g->n_outputs; k++)
        if (is_packed(g->values[g->outputs[k]].init))
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan output '%s' is a packed weight",
                            g->values[g->outputs[k]].name);
    int *readers = calloc((size_t)g->n_values + 1, sizeof *readers);
    if (readers == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    tc__shapes s;
    memset(&s, 0, sizeof s);
    tc_status st = tc__shapes_at(g, e->steps, e->profiles[0].ranges, 1, &s, err);
    for (int k = 0; k < e->n_steps && st == TC_STATUS_OK; k++) {
        const tc__node *node = &g->nodes[e->steps[k].node];
        const tc__tactic *t = e->tactics[k];
        tc__desc_store ds;
        bool built = false;
        for (int i = 0; i < node->n_in && st == TC_STATUS_OK; i++) {
            const int32_t v = node->in[i];
            if (v < 0 || !is_packed(g->values[v].init)) continue;
            readers[v]++;
            if (!built && t != NULL) tc__desc_build_packed(g, node, &s, &ds), built = true;
            const bool ok = e->steps[k].kind == TC__STEP_COMPUTE && t != NULL && i < node->n_op_in &&
                            t->packs_input != NULL && t->packs_input(&ds.d, i) && t->packed_bytes != NULL &&
                            t->packed_bytes(&ds.d, i) == g->values[v].init->nbytes;
            if (!ok)
                st = tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan step '%s' (tactic %s) reads '%s' as input %d, a packed "
                              "weight of %zu bytes that its tactic does not write", node->name, e->steps[k].tactic,
                              g->values[v].name, i, g->values[v].init->nbytes);
        }
    }
    for (int v = 0; v < g->n_values && st == TC_STATUS_OK; v++)
        if (is_packed(g->values[v].init) && readers[v] != 1)
            st = tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan packed weight '%s' is read by %d step inputs, not one",
                          g->values[v].name, readers[v]);
    tc__shapes_free(&s);
    free(readers);
    return st;
}

tc_status tc__engine_from_plan(void *bytes, size_t n_bytes, bool mapped, uint32_t plan_flags, tc_engine **out,
                               tc__err *err) {
    *out = NULL;
    tc_engine *e = calloc(1, sizeof *e);
    if (e == NULL) {
        if (mapped) munmap(bytes, n_bytes);
        else free(bytes);
        return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    e->bytes = bytes;
    e->n_bytes = n_bytes;
    e->mapped = mapped;
    const void *blob = NULL;
    size_t blob_size = 0;
    tc__plan_target_info target;
    tc_status st = tc__plan_deserialize(bytes, n_bytes, plan_flags, &e->g, &target, &blob, &blob_size, err);
    if (st == TC_STATUS_OK && (e->backend = tc__backend_get(target.backend)) == NULL)
        st = tc__fail(err, TC_STATUS_UNSUPPORTED, "plan was built for the %s backend, which this build does not have",
                      tc__backend_name(target.backend));
    if (st == TC_STATUS_OK) {
        e->required_caps = target.required_caps;
        e->target_size = target.record_size;
        memcpy(e->target, target.record, target.record_size);
        st = tc__engine_blob_read(e, blob, blob_size, err);
    }
    if (st == TC_STATUS_OK) {
        if (e->n_steps != e->g->n_nodes) st = tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan has %d steps for %d nodes", e->n_steps, e->g->n_nodes);
        for (int n = 0; n < e->g->n_nodes && st == TC_STATUS_OK; n++)
            if (e->g->nodes[n].schema == NULL)
                st = tc__fail(err, TC_STATUS_UNSUPPORTED, "plan step '%s' uses op %s, which this build does not support",
                              e->g->nodes[n].name, e->g->nodes[n].op_type);
    }
    if (st == TC_STATUS_OK) {
        e->tactics = calloc((size_t)(e->n_steps ? e->n_steps : 1), sizeof *e->tactics);
        if (e->tactics == NULL) st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        for (int k = 0; k < e->n_steps && st == TC_STATUS_OK; k++) {
            const tc__step *s = &e->steps[k];
            const tc__node *n = &e->g->nodes[s->node];
            if (s->kind == TC__STEP_COMPUTE) {
                const tc__backend *be = tc__backend_get(s->backend);
                if (be == NULL) {
                    st = tc__fail(err, TC_STATUS_UNSUPPORTED, "plan step '%s' runs on the %s backend, which this build "
                                  "does not have", n->name, tc__backend_name(s->backend));
                    break;
                }
                e->tactics[k] = tc__tactic_find(be, s->tactic, n->op_type);
                if (e->tactics[k] == NULL)
                    st = tc__fail(err, TC_STATUS_UNSUPPORTED, "plan step '%s' uses tactic '%s', which this build does "
                                  "not have: rebuild the plan", n->name, s->tactic);
                else if ((e->tactics[k]->caps & ~be->caps()) != 0)
                    st = tc__fail(err, TC_STATUS_UNSUPPORTED_HARDWARE, "plan step '%s' uses tactic '%s', which needs "
                                  "%s capabilities this machine (or TAILCUT_MAX_ISA) does not allow: rebuild the plan",
                                  n->name, s->tactic, be->name);
            }
            if (st == TC_STATUS_OK) st = check_params(e, k, err);
        }
    }
    if (st == TC_STATUS_OK) st = check_packed(e, err);
    if (st == TC_STATUS_OK && e->backend->mem == TC__MEM_DEVICE) st = tc__engine_device_check(e, err);
    if (st == TC_STATUS_OK && e->backend->mem == TC__MEM_DEVICE) st = tc__engine_upload(e, err);
    if (st == TC_STATUS_OK) {
        e->step_ops = calloc((size_t)(e->n_steps ? e->n_steps : 1), sizeof(char *));
        if (e->step_ops == NULL) st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        for (int k = 0; k < e->n_steps && st == TC_STATUS_OK; k++)
            if ((e->step_ops[k] = describe_ops(&e->g->nodes[e->steps[k].node])) == NULL)
                st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        for (int v = 0; v < e->g->n_values; v++)
            if (e->g->values[v].init) e->weight_bytes += e->g->values[v].init->nbytes;
    }
    if (st == TC_STATUS_OK) {
        e->node_branch = calloc((size_t)e->g->n_nodes + 1, sizeof *e->node_branch);
        e->node_depth = calloc((size_t)e->g->n_nodes + 1, sizeof *e->node_depth);
        if (e->node_branch == NULL || e->node_depth == NULL) st = tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        else st = tc__branch_labels(e->g, e->node_branch, e->node_depth, err);
    }
    if (st != TC_STATUS_OK) {
        tc_engine_destroy(e);
        return st;
    }
    *out = e;
    return TC_STATUS_OK;
}

tc_status tc_engine_build(const tc_model *model, const tc_build_options *options, tc_engine **engine, tc_error *error) {
    tc__err err = {0};
    if (model == NULL || engine == NULL) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "tc_engine_build: NULL argument");
        return export_fail(&err, error);
    }
    *engine = NULL;
    /* A caller built against an older header passes a shorter struct: the fields it lacks are zero. */
    const size_t min_size = offsetof(tc_build_options, flags) + sizeof(uint32_t);
    if (options != NULL && (options->struct_size < min_size || options->struct_size > sizeof(tc_build_options))) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "tc_build_options.struct_size is %u, expected %zu..%zu",
                 options->struct_size, min_size, sizeof(tc_build_options));
        return export_fail(&err, error);
    }
    tc_build_options full;
    if (options != NULL) {
        memset(&full, 0, sizeof full);
        memcpy(&full, options, options->struct_size);
        full.struct_size = sizeof full;
        options = &full;
    }
    if (!model->runnable) {
        tc__fail(&err, TC_STATUS_UNSUPPORTED, "the model has unsupported nodes (see tailcut inspect)");
        return export_fail(&err, error);
    }
    void *bytes = NULL;
    size_t n = 0;
    tc_status st = tc__engine_build_plan(model->graph, options, &bytes, &n, &err);
    if (st == TC_STATUS_OK) st = tc__engine_from_plan(bytes, n, false, 0, engine, &err);
    if (st) return export_fail(&err, error);
    return TC_STATUS_OK;
}

tc_status tc_engine_save(const tc_engine *engine, const char *path, tc_error *error) {
    tc__err err = {0};
    if (engine == NULL || path == NULL) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "tc_engine_save: NULL argument");
        return export_fail(&err, error);
    }
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        tc__fail(&err, TC_STATUS_IO_ERROR, "cannot write '%s': %s", path, strerror(errno));
        return export_fail(&err, error);
    }
    bool ok = fwrite(engine->bytes, 1, engine->n_bytes, f) == engine->n_bytes;
    ok = (fclose(f) == 0) && ok;
    if (!ok) {
        tc__fail(&err, TC_STATUS_IO_ERROR, "error writing '%s'", path);
        return export_fail(&err, error);
    }
    return TC_STATUS_OK;
}

tc_status tc_engine_load(const char *path, tc_engine **engine, tc_error *error) {
    tc__err err = {0};
    if (path == NULL || engine == NULL) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "tc_engine_load: NULL argument");
        return export_fail(&err, error);
    }
    *engine = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        tc__fail(&err, TC_STATUS_IO_ERROR, "cannot open '%s': %s", path, strerror(errno));
        return export_fail(&err, error);
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0) {
        close(fd);
        tc__fail(&err, TC_STATUS_CORRUPT_FILE, "'%s' is not a plan file (empty or not a regular file)", path);
        return export_fail(&err, error);
    }
    size_t n = (size_t)sb.st_size;
    void *p = mmap(NULL, n, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        tc__fail(&err, TC_STATUS_IO_ERROR, "cannot map '%s': %s", path, strerror(errno));
        return export_fail(&err, error);
    }
    tc_status st = tc__engine_from_plan(p, n, true, 0, engine, &err);
    if (st) {
        tc__err_prefix(&err, "%s: ", path);
        return export_fail(&err, error);
    }
    return TC_STATUS_OK;
}

int tc_engine_num_inputs(const tc_engine *e) { return e ? e->g->n_inputs : 0; }
int tc_engine_num_outputs(const tc_engine *e) { return e ? e->g->n_outputs : 0; }


tc_status tc_engine_input_info(const tc_engine *e, int index, tc_io_info *info) {
    if (!e || !info || index < 0 || index >= e->g->n_inputs) return TC_STATUS_INVALID_ARGUMENT;
    tc__graph_io_info(e->g, e->g->inputs[index], info);
    return TC_STATUS_OK;
}

tc_status tc_engine_output_info(const tc_engine *e, int index, tc_io_info *info) {
    if (!e || !info || index < 0 || index >= e->g->n_outputs) return TC_STATUS_INVALID_ARGUMENT;
    tc__graph_io_info(e->g, e->g->outputs[index], info);
    return TC_STATUS_OK;
}

int tc_engine_num_profiles(const tc_engine *e) { return e ? e->n_profiles : 0; }

tc_status tc_engine_profile_range(const tc_engine *e, int profile, int input, tc_input_range *range) {
    if (!e || !range || profile < 0 || profile >= e->n_profiles || input < 0 || input >= e->g->n_inputs)
        return TC_STATUS_INVALID_ARGUMENT;
    const tc__range *r = &e->profiles[profile].ranges[input];
    memset(range, 0, sizeof *range);
    range->name = e->g->values[r->value].name;
    range->rank = r->rank;
    memcpy(range->min, r->min, sizeof r->min);
    memcpy(range->opt, r->opt, sizeof r->opt);
    memcpy(range->max, r->max, sizeof r->max);
    return TC_STATUS_OK;
}

int tc_engine_num_steps(const tc_engine *e) { return e ? e->n_steps : 0; }

tc_status tc_engine_step_info(const tc_engine *e, int index, tc_step_info *info) {
    if (!e || !info || index < 0 || index >= e->n_steps) return TC_STATUS_INVALID_ARGUMENT;
    const tc__step *s = &e->steps[index];
    info->name = e->g->nodes[s->node].name;
    info->ops = e->step_ops[index];
    info->tactic = s->kind == TC__STEP_VIEW ? "view" : s->tactic;
    info->precision = s->precision;
    info->backend = tc__backend_name(s->backend);
    info->runs_at_reshape = s->kind == TC__STEP_SHAPE;
    const tc__node *n = &e->g->nodes[s->node];
    info->is_reorder = strcmp(n->op_type, "Identity") == 0 && tc__layout_in_blocked(&n->attrs, 0) &&
                       !tc__layout_out_blocked(&n->attrs);
    const bool b8 = tc__layout_block(&n->attrs) == TC__LAYOUT_BLOCK_AVX2;
    info->layout = info->is_reorder                                ? (b8 ? "nchw8c->nchw" : "nchw16c->nchw")
                   : tc__attr_has(&n->attrs, TC__ATTR_INT8_OUT_IMAGE) || tc__attr_has(&n->attrs, TC__ATTR_HALF_OUT_IMAGE)
                       ? tc__lowp_chain_label(&n->attrs, s->tactic)
                   : tc__attr_has(&n->attrs, TC__ATTR_NHWC16_OUT)   ? "nhwc16"
                   : tc__attr_int(&n->attrs, TC__ATTR_ROW16_OUT, 0) == 1 ? "row16"
                   : tc__layout_out_blocked(&n->attrs)               ? (b8 ? "nchw8c" : "nchw16c")
                                                                      : "";
    info->branch = e->node_branch[s->node];
    info->branch_depth = e->node_depth[s->node];
    info->output_shape[0] = '\0';
    info->output = "";
    if (n->n_out > 0 && n->out[0] >= 0) {
        tc__graph_shape_str(e->g, &e->g->values[n->out[0]].info.shape, info->output_shape, sizeof info->output_shape);
        info->output = e->g->values[n->out[0]].name;
    }
    return TC_STATUS_OK;
}

int tc_engine_step_num_candidates(const tc_engine *e, int step) {
    return e && step >= 0 && step < e->n_steps && e->tuning ? e->tuning[step].n : 0;
}

tc_status tc_engine_step_candidate(const tc_engine *e, int step, int index, tc_tactic_timing *t) {
    if (!e || !t || step < 0 || step >= e->n_steps || !e->tuning || index < 0 || index >= e->tuning[step].n)
        return TC_STATUS_INVALID_ARGUMENT;
    const tc__tune_entry *c = &e->tuning[step].cand[index];
    t->name = c->name;
    t->median_ms = c->median_ns == UINT64_MAX ? -1.0 : (double)c->median_ns / 1e6;
    t->max_ms = c->max_ns == UINT64_MAX ? -1.0 : (double)c->max_ns / 1e6;
    t->chosen = index == e->tuning[step].winner;
    return TC_STATUS_OK;
}

int tc_engine_threads(const tc_engine *e) { return e ? e->threads : 0; }

tc_status tc_engine_target_info(const tc_engine *e, tc_target_info *info) {
    if (!e || !info) return TC_STATUS_INVALID_ARGUMENT;
    memset(info, 0, sizeof *info);
    info->backend = e->backend->name;
    info->required_caps = e->required_caps;
    e->backend->target_describe(e->target, e->target_size, info->target, sizeof info->target);
    return TC_STATUS_OK;
}

int tc_engine_step_num_rejected(const tc_engine *e, int step) {
    return e && step >= 0 && step < e->n_steps && e->tuning ? e->tuning[step].n_rejected : 0;
}

tc_status tc_engine_step_rejected(const tc_engine *e, int step, int index, tc_tactic_rejection *r) {
    if (!e || !r || step < 0 || step >= e->n_steps || !e->tuning || index < 0 || index >= e->tuning[step].n_rejected)
        return TC_STATUS_INVALID_ARGUMENT;
    r->name = e->tuning[step].rejected[index].name;
    r->reason = e->tuning[step].rejected[index].why;
    return TC_STATUS_OK;
}

tc_status tc_engine_memory_info(const tc_engine *e, int profile, tc_memory_info *info) {
    if (!e || !info || profile < 0 || profile >= e->n_profiles) return TC_STATUS_INVALID_ARGUMENT;
    info->arena_bytes = e->profiles[profile].arena_bytes;
    info->naive_bytes = e->profiles[profile].naive_bytes;
    info->scratch_bytes = e->profiles[profile].scratch_bytes;
    info->weight_bytes = e->weight_bytes;
    return TC_STATUS_OK;
}
