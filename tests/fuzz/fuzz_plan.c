/* fuzz_plan.c - libFuzzer target for the model.plan reader (records validated, checksums and the
 * target check off); a plan that loads must also write and load again. Then the whole engine load of the
 * same bytes: the ENGINE section (steps with their backend and tactic, profiles, the parameter blob of
 * every step and profile) as tc_engine_load reads it. Seeds: corpus_plan/ (engine.bin: a built engine). */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/plan_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* The reader needs 64-byte-aligned data; an exact-size copy keeps overreads visible to ASan. */
    void *buf = NULL;
    if (posix_memalign(&buf, 64, size ? size : 1) != 0) return 0;
    if (size) memcpy(buf, data, size);
    tc__graph *g = NULL;
    tc__plan_target_info target;
    const void *blob = NULL;
    size_t blob_size = 0;
    tc__err err = {0};
    if (tc__plan_deserialize(buf, size, TC__PLAN_NO_CHECKSUMS | TC__PLAN_NO_TARGET_CHECK, &g, &target, &blob,
                             &blob_size, &err) == TC_STATUS_OK) {
        /* Touch what the graph points at, then round-trip it. */
        volatile uint8_t sink = 0;
        for (int v = 0; v < g->n_values; v++)
            if (g->values[v].init && g->values[v].init->nbytes)
                sink ^= ((const uint8_t *)g->values[v].init->data)[g->values[v].init->nbytes - 1];
        if (blob_size) sink ^= ((const uint8_t *)blob)[blob_size - 1];
        if (target.record_size) sink ^= ((const uint8_t *)target.record)[target.record_size - 1];
        (void)sink;
        void *again = NULL;
        size_t again_size = 0;
        tc__err werr = {0};
        if (tc__plan_serialize(g, &target, blob, blob_size, &again, &again_size, &werr) != TC_STATUS_OK)
            abort(); /* a graph the reader accepts must be writable */
        tc__graph *g2 = NULL;
        if (tc__plan_deserialize(again, again_size, TC__PLAN_NO_TARGET_CHECK, &g2, &target, &blob, &blob_size, &werr) !=
            TC_STATUS_OK)
            abort();
        tc__graph_destroy(g2);
        free(again);
        tc__graph_destroy(g);
    }
    /* The engine load takes the buffer over (frees it on failure too). */
    tc_engine *e = NULL;
    if (tc__engine_from_plan(buf, size, false, TC__PLAN_NO_CHECKSUMS | TC__PLAN_NO_TARGET_CHECK, &e, &err) ==
        TC_STATUS_OK)
        tc_engine_destroy(e);
    return 0;
}
