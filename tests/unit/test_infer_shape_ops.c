/*
 * test_infer_shape_ops.c - static shape inference of the shape and data movement
 * operators: symbolic shape arithmetic as in Hugging Face BERT exports (Shape -> Gather
 * -> Unsqueeze -> Concat -> Reshape must keep batch/seq symbolic), unknown inputs giving
 * unknown dims instead of failures, opset-dependent attributes/inputs, and invalid nodes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graph/op_schema.h"

/* ---- helpers ------------------------------------------------------------------------ */

enum { SYM_B = 0, SYM_S = 1, SYM_T = 2 };
static tc__dim K(int64_t v) { return tc__dim_known(v); }
static tc__dim SY(int32_t s) { return (tc__dim){-1, s}; }
static tc__dim U(void) { return tc__dim_unknown(); }

static tc__vinfo vi(tc_dtype dt, int32_t rank, const tc__dim *dims) {
    tc__vinfo v;
    tc__vinfo_init(&v);
    v.dtype = dt;
    v.shape.rank = rank;
    for (int32_t i = 0; i < rank; i++) v.shape.dims[i] = dims[i];
    return v;
}

/* A known int64 tensor (initializer or Constant) with value and symval filled as the graph
 * driver fills them. The tensor storage is kept by the caller. */
typedef struct konst {
    tc__tensor t;
    int64_t data[16];
    tc__vinfo v;
} konst;

static void mk_const(konst *k, int32_t rank, int64_t n, const int64_t *vals) {
    memset(k, 0, sizeof *k);
    k->t.dtype = TC_DTYPE_INT64;
    k->t.rank = rank;
    k->t.dims[0] = n;
    memcpy(k->data, vals, sizeof(int64_t) * (size_t)n);
    k->t.data = k->data;
    k->t.nbytes = sizeof(int64_t) * (size_t)n;
    tc__vinfo_init(&k->v);
    k->v.dtype = TC_DTYPE_INT64;
    k->v.shape.rank = rank;
    k->v.shape.dims[0] = K(n);
    k->v.value = &k->t;
    k->v.symval_len = (int32_t)n;
    for (int64_t i = 0; i < n; i++) k->v.symval[i] = tc__dim_known(vals[i]);
}

static tc__attr a_int(const char *name, int64_t v) { return (tc__attr){.name = name, .kind = TC__ATTR_INT, .i = v}; }
static tc__attr a_ints(const char *name, const int64_t *v, size_t n) {
    return (tc__attr){.name = name, .kind = TC__ATTR_INTS, .ints = v, .n = n};
}

typedef struct inf {
    tc__infer_fn fn;
    int64_t opset;
    const tc__attr *attrs;
    int n_attrs;
    int n_in;
    const tc__vinfo *in[8];
    int n_out;
    tc__vinfo out[8];
    tc__err err;
} inf;

static tc_status infer(inf *r) {
    tc__attrs attrs = {r->n_attrs, r->attrs};
    if (r->n_out == 0) r->n_out = 1;
    for (int o = 0; o < r->n_out; o++) tc__vinfo_init(&r->out[o]);
    memset(&r->err, 0, sizeof r->err);
    tc__infer_ctx c = {"node", "op", r->opset ? r->opset : 17, &attrs, r->n_in, r->in, r->n_out, r->out, &r->err};
    tc_status st = r->fn(&c);
    for (int o = 0; st == TC_STATUS_OK && o < r->n_out; o++) assert_null(r->out[o].value);
    return st;
}

/* Runs inference that must succeed and returns output 0. */
static tc__vinfo ok(inf r) {
    tc_status st = infer(&r);
    if (st) fprintf(stderr, "unexpected failure: %s\n", r.err.msg);
    assert_int_equal(st, TC_STATUS_OK);
    return r.out[0];
}

/* Runs inference that must fail with status and a message naming `needle`. */
static void fails(inf r, tc_status status, const char *needle) {
    tc_status st = infer(&r);
    if (st != status) fprintf(stderr, "expected status %d, got %d (%s)\n", (int)status, (int)st, r.err.msg);
    assert_int_equal(st, status);
    if (needle != NULL && strstr(r.err.msg, needle) == NULL) fprintf(stderr, "message: %s\n", r.err.msg);
    if (needle != NULL) assert_non_null(strstr(r.err.msg, needle));
}

static bool dim_eq(tc__dim a, tc__dim b) {
    if (a.value >= 0 || b.value >= 0) return a.value == b.value;
    return a.sym == b.sym;
}

static void expect_shape(const tc__vinfo *v, int32_t rank, const tc__dim *dims) {
    assert_int_equal(v->shape.rank, rank);
    for (int32_t i = 0; i < rank; i++) {
        if (!dim_eq(v->shape.dims[i], dims[i]))
            fprintf(stderr, "dim %d: got (%lld, sym %d), want (%lld, sym %d)\n", (int)i,
                    (long long)v->shape.dims[i].value, v->shape.dims[i].sym, (long long)dims[i].value, dims[i].sym);
        assert_true(dim_eq(v->shape.dims[i], dims[i]));
    }
}

static void expect_symval(const tc__vinfo *v, int32_t n, const tc__dim *dims) {
    assert_int_equal(v->symval_len, n);
    for (int32_t i = 0; i < n; i++) assert_true(dim_eq(v->symval[i], dims[i]));
}

#define DIMS(...) ((tc__dim[]){__VA_ARGS__})
#define N_DIMS(...) ((int32_t)(sizeof((tc__dim[]){__VA_ARGS__}) / sizeof(tc__dim)))
#define SHAPE(v, ...) expect_shape(&(v), N_DIMS(__VA_ARGS__), DIMS(__VA_ARGS__))
#define SYMVAL(v, ...) expect_symval(&(v), N_DIMS(__VA_ARGS__), DIMS(__VA_ARGS__))

/* ---- BERT-style shape arithmetic ---------------------------------------------------- */

