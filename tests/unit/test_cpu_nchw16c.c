/*
 * test_cpu_nchw16c.c - the AVX-512 tactics that read and write NCHW16c activations (the
 * *nchw16c* files of src/backends/cpu), and, compiled again by test_cpu_nchw8c.c with
 * TC_TEST_BLOCK 8, the AVX2 tactics on NCHW8c, against the reference kernels: every case draws random
 * NCHW data, computes the reference on it, converts the inputs to the blocked layout (tc__nchwc_offset)
 * and checks the tactic's output, converted the same way, without and with a 2-thread pool
 * (bit-identical), and each configuration a tactic offers (the depthwise row reuse) bit-identical to its
 * default. Reorder to NCHW, MaxPool / AveragePool (ResNet 3x3 s2 p1, 2x2 s2, ceil_mode,
 * count_include_pad, asymmetric and automatic padding, dilation, NaN inputs), GlobalAveragePool,
 * depthwise Conv (3x3/5x5/7x7, strides 1 and 2, every activation, residual, bias) and
 * Add / Sub / Mul / Div (same shape and per-channel broadcasts on either side), over C 16 to 144,
 * H and W 1 to 112 and batches 1 and 2 (NCHW8c: C 8, 24 and 40 too), and channel counts that are no
 * multiple of the block (1, 3, 12, 20, 24, 40: the last block padded with zero lanes, core/layout.h),
 * whose outputs are poisoned over all their bytes before each run and compared over all of them, so
 * that a kernel that leaves its padding lanes other than zero (an epilogue of 0, 0 / 0) fails; then
 * the steps supports() must reject (the other block's tc.layout_block, wrong forms) and run() refuses.
 * Skips when the CPU lacks the tactics' ISA (AVX-512; AVX2 for NCHW8c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "backends/cpu/tactics.h"
#include "dense_test_util.h"

#include "cpu_vec_test_util.h"

#include "core/layout.h"

/* The block under test: 16 (NCHW16c, the AVX-512 tactics) unless test_cpu_nchw8c.c set 8 (NCHW8c, AVX2). */
#ifndef TC_TEST_BLOCK
#define TC_TEST_BLOCK 16
#endif
#define BLK TC_TEST_BLOCK
#if BLK == 16
#define T_REORDER tc__tactic_reorder_nchw16c_to_nchw
#define T_MAXPOOL tc__tactic_maxpool_nchw16c_f32_avx512
#define T_AVGPOOL tc__tactic_avgpool_nchw16c_f32_avx512
#define T_GAVGPOOL tc__tactic_gavgpool_nchw16c_f32_avx512
#define T_DWCONV tc__tactic_dwconv_nchw16c_f32_avx512
#define T_ADD tc__tactic_add_nchw16c_f32_avx512
#define T_SUB tc__tactic_sub_nchw16c_f32_avx512
#define T_MUL tc__tactic_mul_nchw16c_f32_avx512
#define T_DIV tc__tactic_div_nchw16c_f32_avx512
#define T_FLAGS TC__TACTIC_BLOCKED
#define CBAD 24 /* a channel count the block does not divide (padded) */
#define OTHER_BLOCK 8
#else
#define T_REORDER tc__tactic_reorder_nchw8c_to_nchw
#define T_MAXPOOL tc__tactic_maxpool_nchw8c_f32_avx2
#define T_AVGPOOL tc__tactic_avgpool_nchw8c_f32_avx2
#define T_GAVGPOOL tc__tactic_gavgpool_nchw8c_f32_avx2
#define T_DWCONV tc__tactic_dwconv_nchw8c_f32_avx2
#define T_ADD tc__tactic_add_nchw8c_f32_avx2
#define T_SUB tc__tactic_sub_nchw8c_f32_avx2
#define T_MUL tc__tactic_mul_nchw8c_f32_avx2
#define T_DIV tc__tactic_div_nchw8c_f32_avx2
#define T_FLAGS (TC__TACTIC_BLOCKED | TC__TACTIC_BLOCK8)
#define CBAD 20
#define OTHER_BLOCK 16
#endif

#define POOL_TOL 2e-6
#define GAP_TOL 1e-6
#define DW_TOL 3e-5
#define EPI_TOL 2e-6

/* [N, C, H, W] of the shapes every operator is tested on: C 16-144, H and W 1-112, batch 1 and 2. */
static const int64_t kShapes[][4] = {
    {1, 16, 1, 1},    {2, 16, 2, 3},   {1, 32, 3, 2},    {2, 32, 5, 7},   {1, 48, 7, 5},    {2, 48, 13, 17},
    {1, 96, 17, 13},  {2, 96, 1, 17},  {1, 144, 7, 7},   {2, 144, 13, 3}, {1, 16, 112, 112}, {2, 32, 56, 56},
    {1, 144, 56, 56}, {1, 96, 3, 112}, {2, 16, 112, 2},  {1, 48, 56, 1},  {2, 144, 2, 5},   {1, 32, 17, 56},
#if BLK == 8
    {1, 8, 1, 1},     {2, 8, 5, 3},    {1, 24, 56, 56},  {2, 24, 7, 1},   {1, 40, 13, 11},  {1, 40, 1, 9},
#endif
    /* padded: C % BLK != 0 (for BLK 8 too but 24 and 40) */
    {1, 24, 7, 9},    {2, 40, 5, 3},   {1, 3, 13, 17},   {2, 1, 6, 5},    {1, 20, 9, 10},   {1, 12, 1, 1},
};
#define N_SHAPES ((int)(sizeof kShapes / sizeof kShapes[0]))

static bool have_avx512(void) { return vtu_isa_ok(&T_REORDER); }

/* ---- layout conversion and attributes -------------------------------------------------- */

/* The blocked copy of an NCHW float32 tensor [N, C, H, W] (C padded up to BLK: zero lanes). */
static tc__tensor to_blocked(const tc__tensor *x) {
    assert_int_equal(x->rank, 4);
    tc__tensor b = vtu_blocked_tensor(BLK, x->dims);
    const int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
    const float *s = x->data;
    float *d = b.data;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t w = 0; w < W; w++)
                    d[tc__nchwc_offset(BLK, (size_t)C, (size_t)H, (size_t)W, (size_t)n, (size_t)c, (size_t)h, (size_t)w)] =
                        s[((n * C + c) * H + h) * W + w];
    return b;
}

/* Attributes of a step: the op's own, then tc.layout_in / tc.layout_out (when not negative). */
typedef struct blk_attrs {
    tc__attr a[14];
    int n_op, n;
} blk_attrs;

/* Appends an op attribute (dropping the layout attributes; attrs_layout adds them again). */
static void attrs_add(blk_attrs *b, tc__attr a) {
    assert_true(b->n_op < 10);
    b->a[b->n_op++] = a;
    b->n = b->n_op;
}

/* Appends the layout attributes (a negative value leaves the attribute out), and tc.layout_block unless BLK is 16. */
static void attrs_layout(blk_attrs *b, int64_t in_mask, int64_t out) {
    b->n = b->n_op;
    if (in_mask >= 0) b->a[b->n++] = dtu_attr_int(TC__ATTR_LAYOUT_IN, in_mask);
    if (out >= 0) b->a[b->n++] = dtu_attr_int(TC__ATTR_LAYOUT_OUT, out);
    if (BLK != 16 && (in_mask >= 0 || out >= 0)) b->a[b->n++] = dtu_attr_int(TC__ATTR_LAYOUT_BLOCK, BLK);
}

