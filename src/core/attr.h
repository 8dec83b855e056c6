/*
 * attr.h - node attributes (the ONNX AttributeProto kinds tailcut uses) and
 * typed look-ups with defaults. Kernels and shape inference read attributes
 * only through these accessors.
 */
#ifndef TC_CORE_ATTR_H
#define TC_CORE_ATTR_H

#include <stdbool.h>
#include <stdint.h>

#include "core/tensor.h"

typedef enum tc__attr_kind {
    TC__ATTR_FLOAT = 1,
    TC__ATTR_INT = 2,
    TC__ATTR_STRING = 3,
    TC__ATTR_TENSOR = 4,
    TC__ATTR_GRAPH = 5,  /* a subgraph: GRAPH keeps the serialized GraphProto in s (n bytes) for If folding; GRAPHS none */
    TC__ATTR_FLOATS = 6,
    TC__ATTR_INTS = 7,
    TC__ATTR_STRINGS = 8,
} tc__attr_kind;

typedef struct tc__attr {
    const char *name;
    tc__attr_kind kind;
    float f;
    int64_t i;
    const char *s;           /* STRING: NUL-terminated; GRAPH: n bytes, or NULL */
    size_t n;                /* FLOATS/INTS/STRINGS: element count */
    const float *floats;
    const int64_t *ints;
    const char *const *strings;
    const tc__tensor *t;     /* TENSOR */
} tc__attr;

typedef struct tc__attrs {
    int n;
    const tc__attr *items;
} tc__attrs;

/* Returns the attribute or NULL. */
const tc__attr *tc__attr_find(const tc__attrs *a, const char *name);
bool tc__attr_has(const tc__attrs *a, const char *name);
/* Typed getters: the default when absent; an attribute of another kind also yields the default. */
int64_t tc__attr_int(const tc__attrs *a, const char *name, int64_t dflt);
float tc__attr_float(const tc__attrs *a, const char *name, float dflt);
const char *tc__attr_string(const tc__attrs *a, const char *name, const char *dflt);
/* INTS/FLOATS: returns the count and sets *out (NULL and 0 when absent). */
size_t tc__attr_ints(const tc__attrs *a, const char *name, const int64_t **out);
size_t tc__attr_floats(const tc__attrs *a, const char *name, const float **out);
const tc__tensor *tc__attr_tensor(const tc__attrs *a, const char *name);

#endif
