/*
 * test_infer_dense.c - static shape inference of the dense and spatial ops:
 * symbolic batch and sequence dims flow through Conv, pools, MatMul, Gemm,
 * BatchNormalization, Resize and Pad; auto_pad SAME with symbolic spatial dims
 * gives unknown dims; unknown ranks stay unknown; invalid nodes fail with a
 * message naming the problem.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/fused_attr.h"
#include "dense_test_util.h"

#define SYM_BATCH 0
#define SYM_SEQ 1
#define SYM_H 2
#define KNOWN(v) tc__dim_known(v)
#define SYM(s) ((tc__dim){-1, (s)})
#define UNK tc__dim_unknown()

/* A vinfo of the given dtype and dims (value unknown). rank < 0: unknown rank. */
static tc__vinfo vi(tc_dtype dt, int32_t rank, const tc__dim *dims) {
    tc__vinfo v;
    tc__vinfo_init(&v);
    v.dtype = dt;
    v.shape.rank = rank;
    for (int32_t i = 0; i < rank; i++) v.shape.dims[i] = dims[i];
    return v;
}

/* A vinfo whose value is the tensor t (a constant). */
static tc__vinfo vconst(const tc__tensor *t) {
    tc__vinfo v;
    dtu_vinfo_of(t, &v);
    return v;
}

/* Runs an inference function on n_in inputs (NULL entries: absent) with n_out outputs. */
static tc_status infer(tc__infer_fn fn, int64_t opset, const tc__attr *attrs, int n_attrs, int n_in,
                       const tc__vinfo *const *in, int n_out, tc__vinfo *out, tc__err *err) {
    tc__attrs as = {n_attrs, attrs};
    for (int i = 0; i < n_out; i++) tc__vinfo_init(&out[i]);
    tc__infer_ctx ctx = {"node", "op", opset, &as, n_in, in, n_out, out, err};
    return fn(&ctx);
}

static void infer_ok(tc__infer_fn fn, int64_t opset, const tc__attr *attrs, int n_attrs, int n_in,
                     const tc__vinfo *const *in, int n_out, tc__vinfo *out) {
    tc__err err = {0};
    if (infer(fn, opset, attrs, n_attrs, n_in, in, n_out, out, &err) != TC_STATUS_OK) fail_msg("inference failed: %s", err.msg);
}

static void infer_fails(tc__infer_fn fn, int64_t opset, const tc__attr *attrs, int n_attrs, int n_in,
                        const tc__vinfo *const *in, tc_status want, const char *needle) {
    tc__err err = {0};
    tc__vinfo out[3];
    tc_status st = infer(fn, opset, attrs, n_attrs, n_in, in, 1, out, &err);
    if (st != want) fail_msg("status %d (%s), expected %d", (int)st, err.msg, (int)want);
    if (!strstr(err.msg, needle)) fail_msg("message '%s' does not mention '%s'", err.msg, needle);
}

/* Asserts a shape: dims given as tc__dim (symbols compared by id, unknown as unknown). */
static void assert_dims(const tc__shape *s, int32_t rank, const tc__dim *want) {
    assert_int_equal(s->rank, rank);
    for (int32_t i = 0; i < rank; i++) {
        if (want[i].value >= 0) {
            if (s->dims[i].value != want[i].value)
                fail_msg("dim %d is %lld, want %lld", (int)i, (long long)s->dims[i].value, (long long)want[i].value);
        } else {
            if (s->dims[i].value >= 0 || s->dims[i].sym != want[i].sym)
                fail_msg("dim %d is (%lld, sym %d), want symbol %d", (int)i, (long long)s->dims[i].value,
                         (int)s->dims[i].sym, (int)want[i].sym);
        }
    }
}

