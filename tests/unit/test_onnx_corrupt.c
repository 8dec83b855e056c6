/*
 * test_onnx_corrupt.c - robustness of the ONNX importer against damaged files: every truncation of
 * small valid models and a few thousand seeded mutations (bit flips, byte changes, deletions,
 * duplications) must either import into a consistent graph or fail with a status and a message.
 * A crash, leak or out-of-bounds read shows up under the sanitizer build.
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "onnx_test_util.h"

#define DATA_DIR TC_TEST_DATA_DIR "/onnx"

/* splitmix64: a small seeded generator whose state lives with the caller. */
static uint64_t next_rand(uint64_t *s) {
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Checks what a successful import promises: indices in range, initializers sized by their shape. */
static void check_graph(const tc__graph *g) {
    assert_non_null(g);
    for (int i = 0; i < g->n_nodes; i++) {
        const tc__node *n = &g->nodes[i];
        assert_non_null(n->name);
        assert_true(n->op_type[0] != '\0');
        for (int k = 0; k < n->n_in; k++) assert_true(n->in[k] >= -1 && n->in[k] < g->n_values);
        for (int k = 0; k < n->n_out; k++) assert_true(n->out[k] >= -1 && n->out[k] < g->n_values);
        for (int k = 0; k < n->attrs.n; k++) {
            const tc__attr *a = &n->attrs.items[k];
            assert_non_null(a->name);
            if (a->kind == TC__ATTR_TENSOR) {
                assert_non_null(a->t->data);
                assert_int_equal(a->t->nbytes, (size_t)tc__tensor_numel(a->t) * tc_dtype_size(a->t->dtype));
            }
        }
    }
    for (int i = 0; i < g->n_values; i++) {
        const tc__tensor *t = g->values[i].init;
        if (t == NULL) continue;
        assert_non_null(t->data);
        int64_t n = tc__tensor_numel(t);
        assert_true(n >= 0);
        assert_int_equal(t->nbytes, (size_t)n * tc_dtype_size(t->dtype));
        assert_int_equal((uintptr_t)t->data % 64, 0);
    }
    for (int i = 0; i < g->n_inputs; i++) assert_true(g->inputs[i] >= 0 && g->inputs[i] < g->n_values);
    for (int i = 0; i < g->n_outputs; i++) assert_true(g->outputs[i] >= 0 && g->outputs[i] < g->n_values);
    for (int i = 0; i < g->n_values; i++) {
        const tc__shape *s = &g->values[i].info.shape;
        assert_true(s->rank >= TC__RANK_UNKNOWN && s->rank <= TC_MAX_RANK);
        for (int32_t d = 0; d < s->rank; d++)
            assert_true(s->dims[d].sym >= TC__SYM_UNKNOWN && s->dims[d].sym < g->n_symbols);
    }
}

typedef struct tally {
    int ok, failed;       /* as a model */
    int pb_ok, pb_failed; /* as a TensorProto */
} tally;

/* Imports one candidate as a model and as a TensorProto; either way the outcome must be clean. */
static void try_bytes(const uint8_t *data, size_t size, tally *t) {
    tc__graph *g = (tc__graph *)&t; /* must be overwritten */
    tc__err err = {0};
    tc_status st = tc__onnx_import(data, size, DATA_DIR, &g, &err);
    if (st == TC_STATUS_OK) {
        check_graph(g);
        tc__graph_destroy(g);
        t->ok++;
    } else {
        assert_null(g);
        assert_true(st > TC_STATUS_OK && st <= TC_STATUS_INTERNAL);
        assert_int_equal(err.status, st);
        assert_true(err.msg[0] != '\0');
        t->failed++;
    }
    tc__tensor tensor;
    char name[8];
    memset(&err, 0, sizeof err);
    st = tc__onnx_tensor_from_pb(data, size, &tensor, name, sizeof name, &err);
    if (st == TC_STATUS_OK) {
        assert_non_null(tensor.data);
        assert_int_equal(tensor.nbytes, (size_t)tc__tensor_numel(&tensor) * tc_dtype_size(tensor.dtype));
        assert_true(strlen(name) < sizeof name);
        tc__tensor_free(&tensor);
        t->pb_ok++;
    } else {
        assert_null(tensor.data);
        assert_true(err.msg[0] != '\0');
        t->pb_failed++;
    }
}

static void truncations(const char *file) {
    size_t size;
    uint8_t *full = read_file(file, &size);
    tally t = {0, 0, 0, 0};
    for (size_t len = 0; len <= size; len++) {
        /* A fresh heap copy of exactly len bytes, so the sanitizer catches any read past its end. */
        uint8_t *cut = malloc(len ? len : 1);
        assert_non_null(cut);
        memcpy(cut, full, len);
        try_bytes(cut, len, &t);
        free(cut);
    }
    /* The whole file imports (as a model or as a tensor); most strict prefixes cannot. */
    bool is_model = strstr(file, ".onnx") != NULL;
    assert_true((is_model ? t.ok : t.pb_ok) >= 1);
    assert_true((is_model ? t.failed : t.pb_failed) > (int)size / 2);
    free(full);
}

static void mutations(const char *file, uint64_t seed, int rounds) {
    size_t size;
    uint8_t *orig = read_file(file, &size);
    uint64_t rng = seed;
    tally t = {0, 0, 0, 0};
    static const uint8_t interesting[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0x08, 0x0a, 0x12, 0x1a, 0x3a};
    for (int r = 0; r < rounds; r++) {
        uint8_t *buf = malloc(size + 16);
        assert_non_null(buf);
        memcpy(buf, orig, size);
        size_t len = size;
        int edits = 1 + (int)(next_rand(&rng) % 4);
        for (int e = 0; e < edits && len > 0; e++) {
            size_t at = (size_t)(next_rand(&rng) % len);
            switch (next_rand(&rng) % 5) {
            case 0: buf[at] ^= (uint8_t)(1u << (next_rand(&rng) % 8)); break;
            case 1: buf[at] = (uint8_t)next_rand(&rng); break;
            case 2: buf[at] = interesting[next_rand(&rng) % sizeof interesting]; break;
            case 3: /* delete a byte */
                memmove(buf + at, buf + at + 1, len - at - 1);
                len--;
                break;
            default: /* duplicate a byte */
                if (len < size + 16) {
                    memmove(buf + at + 1, buf + at, len - at);
                    len++;
                }
                break;
            }
        }
        uint8_t *exact = malloc(len ? len : 1);
        assert_non_null(exact);
        memcpy(exact, buf, len);
        free(buf);
        try_bytes(exact, len, &t);
        free(exact);
    }
    fprintf(stderr, "%s: %d ok, %d failed, pb %d/%d\n", file, t.ok, t.failed, t.pb_ok, t.pb_failed);
    /* Both outcomes occur: a check that mutations neither always break nor never reach the importer. */
    assert_true(t.ok > 0);
    assert_true(t.failed > 0);
    free(orig);
}

static void test_truncate_small(void **state) {
    (void)state;
    truncations("small.onnx");
}

static void test_truncate_external(void **state) {
    (void)state;
    truncations("external.onnx");
}

static void test_truncate_pb(void **state) {
    (void)state;
    truncations("matmul_2d_input_0.pb");
}

static void test_mutate_small(void **state) {
    (void)state;
    mutations("small.onnx", 0x5eed0001, 4000);
}

static void test_mutate_external(void **state) {
    (void)state;
    mutations("external.onnx", 0x5eed0002, 2000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncate_small),
        cmocka_unit_test(test_truncate_external),
        cmocka_unit_test(test_truncate_pb),
        cmocka_unit_test(test_mutate_small),
        cmocka_unit_test(test_mutate_external),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
