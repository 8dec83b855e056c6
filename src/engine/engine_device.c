/*
 * engine_device.c - an engine of a device backend (tc__backend.mem == TC__MEM_DEVICE): every compute step must run
 * on that backend (no reference kernel reads device memory), and the weights are uploaded once per engine into one
 * block of device memory that every context of the engine reads.
 */
#include <stdlib.h>
#include <string.h>

#include "core/quant_attr.h"
#include "engine/engine.h"
#include "engine/engine_tactics.h"

tc_status tc__engine_device_check(const tc_engine *e, tc__err *err) {
    tc_status st = tc__row16_check(e->g, err);
    if (st == TC_STATUS_OK) st = tc__nhwc16_check(e->g, err);
    if (st != TC_STATUS_OK) return st;
    for (int k = 0; k < e->n_steps; k++) {
        const tc__step *s = &e->steps[k];
        if (e->g->nodes[s->node].guard >= 0)
            return tc__fail(err, TC_STATUS_UNSUPPORTED, "plan step '%s' belongs to an If branch decided at run time, "
                            "which only the CPU backend runs so far", e->g->nodes[s->node].name);
        if (s->kind != TC__STEP_COMPUTE) continue;
        const tc__tactic *t = e->tactics ? e->tactics[k] : NULL;
        if (t == NULL || t->backend != e->backend->id)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan step '%s' runs tactic '%s' on the %s backend, but the "
                            "plan is for the %s backend", e->g->nodes[s->node].name, s->tactic,
                            tc__backend_name(t ? t->backend : TC__BACKEND_CPU), e->backend->name);
        /* image attributes only on steps whose tactic reads and writes that image */
        const tc__node *n = &e->g->nodes[s->node];
        const bool nhwc = tc__attr_int(&n->attrs, TC__ATTR_NHWC16_IN, 0) != 0 ||
                          tc__attr_int(&n->attrs, TC__ATTR_NHWC16_RES, 0) != 0 ||
                          tc__attr_int(&n->attrs, TC__ATTR_NHWC16_OUT, 0) != 0;
        const bool rows =
            tc__attr_int(&n->attrs, TC__ATTR_ROW16_IN, 0) != 0 || tc__attr_int(&n->attrs, TC__ATTR_ROW16_OUT, 0) != 0;
        if ((nhwc && t->chain != TC__CHAIN_FP16_NHWC) || (rows && t->chain != TC__CHAIN_FP16_ROWS))
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan step '%s' carries FP16 %s image attributes, but its "
                            "tactic %s does not take such images", n->name, nhwc ? "NHWC" : "row", t->name);
    }
    return TC_STATUS_OK;
}

tc_status tc__engine_upload(tc_engine *e, tc__err *err) {
    const tc__backend *be = e->backend;
    const tc__graph *g = e->g;
    const uint64_t align = be->arena_align ? be->arena_align : 256;
    e->dev_off = malloc(sizeof *e->dev_off * ((size_t)g->n_values + 1));
    if (e->dev_off == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    uint64_t total = 0;
    for (int v = 0; v < g->n_values; v++) {
        const tc__tensor *t = g->values[v].init;
        e->dev_off[v] = UINT64_MAX;
        if (t == NULL) continue;
        e->dev_off[v] = total;
        total += (t->nbytes + align - 1) / align * align;
    }
    e->dev_weight_bytes = total;
    e->dev_weights = be->alloc(TC__MEM_DEVICE, total ? total : align);
    if (e->dev_weights == NULL)
        return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "cannot allocate %llu bytes of %s device memory for the weights",
                        (unsigned long long)total, be->name);
    for (int v = 0; v < g->n_values; v++) {
        const tc__tensor *t = g->values[v].init;
        if (t == NULL || t->nbytes == 0) continue;
        tc_status st = be->copy(NULL, (unsigned char *)e->dev_weights + e->dev_off[v], TC__MEM_DEVICE, t->data,
                                TC__MEM_HOST, t->nbytes, err);
        if (st) return st;
    }
    return TC_STATUS_OK;
}

void tc__engine_device_free(tc_engine *e) {
    if (e->dev_weights) e->backend->free(TC__MEM_DEVICE, e->dev_weights);
    e->dev_weights = NULL;
    free(e->dev_off);
    e->dev_off = NULL;
}
