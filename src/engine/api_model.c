/* api_model.c - the public tc_model API: import + toposort + If folding + verify + shape inference,
 * introspection for `tailcut inspect`, and running with the reference executor. */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/file.h"
#include "engine/engine.h"
#include "engine/model.h"
#include "engine/ref_executor.h"
#include "engine/ref_node.h"
#include "graph/graph.h"
#include "onnx/onnx_import.h"

/* Largest model file read into memory (external data is read separately). */
#define TC__MAX_MODEL_BYTES ((size_t)4 << 30)


static tc_status fail_export(tc__err *err, tc_error *error) {
    tc__err_export(err, error);
    return err->status ? err->status : TC_STATUS_INTERNAL;
}

tc_status tc_model_load_buffer(const void *data, size_t size, const char *base_dir, const tc_model_options *options,
                               tc_model **model, tc_error *error) {
    tc__err err = {0};
    if (model == NULL || (data == NULL && size != 0)) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "tc_model_load_buffer: NULL argument");
        return fail_export(&err, error);
    }
    *model = NULL;
    uint32_t flags = 0;
    if (options != NULL) {
        if (options->struct_size < sizeof(uint32_t) * 2) {
            tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "tc_model_options.struct_size is %u", options->struct_size);
            return fail_export(&err, error);
        }
        flags = options->flags;
    }
    bool allow = (flags & TC_MODEL_ALLOW_UNSUPPORTED) != 0;
    tc__graph *g = NULL;
    tc_status st = tc__onnx_import(data, size, base_dir, &g, &err);
    if (st == TC_STATUS_OK) st = tc__graph_toposort(g, &err);
    /* Fold first, then check what remains: an If with a known condition becomes its branch. */
    if (st == TC_STATUS_OK && tc__model_has_if(g)) st = tc__model_fold_ifs(g, &err);
    if (st == TC_STATUS_OK) st = tc__graph_verify(g, allow, &err);
    if (st == TC_STATUS_OK) st = tc__graph_infer_shapes(g, allow, tc__ref_eval, &g->opset, &err);
    tc_model *m = NULL;
    if (st == TC_STATUS_OK) {
        m = calloc(1, sizeof *m);
        if (m != NULL) m->branch = calloc((size_t)g->n_nodes + 1, sizeof *m->branch);
        if (m != NULL) m->depth = calloc((size_t)g->n_nodes + 1, sizeof *m->depth);
        if (m == NULL || m->branch == NULL || m->depth == NULL) st = tc__fail(&err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        else st = tc__branch_labels(g, m->branch, m->depth, &err);
    }
    if (st != TC_STATUS_OK) {
        if (m != NULL) free(m->branch), free(m->depth);
        free(m);
        tc__graph_destroy(g);
        return fail_export(&err, error);
    }
    m->graph = g;
    m->runnable = true;
    for (int n = 0; n < g->n_nodes; n++)
        if (g->nodes[n].schema == NULL) m->runnable = false;
    *model = m;
    return TC_STATUS_OK;
}

tc_status tc_model_load(const char *path, const tc_model_options *options, tc_model **model, tc_error *error) {
    tc__err err = {0};
    if (path == NULL || model == NULL) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "tc_model_load: NULL argument");
        return fail_export(&err, error);
    }
    *model = NULL;
    void *data;
    size_t size;
    tc_status st = tc__read_file(path, TC__MAX_MODEL_BYTES, &data, &size, &err);
    if (st) return fail_export(&err, error);
    char *dup = strdup(path);
    if (dup == NULL) {
        free(data);
        tc__fail(&err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
        return fail_export(&err, error);
    }
    st = tc_model_load_buffer(data, size, dirname(dup), options, model, error);
    free(dup);
    free(data);
    if (st != TC_STATUS_OK && error != NULL) {
        /* Name the file in front of the reason. */
        char msg[sizeof error->message];
        int w = snprintf(msg, sizeof msg, "%s: ", path);
        if (w > 0 && (size_t)w < sizeof msg) {
            size_t room = sizeof msg - (size_t)w - 1, len = strlen(error->message);
            memcpy(msg + w, error->message, len < room ? len : room);
            msg[(size_t)w + (len < room ? len : room)] = '\0';
            memcpy(error->message, msg, sizeof msg);
        }
    }
    return st;
}

void tc_model_destroy(tc_model *model) {
    if (model == NULL) return;
    tc__graph_destroy(model->graph);
    free(model->branch);
    free(model->depth);
    free(model);
}

int tc_model_num_inputs(const tc_model *model) { return model ? model->graph->n_inputs : 0; }
int tc_model_num_outputs(const tc_model *model) { return model ? model->graph->n_outputs : 0; }


tc_status tc_model_input_info(const tc_model *model, int index, tc_io_info *info) {
    if (model == NULL || info == NULL || index < 0 || index >= model->graph->n_inputs) return TC_STATUS_INVALID_ARGUMENT;
    tc__graph_io_info(model->graph, model->graph->inputs[index], info);
    return TC_STATUS_OK;
}

tc_status tc_model_output_info(const tc_model *model, int index, tc_io_info *info) {
    if (model == NULL || info == NULL || index < 0 || index >= model->graph->n_outputs) return TC_STATUS_INVALID_ARGUMENT;
    tc__graph_io_info(model->graph, model->graph->outputs[index], info);
    return TC_STATUS_OK;
}

int tc_model_num_nodes(const tc_model *model) { return model ? model->graph->n_nodes : 0; }

tc_status tc_model_node_info(const tc_model *model, int index, tc_node_info *info) {
    if (model == NULL || info == NULL || index < 0 || index >= model->graph->n_nodes) return TC_STATUS_INVALID_ARGUMENT;
    const tc__node *n = &model->graph->nodes[index];
    info->name = n->name;
    info->op_type = n->op_type;
    info->domain = n->domain;
    info->opset = model->graph->opset;
    info->supported = n->schema != NULL;
    info->branch = model->branch[index];
    info->branch_depth = model->depth[index];
    return TC_STATUS_OK;
}

const char *tc_model_warning(const tc_model *model, int index) {
    if (model == NULL || index < 0 || index >= model->graph->n_warnings) return NULL;
    return model->graph->warnings[index];
}

tc_status tc_model_run_reference(const tc_model *model, int num_inputs, const char *const *input_names,
                                 const tc_tensor *inputs, tc_tensor *outputs, tc_error *error) {
    tc__err err = {0};
    if (model == NULL || outputs == NULL || num_inputs < 0 || (num_inputs > 0 && (inputs == NULL || input_names == NULL))) {
        tc__fail(&err, TC_STATUS_INVALID_ARGUMENT, "tc_model_run_reference: NULL argument");
        return fail_export(&err, error);
    }
    if (!model->runnable) {
        const tc__graph *g = model->graph;
        for (int n = 0; n < g->n_nodes; n++)
            if (g->nodes[n].schema == NULL) {
                tc__fail(&err, TC_STATUS_UNSUPPORTED, "node '%s': op %s (domain '%s', opset %lld) is not supported",
                         g->nodes[n].name, g->nodes[n].op_type, g->nodes[n].domain, (long long)g->opset);
                break;
            }
        return fail_export(&err, error);
    }
    tc_status st = tc__ref_execute(model->graph, num_inputs, input_names, inputs, outputs, &err);
    if (st) return fail_export(&err, error);
    return TC_STATUS_OK;
}
