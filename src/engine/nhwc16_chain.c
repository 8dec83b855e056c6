/*
 * nhwc16_chain.c - FP16 NHWC images between device convolutions (after the tactics are chosen): where every reader of
 * a step's output takes it as its input X or as its fused residual, and producer and readers are all tactics of the
 * TC__CHAIN_FP16_NHWC family (the CUDA cuDNN FP16 convolution), the producer writes the value as FP16 NHWC into the
 * tensor's buffer (half the FP32 bytes: it always fits, so the memory plan does not change) and the readers take it as
 * is: the FP32 NCHW tensor, the producer's transpose back and each reader's cast disappear. Attributes (core/
 * quant_attr.h): tc.nhwc16_out on the producer, tc.nhwc16_in on input readers, tc.nhwc16_res on residual readers.
 * The image has no padding and depends on no shape, so dynamic profiles chain too. A graph output never chains, nor
 * a value read through a view (Reshape, Flatten: their node is a reader of another family).
 */
#include <stdlib.h>
#include <string.h>

#include "core/quant_attr.h"
#include "engine/engine_tactics.h"
#include "passes/pattern.h"

/* Marks value v of node p when all its readers qualify (see the top); false when they do not. */
static bool qualifies(const tc__graph *g, const tc__step *steps, const int32_t *step_of, int32_t v, int *n_readers) {
    *n_readers = 0;
    for (int o = 0; o < g->n_outputs; o++)
        if (g->outputs[o] == v) return false;
    for (int32_t r = 0; r < g->n_nodes; r++) {
        const tc__node *rn = &g->nodes[r];
        if (rn->removed) continue;
        bool uses = false;
        for (int i = 0; i < rn->n_in; i++)
            if (rn->in[i] == v) {
                /* as X (input 0) or as the fused residual, never both, never as anything else */
                if (!(i == 0 || i == rn->epi.residual_input) || (i != 0 && rn->in[0] == v)) return false;
                uses = true;
            }
        if (!uses) continue;
        if (step_of[r] < 0 || tc__step_chain_family(g, &steps[step_of[r]]) != TC__CHAIN_FP16_NHWC) return false;
        ++*n_readers;
    }
    return *n_readers > 0;
}

tc_status tc__nhwc16_chain(tc__graph *g, const tc__step *steps, const tc__shapes *s, int *chained, tc__err *err) {
    *chained = 0;
    int32_t *step_of = malloc(sizeof *step_of * (size_t)(g->n_nodes + 1));
    if (step_of == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    for (int k = 0; k < g->n_nodes; k++) step_of[k] = -1;
    for (int k = 0; k < g->n_nodes; k++)
        if (steps[k].node >= 0 && steps[k].node < g->n_nodes) step_of[steps[k].node] = k;
    const tc__attr out = {.name = TC__ATTR_NHWC16_OUT, .kind = TC__ATTR_INT, .i = 1};
    const tc__attr in = {.name = TC__ATTR_NHWC16_IN, .kind = TC__ATTR_INT, .i = 1};
    const tc__attr res = {.name = TC__ATTR_NHWC16_RES, .kind = TC__ATTR_INT, .i = 1};
    tc_status st = TC_STATUS_OK;
    for (int k = 0; k < g->n_nodes && st == TC_STATUS_OK; k++) {
        const tc__step *ps = &steps[k];
        if (tc__step_chain_family(g, ps) != TC__CHAIN_FP16_NHWC || g->nodes[ps->node].n_out < 1) continue;
        const int32_t p = ps->node, v = g->nodes[p].out[0];
        int n_readers = 0;
        if (v < 0 || !qualifies(g, steps, step_of, v, &n_readers)) continue;
        st = tc__pat_set_attr(g, p, &out, err);
        for (int32_t r = 0; r < g->n_nodes && st == TC_STATUS_OK; r++) {
            const tc__node *rn = &g->nodes[r];
            if (rn->removed) continue;
            for (int i = 0; i < rn->n_in && st == TC_STATUS_OK; i++)
                if (rn->in[i] == v) st = tc__pat_set_attr(g, r, i == 0 ? &in : &res, err);
        }
        bool ok = st == TC_STATUS_OK && tc__step_still_supported(g, ps, s);
        for (int32_t r = 0; r < g->n_nodes && ok; r++)
            for (int i = 0; i < g->nodes[r].n_in && ok; i++)
                if (!g->nodes[r].removed && g->nodes[r].in[i] == v) ok = tc__step_still_supported(g, &steps[step_of[r]], s);
        if (st == TC_STATUS_OK && !ok)
            st = tc__fail(err, TC_STATUS_INTERNAL, "FP16 NHWC chain from %s to %d reader(s): a tactic refuses the "
                          "chained step", g->nodes[p].name, n_readers);
        if (st == TC_STATUS_OK) ++*chained;
    }
    free(step_of);
    return st;
}

/* Whether node n has int attribute name = 1 (0 when absent); -1 when it is there with another value. */
static int flag_of(const tc__node *n, const char *name) {
    if (!tc__attr_has(&n->attrs, name)) return 0;
    const int64_t v = tc__attr_int(&n->attrs, name, -1);
    return v == 0 || v == 1 ? (int)v : -1;
}

tc_status tc__nhwc16_check(const tc__graph *g, tc__err *err) {
    for (int r = 0; r < g->n_nodes; r++) {
        const tc__node *n = &g->nodes[r];
        if (n->removed) continue;
        const int fin = flag_of(n, TC__ATTR_NHWC16_IN), fres = flag_of(n, TC__ATTR_NHWC16_RES);
        const int fout = flag_of(n, TC__ATTR_NHWC16_OUT);
        if (fin < 0 || fres < 0 || fout < 0 || (fres == 1 && (n->epi.residual_input < 1 || n->epi.residual_input >= n->n_in)))
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan step '%s' has malformed FP16 NHWC image attributes",
                            n->name);
        for (int i = 0; i < n->n_in; i++) {
            const int32_t v = n->in[i];
            const bool as_x = i == 0 && fin == 1, as_res = i == n->epi.residual_input && fres == 1;
            const int32_t p = v >= 0 ? g->values[v].producer : -1;
            const bool writes = p >= 0 && g->nodes[p].n_out > 0 && g->nodes[p].out[0] == v &&
                                flag_of(&g->nodes[p], TC__ATTR_NHWC16_OUT) == 1;
            if ((as_x || as_res) != writes)
                return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan step '%s' reads %s '%s' as %s, but its producer "
                                "writes %s", n->name, i == 0 ? "input" : "residual", v >= 0 ? g->values[v].name : "",
                                as_x || as_res ? "an FP16 NHWC image" : "float32",
                                writes ? "an FP16 NHWC image" : "float32");
        }
        if (fout == 1)
            for (int o = 0; o < g->n_outputs; o++)
                if (n->n_out > 0 && g->outputs[o] == n->out[0])
                    return tc__fail(err, TC_STATUS_CORRUPT_FILE, "plan step '%s' writes graph output '%s' as an FP16 "
                                    "NHWC image", n->name, g->values[n->out[0]].name);
    }
    return TC_STATUS_OK;
}
