/*
 * row16_chain.c - FP16 row images between device dense layers, LayerNorms and attention (after the tactics are
 * chosen): where a step of the TC__CHAIN_FP16_ROWS family (the CUDA FP16 cuBLASLt MatMul/Gemm, LayerNormalization,
 * Attention) writes a value that only steps of that family read, the producer writes it as FP16 (the tensor's elements
 * in order, no padding: half the FP32 bytes, so the memory plan does not change) and the readers take it as is: the
 * FP32 tensor between them and each FP16 GEMM's cast of its input disappear (a transformer's residual stream, Q, K, V
 * and the attention output stay FP16 from layer to layer, as in an FP16 framework). Attributes (core/quant_attr.h):
 * tc.row16_out = 1 on the producer, tc.row16_in = a bit mask of the inputs that are images on each reader. Which
 * inputs a tactic takes as images is its own supports()'s business: the attributes are set, producer and readers are
 * asked again, and the value stays FP32 where any of them refuses. A graph output never chains, nor a value read through
 * a view (Reshape: its node is a reader of another family). The image depends on no shape: dynamic profiles chain too.
 */
#include <stdlib.h>
#include <string.h>

#include "core/quant_attr.h"
#include "engine/engine_tactics.h"
#include "passes/pattern.h"

/* The bit mask of node n's inputs that are value v. */
static int64_t inputs_of(const tc__node *n, int32_t v) {
    int64_t m = 0;
    for (int i = 0; i < n->n_in && i < 32; i++)
        if (n->in[i] == v) m |= (int64_t)1 << i;
    return m;
}

/* True when v is no graph output and every node reading it is a step of the family (reading it among its first 32
 * inputs); *n_readers counts them. */
static bool candidates(const tc__graph *g, const tc__step *steps, const int32_t *step_of, int32_t v, int *n_readers) {
    *n_readers = 0;
    for (int o = 0; o < g->n_outputs; o++)
        if (g->outputs[o] == v) return false;
    for (int32_t r = 0; r < g->n_nodes; r++) {
        const tc__node *rn = &g->nodes[r];
        if (rn->removed) continue;
        bool uses = false;
        for (int i = 0; i < rn->n_in; i++)
            if (rn->in[i] == v) {
                if (i >= 32) return false;
                uses = true;
            }
        if (!uses) continue;
        if (step_of[r] < 0 || tc__step_chain_family(g, &steps[step_of[r]]) != TC__CHAIN_FP16_ROWS) return false;
        ++*n_readers;
    }
    return *n_readers > 0;
}

static tc_status set_int(tc__graph *g, int32_t n, const char *name, int64_t v, tc__err *err) {
    const tc__attr a = {.name = name, .kind = TC__ATTR_INT, .i = v};
    return tc__pat_set_attr(g, n, &a, err);
}

/* Chains value v of producer p (all readers are candidates): sets the attributes, asks every tactic again, and puts the
 * attributes back where one refuses (*done false then). */
static tc_status try_chain(tc__graph *g, const tc__step *steps, const int32_t *step_of, const tc__shapes *s, int32_t p,
                           int32_t v, bool *done, tc__err *err) {
    *done = false;
    tc_status st = set_int(g, p, TC__ATTR_ROW16_OUT, 1, err);
    for (int32_t r = 0; r < g->n_nodes && st == TC_STATUS_OK; r++) {
        if (g->nodes[r].removed) continue;
        const int64_t m = inputs_of(&g->nodes[r], v);
        if (m != 0) st = set_int(g, r, TC__ATTR_ROW16_IN, tc__attr_int(&g->nodes[r].attrs, TC__ATTR_ROW16_IN, 0) | m, err);
    }
    if (st != TC_STATUS_OK) return st;
    bool ok = tc__step_still_supported(g, &steps[step_of[p]], s);
    for (int32_t r = 0; r < g->n_nodes && ok; r++)
        if (!g->nodes[r].removed && inputs_of(&g->nodes[r], v) != 0) ok = tc__step_still_supported(g, &steps[step_of[r]], s);
    if (ok) {
        *done = true;
        return TC_STATUS_OK;
    }
    st = set_int(g, p, TC__ATTR_ROW16_OUT, 0, err);
    for (int32_t r = 0; r < g->n_nodes && st == TC_STATUS_OK; r++) {
        if (g->nodes[r].removed) continue;
        const int64_t m = inputs_of(&g->nodes[r], v);
        if (m != 0) st = set_int(g, r, TC__ATTR_ROW16_IN, tc__attr_int(&g->nodes[r].attrs, TC__ATTR_ROW16_IN, 0) & ~m, err);
    }
    return st;
}