static void test_bert_chain(void **state) {
    (void)state;
    tc__vinfo x = vi(TC_DTYPE_FLOAT32, 3, DIMS(SY(SYM_B), SY(SYM_S), K(768)));
    konst i0, i1, ax0, c12, c64, cm1, c768, c0, cinf, one, zero;
    mk_const(&i0, 0, 1, (int64_t[]){0});
    mk_const(&i1, 0, 1, (int64_t[]){1});
    mk_const(&ax0, 1, 1, (int64_t[]){0});
    mk_const(&c12, 1, 1, (int64_t[]){12});
    mk_const(&c64, 1, 1, (int64_t[]){64});
    mk_const(&cm1, 1, 1, (int64_t[]){-1});
    mk_const(&c768, 1, 1, (int64_t[]){768});
    mk_const(&c0, 1, 1, (int64_t[]){0});
    mk_const(&cinf, 1, 1, (int64_t[]){INT64_MAX});
    mk_const(&one, 0, 1, (int64_t[]){1});
    mk_const(&zero, 0, 1, (int64_t[]){0});

    /* Shape(x) -> [B, S, 768] as symval. */
    tc__vinfo shp = ok((inf){.fn = tc__infer_Shape, .n_in = 1, .in = {&x}});
    assert_int_equal(shp.dtype, TC_DTYPE_INT64);
    SHAPE(shp, K(3));
    SYMVAL(shp, SY(SYM_B), SY(SYM_S), K(768));
    /* Gather(shape, 0) and Gather(shape, 1): scalars B and S. */
    tc__vinfo g0 = ok((inf){.fn = tc__infer_Gather, .n_in = 2, .in = {&shp, &i0.v}});
    tc__vinfo g1 = ok((inf){.fn = tc__infer_Gather, .n_in = 2, .in = {&shp, &i1.v}});
    assert_int_equal(g0.shape.rank, 0);
    SYMVAL(g0, SY(SYM_B));
    SYMVAL(g1, SY(SYM_S));
    /* Unsqueeze(axes [0]) -> [B] and [S]. */
    tc__vinfo u0 = ok((inf){.fn = tc__infer_Unsqueeze, .opset = 13, .n_in = 2, .in = {&g0, &ax0.v}});
    tc__vinfo u1 = ok((inf){.fn = tc__infer_Unsqueeze, .opset = 13, .n_in = 2, .in = {&g1, &ax0.v}});
    SHAPE(u0, K(1));
    SYMVAL(u0, SY(SYM_B));
    SYMVAL(u1, SY(SYM_S));
    /* Concat(B, S, 12, 64) -> Reshape(x) -> [B, S, 12, 64]. */
    tc__attr axis0[1] = {a_int("axis", 0)};
    tc__vinfo cat =
        ok((inf){.fn = tc__infer_Concat, .attrs = axis0, .n_attrs = 1, .n_in = 4, .in = {&u0, &u1, &c12.v, &c64.v}});
    SHAPE(cat, K(4));
    SYMVAL(cat, SY(SYM_B), SY(SYM_S), K(12), K(64));
    tc__vinfo heads = ok((inf){.fn = tc__infer_Reshape, .n_in = 2, .in = {&x, &cat}});
    assert_int_equal(heads.dtype, TC_DTYPE_FLOAT32);
    SHAPE(heads, SY(SYM_B), SY(SYM_S), K(12), K(64));
    /* Transpose(0, 2, 1, 3) -> [B, 12, S, 64]. */
    int64_t perm[4] = {0, 2, 1, 3};
    tc__attr pa[1] = {a_ints("perm", perm, 4)};
    tc__vinfo tr = ok((inf){.fn = tc__infer_Transpose, .attrs = pa, .n_attrs = 1, .n_in = 1, .in = {&heads}});
    SHAPE(tr, SY(SYM_B), K(12), SY(SYM_S), K(64));
    /* Newer exports: view(B, -1, 12, 64). The -1 resolves to S by cancelling symbols. */
    tc__vinfo cat2 =
        ok((inf){.fn = tc__infer_Concat, .attrs = axis0, .n_attrs = 1, .n_in = 4, .in = {&u0, &cm1.v, &c12.v, &c64.v}});
    SHAPE(cat2, K(4));
    assert_int_equal(cat2.symval_len, 4);
    tc__vinfo heads2 = ok((inf){.fn = tc__infer_Reshape, .n_in = 2, .in = {&x, &cat2}});
    SHAPE(heads2, SY(SYM_B), SY(SYM_S), K(12), K(64));
    /* view(B, S, -1, 64) resolves the heads dim to 12. */
    tc__vinfo cat4 =
        ok((inf){.fn = tc__infer_Concat, .attrs = axis0, .n_attrs = 1, .n_in = 4, .in = {&u0, &u1, &cm1.v, &c64.v}});
    tc__vinfo heads3 = ok((inf){.fn = tc__infer_Reshape, .n_in = 2, .in = {&x, &cat4}});
    SHAPE(heads3, SY(SYM_B), SY(SYM_S), K(12), K(64));
    /* view(-1, S, 768) resolves B; view(B, -1) cannot name B*S*768 and stays unknown. */
    tc__vinfo cat5 =
        ok((inf){.fn = tc__infer_Concat, .attrs = axis0, .n_attrs = 1, .n_in = 3, .in = {&cm1.v, &u1, &c768.v}});
    tc__vinfo r5 = ok((inf){.fn = tc__infer_Reshape, .n_in = 2, .in = {&heads, &cat5}});
    SHAPE(r5, SY(SYM_B), SY(SYM_S), K(768));
    tc__vinfo cat6 = ok((inf){.fn = tc__infer_Concat, .attrs = axis0, .n_attrs = 1, .n_in = 2, .in = {&u0, &cm1.v}});
    tc__vinfo r6 = ok((inf){.fn = tc__infer_Reshape, .n_in = 2, .in = {&heads, &cat6}});
    SHAPE(r6, SY(SYM_B), U());
    /* Merging heads back: Reshape([B,S,12,64], [0, 0, -1]) and Reshape(..., Concat(B, S, 768)). */
    konst merge;
    mk_const(&merge, 1, 3, (int64_t[]){0, 0, -1});
    tc__vinfo m1 = ok((inf){.fn = tc__infer_Reshape, .n_in = 2, .in = {&heads, &merge.v}});
    SHAPE(m1, SY(SYM_B), SY(SYM_S), K(768));
    tc__vinfo cat3 =
        ok((inf){.fn = tc__infer_Concat, .attrs = axis0, .n_attrs = 1, .n_in = 3, .in = {&u0, &u1, &c768.v}});
    tc__vinfo m2 = ok((inf){.fn = tc__infer_Reshape, .n_in = 2, .in = {&heads, &cat3}});
    SHAPE(m2, SY(SYM_B), SY(SYM_S), K(768));
    /* Shape(x, end=2) (opset 15) gives [B, S] directly. */
    tc__attr end2[1] = {a_int("end", -1)};
    tc__vinfo bs = ok((inf){.fn = tc__infer_Shape, .opset = 15, .attrs = end2, .n_attrs = 1, .n_in = 1, .in = {&x}});
    SYMVAL(bs, SY(SYM_B), SY(SYM_S));
    /* Slice of a shape tensor: shape[0:2] and shape[-1:]. */
    konst s0, e2, sm1;
    mk_const(&s0, 1, 1, (int64_t[]){0});
    mk_const(&e2, 1, 1, (int64_t[]){2});
    mk_const(&sm1, 1, 1, (int64_t[]){-1});
    tc__vinfo sl = ok((inf){.fn = tc__infer_Slice, .opset = 13, .n_in = 3, .in = {&shp, &s0.v, &e2.v}});
    SHAPE(sl, K(2));
    SYMVAL(sl, SY(SYM_B), SY(SYM_S));
    tc__vinfo sl2 = ok((inf){.fn = tc__infer_Slice, .opset = 13, .n_in = 3, .in = {&shp, &sm1.v, &cinf.v}});
    SYMVAL(sl2, K(768));
    /* Squeeze of the 1-D [S] back to a scalar keeps S; Identity and Dropout keep symvals. */
    tc__vinfo sq = ok((inf){.fn = tc__infer_Squeeze, .opset = 13, .n_in = 2, .in = {&u1, &ax0.v}});
    assert_int_equal(sq.shape.rank, 0);
    SYMVAL(sq, SY(SYM_S));
    tc__vinfo idn = ok((inf){.fn = tc__infer_Identity, .n_in = 1, .in = {&cat}});
    SYMVAL(idn, SY(SYM_B), SY(SYM_S), K(12), K(64));
    tc__vinfo dr = ok((inf){.fn = tc__infer_Dropout, .opset = 13, .n_in = 1, .in = {&sl}});
    SYMVAL(dr, SY(SYM_B), SY(SYM_S));
    /* Reshape of a scalar shape piece to [1] (some exporters) keeps it. */
    tc__vinfo r1 = ok((inf){.fn = tc__infer_Reshape, .n_in = 2, .in = {&g1, &cm1.v}});
    SHAPE(r1, K(1));
    SYMVAL(r1, SY(SYM_S));
    /* position_ids[:, :S] of a [1, 512] buffer -> [1, S]; Range(0, S, 1) -> [S]. */
    tc__vinfo pos = vi(TC_DTYPE_INT64, 2, DIMS(K(1), K(512)));
    konst ax1;
    mk_const(&ax1, 1, 1, (int64_t[]){1});
    tc__vinfo ps = ok((inf){.fn = tc__infer_Slice, .opset = 13, .n_in = 4, .in = {&pos, &s0.v, &u1, &ax1.v}});
    SHAPE(ps, K(1), SY(SYM_S));
    tc__vinfo rg = ok((inf){.fn = tc__infer_Range, .n_in = 3, .in = {&zero.v, &g1, &one.v}});
    assert_int_equal(rg.dtype, TC_DTYPE_INT64);
    SHAPE(rg, SY(SYM_S));
    /* token_type_ids.expand(B, S): Expand([1, S], Concat(B, S)) -> [B, S]. */
    tc__vinfo bs2 = ok((inf){.fn = tc__infer_Concat, .attrs = axis0, .n_attrs = 1, .n_in = 2, .in = {&u0, &u1}});
    tc__vinfo ex = ok((inf){.fn = tc__infer_Expand, .n_in = 2, .in = {&ps, &bs2}});
    SHAPE(ex, SY(SYM_B), SY(SYM_S));
    /* attention mask ones: ConstantOfShape(Concat(B, S)) -> [B, S] float. */
    tc__vinfo cos = ok((inf){.fn = tc__infer_ConstantOfShape, .n_in = 1, .in = {&bs2}});
    assert_int_equal(cos.dtype, TC_DTYPE_FLOAT32);
    SHAPE(cos, SY(SYM_B), SY(SYM_S));
    /* Tile with repeats [1, 2, 1] keeps B, loses S (2 * S is not a symbol). */
    konst rep;
    mk_const(&rep, 1, 3, (int64_t[]){1, 2, 1});
    tc__vinfo tl = ok((inf){.fn = tc__infer_Tile, .n_in = 2, .in = {&x, &rep.v}});
    SHAPE(tl, SY(SYM_B), U(), K(768));
    /* cls.repeat(B, 1, 1): Tile of [1, 1, 768] by Concat(B, 1, 1) -> [B, 1, 768]. */
    tc__vinfo cls = vi(TC_DTYPE_FLOAT32, 3, DIMS(K(1), K(1), K(768)));
    konst c1;
    mk_const(&c1, 1, 1, (int64_t[]){1});
    tc__vinfo reps =
        ok((inf){.fn = tc__infer_Concat, .attrs = axis0, .n_attrs = 1, .n_in = 3, .in = {&u0, &c1.v, &c1.v}});
    tc__vinfo tl2 = ok((inf){.fn = tc__infer_Tile, .n_in = 2, .in = {&cls, &reps}});
    SHAPE(tl2, SY(SYM_B), K(1), K(768));
    /* Flatten(axis 2) of [B, S, 12, 64] -> [?, 768]; of [B, 12, 64] axis 1 -> [B, 768]. */
    tc__attr f2[1] = {a_int("axis", 2)};
    tc__vinfo fl = ok((inf){.fn = tc__infer_Flatten, .attrs = f2, .n_attrs = 1, .n_in = 1, .in = {&heads}});
    SHAPE(fl, U(), K(768));
    tc__vinfo b1264 = vi(TC_DTYPE_FLOAT32, 3, DIMS(SY(SYM_B), K(12), K(64)));
    tc__vinfo fl2 = ok((inf){.fn = tc__infer_Flatten, .n_in = 1, .in = {&b1264}});
    SHAPE(fl2, SY(SYM_B), K(768));
    /* Size of [B, 1, 1] is B. */
    tc__vinfo b11 = vi(TC_DTYPE_FLOAT32, 3, DIMS(SY(SYM_B), K(1), K(1)));
    tc__vinfo sz = ok((inf){.fn = tc__infer_Size, .n_in = 1, .in = {&b11}});
    assert_int_equal(sz.shape.rank, 0);
    SYMVAL(sz, SY(SYM_B));
    /* Concat along a symbolic axis: [B, S] ++ [B, 0] = [B, S]; [B, S] ++ [B, S] = [B, ?]. */
    tc__vinfo bsx = vi(TC_DTYPE_FLOAT32, 2, DIMS(SY(SYM_B), SY(SYM_S)));
    tc__vinfo b0 = vi(TC_DTYPE_FLOAT32, 2, DIMS(SY(SYM_B), K(0)));
    tc__attr axis1[1] = {a_int("axis", -1)};
    tc__vinfo cc = ok((inf){.fn = tc__infer_Concat, .attrs = axis1, .n_attrs = 1, .n_in = 2, .in = {&bsx, &b0}});
    SHAPE(cc, SY(SYM_B), SY(SYM_S));
    cc = ok((inf){.fn = tc__infer_Concat, .attrs = axis1, .n_attrs = 1, .n_in = 2, .in = {&bsx, &bsx}});
    SHAPE(cc, SY(SYM_B), U());
    /* Gather of embeddings: table [30522, 768] by ids [B, S] -> [B, S, 768]. */
    tc__vinfo table = vi(TC_DTYPE_FLOAT32, 2, DIMS(K(30522), K(768)));
    tc__vinfo ids = vi(TC_DTYPE_INT64, 2, DIMS(SY(SYM_B), SY(SYM_S)));
    tc__vinfo emb = ok((inf){.fn = tc__infer_Gather, .n_in = 2, .in = {&table, &ids}});
    SHAPE(emb, SY(SYM_B), SY(SYM_S), K(768));
    /* Split of the fused QKV projection [B, S, 2304] into three [B, S, 768]. */
    tc__vinfo qkv = vi(TC_DTYPE_FLOAT32, 3, DIMS(SY(SYM_B), SY(SYM_S), K(2304)));
    tc__attr sa[1] = {a_int("axis", 2)};
    inf sp = {.fn = tc__infer_Split, .opset = 13, .attrs = sa, .n_attrs = 1, .n_in = 1, .in = {&qkv}, .n_out = 3};
    assert_int_equal(infer(&sp), TC_STATUS_OK);
    for (int o = 0; o < 3; o++) SHAPE(sp.out[o], SY(SYM_B), SY(SYM_S), K(768));
}

