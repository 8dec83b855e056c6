/* test_plan_format.c - model.plan writing and reading: field-by-field round trips of a graph
 * with every dtype, attribute kind, symbolic dims, epilogues and absent inputs; byte-identical
 * output; 64-byte-aligned weights; truncations and byte flips that must fail cleanly; the
 * documented errors for a wrong magic, version (version 1 included), checksum or target (the TARGET section: CPU
 * vendor, model, kernel revision and ISA, a backend this build lacks, malformed records); writer argument checks.
 * With TC_PLAN_CORPUS_DIR set, also writes the fuzz seed corpus (tests/fuzz/corpus_plan). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include <cmocka.h>

#include "backends/cpu/cpu_target.h"
#include "engine/plan_format.h"

/* ---- Building test graphs ------------------------------------------------------------ */

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int32_t value(tc__graph *g, const char *name) {
    int32_t v;
    tc__err err = {0};
    assert_int_equal(tc__graph_value_by_name(g, name, &v, &err), TC_STATUS_OK);
    return v;
}

static void set_shape(tc__graph *g, int32_t v, tc_dtype dt, int32_t rank, const tc__dim *dims) {
    g->values[v].info.dtype = dt;
    g->values[v].info.shape.rank = rank;
    for (int32_t i = 0; i < rank; i++) g->values[v].info.shape.dims[i] = dims[i];
}

/* Adds an initializer with pseudo-random contents (valid bools). */
static int32_t add_init(tc__graph *g, const char *name, tc_dtype dt, int32_t rank, const int64_t *dims) {
    tc__tensor t;
    tc__err err = {0};
    assert_int_equal(tc__tensor_alloc(&t, dt, rank, dims, &err), TC_STATUS_OK);
    for (size_t i = 0; i < t.nbytes; i++) ((uint8_t *)t.data)[i] = (uint8_t)(dt == TC_DTYPE_BOOL ? rnd() & 1 : rnd());
    int32_t v;
    assert_int_equal(tc__graph_add_initializer(g, name, &t, &v, &err), TC_STATUS_OK);
    assert_string_equal(g->values[v].name, name);
    tc__tensor_free(&t);
    return v;
}

static int32_t add_node(tc__graph *g, const char *name, const char *op, int n_in, int n_out) {
    int32_t n;
    tc__err err = {0};
    assert_int_equal(tc__graph_add_node(g, name, op, "", n_in, n_out, &n, &err), TC_STATUS_OK);
    return n;
}

static void add_output(tc__graph *g, int32_t v) {
    g->values[v].is_output = true;
    g->outputs[g->n_outputs++] = v;
}

/* A tensor in the graph's arena for a TENSOR attribute. */
static const tc__tensor *arena_tensor(tc__graph *g, tc_dtype dt, int32_t rank, const int64_t *dims) {
    tc__tensor *t = tc__arena_alloc(&g->arena, sizeof *t, 8);
    assert_non_null(t);
    t->dtype = dt;
    t->rank = rank;
    for (int32_t i = 0; i < rank; i++) t->dims[i] = dims[i];
    t->nbytes = (size_t)tc__numel(rank, dims) * tc_dtype_size(dt);
    t->data = tc__arena_alloc(&g->arena, t->nbytes ? t->nbytes : 1, 64);
    assert_non_null(t->data);
    for (size_t i = 0; i < t->nbytes; i++) ((uint8_t *)t->data)[i] = (uint8_t)rnd();
    return t;
}

/*
 * x[batch,4] --MatMul(W)+bias,Relu--> h[batch,3] --Clip(-, max)--> c (unknown type)
 *   --Identity (every attribute kind)--> d --Add(r)+residual h, Clip(0,6)--> e --Dropout (guarded by "run")--> y, (absent mask)
 * outputs: y, and the first n_extras of initializers of every other dtype (odd byte sizes included).
 */
