/* attr.c - typed attribute look-ups with defaults. */
#include "core/attr.h"

#include <string.h>

const tc__attr *tc__attr_find(const tc__attrs *a, const char *name) {
    if (a == NULL) return NULL;
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->items[i].name, name) == 0) return &a->items[i];
    return NULL;
}

bool tc__attr_has(const tc__attrs *a, const char *name) { return tc__attr_find(a, name) != NULL; }

int64_t tc__attr_int(const tc__attrs *a, const char *name, int64_t dflt) {
    const tc__attr *x = tc__attr_find(a, name);
    return x && x->kind == TC__ATTR_INT ? x->i : dflt;
}

float tc__attr_float(const tc__attrs *a, const char *name, float dflt) {
    const tc__attr *x = tc__attr_find(a, name);
    return x && x->kind == TC__ATTR_FLOAT ? x->f : dflt;
}

const char *tc__attr_string(const tc__attrs *a, const char *name, const char *dflt) {
    const tc__attr *x = tc__attr_find(a, name);
    return x && x->kind == TC__ATTR_STRING ? x->s : dflt;
}

size_t tc__attr_ints(const tc__attrs *a, const char *name, const int64_t **out) {
    const tc__attr *x = tc__attr_find(a, name);
    if (x && x->kind == TC__ATTR_INTS) {
        *out = x->ints;
        return x->n;
    }
    *out = NULL;
    return 0;
}

size_t tc__attr_floats(const tc__attrs *a, const char *name, const float **out) {
    const tc__attr *x = tc__attr_find(a, name);
    if (x && x->kind == TC__ATTR_FLOATS) {
        *out = x->floats;
        return x->n;
    }
    *out = NULL;
    return 0;
}

const tc__tensor *tc__attr_tensor(const tc__attrs *a, const char *name) {
    const tc__attr *x = tc__attr_find(a, name);
    return x && x->kind == TC__ATTR_TENSOR ? x->t : NULL;
}