/* Checks tactic t on step s (blocked inputs) against the NCHW reference ref (blocked first when out_blocked). */
static void blk_check(const tc__tactic *t, const vtu_step *s, const tc__tensor *ref, bool out_blocked, double tol,
                      const char *what) {
    if (!out_blocked) {
        vtu_check_against(t, s, ref, tol, what);
        return;
    }
    tc__tensor want = to_blocked(ref);
    vtu_check_against(t, s, &want, tol, what);
    tc__tensor_free(&want);
}

/* Sets every fraction-th element of x to NaN and as many to -inf (to exercise the max's NaN rules). */
static void sprinkle_nan(dtu_rng *r, tc__tensor *x, double rate) {
    float *p = x->data;
    for (int64_t i = 0; i < tc__tensor_numel(x); i++) {
        double u = dtu_uniform(r, 0.0, 1.0);
        if (u < rate) p[i] = NAN;
        else if (u < 1.2 * rate) p[i] = -INFINITY;
    }
}

/* ---- reorder ------------------------------------------------------------------------------ */

static void test_reorder(void **state) {
    (void)state;
    if (!have_avx512()) skip();
    for (int i = 0; i < N_SHAPES; i++) {
        dtu_rng r = {100 + (uint64_t)i};
        tc__tensor x = vtu_random(&r, 4, kShapes[i], -2.0, 2.0), xb = to_blocked(&x);
        blk_attrs at = {0};
        attrs_layout(&at, 1, -1);
        vtu_step s = vtu_step_of("Identity", 13);
        s.attrs = at.a;
        s.n_attrs = at.n;
        s.n_in = 1;
        s.in[0] = &xb;
        char msg[96];
        snprintf(msg, sizeof msg, "reorder %lldx%lldx%lldx%lld", (long long)x.dims[0], (long long)x.dims[1],
                 (long long)x.dims[2], (long long)x.dims[3]);
        blk_check(&T_REORDER, &s, &x, false, 0.0, msg);
        tc__tensor_free(&xb);
        tc__tensor_free(&x);
    }
}

/* ---- MaxPool / AveragePool ----------------------------------------------------------------- */

typedef struct pool_cfg {
    const char *name;
    int64_t kh, kw, sh, sw, dh, dw;
    int64_t pads[4]; /* top, left, bottom, right */
    bool ceil_mode;
    const char *auto_pad; /* NULL: explicit pads */
} pool_cfg;

static const pool_cfg kPools[] = {
    {"resnet 3x3 s2 p1", 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, false, NULL},
    {"2x2 s2", 2, 2, 2, 2, 1, 1, {0, 0, 0, 0}, false, NULL},
    {"3x3 s2 ceil", 3, 3, 2, 2, 1, 1, {0, 0, 0, 0}, true, NULL},
    {"2x2 s2 ceil p1", 2, 2, 2, 2, 1, 1, {1, 1, 1, 1}, true, NULL},
    {"3x3 s1 p1", 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false, NULL},
    {"asymmetric 3x2 s1,2", 3, 2, 1, 2, 1, 1, {0, 1, 2, 0}, false, NULL},
    {"5x5 s1 same_upper", 5, 5, 1, 1, 1, 1, {0, 0, 0, 0}, false, "SAME_UPPER"},
    {"3x3 s3 same_lower ceil", 3, 3, 3, 3, 1, 1, {0, 0, 0, 0}, true, "SAME_LOWER"},
};
#define N_POOLS ((int)(sizeof kPools / sizeof kPools[0]))

/* True when the window fits the padded input (the reference rejects it otherwise). */
static bool pool_fits(const pool_cfg *p, int64_t h, int64_t w, int64_t dh, int64_t dw) {
    if (p->auto_pad) return true;
    return h + p->pads[0] + p->pads[2] >= (p->kh - 1) * dh + 1 && w + p->pads[1] + p->pads[3] >= (p->kw - 1) * dw + 1;
}

/* One pooling case: MaxPool (max) or AveragePool with count_include_pad cip. */
static void check_pool(uint64_t seed, const int64_t *shape, const pool_cfg *p, bool max, bool cip, int64_t dil,
                       double nan_rate) {
    if (!pool_fits(p, shape[2], shape[3], dil, dil)) return;
    dtu_rng r = {seed};
    tc__tensor x = vtu_random(&r, 4, shape, -2.0, 2.0);
    if (nan_rate > 0) sprinkle_nan(&r, &x, nan_rate);
    tc__tensor xb = to_blocked(&x);
    int64_t ks[2] = {p->kh, p->kw}, strides[2] = {p->sh, p->sw}, dils[2] = {dil, dil};
    blk_attrs at = {0};
    attrs_add(&at, dtu_attr_ints("kernel_shape", ks, 2));
    attrs_add(&at, dtu_attr_ints("strides", strides, 2));
    if (p->auto_pad) attrs_add(&at, dtu_attr_string("auto_pad", p->auto_pad));
    else attrs_add(&at, dtu_attr_ints("pads", p->pads, 4));
    attrs_add(&at, dtu_attr_int("ceil_mode", p->ceil_mode));
    if (max && dil > 1) attrs_add(&at, dtu_attr_ints("dilations", dils, 2));
    if (!max) attrs_add(&at, dtu_attr_int("count_include_pad", cip));
    vtu_step s = vtu_step_of(max ? "MaxPool" : "AveragePool", 13);
    s.attrs = at.a;
    s.n_attrs = at.n_op;
    s.n_in = 1;
    s.in[0] = &x;
    tc__tensor ref;
    vtu_reference(max ? DTU_OP(MaxPool) : DTU_OP(AveragePool), &s, &ref);
    attrs_layout(&at, 1, 1);
    s.n_attrs = at.n;
    s.in[0] = &xb;
    char msg[160];
    snprintf(msg, sizeof msg, "%s %s%s dil %lld nan %g: %lldx%lldx%lldx%lld", s.op, p->name, cip ? " cip" : "",
             (long long)dil, nan_rate, (long long)shape[0], (long long)shape[1], (long long)shape[2],
             (long long)shape[3]);
    blk_check(max ? &T_MAXPOOL : &T_AVGPOOL, &s, &ref, true,
              POOL_TOL, msg);
    tc__tensor_free(&ref);
    tc__tensor_free(&xb);
    tc__tensor_free(&x);
}

static void test_pools(void **state) {
    (void)state;
    if (!have_avx512()) skip();
    uint64_t seed = 1000;
    for (int i = 0; i < N_SHAPES; i++)
        for (int k = 0; k < N_POOLS; k++) {
            check_pool(seed++, kShapes[i], &kPools[k], true, false, 1, 0.0);
            check_pool(seed++, kShapes[i], &kPools[k], false, false, 1, 0.0);
            check_pool(seed++, kShapes[i], &kPools[k], false, true, 1, 0.0);
        }
}