static void test_conv_symbolic_batch(void **state) {
    (void)state;
    tc__vinfo x = vi(TC_DTYPE_FLOAT32, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(3), KNOWN(224), KNOWN(224)});
    tc__vinfo w = vi(TC_DTYPE_FLOAT32, 4, (tc__dim[]){KNOWN(64), KNOWN(3), KNOWN(7), KNOWN(7)});
    tc__vinfo b = vi(TC_DTYPE_FLOAT32, 1, (tc__dim[]){KNOWN(64)});
    int64_t s[2] = {2, 2}, p[4] = {3, 3, 3, 3};
    tc__attr at[2] = {dtu_attr_ints("strides", s, 2), dtu_attr_ints("pads", p, 4)};
    const tc__vinfo *in[3] = {&x, &w, &b};
    tc__vinfo out;
    infer_ok(tc__infer_Conv, 13, at, 2, 3, in, 1, &out);
    assert_int_equal(out.dtype, TC_DTYPE_FLOAT32);
    assert_dims(&out.shape, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(64), KNOWN(112), KNOWN(112)});
    /* a symbolic spatial dim gives an unknown output dim; the others stay computed */
    x.shape.dims[2] = SYM(SYM_H);
    infer_ok(tc__infer_Conv, 13, at, 2, 2, in, 1, &out);
    assert_dims(&out.shape, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(64), UNK, KNOWN(112)});
}

static void test_conv_auto_pad_same(void **state) {
    (void)state;
    tc__vinfo x = vi(TC_DTYPE_FLOAT32, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(8), SYM(SYM_H), KNOWN(15)});
    tc__vinfo w = vi(TC_DTYPE_FLOAT32, 4, (tc__dim[]){KNOWN(16), KNOWN(4), KNOWN(3), KNOWN(3)});
    int64_t s[2] = {2, 2};
    tc__attr at[3] = {dtu_attr_string("auto_pad", "SAME_UPPER"), dtu_attr_ints("strides", s, 2),
                      dtu_attr_int("group", 2)};
    const tc__vinfo *in[2] = {&x, &w};
    tc__vinfo out;
    infer_ok(tc__infer_Conv, 11, at, 3, 2, in, 1, &out);
    assert_dims(&out.shape, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(16), UNK, KNOWN(8)}); /* ceil(15 / 2) */
    /* the kernel is not needed for SAME: a weight of unknown spatial dims still gives 8 */
    tc__vinfo w2 = vi(TC_DTYPE_FLOAT32, 4, (tc__dim[]){KNOWN(16), KNOWN(4), UNK, UNK});
    const tc__vinfo *in2[2] = {&x, &w2};
    infer_ok(tc__infer_Conv, 11, at, 3, 2, in2, 1, &out);
    assert_dims(&out.shape, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(16), UNK, KNOWN(8)});
    /* VALID needs the kernel: unknown */
    tc__attr av[1] = {dtu_attr_string("auto_pad", "VALID")};
    tc__attr g2[2] = {av[0], dtu_attr_int("group", 2)};
    infer_ok(tc__infer_Conv, 11, g2, 2, 2, in2, 1, &out);
    assert_dims(&out.shape, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(16), UNK, UNK});
}

static void test_conv_unknown_and_invalid(void **state) {
    (void)state;
    tc__vinfo x = vi(TC_DTYPE_FLOAT32, TC__RANK_UNKNOWN, NULL);
    tc__vinfo w = vi(TC_DTYPE_FLOAT32, 3, (tc__dim[]){KNOWN(5), KNOWN(2), KNOWN(3)});
    const tc__vinfo *in[2] = {&x, &w};
    tc__vinfo out;
    infer_ok(tc__infer_Conv, 13, NULL, 0, 2, in, 1, &out);
    assert_dims(&out.shape, 3, (tc__dim[]){UNK, KNOWN(5), UNK});
    tc__vinfo w_unknown = vi(TC_DTYPE_FLOAT32, TC__RANK_UNKNOWN, NULL);
    const tc__vinfo *in_u[2] = {&x, &w_unknown};
    infer_ok(tc__infer_Conv, 13, NULL, 0, 2, in_u, 1, &out);
    assert_int_equal(out.shape.rank, TC__RANK_UNKNOWN);

    tc__vinfo x4 = vi(TC_DTYPE_FLOAT32, 3, (tc__dim[]){KNOWN(1), KNOWN(4), KNOWN(9)});
    const tc__vinfo *bad[2] = {&x4, &w};
    infer_fails(tc__infer_Conv, 13, NULL, 0, 2, bad, TC_STATUS_INVALID_ARGUMENT, "channels");
    tc__attr g = dtu_attr_int("group", 2);
    tc__vinfo x2 = vi(TC_DTYPE_FLOAT32, 3, (tc__dim[]){KNOWN(1), KNOWN(4), KNOWN(9)});
    const tc__vinfo *bad2[2] = {&x2, &w};
    infer_fails(tc__infer_Conv, 13, &g, 1, 2, bad2, TC_STATUS_INVALID_ARGUMENT, "multiple of group");
    tc__vinfo x_small = vi(TC_DTYPE_FLOAT32, 3, (tc__dim[]){KNOWN(1), KNOWN(2), KNOWN(2)});
    const tc__vinfo *bad3[2] = {&x_small, &w};
    infer_fails(tc__infer_Conv, 13, NULL, 0, 2, bad3, TC_STATUS_INVALID_ARGUMENT, "smaller than the dilated kernel");
    tc__vinfo wd = vi(TC_DTYPE_FLOAT64, 3, (tc__dim[]){KNOWN(5), KNOWN(2), KNOWN(3)});
    tc__vinfo xf = vi(TC_DTYPE_FLOAT32, 3, (tc__dim[]){KNOWN(1), KNOWN(2), KNOWN(9)});
    const tc__vinfo *bad4[2] = {&xf, &wd};
    infer_fails(tc__infer_Conv, 13, NULL, 0, 2, bad4, TC_STATUS_INVALID_GRAPH, "float64");
}