static tc__graph *build_graph(size_t n_extras) {
    tc__graph *g = tc__graph_create();
    assert_non_null(g);
    g->opset = 17;
    g->ir_version = 8;
    g->name = "test graph";
    g->producer_name = "test_plan_format";
    int32_t batch = tc__graph_symbol(g, "batch"), seq = tc__graph_symbol(g, "seq");
    assert_true(batch == 0 && seq == 1);
    g->inputs = tc__arena_alloc(&g->arena, sizeof(int32_t) * 4, 4);
    g->outputs = tc__arena_alloc(&g->arena, sizeof(int32_t) * 32, 4);

    int32_t x = value(g, "x");
    g->values[x].is_input = true;
    g->inputs[g->n_inputs++] = x;
    set_shape(g, x, TC_DTYPE_FLOAT32, 2, (tc__dim[]){{-1, batch}, {4, -1}});
    int32_t w = add_init(g, "W", TC_DTYPE_FLOAT32, 2, (int64_t[]){4, 3});
    int32_t b = add_init(g, "b", TC_DTYPE_FLOAT32, 1, (int64_t[]){3});
    int32_t maxv = add_init(g, "max", TC_DTYPE_FLOAT32, 0, NULL);
    int32_t r = add_init(g, "r", TC_DTYPE_FLOAT32, 1, (int64_t[]){3});
    add_init(g, "unused", TC_DTYPE_FLOAT32, 1, (int64_t[]){2});
    tc__err err = {0};

    int32_t n0 = add_node(g, "mm", "MatMul", 2, 1);
    g->nodes[n0].in[0] = x;
    g->nodes[n0].in[1] = w;
    int32_t h = value(g, "h");
    g->nodes[n0].out[0] = h;
    set_shape(g, h, TC_DTYPE_FLOAT32, 2, (tc__dim[]){{-1, batch}, {3, -1}});
    int idx;
    assert_int_equal(tc__graph_node_add_input(g, n0, b, &idx, &err), TC_STATUS_OK);
    g->nodes[n0].n_op_in = 2;
    g->nodes[n0].epi.bias_input = (int8_t)idx;
    g->nodes[n0].epi.act = TC__ACT_RELU;
    assert_int_equal(tc__graph_node_note_fused(g, n0, "Add", &err), TC_STATUS_OK);
    assert_int_equal(tc__graph_node_note_fused(g, n0, "Relu", &err), TC_STATUS_OK);

    int32_t n1 = add_node(g, "clip", "Clip", 3, 1);
    g->nodes[n1].in[0] = h;
    g->nodes[n1].in[1] = -1; /* absent optional min */
    g->nodes[n1].in[2] = maxv;
    int32_t c = value(g, "c"); /* type and shape unknown */
    g->nodes[n1].out[0] = c;

    int32_t n2 = add_node(g, "id", "Identity", 1, 1);
    g->nodes[n2].in[0] = c;
    int32_t d = value(g, "d");
    g->nodes[n2].out[0] = d;
    set_shape(g, d, TC_DTYPE_FLOAT32, 3, (tc__dim[]){{-1, batch}, {-1, seq}, {-1, -1}});
    tc__attr *at = tc__arena_alloc(&g->arena, sizeof(tc__attr) * 10, 8);
    static const float fl[] = {1.5f, -0.0f, NAN, INFINITY, 1e-30f};
    static const int64_t in[] = {1, -2, INT64_MAX, INT64_MIN};
    static const char *const st[] = {"a", "", "b c", "relu"};
    static const int64_t empty_ints[1] = {0};
    at[0] = (tc__attr){.name = "f", .kind = TC__ATTR_FLOAT, .f = 0.25f};
    at[1] = (tc__attr){.name = "i", .kind = TC__ATTR_INT, .i = -7};
    at[2] = (tc__attr){.name = "s", .kind = TC__ATTR_STRING, .s = "hello"};
    at[3] = (tc__attr){.name = "t", .kind = TC__ATTR_TENSOR, .t = arena_tensor(g, TC_DTYPE_INT8, 1, (int64_t[]){5})};
    at[4] = (tc__attr){.name = "sub", .kind = TC__ATTR_GRAPH};
    at[5] = (tc__attr){.name = "fs", .kind = TC__ATTR_FLOATS, .n = 5, .floats = fl};
    at[6] = (tc__attr){.name = "is", .kind = TC__ATTR_INTS, .n = 4, .ints = in};
    at[7] = (tc__attr){.name = "ss", .kind = TC__ATTR_STRINGS, .n = 4, .strings = st};
    at[8] = (tc__attr){.name = "none", .kind = TC__ATTR_INTS, .n = 0, .ints = empty_ints};
    at[9] = (tc__attr){.name = "t0", .kind = TC__ATTR_TENSOR, .t = arena_tensor(g, TC_DTYPE_FLOAT16, 2, (int64_t[]){0, 3})};
    g->nodes[n2].attrs = (tc__attrs){10, at};

    int32_t n3 = add_node(g, "add", "Add", 2, 1);
    g->nodes[n3].in[0] = d;
    g->nodes[n3].in[1] = r;
    int32_t e = value(g, "e");
    g->nodes[n3].out[0] = e;
    assert_int_equal(tc__graph_node_add_input(g, n3, h, &idx, &err), TC_STATUS_OK);
    g->nodes[n3].n_op_in = 2;
    g->nodes[n3].epi = (tc__epilogue){-1, (int8_t)idx, TC__ACT_CLIP, 0, 0.0f, 6.0f};
    assert_int_equal(tc__graph_node_note_fused(g, n3, "Clip", &err), TC_STATUS_OK);

    int32_t n4 = add_node(g, "", "Dropout", 1, 2); /* generated name */
    g->nodes[n4].in[0] = e;
    int32_t y = value(g, "y");
    g->nodes[n4].out[0] = y;
    g->nodes[n4].out[1] = -1; /* absent mask */
    /* guarded (a step of an If branch decided at run time): by the bool initializer "run", an input after the op's */
    int32_t run = add_init(g, "run", TC_DTYPE_BOOL, 0, NULL);
    assert_int_equal(tc__graph_node_add_input(g, n4, run, &idx, &err), TC_STATUS_OK);
    g->nodes[n4].n_op_in = 1;
    g->nodes[n4].guard = idx;
    set_shape(g, y, TC_DTYPE_FLOAT32, 2, (tc__dim[]){{-1, batch}, {-1, -1}});
    add_output(g, y);

    {
        static const struct {
            const char *name;
            tc_dtype dt;
            int32_t rank;
            int64_t dims[3];
        } kInits[] = {
            {"f16", TC_DTYPE_FLOAT16, 1, {3}},     {"bf16", TC_DTYPE_BFLOAT16, 2, {1, 5}}, {"i8", TC_DTYPE_INT8, 1, {7}},
            {"u8", TC_DTYPE_UINT8, 0, {0}},        {"bool", TC_DTYPE_BOOL, 3, {1, 3, 1}},  {"f64", TC_DTYPE_FLOAT64, 1, {2}},
            {"u16", TC_DTYPE_UINT16, 1, {1}},      {"i16", TC_DTYPE_INT16, 1, {3}},        {"i32", TC_DTYPE_INT32, 1, {2}},
            {"u32", TC_DTYPE_UINT32, 1, {1}},      {"u64", TC_DTYPE_UINT64, 1, {1}},       {"i64", TC_DTYPE_INT64, 1, {2}},
            {"empty", TC_DTYPE_FLOAT32, 2, {0, 4}},
        };
        for (size_t k = 0; k < sizeof kInits / sizeof kInits[0] && k < n_extras; k++)
            add_output(g, add_init(g, kInits[k].name, kInits[k].dt, kInits[k].rank, kInits[k].dims));
    }
    assert_int_equal(tc__graph_toposort(g, &err), TC_STATUS_OK);
    /* allow_unsupported: the subgraph attribute is there only to round-trip its kind. */
    assert_int_equal(tc__graph_verify(g, true, &err), TC_STATUS_OK);
    return g;
}

/* x -> Identity -> y, nothing else. */
static tc__graph *build_minimal(void) {
    tc__graph *g = tc__graph_create();
    g->opset = 13;
    g->inputs = tc__arena_alloc(&g->arena, sizeof(int32_t), 4);
    g->outputs = tc__arena_alloc(&g->arena, sizeof(int32_t), 4);
    int32_t x = value(g, "x");
    g->values[x].is_input = true;
    g->inputs[g->n_inputs++] = x;
    set_shape(g, x, TC_DTYPE_INT64, 1, (tc__dim[]){{5, -1}});
    int32_t n = add_node(g, "id", "Identity", 1, 1);
    g->nodes[n].in[0] = x;
    int32_t y = value(g, "y");
    g->nodes[n].out[0] = y;
    add_output(g, y);
    tc__err err = {0};
    assert_int_equal(tc__graph_toposort(g, &err), TC_STATUS_OK);
    return g;
}

