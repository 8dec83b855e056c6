/*
 * test_onnx_import.c - unit tests of the ONNX importer's graph building: values, symbolic dims,
 * opsets, nodes with absent optional inputs/outputs, attributes of every kind (typed and pre-IR-2
 * untyped), declared input/output types, parse failures, and tests/data/onnx/small.onnx.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "onnx_test_util.h"

static const int64_t d2x3[] = {2, 3};

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
    b_node(b, "n", "Relu", "x", "y");
    expect_fail(b, NULL, TC_STATUS_INVALID_GRAPH, "no opset", "default", NULL);
    b_free(b);

    /* A model whose nodes all live in other domains needs no default opset. */
    b = b_new(0);
    b_opset(b, "ai.onnx.ml", 3);
    b_node(b, "n", "Binarizer", "x", "y")->domain = b_str(b, "ai.onnx.ml");
    g = expect_ok(b, NULL);
    assert_int_equal(g->opset, 0);
    tc__graph_destroy(g);
    b_free(b);

    /* tailcut's own domain (its ops are made by its passes) is no model's to use */
    b = b_new(17);
    b_opset(b, "tailcut", 1);
    b_node(b, "e", "TcEmbedLayerNorm", "x", "y")->domain = b_str(b, "tailcut");
    expect_fail(b, NULL, TC_STATUS_INVALID_GRAPH, "reserved", "tailcut", NULL);
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

    /* "tc." names are tailcut's own (the layout pass's tc.layout_in / tc.layout_out): a model cannot set them. */
    b = b_new(13);
    n = b_node(b, "node7", "Identity", "x", "y");
    b_attr(b, n, "tc.layout_in", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)->i = 1;
    expect_fail(b, NULL, TC_STATUS_INVALID_GRAPH, "node7", "'tc.layout_in'", "reserved", NULL);
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic_graph),
        cmocka_unit_test(test_opset_domains),
        cmocka_unit_test(test_attributes_typed),
        cmocka_unit_test(test_attributes_untyped),
        cmocka_unit_test(test_attribute_errors),
        cmocka_unit_test(test_nodes_and_names),
        cmocka_unit_test(test_value_types),
        cmocka_unit_test(test_parse_failures),
        cmocka_unit_test(test_small_onnx_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
