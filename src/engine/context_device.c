/*
 * context_device.c - the part of a context that only a device backend's engine has (tc__backend.mem ==
 * TC__MEM_DEVICE): a device arena at the memory plan's offsets, device scratch, a device slot per graph input,
 * pinned staging per input and output, and the device view of every value that the kernels read (dtensors: the
 * host table's shapes, device addresses) beside the host view of known values (hview: shapes everywhere, data only
 * for initializers and shape arithmetic). The host table (c->tensors) keeps its host arena for shape arithmetic and
 * for outputs nobody bound. A run copies the bound inputs into pinned memory, runs the launch list (uploads, every
 * step, downloads: what the backend may capture as one graph) and copies the pinned outputs out.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/context.h"

/* Bytes of graph input k at the profile's max shapes (its device slot and staging). */
static size_t input_capacity(const tc_context *c, int k) {
    const tc__range *r = &c->prof->ranges[k];
    int64_t n = tc__numel(r->rank, r->max);
    const size_t es = tc_dtype_size(c->e->g->values[r->value].info.dtype);
    return n > 0 && es > 0 ? (size_t)n * es : 0;
}

/* Bytes graph output k may have (its staging). */
static size_t output_capacity(const tc_context *c, int k) {
    const tc__graph *g = c->e->g;
    const int32_t v = g->outputs[k];
    if (c->prof->offset[v] != TC__NOT_IN_ARENA) return c->prof->capacity[v];
    if (g->values[v].init) return g->values[v].init->nbytes;
    for (int i = 0; i < g->n_inputs; i++)
        if (g->inputs[i] == v) return input_capacity(c, i);
    return 0;
}

void tc__ctx_device_free(tc_context *c) {
    tc__ctx_device *d = &c->dev;
    const tc__backend *be = c->e->backend;
    be->free(TC__MEM_DEVICE, d->arena);
    be->free(TC__MEM_DEVICE, d->scratch.base);
    for (int k = 0; d->in_slot && k < c->e->g->n_inputs; k++) be->free(TC__MEM_DEVICE, d->in_slot[k]);
    for (int k = 0; d->in_pinned && k < c->e->g->n_inputs; k++) be->free(TC__MEM_PINNED, d->in_pinned[k]);
    for (int k = 0; d->out_pinned && k < c->e->g->n_outputs; k++) be->free(TC__MEM_PINNED, d->out_pinned[k]);
    free(d->in_slot), free(d->in_pinned), free(d->out_pinned);
    free(d->tensors), free(d->hview), free(d->hins), free(d->shape_key);
    memset(d, 0, sizeof *d);
}

tc_status tc__ctx_device_create(tc_context *c, tc__err *err) {
    const tc_engine *e = c->e;
    const tc__graph *g = e->g;
    const tc__backend *be = e->backend;
    const tc__profile *pr = c->prof;
    tc__ctx_device *d = &c->dev;
    const int nv = g->n_values, ni = g->n_inputs, no = g->n_outputs;
    d->arena = be->alloc(TC__MEM_DEVICE, pr->arena_bytes);
    d->scratch.base = be->alloc(TC__MEM_DEVICE, pr->scratch_bytes);
    d->scratch.cap = pr->scratch_bytes;
    d->tensors = calloc((size_t)nv + 1, sizeof *d->tensors);
    d->hview = calloc((size_t)nv + 1, sizeof *d->hview);
    d->hins = calloc((size_t)e->n_steps * TC__CTX_MAX_IN + 1, sizeof *d->hins);
    d->in_slot = calloc((size_t)ni + 1, sizeof *d->in_slot);
    d->in_pinned = calloc((size_t)ni + 1, sizeof *d->in_pinned);
    d->out_pinned = calloc((size_t)no + 1, sizeof *d->out_pinned);
    d->shape_key = calloc((size_t)ni * (TC_MAX_RANK + 1) + 1, sizeof *d->shape_key);
    if (!d->arena || !d->scratch.base || !d->tensors || !d->hview || !d->hins || !d->in_slot || !d->in_pinned ||
        !d->out_pinned || !d->shape_key)
        return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of %s memory creating a context (arena %llu bytes)",
                        be->name, (unsigned long long)pr->arena_bytes);
    for (int k = 0; k < ni; k++) {
        const size_t cap = input_capacity(c, k);
        d->in_slot[k] = be->alloc(TC__MEM_DEVICE, cap);
        d->in_pinned[k] = be->alloc(TC__MEM_PINNED, cap);
        if (!d->in_slot[k] || !d->in_pinned[k])
            return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of %s memory for input '%s' (%zu bytes)", be->name,
                            g->values[g->inputs[k]].name, cap);
    }
    for (int k = 0; k < no; k++) {
        const size_t cap = output_capacity(c, k);
        d->out_pinned[k] = be->alloc(TC__MEM_PINNED, cap);
        if (!d->out_pinned[k])
            return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of pinned memory for output '%s' (%zu bytes)",
                            g->values[g->outputs[k]].name, cap);
    }
    for (int v = 0; v < nv; v++) {
        tc__tensor *t = &d->tensors[v];
        t->dtype = c->tensors[v].dtype;
        if (g->values[v].init) t->data = (unsigned char *)e->dev_weights + e->dev_off[v];
        else if (pr->offset[v] != TC__NOT_IN_ARENA) t->data = d->arena + pr->offset[v];
    }
    for (int k = 0; k < ni; k++) d->tensors[g->inputs[k]].data = d->in_slot[k];
    return TC_STATUS_OK;
}