/* ---- static shapes resolve fully ---------------------------------------------------- */

static void test_static_values(void **state) {
    (void)state;
    tc__vinfo x = vi(TC_DTYPE_FLOAT32, 3, DIMS(K(2), K(3), K(4)));
    tc__vinfo shp = ok((inf){.fn = tc__infer_Shape, .n_in = 1, .in = {&x}});
    SYMVAL(shp, K(2), K(3), K(4));
    konst s, z, zr;
    mk_const(&s, 1, 4, (int64_t[]){2, 0, 1, -1});
    tc__vinfo r = ok((inf){.fn = tc__infer_Reshape, .n_in = 2, .in = {&x, &s.v}});
    SHAPE(r, K(2), K(3), K(1), K(4));
    /* test_reshape_allowzero_reordered: [0, 3, 4] to [3, 4, 0] with allowzero. */
    tc__vinfo x0 = vi(TC_DTYPE_FLOAT32, 3, DIMS(K(0), K(3), K(4)));
    mk_const(&z, 1, 3, (int64_t[]){3, 4, 0});
    tc__attr az[1] = {a_int("allowzero", 1)};
    r = ok((inf){.fn = tc__infer_Reshape, .opset = 14, .attrs = az, .n_attrs = 1, .n_in = 2, .in = {&x0, &z.v}});
    SHAPE(r, K(3), K(4), K(0));
    /* Without allowzero the 0 copies input dim 2 (4): 3*4*4 != 0 elements. */
    fails((inf){.fn = tc__infer_Reshape, .opset = 14, .n_in = 2, .in = {&x0, &z.v}}, TC_STATUS_INVALID_ARGUMENT,
          "elements");
    /* allowzero is an opset-14 attribute: ignored at opset 13, so the 0 copies there too. */
    mk_const(&zr, 1, 3, (int64_t[]){0, 4, 3});
    r = ok((inf){.fn = tc__infer_Reshape, .opset = 13, .attrs = az, .n_attrs = 1, .n_in = 2, .in = {&x0, &zr.v}});
    SHAPE(r, K(0), K(4), K(3));
    /* Squeeze without axes removes every 1 of a static shape. */
    tc__vinfo x1 = vi(TC_DTYPE_FLOAT32, 4, DIMS(K(1), K(3), K(1), K(5)));
    r = ok((inf){.fn = tc__infer_Squeeze, .opset = 13, .n_in = 1, .in = {&x1}});
    SHAPE(r, K(3), K(5));
    /* Range with known values. */
    konst a, b, c;
    mk_const(&a, 0, 1, (int64_t[]){10});
    mk_const(&b, 0, 1, (int64_t[]){-3});
    mk_const(&c, 0, 1, (int64_t[]){-4});
    r = ok((inf){.fn = tc__infer_Range, .n_in = 3, .in = {&a.v, &b.v, &c.v}});
    SHAPE(r, K(4));
    /* Gather with a known negative index on a shape value. */
    konst m1;
    mk_const(&m1, 1, 2, (int64_t[]){-1, 0});
    r = ok((inf){.fn = tc__infer_Gather, .n_in = 2, .in = {&shp, &m1.v}});
    SHAPE(r, K(2));
    SYMVAL(r, K(4), K(2));
}

