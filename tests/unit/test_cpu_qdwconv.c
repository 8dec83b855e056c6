/*
 * test_cpu_qdwconv.c - the depthwise INT8 Conv tactics for AVX2 (qdwconv_avx2.c: 16-bit codes, the u7 variant for a
 * non-negative input, the u8 variant's bytes of codes with a zero point for any other) and AVX512-VNNI
 * (qdwconv_avx512vnni.c: NCHW, and NCHW16c out with X in either layout) against the reference Conv (group = C) run on
 * the dequantized operands: X per tensor with the node's tc.int8_scale (tails saturate), W per channel. The integer
 * sums are exact, so only float rounding differs. Cases: channel counts that are not multiples of 16 (and groups of 1
 * to 4 blocks for VNNI), planes of 1 to 13 pixels, kernels 1/3/5 (odd tap counts, a last quad of 1 tap), strides,
 * dilation, padding, every fused activation with and without bias and residual, a batch; 1 and 2 threads give the
 * same bits, and so do the AVX2 variants on the same input (VNNI: the same up to the activations' last bits).
 * supports() rejects what the kernels cannot run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "backends/cpu/tactics.h"
#include "dense_test_util.h"

#include "backends/cpu/qconv_u8s8.h"
#include "cpu_vec_test_util.h"

#define DW_TOL 2e-5

typedef struct dw_case {
    int64_t n, c, h, w, k, s, d, pad;
    bool bias, residual, nonneg;
    tc__act act;
    int zp; /* tc.int8_zero_point (a QDQ model's), or -1: symmetric */
} dw_case;

/* X dequantized as the kernels see it (zero point zp, or symmetric codes when zp < 0). */
static tc__tensor dw_dequant_x(const tc__tensor *x, float sx, int zp) {
    tc__tensor d = dtu_tensor(x->dtype, x->rank, x->dims);
    const uint8_t z = zp < 0 ? 128 : (uint8_t)zp, lo = zp < 0 ? 1 : 0;
    for (int64_t i = 0; i < tc__tensor_numel(x); i++)
        ((float *)d.data)[i] = (float)((int)tc__q_code(((const float *)x->data)[i], 1.0f / sx, z, lo) - (int)z) * sx;
    return d;
}

/* W [C][1][k][k] dequantized per channel. */
static tc__tensor dw_dequant_w(const tc__tensor *w, int64_t c) {
    tc__tensor d = dtu_tensor(w->dtype, w->rank, w->dims);
    const int64_t taps = tc__tensor_numel(w) / c;
    const float *s = w->data;
    float *o = d.data;
    for (int64_t ch = 0; ch < c; ch++) {
        double amax = 0;
        for (int64_t t = 0; t < taps; t++) amax = fmax(amax, fabs(s[ch * taps + t]));
        const float sw = (float)(amax / 127.0);
        for (int64_t t = 0; t < taps; t++) o[ch * taps + t] = (float)tc__q_round(s[ch * taps + t], 1.0f / sw) * sw;
    }
    return d;
}

/* The step's attributes: window, group, scale (and tc.int8_nonneg). */
static int dw_attrs(const dw_case *c, tc__attr *a, int64_t st[2], int64_t dl[2], int64_t pd[4], bool quant) {
    st[0] = st[1] = c->s, dl[0] = dl[1] = c->d, pd[0] = pd[1] = pd[2] = pd[3] = c->pad;
    int n = 0;
    a[n++] = dtu_attr_ints("strides", st, 2);
    a[n++] = dtu_attr_ints("dilations", dl, 2);
    a[n++] = dtu_attr_ints("pads", pd, 4);
    a[n++] = dtu_attr_int("group", c->c);
    if (quant) a[n++] = dtu_attr_float(TC__ATTR_INT8_SCALE, 1.7f / 127.0f);
    if (quant && c->nonneg) a[n++] = dtu_attr_int(TC__ATTR_INT8_NONNEG, 1);
    if (quant && c->zp >= 0) a[n++] = dtu_attr_int(TC__ATTR_INT8_ZERO_POINT, c->zp);
    return n;
}

/* The VNNI NCHW16c tactic on step d (plain layouts, inputs x, w (packed into wp), b, res) with Y in NCHW16c and X in
 * NCHW16c or NCHW (c->n + c->h picks): close to ref, and to the plain layouts' result prev within vtol. */
