/*
 * onnx_test_util.h - helpers shared by the ONNX importer tests: a tiny builder of ModelProtos with
 * the protobuf-c structs (every allocation tracked and freed together), import-and-expect helpers
 * and a reader for the files in tests/data/onnx/. Include after cmocka.h.
 */
#ifndef TC_TEST_ONNX_TEST_UTIL_H
#define TC_TEST_ONNX_TEST_UTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "onnx/onnx_import.h"

typedef struct B {
    void **ptrs;
    size_t n, cap;
    Onnx__ModelProto *m;
    Onnx__GraphProto *g;
} B;

static inline void *b_alloc(B *b, size_t size) {
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 64;
        b->ptrs = realloc(b->ptrs, b->cap * sizeof *b->ptrs);
        assert_non_null(b->ptrs);
    }
    void *p = calloc(1, size ? size : 1);
    assert_non_null(p);
    b->ptrs[b->n++] = p;
    return p;
}

static inline char *b_str(B *b, const char *s) {
    char *d = b_alloc(b, strlen(s) + 1);
    memcpy(d, s, strlen(s) + 1);
    return d;
}

static inline void *b_dup(B *b, const void *src, size_t size) {
    void *d = b_alloc(b, size);
    memcpy(d, src, size);
    return d;
}

/* Appends item to a protobuf-c repeated pointer field (arrays sized for 64 entries). */
#define B_PUSH(b, arr, n, item)                                       \
    do {                                                              \
        if ((arr) == NULL) (arr) = b_alloc((b), 64 * sizeof *(arr));  \
        assert_true((n) < 64);                                        \
        (arr)[(n)++] = (item);                                        \
    } while (0)

static inline void b_opset(B *b, const char *domain, int64_t version) {
    Onnx__OperatorSetIdProto *op = b_alloc(b, sizeof *op);
    onnx__operator_set_id_proto__init(op);
    op->domain = b_str(b, domain);
    op->has_version = 1;
    op->version = version;
    B_PUSH(b, b->m->opset_import, b->m->n_opset_import, op);
}

static inline B *b_new(int64_t opset) {
    B *b = calloc(1, sizeof *b);
    assert_non_null(b);
    b->m = b_alloc(b, sizeof *b->m);
    onnx__model_proto__init(b->m);
    b->g = b_alloc(b, sizeof *b->g);
    onnx__graph_proto__init(b->g);
    b->m->graph = b->g;
    b->m->has_ir_version = 1;
    b->m->ir_version = 8;
    b->m->producer_name = b_str(b, "unit-test");
    b->g->name = b_str(b, "g");
    if (opset > 0) b_opset(b, "", opset);
    return b;
}

static inline void b_free(B *b) {
    for (size_t i = 0; i < b->n; i++) free(b->ptrs[i]);
    free(b->ptrs);
    free(b);
}

