/* ref_executor.c - the reference interpreter over a graph (see ref_executor.h). */
#include "engine/ref_executor.h"

#include <stdlib.h>
#include <string.h>

#include "engine/ref_node.h"

typedef struct slot {
    tc__tensor t;      /* owned when `owned` */
    const tc__tensor *view; /* what consumers read: &t, an initializer or a caller input */
    bool owned;
} slot;

/* Checks one bound input against the graph's declaration and the symbols bound so far. */
static tc_status check_input(const tc__graph *g, const tc__value *v, const tc__tensor *t, int64_t *sym_size,
                             tc__err *err) {
    const tc__vinfo *d = &v->info;
    if (t->data == NULL && tc__tensor_numel(t) != 0)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "input '%s' has no data", v->name);
    if (!tc__dtype_valid(t->dtype))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "input '%s' has an invalid data type %d", v->name, (int)t->dtype);
    tc_status st = tc__check_input_dtype(v->name, d->dtype, t->dtype, err);
    if (st) return st;
    int64_t n = tc__tensor_numel(t);
    if (n < 0) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "input '%s' has an invalid shape", v->name);
    if (t->nbytes != (size_t)n * tc_dtype_size(t->dtype))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "input '%s': %zu bytes for %lld elements of %s", v->name,
                        t->nbytes, (long long)n, tc_dtype_name(t->dtype));
    if (d->shape.rank < 0) return TC_STATUS_OK;
    char want[160], got[160];
    if (d->shape.rank != t->rank)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "input '%s' must have shape %s, got %s", v->name,
                        tc__graph_shape_str(g, &d->shape, want, sizeof want),
                        tc__shape_str(t->rank, t->dims, got, sizeof got));
    for (int32_t i = 0; i < t->rank; i++) {
        tc__dim dd = d->shape.dims[i];
        if (dd.value >= 0 && dd.value != t->dims[i])
            return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "input '%s' must have shape %s, got %s", v->name,
                            tc__graph_shape_str(g, &d->shape, want, sizeof want),
                            tc__shape_str(t->rank, t->dims, got, sizeof got));
        if (dd.value < 0 && dd.sym >= 0) {
            if (sym_size[dd.sym] < 0) sym_size[dd.sym] = t->dims[i];
            else if (sym_size[dd.sym] != t->dims[i])
                return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                                "input '%s' dim %d ('%s') is %lld, but another input has '%s' = %lld", v->name, (int)i,
                                g->symbols[dd.sym], (long long)t->dims[i], g->symbols[dd.sym],
                                (long long)sym_size[dd.sym]);
        }
    }
    return TC_STATUS_OK;
}

static tc_status bind_inputs(const tc__graph *g, int n_inputs, const char *const *names, const tc__tensor *inputs,
                             slot *slots, tc__err *err) {
    int64_t *sym_size = malloc(sizeof(int64_t) * (size_t)(g->n_symbols + 1));
    if (sym_size == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int s = 0; s < g->n_symbols; s++) sym_size[s] = -1;
    tc_status st = TC_STATUS_OK;
    for (int i = 0; i < n_inputs && st == TC_STATUS_OK; i++) {
        if (names == NULL || names[i] == NULL) {
            st = tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "input %d has no name", i);
            break;
        }
        int32_t v = -1;
        for (int k = 0; k < g->n_inputs; k++)
            if (strcmp(g->values[g->inputs[k]].name, names[i]) == 0) v = g->inputs[k];
        if (v < 0) {
            st = tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "the model has no input named '%s'", names[i]);
            break;
        }
        if (slots[v].view != NULL) {
            st = tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "input '%s' is given twice", names[i]);
            break;
        }
        st = check_input(g, &g->values[v], &inputs[i], sym_size, err);
        slots[v].view = &inputs[i];
    }
    for (int k = 0; k < g->n_inputs && st == TC_STATUS_OK; k++)
        if (slots[g->inputs[k]].view == NULL)
            st = tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "input '%s' is not given", g->values[g->inputs[k]].name);
    free(sym_size);
    return st;
}

/* Copies a tensor into a new owned tensor. */
static tc_status clone(const tc__tensor *src, tc__tensor *dst, tc__err *err) {
    tc_status st = tc__tensor_alloc(dst, src->dtype, src->rank, src->dims, err);
    if (st == TC_STATUS_OK && src->nbytes) memcpy(dst->data, src->data, src->nbytes);
    return st;
}