static void check_blocked(const dw_case *c, const tc__step_desc *plain, int n_ctx, const tc__tensor *x, tc__tensor *wp,
                          const tc__tensor *w, const tc__tensor *b, const tc__tensor *res, const tc__tensor *ref,
                          const tc__tensor *prev, double vtol, const char *what) {
    const tc__tactic *t = &tc__tactic_dwconv_nchw16c_int8_avx512vnni;
    const bool blk_in = (c->n + c->h) % 2 == 0;
    if (t->supports(plain)) fail_msg("%s [%s]: takes plain layouts", what, t->name);
    tc__attr attrs[12];
    const int n_plain = plain->attrs->n;
    memcpy(attrs, plain->attrs->items, sizeof attrs[0] * (size_t)n_plain);
    const int64_t in_bits = (blk_in ? 1 : 0) | (c->residual ? (int64_t)1 << plain->epi->residual_input : 0);
    attrs[n_plain] = dtu_attr_int(TC__ATTR_LAYOUT_IN, in_bits);
    attrs[n_plain + 1] = dtu_attr_int(TC__ATTR_LAYOUT_OUT, 1);
    const tc__attrs as = {n_plain + 2, attrs};
    tc__tensor xt = blk_in ? vtu_reorder_nchw16c(x, true) : *x, rt = c->residual ? vtu_reorder_nchw16c(res, true) : *res;
    tc__step_desc d = *plain;
    const tc__tensor *tin[4] = {&xt, w, c->bias ? b : NULL, NULL};
    d.in = tin, d.attrs = &as, d.residual = c->residual ? &rt : NULL;
    if (!t->supports(&d)) fail_msg("%s [%s]: not supported", what, t->name);
    tc__err err = {0};
    if (t->pack(&d, 1, w->data, wp->data, &err) != TC_STATUS_OK) fail_msg("%s: pack: %s", what, err.msg);
    tin[1] = wp;
    if (c->residual) tin[plain->epi->residual_input] = &rt;
    tc__tensor y1 = vtu_run_desc(t, &d, n_ctx, tin, ref, NULL), y2 = vtu_run_desc(t, &d, n_ctx, tin, ref, vtu_pool);
    if (memcmp(y1.data, y2.data, y1.nbytes) != 0) fail_msg("%s [%s]: 1 and 2 threads differ", what, t->name);
    tc__tensor y = vtu_reorder_nchw16c(&y1, false);
    char msg[200];
    snprintf(msg, sizeof msg, "%s [%s, X %s]", what, t->name, blk_in ? "NCHW16c" : "NCHW");
    vtu_assert_close(&y, ref, DW_TOL * sqrt((double)(c->k * c->k)), msg);
    if (prev->data != NULL) vtu_assert_close(&y, prev, vtol, msg);
    tc__tensor_free(&y), tc__tensor_free(&y1), tc__tensor_free(&y2);
    if (blk_in) tc__tensor_free(&xt);
    if (c->residual) tc__tensor_free(&rt);
}

