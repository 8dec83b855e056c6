/*
 * test_cpu_resize.c - the CPU Resize tactics (backends/cpu/resize_f32*.c) beyond test_all_tactics' generated cases:
 * runs on a thread pool (planes split over threads, and one large plane split into bands of rows) against the
 * reference kernel (nearest exact, linear within 1e-6 of the peak), and the steps supports() refuses, each with a
 * reason.
 */
#include <math.h>
#include "core/thread_pool.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/cpu/tactics.h"
#include "core/cpu.h"
#include "elem_test_util.h"

static const tc__tactic *const kTactics[] = {&tc__tactic_resize_f32_avx512, &tc__tactic_resize_f32_avx2,
                                             &tc__tactic_resize_f32_scalar};
static etu_rng rng = {0x5EED5EEDull};

/* Inputs X, roi (absent), scales; n_in 3. */
typedef struct rcase {
    tc__attr attrs[6];
    int n_attrs;
    int64_t opset;
    tc__tensor x, scales;
    const tc__tensor *in[3];
    bool in_const[3];
} rcase;

static void rcase_init(rcase *c, int64_t opset, const char *mode, const char *coord, const int64_t *dims,
                       const double *s) {
    memset(c, 0, sizeof *c);
    c->opset = opset;
    c->attrs[c->n_attrs++] = etu_attr_string("mode", mode);
    c->attrs[c->n_attrs++] = etu_attr_string("coordinate_transformation_mode", coord);
    c->attrs[c->n_attrs++] = etu_attr_string("nearest_mode", "floor");
    c->x = etu_random(&rng, TC_DTYPE_FLOAT32, 4, dims, -3, 3);
    const int64_t four = 4;
    c->scales = etu_from_f64(TC_DTYPE_FLOAT32, 1, &four, s);
    c->in[0] = &c->x;
    c->in[1] = NULL;
    c->in[2] = &c->scales;
    c->in_const[2] = true;
}

static void rcase_free(rcase *c) {
    tc__tensor_free(&c->x);
    tc__tensor_free(&c->scales);
}

/* Every tactic this CPU runs, on a pool of `threads`, against the reference. */
static void check_threaded(rcase *c, bool linear, size_t threads) {
    tc__tensor want[1];
    etu_run_ok(ETU_OP(Resize), c->opset, c->attrs, c->n_attrs, 3, c->in, 1, want);
    const int64_t n = tc__tensor_numel(&want[0]);
    double peak = 0;
    for (int64_t i = 0; i < n; i++) peak = fmax(peak, fabs(((const float *)want[0].data)[i]));
    const tc__attrs as = {c->n_attrs, c->attrs};
    const tc__epilogue none = tc__epilogue_none();
    const tc__tensor *dout[1] = {&want[0]};
    tc__step_desc d = {.op_type = "Resize", .opset = c->opset, .attrs = &as, .n_in = 3, .in = c->in,
                       .in_const = c->in_const, .n_out = 1, .out = dout, .epi = &none};
    tc__pool_t pool = tc__pool_create(threads);
    assert_non_null(pool);
    int ran = 0;
    for (size_t k = 0; k < sizeof kTactics / sizeof kTactics[0]; k++) {
        const tc__tactic *t = kTactics[k];
        if ((t->caps & ~tc__cpu_get()->isa) != 0) continue;
        assert_true(t->supports(&d));
        tc__tensor got = etu_tensor(TC_DTYPE_FLOAT32, want[0].rank, want[0].dims);
        memset(got.data, 0xff, got.nbytes);
        tc__tensor *pout[1] = {&got};
        const size_t bytes = t->scratch_bytes(&d);
        tc__scratch scratch = {aligned_alloc(64, (bytes + 63) / 64 * 64), bytes, 0};
        tc__err err = {0};
        tc__kernel_ctx kc = {.node_name = "r", .op_type = "Resize", .opset = c->opset, .attrs = &as, .n_in = 3,
                             .in = c->in, .n_out = 1, .out = pout, .err = &err, .scratch = &scratch, .exec = pool};
        if (t->run(&kc) != TC_STATUS_OK) fail_msg("%s: %s", t->name, err.msg);
        for (int64_t i = 0; i < n; i++) {
            const float g = ((const float *)got.data)[i], w = ((const float *)want[0].data)[i];
            const bool ok = linear ? fabs((double)g - (double)w) <= 1e-6 * peak : memcmp(&g, &w, sizeof g) == 0;
            if (!ok) fail_msg("%s: output[%lld] = %g, reference %g", t->name, (long long)i, g, w);
        }
        free(scratch.base);
        tc__tensor_free(&got);
        ran++;
    }
    assert_true(ran > 0);
    tc__pool_destroy(pool);
    tc__tensor_free(&want[0]);
}

