/*
 * import_attr.c - converts a node's AttributeProtos into tc__attr entries in the graph arena.
 * The kind comes from AttributeProto.type, or, in files older than IR version 2 that lack it,
 * from the one value field that is populated. Subgraphs are recorded by kind only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "onnx/import_internal.h"

typedef Onnx__AttributeProto__AttributeType atype;

static const char *type_name(int t) {
    static const char *const names[] = {"UNDEFINED", "FLOAT",   "INT",    "STRING", "TENSOR",
                                        "GRAPH",     "FLOATS",  "INTS",   "STRINGS", "TENSORS",
                                        "GRAPHS",    "SPARSE_TENSOR", "SPARSE_TENSORS", "TYPE_PROTO",
                                        "TYPE_PROTOS"};
    return t >= 0 && (size_t)t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

/* The type of an attribute without a type field: the one populated value field. */
static tc_status infer_type(const Onnx__AttributeProto *ap, const char *name, const char *node, int *type,
                            tc__err *err) {
    struct { bool set; int type; } fields[] = {
        {ap->has_f, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT},
        {ap->has_i, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT},
        {ap->has_s, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING},
        {ap->t != NULL, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR},
        {ap->has_g, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH},
        {ap->n_floats > 0, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS},
        {ap->n_ints > 0, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS},
        {ap->n_strings > 0, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS},
        {ap->n_tensors > 0, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS},
        {ap->n_graphs > 0, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS},
    };
    int found = 0;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (!fields[i].set) continue;
        if (found++ == 0) *type = fields[i].type;
    }
    if (found == 1) return TC_STATUS_OK;
    return tc__fail(err, TC_STATUS_INVALID_GRAPH, "node '%s': attribute '%s' has no type and %s", node, name,
                    found == 0 ? "no value" : "several value fields");
}

static tc_status oom(tc__err *err, const char *node, const char *name) {
    return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "node '%s': out of memory importing attribute '%s'", node, name);
}

/* Copies n elements of size es into the arena (NULL on overflow or out of memory). */
static void *arena_copy(tc__arena *a, const void *src, size_t n, size_t es) {
    size_t bytes;
    if (tc__mul_overflow_size(n, es, &bytes)) return NULL;
    void *p = tc__arena_alloc(a, bytes, 16);
    if (p != NULL && bytes > 0) memcpy(p, src, bytes);
    return p;
}

static char *arena_bytes_str(tc__arena *a, const ProtobufCBinaryData *b) {
    return tc__arena_strndup(a, b->len ? (const char *)b->data : "", b->len);
}