static void check_case(uint64_t seed, const dw_case *c, const char *what) {
    dtu_rng r = {seed};
    const int64_t xd[4] = {c->n, c->c, c->h, c->w}, wd[4] = {c->c, 1, c->k, c->k}, bd[1] = {c->c};
    tc__tensor x = vtu_random(&r, 4, xd, c->nonneg ? 0.0 : -2.0, 2.0), w = vtu_random(&r, 4, wd, -1.0, 1.0);
    tc__tensor b = vtu_random(&r, 1, bd, -1.0, 1.0);
    const float sx = 1.7f / 127.0f; /* |x| up to 2: the tails saturate */
    tc__tensor xq = dw_dequant_x(&x, sx, c->zp), wq = dw_dequant_w(&w, c->c);
    tc__attr attrs[8];
    int64_t st[2], dl[2], pd[4];
    const int ref_na = dw_attrs(c, attrs, st, dl, pd, false);
    const int n_op = c->bias ? 3 : 2;
    const tc__tensor *rin[3] = {&xq, &wq, c->bias ? &b : NULL};
    tc__tensor ref, res = {0};
    dtu_run_ok(DTU_OP(Conv), 13, attrs, ref_na, n_op, rin, 1, &ref);
    tc__epilogue epi = {-1, -1, (uint8_t)c->act, 0, 0.0f, 0.0f};
    if (c->act == TC__ACT_CLIP) epi.beta = 6.0f;
    if (c->act == TC__ACT_LEAKY_RELU) epi.alpha = 0.1f;
    int n_ctx = n_op;
    if (c->residual) {
        res = vtu_random(&r, ref.rank, ref.dims, -2.0, 2.0);
        epi.residual_input = (int8_t)n_ctx++;
    }
    tc__err err = {0};
    if (tc__epilogue_apply(&epi, &ref, NULL, c->residual ? &res : NULL, &err) != TC_STATUS_OK)
        fail_msg("reference epilogue: %s", err.msg);

    const int na = dw_attrs(c, attrs, st, dl, pd, true);
    const tc__attrs as = {na, attrs};
    tc__tensor wp = dtu_tensor(w.dtype, w.rank, w.dims);
    const tc__tensor *tin[4] = {&x, &w, c->bias ? &b : NULL, NULL}, *outs[1] = {&ref};
    const bool in_const[3] = {false, true, true};
    tc__step_desc d = {"Conv", 13, &as, n_op, tin, in_const, 1, outs, &epi, NULL, c->residual ? &res : NULL, NULL, 0};
    const tc__tactic *s16 = &tc__tactic_dwconv_int8_avx2, *u7 = &tc__tactic_dwconv_int8_u7_avx2;
    const tc__tactic *u8 = &tc__tactic_dwconv_int8_u8_avx2;
    const bool u7_input = c->nonneg && c->zp < 0;
    if (!u7_input && u7->supports(&d)) fail_msg("%s: u7 takes a signed input or a zero point", what);
    if (u7_input && u8->supports(&d)) fail_msg("%s: u8 takes a u7 step", what);
    /* the dense tactics never take a depthwise step */
    if (tc__tactic_conv_int8_avx2.supports(&d) || tc__tactic_conv_int8_u7_avx2.supports(&d))
        fail_msg("%s: a dense int8 tactic takes it", what);
    tc__tensor prev = {0};
    /* the VNNI epilogue's activations may differ from AVX2's in the last bits (its own exp, erfc) */
    const bool own = c->act == TC__ACT_GELU_ERF || c->act == TC__ACT_SIGMOID || c->act == TC__ACT_SILU;
    const double vtol = c->act == TC__ACT_NONE || c->act == TC__ACT_RELU ? 0.0 : own ? 1e-5 : 1e-6;
    const int64_t c16 = (c->c + 15) / 16 * 16, taps = c->k * c->k;
    const bool avx2_fits = c16 * ((taps + 1) / 2) * 4 + 4 * c16 <= c->c * taps * 4;
    const bool vnni_fits = avx2_fits && c16 * ((taps + 3) / 4 * 4 + 8) <= c->c * taps * 4;
    for (int v = 0; v < 4; v++) { /* s16 always; u7 on a non-negative symmetric X; u8 (codes as bytes) on any other; VNNI */
        const tc__tactic *t = v == 0 ? s16 : v == 1 ? u7 : v == 2 ? u8 : &tc__tactic_dwconv_int8_avx512vnni;
        if (!vtu_isa_ok(t) || (v == 1 && !u7_input) || (v == 2 && u7_input)) continue;
        tin[1] = &w;
        if (!(v == 3 ? vnni_fits : avx2_fits)) { /* the packing does not fit: refused */
            if (t->supports(&d)) fail_msg("%s [%s]: takes a step whose packing does not fit", what, t->name);
            continue;
        }
        if (!t->supports(&d)) fail_msg("%s [%s]: not supported", what, t->name);
        assert_true(t->packs_input(&d, 1));
        if (t->pack(&d, 1, w.data, wp.data, &err) != TC_STATUS_OK) fail_msg("%s: pack: %s", what, err.msg);
        tin[1] = &wp;
        if (c->residual) tin[epi.residual_input] = &res;
        tc__tensor y1 = vtu_run_desc(t, &d, n_ctx, tin, &ref, NULL), y2 = vtu_run_desc(t, &d, n_ctx, tin, &ref, vtu_pool);
        if (memcmp(y1.data, y2.data, y1.nbytes) != 0) fail_msg("%s [%s]: 1 and 2 threads differ", what, t->name);
        char msg[200];
        snprintf(msg, sizeof msg, "%s [%s]", what, t->name);
        vtu_assert_close(&y1, &ref, DW_TOL * sqrt((double)(c->k * c->k)), msg);
        if (prev.data != NULL) vtu_assert_close(&y1, &prev, v == 3 ? vtol : 0.0, msg); /* the same sums and epilogue */
        tc__tensor_free(&y2);
        tc__tensor_free(&prev);
        prev = y1;
    }
    if (c->c % 16 == 0 && vnni_fits && vtu_isa_ok(&tc__tactic_dwconv_nchw16c_int8_avx512vnni))
        check_blocked(c, &d, n_ctx, &x, &wp, &w, &b, &res, &ref, &prev, vtol, what);
    tc__tensor_free(&prev);
    tc__tensor_free(&res);
    tc__tensor_free(&wp);
    tc__tensor_free(&ref);
    tc__tensor_free(&xq);
    tc__tensor_free(&wq);
    tc__tensor_free(&b);
    tc__tensor_free(&w);
    tc__tensor_free(&x);
}