static void test_pools_symbolic(void **state) {
    (void)state;
    tc__vinfo x = vi(TC_DTYPE_FLOAT32, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(64), KNOWN(112), KNOWN(112)});
    int64_t k[2] = {3, 3}, s[2] = {2, 2}, p[4] = {1, 1, 1, 1};
    tc__attr at[3] = {dtu_attr_ints("kernel_shape", k, 2), dtu_attr_ints("strides", s, 2), dtu_attr_ints("pads", p, 4)};
    const tc__vinfo *in[1] = {&x};
    tc__vinfo out[2];
    infer_ok(tc__infer_MaxPool, 12, at, 3, 1, in, 2, out);
    assert_dims(&out[0].shape, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(64), KNOWN(56), KNOWN(56)});
    assert_int_equal(out[1].dtype, TC_DTYPE_INT64);
    assert_dims(&out[1].shape, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(64), KNOWN(56), KNOWN(56)});
    /* spans (112 + 2 - 3) = 111 and (114 + 2 - 3) = 113 over stride 2: floor 56, 57; ceil 57, 58 */
    x.shape.dims[3] = KNOWN(114);
    tc__attr atc[4] = {at[0], at[1], at[2], dtu_attr_int("ceil_mode", 1)};
    infer_ok(tc__infer_AveragePool, 19, atc, 4, 1, in, 1, out);
    assert_dims(&out[0].shape, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(64), KNOWN(57), KNOWN(58)});
    infer_ok(tc__infer_AveragePool, 19, at, 3, 1, in, 1, out);
    assert_dims(&out[0].shape, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(64), KNOWN(56), KNOWN(57)});
    /* unknown input rank: kernel_shape fixes the rank */
    tc__vinfo xu = vi(TC_DTYPE_FLOAT32, TC__RANK_UNKNOWN, NULL);
    const tc__vinfo *inu[1] = {&xu};
    infer_ok(tc__infer_MaxPool, 12, at, 3, 1, inu, 1, out);
    assert_dims(&out[0].shape, 4, (tc__dim[]){UNK, UNK, UNK, UNK});
    /* SAME with a symbolic spatial dim */
    tc__vinfo xs = vi(TC_DTYPE_FLOAT32, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(8), SYM(SYM_H), KNOWN(9)});
    const tc__vinfo *ins[1] = {&xs};
    tc__attr as[3] = {at[0], at[1], dtu_attr_string("auto_pad", "SAME_LOWER")};
    infer_ok(tc__infer_MaxPool, 12, as, 3, 1, ins, 1, out);
    assert_dims(&out[0].shape, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(8), UNK, KNOWN(5)});
    infer_ok(tc__infer_GlobalAveragePool, 13, NULL, 0, 1, ins, 1, out);
    assert_dims(&out[0].shape, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(8), KNOWN(1), KNOWN(1)});
    infer_ok(tc__infer_GlobalMaxPool, 13, NULL, 0, 1, inu, 1, out);
    assert_int_equal(out[0].shape.rank, TC__RANK_UNKNOWN);
    tc__attr nok = dtu_attr_int("storage_order", 2);
    tc__attr bad_so[2] = {at[0], nok};
    infer_fails(tc__infer_MaxPool, 12, bad_so, 2, 1, in, TC_STATUS_INVALID_ARGUMENT, "storage_order");
    infer_fails(tc__infer_MaxPool, 12, NULL, 0, 1, in, TC_STATUS_INVALID_ARGUMENT, "kernel_shape");
}