/* Dilated max windows, and NaN / -inf inputs (windows of only NaN give NaN, of only padding -inf). */
static void test_maxpool_dilation_nan(void **state) {
    (void)state;
    if (!have_avx512()) skip();
    uint64_t seed = 5000;
    for (int i = 0; i < N_SHAPES; i++) {
        check_pool(seed++, kShapes[i], &kPools[0], true, false, 2, 0.0);
        check_pool(seed++, kShapes[i], &kPools[5], true, false, 3, 0.0);
        check_pool(seed++, kShapes[i], &kPools[0], true, false, 1, 0.3);
        check_pool(seed++, kShapes[i], &kPools[1], true, false, 1, 0.6);
    }
    /* windows entirely in the padding */
    const pool_cfg pad_only = {"2x2 s1 p2", 2, 2, 1, 1, 1, 1, {2, 2, 2, 2}, false, NULL};
    const int64_t shape[4] = {1, 16, 3, 4};
    check_pool(seed++, shape, &pad_only, true, false, 1, 0.0);
    check_pool(seed++, shape, &pad_only, false, false, 1, 0.0);
    check_pool(seed++, shape, &pad_only, false, true, 1, 0.0);
}

/* ---- GlobalAveragePool --------------------------------------------------------------------- */

static void test_gavgpool(void **state) {
    (void)state;
    if (!have_avx512()) skip();
    for (int i = 0; i < N_SHAPES; i++) {
        dtu_rng r = {7000 + (uint64_t)i};
        tc__tensor x = vtu_random(&r, 4, kShapes[i], -2.0, 2.0), xb = to_blocked(&x);
        blk_attrs at = {0};
        vtu_step s = vtu_step_of("GlobalAveragePool", 13);
        s.n_in = 1;
        s.in[0] = &x;
        tc__tensor ref;
        vtu_reference(DTU_OP(GlobalAveragePool), &s, &ref);
        attrs_layout(&at, 1, 1);
        s.attrs = at.a;
        s.n_attrs = at.n;
        s.in[0] = &xb;
        char msg[96];
        snprintf(msg, sizeof msg, "gavgpool %lldx%lldx%lldx%lld", (long long)x.dims[0], (long long)x.dims[1],
                 (long long)x.dims[2], (long long)x.dims[3]);
        blk_check(&T_GAVGPOOL, &s, &ref, true, GAP_TOL, msg);
        tc__tensor_free(&ref);
        tc__tensor_free(&xb);
        tc__tensor_free(&x);
    }
}

/* ---- depthwise Conv ------------------------------------------------------------------------ */

typedef struct dw_case {
    int64_t k, s, dil;
    int64_t pads[4];      /* top, left, bottom, right */
    const char *auto_pad; /* NULL: explicit pads */
    bool bias, residual;
    tc__epilogue epi;
} dw_case;

/* Input `index` (W, or B when the channels are padded) packed by the tactic as the build does, with the bytes
 * packed_bytes() says; the source itself (a copy) when the tactic does not pack it. */
static tc__tensor dw_pack(const vtu_step *s, const tc__tensor *y, int index) {
    const tc__tensor *w = s->in[index];
    bool in_const[3] = {false, true, true};
    const tc__tensor *out[1] = {y};
    tc__attrs as = {s->n_attrs, s->attrs};
    tc__step_desc d = {s->op, s->opset, &as, s->n_in, s->in, in_const, 1, out, &s->epi, NULL, s->residual, NULL, 0};
    tc__err err = {0};
    const tc__tactic *t = &T_DWCONV;
    assert_false(t->packs_input(&d, 0));
    tc__tensor p = dtu_tensor(w->dtype, w->rank, w->dims);
    if (!t->packs_input(&d, index)) {
        assert_int_equal(index, 2);
        assert_true(s->in[1]->dims[0] % BLK == 0);
        memcpy(p.data, w->data, w->nbytes);
        return p;
    }
    const size_t bytes = t->packed_bytes(&d, index);
    assert_true(bytes >= w->nbytes);
    free(p.data);
    p.data = malloc(bytes);
    assert_non_null(p.data);
    memset(p.data, 0xff, bytes); /* pack() writes every byte, its zeros included */
    p.nbytes = bytes;
    if (t->pack(&d, index, w->data, p.data, &err) != TC_STATUS_OK) fail_msg("pack: %s", err.msg);
    return p;
}

static void check_dw(uint64_t seed, const int64_t *shape, const dw_case *c) {
    const int64_t ek = (c->k - 1) * c->dil + 1;
    if (!c->auto_pad && (shape[2] + c->pads[0] + c->pads[2] < ek || shape[3] + c->pads[1] + c->pads[3] < ek)) return;
    dtu_rng r = {seed};
    const int64_t C = shape[1], wd[4] = {C, 1, c->k, c->k}, bd[1] = {C};
    tc__tensor x = vtu_random(&r, 4, shape, -2.0, 2.0), w = vtu_random(&r, 4, wd, -1.0, 1.0);
    tc__tensor b = vtu_random(&r, 1, bd, -1.0, 1.0), xb = to_blocked(&x);
    int64_t strides[2] = {c->s, c->s}, dils[2] = {c->dil, c->dil};
    blk_attrs at = {0};
    attrs_add(&at, dtu_attr_int("group", C));
    attrs_add(&at, dtu_attr_ints("strides", strides, 2));
    attrs_add(&at, dtu_attr_ints("dilations", dils, 2));
    if (c->auto_pad) attrs_add(&at, dtu_attr_string("auto_pad", c->auto_pad));
    else attrs_add(&at, dtu_attr_ints("pads", c->pads, 4));
    vtu_step s = vtu_step_of("Conv", 13);
    s.attrs = at.a;
    s.n_attrs = at.n_op;
    s.n_in = c->bias ? 3 : 2;
    s.in[0] = &x;
    s.in[1] = &w;
    s.in[2] = c->bias ? &b : NULL;
    s.epi = c->epi;
    tc__tensor ref, res = {0}, resb = {0};
    dtu_run_ok(DTU_OP(Conv), 13, s.attrs, s.n_attrs, s.n_in, s.in, 1, &ref);
    int64_t mask = 1;
    if (c->residual) {
        res = vtu_random(&r, ref.rank, ref.dims, -2.0, 2.0);
        resb = to_blocked(&res);
        s.epi.residual_input = (int8_t)s.n_in;
        mask |= (int64_t)1 << s.n_in;
    }
    tc__err err = {0};
    if (tc__epilogue_apply(&s.epi, &ref, NULL, c->residual ? &res : NULL, &err) != TC_STATUS_OK)
        fail_msg("%s", err.msg);
    attrs_layout(&at, mask, 1);
    s.n_attrs = at.n;
    s.residual = c->residual ? &resb : NULL;
    tc__tensor wp = dw_pack(&s, &ref, 1), bp = c->bias ? dw_pack(&s, &ref, 2) : (tc__tensor){0};
    s.in[0] = &xb;
    s.in[1] = &wp;
    if (c->bias) s.in[2] = &bp;
    char msg[200];
    snprintf(msg, sizeof msg, "dwconv %lldx%lldx%lldx%lld k%lld s%lld d%lld pads %lld,%lld,%lld,%lld %s%s act %d%s",
             (long long)shape[0], (long long)C, (long long)shape[2], (long long)shape[3], (long long)c->k,
             (long long)c->s, (long long)c->dil, (long long)c->pads[0], (long long)c->pads[1], (long long)c->pads[2],
             (long long)c->pads[3], c->auto_pad ? c->auto_pad : "", c->bias ? " bias" : "", (int)c->epi.act,
             c->residual ? " +res" : "");
    blk_check(&T_DWCONV, &s, &ref, true, DW_TOL, msg);
    tc__tensor_free(&wp);
    tc__tensor_free(&bp);
    if (c->residual) {
        tc__tensor_free(&resb);
        tc__tensor_free(&res);
    }
    tc__tensor_free(&ref);
    tc__tensor_free(&xb);
    tc__tensor_free(&b);
    tc__tensor_free(&w);
    tc__tensor_free(&x);
}