tc_status tc__row16_chain(tc__graph *g, const tc__step *steps, const tc__shapes *s, int *chained, tc__err *err) {
    *chained = 0;
    int32_t *step_of = malloc(sizeof *step_of * (size_t)(g->n_nodes + 1));
    if (step_of == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int k = 0; k < g->n_nodes; k++) step_of[k] = -1;
    for (int k = 0; k < g->n_nodes; k++)
        if (steps[k].node >= 0 && steps[k].node < g->n_nodes) step_of[steps[k].node] = k;
    tc_status st = TC_STATUS_OK;
    for (int k = 0; k < g->n_nodes && st == TC_STATUS_OK; k++) {
        const tc__step *ps = &steps[k];
        if (tc__step_chain_family(g, ps) != TC__CHAIN_FP16_ROWS || g->nodes[ps->node].n_out < 1) continue;
        const int32_t p = ps->node;
        int32_t v = g->nodes[p].out[0];
        for (int o = 1; o < g->nodes[p].n_out; o++)
            if (g->nodes[p].out[o] >= 0) v = -1; /* one output only */
        int n_readers = 0;
        if (v < 0 || !candidates(g, steps, step_of, v, &n_readers)) continue;
        bool done = false;
        st = try_chain(g, steps, step_of, s, p, v, &done, err);
        if (st == TC_STATUS_OK && done) ++*chained;
    }
    free(step_of);
    return st;
}

/* True when node n writes output 0 as an FP16 row image (engine/row16_chain.c). */
static bool writes_row16(const tc__node *n) { return tc__attr_int(&n->attrs, TC__ATTR_ROW16_OUT, 0) == 1; }

tc_status tc__row16_check(const tc__graph *g, tc__err *err) {
    for (int r = 0; r < g->n_nodes; r++) {
        const tc__node *n = &g->nodes[r];
        const int64_t bits = tc__attr_int(&n->attrs, TC__ATTR_ROW16_IN, 0);
        const int64_t out = tc__attr_int(&n->attrs, TC__ATTR_ROW16_OUT, 0);
        if (bits < 0 || bits > (int64_t)UINT32_MAX || (bits >> (n->n_in < 32 ? n->n_in : 32)) != 0 || out < 0 || out > 1)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan step '%s' has malformed FP16 row image attributes",
                            n->name);
        for (int i = 0; i < n->n_in && i < 32; i++) {
            const int32_t v = n->in[i];
            const bool reads = (bits >> i & 1) != 0;
            if (v < 0) {
                if (reads) return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan step '%s' reads an absent input as an FP16 "
                                           "row image", n->name);
                continue;
            }
            const int32_t p = g->values[v].producer;
            const bool writes = p >= 0 && g->nodes[p].n_out > 0 && g->nodes[p].out[0] == v && writes_row16(&g->nodes[p]);
            if (reads != writes)
                return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan step '%s' reads '%s' as %s, but its producer writes "
                                "%s", n->name, g->values[v].name, reads ? "an FP16 row image" : "float32",
                                writes ? "an FP16 row image" : "float32");
        }
        if (out == 1)
            for (int o = 0; o < g->n_outputs; o++)
                if (n->n_out > 0 && g->outputs[o] == n->out[0])
                    return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan step '%s' writes graph output '%s' as an FP16 "
                                    "row image", n->name, g->values[n->out[0]].name);
    }
    return TC_STATUS_OK;
}
