/* test_build_progress.c - tc_build_options.progress: tc_engine_build reports its tactic choice step by step
 * ("tune", done 0..total, each step's "name (Op)", a last call with done == total and no item), with the caller's
 * user data, timed or fixed, and a caller built before the field existed gets no call. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine_test_model.h"

#define MAX_CALLS 256

typedef struct recorder {
    int n;
    int done[MAX_CALLS], total[MAX_CALLS];
    char phase[MAX_CALLS][16], item[MAX_CALLS][64];
    bool item_null[MAX_CALLS];
} recorder;

static void record(void *user, const char *phase, int done, int total, const char *item) {
    recorder *r = user;
    assert_true(r->n < MAX_CALLS);
    r->done[r->n] = done;
    r->total[r->n] = total;
    snprintf(r->phase[r->n], sizeof r->phase[0], "%s", phase);
    r->item_null[r->n] = item == NULL;
    snprintf(r->item[r->n], sizeof r->item[0], "%s", item ? item : "");
    r->n++;
}

static tc_engine *build(const tc_model *m, uint32_t flags, uint32_t disabled, uint32_t struct_size, recorder *r) {
    tc_input_range in = {.name = "x", .rank = 4, .min = {1, 3, 8, 8}, .opt = {1, 3, 8, 8}, .max = {1, 3, 8, 8}};
    tc_profile p = {1, &in};
    tc_build_options o = {.struct_size = struct_size, .num_profiles = 1, .profiles = &p, .flags = flags,
                          .disabled_passes = disabled, .progress = record, .progress_user_data = r};
    tc_engine *e = NULL;
    tc_error err;
    if (tc_engine_build(m, &o, &e, &err) != TC_STATUS_OK) fail_msg("build: %s", err.message);
    return e;
}

/* Checks the calls form runs of the phase, each 0, 1, ..., total with an item, then total without one; returns how
 * many runs. Every item reads "name (Op)". */
static int check_runs(const recorder *r) {
    int runs = 0;
    for (int i = 0; i < r->n;) {
        const int total = r->total[i];
        assert_true(total >= 3); /* conv1, conv2 and fc at least */
        for (int d = 0; d <= total; d++, i++) {
            assert_true(i < r->n);
            assert_string_equal(r->phase[i], TC_PROGRESS_TUNE);
            assert_int_equal(r->total[i], total);
            assert_int_equal(r->done[i], d);
            assert_int_equal(r->item_null[i], d == total);
            if (d == total) continue;
            /* "name (Op)": a node name, then its op in parentheses */
            const char *open = strstr(r->item[i], " (");
            const size_t len = strlen(r->item[i]);
            if (open == NULL || open == r->item[i] || len < 4 || r->item[i][len - 1] != ')' || open[2] == ')')
                fail_msg("item '%s' is not 'name (Op)'", r->item[i]);
        }
        runs++;
    }
    return runs;
}

static void test_tuned_build_reports_each_step(void **state) {
    (void)state;
    tc_model *m = etm_model();
    recorder *r = calloc(1, sizeof *r);
    tc_engine *e = build(m, 0, TC_PASS_LAYOUT, sizeof(tc_build_options), r);
    assert_int_equal(check_runs(r), 1); /* one layout: one run */
    bool conv1 = false, fc = false;
    for (int i = 0; i < r->n; i++) conv1 |= strcmp(r->item[i], "conv1 (Conv)") == 0, fc |= strcmp(r->item[i], "fc (Gemm)") == 0;
    assert_true(conv1 && fc);
    tc_engine_destroy(e);
    /* With the layout pass the build may time two layouts: each is a run from done 0. */
    memset(r, 0, sizeof *r);
    e = build(m, 0, 0, sizeof(tc_build_options), r);
    const int runs = check_runs(r);
    assert_true(runs == 1 || runs == 2);
    tc_engine_destroy(e);
    free(r);
    tc_model_destroy(m);
}

static void test_fixed_build_reports_too(void **state) {
    (void)state;
    tc_model *m = etm_model();
    recorder *r = calloc(1, sizeof *r);
    tc_engine *e = build(m, TC_BUILD_TACTICS_FIXED, 0, sizeof(tc_build_options), r);
    assert_int_equal(check_runs(r), 1);
    tc_engine_destroy(e);
    free(r);
    tc_model_destroy(m);
}

static void test_older_struct_gets_no_calls(void **state) {
    (void)state;
    tc_model *m = etm_model();
    recorder *r = calloc(1, sizeof *r);
    tc_engine *e = build(m, TC_BUILD_TACTICS_FIXED, 0, (uint32_t)offsetof(tc_build_options, progress), r);
    assert_int_equal(r->n, 0);
    tc_engine_destroy(e);
    free(r);
    tc_model_destroy(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tuned_build_reports_each_step),
        cmocka_unit_test(test_fixed_build_reports_too),
        cmocka_unit_test(test_older_struct_gets_no_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