static void test_matmul_symbolic(void **state) {
    (void)state;
    tc__vinfo a = vi(TC_DTYPE_FLOAT32, 3, (tc__dim[]){SYM(SYM_BATCH), SYM(SYM_SEQ), KNOWN(768)});
    tc__vinfo b = vi(TC_DTYPE_FLOAT32, 2, (tc__dim[]){KNOWN(768), KNOWN(3072)});
    const tc__vinfo *in[2] = {&a, &b};
    tc__vinfo out;
    infer_ok(tc__infer_MatMul, 13, NULL, 0, 2, in, 1, &out);
    assert_dims(&out.shape, 3, (tc__dim[]){SYM(SYM_BATCH), SYM(SYM_SEQ), KNOWN(3072)});
    /* attention scores: [b, 12, s, 64] x [b, 12, 64, s] */
    tc__vinfo q = vi(TC_DTYPE_FLOAT32, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(12), SYM(SYM_SEQ), KNOWN(64)});
    tc__vinfo kt = vi(TC_DTYPE_FLOAT32, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(12), KNOWN(64), SYM(SYM_SEQ)});
    const tc__vinfo *in2[2] = {&q, &kt};
    infer_ok(tc__infer_MatMul, 13, NULL, 0, 2, in2, 1, &out);
    assert_dims(&out.shape, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(12), SYM(SYM_SEQ), SYM(SYM_SEQ)});
    /* broadcasting a known 1 against a symbol keeps the symbol; 1-D operands drop their dim */
    tc__vinfo a1 = vi(TC_DTYPE_FLOAT32, 1, (tc__dim[]){KNOWN(768)});
    const tc__vinfo *in3[2] = {&a1, &b};
    infer_ok(tc__infer_MatMul, 13, NULL, 0, 2, in3, 1, &out);
    assert_dims(&out.shape, 1, (tc__dim[]){KNOWN(3072)});
    tc__vinfo v = vi(TC_DTYPE_FLOAT32, 1, (tc__dim[]){KNOWN(768)});
    const tc__vinfo *in4[2] = {&a, &v};
    infer_ok(tc__infer_MatMul, 13, NULL, 0, 2, in4, 1, &out);
    assert_dims(&out.shape, 2, (tc__dim[]){SYM(SYM_BATCH), SYM(SYM_SEQ)});
    const tc__vinfo *in5[2] = {&a1, &v};
    infer_ok(tc__infer_MatMul, 13, NULL, 0, 2, in5, 1, &out);
    assert_int_equal(out.shape.rank, 0);
    tc__vinfo u = vi(TC_DTYPE_FLOAT32, TC__RANK_UNKNOWN, NULL);
    const tc__vinfo *in6[2] = {&a, &u};
    infer_ok(tc__infer_MatMul, 13, NULL, 0, 2, in6, 1, &out);
    assert_int_equal(out.shape.rank, TC__RANK_UNKNOWN);
    tc__vinfo bad = vi(TC_DTYPE_FLOAT32, 2, (tc__dim[]){KNOWN(512), KNOWN(3)});
    const tc__vinfo *in7[2] = {&a, &bad};
    infer_fails(tc__infer_MatMul, 13, NULL, 0, 2, in7, TC_STATUS_INVALID_ARGUMENT, "768 vs 512");
}

/* The views of fuse_matmul_views: q, k, v as [b, s, 12, 64] read through perms, the output written through
 * one; bad perms (not a permutation, the wrong length, on a 1-D operand) are refused with the attribute named. */