static dw_case dw_plain(int64_t k, int64_t s) {
    dw_case d = {k, s, 1, {k / 2, k / 2, k / 2, k / 2}, NULL, true, false, tc__epilogue_none()};
    return d;
}

static void test_dwconv_shapes(void **state) {
    (void)state;
    if (!have_avx512()) skip();
    uint64_t seed = 9000;
    for (int i = 0; i < N_SHAPES; i++)
        for (int64_t k = 3; k <= 5; k += 2)
            for (int64_t s = 1; s <= 2; s++) {
                dw_case c = dw_plain(k, s);
                c.bias = seed % 2 == 0;
                check_dw(seed++, kShapes[i], &c);
            }
}

static void test_dwconv_epilogues(void **state) {
    (void)state;
    if (!have_avx512()) skip();
    /* whole blocks, then padded ones (an activation of 0 in the padding lanes must come out zero) */
    const int64_t shapes[4][4] = {{2, 32, 13, 17}, {1, 48, 28, 28}, {1, 20, 6, 7}, {1, 3, 9, 9}};
    uint64_t seed = 9500;
    for (int k = 0; k < 4; k += 2)
        for (int e = 0; e < VTU_N_EPILOGUES; e++)
            for (int res = 0; res < 2; res++) {
                dw_case c = dw_plain(3, 1);
                c.epi = vtu_epilogues[e];
                c.residual = res == 1;
                check_dw(seed++, shapes[k], &c);
                c = dw_plain(5, 2);
                c.epi = vtu_epilogues[e];
                c.residual = res == 1;
                c.bias = false;
                check_dw(seed++, shapes[k + 1], &c);
            }
}

/* 7x7, dilation, asymmetric and automatic padding, and MobileNetV2 / EfficientNet layers. */
static void test_dwconv_geometry(void **state) {
    (void)state;
    if (!have_avx512()) skip();
    const int64_t small[4] = {2, 16, 19, 23};
    uint64_t seed = 9800;
    dw_case c = dw_plain(7, 1);
    check_dw(seed++, small, &c);
    c = dw_plain(7, 2);
    check_dw(seed++, small, &c);
    c = dw_plain(3, 1);
    c.dil = 2;
    c.pads[0] = c.pads[1] = c.pads[2] = c.pads[3] = 2;
    check_dw(seed++, small, &c);
    c = dw_plain(3, 2);
    c.pads[0] = 0;
    c.pads[1] = 2;
    c.pads[2] = 1;
    c.pads[3] = 0;
    check_dw(seed++, small, &c);
    const char *modes[] = {"SAME_UPPER", "SAME_LOWER", "VALID"};
    for (int m = 0; m < 3; m++)
        for (int64_t s = 1; s <= 2; s++) {
            c = dw_plain(5, s);
            c.auto_pad = modes[m];
            check_dw(seed++, small, &c);
        }
    const tc__epilogue relu6 = {-1, -1, TC__ACT_CLIP, 0, 0.0f, 6.0f}, silu = {-1, -1, TC__ACT_SILU, 0, 0.0f, 0.0f};
    const int64_t mb1[4] = {1, 32, 112, 112}, mb2[4] = {1, 144, 56, 56}, ef[4] = {1, 240, 28, 28};
    c = dw_plain(3, 1);
    c.epi = relu6;
    check_dw(seed++, mb1, &c);
    c = dw_plain(3, 2);
    c.epi = relu6;
    check_dw(seed++, mb2, &c);
    c = dw_plain(5, 2);
    c.auto_pad = "SAME_UPPER";
    c.epi = silu;
    check_dw(seed++, ef, &c);
}

/* The context may list the residual as input 2 when the Conv has no bias: it must not be read as B. */
static void test_dwconv_residual_in_bias_slot(void **state) {
    (void)state;
    if (!have_avx512()) skip();
    dtu_rng r = {77};
    int64_t xd[4] = {1, 32, 10, 19}, wd[4] = {32, 1, 3, 3}, pads[4] = {1, 1, 1, 1};
    tc__tensor x = vtu_random(&r, 4, xd, -2.0, 2.0), w = vtu_random(&r, 4, wd, -1.0, 1.0), xb = to_blocked(&x);
    blk_attrs at = {0};
    attrs_add(&at, dtu_attr_int("group", 32));
    attrs_add(&at, dtu_attr_ints("pads", pads, 4));
    vtu_step s = vtu_step_of("Conv", 13);
    s.attrs = at.a;
    s.n_attrs = at.n_op;
    s.n_in = 2;
    s.in[0] = &x;
    s.in[1] = &w;
    tc__tensor ref;
    dtu_run_ok(DTU_OP(Conv), 13, s.attrs, s.n_attrs, 2, s.in, 1, &ref);
    tc__tensor res = vtu_random(&r, ref.rank, ref.dims, -2.0, 2.0), resb = to_blocked(&res);
    s.epi.residual_input = 2;
    s.epi.act = TC__ACT_RELU;
    tc__err err = {0};
    assert_int_equal(tc__epilogue_apply(&s.epi, &ref, NULL, &res, &err), TC_STATUS_OK);
    attrs_layout(&at, 5, 1);
    s.n_attrs = at.n;
    s.residual = &resb;
    tc__tensor wp = dw_pack(&s, &ref, 1), want = to_blocked(&ref);
    s.in[0] = &xb;
    s.in[1] = &wp;
    const tc__tensor *in3[3] = {&xb, &wp, &resb};
    tc__tensor y = vtu_run_tactic(&T_DWCONV, &s, &want, NULL, 3, in3);
    vtu_assert_close(&y, &want, DW_TOL, "residual as input 2");
    tc__tensor_free(&y);
    tc__tensor_free(&want);
    tc__tensor_free(&wp);
    tc__tensor_free(&resb);
    tc__tensor_free(&res);
    tc__tensor_free(&ref);
    tc__tensor_free(&xb);
    tc__tensor_free(&w);
    tc__tensor_free(&x);
}

/* ---- Add / Sub / Mul / Div ------------------------------------------------------------------ */

typedef struct bin_op {
    const char *name;
    dtu_op ref;
    const tc__tactic *t;
} bin_op;

static const bin_op kBinOps[] = {
    {"Add", DTU_OP(Add), &T_ADD},
    {"Sub", DTU_OP(Sub), &T_SUB},
    {"Mul", DTU_OP(Mul), &T_MUL},
    {"Div", DTU_OP(Div), &T_DIV},
};

/* Operand forms: the output's shape, [N, C, 1, 1], [1, C, 1, 1]. */
enum { FORM_FULL, FORM_PER_IMAGE, FORM_SHARED };

static void form_dims(int form, const int64_t *y, int64_t *d) {
    d[0] = form == FORM_SHARED ? 1 : y[0];
    d[1] = y[1];
    d[2] = form == FORM_FULL ? y[2] : 1;
    d[3] = form == FORM_FULL ? y[3] : 1;
}