static inline Onnx__TensorProto *b_tensor(B *b, const char *name, int dtype, int rank, const int64_t *dims) {
    Onnx__TensorProto *t = b_alloc(b, sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = b_str(b, name);
    t->has_data_type = 1;
    t->data_type = dtype;
    t->n_dims = (size_t)rank;
    t->dims = b_dup(b, dims, sizeof(int64_t) * (size_t)(rank ? rank : 1));
    return t;
}

static inline void b_raw(B *b, Onnx__TensorProto *t, const void *data, size_t size) {
    t->has_raw_data = 1;
    t->raw_data.len = size;
    t->raw_data.data = b_dup(b, data, size);
}

static inline Onnx__TensorProto *b_init(B *b, Onnx__TensorProto *t) {
    B_PUSH(b, b->g->initializer, b->g->n_initializer, t);
    return t;
}

/* dims: "3" known, "batch" symbolic, "?" neither; rank < 0: no shape. elem 0: no tensor type at all. */
static inline Onnx__ValueInfoProto *b_vi(B *b, const char *name, int elem, int rank, const char *const *dims) {
    Onnx__ValueInfoProto *vi = b_alloc(b, sizeof *vi);
    onnx__value_info_proto__init(vi);
    vi->name = b_str(b, name);
    if (elem == 0) return vi;
    Onnx__TypeProto *tp = b_alloc(b, sizeof *tp);
    onnx__type_proto__init(tp);
    Onnx__TypeProto__Tensor *tt = b_alloc(b, sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = elem;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    vi->type = tp;
    if (rank < 0) return vi;
    Onnx__TensorShapeProto *sp = b_alloc(b, sizeof *sp);
    onnx__tensor_shape_proto__init(sp);
    sp->n_dim = (size_t)rank;
    sp->dim = b_alloc(b, sizeof(*sp->dim) * (size_t)(rank ? rank : 1));
    for (int i = 0; i < rank; i++) {
        Onnx__TensorShapeProto__Dimension *d = b_alloc(b, sizeof *d);
        onnx__tensor_shape_proto__dimension__init(d);
        if (dims[i][0] >= '0' && dims[i][0] <= '9') {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = atoll(dims[i]);
        } else if (strcmp(dims[i], "?") != 0) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = b_str(b, dims[i]);
        }
        sp->dim[i] = d;
    }
    tt->shape = sp;
    return vi;
}

static inline void b_input(B *b, Onnx__ValueInfoProto *vi) { B_PUSH(b, b->g->input, b->g->n_input, vi); }
static inline void b_output(B *b, Onnx__ValueInfoProto *vi) { B_PUSH(b, b->g->output, b->g->n_output, vi); }

/* ins/outs: comma-separated names; an empty item ("a,,c") is an absent optional. */
static inline void split_names(B *b, const char *list, size_t *n, char ***out) {
    *n = 0;
    *out = b_alloc(b, 64 * sizeof **out);
    if (list == NULL) return;
    const char *p = list;
    for (;;) {
        const char *q = strchr(p, ',');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        char *s = b_alloc(b, len + 1);
        memcpy(s, p, len);
        (*out)[(*n)++] = s;
        if (q == NULL) break;
        p = q + 1;
    }
}

static inline Onnx__NodeProto *b_node(B *b, const char *name, const char *op, const char *ins, const char *outs) {
    Onnx__NodeProto *n = b_alloc(b, sizeof *n);
    onnx__node_proto__init(n);
    n->name = name ? b_str(b, name) : NULL;
    n->op_type = op ? b_str(b, op) : NULL;
    split_names(b, ins, &n->n_input, &n->input);
    split_names(b, outs, &n->n_output, &n->output);
    B_PUSH(b, b->g->node, b->g->n_node, n);
    return n;
}

static inline Onnx__AttributeProto *b_attr(B *b, Onnx__NodeProto *n, const char *name, int type) {
    Onnx__AttributeProto *a = b_alloc(b, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = b_str(b, name);
    if (type != 0) {
        a->has_type = 1;
        a->type = (Onnx__AttributeProto__AttributeType)type;
    }
    B_PUSH(b, n->attribute, n->n_attribute, a);
    return a;
}

static inline uint8_t *b_pack(B *b, size_t *len) {
    *len = onnx__model_proto__get_packed_size(b->m);
    uint8_t *buf = b_alloc(b, *len);
    onnx__model_proto__pack(b->m, buf);
    return buf;
}

/* Packs and imports; returns the status (graph in *g on success). */
static inline tc_status b_import(B *b, const char *base_dir, tc__graph **g, tc__err *err) {
    size_t len;
    uint8_t *buf = b_pack(b, &len);
    memset(err, 0, sizeof *err);
    tc_status st = tc__onnx_import(buf, len, base_dir, g, err);
    if (st != TC_STATUS_OK) {
        assert_null(*g);
        assert_true(err->msg[0] != '\0');
    } else {
        assert_non_null(*g);
    }
    return st;
}

/* Imports, expects failure with status and a message containing each of the NULL-terminated needles. */
static inline void expect_fail(B *b, const char *base_dir, tc_status want, ...) {
    tc__graph *g = NULL;
    tc__err err;
    tc_status st = b_import(b, base_dir, &g, &err);
    if (st != want) fprintf(stderr, "expected status %d, got %d: %s\n", want, st, err.msg);
    assert_int_equal(st, want);
    va_list ap;
    va_start(ap, want);
    for (const char *needle; (needle = va_arg(ap, const char *)) != NULL;) {
        if (strstr(err.msg, needle) == NULL) fprintf(stderr, "message '%s' lacks '%s'\n", err.msg, needle);
        assert_non_null(strstr(err.msg, needle));
    }
    va_end(ap);
}

static inline tc__graph *expect_ok(B *b, const char *base_dir) {
    tc__graph *g = NULL;
    tc__err err;
    tc_status st = b_import(b, base_dir, &g, &err);
    if (st != TC_STATUS_OK) fprintf(stderr, "import failed: %s\n", err.msg);
    assert_int_equal(st, TC_STATUS_OK);
    return g;
}

static inline const tc__value *value(const tc__graph *g, const char *name) {
    int32_t i = tc__graph_find_value(g, name);
    if (i < 0) fprintf(stderr, "no value '%s'\n", name);
    assert_true(i >= 0);
    return &g->values[i];
}

static inline const tc__tensor *init_of(const tc__graph *g, const char *name) {
    const tc__value *v = value(g, name);
    assert_non_null(v->init);
    assert_ptr_equal(v->init, v->info.value);
    assert_int_equal((uintptr_t)v->init->data % 64, 0);
    return v->init;
}

/* Reads tests/data/onnx/<name> into a malloc'd buffer. */
static inline uint8_t *read_file(const char *name, size_t *size) {
    char path[512];
    snprintf(path, sizeof path, "%s/onnx/%s", TC_TEST_DATA_DIR, name);
    FILE *f = fopen(path, "rb");
    if (f == NULL) fprintf(stderr, "cannot open %s\n", path);
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    uint8_t *buf = malloc((size_t)n);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return buf;
}

#endif