#define ALL_EXTRAS 13

/* ---- Plan helpers --------------------------------------------------------------------- */

static const uint8_t kBlob[100] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, [99] = 0xee};

/* The TARGET of a CPU plan for this machine, requiring ISA bits `required`. */
static tc__cpu_target here_record;
static tc__plan_target_info here_target(uint64_t required) {
    here_record = tc__cpu_target_of(tc__cpu_get());
    return (tc__plan_target_info){.backend = TC__BACKEND_CPU, .record_size = sizeof here_record,
                                  .required_caps = required, .record = &here_record};
}

static uint8_t *serialize(const tc__graph *g, uint64_t required, const void *blob, size_t blob_size, size_t *size) {
    void *out = NULL;
    tc__err err = {0};
    const tc__plan_target_info target = here_target(required);
    tc_status st = tc__plan_serialize(g, &target, blob, blob_size, &out, size, &err);
    if (st) fprintf(stderr, "serialize: %s\n", err.msg);
    assert_int_equal(st, TC_STATUS_OK);
    assert_non_null(out);
    assert_int_equal((uintptr_t)out % 64, 0);
    assert_int_equal(*size % 64, 0);
    return out;
}

/* A 64-byte-aligned copy of exactly len bytes (so that ASan sees any read past len). */
static uint8_t *aligned_copy(const uint8_t *src, size_t len) {
    void *p = NULL;
    assert_int_equal(posix_memalign(&p, 64, len ? len : 1), 0);
    if (len) memcpy(p, src, len);
    return p;
}

/* Recomputes every checksum after a test patched a plan. */
static void reseal(uint8_t *plan) {
    tc__plan_header h;
    memcpy(&h, plan, sizeof h);
    tc__plan_section *sec = (tc__plan_section *)(plan + h.section_table_offset);
    for (uint32_t i = 0; i < h.section_count; i++) sec[i].checksum = XXH3_64bits(plan + sec[i].offset, sec[i].size);
    h.section_table_checksum = XXH3_64bits(sec, h.section_count * sizeof *sec);
    h.header_checksum = 0;
    h.header_checksum = XXH3_64bits(&h, sizeof h);
    memcpy(plan, &h, sizeof h);
}

static uint8_t *section(uint8_t *plan, uint32_t kind, uint64_t *size) {
    tc__plan_header *h = (tc__plan_header *)plan;
    tc__plan_section *sec = (tc__plan_section *)(plan + h->section_table_offset);
    for (uint32_t i = 0; i < h->section_count; i++)
        if (sec[i].kind == kind) {
            if (size) *size = sec[i].size;
            return plan + sec[i].offset;
        }
    fail_msg("no section %u", kind);
    return NULL;
}

static void *table(uint8_t *plan, tc__plan_table_id id) {
    uint8_t *gs = section(plan, TC__PLAN_SECTION_GRAPH, NULL);
    return gs + ((tc__plan_graph *)gs)->tables[id].offset;
}

static tc_status load(const uint8_t *plan, size_t size, uint32_t flags, tc__graph **g, tc__err *err) {
    const void *blob;
    size_t blob_size;
    tc__plan_target_info target;
    return tc__plan_deserialize(plan, size, flags, g, &target, &blob, &blob_size, err);
}

/* Loads plan (which must fail) and checks the status and that the message contains want. */
static void expect_failure(const uint8_t *plan, size_t size, uint32_t flags, tc_status status, const char *want) {
    tc__graph *g = (tc__graph *)1;
    tc__err err = {0};
    tc_status st = load(plan, size, flags, &g, &err);
    if (st != status || strstr(err.msg, want) == NULL)
        fail_msg("expected status %d with \"%s\", got %d: %s", (int)status, want, (int)st, err.msg);
    assert_null(g);
}

/* ---- Comparing graphs ------------------------------------------------------------------ */

static void compare_tensor(const tc__tensor *a, const tc__tensor *b) {
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(a->dtype, b->dtype);
    assert_int_equal(a->rank, b->rank);
    for (int32_t i = 0; i < a->rank; i++) assert_int_equal(a->dims[i], b->dims[i]);
    assert_int_equal(a->nbytes, b->nbytes);
    assert_non_null(b->data);
    if (a->nbytes) assert_memory_equal(a->data, b->data, a->nbytes);
}

static bool used_init(const tc__graph *g, int32_t v) {
    for (int n = 0; n < g->n_nodes; n++)
        for (int i = 0; i < g->nodes[n].n_in; i++)
            if (g->nodes[n].in[i] == v) return true;
    for (int k = 0; k < g->n_outputs; k++)
        if (g->outputs[k] == v) return true;
    return false;
}