static void check_bin(uint64_t seed, const bin_op *op, const int64_t *shape, int fa, int fb, const tc__epilogue *epi,
                      bool residual) {
    dtu_rng r = {seed};
    int64_t ad[4], bd[4];
    form_dims(fa, shape, ad);
    form_dims(fb, shape, bd);
    /* divisors away from zero, so that the quotients stay moderate */
    bool div = strcmp(op->name, "Div") == 0;
    tc__tensor a = vtu_random(&r, 4, ad, -2.0, 2.0), b = vtu_random(&r, 4, bd, div ? 0.5 : -2.0, 2.0);
    tc__tensor ab = to_blocked(&a), bb = to_blocked(&b);
    blk_attrs at = {0};
    vtu_step s = vtu_step_of(op->name, 14);
    s.n_in = 2;
    s.in[0] = &a;
    s.in[1] = &b;
    s.epi = *epi;
    tc__tensor ref, res = {0}, resb = {0};
    dtu_run_ok(op->ref, 14, NULL, 0, 2, s.in, 1, &ref);
    int64_t mask = 3;
    if (residual) {
        res = vtu_random(&r, ref.rank, ref.dims, -2.0, 2.0);
        resb = to_blocked(&res);
        s.epi.residual_input = 2;
        mask |= 4;
    }
    tc__err err = {0};
    if (tc__epilogue_apply(&s.epi, &ref, NULL, residual ? &res : NULL, &err) != TC_STATUS_OK)
        fail_msg("%s", err.msg);
    attrs_layout(&at, mask, 1);
    s.attrs = at.a;
    s.n_attrs = at.n;
    s.in[0] = &ab;
    s.in[1] = &bb;
    s.residual = residual ? &resb : NULL;
    char msg[160];
    snprintf(msg, sizeof msg, "%s forms %d,%d %lldx%lldx%lldx%lld act %d%s", op->name, fa, fb, (long long)shape[0],
             (long long)shape[1], (long long)shape[2], (long long)shape[3], (int)epi->act, residual ? " +res" : "");
    double tol = tc__epilogue_is_none(&s.epi) ? 0.0 : EPI_TOL;
    blk_check(op->t, &s, &ref, true, tol, msg);
    if (residual) {
        tc__tensor_free(&resb);
        tc__tensor_free(&res);
    }
    tc__tensor_free(&ref);
    tc__tensor_free(&bb);
    tc__tensor_free(&ab);
    tc__tensor_free(&b);
    tc__tensor_free(&a);
}

static void test_binary_forms(void **state) {
    (void)state;
    if (!have_avx512()) skip();
    const int pairs[5][2] = {{FORM_FULL, FORM_FULL},
                             {FORM_FULL, FORM_PER_IMAGE},
                             {FORM_FULL, FORM_SHARED},
                             {FORM_PER_IMAGE, FORM_FULL},
                             {FORM_SHARED, FORM_FULL}};
    const tc__epilogue none = tc__epilogue_none();
    uint64_t seed = 12000;
    for (int o = 0; o < 4; o++)
        for (int i = 0; i < N_SHAPES; i++)
            for (int p = 0; p < 5; p++)
                check_bin(seed++, &kBinOps[o], kShapes[i], pairs[p][0], pairs[p][1], &none, false);
}

static void test_binary_epilogues(void **state) {
    (void)state;
    if (!have_avx512()) skip();
    /* whole blocks, and padded ones (0 / 0 and sigmoid(0) in the padding lanes must come out zero) */
    const int64_t shapes[2][4] = {{2, 48, 13, 17}, {2, 20, 5, 7}};
    uint64_t seed = 14000;
    for (int k = 0; k < 2; k++)
        for (int o = 0; o < 4; o++)
            for (int e = 0; e < VTU_N_EPILOGUES; e++)
                for (int res = 0; res < 2; res++) {
                    int fb = (e + res) % 3; /* each broadcast form on the right */
                    check_bin(seed++, &kBinOps[o], shapes[k], FORM_FULL, fb, &vtu_epilogues[e], res == 1);
                    check_bin(seed++, &kBinOps[o], shapes[k], fb, FORM_FULL, &vtu_epilogues[e], res == 1);
                }
}

/* ---- what supports() rejects ---------------------------------------------------------------- */

/* supports() of t on a step with these inputs and output (shapes only), attributes and epilogue. */
static bool supports(const tc__tactic *t, const char *op, const tc__attr *attrs, int n_attrs, int n_in,
                     const tc__tensor *const *in, const bool *in_const, int n_out, const tc__tensor *const *out,
                     const tc__epilogue *epi, const tc__tensor *residual) {
    tc__attrs as = {n_attrs, attrs};
    tc__epilogue none = tc__epilogue_none();
    tc__step_desc d = {op, 13, &as, n_in, in, in_const, n_out, out, epi ? epi : &none, NULL, residual, NULL, 0};
    return t->supports(&d);
}

static tc__tensor shape_of(tc_dtype dt, int32_t rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
    tc__tensor t = {dt, rank, {d0, d1, d2, d3}, NULL, 0};
    return t;
}