/* ---- unknown inputs give unknown dims, not failures ----------------------------------- */

static void test_unknowns(void **state) {
    (void)state;
    tc__vinfo x = vi(TC_DTYPE_FLOAT32, 3, DIMS(SY(SYM_B), K(3), K(4)));
    tc__vinfo unk_rank = vi(TC_DTYPE_FLOAT32, TC__RANK_UNKNOWN, NULL);
    tc__vinfo shape3 = vi(TC_DTYPE_INT64, 1, DIMS(K(3)));   /* values unknown, length 3 */
    tc__vinfo shape_any = vi(TC_DTYPE_INT64, 1, DIMS(U())); /* length unknown */
    tc__vinfo r = ok((inf){.fn = tc__infer_Reshape, .n_in = 2, .in = {&x, &shape3}});
    SHAPE(r, U(), U(), U());
    r = ok((inf){.fn = tc__infer_Reshape, .n_in = 2, .in = {&x, &shape_any}});
    assert_int_equal(r.shape.rank, TC__RANK_UNKNOWN);
    r = ok((inf){.fn = tc__infer_Shape, .n_in = 1, .in = {&unk_rank}});
    SHAPE(r, U());
    assert_true(r.symval_len < 0);
    r = ok((inf){.fn = tc__infer_Squeeze, .opset = 13, .n_in = 1, .in = {&x}});
    assert_int_equal(r.shape.rank, TC__RANK_UNKNOWN); /* B might be 1 */
    tc__vinfo axes2 = vi(TC_DTYPE_INT64, 1, DIMS(K(2)));
    r = ok((inf){.fn = tc__infer_Unsqueeze, .opset = 13, .n_in = 2, .in = {&x, &axes2}});
    SHAPE(r, U(), U(), U(), U(), U());
    r = ok((inf){.fn = tc__infer_Squeeze, .opset = 13, .n_in = 2, .in = {&x, &axes2}});
    SHAPE(r, U());
    tc__attr axis0[1] = {a_int("axis", 0)};
    r = ok((inf){.fn = tc__infer_Concat, .attrs = axis0, .n_attrs = 1, .n_in = 2, .in = {&x, &unk_rank}});
    SHAPE(r, U(), K(3), K(4));
    tc__vinfo idx = vi(TC_DTYPE_INT64, 0, NULL);
    tc__vinfo shp = ok((inf){.fn = tc__infer_Shape, .n_in = 1, .in = {&x}});
    r = ok((inf){.fn = tc__infer_Gather, .n_in = 2, .in = {&shp, &idx}});
    assert_int_equal(r.shape.rank, 0);
    assert_true(r.symval_len < 0);
    konst st;
    mk_const(&st, 1, 1, (int64_t[]){1});
    tc__vinfo ends = vi(TC_DTYPE_INT64, 1, DIMS(K(1)));
    konst ax;
    mk_const(&ax, 1, 1, (int64_t[]){-1});
    r = ok((inf){.fn = tc__infer_Slice, .opset = 13, .n_in = 4, .in = {&x, &st.v, &ends, &ax.v}});
    SHAPE(r, SY(SYM_B), K(3), U());
    r = ok((inf){.fn = tc__infer_Slice, .opset = 13, .n_in = 4, .in = {&x, &st.v, &st.v, &ends}});
    SHAPE(r, U(), U(), U());
    int64_t perm[3] = {2, 0, 1};
    tc__attr pa[1] = {a_ints("perm", perm, 3)};
    r = ok((inf){.fn = tc__infer_Transpose, .attrs = pa, .n_attrs = 1, .n_in = 1, .in = {&unk_rank}});
    SHAPE(r, U(), U(), U());
    tc__vinfo sc = vi(TC_DTYPE_FLOAT32, 0, NULL);
    r = ok((inf){.fn = tc__infer_Range, .n_in = 3, .in = {&sc, &sc, &sc}});
    SHAPE(r, U());
    tc__vinfo x31 = vi(TC_DTYPE_FLOAT32, 2, DIMS(K(3), K(1)));
    tc__vinfo shape2 = vi(TC_DTYPE_INT64, 1, DIMS(K(2)));
    r = ok((inf){.fn = tc__infer_Expand, .n_in = 2, .in = {&x31, &shape2}});
    SHAPE(r, K(3), U());
    r = ok((inf){.fn = tc__infer_Tile, .n_in = 2, .in = {&x, &shape3}});
    SHAPE(r, U(), U(), U());
    r = ok((inf){.fn = tc__infer_Flatten, .n_in = 1, .in = {&unk_rank}});
    SHAPE(r, U(), U());
    r = ok((inf){.fn = tc__infer_ConstantOfShape, .n_in = 1, .in = {&shape3}});
    SHAPE(r, U(), U(), U());
    inf sp = {.fn = tc__infer_Split, .opset = 13, .n_in = 1, .in = {&x}, .n_out = 2};
    assert_int_equal(infer(&sp), TC_STATUS_OK);
    SHAPE(sp.out[0], U(), K(3), K(4));
    tc__vinfo xi = vi(TC_DTYPE_INT64, 3, DIMS(SY(SYM_B), K(3), K(4)));
    tc__vinfo ge = ok((inf){.fn = tc__infer_GatherElements, .n_in = 2, .in = {&unk_rank, &xi}});
    SHAPE(ge, SY(SYM_B), K(3), K(4));
}