/* b (loaded from plan [base, base+size)) equals a field by field. */
static void compare_graphs(const tc__graph *a, const tc__graph *b, const uint8_t *base, size_t size) {
    assert_string_equal(a->name, b->name);
    assert_string_equal(a->producer_name, b->producer_name);
    assert_int_equal(a->opset, b->opset);
    assert_int_equal(a->ir_version, b->ir_version);
    assert_int_equal(a->n_symbols, b->n_symbols);
    for (int s = 0; s < a->n_symbols; s++) assert_string_equal(a->symbols[s], b->symbols[s]);
    assert_int_equal(a->n_values, b->n_values);
    for (int v = 0; v < a->n_values; v++) {
        const tc__value *x = &a->values[v], *y = &b->values[v];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->info.dtype, y->info.dtype);
        assert_int_equal(x->info.shape.rank, y->info.shape.rank);
        for (int32_t i = 0; i < x->info.shape.rank; i++) {
            assert_int_equal(x->info.shape.dims[i].value, y->info.shape.dims[i].value);
            assert_int_equal(x->info.shape.dims[i].sym, y->info.shape.dims[i].sym);
        }
        assert_int_equal(x->is_input, y->is_input);
        assert_int_equal(x->is_output, y->is_output);
        assert_int_equal(x->producer, y->producer);
        if (x->init != NULL && used_init(a, v)) {
            compare_tensor(x->init, y->init);
            assert_ptr_equal(y->info.value, y->init);
            const uint8_t *p = y->init->data;
            assert_int_equal((uintptr_t)p % 64, 0);
            assert_true(p >= base && p <= base + size && y->init->nbytes <= (size_t)(base + size - p));
        } else {
            assert_null(y->init);
        }
    }
    assert_int_equal(a->n_inputs, b->n_inputs);
    for (int k = 0; k < a->n_inputs; k++) assert_int_equal(a->inputs[k], b->inputs[k]);
    assert_int_equal(a->n_outputs, b->n_outputs);
    for (int k = 0; k < a->n_outputs; k++) assert_int_equal(a->outputs[k], b->outputs[k]);
    assert_int_equal(a->n_nodes, b->n_nodes);
    for (int n = 0; n < a->n_nodes; n++) {
        const tc__node *x = &a->nodes[n], *y = &b->nodes[n];
        assert_string_equal(x->name, y->name);
        assert_string_equal(x->op_type, y->op_type);
        assert_string_equal(x->domain, y->domain);
        assert_string_equal(x->fused, y->fused);
        assert_int_equal(x->n_in, y->n_in);
        assert_int_equal(x->n_op_in, y->n_op_in);
        assert_int_equal(x->guard, y->guard);
        assert_int_equal(x->n_out, y->n_out);
        for (int i = 0; i < x->n_in; i++) assert_int_equal(x->in[i], y->in[i]);
        for (int o = 0; o < x->n_out; o++) assert_int_equal(x->out[o], y->out[o]);
        assert_ptr_equal(x->schema, y->schema);
        assert_false(y->removed);
        assert_int_equal(x->epi.bias_input, y->epi.bias_input);
        assert_int_equal(x->epi.residual_input, y->epi.residual_input);
        assert_int_equal(x->epi.act, y->epi.act);
        assert_memory_equal(&x->epi.alpha, &y->epi.alpha, sizeof(float));
        assert_memory_equal(&x->epi.beta, &y->epi.beta, sizeof(float));
        assert_int_equal(x->attrs.n, y->attrs.n);
        for (int k = 0; k < x->attrs.n; k++) {
            const tc__attr *p = &x->attrs.items[k], *q = &y->attrs.items[k];
            assert_string_equal(p->name, q->name);
            assert_int_equal(p->kind, q->kind);
            switch (p->kind) {
            case TC__ATTR_FLOAT: assert_memory_equal(&p->f, &q->f, sizeof(float)); break;
            case TC__ATTR_INT: assert_int_equal(p->i, q->i); break;
            case TC__ATTR_STRING: assert_string_equal(p->s, q->s); break;
            case TC__ATTR_TENSOR:
                compare_tensor(p->t, q->t);
                assert_int_equal((uintptr_t)q->t->data % 64, 0);
                break;
            case TC__ATTR_GRAPH: break;
            case TC__ATTR_FLOATS:
                assert_int_equal(p->n, q->n);
                assert_non_null(q->floats);
                if (p->n) assert_memory_equal(p->floats, q->floats, p->n * sizeof(float));
                break;
            case TC__ATTR_INTS:
                assert_int_equal(p->n, q->n);
                assert_non_null(q->ints);
                if (p->n) assert_memory_equal(p->ints, q->ints, p->n * sizeof(int64_t));
                break;
            case TC__ATTR_STRINGS:
                assert_int_equal(p->n, q->n);
                for (size_t s = 0; s < p->n; s++) assert_string_equal(p->strings[s], q->strings[s]);
                break;
            }
        }
    }
}

/* ---- Tests --------------------------------------------------------------------------- */

static void test_round_trip(void **state) {
    (void)state;
    tc__graph *a = build_graph(ALL_EXTRAS);
    size_t size;
    uint8_t *plan = serialize(a, 0, kBlob, sizeof kBlob, &size);
    tc__graph *b = NULL;
    const void *blob = NULL;
    size_t blob_size = 0;
    tc__err err = {0};
    tc__plan_target_info target;
    tc_status st = tc__plan_deserialize(plan, size, 0, &b, &target, &blob, &blob_size, &err);
    if (st) fail_msg("%s", err.msg);
    compare_graphs(a, b, plan, size);
    /* The TARGET section comes back as written. */
    assert_int_equal(target.backend, TC__BACKEND_CPU);
    assert_int_equal(target.record_size, sizeof(tc__cpu_target));
    const tc__cpu_target want_rec = tc__cpu_target_of(tc__cpu_get());
    assert_memory_equal(target.record, &want_rec, sizeof want_rec);
    assert_int_equal(target.required_caps, 0);
    assert_int_equal(blob_size, sizeof kBlob);
    assert_memory_equal(blob, kBlob, sizeof kBlob);
    assert_int_equal((uintptr_t)blob % 64, 0);
    assert_int_equal(tc__graph_verify(b, true, &err), TC_STATUS_OK);
    assert_int_equal(tc__graph_find_value(b, "unused") >= 0, true);
    assert_null(b->values[tc__graph_find_value(b, "unused")].init);
    /* The loaded graph is as usable as one built in memory: sorting keeps it as it is. */
    assert_int_equal(tc__graph_toposort(b, &err), TC_STATUS_OK);
    compare_graphs(a, b, plan, size);
    tc__graph_destroy(b);

    /* A minimal graph without weights or engine blob. */
    tc__graph *m = build_minimal();
    size_t msize;
    uint8_t *mplan = serialize(m, 0, NULL, 0, &msize);
    st = tc__plan_deserialize(mplan, msize, 0, &b, &target, &blob, &blob_size, &err);
    if (st) fail_msg("%s", err.msg);
    compare_graphs(m, b, mplan, msize);
    assert_int_equal(tc__graph_verify(b, false, &err), TC_STATUS_OK);
    assert_null(blob);
    assert_int_equal(blob_size, 0);
    tc__graph_destroy(b);
    tc__graph_destroy(m);
    free(mplan);
    free(plan);
    tc__graph_destroy(a);
}