/* The launches that stage input k in (before the steps) and output k out (after them). */
void tc__ctx_device_launches(tc_context *c, tc__launch *in_copies, tc__launch *out_copies) {
    const tc__graph *g = c->e->g;
    tc__ctx_device *d = &c->dev;
    for (int k = 0; k < g->n_inputs; k++)
        in_copies[k] = (tc__launch){.copy_dst = d->in_slot[k], .copy_src = d->in_pinned[k]};
    for (int k = 0; k < g->n_outputs; k++)
        out_copies[k] = (tc__launch){.copy_dst = d->out_pinned[k], .copy_src = d->tensors[g->outputs[k]].data};
    d->in_copies = in_copies;
    d->out_copies = out_copies;
}

tc_status tc__ctx_device_sync(tc_context *c, tc__err *err) {
    const tc_engine *e = c->e;
    const tc__graph *g = e->g;
    tc__ctx_device *d = &c->dev;
    for (int v = 0; v < g->n_values; v++) {
        const tc__tensor *h = &c->tensors[v];
        tc__tensor *t = &d->tensors[v], *hv = &d->hview[v];
        void *data = t->data;
        *t = *h;
        t->data = data;
        *hv = *h;
        hv->data = c->known[v] ? h->data : NULL;
        /* shape arithmetic computed on the host that a kernel may read as data: its device slot gets the value */
        if (c->known[v] && !g->values[v].init && data != NULL && h->data != NULL && h->nbytes > 0) {
            tc_status st = e->backend->copy(c->exec, data, TC__MEM_DEVICE, h->data, TC__MEM_HOST, h->nbytes, err);
            if (st) return st;
        }
    }
    for (int k = 0; k < g->n_inputs; k++) d->in_copies[k].copy_bytes = c->tensors[g->inputs[k]].nbytes;
    for (int k = 0; k < g->n_outputs; k++) d->out_copies[k].copy_bytes = c->tensors[g->outputs[k]].nbytes;
    if (e->backend->select) { /* the launch list's key: the input shapes (the rest of the list follows from them),
                                * whole: a hash of them could collide, and a graph captured for other shapes replayed */
        size_t n = 0;
        for (int k = 0; k < g->n_inputs; k++) {
            const tc__tensor *t = &c->tensors[g->inputs[k]];
            const int32_t rank = t->rank > 0 && t->rank <= TC_MAX_RANK ? t->rank : 0;
            d->shape_key[n++] = rank;
            for (int32_t i = 0; i < rank; i++) d->shape_key[n++] = t->dims[i];
        }
        e->backend->select(c->exec, d->shape_key, n * sizeof *d->shape_key);
    }
    return TC_STATUS_OK;
}

void tc__ctx_device_stage_in(tc_context *c) {
    const tc__graph *g = c->e->g;
    for (int k = 0; k < g->n_inputs; k++) {
        const tc__tensor *t = &c->tensors[g->inputs[k]];
        /* (bound to the staging buffer itself: tc_context_pinned_buffer) */
        if (t->nbytes && t->data != c->dev.in_pinned[k]) memcpy(c->dev.in_pinned[k], t->data, t->nbytes);
    }
}

void tc__ctx_device_stage_out(tc_context *c) {
    const tc__graph *g = c->e->g;
    for (int k = 0; k < g->n_outputs; k++) {
        const int32_t v = g->outputs[k];
        const tc__tensor *t = &c->tensors[v];
        /* an output that is a constant or an input already holds its value on the host (a plan's bytes may be
         * read-only) */
        if ((g->values[v].init && !c->bound[v]) || g->values[v].is_input) continue;
        if (t->nbytes && t->data && t->data != c->dev.out_pinned[k]) memcpy(t->data, c->dev.out_pinned[k], t->nbytes);
    }
}

tc_status tc__ctx_device_pinned(const tc_context *c, int32_t v, void **data, size_t *bytes, tc__err *err) {
    const tc__graph *g = c->e->g;
    for (int k = 0; k < g->n_inputs; k++)
        if (g->inputs[k] == v) {
            *data = c->dev.in_pinned[k], *bytes = input_capacity(c, k);
            return TC_STATUS_OK;
        }
    for (int k = 0; k < g->n_outputs; k++)
        if (g->outputs[k] == v && !g->values[v].is_input && !g->values[v].init) {
            *data = c->dev.out_pinned[k], *bytes = output_capacity(c, k);
            return TC_STATUS_OK;
        }
    return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "'%s' is not staged through pinned memory (an output that is an "
                    "input or a constant)", g->values[v].name);
}