/* ---- opset-dependent attributes and inputs ------------------------------------------ */

static void test_opset_variants(void **state) {
    (void)state;
    tc__vinfo x = vi(TC_DTYPE_FLOAT16, 3, DIMS(K(1), K(6), K(1)));
    int64_t axes[2] = {0, -1};
    tc__attr aa[1] = {a_ints("axes", axes, 2)};
    tc__vinfo r = ok((inf){.fn = tc__infer_Squeeze, .opset = 11, .attrs = aa, .n_attrs = 1, .n_in = 1, .in = {&x}});
    SHAPE(r, K(6));
    assert_int_equal(r.dtype, TC_DTYPE_FLOAT16);
    fails((inf){.fn = tc__infer_Squeeze, .opset = 13, .attrs = aa, .n_attrs = 1, .n_in = 1, .in = {&x}},
          TC_STATUS_INVALID_GRAPH, "opset 13");
    r = ok((inf){.fn = tc__infer_Unsqueeze, .opset = 11, .attrs = aa, .n_attrs = 1, .n_in = 1, .in = {&x}});
    SHAPE(r, K(1), K(1), K(6), K(1), K(1));
    konst ua;
    mk_const(&ua, 1, 3, (int64_t[]){4, 0, 2}); /* unsorted */
    r = ok((inf){.fn = tc__infer_Unsqueeze, .opset = 13, .n_in = 2, .in = {&x, &ua.v}});
    SHAPE(r, K(1), K(1), K(1), K(6), K(1), K(1));
    /* Split: attribute at 11, input at 13, num_outputs at 18 (uneven last chunk). */
    tc__vinfo y = vi(TC_DTYPE_FLOAT32, 2, DIMS(K(2), K(8)));
    int64_t sizes[2] = {5, 3};
    tc__attr s11[2] = {a_int("axis", 1), a_ints("split", sizes, 2)};
    inf sp = {.fn = tc__infer_Split, .opset = 11, .attrs = s11, .n_attrs = 2, .n_in = 1, .in = {&y}, .n_out = 2};
    assert_int_equal(infer(&sp), TC_STATUS_OK);
    SHAPE(sp.out[0], K(2), K(5));
    SHAPE(sp.out[1], K(2), K(3));
    konst sz;
    mk_const(&sz, 1, 2, (int64_t[]){6, 2});
    inf sp13 = {
        .fn = tc__infer_Split, .opset = 13, .attrs = s11, .n_attrs = 1, .n_in = 2, .in = {&y, &sz.v}, .n_out = 2};
    assert_int_equal(infer(&sp13), TC_STATUS_OK);
    SHAPE(sp13.out[0], K(2), K(6));
    SHAPE(sp13.out[1], K(2), K(2));
    tc__attr s18[2] = {a_int("axis", 1), a_int("num_outputs", 3)};
    inf sp18 = {.fn = tc__infer_Split, .opset = 18, .attrs = s18, .n_attrs = 2, .n_in = 1, .in = {&y}, .n_out = 3};
    assert_int_equal(infer(&sp18), TC_STATUS_OK);
    SHAPE(sp18.out[0], K(2), K(3));
    SHAPE(sp18.out[1], K(2), K(3));
    SHAPE(sp18.out[2], K(2), K(2));
    /* Slice: attributes before opset 10. */
    int64_t st[1] = {1}, en[1] = {-1};
    tc__attr sl[2] = {a_ints("starts", st, 1), a_ints("ends", en, 1)};
    r = ok((inf){.fn = tc__infer_Slice, .opset = 9, .attrs = sl, .n_attrs = 2, .n_in = 1, .in = {&y}});
    SHAPE(r, K(0), K(8));
    /* Shape start/end exist from opset 15 only. */
    tc__attr s1[1] = {a_int("start", 1)};
    r = ok((inf){.fn = tc__infer_Shape, .opset = 13, .attrs = s1, .n_attrs = 1, .n_in = 1, .in = {&x}});
    SHAPE(r, K(3));
    r = ok((inf){.fn = tc__infer_Shape, .opset = 15, .attrs = s1, .n_attrs = 1, .n_in = 1, .in = {&x}});
    SHAPE(r, K(2));
    /* Dropout: mask output is bool; opset 11 takes no ratio input. */
    inf d = {.fn = tc__infer_Dropout, .opset = 13, .n_in = 1, .in = {&x}, .n_out = 2};
    assert_int_equal(infer(&d), TC_STATUS_OK);
    assert_int_equal(d.out[1].dtype, TC_DTYPE_BOOL);
    SHAPE(d.out[1], K(1), K(6), K(1));
    fails((inf){.fn = tc__infer_Dropout, .opset = 11, .n_in = 2, .in = {&x, &x}}, TC_STATUS_INVALID_GRAPH, "inputs");
    /* Constant variants. */
    float fl[3] = {1, 2, 3};
    tc__attr cf[1] = {{.name = "value_floats", .kind = TC__ATTR_FLOATS, .floats = fl, .n = 3}};
    r = ok((inf){.fn = tc__infer_Constant, .attrs = cf, .n_attrs = 1});
    assert_int_equal(r.dtype, TC_DTYPE_FLOAT32);
    SHAPE(r, K(3));
    tc__attr ci[1] = {a_int("value_int", 5)};
    r = ok((inf){.fn = tc__infer_Constant, .attrs = ci, .n_attrs = 1});
    assert_int_equal(r.dtype, TC_DTYPE_INT64);
    assert_int_equal(r.shape.rank, 0);
    /* ConstantOfShape takes its dtype from the value attribute. */
    int32_t one = 1;
    tc__tensor v = {.dtype = TC_DTYPE_INT32, .rank = 1, .dims = {1}, .data = &one, .nbytes = 4};
    tc__attr cv[1] = {{.name = "value", .kind = TC__ATTR_TENSOR, .t = &v}};
    konst cs;
    mk_const(&cs, 1, 2, (int64_t[]){2, 7});
    r = ok((inf){.fn = tc__infer_ConstantOfShape, .attrs = cv, .n_attrs = 1, .n_in = 1, .in = {&cs.v}});
    assert_int_equal(r.dtype, TC_DTYPE_INT32);
    SHAPE(r, K(2), K(7));
}