static void test_rejects_reorder_pool(void **state) {
    (void)state;
    const bool cst[3] = {false, true, true};
    tc__tensor x = shape_of(TC_DTYPE_FLOAT32, 4, 1, 32, 8, 8), x24 = shape_of(TC_DTYPE_FLOAT32, 4, 1, CBAD, 8, 8);
    tc__tensor x64 = shape_of(TC_DTYPE_FLOAT64, 4, 1, 32, 8, 8), y = shape_of(TC_DTYPE_FLOAT32, 4, 1, 32, 4, 4);
    tc__tensor y24 = shape_of(TC_DTYPE_FLOAT32, 4, 1, CBAD, 4, 4), y64 = shape_of(TC_DTYPE_FLOAT64, 4, 1, 32, 4, 4);
    tc__tensor ind = shape_of(TC_DTYPE_INT64, 4, 1, 32, 4, 4), g = shape_of(TC_DTYPE_FLOAT32, 4, 1, 32, 1, 1);
    const tc__tensor *in[1] = {&x}, *in24[1] = {&x24}, *in64[1] = {&x64};
    const tc__tensor *out_x[1] = {&x}, *out_x24[1] = {&x24}, *out_x64[1] = {&x64};
    /* reorder: exactly tc.layout_in = 1 and no tc.layout_out */
    const tc__tactic *ro = &T_REORDER;
    blk_attrs at = {0};
    attrs_layout(&at, 1, -1);
    assert_true(supports(ro, "Identity", at.a, at.n, 1, in, cst, 1, out_x, NULL, NULL));
    assert_true(supports(ro, "Identity", at.a, at.n, 1, in24, cst, 1, out_x24, NULL, NULL)); /* padded */
    assert_false(supports(ro, "Identity", at.a, at.n, 1, in64, cst, 1, out_x64, NULL, NULL));
    attrs_layout(&at, -1, -1);
    assert_false(supports(ro, "Identity", at.a, at.n, 1, in, cst, 1, out_x, NULL, NULL));
    attrs_layout(&at, 1, 1);
    assert_false(supports(ro, "Identity", at.a, at.n, 1, in, cst, 1, out_x, NULL, NULL));
    attrs_layout(&at, 0, -1);
    assert_false(supports(ro, "Identity", at.a, at.n, 1, in, cst, 1, out_x, NULL, NULL));
    /* pools: 2x2 s2 from 8x8 to 4x4 */
    int64_t ks[2] = {2, 2}, st[2] = {2, 2};
    blk_attrs pa = {0};
    attrs_add(&pa, dtu_attr_ints("kernel_shape", ks, 2));
    attrs_add(&pa, dtu_attr_ints("strides", st, 2));
    const tc__tactic *mp = &T_MAXPOOL, *ap = &T_AVGPOOL;
    const tc__tensor *out_y[2] = {&y, NULL}, *out_yi[2] = {&y, &ind}, *out_y24[1] = {&y24}, *out_y64[1] = {&y64};
    attrs_layout(&pa, 1, 1);
    assert_true(supports(mp, "MaxPool", pa.a, pa.n, 1, in, cst, 1, out_y, NULL, NULL));
    assert_true(supports(mp, "MaxPool", pa.a, pa.n, 1, in, cst, 2, out_y, NULL, NULL)); /* Indices not requested */
    assert_false(supports(mp, "MaxPool", pa.a, pa.n, 1, in, cst, 2, out_yi, NULL, NULL));
    assert_true(supports(ap, "AveragePool", pa.a, pa.n, 1, in, cst, 1, out_y, NULL, NULL));
    assert_true(supports(mp, "MaxPool", pa.a, pa.n, 1, in24, cst, 1, out_y24, NULL, NULL)); /* padded */
    assert_false(supports(ap, "AveragePool", pa.a, pa.n, 1, in64, cst, 1, out_y64, NULL, NULL));
    assert_false(supports(mp, "AveragePool", pa.a, pa.n, 1, in, cst, 1, out_y, NULL, NULL)); /* another op */
    const int64_t masks[][2] = {{-1, -1}, {1, -1}, {-1, 1}, {0, 1}, {3, 1}, {1, 0}};
    for (size_t i = 0; i < sizeof masks / sizeof masks[0]; i++) {
        attrs_layout(&pa, masks[i][0], masks[i][1]);
        assert_false(supports(mp, "MaxPool", pa.a, pa.n, 1, in, cst, 1, out_y, NULL, NULL));
        assert_false(supports(ap, "AveragePool", pa.a, pa.n, 1, in, cst, 1, out_y, NULL, NULL));
    }
    /* count_include_pad 2 */
    attrs_add(&pa, dtu_attr_int("count_include_pad", 2));
    attrs_layout(&pa, 1, 1);
    assert_false(supports(ap, "AveragePool", pa.a, pa.n, 1, in, cst, 1, out_y, NULL, NULL));
    /* GlobalAveragePool */
    const tc__tactic *gp = &T_GAVGPOOL;
    tc__tensor g24 = shape_of(TC_DTYPE_FLOAT32, 4, 1, CBAD, 1, 1), g64 = shape_of(TC_DTYPE_FLOAT64, 4, 1, 32, 1, 1);
    const tc__tensor *out_g[1] = {&g}, *out_g24[1] = {&g24}, *out_g64[1] = {&g64};
    attrs_layout(&at, 1, 1);
    assert_true(supports(gp, "GlobalAveragePool", at.a, at.n, 1, in, cst, 1, out_g, NULL, NULL));
    assert_true(supports(gp, "GlobalAveragePool", at.a, at.n, 1, in24, cst, 1, out_g24, NULL, NULL)); /* padded */
    assert_false(supports(gp, "GlobalAveragePool", at.a, at.n, 1, in64, cst, 1, out_g64, NULL, NULL));
    assert_false(supports(gp, "GlobalAveragePool", at.a, at.n, 1, in, cst, 1, out_y, NULL, NULL));
    attrs_layout(&at, 1, -1);
    assert_false(supports(gp, "GlobalAveragePool", at.a, at.n, 1, in, cst, 1, out_g, NULL, NULL));
}

static void test_rejects_dwconv(void **state) {
    (void)state;
    const tc__tactic *dw = &T_DWCONV;
    tc__tensor x = shape_of(TC_DTYPE_FLOAT32, 4, 1, 32, 8, 8), w = shape_of(TC_DTYPE_FLOAT32, 4, 32, 1, 3, 3);
    tc__tensor b = shape_of(TC_DTYPE_FLOAT32, 1, 32, 0, 0, 0), y = x;
    tc__tensor x24 = shape_of(TC_DTYPE_FLOAT32, 4, 1, CBAD, 8, 8), w24 = shape_of(TC_DTYPE_FLOAT32, 4, CBAD, 1, 3, 3);
    tc__tensor x64 = shape_of(TC_DTYPE_FLOAT64, 4, 1, 32, 8, 8), w64 = shape_of(TC_DTYPE_FLOAT64, 4, 32, 1, 3, 3);
    tc__tensor wfull = shape_of(TC_DTYPE_FLOAT32, 4, 32, 32, 3, 3);
    int64_t pads[4] = {1, 1, 1, 1};
    blk_attrs at = {0}, a24 = {0}, a1 = {0};
    attrs_add(&at, dtu_attr_int("group", 32));
    attrs_add(&at, dtu_attr_ints("pads", pads, 4));
    attrs_add(&a24, dtu_attr_int("group", CBAD));
    attrs_add(&a24, dtu_attr_ints("pads", pads, 4));
    attrs_add(&a1, dtu_attr_ints("pads", pads, 4));
    const bool cst[3] = {false, true, true}, var[3] = {false, false, true};
    const tc__tensor *in[3] = {&x, &w, &b}, *in24[2] = {&x24, &w24}, *in64[2] = {&x64, &w64};
    const tc__tensor *infull[2] = {&x, &wfull};
    const tc__tensor *out[1] = {&y}, *out24[1] = {&x24}, *out64[1] = {&x64};
    attrs_layout(&at, 1, 1);
    assert_true(supports(dw, "Conv", at.a, at.n, 2, in, cst, 1, out, NULL, NULL));
    assert_true(supports(dw, "Conv", at.a, at.n, 3, in, cst, 1, out, NULL, NULL));
    assert_false(supports(dw, "Conv", at.a, at.n, 2, in, var, 1, out, NULL, NULL)); /* W not constant */
    attrs_layout(&a24, 1, 1);
    assert_true(supports(dw, "Conv", a24.a, a24.n, 2, in24, cst, 1, out24, NULL, NULL)); /* padded */
    /* padded with a bias: only a constant one (packed with zeros) */
    tc__tensor b24 = shape_of(TC_DTYPE_FLOAT32, 1, CBAD, 0, 0, 0);
    const tc__tensor *in24b[3] = {&x24, &w24, &b24};
    assert_true(supports(dw, "Conv", a24.a, a24.n, 3, in24b, cst, 1, out24, NULL, NULL));
    const bool var_b[3] = {false, true, false};
    assert_false(supports(dw, "Conv", a24.a, a24.n, 3, in24b, var_b, 1, out24, NULL, NULL));
    assert_false(supports(dw, "Conv", at.a, at.n, 2, in64, cst, 1, out64, NULL, NULL));
    attrs_layout(&a1, 1, 1);
    assert_false(supports(dw, "Conv", a1.a, a1.n, 2, infull, cst, 1, out, NULL, NULL)); /* not depthwise */
    const int64_t masks[][2] = {{-1, -1}, {1, -1}, {-1, 1}, {1, 0}, {3, 1}, {5, 1}};
    for (size_t i = 0; i < sizeof masks / sizeof masks[0]; i++) {
        attrs_layout(&at, masks[i][0], masks[i][1]);
        assert_false(supports(dw, "Conv", at.a, at.n, 2, in, cst, 1, out, NULL, NULL));
    }
    /* a residual needs its bit; an epilogue bias is not fused */
    tc__epilogue with_res = {-1, 2, TC__ACT_RELU, 0, 0.0f, 0.0f}, with_bias = {2, -1, TC__ACT_NONE, 0, 0.0f, 0.0f};
    attrs_layout(&at, 5, 1);
    assert_true(supports(dw, "Conv", at.a, at.n, 2, in, cst, 1, out, &with_res, &y));
    attrs_layout(&at, 1, 1);
    assert_false(supports(dw, "Conv", at.a, at.n, 2, in, cst, 1, out, &with_res, &y));
    tc__attrs as = {at.n, at.a};
    tc__step_desc d = {"Conv", 13, &as, 2, in, cst, 1, out, &with_bias, &b, NULL, NULL, 0};
    assert_false(dw->supports(&d));
}