static dw_case dw(int64_t c, int64_t hw, int64_t k, int64_t s) {
    return (dw_case){1, c, hw, hw, k, s, 1, k / 2, true, false, true, TC__ACT_CLIP, -1};
}

/* MobileNetV2-like layers: 3x3, strides 1 and 2, ReLU6, non-negative inputs (both variants) and signed ones. */
static void test_dw_mobilenet_shapes(void **state) {
    (void)state;
    const int64_t cs[] = {32, 96, 144, 48}, hws[] = {28, 14, 7, 9};
    for (int i = 0; i < 4; i++)
        for (int64_t s = 1; s <= 2; s++) {
            dw_case c = dw(cs[i], hws[i], 3, s);
            c.nonneg = i % 2 == 0;
            char what[96];
            snprintf(what, sizeof what, "C %lld hw %lld s %lld", (long long)c.c, (long long)c.h, (long long)s);
            check_case((uint64_t)(10 * i + s), &c, what);
        }
}

/* Edge sizes: channels 16 to 41 (not multiples of 16), planes of 1 to 13, kernels 1, 3 and 5 (odd tap counts),
 * every activation, residuals, a rectangular plane, dilation 2, a batch of 3. */
static void test_dw_edge_sizes(void **state) {
    (void)state;
    const int64_t cs[] = {16, 17, 24, 41}, hws[] = {1, 2, 5, 13}, ks[] = {1, 3, 5};
    uint64_t seed = 100;
    for (size_t a = 0; a < 4; a++)
        for (size_t h = 0; h < 4; h++) {
            dw_case c = dw(cs[a], hws[h], ks[(a + h) % 3], 1 + (int64_t)((a + h) % 2));
            c.residual = (a + h) % 2 == 0;
            c.bias = h != 1;
            c.nonneg = a % 2 == 1;
            c.act = (tc__act)(seed % TC__ACT_FAKE_QUANT);
            char what[96];
            snprintf(what, sizeof what, "edge C %lld hw %lld k %lld s %lld", (long long)c.c, (long long)c.h,
                     (long long)c.k, (long long)c.s);
            check_case(seed++, &c, what);
        }
    dw_case c = dw(32, 12, 3, 1);
    c.w = 7;
    c.d = 2;
    c.pad = 2;
    c.residual = true;
    check_case(200, &c, "dilation 2, 12x7");
    c = dw(48, 6, 5, 1);
    c.n = 3;
    c.act = TC__ACT_SILU;
    c.nonneg = false;
    check_case(201, &c, "batch 3 5x5");
}

/* Channel counts whose VNNI groups of 4 blocks are whole (64), whole plus one block (80), whole plus three (112) or
 * several (240, EfficientNet-B0's 5x5 stride 2 layer), with zero points, signed inputs and residuals. */
static void test_dw_group_sizes(void **state) {
    (void)state;
    const int64_t cs[] = {64, 80, 112, 240}, hws[] = {7, 9, 5, 14}, ks[] = {3, 3, 5, 5}, ss[] = {1, 2, 1, 2};
    for (int i = 0; i < 4; i++) {
        dw_case c = dw(cs[i], hws[i], ks[i], ss[i]);
        c.nonneg = i == 0;
        c.residual = i % 2 == 1;
        c.zp = i == 2 ? 131 : -1;
        c.act = i == 3 ? TC__ACT_SILU : i == 1 ? TC__ACT_NONE : TC__ACT_CLIP;
        char what[96];
        snprintf(what, sizeof what, "groups: C %lld hw %lld k %lld", (long long)c.c, (long long)c.h, (long long)c.k);
        check_case((uint64_t)(400 + i), &c, what);
    }
}

/* Zero points of QDQ models (16-bit variant only): 0 (a ReLU range), 128 with the full [0, 255], others; the
 * border holds the zero point. */
static void test_dw_zero_points(void **state) {
    (void)state;
    const int zps[] = {0, 128, 200, 3};
    for (int i = 0; i < 4; i++) {
        dw_case c = dw(32, 7 + i, 3, 1 + i % 2);
        c.zp = zps[i];
        c.nonneg = i % 2 == 0;
        char what[64];
        snprintf(what, sizeof what, "zero point %d", zps[i]);
        check_case((uint64_t)(300 + i), &c, what);
    }
}

