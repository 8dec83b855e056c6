/*
 * fuzz_onnx_import.c - libFuzzer target for the ONNX importer: the input is imported as a model, each If of
 * it is inlined once (then branch for even node indices, else branch for odd) or, at indices with bit 1 set, its then
 * branch imported as predication does, each Loop unrolled twice (errors are fine), the graph is
 * destroyed, and the input is parsed as a TensorProto .pb. Built with -DTC_FUZZ=ON (clang).
 * External data is looked up in $TC_FUZZ_BASE_DIR (e.g. tests/data/onnx, which holds external.bin),
 * else in a folder that does not exist; the importer refuses paths that leave that folder.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tc__err err = {0};
    tc__graph *g = NULL;
    const char *base_dir = getenv("TC_FUZZ_BASE_DIR");
    if (base_dir == NULL) base_dir = "/nonexistent-tailcut-fuzz-dir";
    if (tc__onnx_import(data, size, base_dir, &g, &err) == TC_STATUS_OK) {
        /* Touch what the importer promises so that bad indices or sizes show up. */
        for (int i = 0; i < g->n_nodes; i++)
            for (int k = 0; k < g->nodes[i].n_in; k++)
                if (g->nodes[i].in[k] >= g->n_values) __builtin_trap();
        for (int i = 0; i < g->n_values; i++) {
            const tc__tensor *t = g->values[i].init;
            if (t != NULL && t->nbytes > 0) {
                volatile uint8_t last = ((const uint8_t *)t->data)[t->nbytes - 1];
                (void)last;
            }
        }
        const int n_nodes = g->n_nodes; /* inlining appends nodes */
        for (int i = 0; i < n_nodes; i++) {
            tc__err ierr = {0};
            if (strcmp(g->nodes[i].op_type, "Loop") == 0) { /* unrolled twice (or refused with a reason) */
                if (tc__onnx_unroll_loop(g, i, 2, &ierr) != TC_STATUS_OK && ierr.msg[0] == '\0') __builtin_trap();
                continue;
            }
            if (strcmp(g->nodes[i].op_type, "If") != 0) continue;
            if ((i & 2) != 0 && g->nodes[i].n_out <= TC__ONNX_MAX_IF_OUTPUTS) { /* both branches imported (predication) */
                int32_t src[TC__ONNX_MAX_IF_OUTPUTS];
                if (tc__onnx_import_branch(g, i, true, src, &ierr) != TC_STATUS_OK && ierr.msg[0] == '\0') __builtin_trap();
                for (int k = 0; k < g->nodes[i].n_out && ierr.msg[0] == '\0'; k++)
                    if (src[k] < 0 || src[k] >= g->n_values) __builtin_trap();
                continue;
            }
            if (tc__onnx_inline_if(g, i, (i & 1) == 0, &ierr) != TC_STATUS_OK && ierr.msg[0] == '\0') __builtin_trap();
        }
        for (int i = 0; i < g->n_nodes; i++)
            for (int k = 0; k < g->nodes[i].n_in; k++)
                if (g->nodes[i].in[k] >= g->n_values) __builtin_trap();
        tc__graph_destroy(g);
    } else if (g != NULL || err.msg[0] == '\0') {
        __builtin_trap();
    }
    tc__tensor t;
    err = (tc__err){0};
    if (tc__onnx_tensor_from_pb(data, size, &t, NULL, 0, &err) == TC_STATUS_OK) {
        if (t.nbytes > 0) {
            volatile uint8_t last = ((const uint8_t *)t.data)[t.nbytes - 1];
            (void)last;
        }
        tc__tensor_free(&t);
    } else if (err.msg[0] == '\0') {
        __builtin_trap();
    }
    return 0;
}