static void test_rejects_binary(void **state) {
    (void)state;
    const tc__tactic *mul = &T_MUL;
    const bool cst[2] = {false, false};
    tc__tensor a = shape_of(TC_DTYPE_FLOAT32, 4, 2, 32, 7, 7), y = a;
    tc__tensor se = shape_of(TC_DTYPE_FLOAT32, 4, 2, 32, 1, 1), se1 = shape_of(TC_DTYPE_FLOAT32, 4, 1, 32, 1, 1);
    tc__tensor row = shape_of(TC_DTYPE_FLOAT32, 4, 1, 1, 7, 7), col = shape_of(TC_DTYPE_FLOAT32, 4, 2, 32, 7, 1);
    tc__tensor se3 = shape_of(TC_DTYPE_FLOAT32, 3, 32, 1, 1, 0), sc = shape_of(TC_DTYPE_FLOAT32, 4, 1, 1, 1, 1);
    tc__tensor img1 = shape_of(TC_DTYPE_FLOAT32, 4, 1, 32, 7, 7);
    tc__tensor a24 = shape_of(TC_DTYPE_FLOAT32, 4, 2, CBAD, 7, 7), a64 = shape_of(TC_DTYPE_FLOAT64, 4, 2, 32, 7, 7);
    tc__tensor ai = shape_of(TC_DTYPE_INT32, 4, 2, 32, 7, 7);
    blk_attrs at = {0};
    attrs_layout(&at, 3, 1);
    const tc__tensor *out[1] = {&y}, *out24[1] = {&a24}, *out64[1] = {&a64}, *outi[1] = {&ai};
    const tc__tensor *ok[][2] = {{&a, &a}, {&a, &se}, {&a, &se1}, {&se, &a}, {&se1, &a}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        assert_true(supports(mul, "Mul", at.a, at.n, 2, ok[i], cst, 1, out, NULL, NULL));
    const tc__tensor *bad[][2] = {{&a, &row}, {&a, &col}, {&a, &se3}, {&sc, &a}, {&img1, &a}, {&se, &se1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_false(supports(mul, "Mul", at.a, at.n, 2, bad[i], cst, 1, out, NULL, NULL));
    const tc__tensor *in24[2] = {&a24, &a24}, *in64[2] = {&a64, &a64}, *ini[2] = {&ai, &ai};
    assert_true(supports(mul, "Mul", at.a, at.n, 2, in24, cst, 1, out24, NULL, NULL)); /* padded */
    assert_false(supports(mul, "Mul", at.a, at.n, 2, in64, cst, 1, out64, NULL, NULL));
    assert_false(supports(mul, "Mul", at.a, at.n, 2, ini, cst, 1, outi, NULL, NULL));
    const int64_t masks[][2] = {{-1, -1}, {1, 1}, {2, 1}, {3, -1}, {3, 0}, {7, 1}};
    for (size_t i = 0; i < sizeof masks / sizeof masks[0]; i++) {
        attrs_layout(&at, masks[i][0], masks[i][1]);
        assert_false(supports(mul, "Mul", at.a, at.n, 2, ok[1], cst, 1, out, NULL, NULL));
    }
    /* the residual's bit, a residual of another shape, an epilogue bias */
    tc__epilogue with_res = {-1, 2, TC__ACT_SILU, 0, 0.0f, 0.0f}, with_bias = {2, -1, TC__ACT_NONE, 0, 0.0f, 0.0f};
    attrs_layout(&at, 7, 1);
    assert_true(supports(mul, "Mul", at.a, at.n, 2, ok[1], cst, 1, out, &with_res, &y));
    assert_false(supports(mul, "Mul", at.a, at.n, 2, ok[1], cst, 1, out, &with_res, &se));
    attrs_layout(&at, 3, 1);
    assert_false(supports(mul, "Mul", at.a, at.n, 2, ok[1], cst, 1, out, &with_res, &y));
    tc__tensor bias = shape_of(TC_DTYPE_FLOAT32, 1, 7, 0, 0, 0);
    tc__attrs as = {at.n, at.a};
    tc__step_desc d = {"Mul", 13, &as, 2, ok[0], cst, 1, out, &with_bias, &bias, NULL, NULL, 0};
    assert_false(mul->supports(&d));
}

/* Every tactic refuses a step whose tc.layout_block names the other block (or, for NCHW8c, none). */
static void test_rejects_other_block(void **state) {
    (void)state;
    const bool cst[3] = {false, true, true};
    tc__tensor x = shape_of(TC_DTYPE_FLOAT32, 4, 1, 32, 8, 8), w = shape_of(TC_DTYPE_FLOAT32, 4, 32, 1, 3, 3);
    tc__tensor g = shape_of(TC_DTYPE_FLOAT32, 4, 1, 32, 1, 1);
    const tc__tensor *in[1] = {&x}, *in2[2] = {&x, &x}, *dwin[2] = {&x, &w}, *out[1] = {&x}, *out_g[1] = {&g};
    int64_t pads[4] = {1, 1, 1, 1}, ks[2] = {1, 1};
    for (int other = 0; other < 2; other++) {
        blk_attrs at = {0}, dw = {0}, pa = {0};
        attrs_add(&dw, dtu_attr_int("group", 32));
        attrs_add(&dw, dtu_attr_ints("pads", pads, 4));
        attrs_add(&pa, dtu_attr_ints("kernel_shape", ks, 2));
        attrs_layout(&at, 1, -1);
        attrs_layout(&dw, 1, 1);
        attrs_layout(&pa, 1, 1);
        /* the right block is taken */
        const bool want = other == 0;
        if (other) { /* replace (or, for 16, add) tc.layout_block with the other block */
            blk_attrs *all[3] = {&at, &dw, &pa};
            for (int k = 0; k < 3; k++) {
                if (BLK != 16) all[k]->n--;
                all[k]->a[all[k]->n++] = dtu_attr_int(TC__ATTR_LAYOUT_BLOCK, OTHER_BLOCK);
            }
        }
        assert_int_equal(supports(&T_REORDER, "Identity", at.a, at.n, 1, in, cst, 1, out, NULL, NULL), want);
        assert_int_equal(supports(&T_DWCONV, "Conv", dw.a, dw.n, 2, dwin, cst, 1, out, NULL, NULL), want);
        assert_int_equal(supports(&T_MAXPOOL, "MaxPool", pa.a, pa.n, 1, in, cst, 1, out, NULL, NULL), want);
        assert_int_equal(supports(&T_AVGPOOL, "AveragePool", pa.a, pa.n, 1, in, cst, 1, out, NULL, NULL), want);
        blk_attrs ga = {0};
        attrs_layout(&ga, 1, 1);
        if (other) {
            if (BLK != 16) ga.n--;
            ga.a[ga.n++] = dtu_attr_int(TC__ATTR_LAYOUT_BLOCK, OTHER_BLOCK);
        }
        assert_int_equal(supports(&T_GAVGPOOL, "GlobalAveragePool", ga.a, ga.n, 1, in, cst, 1, out_g, NULL, NULL), want);
        blk_attrs ba = {0};
        attrs_layout(&ba, 3, 1);
        if (other) {
            if (BLK != 16) ba.n--;
            ba.a[ba.n++] = dtu_attr_int(TC__ATTR_LAYOUT_BLOCK, OTHER_BLOCK);
        }
        assert_int_equal(supports(&T_ADD, "Add", ba.a, ba.n, 2, in2, cst, 1, out, NULL, NULL), want);
    }
#if BLK == 8
    /* no tc.layout_block: NCHW16c, not this block */
    blk_attrs plain = {0};
    attrs_layout(&plain, 1, -1);
    plain.n--;
    assert_false(supports(&T_REORDER, "Identity", plain.a, plain.n, 1, in, cst, 1, out, NULL, NULL));
#endif
}

/* run() checks the shapes and layouts again and fails (without writing) on a step it does not compute. */
static tc_status run_status(const tc__tactic *t, const char *op, const blk_attrs *at, int n_in,
                            const tc__tensor *const *in, int n_out, tc__tensor *const *out) {
    tc__attrs as = {at->n, at->a};
    tc__err err = {0};
    tc__kernel_ctx kc = {"test", op, 13, &as, n_in, in, n_out, out, &err, NULL, NULL, NULL, NULL, vtu_pool, NULL, NULL, NULL};
    return t->run(&kc);
}

static void test_run_rejects(void **state) {
    (void)state;
    if (!have_avx512()) skip();
    const int64_t xd[4] = {1, 32, 8, 8}, x24d[4] = {1, CBAD, 8, 8}, yd[4] = {1, 32, 4, 4}, sed[4] = {1, 32, 1, 8};
    tc__tensor x = dtu_tensor(TC_DTYPE_FLOAT32, 4, xd), x24 = dtu_tensor(TC_DTYPE_FLOAT32, 4, x24d);
    tc__tensor y = dtu_tensor(TC_DTYPE_FLOAT32, 4, yd), ind = dtu_tensor(TC_DTYPE_INT64, 4, yd);
    tc__tensor se = dtu_tensor(TC_DTYPE_FLOAT32, 4, sed), y8 = dtu_tensor(TC_DTYPE_FLOAT32, 4, xd);
    blk_attrs at = {0};
    const tc__tensor *in[2] = {&x, &x}, *in24[1] = {&x24}, *inse[2] = {&x, &se};
    tc__tensor *out[2] = {&y, &ind}, *out8[1] = {&y8};
    /* reorder: shapes that differ; a padded input whose buffer lacks the padding lanes; output blocked */
    attrs_layout(&at, 1, -1);
    assert_int_not_equal(run_status(&T_REORDER, "Identity", &at, 1, in24, 1, out8), 0);
    tc__tensor y24 = dtu_tensor(TC_DTYPE_FLOAT32, 4, x24d);
    tc__tensor *out24[1] = {&y24};
    assert_int_not_equal(run_status(&T_REORDER, "Identity", &at, 1, in24, 1, out24), 0);
    tc__tensor x24p = vtu_blocked_tensor(BLK, x24d);
    const tc__tensor *in24p[1] = {&x24p};
    assert_int_equal(run_status(&T_REORDER, "Identity", &at, 1, in24p, 1, out24), 0);
    tc__tensor_free(&x24p);
    tc__tensor_free(&y24);
    attrs_layout(&at, 1, 1);
    assert_int_not_equal(run_status(&T_REORDER, "Identity", &at, 1, in, 1, out8), 0);
    /* MaxPool with Indices, and without its layout attributes */
    int64_t ks[2] = {2, 2}, st[2] = {2, 2};
    blk_attrs pa = {0};
    attrs_add(&pa, dtu_attr_ints("kernel_shape", ks, 2));
    attrs_add(&pa, dtu_attr_ints("strides", st, 2));
    attrs_layout(&pa, 1, 1);
    assert_int_equal(run_status(&T_MAXPOOL, "MaxPool", &pa, 1, in, 1, out), 0);
    assert_int_not_equal(run_status(&T_MAXPOOL, "MaxPool", &pa, 1, in, 2, out), 0);
    attrs_layout(&pa, -1, -1);
    assert_int_not_equal(run_status(&T_AVGPOOL, "AveragePool", &pa, 1, in, 1, out), 0);
    /* GlobalAveragePool into a 4x4 output */
    attrs_layout(&at, 1, 1);
    assert_int_not_equal(run_status(&T_GAVGPOOL, "GlobalAveragePool", &at, 1, in, 1, out),
                         0);
    /* Mul with a [1, C, 1, W] operand */
    attrs_layout(&at, 3, 1);
    assert_int_equal(run_status(&T_MUL, "Mul", &at, 2, in, 1, out8), 0);
    assert_int_not_equal(run_status(&T_MUL, "Mul", &at, 2, inse, 1, out8), 0);
    attrs_layout(&at, 1, 1);
    assert_int_not_equal(run_status(&T_MUL, "Mul", &at, 2, in, 1, out8), 0);
    tc__tensor_free(&y8);
    tc__tensor_free(&se);
    tc__tensor_free(&ind);
    tc__tensor_free(&y);
    tc__tensor_free(&x24);
    tc__tensor_free(&x);
}

/* The tactics' declared flags: all blocked; the epilogue fused where the NCHW tactics fuse it. */
static void test_flags(void **state) {
    (void)state;
    const tc__tactic *plain[] = {&T_REORDER, &T_MAXPOOL,
                                 &T_AVGPOOL, &T_GAVGPOOL};
    const tc__tactic *fused[] = {&T_DWCONV, &T_ADD,
                                 &T_SUB, &T_MUL,
                                 &T_DIV};
    for (int i = 0; i < 4; i++) assert_int_equal(plain[i]->flags, T_FLAGS);
    for (int i = 0; i < 5; i++) assert_int_equal(fused[i]->flags, T_FLAGS | TC__TACTIC_FUSES_EPILOGUE);
    for (int i = 0; i < 4; i++) assert_ptr_equal(tc__tactic_find(&tc__backend_cpu, plain[i]->name, plain[i]->op_type), plain[i]);
    for (int i = 0; i < 5; i++) assert_ptr_equal(tc__tactic_find(&tc__backend_cpu, fused[i]->name, fused[i]->op_type), fused[i]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reorder),
        cmocka_unit_test(test_pools),
        cmocka_unit_test(test_maxpool_dilation_nan),
        cmocka_unit_test(test_gavgpool),
        cmocka_unit_test(test_dwconv_shapes),
        cmocka_unit_test(test_dwconv_epilogues),
        cmocka_unit_test(test_dwconv_geometry),
        cmocka_unit_test(test_dwconv_residual_in_bias_slot),
        cmocka_unit_test(test_binary_forms),
        cmocka_unit_test(test_binary_epilogues),
        cmocka_unit_test(test_rejects_reorder_pool),
        cmocka_unit_test(test_rejects_dwconv),
        cmocka_unit_test(test_rejects_binary),
        cmocka_unit_test(test_rejects_other_block),
        cmocka_unit_test(test_run_rejects),
        cmocka_unit_test(test_flags),
    };
    return cmocka_run_group_tests(tests, vtu_setup, vtu_teardown);
}
