/*
 * test_onnx_import.c - unit tests of the ONNX importer: models built here with the protobuf-c
 * structs (every attribute kind, raw and typed initializers, symbolic dims, opsets, external data,
 * error cases) and the tiny files in tests/data/onnx/ written by make_test_data.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "onnx.pb-c.h"
#include "onnx/onnx_import.h"

/* ---- A tiny builder of ModelProtos; every allocation is tracked and freed by b_free. ---- */

typedef struct B {
    void **ptrs;
    size_t n, cap;
    Onnx__ModelProto *m;
    Onnx__GraphProto *g;
} B;

static void *b_alloc(B *b, size_t size) {
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

static char *b_str(B *b, const char *s) {
    char *d = b_alloc(b, strlen(s) + 1);
    memcpy(d, s, strlen(s) + 1);
    return d;
}

static void *b_dup(B *b, const void *src, size_t size) {
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

static void b_opset(B *b, const char *domain, int64_t version) {
    Onnx__OperatorSetIdProto *op = b_alloc(b, sizeof *op);
    onnx__operator_set_id_proto__init(op);
    op->domain = b_str(b, domain);
    op->has_version = 1;
    op->version = version;
    B_PUSH(b, b->m->opset_import, b->m->n_opset_import, op);
}

static B *b_new(int64_t opset) {
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

static void b_free(B *b) {
    for (size_t i = 0; i < b->n; i++) free(b->ptrs[i]);
    free(b->ptrs);
    free(b);
}

static Onnx__TensorProto *b_tensor(B *b, const char *name, int dtype, int rank, const int64_t *dims) {
    Onnx__TensorProto *t = b_alloc(b, sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = b_str(b, name);
    t->has_data_type = 1;
    t->data_type = dtype;
    t->n_dims = (size_t)rank;
    t->dims = b_dup(b, dims, sizeof(int64_t) * (size_t)(rank ? rank : 1));
    return t;
}

static void b_raw(B *b, Onnx__TensorProto *t, const void *data, size_t size) {
    t->has_raw_data = 1;
    t->raw_data.len = size;
    t->raw_data.data = b_dup(b, data, size);
}

static Onnx__TensorProto *b_init(B *b, Onnx__TensorProto *t) {
    B_PUSH(b, b->g->initializer, b->g->n_initializer, t);
    return t;
}

/* dims: "3" known, "batch" symbolic, "?" neither; rank < 0: no shape. elem 0: no tensor type at all. */
static Onnx__ValueInfoProto *b_vi(B *b, const char *name, int elem, int rank, const char *const *dims) {
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

static void b_input(B *b, Onnx__ValueInfoProto *vi) { B_PUSH(b, b->g->input, b->g->n_input, vi); }
static void b_output(B *b, Onnx__ValueInfoProto *vi) { B_PUSH(b, b->g->output, b->g->n_output, vi); }

/* ins/outs: comma-separated names; an empty item ("a,,c") is an absent optional. */
static void split_names(B *b, const char *list, size_t *n, char ***out) {
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

static Onnx__NodeProto *b_node(B *b, const char *name, const char *op, const char *ins, const char *outs) {
    Onnx__NodeProto *n = b_alloc(b, sizeof *n);
    onnx__node_proto__init(n);
    n->name = name ? b_str(b, name) : NULL;
    n->op_type = op ? b_str(b, op) : NULL;
    split_names(b, ins, &n->n_input, &n->input);
    split_names(b, outs, &n->n_output, &n->output);
    B_PUSH(b, b->g->node, b->g->n_node, n);
    return n;
}

static Onnx__AttributeProto *b_attr(B *b, Onnx__NodeProto *n, const char *name, int type) {
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

static uint8_t *b_pack(B *b, size_t *len) {
    *len = onnx__model_proto__get_packed_size(b->m);
    uint8_t *buf = b_alloc(b, *len);
    onnx__model_proto__pack(b->m, buf);
    return buf;
}

/* Packs and imports; returns the status (graph in *g on success). */
static tc_status b_import(B *b, const char *base_dir, tc__graph **g, tc__err *err) {
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
static void expect_fail(B *b, const char *base_dir, tc_status want, ...) {
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

static tc__graph *expect_ok(B *b, const char *base_dir) {
    tc__graph *g = NULL;
    tc__err err;
    tc_status st = b_import(b, base_dir, &g, &err);
    if (st != TC_STATUS_OK) fprintf(stderr, "import failed: %s\n", err.msg);
    assert_int_equal(st, TC_STATUS_OK);
    return g;
}

static const tc__value *value(const tc__graph *g, const char *name) {
    int32_t i = tc__graph_find_value(g, name);
    if (i < 0) fprintf(stderr, "no value '%s'\n", name);
    assert_true(i >= 0);
    return &g->values[i];
}

static const tc__tensor *init_of(const tc__graph *g, const char *name) {
    const tc__value *v = value(g, name);
    assert_non_null(v->init);
    assert_ptr_equal(v->init, v->info.value);
    assert_int_equal((uintptr_t)v->init->data % 64, 0);
    return v->init;
}

static const int64_t d2x3[] = {2, 3};

/* ---- Tests ---- */

static void test_basic_graph(void **state) {
    (void)state;
    B *b = b_new(13);
    const char *xd[] = {"batch", "3", "?", "4"};
    b_input(b, b_vi(b, "x", TC_DTYPE_FLOAT32, 4, xd));
    b_input(b, b_vi(b, "nos", TC_DTYPE_INT64, -1, NULL));
    const float w[] = {1.5f, -2.0f, 3.25f, -4.0f, 5.5f, -6.75f};
    b_raw(b, b_init(b, b_tensor(b, "w", TC_DTYPE_FLOAT32, 2, d2x3)), w, sizeof w);
    b_input(b, b_vi(b, "w", TC_DTYPE_FLOAT32, 2, (const char *[]){"2", "3"})); /* IR<4 style */
    b_node(b, "n0", "Clip", "x,,w", "y");
    b_node(b, NULL, "Split", "y", "s0,,s2");
    const char *yd[] = {"batch", "seq"};
    b_output(b, b_vi(b, "s2", TC_DTYPE_FLOAT32, 2, yd));
    tc__graph *g = expect_ok(b, NULL);

    assert_int_equal(g->opset, 13);
    assert_int_equal(g->ir_version, 8);
    assert_string_equal(g->producer_name, "unit-test");
    assert_string_equal(g->name, "g");
    assert_int_equal(g->n_inputs, 2); /* "w" is an initializer, not a graph input */
    const tc__value *x = &g->values[g->inputs[0]];
    assert_string_equal(x->name, "x");
    assert_true(x->is_input);
    assert_null(x->init);
    assert_int_equal(x->info.dtype, TC_DTYPE_FLOAT32);
    assert_int_equal(x->info.shape.rank, 4);
    assert_int_equal(x->info.shape.dims[0].value, -1);
    assert_true(x->info.shape.dims[0].sym >= 0);
    assert_string_equal(g->symbols[x->info.shape.dims[0].sym], "batch");
    assert_int_equal(x->info.shape.dims[1].value, 3);
    assert_int_equal(x->info.shape.dims[2].value, -1);
    assert_int_equal(x->info.shape.dims[2].sym, TC__SYM_UNKNOWN);
    assert_int_equal(x->info.shape.dims[3].value, 4);
    const tc__value *nos = &g->values[g->inputs[1]];
    assert_string_equal(nos->name, "nos");
    assert_int_equal(nos->info.dtype, TC_DTYPE_INT64);
    assert_int_equal(nos->info.shape.rank, TC__RANK_UNKNOWN);

    const tc__tensor *t = init_of(g, "w");
    assert_false(value(g, "w")->is_input);
    assert_int_equal(t->dtype, TC_DTYPE_FLOAT32);
    assert_int_equal(t->rank, 2);
    assert_int_equal(t->nbytes, sizeof w);
    assert_memory_equal(t->data, w, sizeof w);
    assert_int_equal(value(g, "w")->info.shape.dims[1].value, 3);
    assert_int_equal(value(g, "w")->info.symval_len, -1); /* not int64 */

    assert_int_equal(g->n_nodes, 2);
    const tc__node *n0 = &g->nodes[0];
    assert_string_equal(n0->name, "n0");
    assert_string_equal(n0->op_type, "Clip");
    assert_string_equal(n0->domain, "");
    assert_int_equal(n0->n_in, 3);
    assert_int_equal(n0->in[0], tc__graph_find_value(g, "x"));
    assert_int_equal(n0->in[1], -1);
    assert_int_equal(n0->in[2], tc__graph_find_value(g, "w"));
    assert_int_equal(n0->out[0], tc__graph_find_value(g, "y"));
    const tc__node *n1 = &g->nodes[1];
    assert_true(n1->name[0] != '\0'); /* generated */
    assert_int_equal(n1->n_out, 3);
    assert_int_equal(n1->out[1], -1);
    assert_int_equal(n1->out[2], tc__graph_find_value(g, "s2"));

    assert_int_equal(g->n_outputs, 1);
    const tc__value *s2 = &g->values[g->outputs[0]];
    assert_true(s2->is_output);
    assert_int_equal(s2->info.dtype, TC_DTYPE_FLOAT32);
    assert_int_equal(s2->info.shape.rank, 2);
    assert_int_equal(s2->info.shape.dims[0].sym, x->info.shape.dims[0].sym); /* same symbol, interned once */
    assert_string_equal(g->symbols[s2->info.shape.dims[1].sym], "seq");
    assert_int_equal(g->n_symbols, 2);
    tc__graph_destroy(g);
    b_free(b);
}

static void test_opset_domains(void **state) {
    (void)state;
    B *b = b_new(0);
    b_opset(b, "com.microsoft", 1);
    b_opset(b, "ai.onnx", 17);
    b_node(b, "n", "Relu", "x", "y");
    b_node(b, "m", "Relu", "y", "z")->domain = b_str(b, "ai.onnx");
    tc__graph *g = expect_ok(b, NULL);
    assert_int_equal(g->opset, 17);
    assert_string_equal(g->nodes[1].domain, ""); /* normalised */
    tc__graph_destroy(g);
    b_free(b);

    b = b_new(0);
    b_opset(b, "com.microsoft", 1);
    expect_fail(b, NULL, TC_STATUS_INVALID_GRAPH, "no opset", "default", NULL);
    b_free(b);

    b = b_new(13);
    b_opset(b, "", 11);
    expect_fail(b, NULL, TC_STATUS_INVALID_GRAPH, "13", "11", NULL);
    b_free(b);

    b = b_new(13);
    b->m->graph = NULL;
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "no graph", NULL);
    b_free(b);
}

static void test_attributes_typed(void **state) {
    (void)state;
    B *b = b_new(13);
    Onnx__NodeProto *n = b_node(b, "n", "Foo", "x", "y");
    n->domain = b_str(b, "com.example");
    Onnx__AttributeProto *a;
    a = b_attr(b, n, "f", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    a->has_f = 1, a->f = -0.375f;
    a = b_attr(b, n, "i", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1, a->i = -1234567890123LL;
    a = b_attr(b, n, "s", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    a->has_s = 1, a->s.data = (uint8_t *)b_str(b, "nearest"), a->s.len = 7;
    a = b_attr(b, n, "fs", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
    const float fs[] = {1.0f, -2.5f, 3.75f};
    a->n_floats = 3, a->floats = b_dup(b, fs, sizeof fs);
    a = b_attr(b, n, "is", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    const int64_t is[] = {7, -8, INT64_MAX};
    a->n_ints = 3, a->ints = b_dup(b, is, sizeof is);
    a = b_attr(b, n, "ss", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
    a->n_strings = 2;
    a->strings = b_alloc(b, 2 * sizeof *a->strings);
    a->strings[0] = (ProtobufCBinaryData){2, (uint8_t *)b_str(b, "ab")};
    a->strings[1] = (ProtobufCBinaryData){0, NULL};
    a = b_attr(b, n, "t", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
    const int64_t d3[] = {3};
    a->t = b_tensor(b, "", TC_DTYPE_INT64, 1, d3);
    const int64_t tv[] = {4, -5, 6};
    a->t->n_int64_data = 3, a->t->int64_data = b_dup(b, tv, sizeof tv);
    a = b_attr(b, n, "empty_ints", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a = b_attr(b, n, "g", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
    Onnx__GraphProto sub = ONNX__GRAPH_PROTO__INIT;
    sub.name = "body";
    a->has_g = 1;
    a->g.len = onnx__graph_proto__get_packed_size(&sub);
    a->g.data = b_alloc(b, a->g.len);
    onnx__graph_proto__pack(&sub, a->g.data);
    a = b_attr(b, n, "gs", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS);
    a->n_graphs = 1;
    a->graphs = b_alloc(b, sizeof *a->graphs);
    a->graphs[0] = (ProtobufCBinaryData){0, NULL};

    tc__graph *g = expect_ok(b, NULL);
    const tc__node *nd = &g->nodes[0];
    assert_string_equal(nd->domain, "com.example");
    assert_null(nd->schema);
    const tc__attrs *at = &nd->attrs;
    assert_int_equal(at->n, 10);
    assert_true(tc__attr_float(at, "f", 0) == -0.375f);
    assert_int_equal(tc__attr_int(at, "i", 0), -1234567890123LL);
    assert_string_equal(tc__attr_string(at, "s", ""), "nearest");
    const float *pf;
    assert_int_equal(tc__attr_floats(at, "fs", &pf), 3);
    assert_memory_equal(pf, fs, sizeof fs);
    const int64_t *pi;
    assert_int_equal(tc__attr_ints(at, "is", &pi), 3);
    assert_memory_equal(pi, is, sizeof is);
    assert_int_equal(tc__attr_ints(at, "empty_ints", &pi), 0);
    assert_int_equal(tc__attr_find(at, "empty_ints")->kind, TC__ATTR_INTS);
    const tc__attr *ss = tc__attr_find(at, "ss");
    assert_int_equal(ss->kind, TC__ATTR_STRINGS);
    assert_int_equal(ss->n, 2);
    assert_string_equal(ss->strings[0], "ab");
    assert_string_equal(ss->strings[1], "");
    const tc__tensor *t = tc__attr_tensor(at, "t");
    assert_non_null(t);
    assert_int_equal(t->dtype, TC_DTYPE_INT64);
    assert_memory_equal(t->data, tv, sizeof tv);
    assert_int_equal(tc__attr_find(at, "g")->kind, TC__ATTR_GRAPH);
    assert_int_equal(tc__attr_find(at, "gs")->kind, TC__ATTR_GRAPH);
    tc__graph_destroy(g);
    b_free(b);
}

/* Files older than IR version 2 have no AttributeProto.type: the populated field decides. */
static void test_attributes_untyped(void **state) {
    (void)state;
    B *b = b_new(13);
    Onnx__NodeProto *n = b_node(b, "n", "Foo", "x", "y");
    Onnx__AttributeProto *a;
    a = b_attr(b, n, "f", 0);
    a->has_f = 1, a->f = 2.5f;
    a = b_attr(b, n, "i", 0);
    a->has_i = 1, a->i = 3;
    a = b_attr(b, n, "s", 0);
    a->has_s = 1, a->s.data = (uint8_t *)b_str(b, "xy"), a->s.len = 2;
    a = b_attr(b, n, "is", 0);
    const int64_t is[] = {1, 2};
    a->n_ints = 2, a->ints = b_dup(b, is, sizeof is);
    a = b_attr(b, n, "fs", 0);
    const float fs[] = {0.5f};
    a->n_floats = 1, a->floats = b_dup(b, fs, sizeof fs);
    a = b_attr(b, n, "t", 0);
    const int64_t d1[] = {1};
    a->t = b_tensor(b, "", TC_DTYPE_FLOAT32, 1, d1);
    const float tv = 9.0f;
    b_raw(b, a->t, &tv, sizeof tv);
    tc__graph *g = expect_ok(b, NULL);
    const tc__attrs *at = &g->nodes[0].attrs;
    assert_int_equal(tc__attr_find(at, "f")->kind, TC__ATTR_FLOAT);
    assert_true(tc__attr_float(at, "f", 0) == 2.5f);
    assert_int_equal(tc__attr_int(at, "i", 0), 3);
    assert_string_equal(tc__attr_string(at, "s", ""), "xy");
    assert_int_equal(tc__attr_find(at, "is")->kind, TC__ATTR_INTS);
    assert_int_equal(tc__attr_find(at, "fs")->kind, TC__ATTR_FLOATS);
    assert_true(*(const float *)tc__attr_tensor(at, "t")->data == 9.0f);
    tc__graph_destroy(g);
    b_free(b);

    b = b_new(13);
    n = b_node(b, "n", "Foo", "x", "y");
    b_attr(b, n, "nothing", 0);
    expect_fail(b, NULL, TC_STATUS_INVALID_GRAPH, "'nothing'", "no value", NULL);
    b_free(b);

    b = b_new(13);
    n = b_node(b, "n", "Foo", "x", "y");
    a = b_attr(b, n, "both", 0);
    a->has_f = 1, a->has_i = 1;
    expect_fail(b, NULL, TC_STATUS_INVALID_GRAPH, "'both'", "several", NULL);
    b_free(b);
}

static void test_attribute_errors(void **state) {
    (void)state;
    B *b = b_new(13);
    Onnx__NodeProto *n = b_node(b, "node7", "Foo", "x", "y");
    b_attr(b, n, "r", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)->ref_attr_name = b_str(b, "outer");
    expect_fail(b, NULL, TC_STATUS_UNSUPPORTED, "node7", "'r'", "outer", NULL);
    b_free(b);

    b = b_new(13);
    n = b_node(b, "node7", "Foo", "x", "y");
    b_attr(b, n, "ts", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS);
    expect_fail(b, NULL, TC_STATUS_UNSUPPORTED, "'ts'", "TENSORS", NULL);
    b_free(b);

    b = b_new(13);
    n = b_node(b, "node7", "Foo", "x", "y");
    b_attr(b, n, "sp", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR);
    expect_fail(b, NULL, TC_STATUS_UNSUPPORTED, "SPARSE_TENSOR", NULL);
    b_free(b);

    b = b_new(13);
    n = b_node(b, "node7", "Foo", "x", "y");
    b_attr(b, n, "weird", 99);
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'weird'", "99", NULL);
    b_free(b);

    b = b_new(13);
    n = b_node(b, "node7", "Foo", "x", "y");
    b_attr(b, n, "dup", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    b_attr(b, n, "other", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    b_attr(b, n, "dup", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    expect_fail(b, NULL, TC_STATUS_INVALID_GRAPH, "'dup'", "twice", NULL);
    b_free(b);

    b = b_new(13);
    n = b_node(b, "node7", "Foo", "x", "y");
    b_attr(b, n, "", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    expect_fail(b, NULL, TC_STATUS_INVALID_GRAPH, "node7", "no name", NULL);
    b_free(b);

    b = b_new(13);
    n = b_node(b, "node7", "Constant", NULL, "y");
    b_attr(b, n, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'value'", "no tensor", NULL);
    b_free(b);

    /* A bad tensor inside an attribute names the node and the attribute. */
    b = b_new(13);
    n = b_node(b, "node7", "Constant", NULL, "y");
    const int64_t d1[] = {5};
    b_attr(b, n, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR)->t = b_tensor(b, "", TC_DTYPE_FLOAT32, 1, d1);
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "node7", "'value'", "expected 5", NULL);
    b_free(b);
}

static void test_nodes_and_names(void **state) {
    (void)state;
    B *b = b_new(13);
    b_node(b, "bad", NULL, "x", "y");
    expect_fail(b, NULL, TC_STATUS_INVALID_GRAPH, "'bad'", "op_type", NULL);
    b_free(b);

    b = b_new(13);
    b_node(b, "bad", "", "x", "y");
    expect_fail(b, NULL, TC_STATUS_INVALID_GRAPH, "op_type", NULL);
    b_free(b);

    b = b_new(13);
    b_input(b, b_vi(b, "x", TC_DTYPE_FLOAT32, 0, NULL));
    b_input(b, b_vi(b, "x", TC_DTYPE_FLOAT32, 0, NULL));
    expect_fail(b, NULL, TC_STATUS_INVALID_GRAPH, "'x'", NULL);
    b_free(b);

    b = b_new(13);
    const int64_t d1[] = {1};
    const float one = 1.0f;
    b_raw(b, b_init(b, b_tensor(b, "w", TC_DTYPE_FLOAT32, 1, d1)), &one, 4);
    b_raw(b, b_init(b, b_tensor(b, "w", TC_DTYPE_FLOAT32, 1, d1)), &one, 4);
    expect_fail(b, NULL, TC_STATUS_INVALID_GRAPH, "'w'", NULL);
    b_free(b);

    b = b_new(13);
    b_raw(b, b_init(b, b_tensor(b, "", TC_DTYPE_FLOAT32, 1, d1)), &one, 4);
    expect_fail(b, NULL, TC_STATUS_INVALID_GRAPH, "initializer #0", "no name", NULL);
    b_free(b);

    b = b_new(13);
    b_raw(b, b_init(b, b_tensor(b, "w", TC_DTYPE_FLOAT32, 1, d1)), &one, 4);
    b_input(b, b_vi(b, "w", TC_DTYPE_INT64, 1, (const char *[]){"1"}));
    expect_fail(b, NULL, TC_STATUS_INVALID_GRAPH, "'w'", "int64", "float32", NULL);
    b_free(b);

    b = b_new(13);
    b_node(b, "n", "Relu", "x", "y");
    b_output(b, b_vi(b, "y", TC_DTYPE_FLOAT32, 0, NULL));
    b_output(b, b_vi(b, "y", TC_DTYPE_FLOAT32, 0, NULL));
    expect_fail(b, NULL, TC_STATUS_INVALID_GRAPH, "'y'", "twice", NULL);
    b_free(b);

    /* A graph input that is also an output keeps its input information. */
    b = b_new(13);
    b_input(b, b_vi(b, "x", TC_DTYPE_FLOAT32, 1, (const char *[]){"5"}));
    b_output(b, b_vi(b, "x", TC_DTYPE_FLOAT32, 1, (const char *[]){"n"}));
    b_output(b, b_vi(b, "undeclared", 0, 0, NULL));
    tc__graph *g = expect_ok(b, NULL);
    assert_int_equal(g->n_outputs, 2);
    const tc__value *x = value(g, "x");
    assert_true(x->is_input && x->is_output);
    assert_int_equal(x->info.shape.dims[0].value, 5);
    const tc__value *u = value(g, "undeclared");
    assert_int_equal(u->info.dtype, TC_DTYPE_UNDEFINED);
    assert_int_equal(u->info.shape.rank, TC__RANK_UNKNOWN);
    tc__graph_destroy(g);
    b_free(b);
}

static void test_value_types(void **state) {
    (void)state;
    B *b = b_new(13);
    Onnx__ValueInfoProto *vi = b_vi(b, "seq", TC_DTYPE_FLOAT32, 0, NULL);
    vi->type->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
    vi->type->sequence_type = (ProtobufCBinaryData){0, NULL};
    b_input(b, vi);
    expect_fail(b, NULL, TC_STATUS_UNSUPPORTED, "'seq'", "sequence", NULL);
    b_free(b);

    b = b_new(13);
    b_input(b, b_vi(b, "s", 8 /* string */, 1, (const char *[]){"2"}));
    expect_fail(b, NULL, TC_STATUS_UNSUPPORTED, "'s'", "string", NULL);
    b_free(b);

    b = b_new(13);
    const char *nine[] = {"1", "1", "1", "1", "1", "1", "1", "1", "1"};
    b_output(b, b_vi(b, "big", TC_DTYPE_FLOAT32, 9, nine));
    expect_fail(b, NULL, TC_STATUS_UNSUPPORTED, "'big'", "rank 9", NULL);
    b_free(b);

    /* A negative dim_value (written by some exporters for a dynamic dim) is unknown; rank 0 is a scalar. */
    b = b_new(13);
    vi = b_vi(b, "x", TC_DTYPE_BFLOAT16, 2, (const char *[]){"7", "8"});
    vi->type->tensor_type->shape->dim[1]->dim_value = -1;
    b_input(b, vi);
    b_input(b, b_vi(b, "scalar", TC_DTYPE_UINT8, 0, NULL));
    tc__graph *g = expect_ok(b, NULL);
    const tc__value *x = value(g, "x");
    assert_int_equal(x->info.dtype, TC_DTYPE_BFLOAT16);
    assert_int_equal(x->info.shape.dims[0].value, 7);
    assert_int_equal(x->info.shape.dims[1].value, -1);
    assert_int_equal(value(g, "scalar")->info.shape.rank, 0);
    tc__graph_destroy(g);
    b_free(b);
}

/* Initializers through every typed field, with conversions and float16/bfloat16 bit patterns. */
static void test_typed_initializers(void **state) {
    (void)state;
    B *b = b_new(13);
    const int64_t d4[] = {4}, d2[] = {2}, d0[] = {0};
    Onnx__TensorProto *t;
    const int32_t i8[] = {-128, 127, -1, 5};
    t = b_init(b, b_tensor(b, "i8", TC_DTYPE_INT8, 1, d4));
    t->n_int32_data = 4, t->int32_data = b_dup(b, i8, sizeof i8);
    const int32_t u8[] = {0, 255, 7, 128};
    t = b_init(b, b_tensor(b, "u8", TC_DTYPE_UINT8, 1, d4));
    t->n_int32_data = 4, t->int32_data = b_dup(b, u8, sizeof u8);
    const int32_t i16[] = {-32768, 32767, -2, 300};
    t = b_init(b, b_tensor(b, "i16", TC_DTYPE_INT16, 1, d4));
    t->n_int32_data = 4, t->int32_data = b_dup(b, i16, sizeof i16);
    const int32_t u16[] = {65535, 0, 1, 40000};
    t = b_init(b, b_tensor(b, "u16", TC_DTYPE_UINT16, 1, d4));
    t->n_int32_data = 4, t->int32_data = b_dup(b, u16, sizeof u16);
    const int32_t bl[] = {1, 0, 0, 1};
    t = b_init(b, b_tensor(b, "bool", TC_DTYPE_BOOL, 1, d4));
    t->n_int32_data = 4, t->int32_data = b_dup(b, bl, sizeof bl);
    /* float16 1.0, -2.5, 65504 and a NaN; bfloat16 1.0, -2.0, 0.5, +inf */
    const int32_t f16[] = {0x3C00, 0xC100, 0x7BFF, 0x7E00};
    t = b_init(b, b_tensor(b, "f16", TC_DTYPE_FLOAT16, 1, d4));
    t->n_int32_data = 4, t->int32_data = b_dup(b, f16, sizeof f16);
    const int32_t bf16[] = {0x3F80, 0xC000, 0x3F00, 0x7F80};
    t = b_init(b, b_tensor(b, "bf16", TC_DTYPE_BFLOAT16, 1, d4));
    t->n_int32_data = 4, t->int32_data = b_dup(b, bf16, sizeof bf16);
    const int32_t i32[] = {INT32_MIN, INT32_MAX};
    t = b_init(b, b_tensor(b, "i32", TC_DTYPE_INT32, 1, d2));
    t->n_int32_data = 2, t->int32_data = b_dup(b, i32, sizeof i32);
    const uint64_t u32[] = {UINT32_MAX, 12};
    t = b_init(b, b_tensor(b, "u32", TC_DTYPE_UINT32, 1, d2));
    t->n_uint64_data = 2, t->uint64_data = b_dup(b, u32, sizeof u32);
    const uint64_t u64[] = {UINT64_MAX, 3};
    t = b_init(b, b_tensor(b, "u64", TC_DTYPE_UINT64, 1, d2));
    t->n_uint64_data = 2, t->uint64_data = b_dup(b, u64, sizeof u64);
    const double f64[] = {-1.0 / 3.0, 1e300};
    t = b_init(b, b_tensor(b, "f64", TC_DTYPE_FLOAT64, 1, d2));
    t->n_double_data = 2, t->double_data = b_dup(b, f64, sizeof f64);
    const float f32[] = {0.1f, -7.0f};
    t = b_init(b, b_tensor(b, "f32", TC_DTYPE_FLOAT32, 1, d2));
    t->n_float_data = 2, t->float_data = b_dup(b, f32, sizeof f32);
    const int64_t i64[] = {-1, 224, 224};
    const int64_t d3[] = {3};
    t = b_init(b, b_tensor(b, "i64", TC_DTYPE_INT64, 1, d3));
    t->n_int64_data = 3, t->int64_data = b_dup(b, i64, sizeof i64);
    const int64_t sc = 42;
    t = b_init(b, b_tensor(b, "scalar", TC_DTYPE_INT64, 0, d3));
    b_raw(b, t, &sc, sizeof sc);
    b_init(b, b_tensor(b, "empty", TC_DTYPE_FLOAT32, 1, d0)); /* no data at all: 0 elements */
    const int64_t nine[] = {9};
    const int64_t nine_v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    t = b_init(b, b_tensor(b, "i64_9", TC_DTYPE_INT64, 1, nine));
    b_raw(b, t, nine_v, sizeof nine_v);
    const uint16_t raw16[] = {0x3C00, 0xBC00};
    b_raw(b, b_init(b, b_tensor(b, "f16raw", TC_DTYPE_FLOAT16, 1, d2)), raw16, sizeof raw16);
    const uint8_t rawbool[] = {0, 1, 2, 255};
    b_raw(b, b_init(b, b_tensor(b, "boolraw", TC_DTYPE_BOOL, 1, d4)), rawbool, sizeof rawbool);

    tc__graph *g = expect_ok(b, NULL);
    const int8_t e_i8[] = {-128, 127, -1, 5};
    assert_memory_equal(init_of(g, "i8")->data, e_i8, 4);
    const uint8_t e_u8[] = {0, 255, 7, 128};
    assert_memory_equal(init_of(g, "u8")->data, e_u8, 4);
    const int16_t e_i16[] = {-32768, 32767, -2, 300};
    assert_memory_equal(init_of(g, "i16")->data, e_i16, 8);
    const uint16_t e_u16[] = {65535, 0, 1, 40000};
    assert_memory_equal(init_of(g, "u16")->data, e_u16, 8);
    const uint8_t e_bl[] = {1, 0, 0, 1};
    assert_memory_equal(init_of(g, "bool")->data, e_bl, 4);
    const tc__tensor *h = init_of(g, "f16");
    assert_int_equal(h->nbytes, 8);
    assert_true(tc__tensor_get_f64(h, 0) == 1.0);
    assert_true(tc__tensor_get_f64(h, 1) == -2.5);
    assert_true(tc__tensor_get_f64(h, 2) == 65504.0);
    assert_true(tc__tensor_get_f64(h, 3) != tc__tensor_get_f64(h, 3)); /* NaN */
    const tc__tensor *bf = init_of(g, "bf16");
    assert_true(tc__tensor_get_f64(bf, 0) == 1.0);
    assert_true(tc__tensor_get_f64(bf, 1) == -2.0);
    assert_true(tc__tensor_get_f64(bf, 2) == 0.5);
    assert_true(tc__tensor_get_f64(bf, 3) > 1e300);
    assert_memory_equal(init_of(g, "i32")->data, i32, sizeof i32);
    const uint32_t e_u32[] = {UINT32_MAX, 12};
    assert_memory_equal(init_of(g, "u32")->data, e_u32, sizeof e_u32);
    assert_memory_equal(init_of(g, "u64")->data, u64, sizeof u64);
    assert_memory_equal(init_of(g, "f64")->data, f64, sizeof f64);
    assert_memory_equal(init_of(g, "f32")->data, f32, sizeof f32);
    assert_memory_equal(init_of(g, "i64")->data, i64, sizeof i64);
    const tc__tensor *e = init_of(g, "empty");
    assert_int_equal(e->rank, 1);
    assert_int_equal(e->dims[0], 0);
    assert_int_equal(e->nbytes, 0);
    assert_non_null(e->data);
    const uint16_t *r16 = init_of(g, "f16raw")->data;
    assert_int_equal(r16[0], 0x3C00);
    assert_int_equal(r16[1], 0xBC00);
    const uint8_t *rb = init_of(g, "boolraw")->data;
    assert_int_equal(rb[0], 0);
    assert_int_equal(rb[1], 1);
    assert_int_equal(rb[2], 1); /* normalised */
    assert_int_equal(rb[3], 1);

    /* symval: small 0-D/1-D int64 initializers carry their elements as known dims. */
    const tc__value *vi64 = value(g, "i64");
    assert_int_equal(vi64->info.symval_len, 3);
    assert_int_equal(vi64->info.symval[1].value, 224);
    assert_int_equal(vi64->info.symval[2].value, 224);
    assert_int_equal(vi64->info.symval[0].value, -1); /* -1 stays as is (reads as "not known") */
    const tc__value *vs = value(g, "scalar");
    assert_int_equal(vs->info.shape.rank, 0);
    assert_int_equal(vs->info.symval_len, 1);
    assert_int_equal(vs->info.symval[0].value, 42);
    assert_int_equal(value(g, "i64_9")->info.symval_len, -1); /* more than TC_MAX_RANK elements */
    assert_int_equal(value(g, "i32")->info.symval_len, -1);
    tc__graph_destroy(g);
    b_free(b);
}

/* Payloads of at least 4 KiB are adopted from the parser's buffers: check they survive intact. */
static void test_large_initializers(void **state) {
    (void)state;
    B *b = b_new(13);
    enum { N = 3000 };
    const int64_t dn[] = {N};
    float *f = b_alloc(b, N * sizeof *f);
    int32_t *i8 = b_alloc(b, N * sizeof *i8);
    int64_t *i64 = b_alloc(b, N * sizeof *i64);
    for (int i = 0; i < N; i++) {
        f[i] = (float)i * 0.5f - 700.0f;
        i8[i] = (i % 255) - 127;
        i64[i] = (int64_t)i * 1000003 - 5;
    }
    b_raw(b, b_init(b, b_tensor(b, "raw", TC_DTYPE_FLOAT32, 1, dn)), f, N * sizeof *f);
    Onnx__TensorProto *t = b_init(b, b_tensor(b, "fd", TC_DTYPE_FLOAT32, 1, dn));
    t->n_float_data = N, t->float_data = f;
    t = b_init(b, b_tensor(b, "i8", TC_DTYPE_INT8, 1, dn));
    t->n_int32_data = N, t->int32_data = i8;
    t = b_init(b, b_tensor(b, "i64", TC_DTYPE_INT64, 1, dn));
    t->n_int64_data = N, t->int64_data = i64;
    Onnx__NodeProto *n = b_node(b, "c", "Constant", NULL, "k");
    t = b_tensor(b, "", TC_DTYPE_FLOAT32, 1, dn);
    b_raw(b, t, f, N * sizeof *f);
    b_attr(b, n, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR)->t = t;
    tc__graph *g = expect_ok(b, NULL);
    assert_memory_equal(init_of(g, "raw")->data, f, N * sizeof *f);
    assert_memory_equal(init_of(g, "fd")->data, f, N * sizeof *f);
    assert_memory_equal(init_of(g, "i64")->data, i64, N * sizeof *i64);
    const int8_t *p8 = init_of(g, "i8")->data;
    for (int i = 0; i < N; i++) assert_int_equal(p8[i], i8[i]);
    const tc__tensor *k = tc__attr_tensor(&g->nodes[0].attrs, "value");
    assert_int_equal((uintptr_t)k->data % 64, 0);
    assert_memory_equal(k->data, f, N * sizeof *f);
    tc__graph_destroy(g);
    b_free(b);
}

/* A 1 MiB payload lands in the graph once: the arena holds it without a second copy. */
static void test_payload_not_copied(void **state) {
    (void)state;
    B *b = b_new(13);
    enum { N = 1 << 18 };
    const int64_t dn[] = {N};
    float *f = b_alloc(b, N * sizeof *f);
    for (int i = 0; i < N; i++) f[i] = (float)(i % 1000) - 499.5f;
    b_raw(b, b_init(b, b_tensor(b, "big", TC_DTYPE_FLOAT32, 1, dn)), f, N * sizeof *f);
    tc__graph *g = expect_ok(b, NULL);
    assert_memory_equal(init_of(g, "big")->data, f, N * sizeof *f);
    assert_true(g->arena.total_bytes < N * sizeof *f + 256 * 1024);
    tc__graph_destroy(g);
    b_free(b);
}

static void test_initializer_errors(void **state) {
    (void)state;
    const int64_t d4[] = {4}, d2x2[] = {2, 2};
    const float f4[] = {1, 2, 3, 4};
    B *b = b_new(13);
    b_raw(b, b_init(b, b_tensor(b, "short", TC_DTYPE_FLOAT32, 1, d4)), f4, 12);
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'short'", "12 bytes", "expected 16", NULL);
    b_free(b);

    b = b_new(13);
    Onnx__TensorProto *t = b_init(b, b_tensor(b, "few", TC_DTYPE_FLOAT32, 2, d2x2));
    t->n_float_data = 3, t->float_data = b_dup(b, f4, 12);
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'few'", "float_data", "3 values", "expected 4", NULL);
    b_free(b);

    b = b_new(13);
    b_init(b, b_tensor(b, "none", TC_DTYPE_FLOAT32, 1, d4));
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'none'", "expected 4", NULL);
    b_free(b);

    b = b_new(13);
    t = b_init(b, b_tensor(b, "wrongfield", TC_DTYPE_FLOAT32, 1, d4));
    const int64_t i4[] = {1, 2, 3, 4};
    t->n_int64_data = 4, t->int64_data = b_dup(b, i4, sizeof i4);
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'wrongfield'", "int64_data", NULL);
    b_free(b);

    b = b_new(13);
    t = b_init(b, b_tensor(b, "both", TC_DTYPE_FLOAT32, 1, d4));
    b_raw(b, t, f4, 16);
    t->n_float_data = 4, t->float_data = b_dup(b, f4, 16);
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'both'", "raw_data", NULL);
    b_free(b);

    b = b_new(13);
    t = b_init(b, b_tensor(b, "i8", TC_DTYPE_INT8, 1, d4));
    const int32_t bad8[] = {1, 2, 300, 4};
    t->n_int32_data = 4, t->int32_data = b_dup(b, bad8, sizeof bad8);
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'i8'", "300", "range", NULL);
    b_free(b);

    b = b_new(13);
    t = b_init(b, b_tensor(b, "u32", TC_DTYPE_UINT32, 1, d4));
    const uint64_t bad32[] = {1, 2, 3, (uint64_t)1 << 32};
    t->n_uint64_data = 4, t->uint64_data = b_dup(b, bad32, sizeof bad32);
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'u32'", "range", NULL);
    b_free(b);

    b = b_new(13);
    t = b_init(b, b_tensor(b, "str", 8, 1, d4));
    expect_fail(b, NULL, TC_STATUS_UNSUPPORTED, "'str'", "string", NULL);
    b_free(b);

    b = b_new(13);
    b_raw(b, b_init(b, b_tensor(b, "f8", 17, 1, d4)), f4, 4);
    expect_fail(b, NULL, TC_STATUS_UNSUPPORTED, "'f8'", "float8e4m3fn", NULL);
    b_free(b);

    b = b_new(13);
    b_raw(b, b_init(b, b_tensor(b, "i4", 22, 1, d4)), f4, 2);
    expect_fail(b, NULL, TC_STATUS_UNSUPPORTED, "'i4'", "int4", NULL);
    b_free(b);

    b = b_new(13);
    b_raw(b, b_init(b, b_tensor(b, "c64", 14, 1, d4)), f4, 16);
    expect_fail(b, NULL, TC_STATUS_UNSUPPORTED, "complex64", NULL);
    b_free(b);

    b = b_new(13);
    b_raw(b, b_init(b, b_tensor(b, "undef", 0, 1, d4)), f4, 16);
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'undef'", "no data type", NULL);
    b_free(b);

    b = b_new(13);
    const int64_t d9[] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    b_raw(b, b_init(b, b_tensor(b, "rank9", TC_DTYPE_FLOAT32, 9, d9)), f4, 4);
    expect_fail(b, NULL, TC_STATUS_UNSUPPORTED, "'rank9'", "rank 9", NULL);
    b_free(b);

    b = b_new(13);
    const int64_t dneg[] = {2, -2};
    b_raw(b, b_init(b, b_tensor(b, "neg", TC_DTYPE_FLOAT32, 2, dneg)), f4, 16);
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'neg'", "-2", NULL);
    b_free(b);

    b = b_new(13);
    const int64_t dhuge[] = {INT64_MAX / 2, 4};
    b_raw(b, b_init(b, b_tensor(b, "huge", TC_DTYPE_FLOAT32, 2, dhuge)), f4, 16);
    expect_fail(b, NULL, TC_STATUS_UNSUPPORTED, "'huge'", NULL);
    b_free(b);

    b = b_new(13);
    t = b_init(b, b_tensor(b, "seg", TC_DTYPE_FLOAT32, 1, d4));
    b_raw(b, t, f4, 16);
    t->segment = b_alloc(b, sizeof *t->segment);
    onnx__tensor_proto__segment__init(t->segment);
    expect_fail(b, NULL, TC_STATUS_UNSUPPORTED, "'seg'", "segmented", NULL);
    b_free(b);

    b = b_new(13);
    t = b_init(b, b_tensor(b, "loc", TC_DTYPE_FLOAT32, 1, d4));
    b_raw(b, t, f4, 16);
    t->has_data_location = 1;
    t->data_location = (Onnx__TensorProto__DataLocation)5;
    expect_fail(b, NULL, TC_STATUS_CORRUPT_FILE, "'loc'", "data_location", NULL);
    b_free(b);
}

static void test_parse_failures(void **state) {
    (void)state;
    tc__graph *g = (tc__graph *)&g; /* must be reset to NULL */
    tc__err err = {0};
    assert_int_equal(tc__onnx_import("", 0, NULL, &g, &err), TC_STATUS_CORRUPT_FILE);
    assert_null(g);
    assert_non_null(strstr(err.msg, "empty"));

    const char junk[] = "this is not a protobuf \xff\xff\xff\xff\xff";
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__onnx_import(junk, sizeof junk, NULL, &g, &err), TC_STATUS_CORRUPT_FILE);
    assert_null(g);
    assert_non_null(strstr(err.msg, "not a valid ONNX model"));
    char size_str[32];
    snprintf(size_str, sizeof size_str, "%zu bytes", sizeof junk);
    assert_non_null(strstr(err.msg, size_str));

    /* A valid model cut short. */
    B *b = b_new(13);
    b_node(b, "n", "Relu", "x", "y");
    size_t len;
    uint8_t *buf = b_pack(b, &len);
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__onnx_import(buf, len - 3, NULL, &g, &err), TC_STATUS_CORRUPT_FILE);
    assert_null(g);
    b_free(b);

    memset(&err, 0, sizeof err);
    assert_int_equal(tc__onnx_import(NULL, 5, NULL, &g, &err), TC_STATUS_INVALID_ARGUMENT);
}

/* ---- External data ---- */

typedef struct ext_dir {
    char dir[64];
} ext_dir;

static void write_file(const char *path, const void *data, size_t size) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    fclose(f);
}

static void rm_tree(const ext_dir *d) {
    char p[256];
    snprintf(p, sizeof p, "%s/sub/w.bin", d->dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/sub", d->dir);
    rmdir(p);
    snprintf(p, sizeof p, "%s/w.bin", d->dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/model.onnx", d->dir);
    unlink(p);
    rmdir(d->dir);
}

static Onnx__TensorProto *ext_tensor(B *b, const char *name, const char *loc, const char *off, const char *len) {
    Onnx__TensorProto *t = b_init(b, b_tensor(b, name, TC_DTYPE_FLOAT32, 2, d2x3));
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    const char *kv[3][2] = {{"location", loc}, {"offset", off}, {"length", len}};
    t->external_data = b_alloc(b, 4 * sizeof *t->external_data);
    for (int i = 0; i < 3; i++) {
        if (kv[i][1] == NULL) continue;
        Onnx__StringStringEntryProto *e = b_alloc(b, sizeof *e);
        onnx__string_string_entry_proto__init(e);
        e->key = b_str(b, kv[i][0]);
        e->value = b_str(b, kv[i][1]);
        t->external_data[t->n_external_data++] = e;
    }
    return t;
}

static void test_external_data(void **state) {
    (void)state;
    ext_dir d;
    snprintf(d.dir, sizeof d.dir, "/tmp/tc_onnx_ext_XXXXXX");
    assert_non_null(mkdtemp(d.dir));
    char path[256];
    float file[10];
    for (int i = 0; i < 10; i++) file[i] = (float)i * 1.5f - 4.0f;
    snprintf(path, sizeof path, "%s/w.bin", d.dir);
    write_file(path, file, sizeof file);
    snprintf(path, sizeof path, "%s/sub", d.dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/sub/w.bin", d.dir);
    write_file(path, file, 24);

    B *b = b_new(13);
    ext_tensor(b, "a", "w.bin", "16", "24");
    ext_tensor(b, "c", "sub/w.bin", NULL, NULL); /* no offset/length: the whole file */
    ext_tensor(b, "e", "./w.bin", "0", "24")->n_external_data++; /* plus an ignored checksum-like key */
    Onnx__StringStringEntryProto *ck = b_alloc(b, sizeof *ck);
    onnx__string_string_entry_proto__init(ck);
    ck->key = b_str(b, "checksum");
    ck->value = b_str(b, "abc");
    b->g->initializer[2]->external_data[3] = ck;
    tc__graph *g = expect_ok(b, d.dir);
    assert_memory_equal(init_of(g, "a")->data, file + 4, 24);
    assert_memory_equal(init_of(g, "c")->data, file, 24);
    assert_memory_equal(init_of(g, "e")->data, file, 24);
    tc__graph_destroy(g);
    b_free(b);

    /* The same model serialized to a file and imported relative to its folder. */
    b = b_new(13);
    ext_tensor(b, "a", "w.bin", "4", "24");
    size_t len;
    uint8_t *buf = b_pack(b, &len);
    snprintf(path, sizeof path, "%s/model.onnx", d.dir);
    write_file(path, buf, len);
    tc__err err = {0};
    assert_int_equal(tc__onnx_import(buf, len, d.dir, &g, &err), TC_STATUS_OK);
    assert_memory_equal(init_of(g, "a")->data, file + 1, 24);
    tc__graph_destroy(g);
    /* Without the right base_dir the file is not found. */
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__onnx_import(buf, len, "/nonexistent-dir", &g, &err), TC_STATUS_IO_ERROR);
    assert_non_null(strstr(err.msg, "w.bin"));
    b_free(b);

    struct {
        const char *loc, *off, *len;
        tc_status st;
        const char *needle;
    } bad[] = {
        {"../w.bin", "0", "24", TC_STATUS_INVALID_ARGUMENT, "'../w.bin'"},
        {"sub/../../w.bin", "0", "24", TC_STATUS_INVALID_ARGUMENT, ".."},
        {"sub\\..\\w.bin", "0", "24", TC_STATUS_INVALID_ARGUMENT, ".."},
        {"/etc/passwd", "0", "24", TC_STATUS_INVALID_ARGUMENT, "absolute"},
        {"C:\\w.bin", "0", "24", TC_STATUS_INVALID_ARGUMENT, "absolute"},
        {"w.bin", "40", "24", TC_STATUS_CORRUPT_FILE, "beyond"},     /* 40 + 24 > 40 bytes */
        {"w.bin", "41", "24", TC_STATUS_CORRUPT_FILE, "beyond"},     /* offset past the end */
        {"w.bin", "18446744073709551615", "24", TC_STATUS_CORRUPT_FILE, "offset"},
        {"w.bin", "0", "20", TC_STATUS_CORRUPT_FILE, "expected 24"}, /* length != tensor size */
        {"w.bin", "0", NULL, TC_STATUS_CORRUPT_FILE, "expected 24"}, /* rest of file is 40 bytes */
        {"w.bin", "-4", "24", TC_STATUS_CORRUPT_FILE, "'-4'"},
        {"w.bin", "0x10", "24", TC_STATUS_CORRUPT_FILE, "'0x10'"},
        {NULL, "0", "24", TC_STATUS_CORRUPT_FILE, "no location"},
        {"", "0", "24", TC_STATUS_CORRUPT_FILE, "no location"},
        {"missing.bin", "0", "24", TC_STATUS_IO_ERROR, "missing.bin"},
        {"sub", "0", "24", TC_STATUS_IO_ERROR, "regular file"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        b = b_new(13);
        ext_tensor(b, "wt", bad[i].loc, bad[i].off, bad[i].len);
        expect_fail(b, d.dir, bad[i].st, "'wt'", bad[i].needle, NULL);
        b_free(b);
    }

    /* A huge declared shape is refused before anything that large is allocated. */
    b = b_new(13);
    Onnx__TensorProto *huge = ext_tensor(b, "huge", "w.bin", "0", "412316860416");
    huge->dims[0] = (int64_t)1 << 35;
    expect_fail(b, d.dir, TC_STATUS_CORRUPT_FILE, "'huge'", "beyond", NULL);
    b_free(b);

    /* Inline data next to an external location is ambiguous. */
    b = b_new(13);
    Onnx__TensorProto *t = ext_tensor(b, "wt", "w.bin", "0", "24");
    b_raw(b, t, file, 24);
    expect_fail(b, d.dir, TC_STATUS_CORRUPT_FILE, "'wt'", "external", NULL);
    b_free(b);
    rm_tree(&d);
}

/* ---- Files written by tests/data/onnx/make_test_data.py ---- */

static uint8_t *read_file(const char *name, size_t *size) {
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

static const tc__node *node_named(const tc__graph *g, const char *name) {
    for (int i = 0; i < g->n_nodes; i++)
        if (strcmp(g->nodes[i].name, name) == 0) return &g->nodes[i];
    fail_msg("no node '%s'", name);
    return NULL;
}

static void test_small_onnx_file(void **state) {
    (void)state;
    size_t size;
    uint8_t *buf = read_file("small.onnx", &size);
    tc__graph *g = NULL;
    tc__err err = {0};
    assert_int_equal(tc__onnx_import(buf, size, NULL, &g, &err), TC_STATUS_OK);
    free(buf);
    assert_int_equal(g->opset, 17);
    assert_string_equal(g->producer_name, "make_test_data");
    assert_string_equal(g->name, "small");
    assert_int_equal(g->n_nodes, 6);
    assert_int_equal(g->n_inputs, 3);
    assert_int_equal(g->n_outputs, 2);

    const tc__value *mask = value(g, "mask");
    assert_int_equal(mask->info.dtype, TC_DTYPE_BOOL);
    assert_int_equal(mask->info.shape.rank, 2);
    assert_string_equal(g->symbols[mask->info.shape.dims[0].sym], "batch");
    assert_int_equal(mask->info.shape.dims[1].value, -1);
    assert_int_equal(mask->info.shape.dims[1].sym, TC__SYM_UNKNOWN);

    const tc__tensor *w = init_of(g, "w");
    assert_int_equal(w->rank, 4);
    for (int i = 0; i < 108; i++) assert_true(((const float *)w->data)[i] == (float)(i % 7 - 3) * 0.25f);
    const float eb[] = {0.5f, -1.0f, 1.5f, -2.0f};
    assert_memory_equal(init_of(g, "b")->data, eb, sizeof eb);
    const int64_t es[] = {0, -1};
    assert_memory_equal(init_of(g, "shape")->data, es, sizeof es);
    const tc__tensor *h = init_of(g, "h");
    assert_int_equal(h->dtype, TC_DTYPE_FLOAT16);
    assert_true(tc__tensor_get_f64(h, 0) == 1.0 && tc__tensor_get_f64(h, 1) == -2.5 &&
                tc__tensor_get_f64(h, 2) == 65504.0);

    const tc__node *conv = node_named(g, "conv");
    assert_string_equal(conv->op_type, "Conv");
    const int64_t *ints;
    assert_int_equal(tc__attr_ints(&conv->attrs, "kernel_shape", &ints), 2);
    assert_int_equal(ints[0], 3);
    assert_int_equal(tc__attr_ints(&conv->attrs, "pads", &ints), 4);
    assert_int_equal(tc__attr_int(&conv->attrs, "group", 0), 1);
    assert_true(tc__attr_float(&node_named(g, "leaky")->attrs, "alpha", 0) == 0.125f);
    const tc__tensor *kv = tc__attr_tensor(&node_named(g, "const")->attrs, "value");
    const int32_t ekv[] = {1, -2, 3, -4};
    assert_int_equal(kv->dtype, TC_DTYPE_INT32);
    assert_memory_equal(kv->data, ekv, sizeof ekv);
    const tc__node *rs = node_named(g, "resize");
    assert_string_equal(tc__attr_string(&rs->attrs, "mode", ""), "nearest");
    assert_int_equal(rs->n_in, 4);
    assert_int_equal(rs->in[1], -1);
    assert_int_equal(rs->in[2], -1);
    assert_int_equal(rs->in[3], tc__graph_find_value(g, "sizes"));
    const tc__node *foo = node_named(g, "custom");
    assert_string_equal(foo->domain, "com.example");
    assert_int_equal(foo->out[1], -1);
    const tc__attr *names = tc__attr_find(&foo->attrs, "names");
    assert_int_equal(names->n, 2);
    assert_string_equal(names->strings[1], "bc");
    const float *fl;
    assert_int_equal(tc__attr_floats(&foo->attrs, "weights", &fl), 2);
    assert_true(fl[1] == 2.0f);
    const tc__value *k = value(g, "k");
    assert_true(k->is_output);
    assert_int_equal(k->info.dtype, TC_DTYPE_INT32);
    tc__graph_destroy(g);
}

static void test_external_onnx_file(void **state) {
    (void)state;
    size_t size;
    uint8_t *buf = read_file("external.onnx", &size);
    tc__graph *g = NULL;
    tc__err err = {0};
    char dir[512];
    snprintf(dir, sizeof dir, "%s/onnx", TC_TEST_DATA_DIR);
    assert_int_equal(tc__onnx_import(buf, size, dir, &g, &err), TC_STATUS_OK);
    const float *a = init_of(g, "a")->data;
    for (int i = 0; i < 6; i++) assert_true(a[i] == (float)i - 2.5f);
    const int64_t ec[] = {3, -1, 4, -1, 5};
    assert_memory_equal(init_of(g, "c")->data, ec, sizeof ec);
    tc__graph_destroy(g);
    /* From the wrong folder the data file is missing. */
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__onnx_import(buf, size, "/", &g, &err), TC_STATUS_IO_ERROR);
    assert_non_null(strstr(err.msg, "external.bin"));
    free(buf);
}

static void test_tensor_pb(void **state) {
    (void)state;
    size_t size;
    uint8_t *buf = read_file("matmul_2d_input_0.pb", &size);
    tc__tensor t;
    tc__err err = {0};
    char name[16];
    assert_int_equal(tc__onnx_tensor_from_pb(buf, size, &t, name, sizeof name, &err), TC_STATUS_OK);
    assert_string_equal(name, "a");
    assert_int_equal(t.dtype, TC_DTYPE_FLOAT32);
    assert_int_equal(t.rank, 2);
    assert_int_equal(t.dims[0], 3);
    assert_int_equal(t.dims[1], 4);
    assert_int_equal(t.nbytes, 48);
    const float *f = t.data;
    assert_float_equal(f[0], 1.7640524f, 1e-7);
    assert_float_equal(f[1], 0.4001572f, 1e-7);
    assert_float_equal(f[11], 1.4542735f, 1e-7);
    tc__tensor_free(&t);

    /* Truncated name buffer, and a cut-short file. */
    char tiny[1];
    assert_int_equal(tc__onnx_tensor_from_pb(buf, size, &t, tiny, sizeof tiny, &err), TC_STATUS_OK);
    assert_string_equal(tiny, "");
    tc__tensor_free(&t);
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__onnx_tensor_from_pb(buf, size - 1, &t, NULL, 0, &err), TC_STATUS_CORRUPT_FILE);
    assert_null(t.data);
    assert_true(err.msg[0] != '\0');
    free(buf);

    buf = read_file("gather_0_input_1.pb", &size);
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__onnx_tensor_from_pb(buf, size, &t, name, sizeof name, &err), TC_STATUS_OK);
    assert_string_equal(name, "indices");
    assert_int_equal(t.dtype, TC_DTYPE_INT64);
    const int64_t ei[] = {0, 1, 3};
    assert_int_equal(t.nbytes, sizeof ei);
    assert_memory_equal(t.data, ei, sizeof ei);
    tc__tensor_free(&t);
    free(buf);

    /* Typed fields and errors through the .pb path. */
    B *b = b_new(0);
    const int64_t d2[] = {2};
    Onnx__TensorProto *tp = b_tensor(b, "half", TC_DTYPE_FLOAT16, 1, d2);
    const int32_t bits[] = {0x3C00, 0x4000};
    tp->n_int32_data = 2, tp->int32_data = b_dup(b, bits, sizeof bits);
    size_t len = onnx__tensor_proto__get_packed_size(tp);
    uint8_t *pb = b_alloc(b, len);
    onnx__tensor_proto__pack(tp, pb);
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__onnx_tensor_from_pb(pb, len, &t, NULL, 0, &err), TC_STATUS_OK);
    assert_true(tc__tensor_get_f64(&t, 0) == 1.0 && tc__tensor_get_f64(&t, 1) == 2.0);
    tc__tensor_free(&t);

    tp->has_data_location = 1;
    tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    tp->n_int32_data = 0;
    len = onnx__tensor_proto__get_packed_size(tp);
    pb = b_alloc(b, len);
    onnx__tensor_proto__pack(tp, pb);
    memset(&err, 0, sizeof err);
    assert_int_equal(tc__onnx_tensor_from_pb(pb, len, &t, NULL, 0, &err), TC_STATUS_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "'half'"));
    assert_null(t.data);
    b_free(b);

    memset(&err, 0, sizeof err);
    assert_int_equal(tc__onnx_tensor_from_pb("", 0, &t, NULL, 0, &err), TC_STATUS_CORRUPT_FILE);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic_graph),
        cmocka_unit_test(test_opset_domains),
        cmocka_unit_test(test_attributes_typed),
        cmocka_unit_test(test_attributes_untyped),
        cmocka_unit_test(test_attribute_errors),
        cmocka_unit_test(test_nodes_and_names),
        cmocka_unit_test(test_value_types),
        cmocka_unit_test(test_typed_initializers),
        cmocka_unit_test(test_large_initializers),
        cmocka_unit_test(test_payload_not_copied),
        cmocka_unit_test(test_initializer_errors),
        cmocka_unit_test(test_parse_failures),
        cmocka_unit_test(test_external_data),
        cmocka_unit_test(test_small_onnx_file),
        cmocka_unit_test(test_external_onnx_file),
        cmocka_unit_test(test_tensor_pb),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