static tc_status import_one(tc__graph *g, const tc__onnx_tensor_ctx *ctx, const Onnx__AttributeProto *ap,
                            size_t index, const char *node, tc__attr *at, tc__err *err) {
    const char *name = tc__onnx_str(ap->name);
    if (name[0] == '\0')
        return tc__fail(err, TC_STATUS_INVALID_GRAPH, "node '%s': attribute #%zu has no name", node, index);
    if (strncmp(name, TC__ATTR_RESERVED_PREFIX, strlen(TC__ATTR_RESERVED_PREFIX)) == 0)
        return tc__fail(err, TC_STATUS_INVALID_GRAPH, "node '%s': attribute name '%s' is reserved for tailcut", node,
                        name);
    if (ap->ref_attr_name != NULL && ap->ref_attr_name[0] != '\0')
        return tc__fail(err, TC_STATUS_UNSUPPORTED,
                        "node '%s': attribute '%s' refers to function attribute '%s'; references are only valid "
                        "inside functions, which tailcut does not support",
                        node, name, ap->ref_attr_name);
    int type = ap->has_type ? (int)ap->type : 0;
    if (type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED) {
        tc_status st = infer_type(ap, name, node, &type, err);
        if (st != TC_STATUS_OK) return st;
    }
    at->name = tc__arena_strdup(&g->arena, name);
    if (at->name == NULL) return oom(err, node, name);
    switch (type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
        at->kind = TC__ATTR_FLOAT;
        at->f = ap->f;
        return TC_STATUS_OK;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
        at->kind = TC__ATTR_INT;
        at->i = ap->i;
        return TC_STATUS_OK;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
        at->kind = TC__ATTR_STRING;
        at->s = arena_bytes_str(&g->arena, &ap->s);
        return at->s != NULL ? TC_STATUS_OK : oom(err, node, name);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
        at->kind = TC__ATTR_TENSOR;
        if (ap->t == NULL)
            return tc__fail(err, TC_STATUS_CORRUPT_FILE, "node '%s': attribute '%s' has type TENSOR but no tensor",
                            node, name);
        tc__tensor *t = tc__arena_alloc(&g->arena, sizeof *t, 16);
        if (t == NULL) return oom(err, node, name);
        char what[600];
        snprintf(what, sizeof what, "node '%s': tensor of attribute '%s'", node, name);
        tc_status st = tc__onnx_tensor_decode(ctx, ap->t, what, t, err);
        at->t = t;
        return st;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH:
        /* Kept serialized (s, n bytes) so that an If whose condition becomes known can be inlined (import_branch.c). */
        at->kind = TC__ATTR_GRAPH;
        if (ap->has_g && ap->g.len > 0) {
            at->s = arena_copy(&g->arena, ap->g.data, ap->g.len, 1);
            if (at->s == NULL) return oom(err, node, name);
            at->n = ap->g.len;
        }
        return TC_STATUS_OK;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS:
        at->kind = TC__ATTR_GRAPH;
        return TC_STATUS_OK;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
        at->kind = TC__ATTR_FLOATS;
        at->n = ap->n_floats;
        at->floats = arena_copy(&g->arena, ap->floats, ap->n_floats, sizeof(float));
        return at->floats != NULL ? TC_STATUS_OK : oom(err, node, name);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
        at->kind = TC__ATTR_INTS;
        at->n = ap->n_ints;
        at->ints = arena_copy(&g->arena, ap->ints, ap->n_ints, sizeof(int64_t));
        return at->ints != NULL ? TC_STATUS_OK : oom(err, node, name);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: {
        at->kind = TC__ATTR_STRINGS;
        at->n = ap->n_strings;
        size_t bytes;
        if (tc__mul_overflow_size(ap->n_strings, sizeof(char *), &bytes)) return oom(err, node, name);
        const char **v = tc__arena_alloc(&g->arena, bytes, 16);
        if (v == NULL) return oom(err, node, name);
        for (size_t k = 0; k < ap->n_strings; k++)
            if ((v[k] = arena_bytes_str(&g->arena, &ap->strings[k])) == NULL) return oom(err, node, name);
        at->strings = v;
        return TC_STATUS_OK;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS:
        return tc__fail(err, TC_STATUS_UNSUPPORTED,
                        "node '%s': attribute '%s' has type %s, which tailcut does not support", node, name,
                        type_name(type));
    default:
        return tc__fail(err, TC_STATUS_CORRUPT_FILE, "node '%s': attribute '%s' has an unknown type %d", node, name,
                        type);
    }
}

static int cmp_attr_name(const void *a, const void *b) {
    return strcmp((*(const tc__attr *const *)a)->name, (*(const tc__attr *const *)b)->name);
}

/* Fails when two attributes of the node share a name (sorting a temporary array of pointers). */
static tc_status check_unique(const tc__attr *items, size_t n, const char *node, tc__err *err) {
    if (n < 2) return TC_STATUS_OK;
    const tc__attr **p = malloc(n * sizeof *p); /* n * 8 cannot overflow: items already exist */
    if (p == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "node '%s': out of memory", node);
    for (size_t i = 0; i < n; i++) p[i] = &items[i];
    qsort(p, n, sizeof *p, cmp_attr_name);
    tc_status st = TC_STATUS_OK;
    for (size_t i = 1; i < n && st == TC_STATUS_OK; i++)
        if (strcmp(p[i - 1]->name, p[i]->name) == 0)
            st = tc__fail(err, TC_STATUS_INVALID_GRAPH, "node '%s': attribute '%s' appears twice", node, p[i]->name);
    free(p);
    return st;
}

tc_status tc__onnx_attrs_import(tc__graph *g, const tc__onnx_tensor_ctx *ctx, const Onnx__NodeProto *np,
                                const char *node_name, tc__attrs *out, tc__err *err) {
    out->n = 0;
    out->items = NULL;
    size_t n = np->n_attribute;
    if (n == 0) return TC_STATUS_OK;
    size_t bytes;
    if (n > INT32_MAX || tc__mul_overflow_size(n, sizeof(tc__attr), &bytes))
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "node '%s' has too many attributes (%zu)", node_name, n);
    tc__attr *items = tc__arena_alloc(&g->arena, bytes, 16);
    if (items == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "node '%s': out of memory", node_name);
    for (size_t i = 0; i < n; i++) {
        tc_status st = import_one(g, ctx, np->attribute[i], i, node_name, &items[i], err);
        if (st != TC_STATUS_OK) return st;
    }
    tc_status st = check_unique(items, n, node_name, err);
    if (st != TC_STATUS_OK) return st;
    out->n = (int)n;
    out->items = items;
    return TC_STATUS_OK;
}