static void test_deterministic(void **state) {
    (void)state;
    tc__graph *a = build_graph(ALL_EXTRAS);
    size_t s1, s2, s3;
    uint8_t *p1 = serialize(a, TC__ISA_SSE42 & tc__cpu_get()->isa, kBlob, sizeof kBlob, &s1);
    uint8_t *p2 = serialize(a, TC__ISA_SSE42 & tc__cpu_get()->isa, kBlob, sizeof kBlob, &s2);
    assert_int_equal(s1, s2);
    assert_memory_equal(p1, p2, s1);
    /* Writing the loaded graph again gives the same bytes (nothing lost, nothing added). */
    tc__graph *b = NULL;
    tc__err err = {0};
    assert_int_equal(load(p1, s1, 0, &b, &err), TC_STATUS_OK);
    uint8_t *p3 = serialize(b, TC__ISA_SSE42 & tc__cpu_get()->isa, kBlob, sizeof kBlob, &s3);
    assert_int_equal(s1, s3);
    assert_memory_equal(p1, p3, s1);
    tc__graph_destroy(b);
    /* Strings are stored once: "h" names a tensor only; "relu" appears once in STRINGS. */
    uint64_t ssize = 0;
    const uint8_t *strings = section(p1, TC__PLAN_SECTION_STRINGS, &ssize);
    int count = 0;
    for (uint64_t i = 0; i + 6 <= ssize; i++) count += memcmp(strings + i, "\0relu\0", 6) == 0;
    assert_int_equal(count, 1);
    free(p1);
    free(p2);
    free(p3);
    tc__graph_destroy(a);
}

/* Touches everything a loaded graph points at, writes it again and loads that. */
static void exercise_loaded(tc__graph *g) {
    unsigned sum = 0;
    for (int v = 0; v < g->n_values; v++) {
        const tc__tensor *t = g->values[v].init;
        for (size_t i = 0; t && i < t->nbytes; i++) sum += ((const uint8_t *)t->data)[i];
        sum += (unsigned)strlen(g->values[v].name);
    }
    for (int n = 0; n < g->n_nodes; n++)
        for (int k = 0; k < g->nodes[n].attrs.n; k++) {
            const tc__attr *a = &g->nodes[n].attrs.items[k];
            if (a->kind == TC__ATTR_INTS)
                for (size_t i = 0; i < a->n; i++) sum += (unsigned)a->ints[i];
            if (a->kind == TC__ATTR_STRINGS)
                for (size_t i = 0; i < a->n; i++) sum += (unsigned)strlen(a->strings[i]);
            if (a->kind == TC__ATTR_TENSOR)
                for (size_t i = 0; i < a->t->nbytes; i++) sum += ((const uint8_t *)a->t->data)[i];
        }
    (void)sum;
    void *again = NULL;
    size_t size = 0;
    tc__err err = {0};
    const tc__plan_target_info target = here_target(0);
    tc_status st = tc__plan_serialize(g, &target, NULL, 0, &again, &size, &err);
    if (st) fail_msg("a loaded graph does not serialize: %s", err.msg);
    tc__graph *g2 = NULL;
    st = load(again, size, 0, &g2, &err);
    if (st) fail_msg("a re-serialized graph does not load: %s", err.msg);
    tc__graph_destroy(g2);
    free(again);
}

static void test_truncation(void **state) {
    (void)state;
    tc__graph *a = build_graph(0);
    size_t size;
    uint8_t *plan = serialize(a, 0, kBlob, 16, &size);
    for (size_t len = 0; len < size; len++) {
        uint8_t *cut = aligned_copy(plan, len);
        tc__graph *g = NULL;
        tc__err err = {0};
        assert_int_equal(load(cut, len, 0, &g, &err), TC_STATUS_CORRUPT_FILE);
        assert_null(g);
        assert_true(err.msg[0] != '\0');
        err = (tc__err){0};
        assert_int_equal(load(cut, len, TC__PLAN_NO_CHECKSUMS | TC__PLAN_NO_TARGET_CHECK, &g, &err),
                         TC_STATUS_CORRUPT_FILE);
        free(cut);
    }
    /* Extra bytes after the end are as wrong as missing ones. */
    uint8_t *longer = calloc(1, size + 64);
    memcpy(longer, plan, size);
    uint8_t *al = aligned_copy(longer, size + 64);
    expect_failure(al, size + 64, 0, TC_STATUS_CORRUPT_FILE, "but its header says");
    expect_failure(plan, 100, 0, TC_STATUS_CORRUPT_FILE, "smaller than its 128-byte header");
    free(al);
    free(longer);
    free(plan);
    tc__graph_destroy(a);
}

static void test_byte_flips(void **state) {
    (void)state;
    tc__graph *a = build_graph(0);
    size_t size;
    uint8_t *plan = serialize(a, 0, kBlob, 40, &size);
    uint8_t *buf = aligned_copy(plan, size);
    int loaded_without_checksums = 0;
    for (int iter = 0; iter < 6000; iter++) {
        memcpy(buf, plan, size);
        int flips = 1 + (int)(rnd() % 3);
        for (int f = 0; f < flips; f++) {
            size_t pos = (size_t)(rnd() % size);
            uint8_t x = (uint8_t)(1 + rnd() % 255);
            buf[pos] ^= x;
        }
        if (memcmp(buf, plan, size) == 0) continue; /* flips cancelled out */
        tc__graph *g = NULL;
        tc__err err = {0};
        tc_status st = load(buf, size, 0, &g, &err);
        if (st != TC_STATUS_CORRUPT_FILE && st != TC_STATUS_UNSUPPORTED)
            fail_msg("iteration %d: flip accepted or wrong status %d: %s", iter, (int)st, err.msg);
        assert_null(g);
        err = (tc__err){0};
        st = load(buf, size, TC__PLAN_NO_CHECKSUMS | TC__PLAN_NO_TARGET_CHECK, &g, &err);
        if (st == TC_STATUS_OK) {
            loaded_without_checksums++;
            exercise_loaded(g);
            tc__graph_destroy(g);
        } else {
            assert_null(g);
            assert_true(err.msg[0] != '\0');
        }
    }
    /* Many flips hit data (weights, floats, padding of reserved fields): some must load. */
    assert_true(loaded_without_checksums > 0);
    free(buf);
    free(plan);
    tc__graph_destroy(a);
}

