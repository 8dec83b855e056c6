/*
 * test_engine_keep_tensors.c - tc_context_keep_tensors: after a run, intermediate tensors (by the names
 * tc_step_info.output gives, for a built engine and for the same engine saved and loaded as a plan) hold
 * what the reference executor computes for them, those stored NCHW16c by the layout pass included
 * (converted to NCHW); keeping allocates nothing in run or tc_context_tensor (malloc & co. wrapped at link
 * time, as in test_engine_noalloc); a bound output buffer stays bound; switching keeping off gives the
 * normal plan's results and refuses intermediates again; an unknown name is refused with a reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/cpu.h"
#include "engine_test_model.h"
#include "alloc_count.h"

#define HW 10
#define N_CHECKED 4
/* The graph output and the intermediates checked (the outputs of the steps that end in these ops). */
static const char *const checked[N_CHECKED] = {"y", "r1", "e3", "g2"};

static void ints_attr(B *b, Onnx__NodeProto *n, const char *name, int count, const int64_t *v) {
    Onnx__AttributeProto *a = b_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->n_ints = (size_t)count;
    a->ints = b_dup(b, v, sizeof(int64_t) * (size_t)count);
}

/*
 * x[1,3,10,10] -> 3x3 stem (32 channels) + Relu = r1 -> 1x1 + residual r1 + Relu = e3 -> 1x1 to 24 channels
 * + Relu = g2 -> GAP -> Flatten -> MatMul -> y[1,5]. With the layout pass on an AVX-512 CPU, r1 and e3 are
 * NCHW16c (32 channels) and so is g2 (24 channels padded to 32: its padding lanes are not read back).
 * with_outputs: r1, e3 and g2 are graph outputs too
 * (for the reference executor, which returns only graph outputs).
 */
static tc_model *model(bool with_outputs) {
    etm_rng = 0x9E3779B97F4A7C15ull;
    B *b = b_new(17);
    char hw[16];
    snprintf(hw, sizeof hw, "%d", HW);
    b_input(b, b_vi(b, "x", 1, 4, (const char *[]){"1", "3", hw, hw}));
    b_output(b, b_vi(b, "y", 1, 2, (const char *[]){"1", "5"}));
    if (with_outputs) {
        b_output(b, b_vi(b, "r1", 1, 4, (const char *[]){"1", "32", hw, hw}));
        b_output(b, b_vi(b, "e3", 1, 4, (const char *[]){"1", "32", hw, hw}));
        b_output(b, b_vi(b, "g2", 1, 4, (const char *[]){"1", "24", hw, hw}));
    }
    etm_weight(b, "w1", 4, (int64_t[]){32, 3, 3, 3}, 0.0f);
    etm_weight(b, "b1", 1, (int64_t[]){32}, 0.0f);
    etm_weight(b, "wp", 4, (int64_t[]){32, 32, 1, 1}, 0.0f);
    etm_weight(b, "w24", 4, (int64_t[]){24, 32, 1, 1}, 0.0f);
    etm_weight(b, "fc", 2, (int64_t[]){24, 5}, 0.0f);
    ints_attr(b, b_node(b, "stem", "Conv", "x,w1,b1", "c1"), "pads", 4, (int64_t[]){1, 1, 1, 1});
    b_node(b, "stem_relu", "Relu", "c1", "r1");
    b_node(b, "pw", "Conv", "r1,wp", "e1");
    b_node(b, "res", "Add", "e1,r1", "e2");
    b_node(b, "res_relu", "Relu", "e2", "e3");
    b_node(b, "narrow", "Conv", "e3,w24", "g1");
    b_node(b, "narrow_relu", "Relu", "g1", "g2");
    b_node(b, "gap", "GlobalAveragePool", "g2", "p");
    b_node(b, "flat", "Flatten", "p", "f");
    b_node(b, "classifier", "MatMul", "f,fc", "y");
    size_t len;
    uint8_t *bytes = b_pack(b, &len);
    tc_model *m = NULL;
    tc_error err;
    if (tc_model_load_buffer(bytes, len, NULL, NULL, &m, &err)) fail_msg("model load: %s", err.message);
    b_free(b);
    return m;
}

