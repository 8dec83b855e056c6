/*
 * pass_test_util.h - helpers for the optimisation pass tests: a small graph builder (inputs
 * with symbolic dims, initializers, nodes from comma-separated value names, attributes,
 * outputs), a runner that feeds seeded random inputs through the reference executor, and
 * "apply a pass, then check the outputs did not change" checks.
 *
 * Include after <cmocka.h>. Every helper is static inline: each test file is its own program.
 */
#ifndef TC_TESTS_PASS_TEST_UTIL_H
#define TC_TESTS_PASS_TEST_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ref_executor.h"
#include "engine/ref_node.h"
#include "graph/graph.h"
#include "passes/passes.h"

#define PTU_MAX_IO 16

typedef tc_status (*ptu_pass_fn)(tc__pass_ctx *ctx);

/* ---- PRNG (xorshift64*) ---------------------------------------------------------------- */

static inline uint64_t ptu_next(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* Uniform in [lo, hi), never exactly zero. */
static inline double ptu_uniform(uint64_t *s, double lo, double hi) {
    for (;;) {
        double v = lo + (hi - lo) * ((double)(ptu_next(s) >> 11) * (1.0 / 9007199254740992.0));
        if (v != 0.0) return v;
    }
}

/* ---- building graphs ------------------------------------------------------------------- */

static inline tc__graph *ptu_graph(int64_t opset) {
    tc__graph *g = tc__graph_create();
    assert_non_null(g);
    g->opset = opset;
    g->inputs = tc__arena_alloc(&g->arena, sizeof(int32_t) * PTU_MAX_IO, 4);
    g->outputs = tc__arena_alloc(&g->arena, sizeof(int32_t) * PTU_MAX_IO, 4);
    assert_non_null(g->inputs);
    assert_non_null(g->outputs);
    return g;
}

static inline int32_t ptu_value(tc__graph *g, const char *name) {
    int32_t v;
    tc__err err = {0};
    assert_int_equal(tc__graph_value_by_name(g, name, &v, &err), TC_STATUS_OK);
    return v;
}

/* Parses "2x3xbatchx?" ("" = scalar): numbers are known dims, names are symbols, "?" is unknown. */
static inline void ptu_shape(tc__graph *g, const char *spec, tc__shape *s) {
    s->rank = 0;
    const char *p = spec;
    while (*p) {
        char tok[64];
        size_t n = strcspn(p, "x");
        assert_true(n > 0 && n < sizeof tok);
        memcpy(tok, p, n);
        tok[n] = '\0';
        if (strcmp(tok, "?") == 0) {
            s->dims[s->rank++] = tc__dim_unknown();
        } else if (tok[0] >= '0' && tok[0] <= '9') {
            s->dims[s->rank++] = tc__dim_known(strtoll(tok, NULL, 10));
        } else {
            int32_t sym = tc__graph_symbol(g, tok);
            assert_true(sym >= 0);
            s->dims[s->rank++] = (tc__dim){-1, sym};
        }
        p += n;
        if (*p == 'x') p++;
    }
}

static inline int32_t ptu_input(tc__graph *g, const char *name, tc_dtype dt, const char *shape) {
    int32_t v = ptu_value(g, name);
    g->values[v].is_input = true;
    g->values[v].info.dtype = dt;
    ptu_shape(g, shape, &g->values[v].info.shape);
    assert_true(g->n_inputs < PTU_MAX_IO);
    g->inputs[g->n_inputs++] = v;
    return v;
}

static inline void ptu_output(tc__graph *g, const char *name) {
    int32_t v = ptu_value(g, name);
    g->values[v].is_output = true;
    assert_true(g->n_outputs < PTU_MAX_IO);
    g->outputs[g->n_outputs++] = v;
}

/* An initializer of dtype dt and concrete shape; vals (numel doubles) or, when NULL, seeded
 * random values in [lo, hi). */
static inline int32_t ptu_init_ex(tc__graph *g, const char *name, tc_dtype dt, const char *shape, const double *vals,
                                  uint64_t seed, double lo, double hi) {
    tc__shape s;
    ptu_shape(g, shape, &s);
    int64_t dims[TC_MAX_RANK] = {0};
    for (int32_t i = 0; i < s.rank; i++) {
        assert_true(s.dims[i].value >= 0);
        dims[i] = s.dims[i].value;
    }
    tc__tensor t;
    tc__err err = {0};
    assert_int_equal(tc__tensor_alloc(&t, dt, s.rank, dims, &err), TC_STATUS_OK);
    uint64_t st = seed * 0x9E3779B97F4A7C15ull + 12345u;
    for (int64_t i = 0; i < tc__tensor_numel(&t); i++) {
        double v = vals ? vals[i] : ptu_uniform(&st, lo, hi);
        if (tc__dtype_is_float(dt)) tc__tensor_set_f64(&t, i, v);
        else tc__tensor_set_i64(&t, i, (int64_t)v);
    }
    int32_t out;
    assert_int_equal(tc__graph_add_initializer(g, name, &t, &out, &err), TC_STATUS_OK);
    assert_string_equal(g->values[out].name, name);
    tc__tensor_free(&t);
    return out;
}

/* Random float32 initializer in [-1, 1). */
static inline int32_t ptu_init(tc__graph *g, const char *name, const char *shape, uint64_t seed) {
    return ptu_init_ex(g, name, TC_DTYPE_FLOAT32, shape, NULL, seed, -1.0, 1.0);
}

/* float32 initializer holding vals. */
static inline int32_t ptu_init_f(tc__graph *g, const char *name, const char *shape, const double *vals) {
    return ptu_init_ex(g, name, TC_DTYPE_FLOAT32, shape, vals, 0, 0.0, 0.0);
}

/* int64 initializer holding vals. */
static inline int32_t ptu_init_i64(tc__graph *g, const char *name, const char *shape, const double *vals) {
    return ptu_init_ex(g, name, TC_DTYPE_INT64, shape, vals, 0, 0.0, 0.0);
}

/* float32 scalar initializer (rank 0). */
static inline int32_t ptu_scalar(tc__graph *g, const char *name, double v) { return ptu_init_f(g, name, "", &v); }

/* Splits a comma-separated list of names; an empty name is an absent value (-1). */
static inline int ptu_names(tc__graph *g, const char *list, int32_t *out) {
    int n = 0;
    const char *p = list;
    if (p == NULL || *p == '\0') return 0;
    for (;;) {
        char tok[128];
        size_t k = strcspn(p, ",");
        assert_true(k < sizeof tok);
        memcpy(tok, p, k);
        tok[k] = '\0';
        out[n++] = k ? ptu_value(g, tok) : -1;
        p += k;
        if (*p != ',') break;
        p++;
    }
    return n;
}

/* Adds a node of type op reading `ins` and writing `outs` (comma-separated names). */
static inline int32_t ptu_node(tc__graph *g, const char *op, const char *ins, const char *outs) {
    int32_t in[32], out[16];
    int n_in = ptu_names(g, ins, in), n_out = ptu_names(g, outs, out);
    char name[160];
    snprintf(name, sizeof name, "%s_%s", op, outs);
    int32_t n;
    tc__err err = {0};
    assert_int_equal(tc__graph_add_node(g, name, op, "", n_in, n_out, &n, &err), TC_STATUS_OK);
    for (int i = 0; i < n_in; i++) g->nodes[n].in[i] = in[i];
    for (int i = 0; i < n_out; i++) g->nodes[n].out[i] = out[i];
    return n;
}

static inline tc__attr *ptu_attr_slot(tc__graph *g, int32_t n, const char *name, tc__attr_kind kind) {
    tc__node *node = &g->nodes[n];
    tc__attr *items = tc__arena_alloc(&g->arena, sizeof(tc__attr) * (size_t)(node->attrs.n + 1), 8);
    assert_non_null(items);
    if (node->attrs.n) memcpy(items, node->attrs.items, sizeof(tc__attr) * (size_t)node->attrs.n);
    tc__attr *a = &items[node->attrs.n];
    memset(a, 0, sizeof *a);
    a->name = tc__arena_strdup(&g->arena, name);
    a->kind = kind;
    node->attrs.items = items;
    node->attrs.n++;
    return a;
}

static inline void ptu_attr_int(tc__graph *g, int32_t n, const char *name, int64_t v) {
    ptu_attr_slot(g, n, name, TC__ATTR_INT)->i = v;
}
static inline void ptu_attr_float(tc__graph *g, int32_t n, const char *name, float v) {
    ptu_attr_slot(g, n, name, TC__ATTR_FLOAT)->f = v;
}
static inline void ptu_attr_string(tc__graph *g, int32_t n, const char *name, const char *v) {
    ptu_attr_slot(g, n, name, TC__ATTR_STRING)->s = tc__arena_strdup(&g->arena, v);
}
static inline void ptu_attr_ints(tc__graph *g, int32_t n, const char *name, size_t count, const int64_t *v) {
    int64_t *copy = tc__arena_alloc(&g->arena, sizeof(int64_t) * (count ? count : 1), 8);
    assert_non_null(copy);
    if (count) memcpy(copy, v, sizeof(int64_t) * count);
    tc__attr *a = ptu_attr_slot(g, n, name, TC__ATTR_INTS);
    a->ints = copy;
    a->n = count;
}

/* Sorts, verifies and infers shapes (with constant evaluation), as model loading does. */
static inline void ptu_finish(tc__graph *g) {
    tc__err err = {0};
    tc_status st = tc__graph_toposort(g, &err);
    if (st == TC_STATUS_OK) st = tc__graph_verify(g, false, &err);
    if (st == TC_STATUS_OK) st = tc__graph_infer_shapes(g, false, tc__ref_eval, &g->opset, &err);
    if (st != TC_STATUS_OK) fail_msg("finishing the graph: %s", err.msg);
}

/* ---- running and comparing -------------------------------------------------------------- */

/* Runs g on seeded random inputs (symbol k has size 2 + k % 3); fills outs[0..n_outputs). */
static inline void ptu_run(const tc__graph *g, uint64_t seed, tc__tensor *outs) {
    tc__tensor in[PTU_MAX_IO];
    const char *names[PTU_MAX_IO];
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 777u;
    tc__err err = {0};
    for (int k = 0; k < g->n_inputs; k++) {
        const tc__value *v = &g->values[g->inputs[k]];
        int64_t dims[TC_MAX_RANK];
        for (int32_t i = 0; i < v->info.shape.rank; i++) {
            tc__dim d = v->info.shape.dims[i];
            dims[i] = d.value >= 0 ? d.value : 2 + (d.sym >= 0 ? d.sym % 3 : 0);
        }
        assert_int_equal(tc__tensor_alloc(&in[k], v->info.dtype, v->info.shape.rank, dims, &err), TC_STATUS_OK);
        for (int64_t i = 0; i < tc__tensor_numel(&in[k]); i++) {
            if (tc__dtype_is_float(v->info.dtype)) tc__tensor_set_f64(&in[k], i, ptu_uniform(&s, -2.0, 2.0));
            else if (v->info.dtype == TC_DTYPE_BOOL) tc__tensor_set_i64(&in[k], i, 0);
            else tc__tensor_set_i64(&in[k], i, (int64_t)(ptu_next(&s) % 5));
        }
        names[k] = v->name;
    }
    tc_status st = tc__ref_execute(g, g->n_inputs, names, in, outs, &err);
    for (int k = 0; k < g->n_inputs; k++) tc__tensor_free(&in[k]);
    if (st != TC_STATUS_OK) fail_msg("reference run: %s", err.msg);
}

static inline void ptu_free_all(tc__tensor *t, int n) {
    for (int k = 0; k < n; k++) tc__tensor_free(&t[k]);
}

/* Checks a ~ b elementwise: |a - b| <= rtol * (|a| + max|a|). */
static inline void ptu_compare(const tc__tensor *a, const tc__tensor *b, int n, double rtol) {
    for (int k = 0; k < n; k++) {
        assert_int_equal(a[k].dtype, b[k].dtype);
        assert_int_equal(a[k].rank, b[k].rank);
        for (int32_t i = 0; i < a[k].rank; i++) assert_int_equal(a[k].dims[i], b[k].dims[i]);
        int64_t count = tc__tensor_numel(&a[k]);
        double scale = 0.0;
        for (int64_t i = 0; i < count; i++) scale = fmax(scale, fabs(tc__tensor_get_f64(&a[k], i)));
        for (int64_t i = 0; i < count; i++) {
            double x = tc__tensor_get_f64(&a[k], i), y = tc__tensor_get_f64(&b[k], i);
            if (!(fabs(x - y) <= rtol * (fabs(x) + scale)))
                fail_msg("output %d element %lld: %.9g before, %.9g after", k, (long long)i, x, y);
        }
    }
}

/* Drops removed nodes, re-sorts and re-infers, as the pass driver does after a change. */
static inline void ptu_settle(tc__graph *g) {
    tc__err err = {0};
    tc__graph_compact(g);
    tc_status st = tc__graph_toposort(g, &err);
    if (st == TC_STATUS_OK) st = tc__graph_infer_shapes(g, false, tc__ref_eval, &g->opset, &err);
    if (st != TC_STATUS_OK) fail_msg("settling after the pass: %s", err.msg);
}

/* Runs one pass and settles the graph; returns the number of rewrites. */
static inline int ptu_apply(tc__graph *g, ptu_pass_fn pass) {
    tc__err err = {0};
    tc__pass_ctx ctx = {.g = g, .eval = tc__ref_eval, .eval_user = &g->opset, .changes = 0, .err = &err};
    tc_status st = pass(&ctx);
    if (st != TC_STATUS_OK) fail_msg("pass failed: %s", err.msg);
    if (ctx.changes > 0) ptu_settle(g);
    return ctx.changes;
}

/* Runs g before and after the pass on the same random inputs and checks the outputs agree. */
static inline int ptu_apply_checked(tc__graph *g, ptu_pass_fn pass) {
    tc__tensor before[PTU_MAX_IO], after[PTU_MAX_IO];
    ptu_run(g, 1, before);
    int changes = ptu_apply(g, pass);
    ptu_run(g, 1, after);
    ptu_compare(before, after, g->n_outputs, 1e-5);
    ptu_free_all(before, g->n_outputs);
    ptu_free_all(after, g->n_outputs);
    return changes;
}

/* ---- inspecting ------------------------------------------------------------------------ */

static inline int ptu_count(const tc__graph *g, const char *op) {
    int c = 0;
    for (int n = 0; n < g->n_nodes; n++) c += !g->nodes[n].removed && strcmp(g->nodes[n].op_type, op) == 0;
    return c;
}

/* The k-th live node of type op (asserts it exists). */
static inline const tc__node *ptu_nth(const tc__graph *g, const char *op, int k) {
    for (int n = 0; n < g->n_nodes; n++)
        if (!g->nodes[n].removed && strcmp(g->nodes[n].op_type, op) == 0 && k-- == 0) return &g->nodes[n];
    fail_msg("no node %s #%d", op, k);
    return NULL;
}

/* The node producing the named value (asserts there is one). */
static inline const tc__node *ptu_producer(const tc__graph *g, const char *name) {
    int32_t v = tc__graph_find_value(g, name);
    assert_true(v >= 0);
    assert_true(g->values[v].producer >= 0);
    return &g->nodes[g->values[v].producer];
}

/* The name of input i of node. */
static inline const char *ptu_in_name(const tc__graph *g, const tc__node *node, int i) {
    assert_true(i < node->n_in && node->in[i] >= 0);
    return g->values[node->in[i]].name;
}

#endif
