/* plan_test_util.h - rewriting a built engine's plan in tests: the same graph and target with another ENGINE section
 * (tc__engine_blob_write of an engine whose steps or parameters a test changed), to check what a load refuses. */
#ifndef TC_TESTS_PLAN_TEST_UTIL_H
#define TC_TESTS_PLAN_TEST_UTIL_H

#include "engine/engine.h"
#include "engine/plan_format.h"

/* A plan (64-byte aligned, malloc'd, *size bytes) of e's graph and target with the ENGINE section blob. */
static inline void *ptu_replan(const tc_engine *e, const void *blob, size_t blob_size, size_t *size) {
    tc__plan_target_info target = {.backend = e->backend->id, .record_size = e->target_size,
                                   .required_caps = e->required_caps, .record = e->target};
    void *out = NULL;
    tc__err err = {0};
    if (tc__plan_serialize(e->g, &target, blob, blob_size, &out, size, &err)) fail_msg("%s", err.msg);
    return out;
}

/* Loads plan bytes (taken over) and expects status with want in the message. */
static inline void ptu_expect_load_failure(void *plan, size_t size, tc_status status, const char *want) {
    tc_engine *e = NULL;
    tc__err err = {0};
    tc_status st = tc__engine_from_plan(plan, size, false, 0, &e, &err);
    if (st != status || strstr(err.msg, want) == NULL)
        fail_msg("expected status %d with '%s', got %d: %s", (int)status, want, (int)st, err.msg);
}

#endif