/* The step whose first output is `name`, or fails. */
static tc_step_info step_of(const tc_engine *e, const char *name) {
    for (int k = 0; k < tc_engine_num_steps(e); k++) {
        tc_step_info si;
        assert_int_equal(tc_engine_step_info(e, k, &si), TC_STATUS_OK);
        assert_non_null(si.output);
        if (strcmp(si.output, name) == 0) return si;
    }
    fail_msg("no step writes '%s'", name);
    return (tc_step_info){0};
}

static void expect_close(const char *what, const tc_tensor *got, const tc_tensor *want) {
    assert_int_equal(got->dtype, TC_DTYPE_FLOAT32);
    assert_int_equal(got->rank, want->rank);
    assert_memory_equal(got->dims, want->dims, sizeof(int64_t) * (size_t)want->rank);
    assert_int_equal(got->nbytes, want->nbytes);
    const float *g = got->data, *w = want->data;
    double scale = 0.0;
    size_t nonzero = 0;
    for (size_t i = 0; i < want->nbytes / 4; i++) scale = fmax(scale, fabs(w[i])), nonzero += w[i] != 0.0f;
    assert_true(nonzero > want->nbytes / 4 / 4); /* a real check: not (nearly) all zeros */
    for (size_t i = 0; i < want->nbytes / 4; i++)
        if (fabs(g[i] - w[i]) > 1e-4 * (fabs(w[i]) + scale))
            fail_msg("%s element %zu: got %g, want %g", what, i, (double)g[i], (double)w[i]);
}

/* Runs engine e with and without keeping tensors and checks what it gives against want (reference). */
static void check_engine(const tc_engine *e, const char *what, const tc_tensor *x, const tc_tensor *want) {
    const bool avx512 = (tc__cpu_get()->isa & TC__ISA_AVX512F) != 0;
    tc_step_info r1 = step_of(e, "r1"), e3 = step_of(e, "e3"), g2 = step_of(e, "g2");
    assert_string_equal(r1.precision, "fp32");
    assert_string_equal(r1.layout, avx512 ? "nchw16c" : "");
    assert_string_equal(e3.layout, avx512 ? "nchw16c" : "");
    assert_string_equal(g2.layout, avx512 ? "nchw16c" : "");
    assert_false(g2.is_reorder);

    tc_context *c = NULL;
    assert_int_equal(tc_context_create(e, 0, &c, NULL), TC_STATUS_OK);
    float y_buf[5];
    assert_int_equal(tc_context_set_tensor(c, "x", x->data, x->nbytes), TC_STATUS_OK);
    assert_int_equal(tc_context_set_tensor(c, "y", y_buf, sizeof y_buf), TC_STATUS_OK);
    assert_int_equal(tc_context_run(c), TC_STATUS_OK);
    tc_tensor t;
    assert_int_equal(tc_context_tensor(c, "r1", &t), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(tc_context_error(c), "tc_context_keep_tensors"));

    assert_int_equal(tc_context_keep_tensors(c, 1), TC_STATUS_OK);
    assert_int_equal(tc_context_keep_tensors(c, 1), TC_STATUS_OK); /* again: nothing changes */
    tc_tensor got[N_CHECKED];
    alloc_count = 0;
    alloc_counting = 1;
    tc_status run_st = tc_context_run(c);
    for (int i = 0; i < N_CHECKED; i++)
        if (tc_context_tensor(c, checked[i], &got[i]) != TC_STATUS_OK) fail_msg("%s: %s", what, tc_context_error(c));
    alloc_counting = 0;
    assert_int_equal(run_st, TC_STATUS_OK);
    assert_int_equal(alloc_count, 0);
    assert_ptr_equal(got[0].data, y_buf); /* the bound output buffer stays bound */
    for (int i = 0; i < N_CHECKED; i++) {
        char name[96];
        snprintf(name, sizeof name, "%s: %s", what, checked[i]);
        expect_close(name, &got[i], &want[i]);
    }
    /* Every kept tensor has its own bytes. */
    for (int i = 1; i < N_CHECKED; i++)
        for (int j = i + 1; j < N_CHECKED; j++) {
            const char *a = got[i].data, *b = got[j].data;
            assert_true(a + got[i].nbytes <= b || b + got[j].nbytes <= a);
        }

    assert_int_equal(tc_context_tensor(c, "no/such:tensor", &t), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(tc_context_error(c), "no tensor named 'no/such:tensor'"));
    assert_int_equal(tc_context_tensor(c, "c1", &t), TC_STATUS_INVALID_ARGUMENT); /* fused into the stem */

    assert_int_equal(tc_context_keep_tensors(c, 0), TC_STATUS_OK);
    memset(y_buf, 0, sizeof y_buf);
    alloc_count = 0;
    alloc_counting = 1;
    run_st = tc_context_run(c);
    alloc_counting = 0;
    assert_int_equal(run_st, TC_STATUS_OK);
    assert_int_equal(alloc_count, 0);
    assert_int_equal(tc_context_tensor(c, "y", &t), TC_STATUS_OK);
    assert_ptr_equal(t.data, y_buf);
    expect_close(what, &t, &want[0]);
    assert_int_equal(tc_context_tensor(c, "g2", &t), TC_STATUS_INVALID_ARGUMENT);
    assert_int_equal(tc_context_keep_tensors(NULL, 1), TC_STATUS_INVALID_ARGUMENT);
    tc_context_destroy(c);
}