tc_status tc__ref_execute(const tc__graph *g, int n_inputs, const char *const *names, const tc__tensor *inputs,
                          tc__tensor *outputs, tc__err *err) {
    tc_status st = TC_STATUS_OK;
    int nv = g->n_values;
    slot *slots = calloc((size_t)(nv ? nv : 1), sizeof(slot));
    int32_t *last_use = malloc(sizeof(int32_t) * (size_t)(nv ? nv : 1));
    if (slots == NULL || last_use == NULL) {
        free(slots);
        free(last_use);
        return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    for (int k = 0; k < g->n_outputs; k++) memset(&outputs[k], 0, sizeof outputs[k]);
    for (int v = 0; v < nv; v++) {
        last_use[v] = -1;
        if (g->values[v].init != NULL) slots[v].view = g->values[v].init;
    }
    st = bind_inputs(g, n_inputs, names, inputs, slots, err);
    for (int n = 0; n < g->n_nodes; n++)
        for (int i = 0; i < g->nodes[n].n_in; i++)
            if (g->nodes[n].in[i] >= 0) last_use[g->nodes[n].in[i]] = n;
    for (int k = 0; k < g->n_outputs; k++) last_use[g->outputs[k]] = g->n_nodes; /* keep graph outputs */

    for (int n = 0; n < g->n_nodes && st == TC_STATUS_OK; n++) {
        const tc__node *node = &g->nodes[n];
        const tc__tensor *in[64];
        tc__tensor outs[16];
        if (node->n_in > 64 || node->n_out > 16) {
            st = tc__fail(err, TC_STATUS_UNSUPPORTED, "node '%s' (%s): too many inputs or outputs", node->name,
                          node->op_type);
            break;
        }
        for (int i = 0; i < node->n_in; i++) in[i] = node->in[i] >= 0 ? slots[node->in[i]].view : NULL;
        if (node->guard >= 0) { /* a node of an If branch: it runs when its run flag is true */
            const tc__tensor *flag = in[node->guard];
            if (flag == NULL || flag->dtype != TC_DTYPE_BOOL || flag->nbytes < 1) {
                st = tc__fail(err, TC_STATUS_INTERNAL, "node '%s' (%s): its run flag is not a computed bool",
                              node->name, node->op_type);
                break;
            }
            if (((const uint8_t *)flag->data)[0] == 0) continue; /* its outputs stay absent */
        }
        st = tc__ref_run_node(node, g->opset, in, outs, err);
        if (st) {
            tc__err_prefix(err, "node '%s' (%s): ", node->name, node->op_type);
            break;
        }
        for (int o = 0; o < node->n_out; o++) {
            int32_t v = node->out[o];
            if (v < 0) {
                tc__tensor_free(&outs[o]);
                continue;
            }
            slots[v].t = outs[o];
            slots[v].owned = true;
            slots[v].view = &slots[v].t;
        }
        /* Free intermediates whose last consumer was this node (and unused outputs). */
        for (int i = 0; i < node->n_in; i++) {
            int32_t v = node->in[i];
            if (v >= 0 && last_use[v] == n && slots[v].owned) {
                tc__tensor_free(&slots[v].t);
                slots[v].owned = false;
                slots[v].view = NULL;
            }
        }
        for (int o = 0; o < node->n_out; o++) {
            int32_t v = node->out[o];
            if (v >= 0 && last_use[v] < 0 && slots[v].owned) {
                tc__tensor_free(&slots[v].t);
                slots[v].owned = false;
                slots[v].view = NULL;
            }
        }
    }
    for (int k = 0; k < g->n_outputs && st == TC_STATUS_OK; k++) {
        int32_t v = g->outputs[k];
        bool later = false; /* the same value listed again as a later output */
        for (int j = k + 1; j < g->n_outputs; j++) later |= g->outputs[j] == v;
        if (slots[v].owned && !later) {
            outputs[k] = slots[v].t;
            slots[v].owned = false;
            slots[v].view = &outputs[k];
        } else if (slots[v].view != NULL) {
            st = clone(slots[v].view, &outputs[k], err);
        } else {
            st = tc__fail(err, TC_STATUS_INTERNAL, "graph output '%s' was not computed", g->values[v].name);
        }
    }
    if (st != TC_STATUS_OK)
        for (int k = 0; k < g->n_outputs; k++) tc__tensor_free(&outputs[k]);
    for (int v = 0; v < nv; v++)
        if (slots[v].owned) tc__tensor_free(&slots[v].t);
    free(slots);
    free(last_use);
    return st;
}