/* ---- invalid nodes ------------------------------------------------------------------ */

static void test_errors(void **state) {
    (void)state;
    tc__vinfo x = vi(TC_DTYPE_FLOAT32, 3, DIMS(K(2), K(3), K(5)));
    tc__vinfo xs = vi(TC_DTYPE_FLOAT32, 2, DIMS(SY(SYM_B), K(3)));
    konst two_m1, bad_neg, k45, k1;
    mk_const(&two_m1, 1, 2, (int64_t[]){-1, -1});
    mk_const(&bad_neg, 1, 2, (int64_t[]){-2, 15});
    mk_const(&k45, 1, 2, (int64_t[]){4, 5});
    mk_const(&k1, 1, 1, (int64_t[]){1});
    fails((inf){.fn = tc__infer_Reshape, .n_in = 2, .in = {&x, &two_m1.v}}, TC_STATUS_INVALID_ARGUMENT, "-1");
    fails((inf){.fn = tc__infer_Reshape, .n_in = 2, .in = {&x, &bad_neg.v}}, TC_STATUS_INVALID_ARGUMENT, "-2");
    fails((inf){.fn = tc__infer_Reshape, .n_in = 2, .in = {&x, &k45.v}}, TC_STATUS_INVALID_ARGUMENT, "30 elements");
    konst m1_7;
    mk_const(&m1_7, 1, 2, (int64_t[]){-1, 7});
    fails((inf){.fn = tc__infer_Reshape, .n_in = 2, .in = {&x, &m1_7.v}}, TC_STATUS_INVALID_ARGUMENT, "multiply to 7");
    tc__vinfo x0 = vi(TC_DTYPE_FLOAT32, 2, DIMS(K(0), K(3)));
    konst z_m1;
    mk_const(&z_m1, 1, 2, (int64_t[]){0, -1});
    fails((inf){.fn = tc__infer_Reshape, .n_in = 2, .in = {&x0, &z_m1.v}}, TC_STATUS_INVALID_ARGUMENT, "-1");
    tc__vinfo fshape = vi(TC_DTYPE_FLOAT32, 1, DIMS(K(2)));
    fails((inf){.fn = tc__infer_Reshape, .n_in = 2, .in = {&x, &fshape}}, TC_STATUS_INVALID_GRAPH, "int64");
    fails((inf){.fn = tc__infer_Reshape, .n_in = 1, .in = {&x}}, TC_STATUS_INVALID_GRAPH, "inputs");
    /* Squeeze of a dim that is not 1; Unsqueeze with repeated or out-of-range axes. */
    konst a0, dup, a9;
    mk_const(&a0, 1, 1, (int64_t[]){0});
    mk_const(&dup, 1, 2, (int64_t[]){1, -4});
    mk_const(&a9, 1, 1, (int64_t[]){9});
    fails((inf){.fn = tc__infer_Squeeze, .opset = 13, .n_in = 2, .in = {&x, &a0.v}}, TC_STATUS_INVALID_ARGUMENT,
          "size 2");
    fails((inf){.fn = tc__infer_Unsqueeze, .opset = 13, .n_in = 2, .in = {&x, &dup.v}}, TC_STATUS_INVALID_ARGUMENT,
          "repeated");
    fails((inf){.fn = tc__infer_Unsqueeze, .opset = 13, .n_in = 2, .in = {&x, &a9.v}}, TC_STATUS_INVALID_ARGUMENT,
          "axis 9");
    fails((inf){.fn = tc__infer_Unsqueeze, .opset = 11, .n_in = 1, .in = {&x}}, TC_STATUS_INVALID_GRAPH, "axes");
    /* Flatten axis out of [-r, r]. */
    tc__attr f4[1] = {a_int("axis", 4)};
    fails((inf){.fn = tc__infer_Flatten, .attrs = f4, .n_attrs = 1, .n_in = 1, .in = {&x}}, TC_STATUS_INVALID_ARGUMENT,
          "axis 4");
    /* Transpose with a perm that is not a permutation or has the wrong length. */
    int64_t p[3] = {0, 0, 1};
    tc__attr pa[1] = {a_ints("perm", p, 3)};
    fails((inf){.fn = tc__infer_Transpose, .attrs = pa, .n_attrs = 1, .n_in = 1, .in = {&x}},
          TC_STATUS_INVALID_ARGUMENT, "permutation");
    pa[0] = a_ints("perm", p, 2);
    fails((inf){.fn = tc__infer_Transpose, .attrs = pa, .n_attrs = 1, .n_in = 1, .in = {&x}},
          TC_STATUS_INVALID_ARGUMENT, "rank 3");
    /* Concat: ranks differ, sizes differ, axis missing or out of range, dtypes differ. */
    tc__attr ax0[1] = {a_int("axis", 0)};
    fails((inf){.fn = tc__infer_Concat, .attrs = ax0, .n_attrs = 1, .n_in = 2, .in = {&x, &xs}},
          TC_STATUS_INVALID_ARGUMENT, "rank");
    tc__vinfo y = vi(TC_DTYPE_FLOAT32, 3, DIMS(K(2), K(4), K(5)));
    fails((inf){.fn = tc__infer_Concat, .attrs = ax0, .n_attrs = 1, .n_in = 2, .in = {&x, &y}},
          TC_STATUS_INVALID_ARGUMENT, "dim 1");
    fails((inf){.fn = tc__infer_Concat, .n_in = 2, .in = {&x, &y}}, TC_STATUS_INVALID_GRAPH, "axis");
    tc__attr ax3[1] = {a_int("axis", -4)};
    fails((inf){.fn = tc__infer_Concat, .attrs = ax3, .n_attrs = 1, .n_in = 2, .in = {&x, &x}},
          TC_STATUS_INVALID_ARGUMENT, "axis -4");
    tc__vinfo xi = vi(TC_DTYPE_INT32, 3, DIMS(K(2), K(3), K(5)));
    fails((inf){.fn = tc__infer_Concat, .attrs = ax0, .n_attrs = 1, .n_in = 2, .in = {&x, &xi}},
          TC_STATUS_INVALID_GRAPH, "int32");
    /* Gather: a known index out of range names the index; float indices; scalar data. */
    konst i7;
    mk_const(&i7, 1, 2, (int64_t[]){0, -4});
    tc__attr g1[1] = {a_int("axis", 1)};
    fails((inf){.fn = tc__infer_Gather, .attrs = g1, .n_attrs = 1, .n_in = 2, .in = {&x, &i7.v}},
          TC_STATUS_INVALID_ARGUMENT, "index -4");
    fails((inf){.fn = tc__infer_Gather, .n_in = 2, .in = {&x, &x}}, TC_STATUS_INVALID_GRAPH, "indices");
    tc__vinfo sc = vi(TC_DTYPE_FLOAT32, 0, NULL);
    fails((inf){.fn = tc__infer_Gather, .n_in = 2, .in = {&sc, &a0.v}}, TC_STATUS_INVALID_ARGUMENT, "rank");
    fails((inf){.fn = tc__infer_GatherElements, .n_in = 2, .in = {&x, &a0.v}}, TC_STATUS_INVALID_ARGUMENT, "rank");
    /* Split: sizes that do not add up, wrong count, uneven equal split before opset 18. */
    konst s13;
    mk_const(&s13, 1, 2, (int64_t[]){1, 3});
    tc__attr sa1[1] = {a_int("axis", 1)};
    fails(
        (inf){
            .fn = tc__infer_Split, .opset = 13, .attrs = sa1, .n_attrs = 1, .n_in = 2, .in = {&x, &s13.v}, .n_out = 2},
        TC_STATUS_INVALID_ARGUMENT, "add up to 4");
    fails(
        (inf){
            .fn = tc__infer_Split, .opset = 13, .attrs = sa1, .n_attrs = 1, .n_in = 2, .in = {&x, &s13.v}, .n_out = 3},
        TC_STATUS_INVALID_ARGUMENT, "3 outputs");
    fails((inf){.fn = tc__infer_Split, .opset = 13, .attrs = sa1, .n_attrs = 1, .n_in = 1, .in = {&x}, .n_out = 2},
          TC_STATUS_INVALID_ARGUMENT, "equal");
    tc__attr n3[1] = {a_int("num_outputs", 3)};
    fails((inf){.fn = tc__infer_Split, .opset = 18, .attrs = n3, .n_attrs = 1, .n_in = 1, .in = {&x}, .n_out = 2},
          TC_STATUS_INVALID_GRAPH, "num_outputs");
    /* Slice: zero step, mismatched lengths, repeated axes. */
    konst z, se, sax;
    mk_const(&z, 1, 1, (int64_t[]){0});
    mk_const(&se, 1, 2, (int64_t[]){0, 1});
    mk_const(&sax, 1, 2, (int64_t[]){1, -2});
    fails((inf){.fn = tc__infer_Slice, .opset = 13, .n_in = 5, .in = {&x, &z.v, &k1.v, &z.v, &z.v}},
          TC_STATUS_INVALID_ARGUMENT, "step");
    fails((inf){.fn = tc__infer_Slice, .opset = 13, .n_in = 3, .in = {&x, &z.v, &se.v}}, TC_STATUS_INVALID_ARGUMENT,
          "length");
    fails((inf){.fn = tc__infer_Slice, .opset = 13, .n_in = 4, .in = {&x, &se.v, &se.v, &sax.v}},
          TC_STATUS_INVALID_ARGUMENT, "repeated");
    /* Expand that cannot broadcast, Tile with a wrong repeats length or negative repeats. */
    fails((inf){.fn = tc__infer_Expand, .n_in = 2, .in = {&x, &k45.v}}, TC_STATUS_INVALID_ARGUMENT, "broadcast");
    fails((inf){.fn = tc__infer_Tile, .n_in = 2, .in = {&x, &k45.v}}, TC_STATUS_INVALID_ARGUMENT, "rank 3");
    konst negrep;
    mk_const(&negrep, 1, 2, (int64_t[]){1, -1});
    fails((inf){.fn = tc__infer_Tile, .n_in = 2, .in = {&xs, &negrep.v}}, TC_STATUS_INVALID_ARGUMENT, "negative");
    /* Range: delta 0, mixed types; Constant: none, two, sparse, strings. */
    konst r0, r5;
    mk_const(&r0, 0, 1, (int64_t[]){0});
    mk_const(&r5, 0, 1, (int64_t[]){5});
    fails((inf){.fn = tc__infer_Range, .n_in = 3, .in = {&r0.v, &r5.v, &r0.v}}, TC_STATUS_INVALID_ARGUMENT, "delta");
    tc__vinfo fsc = vi(TC_DTYPE_FLOAT32, 0, NULL);
    fails((inf){.fn = tc__infer_Range, .n_in = 3, .in = {&r0.v, &fsc, &r0.v}}, TC_STATUS_INVALID_GRAPH, "one type");
    tc__vinfo hsc = vi(TC_DTYPE_FLOAT16, 0, NULL);
    fails((inf){.fn = tc__infer_Range, .n_in = 3, .in = {&hsc, &hsc, &hsc}}, TC_STATUS_UNSUPPORTED, "float16");
    fails((inf){.fn = tc__infer_Constant}, TC_STATUS_INVALID_GRAPH, "exactly one");
    tc__attr twoa[2] = {a_int("value_int", 1), {.name = "value_float", .kind = TC__ATTR_FLOAT, .f = 1}};
    fails((inf){.fn = tc__infer_Constant, .attrs = twoa, .n_attrs = 2}, TC_STATUS_INVALID_GRAPH, "got 2");
    tc__attr strs[1] = {{.name = "value_string", .kind = TC__ATTR_STRING, .s = "hi"}};
    fails((inf){.fn = tc__infer_Constant, .attrs = strs, .n_attrs = 1}, TC_STATUS_UNSUPPORTED, "value_string");
    tc__attr sparse[1] = {{.name = "sparse_value", .kind = TC__ATTR_TENSOR}};
    fails((inf){.fn = tc__infer_Constant, .attrs = sparse, .n_attrs = 1}, TC_STATUS_UNSUPPORTED, "sparse_value");
    /* ConstantOfShape with a negative dim or a multi-element value. */
    konst negs;
    mk_const(&negs, 1, 2, (int64_t[]){3, -2});
    fails((inf){.fn = tc__infer_ConstantOfShape, .n_in = 1, .in = {&negs.v}}, TC_STATUS_INVALID_ARGUMENT, "-2");
    int64_t vals[2] = {1, 2};
    tc__tensor v2 = {.dtype = TC_DTYPE_INT64, .rank = 1, .dims = {2}, .data = vals, .nbytes = 16};
    tc__attr cv[1] = {{.name = "value", .kind = TC__ATTR_TENSOR, .t = &v2}};
    fails((inf){.fn = tc__infer_ConstantOfShape, .attrs = cv, .n_attrs = 1, .n_in = 1, .in = {&k45.v}},
          TC_STATUS_INVALID_GRAPH, "1 element");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bert_chain),     cmocka_unit_test(test_static_values), cmocka_unit_test(test_unknowns),
        cmocka_unit_test(test_opset_variants), cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