static void test_keep_tensors(void **state) {
    (void)state;
    tc_model *m = model(false), *m_ref = model(true);
    tc_tensor x;
    assert_int_equal(tc_tensor_alloc(TC_DTYPE_FLOAT32, 4, (int64_t[]){1, 3, HW, HW}, &x, NULL), TC_STATUS_OK);
    etm_rng = 0xC0FFEEull;
    for (size_t k = 0; k < x.nbytes / 4; k++) ((float *)x.data)[k] = 2.0f * etm_uniform();
    const char *names[1] = {"x"};
    tc_tensor want[N_CHECKED];
    tc_error err;
    if (tc_model_run_reference(m_ref, 1, names, &x, want, &err)) fail_msg("reference: %s", err.message);

    /* The wrapper must see the library's alloc_count at all (a test that cannot fail is no test). */
    alloc_counting = 1;
    alloc_count = 0;
    tc_tensor probe;
    assert_int_equal(tc_tensor_alloc(TC_DTYPE_FLOAT32, 1, (int64_t[]){4}, &probe, NULL), TC_STATUS_OK);
    alloc_counting = 0;
    assert_true(alloc_count > 0);
    tc_tensor_free(&probe);

    tc_build_options o = {.struct_size = sizeof o, .threads = 1, .flags = TC_BUILD_TACTICS_FIXED};
    tc_engine *built = NULL, *loaded = NULL;
    if (tc_engine_build(m, &o, &built, &err)) fail_msg("build: %s", err.message);
    char path[96];
    snprintf(path, sizeof path, "/tmp/tc_test_keep_%d.plan", (int)getpid());
    assert_int_equal(tc_engine_save(built, path, &err), TC_STATUS_OK);
    if (tc_engine_load(path, &loaded, &err)) fail_msg("load: %s", err.message);
    unlink(path);
    /* A plan names the same output tensors as the engine it was saved from. */
    assert_int_equal(tc_engine_num_steps(loaded), tc_engine_num_steps(built));
    for (int k = 0; k < tc_engine_num_steps(built); k++) {
        tc_step_info a, b;
        assert_int_equal(tc_engine_step_info(built, k, &a), TC_STATUS_OK);
        assert_int_equal(tc_engine_step_info(loaded, k, &b), TC_STATUS_OK);
        assert_true(a.output[0] != '\0');
        assert_string_equal(a.output, b.output);
    }
    check_engine(built, "built engine", &x, want);
    check_engine(loaded, "loaded plan", &x, want);
    tc_engine_destroy(loaded);
    tc_engine_destroy(built);
    for (int i = 0; i < N_CHECKED; i++) tc_tensor_free(&want[i]);
    tc_tensor_free(&x);
    tc_model_destroy(m_ref);
    tc_model_destroy(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keep_tensors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