/* What the tactics refuse: a grouped (not depthwise) Conv, a channel multiplier, a packing that does not fit (8
 * channels of 3x3: 16 padded channels of 16-bit pairs need more bytes than 72 floats), no scale, NCHW16c tensors (AVX2),
 * plain Y (VNNI NCHW16c). */
static void test_dw_rejects(void **state) {
    (void)state;
    dtu_rng r = {5};
    const tc__tactic *ts[3] = {&tc__tactic_dwconv_int8_avx2, &tc__tactic_dwconv_int8_u7_avx2,
                               &tc__tactic_dwconv_int8_avx512vnni};
    const tc__tactic *blk = &tc__tactic_dwconv_nchw16c_int8_avx512vnni;
    struct {
        int64_t c, group, wc, cout;
        bool scale;
        const char *why;
    } k[] = {{32, 32, 1, 32, true, NULL},  {32, 16, 2, 32, true, "grouped"}, {16, 16, 1, 32, true, "multiplier 2"},
             {8, 8, 1, 8, true, "packing"}, {32, 32, 1, 32, false, "no scale"}};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        const int64_t xd[4] = {1, k[i].c, 6, 6}, wd[4] = {k[i].cout, k[i].wc, 3, 3}, yd[4] = {1, k[i].cout, 6, 6};
        tc__tensor x = vtu_random(&r, 4, xd, 0.0, 1.0), w = vtu_random(&r, 4, wd, -1.0, 1.0);
        tc__tensor y = dtu_tensor(TC_DTYPE_FLOAT32, 4, yd);
        int64_t pads[4] = {1, 1, 1, 1};
        tc__attr a[4] = {dtu_attr_ints("pads", pads, 4), dtu_attr_int("group", k[i].group),
                         dtu_attr_int(TC__ATTR_INT8_NONNEG, 1), dtu_attr_float(TC__ATTR_INT8_SCALE, 0.01f)};
        const tc__attrs as = {k[i].scale ? 4 : 3, a};
        const tc__tensor *in[2] = {&x, &w}, *out[1] = {&y};
        const bool in_const[2] = {false, true};
        tc__epilogue none = tc__epilogue_none();
        tc__step_desc d = {"Conv", 13, &as, 2, in, in_const, 1, out, &none, NULL, NULL, NULL, 0};
        for (int t = 0; t < 3; t++) {
            if (k[i].why == NULL && !ts[t]->supports(&d)) fail_msg("%s refuses the good step", ts[t]->name);
            if (k[i].why != NULL && ts[t]->supports(&d)) fail_msg("%s takes a step with %s", ts[t]->name, k[i].why);
        }
        if (blk->supports(&d)) fail_msg("%s takes plain layouts", blk->name);
        if (k[i].why == NULL) { /* the same step with NCHW16c tensors: only the VNNI NCHW16c tactic */
            tc__attr b[6] = {a[0], a[1], a[2], a[3], dtu_attr_int(TC__ATTR_LAYOUT_IN, 1), dtu_attr_int(TC__ATTR_LAYOUT_OUT, 1)};
            const tc__attrs bs = {6, b};
            d.attrs = &bs;
            for (int t = 0; t < 3; t++)
                if (ts[t]->supports(&d)) fail_msg("%s takes NCHW16c", ts[t]->name);
            if (!blk->supports(&d)) fail_msg("%s refuses NCHW16c", blk->name);
            b[4] = dtu_attr_int(TC__ATTR_LAYOUT_IN, 0); /* X NCHW, Y NCHW16c */
            if (!blk->supports(&d)) fail_msg("%s refuses NCHW X", blk->name);
            b[5] = dtu_attr_int(TC__ATTR_LAYOUT_OUT, 0); /* (plain) */
            if (blk->supports(&d)) fail_msg("%s takes an NCHW Y", blk->name);
        }
        tc__tensor_free(&x), tc__tensor_free(&w), tc__tensor_free(&y);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dw_mobilenet_shapes),
        cmocka_unit_test(test_dw_edge_sizes),
        cmocka_unit_test(test_dw_group_sizes),
        cmocka_unit_test(test_dw_zero_points),
        cmocka_unit_test(test_dw_rejects),
    };
    return cmocka_run_group_tests(tests, vtu_setup, vtu_teardown);
}