static void test_header_errors(void **state) {
    (void)state;
    tc__graph *a = build_graph(0);
    size_t size;
    uint8_t *plan = serialize(a, 0, NULL, 0, &size);
    uint8_t *buf = aligned_copy(plan, size);

    memcpy(buf, plan, size);
    buf[1] = 'X';
    expect_failure(buf, size, 0, TC_STATUS_CORRUPT_FILE, "not a tailcut plan");

    memcpy(buf, plan, size);
    ((tc__plan_header *)buf)->version = 4;
    reseal(buf);
    expect_failure(buf, size, 0, TC_STATUS_UNSUPPORTED, "plan format version 4, this build reads 3: rebuild the plan");

    /* A version-2 plan (before node guards: every guard byte zero) is still read. */
    memcpy(buf, plan, size);
    ((tc__plan_header *)buf)->version = 2;
    for (int n = 0; n < a->n_nodes; n++) ((tc__plan_node *)table(buf, TC__PLAN_TABLE_NODES))[n].guard = 0;
    reseal(buf);
    {
        tc__graph *g2 = NULL;
        tc__err err2 = {0};
        assert_int_equal(load(buf, size, 0, &g2, &err2), TC_STATUS_OK);
        for (int n = 0; n < g2->n_nodes; n++) assert_int_equal(g2->nodes[n].guard, -1);
        tc__graph_destroy(g2);
    }

    /* A version-1 plan (an earlier tailcut's, its CPU target in the header): refused, naming the cure. */
    memcpy(buf, plan, size);
    ((tc__plan_header *)buf)->version = 1;
    reseal(buf);
    expect_failure(buf, size, 0, TC_STATUS_UNSUPPORTED, "plan format version 1 was written by an earlier tailcut");
    expect_failure(buf, size, 0, TC_STATUS_UNSUPPORTED, "rebuild the plan");

    memcpy(buf, plan, size);
    ((tc__plan_header *)buf)->reserved[3] = 1;
    expect_failure(buf, size, 0, TC_STATUS_CORRUPT_FILE, "plan header is corrupt (checksum mismatch)");
    reseal(buf);
    expect_failure(buf, size, 0, TC_STATUS_CORRUPT_FILE, "plan header has reserved bytes set");

    memcpy(buf, plan, size);
    section(buf, TC__PLAN_SECTION_GRAPH, NULL)[200] ^= 1;
    expect_failure(buf, size, 0, TC_STATUS_CORRUPT_FILE, "plan section GRAPH is corrupt (checksum mismatch)");

    memcpy(buf, plan, size);
    buf[sizeof(tc__plan_header) + 9] ^= 1;
    expect_failure(buf, size, 0, TC_STATUS_CORRUPT_FILE, "plan section table is corrupt");

    /* A non-zero byte in padding between sections is caught even without checksums. */
    const tc__plan_section *psec = (const tc__plan_section *)(plan + sizeof(tc__plan_header));
    bool found_gap = false;
    for (int i = 0; i < TC__PLAN_SECTION_COUNT && !found_gap; i++) {
        uint64_t end = psec[i].offset + psec[i].size;
        if (end % 64 == 0) continue;
        memcpy(buf, plan, size);
        buf[end] = 7;
        expect_failure(buf, size, TC__PLAN_NO_CHECKSUMS, TC_STATUS_CORRUPT_FILE, "non-zero padding byte");
        expect_failure(buf, size, 0, TC_STATUS_CORRUPT_FILE, "non-zero padding byte");
        found_gap = true;
    }
    assert_true(found_gap);

    /* Overlapping sections. */
    memcpy(buf, plan, size);
    tc__plan_section *sec = (tc__plan_section *)(buf + sizeof(tc__plan_header));
    sec[1].offset = sec[0].offset;
    reseal(buf);
    expect_failure(buf, size, 0, TC_STATUS_CORRUPT_FILE, "overlap");

    /* The buffer must be 64-byte aligned. */
    void *base = NULL;
    assert_int_equal(posix_memalign(&base, 64, size + 8), 0);
    uint8_t *odd = (uint8_t *)base + 8;
    memcpy(odd, plan, size);
    tc__graph *g = NULL;
    tc__err err = {0};
    assert_int_equal(load(odd, size, 0, &g, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "64-byte aligned"));
    free(base);
    free(buf);
    free(plan);
    tc__graph_destroy(a);
}

/* The CPU target record inside a plan's TARGET section: read (get) and written back (put). */
static tc__cpu_target get_record(const uint8_t *plan) {
    tc__cpu_target t;
    memcpy(&t, section((uint8_t *)plan, TC__PLAN_SECTION_TARGET, NULL) + sizeof(tc__plan_target), sizeof t);
    return t;
}
static void put_record(uint8_t *plan, const tc__cpu_target *t) {
    memcpy(section(plan, TC__PLAN_SECTION_TARGET, NULL) + sizeof(tc__plan_target), t, sizeof *t);
}

