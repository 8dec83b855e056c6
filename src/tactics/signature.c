/* signature.c - the hash of a step's signature, the timing cache's key within a target. */
#include <string.h>
#include <xxhash.h>

#include "tactics/tuner.h"

static void add(XXH3_state_t *s, const void *p, size_t n) { XXH3_64bits_update(s, p, n); }
static void add_str(XXH3_state_t *s, const char *str) { add(s, str, strlen(str) + 1); }
static void add_i64(XXH3_state_t *s, int64_t v) { add(s, &v, sizeof v); }

static void add_tensor_sig(XXH3_state_t *s, const tc__tensor *t, bool is_const) {
    if (t == NULL) {
        add_i64(s, -1);
        return;
    }
    add_i64(s, t->dtype);
    add_i64(s, t->rank);
    for (int32_t i = 0; i < t->rank; i++) add_i64(s, t->dims[i]);
    add_i64(s, is_const);
}

uint64_t tc__step_signature(const tc__step_desc *d) {
    XXH3_state_t *s = XXH3_createState();
    if (s == NULL) return 0;
    XXH3_64bits_reset(s);
    add_str(s, d->op_type);
    add_i64(s, d->opset);
    for (int a = 0; d->attrs && a < d->attrs->n; a++) {
        const tc__attr *x = &d->attrs->items[a];
        add_str(s, x->name);
        add_i64(s, x->kind);
        add(s, &x->f, sizeof x->f);
        add_i64(s, x->i);
        if (x->s) add_str(s, x->s);
        if (x->ints) add(s, x->ints, sizeof(int64_t) * x->n);
        if (x->floats) add(s, x->floats, sizeof(float) * x->n);
    }
    for (int i = 0; i < d->n_in; i++) add_tensor_sig(s, d->in[i], d->in_const[i]);
    for (int o = 0; o < d->n_out; o++) add_tensor_sig(s, d->out[o], false);
    add(s, d->epi, sizeof *d->epi);
    add_tensor_sig(s, d->bias, true);
    add_tensor_sig(s, d->residual, false);
    uint64_t h = XXH3_64bits_digest(s);
    XXH3_freeState(s);
    return h;
}
