/*
 * qdq_elide.c - after the tactics are chosen, the fake quantization that INT8 steps make redundant (engine_tactics.h):
 * a QuantizeLinear -> DequantizeLinear pair of a QDQ model (or such a pair fused into its producer's epilogue,
 * TC__ACT_FAKE_QUANT) whose output only INT8 steps read, each as its data input and each quantizing it with the pair's
 * scale and zero point (fold_qdq gave them those). Such a step computes the model's codes from the unquantized tensor
 * itself (its quantization is the pair's, up to x / s against x * (1 / s) at an exact tie), so the pair's two passes
 * over the tensor go: the readers read the pair's input and the two nodes leave the graph (or the epilogue loses its
 * fake quantization), and the INT8 chain can then link the producer with its readers. Where a reader runs in FP32 the
 * pair stays: that reader computes the model's arithmetic on the fake-quantized tensor.
 */
#include <string.h>

#include "core/quant_attr.h"
#include "engine/engine_tactics.h"
#include "passes/pattern.h"

/* True when every reader of v (at least one; v no graph output) is an INT8 step reading v as its data input only,
 * with the quantization (scale, qmin = lowest code - zero point) in its attributes. */
static bool int8_readers_only(const tc__graph *g, const tc__step *steps, int32_t v, float scale, float qmin) {
    if (v < 0 || g->values[v].is_output) return false;
    int n = 0;
    for (int32_t r = 0; r < g->n_nodes; r++) {
        const tc__node *nd = &g->nodes[r];
        bool reads = false;
        for (int i = 0; i < nd->n_in && !nd->removed; i++)
            if (nd->in[i] == v) {
                if (i != 0) return false;
                reads = true;
            }
        if (!reads) continue;
        if (steps[r].kind != TC__STEP_COMPUTE || strcmp(steps[r].precision, "int8") != 0) return false;
        if (tc__attr_float(&nd->attrs, TC__ATTR_INT8_SCALE, 0.0f) != scale ||
            tc__attr_int(&nd->attrs, TC__ATTR_INT8_ZERO_POINT, -1) != (int64_t)-qmin)
            return false;
        n++;
    }
    return n > 0;
}

/* Drops the removed nodes from g and their steps and tuning results alike (steps[k] is node k's). */
static void compact(tc__graph *g, tc__step *steps, tc__tune_result *results) {
    int k = 0;
    for (int n = 0; n < g->n_nodes; n++) {
        if (g->nodes[n].removed) continue;
        steps[k] = steps[n];
        steps[k].node = k;
        results[k] = results[n];
        k++;
    }
    tc__graph_compact(g);
}

int tc__elide_qdq(tc__graph *g, tc__step *steps, tc__tune_result *results) {
    int elided = 0;
    for (int32_t k = 0; k < g->n_nodes; k++) {
        tc__node *n = &g->nodes[k];
        float scale, qmin;
        if (n->removed || steps[k].kind != TC__STEP_COMPUTE || n->n_out != 1) continue;
        if (n->epi.act == TC__ACT_FAKE_QUANT) { /* fused into the producer's epilogue */
            if (!int8_readers_only(g, steps, n->out[0], n->epi.alpha, n->epi.beta)) continue;
            n->epi.act = TC__ACT_NONE, n->epi.alpha = n->epi.beta = 0.0f;
            elided++;
            continue;
        }
        const int32_t q = tc__pat_is(n, "DequantizeLinear") && tc__pat_plain(n) && n->in[0] >= 0 ? g->values[n->in[0]].producer : -1;
        if (q < 0 || g->nodes[q].removed || !tc__qdq_pair(g, q, k, &scale, &qmin) ||
            tc__graph_use_count(g, g->nodes[q].out[0]) != 1 || !int8_readers_only(g, steps, n->out[0], scale, qmin))
            continue;
        tc__graph_replace_uses(g, n->out[0], g->nodes[q].in[0]);
        g->nodes[q].removed = n->removed = true;
        elided++;
    }
    compact(g, steps, results);
    return elided;
}