static void test_target_errors(void **state) {
    (void)state;
    const tc__cpu *cpu = tc__cpu_get();
    tc__graph *a = build_graph(0);
    size_t size;
    uint8_t *plan = serialize(a, cpu->isa, NULL, 0, &size);
    uint8_t *buf = aligned_copy(plan, size);
    tc__graph *g = NULL;
    tc__err err = {0};
    assert_int_equal(load(plan, size, 0, &g, &err), TC_STATUS_OK);
    tc__graph_destroy(g);

    /* Another vendor and model (never this machine's: the test runs on AMD and Intel hosts alike). */
    const bool amd_here = strcmp(cpu->vendor, "AuthenticAMD") == 0;
    const char *other_vendor = amd_here ? "GenuineIntel" : "AuthenticAMD";
    const uint32_t other_family = amd_here ? 6 : 25, other_model = amd_here ? 143 : 17;
    memcpy(buf, plan, size);
    tc__cpu_target t = get_record(buf);
    memset(t.vendor, 0, sizeof t.vendor);
    memcpy(t.vendor, other_vendor, 12);
    t.family = other_family;
    t.model = other_model;
    put_record(buf, &t);
    reseal(buf);
    char want[256];
    snprintf(want, sizeof want, "plan was built for %s family %u model %u with ", other_vendor, other_family,
             other_model);
    expect_failure(buf, size, 0, TC_STATUS_UNSUPPORTED_HARDWARE, want);
    snprintf(want, sizeof want, "this machine is %s family %u model %u", cpu->vendor, cpu->family, cpu->model);
    expect_failure(buf, size, 0, TC_STATUS_UNSUPPORTED_HARDWARE, want);
    expect_failure(buf, size, 0, TC_STATUS_UNSUPPORTED_HARDWARE, "a different CPU");
    /* ... still readable for inspection. */
    err = (tc__err){0};
    assert_int_equal(load(buf, size, TC__PLAN_NO_TARGET_CHECK, &g, &err), TC_STATUS_OK);
    compare_graphs(a, g, buf, size);
    tc__graph_destroy(g);

    /* Same model, another stepping: accepted. */
    memcpy(buf, plan, size);
    t = get_record(buf);
    t.stepping ^= 1;
    put_record(buf, &t);
    reseal(buf);
    assert_int_equal(load(buf, size, 0, &g, &err), TC_STATUS_OK);
    tc__graph_destroy(g);

    /* Another CPU kernel revision (a plan of an earlier build). */
    memcpy(buf, plan, size);
    t = get_record(buf);
    t.kernel_rev = 0;
    put_record(buf, &t);
    reseal(buf);
    snprintf(want, sizeof want, "plan written for CPU kernel revision 0, this build runs revision %u: rebuild the plan",
             (unsigned)TC__CPU_KERNEL_REV);
    expect_failure(buf, size, 0, TC_STATUS_UNSUPPORTED, want);

    /* Same model, an ISA extension this machine lacks. */
    uint64_t lacking = (TC__ISA_ALL & ~cpu->isa) ? (TC__ISA_ALL & ~cpu->isa) & -(TC__ISA_ALL & ~cpu->isa) : 1ull << 40;
    memcpy(buf, plan, size);
    ((tc__plan_target *)section(buf, TC__PLAN_SECTION_TARGET, NULL))->required_caps |= lacking;
    reseal(buf);
    char name[64];
    snprintf(want, sizeof want, "(missing %s)", tc__isa_format(lacking, name, sizeof name));
    expect_failure(buf, size, 0, TC_STATUS_UNSUPPORTED_HARDWARE, want);

    /* A backend this build does not have (a CUDA plan on a build without CUDA), and one no tailcut has. */
    memcpy(buf, plan, size);
    ((tc__plan_target *)section(buf, TC__PLAN_SECTION_TARGET, NULL))->backend = TC__BACKEND_CUDA;
    reseal(buf);
    if (tc__backend_get(TC__BACKEND_CUDA) == NULL) {
        expect_failure(buf, size, 0, TC_STATUS_UNSUPPORTED, "plan was built for the cuda backend");
        expect_failure(buf, size, TC__PLAN_NO_TARGET_CHECK, TC_STATUS_UNSUPPORTED, "not built with CUDA");
    }
    memcpy(buf, plan, size);
    ((tc__plan_target *)section(buf, TC__PLAN_SECTION_TARGET, NULL))->backend = 77;
    reseal(buf);
    expect_failure(buf, size, TC__PLAN_NO_TARGET_CHECK, TC_STATUS_CORRUPT_FILE, "backend 77, which no tailcut has");

    /* Malformed TARGET records: a size the section does not hold, reserved bits, a CPU record of another size. */
    memcpy(buf, plan, size);
    ((tc__plan_target *)section(buf, TC__PLAN_SECTION_TARGET, NULL))->record_size += 8;
    reseal(buf);
    expect_failure(buf, size, TC__PLAN_NO_TARGET_CHECK, TC_STATUS_CORRUPT_FILE, "bytes of backend record");
    memcpy(buf, plan, size);
    ((tc__plan_target *)section(buf, TC__PLAN_SECTION_TARGET, NULL))->reserved[1] = 1;
    reseal(buf);
    expect_failure(buf, size, TC__PLAN_NO_TARGET_CHECK, TC_STATUS_CORRUPT_FILE, "reserved bits set");
    memcpy(buf, plan, size);
    t = get_record(buf);
    t.reserved = 5;
    put_record(buf, &t);
    reseal(buf);
    expect_failure(buf, size, 0, TC_STATUS_CORRUPT_FILE, "CPU target record has reserved bits set");

    /* The writer refuses a backend no tailcut has and a record past the limit. */
    void *out = NULL;
    size_t out_size = 0;
    tc__plan_target_info bad = here_target(0);
    bad.backend = 77;
    err = (tc__err){0};
    assert_int_equal(tc__plan_serialize(a, &bad, NULL, 0, &out, &out_size, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "bad target"));
    bad = here_target(0);
    bad.record_size = TC__TARGET_RECORD_MAX + 1;
    assert_int_equal(tc__plan_serialize(a, &bad, NULL, 0, &out, &out_size, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_null(out);
    free(buf);
    free(plan);
    tc__graph_destroy(a);
}

/* Records that are well-sealed but wrong: each must give CORRUPT_FILE naming the problem. */
static void test_bad_records(void **state) {
    (void)state;
    tc__graph *a = build_graph(0);
    size_t size;
    uint8_t *plan = serialize(a, 0, NULL, 0, &size);
    uint8_t *buf = aligned_copy(plan, size);
    uint64_t ssize = 0;
    section(plan, TC__PLAN_SECTION_STRINGS, &ssize);
    const uint32_t flag_sets[2] = {0, TC__PLAN_NO_CHECKSUMS | TC__PLAN_NO_TARGET_CHECK};
    for (int f = 0; f < 2; f++) {
        uint32_t flags = flag_sets[f];
#define CASE(patch, want)                                                      \
    do {                                                                       \
        memcpy(buf, plan, size);                                               \
        patch;                                                                 \
        reseal(buf);                                                           \
        expect_failure(buf, size, flags, TC_STATUS_CORRUPT_FILE, want);        \
    } while (0)
        CASE(((tc__plan_index *)table(buf, TC__PLAN_TABLE_NODE_IO))[0].value = 9999, "refers to tensor 9999");
        CASE(((tc__plan_value *)table(buf, TC__PLAN_TABLE_VALUES))[1].name = (uint32_t)ssize + 5, "string reference");
        CASE(((tc__plan_tensor *)table(buf, TC__PLAN_TABLE_TENSORS))[0].offset += 8, "64-byte aligned");
        CASE(((tc__plan_tensor *)table(buf, TC__PLAN_TABLE_TENSORS))[0].dtype = 99, "unknown data type 99");
        CASE(((tc__plan_tensor *)table(buf, TC__PLAN_TABLE_TENSORS))[0].nbytes += 4, "shape needs");
        CASE(((tc__plan_value *)table(buf, TC__PLAN_TABLE_VALUES))[0].rank = 9, "rank 9");
        CASE(((tc__plan_value *)table(buf, TC__PLAN_TABLE_VALUES))[0].dims[0].sym = 7, "symbol 7");
        CASE(((tc__plan_value *)table(buf, TC__PLAN_TABLE_VALUES))[0].name =
                 ((tc__plan_value *)table(buf, TC__PLAN_TABLE_VALUES))[1].name,
             "defined twice");
        CASE(((tc__plan_node *)table(buf, TC__PLAN_TABLE_NODES))[0].act = TC__ACT_COUNT_, "epilogue");
        CASE(((tc__plan_node *)table(buf, TC__PLAN_TABLE_NODES))[1].io_first += 1, "out of order");
        CASE(((tc__plan_node *)table(buf, TC__PLAN_TABLE_NODES))[0].n_op_in = 9, "bad counts");
        CASE(((tc__plan_node *)table(buf, TC__PLAN_TABLE_NODES))[0].guard = 1, "its guard is input 0");
        CASE(((tc__plan_node *)table(buf, TC__PLAN_TABLE_NODES))[0].guard = 200, "its guard is input 199");
        CASE(((tc__plan_attr *)table(buf, TC__PLAN_TABLE_ATTRS))[0].kind = 42, "unknown kind 42");
        CASE(((tc__plan_attr *)table(buf, TC__PLAN_TABLE_ATTRS))[5].n = 1ull << 61, "lie outside");
        CASE(((tc__plan_graph *)section(buf, TC__PLAN_SECTION_GRAPH, NULL))->tables[1].stride = 8, "records");
        CASE(((tc__plan_graph *)section(buf, TC__PLAN_SECTION_GRAPH, NULL))->tables[4].count = 1u << 30, "lies outside");
        CASE(((tc__plan_graph *)section(buf, TC__PLAN_SECTION_GRAPH, NULL))->opset = 0, "default-domain opset");
        CASE(section(buf, TC__PLAN_SECTION_STRINGS, NULL)[ssize - 1] = 'z', "NUL");
        /* Node 0 (MatMul) writes the graph input x. */
        CASE(((tc__plan_index *)table(buf, TC__PLAN_TABLE_NODE_IO))[3].value = 0, "writes 'x'");
        /* Node 0 reads h, which node 0 itself makes: not in topological order. */
        CASE(((tc__plan_index *)table(buf, TC__PLAN_TABLE_NODE_IO))[0].value =
                 ((tc__plan_index *)table(buf, TC__PLAN_TABLE_NODE_IO))[3].value,
             "is not produced before it");
        CASE(((tc__plan_index *)table(buf, TC__PLAN_TABLE_OUTPUTS))[0].value = 0, "output 0 refers to tensor 0");
#undef CASE
    }
    free(buf);
    free(plan);
    tc__graph_destroy(a);
}

static void test_writer_errors(void **state) {
    (void)state;
    void *out = NULL;
    size_t size = 0;
    tc__err err = {0};
    tc__graph *a = build_graph(0);
    const tc__plan_target_info here = here_target(0);

    a->nodes[2].removed = true;
    assert_int_equal(tc__plan_serialize(a, &here, NULL, 0, &out, &size, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "compact the graph"));
    a->nodes[2].removed = false;

    tc__node tmp = a->nodes[0];
    a->nodes[0] = a->nodes[1];
    a->nodes[1] = tmp;
    err = (tc__err){0};
    assert_int_equal(tc__plan_serialize(a, &here, NULL, 0, &out, &size, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "sort the graph"));
    a->nodes[1] = a->nodes[0];
    a->nodes[0] = tmp;

    int32_t w = tc__graph_find_value(a, "W");
    a->values[w].info.shape.dims[0].value = 5;
    err = (tc__err){0};
    assert_int_equal(tc__plan_serialize(a, &here, NULL, 0, &out, &size, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "initializer 'W'"));
    a->values[w].info.shape.dims[0].value = 4;

    a->nodes[0].epi.bias_input = 5;
    err = (tc__err){0};
    assert_int_equal(tc__plan_serialize(a, &here, NULL, 0, &out, &size, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "epilogue"));
    a->nodes[0].epi.bias_input = 2;

    err = (tc__err){0};
    assert_int_equal(tc__plan_serialize(a, &here, NULL, 5, &out, &size, &err), TC_STATUS_INVALID_ARGUMENT);
    assert_null(out);

    err = (tc__err){0};
    assert_int_equal(tc__plan_serialize(a, &here, NULL, 0, &out, &size, &err), TC_STATUS_OK);
    free(out);
    tc__graph_destroy(a);
}

/* Writes the fuzzer's seeds when TC_PLAN_CORPUS_DIR names a folder. */
static void test_write_corpus(void **state) {
    (void)state;
    const char *dir = getenv("TC_PLAN_CORPUS_DIR");
    if (dir == NULL || dir[0] == '\0') skip();
    tc__graph *graphs[3] = {build_graph(9), build_graph(0), build_minimal()}; /* seeds under 8 KiB */
    const char *names[3] = {"full.bin", "small.bin", "minimal.bin"}; /* not *.plan: .gitignore skips those */
    for (int i = 0; i < 3; i++) {
        size_t size;
        uint8_t *plan = serialize(graphs[i], 0, kBlob, i == 2 ? 0 : (size_t)(i + 1) * 8, &size);
        assert_true(size < 8192);
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(plan, 1, size, f), size);
        assert_int_equal(fclose(f), 0);
        free(plan);
        tc__graph_destroy(graphs[i]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),    cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_truncation),    cmocka_unit_test(test_byte_flips),
        cmocka_unit_test(test_header_errors), cmocka_unit_test(test_target_errors),
        cmocka_unit_test(test_bad_records),   cmocka_unit_test(test_writer_errors),
        cmocka_unit_test(test_write_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