static void test_matmul_views(void **state) {
    (void)state;
    tc__vinfo q = vi(TC_DTYPE_FLOAT32, 4, (tc__dim[]){SYM(SYM_BATCH), SYM(SYM_SEQ), KNOWN(12), KNOWN(64)});
    const tc__vinfo *in[2] = {&q, &q};
    const int64_t p0213[4] = {0, 2, 1, 3}, p0231[4] = {0, 2, 3, 1}, dup[4] = {0, 2, 2, 3}, p10[2] = {1, 0};
    tc__attr at[3] = {dtu_attr_ints(TC__ATTR_MM_A_PERM, p0213, 4), dtu_attr_ints(TC__ATTR_MM_B_PERM, p0231, 4),
                      dtu_attr_float(TC__ATTR_MM_ALPHA, 0.125f)};
    tc__vinfo out;
    infer_ok(tc__infer_MatMul, 13, at, 3, 2, in, 1, &out); /* scores [b, 12, s, s] */
    assert_dims(&out.shape, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(12), SYM(SYM_SEQ), SYM(SYM_SEQ)});
    tc__vinfo p = vi(TC_DTYPE_FLOAT32, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(12), SYM(SYM_SEQ), SYM(SYM_SEQ)});
    const tc__vinfo *in2[2] = {&p, &q};
    tc__attr at2[2] = {dtu_attr_ints(TC__ATTR_MM_B_PERM, p0213, 4), dtu_attr_ints(TC__ATTR_MM_Y_PERM, p0213, 4)};
    infer_ok(tc__infer_MatMul, 13, at2, 2, 2, in2, 1, &out); /* context written back as [b, s, 12, 64] */
    assert_dims(&out.shape, 4, (tc__dim[]){SYM(SYM_BATCH), SYM(SYM_SEQ), KNOWN(12), KNOWN(64)});
    at[0] = dtu_attr_ints(TC__ATTR_MM_A_PERM, dup, 4);
    infer_fails(tc__infer_MatMul, 13, at, 1, 2, in, TC_STATUS_INVALID_ARGUMENT, TC__ATTR_MM_A_PERM);
    at2[1] = dtu_attr_ints(TC__ATTR_MM_Y_PERM, p10, 2);
    infer_fails(tc__infer_MatMul, 13, at2, 2, 2, in2, TC_STATUS_INVALID_ARGUMENT, TC__ATTR_MM_Y_PERM);
    tc__vinfo v1 = vi(TC_DTYPE_FLOAT32, 1, (tc__dim[]){KNOWN(64)});
    const tc__vinfo *in3[2] = {&q, &v1};
    tc__attr at3 = dtu_attr_ints(TC__ATTR_MM_B_PERM, p10, 1);
    infer_fails(tc__infer_MatMul, 13, &at3, 1, 2, in3, TC_STATUS_INVALID_ARGUMENT, TC__ATTR_MM_B_PERM);
}

static void test_gemm_symbolic(void **state) {
    (void)state;
    tc__vinfo a = vi(TC_DTYPE_FLOAT32, 2, (tc__dim[]){SYM(SYM_BATCH), KNOWN(2048)});
    tc__vinfo b = vi(TC_DTYPE_FLOAT32, 2, (tc__dim[]){KNOWN(1000), KNOWN(2048)});
    tc__vinfo c = vi(TC_DTYPE_FLOAT32, 1, (tc__dim[]){KNOWN(1000)});
    tc__attr tb = dtu_attr_int("transB", 1);
    const tc__vinfo *in[3] = {&a, &b, &c};
    tc__vinfo out;
    infer_ok(tc__infer_Gemm, 13, &tb, 1, 3, in, 1, &out);
    assert_dims(&out.shape, 2, (tc__dim[]){SYM(SYM_BATCH), KNOWN(1000)});
    /* transA with an unknown M pinned by C */
    tc__vinfo at = vi(TC_DTYPE_FLOAT32, 2, (tc__dim[]){KNOWN(5), UNK});
    tc__vinfo b2 = vi(TC_DTYPE_FLOAT32, 2, (tc__dim[]){KNOWN(5), KNOWN(7)});
    tc__vinfo c2 = vi(TC_DTYPE_FLOAT32, 2, (tc__dim[]){KNOWN(3), KNOWN(1)});
    tc__attr ta = dtu_attr_int("transA", 1);
    const tc__vinfo *in2[3] = {&at, &b2, &c2};
    infer_ok(tc__infer_Gemm, 13, &ta, 1, 3, in2, 1, &out);
    assert_dims(&out.shape, 2, (tc__dim[]){KNOWN(3), KNOWN(7)});
    const tc__vinfo *bad[3] = {&a, &b, &c};
    infer_fails(tc__infer_Gemm, 13, NULL, 0, 2, bad, TC_STATUS_INVALID_ARGUMENT, "inner dimensions");
    tc__vinfo c3 = vi(TC_DTYPE_FLOAT32, 1, (tc__dim[]){KNOWN(999)});
    const tc__vinfo *bad2[3] = {&a, &b, &c3};
    infer_fails(tc__infer_Gemm, 13, &tb, 1, 3, bad2, TC_STATUS_INVALID_ARGUMENT, "broadcast");
}