static void test_threads(void **state) {
    (void)state;
    static const struct {
        const char *mode, *coord;
        int64_t dims[4];
        double s[4];
    } cases[] = {
        {"nearest", "asymmetric", {1, 1, 100, 300}, {1, 1, 3, 2}},        /* one plane in bands of rows */
        {"linear", "half_pixel", {1, 2, 37, 150}, {1, 1, 2.3, 2.3}},      /* two planes in bands, 345-wide rows */
        {"nearest", "half_pixel", {2, 16, 7, 9}, {1, 1, 4, 4}},           /* planes over threads */
        {"linear", "align_corners", {2, 16, 19, 21}, {1, 1, 0.5, 1.7}},   /* down and up */
        {"linear", "pytorch_half_pixel", {1, 3, 64, 64}, {1, 1, 0.25, 0.25}}, /* taps farther apart than a block */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (size_t threads = 2; threads <= 4; threads += 2) {
            rcase c;
            rcase_init(&c, 13, cases[i].mode, cases[i].coord, cases[i].dims, cases[i].s);
            check_threaded(&c, strcmp(cases[i].mode, "linear") == 0, threads);
            rcase_free(&c);
        }
}

/* supports() of every Resize tactic refuses the step, with a reason containing `because`. */
static void expect_refused(rcase *c, const char *because) {
    tc__tensor want[1];
    etu_run_ok(ETU_OP(Resize), c->opset, c->attrs, c->n_attrs, 3, c->in, 1, want);
    const tc__attrs as = {c->n_attrs, c->attrs};
    const tc__epilogue none = tc__epilogue_none();
    const tc__tensor *dout[1] = {&want[0]};
    char why[256] = "";
    tc__step_desc d = {.op_type = "Resize", .opset = c->opset, .attrs = &as, .n_in = 3, .in = c->in,
                       .in_const = c->in_const, .n_out = 1, .out = dout, .epi = &none, .why = why,
                       .why_size = sizeof why};
    for (size_t k = 0; k < sizeof kTactics / sizeof kTactics[0]; k++) {
        why[0] = '\0';
        if (kTactics[k]->supports(&d)) fail_msg("%s supports a step it should refuse (%s)", kTactics[k]->name, because);
        if (strstr(why, because) == NULL) fail_msg("%s: reason '%s', expected '%s'", kTactics[k]->name, why, because);
    }
    tc__tensor_free(&want[0]);
}

static void test_refusals(void **state) {
    (void)state;
    const int64_t dims[4] = {1, 3, 6, 5};
    const double up[4] = {1, 1, 2, 2}, chan[4] = {1, 2, 2, 2};
    rcase c;
    rcase_init(&c, 13, "cubic", "half_pixel", dims, up);
    expect_refused(&c, "nearest and linear");
    rcase_free(&c);
    rcase_init(&c, 13, "nearest", "half_pixel", dims, chan);
    expect_refused(&c, "other than the last two");
    rcase_free(&c);
    rcase_init(&c, 13, "linear", "half_pixel", dims, up);
    c.attrs[c.n_attrs++] = etu_attr_int("exclude_outside", 1);
    expect_refused(&c, "exclude_outside");
    rcase_free(&c);
    rcase_init(&c, 18, "linear", "half_pixel", dims, up);
    c.attrs[c.n_attrs++] = etu_attr_int("antialias", 1);
    expect_refused(&c, "antialias");
    rcase_free(&c);
    rcase_init(&c, 13, "nearest", "tf_half_pixel_for_nn", dims, up);
    c.attrs[2] = etu_attr_string("nearest_mode", "ceil"); /* moves the channels: not a 2-D resize */
    expect_refused(&c, "other than the last two");
    rcase_free(&c);
    { /* scales only known at run time (data left out of the step description) */
        rcase_init(&c, 13, "nearest", "asymmetric", dims, up);
        tc__tensor want[1];
        etu_run_ok(ETU_OP(Resize), c.opset, c.attrs, c.n_attrs, 3, c.in, 1, want);
        tc__tensor bare = c.scales;
        bare.data = NULL;
        const tc__tensor *in[3] = {&c.x, NULL, &bare};
        const bool in_const[3] = {false, false, false};
        const tc__attrs as = {c.n_attrs, c.attrs};
        const tc__epilogue none = tc__epilogue_none();
        const tc__tensor *dout[1] = {&want[0]};
        char why[256] = "";
        tc__step_desc d = {.op_type = "Resize", .opset = 13, .attrs = &as, .n_in = 3, .in = in, .in_const = in_const,
                           .n_out = 1, .out = dout, .epi = &none, .why = why, .why_size = sizeof why};
        assert_false(tc__tactic_resize_f32_scalar.supports(&d));
        assert_non_null(strstr(why, "run time"));
        tc__tensor_free(&want[0]);
        rcase_free(&c);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_threads), cmocka_unit_test(test_refusals)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
