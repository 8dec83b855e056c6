/*
 * test_ref_control.c - the If that a predicated If becomes (graph/infer_control.c, backends/ref/control.c): inputs
 * [then_run, else_run, then outputs, else outputs]. Each branch taken copies its outputs (random data, two outputs);
 * inference merges the branches' types (a dim that differs becomes unknown, a known condition picks its branch, a
 * branch of unknown type leaves the other's) and refuses dtypes that differ; the kernel refuses flags that are both
 * or neither true and a taken branch whose shape is not the output's. An If still holding its graph attributes is not
 * this form.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dense_test_util.h"

static tc__tensor flag(bool v) {
    tc__tensor t;
    tc__err err = {0};
    assert_int_equal(tc__tensor_alloc(&t, TC_DTYPE_BOOL, 0, NULL, &err), TC_STATUS_OK);
    ((uint8_t *)t.data)[0] = v;
    return t;
}

static void takes_each_branch(void **state) {
    (void)state;
    dtu_rng r = {7};
    const int64_t d23[] = {2, 3}, d4[] = {4};
    tc__tensor t0 = dtu_random(&r, TC_DTYPE_FLOAT32, 2, d23), t1 = dtu_random(&r, TC_DTYPE_FLOAT32, 1, d4);
    tc__tensor e0 = dtu_random(&r, TC_DTYPE_FLOAT32, 2, d23), e1 = dtu_random(&r, TC_DTYPE_FLOAT32, 1, d4);
    for (int take_then = 0; take_then < 2; take_then++) {
        tc__tensor ft = flag(take_then), fe = flag(!take_then);
        const tc__tensor *in[6] = {&ft, &fe, &t0, &t1, &e0, &e1};
        tc__tensor y[2];
        dtu_run_ok(DTU_OP(If), 17, NULL, 0, 6, in, 2, y);
        const tc__tensor *want0 = take_then ? &t0 : &e0, *want1 = take_then ? &t1 : &e1;
        dtu_assert_shape(&y[0], 2, d23);
        dtu_assert_shape(&y[1], 1, d4);
        assert_memory_equal(y[0].data, want0->data, want0->nbytes);
        assert_memory_equal(y[1].data, want1->data, want1->nbytes);
        assert_memory_not_equal(y[0].data, (take_then ? &e0 : &t0)->data, want0->nbytes); /* the data tell */
        for (int k = 0; k < 2; k++) tc__tensor_free(&y[k]);
        tc__tensor_free(&ft), tc__tensor_free(&fe);
    }
    tc__tensor_free(&t0), tc__tensor_free(&t1), tc__tensor_free(&e0), tc__tensor_free(&e1);
}

/* Runs tc__infer_If on vinfos (flags of unknown value unless given) and returns the status; out[0] filled. */
static tc_status infer(const tc__vinfo *t, const tc__vinfo *e, const tc__tensor *known_then, tc__vinfo *out,
                       tc__err *err) {
    tc__vinfo ft, fe;
    tc__vinfo_init(&ft), tc__vinfo_init(&fe);
    ft.dtype = fe.dtype = TC_DTYPE_BOOL;
    ft.shape.rank = fe.shape.rank = 0;
    ft.value = known_then;
    const tc__vinfo *in[4] = {&ft, &fe, t, e};
    tc__attrs none = {0, NULL};
    tc__vinfo_init(out);
    tc__infer_ctx ic = {"test", "If", 17, &none, 4, in, 1, out, err};
    return tc__infer_If(&ic);
}

static tc__vinfo vi(tc_dtype dt, int32_t rank, const int64_t *dims) {
    tc__vinfo v;
    tc__vinfo_init(&v);
    v.dtype = dt;
    v.shape.rank = rank;
    for (int32_t i = 0; i < rank; i++) v.shape.dims[i] = tc__dim_known(dims[i]);
    return v;
}

static void infers_merged_types(void **state) {
    (void)state;
    tc__err err = {0};
    tc__vinfo y, unknown;
    tc__vinfo_init(&unknown);
    const tc__vinfo a = vi(TC_DTYPE_FLOAT32, 2, (int64_t[]){2, 3}), b = vi(TC_DTYPE_FLOAT32, 2, (int64_t[]){2, 5});
    assert_int_equal(infer(&a, &a, NULL, &y, &err), TC_STATUS_OK);
    assert_true(tc__shape_is_concrete(&y.shape) && y.shape.dims[1].value == 3);
    assert_int_equal(infer(&a, &b, NULL, &y, &err), TC_STATUS_OK); /* dim 1 depends on the condition */
    assert_int_equal(y.shape.rank, 2);
    assert_int_equal(y.shape.dims[0].value, 2);
    assert_false(tc__dim_is_known(y.shape.dims[1]));
    tc__tensor f = flag(false);
    assert_int_equal(infer(&a, &b, &f, &y, &err), TC_STATUS_OK); /* known: the else branch */
    assert_true(tc__shape_is_concrete(&y.shape) && y.shape.dims[1].value == 5);
    tc__tensor_free(&f);
    assert_int_equal(infer(&unknown, &b, NULL, &y, &err), TC_STATUS_OK); /* the then branch cannot run */
    assert_true(tc__shape_is_concrete(&y.shape) && y.shape.dims[1].value == 5);
    const tc__vinfo c = vi(TC_DTYPE_INT64, 2, (int64_t[]){2, 3});
    assert_int_equal(infer(&a, &c, NULL, &y, &err), TC_STATUS_INVALID_GRAPH);
    assert_non_null(strstr(err.msg, "is float32 in the then branch but int64 in the else branch"));
}

static void refuses(void **state) {
    (void)state;
    dtu_rng r = {9};
    const int64_t d3[] = {3};
    tc__tensor t = dtu_random(&r, TC_DTYPE_FLOAT32, 1, d3), e = dtu_random(&r, TC_DTYPE_FLOAT32, 1, d3);
    tc__tensor yes = flag(true), yes2 = flag(true);
    const tc__tensor *both[4] = {&yes, &yes2, &t, &e};
    dtu_run_fails(DTU_OP(If), 17, NULL, 0, 4, both, 1, TC_STATUS_INTERNAL, "both or neither of its branches ran");
    /* an If as imported (its branches graph attributes) is inferred only once inlined or predicated */
    tc__attr g = {.name = "then_branch", .kind = TC__ATTR_GRAPH};
    const tc__tensor *one[1] = {&yes};
    dtu_run_fails(DTU_OP(If), 17, &g, 1, 1, one, 1, TC_STATUS_UNSUPPORTED, "inlined");
    /* the kernel: the taken branch's shape is not the output's (sized before the run) */
    tc__tensor no = flag(false), y;
    tc__err err = {0};
    const int64_t d4[] = {4};
    assert_int_equal(tc__tensor_alloc(&y, TC_DTYPE_FLOAT32, 1, d4, &err), TC_STATUS_OK);
    const tc__tensor *in[4] = {&yes, &no, &t, &e};
    tc__tensor *out[1] = {&y};
    tc__attrs none = {0, NULL};
    tc__kernel_ctx kc = {"test", "If", 17, &none, 4, in, 1, out, &err, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    assert_int_equal(tc__ref_If(&kc), TC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.msg, "the then branch's output 0 is float32 3, but the If's output was sized"));
    tc__tensor_free(&y), tc__tensor_free(&t), tc__tensor_free(&e);
    tc__tensor_free(&yes), tc__tensor_free(&yes2), tc__tensor_free(&no);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(takes_each_branch), cmocka_unit_test(infers_merged_types),
                                       cmocka_unit_test(refuses)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