static void test_batchnorm_symbolic(void **state) {
    (void)state;
    tc__vinfo x = vi(TC_DTYPE_FLOAT32, 4, (tc__dim[]){SYM(SYM_BATCH), UNK, SYM(SYM_H), KNOWN(7)});
    tc__vinfo p = vi(TC_DTYPE_FLOAT32, 1, (tc__dim[]){KNOWN(64)});
    const tc__vinfo *in[5] = {&x, &p, &p, &p, &p};
    tc__vinfo out[3];
    infer_ok(tc__infer_BatchNormalization, 15, NULL, 0, 5, in, 1, out);
    /* the channel count comes from the per-channel inputs */
    assert_dims(&out[0].shape, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(64), SYM(SYM_H), KNOWN(7)});
    tc__attr tm = dtu_attr_int("training_mode", 1);
    infer_ok(tc__infer_BatchNormalization, 15, &tm, 1, 5, in, 3, out);
    assert_dims(&out[1].shape, 1, (tc__dim[]){KNOWN(64)});
    assert_dims(&out[2].shape, 1, (tc__dim[]){KNOWN(64)});
    tc__vinfo q = vi(TC_DTYPE_FLOAT32, 1, (tc__dim[]){KNOWN(32)});
    const tc__vinfo *bad[5] = {&x, &p, &q, &p, &p};
    infer_fails(tc__infer_BatchNormalization, 15, NULL, 0, 5, bad, TC_STATUS_INVALID_ARGUMENT, "input B");
}

static void test_resize_symbolic(void **state) {
    (void)state;
    tc__vinfo x = vi(TC_DTYPE_FLOAT32, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(3), SYM(SYM_H), KNOWN(20)});
    tc__tensor sc = dtu_floats(4, (const double[]){1, 1, 2, 2.5});
    tc__vinfo vs = vconst(&sc);
    const tc__vinfo *in[3] = {&x, NULL, &vs};
    tc__vinfo out;
    infer_ok(tc__infer_Resize, 13, NULL, 0, 3, in, 1, &out);
    assert_dims(&out.shape, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(3), UNK, KNOWN(50)});
    /* scales of unknown value: dims unknown, rank known */
    tc__vinfo su = vi(TC_DTYPE_FLOAT32, 1, (tc__dim[]){KNOWN(4)});
    const tc__vinfo *in2[3] = {&x, NULL, &su};
    infer_ok(tc__infer_Resize, 13, NULL, 0, 3, in2, 1, &out);
    assert_dims(&out.shape, 4, (tc__dim[]){UNK, UNK, UNK, UNK});
    /* sizes partly symbolic (Concat of Shape slices): the symbols flow through */
    tc__vinfo sz = vi(TC_DTYPE_INT64, 1, (tc__dim[]){KNOWN(4)});
    sz.symval_len = 4;
    sz.symval[0] = SYM(SYM_BATCH);
    sz.symval[1] = KNOWN(3);
    sz.symval[2] = KNOWN(64);
    sz.symval[3] = KNOWN(64);
    tc__vinfo empty = vi(TC_DTYPE_FLOAT32, 1, (tc__dim[]){KNOWN(0)});
    const tc__vinfo *in3[4] = {&x, NULL, &empty, &sz};
    infer_ok(tc__infer_Resize, 13, NULL, 0, 4, in3, 1, &out);
    assert_dims(&out.shape, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(3), KNOWN(64), KNOWN(64)});
    /* axes with sizes (opset 18) */
    tc__tensor s2 = dtu_ints(2, (const int64_t[]){7, 9});
    tc__vinfo vs2 = vconst(&s2);
    int64_t axes[2] = {-1, 2};
    tc__attr ax = dtu_attr_ints("axes", axes, 2);
    const tc__vinfo *in4[4] = {&x, NULL, NULL, &vs2};
    infer_ok(tc__infer_Resize, 18, &ax, 1, 4, in4, 1, &out);
    assert_dims(&out.shape, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(3), KNOWN(9), KNOWN(7)});
    tc__tensor s3 = dtu_ints(3, (const int64_t[]){7, 9, 1});
    tc__vinfo vs3 = vconst(&s3);
    const tc__vinfo *bad[4] = {&x, NULL, NULL, &vs3};
    infer_fails(tc__infer_Resize, 18, &ax, 1, 4, bad, TC_STATUS_INVALID_ARGUMENT, "sizes has 3 values");
    tc__tensor_free(&sc);
    tc__tensor_free(&s2);
    tc__tensor_free(&s3);
}

