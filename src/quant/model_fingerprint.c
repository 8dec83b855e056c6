/* model_fingerprint.c - the 64-bit fingerprint a calibration cache is keyed to: a hash of the imported
 * graph's structure (nodes, their names, inputs, outputs) and of every initializer's bytes. */
#include <string.h>
#include <xxhash.h>

#include "quant/model_fingerprint.h"

static void add(XXH3_state_t *s, const void *p, size_t n) { XXH3_64bits_update(s, p, n); }
static void add_str(XXH3_state_t *s, const char *str) { add(s, str ? str : "", str ? strlen(str) + 1 : 1); }
static void add_i64(XXH3_state_t *s, int64_t v) { add(s, &v, sizeof v); }

static void add_value(XXH3_state_t *s, const tc__graph *g, int32_t v) {
    if (v < 0) {
        add_i64(s, -1);
        return;
    }
    add_str(s, g->values[v].name);
}

uint64_t tc__model_fingerprint(const tc__graph *g) {
    XXH3_state_t *s = XXH3_createState();
    if (s == NULL) return 0;
    XXH3_64bits_reset(s);
    add_str(s, "tailcut-model-fingerprint-1");
    add_i64(s, g->opset);
    for (int k = 0; k < g->n_inputs; k++) add_value(s, g, g->inputs[k]);
    for (int k = 0; k < g->n_outputs; k++) add_value(s, g, g->outputs[k]);
    for (int n = 0; n < g->n_nodes; n++) {
        const tc__node *node = &g->nodes[n];
        add_str(s, node->op_type);
        add_str(s, node->name);
        for (int i = 0; i < node->n_in; i++) add_value(s, g, node->in[i]);
        for (int o = 0; o < node->n_out; o++) add_value(s, g, node->out[o]);
    }
    for (int v = 0; v < g->n_values; v++) {
        const tc__tensor *t = g->values[v].init;
        if (t == NULL) continue;
        add_str(s, g->values[v].name);
        add_i64(s, t->dtype);
        add_i64(s, t->rank);
        for (int32_t d = 0; d < t->rank; d++) add_i64(s, t->dims[d]);
        if (t->data != NULL) add(s, t->data, t->nbytes);
    }
    uint64_t h = XXH3_64bits_digest(s);
    XXH3_freeState(s);
    return h;
}