static void test_pad_symbolic(void **state) {
    (void)state;
    tc__vinfo x = vi(TC_DTYPE_FLOAT32, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(3), KNOWN(5), SYM(SYM_H)});
    tc__tensor pads = dtu_ints(8, (const int64_t[]){0, 0, 1, 1, 0, 0, 2, 1});
    tc__vinfo vp = vconst(&pads);
    const tc__vinfo *in[2] = {&x, &vp};
    tc__vinfo out;
    infer_ok(tc__infer_Pad, 13, NULL, 0, 2, in, 1, &out);
    assert_dims(&out.shape, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(3), KNOWN(8), UNK});
    tc__vinfo pu = vi(TC_DTYPE_INT64, 1, (tc__dim[]){KNOWN(8)});
    const tc__vinfo *in2[2] = {&x, &pu};
    infer_ok(tc__infer_Pad, 13, NULL, 0, 2, in2, 1, &out);
    assert_dims(&out.shape, 4, (tc__dim[]){UNK, UNK, UNK, UNK});
    /* known axes with unknown pads: other dims are kept */
    tc__tensor axes = dtu_ints(1, (const int64_t[]){2});
    tc__vinfo va = vconst(&axes);
    tc__vinfo p2 = vi(TC_DTYPE_INT64, 1, (tc__dim[]){KNOWN(2)});
    const tc__vinfo *in3[4] = {&x, &p2, NULL, &va};
    infer_ok(tc__infer_Pad, 18, NULL, 0, 4, in3, 1, &out);
    assert_dims(&out.shape, 4, (tc__dim[]){SYM(SYM_BATCH), KNOWN(3), UNK, SYM(SYM_H)});
    tc__tensor bad = dtu_ints(6, (const int64_t[]){0, 0, 1, 0, 0, 1});
    tc__vinfo vb = vconst(&bad);
    const tc__vinfo *in4[2] = {&x, &vb};
    infer_fails(tc__infer_Pad, 13, NULL, 0, 2, in4, TC_STATUS_INVALID_ARGUMENT, "expected 8");
    tc__attr mode = dtu_attr_string("mode", "symmetric");
    infer_fails(tc__infer_Pad, 13, &mode, 1, 2, in, TC_STATUS_INVALID_ARGUMENT, "symmetric");
    tc__tensor_free(&pads);
    tc__tensor_free(&axes);
    tc__tensor_free(&bad);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_symbolic_batch),  cmocka_unit_test(test_conv_auto_pad_same),
        cmocka_unit_test(test_conv_unknown_and_invalid), cmocka_unit_test(test_pools_symbolic),
        cmocka_unit_test(test_matmul_symbolic),      cmocka_unit_test(test_matmul_views),
        cmocka_unit_test(test_gemm_symbolic),
        cmocka_unit_test(test_batchnorm_symbolic),   cmocka_unit_test(test_resize_symbolic),
        cmocka_unit_test(test_pad_symbolic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
