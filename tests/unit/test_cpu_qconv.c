/*
 * test_cpu_qconv.c - the INT8 tactics (qconv_u8s8.h: Conv NCHW and NCHW16c, MatMul, Gemm) against the
 * reference run on the dequantized operands: X quantized per tensor with the node's tc.int8_scale
 * (including values that saturate), W per output channel as the packing does. The integer part is
 * exact, so the only differences are float rounding. Cases cover edge sizes (1, primes, channel
 * counts that are not multiples of 4 or 16, planes narrower than a tile), strides, dilations,
 * padding, every fused activation with and without residual and bias; 1 thread and a 2-thread pool
 * must give identical bits; the scratch bound is exact; and the steps supports() must reject. The AVX2
 * variant (16-bit codes) runs the same cases in plain layouts and must agree with the VNNI one. The u7w7 variant (7-bit
 * weights, tc.int8_w7) runs against the reference on weights quantized to 7 bits, including the largest 16-bit sums.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "backends/cpu/tactics.h"
#include "dense_test_util.h"

#include "backends/cpu/qconv_u8s8.h"
#include "backends/cpu/qdq_x8.h"
#include "backends/cpu/gemm.h"
#include "backends/cpu/vunary_f32.h"
#include "core/layout.h"
#include "cpu_vec_test_util.h"

#define Q_TOL 2e-5

enum { Q_PLAIN = 0, Q_BLOCKED = 1, Q_PLAIN_IN = 2 }; /* conv layouts: NCHW; NCHW16c in and out; NCHW in, NCHW16c out */

typedef struct q_case {
    const char *op; /* "Conv", "MatMul", "Gemm" */
    int64_t n, cin, cout, h, w, k, s, d, pad;
    bool bias, residual, trans_b;
    tc__act act;
    int layout;
    int zp; /* tc.int8_zero_point, or -1: symmetric (none) */
    bool nonneg; /* X in [0, 2) with tc.int8_nonneg: the AVX2 u7 variant runs too */
    bool w7;     /* with tc.int8_w7: every variant on 7-bit weights (u7w7 and u8w7 only then; u7 never) */
    bool extreme; /* X all saturating (code 127) and W +-1 by output channel (codes +-64): the u7w7 16-bit sums at
                     their largest */
    int hi;       /* tc.int8_code_max: 127 (codes of 7 bits: u8w7 sums two quads in 16 bits), or 0: 255 */
} q_case;

/* X dequantized as the kernel sees it (zero point zp, or symmetric when zp < 0; codes up to hi, or 255 when hi is 0). */
static tc__tensor q_dequant_x(const tc__tensor *x, float sx, int zp, int hi) {
    tc__tensor d = dtu_tensor(x->dtype, x->rank, x->dims);
    const uint8_t z = zp < 0 ? 128 : (uint8_t)zp, lo = zp < 0 ? 1 : 0, top = hi > 0 ? (uint8_t)hi : 255;
    for (int64_t i = 0; i < tc__tensor_numel(x); i++)
        ((float *)d.data)[i] =
            (float)((int)tc__q_code_in(((const float *)x->data)[i], 1.0f / sx, z, lo, top) - (int)z) * sx;
    return d;
}

/* W dequantized per output channel (oc-major [C_out][K], or k-major [K][C_out]) from codes in [-qmax, qmax]. */
static tc__tensor q_dequant_w(const tc__tensor *w, int64_t cout, bool k_major, double qmax) {
    tc__tensor d = dtu_tensor(w->dtype, w->rank, w->dims);
    const int64_t k = tc__tensor_numel(w) / cout;
    const float *s = w->data;
    float *o = d.data;
    for (int64_t oc = 0; oc < cout; oc++) {
        double amax = 0;
        for (int64_t i = 0; i < k; i++) amax = fmax(amax, fabs(s[k_major ? i * cout + oc : oc * k + i]));
        const float sw = (float)(amax / qmax);
        for (int64_t i = 0; i < k; i++) {
            int64_t at = k_major ? i * cout + oc : oc * k + i;
            o[at] = (float)tc__q_round(s[at], 1.0f / sw) * sw;
        }
    }
    return d;
}

/* The same for the AVX2 variant's 16-bit packing. */
static bool q_fits_s16(int64_t cin, int64_t cout, int64_t k) {
    return cin * cout * k * k * 4 >= (cout + 15) / 16 * 16 * (k * k * ((cin + 3) / 4 * 4) * 2 + 4);
}

static void check_case(uint64_t seed, const q_case *c, const char *what) {
    dtu_rng r = {seed};
    const bool conv = strcmp(c->op, "Conv") == 0, gemm = strcmp(c->op, "Gemm") == 0;
    const bool k_major = !conv && !c->trans_b;
    int64_t xd[4], wd[4], bd[1] = {c->cout};
    int32_t xr, wr;
    if (conv) {
        xr = wr = 4;
        xd[0] = c->n, xd[1] = c->cin, xd[2] = c->h, xd[3] = c->w;
        wd[0] = c->cout, wd[1] = c->cin, wd[2] = wd[3] = c->k;
    } else {
        xr = gemm ? 2 : 3, wr = 2;
        if (gemm) xd[0] = c->n * c->h, xd[1] = c->cin;
        else xd[0] = c->n, xd[1] = c->h, xd[2] = c->cin;
        wd[0] = k_major ? c->cin : c->cout, wd[1] = k_major ? c->cout : c->cin;
    }
    tc__tensor x = vtu_random(&r, xr, xd, c->nonneg ? 0.0 : -2.0, 2.0), w = vtu_random(&r, wr, wd, -1.0, 1.0);
    tc__tensor b = vtu_random(&r, 1, bd, -1.0, 1.0);
    if (c->extreme) {
        for (int64_t i = 0; i < tc__tensor_numel(&x); i++) ((float *)x.data)[i] = 2.0f;
        for (int64_t i = 0; i < tc__tensor_numel(&w); i++) {
            const int64_t oc = k_major ? i % c->cout : i / (tc__tensor_numel(&w) / c->cout);
            ((float *)w.data)[i] = oc % 2 ? -1.0f : 1.0f;
        }
    }
    const float sx = 1.7f / 127.0f; /* |x| up to 2: the tails saturate */
    tc__tensor xq = q_dequant_x(&x, sx, c->zp, c->hi), wq = q_dequant_w(&w, c->cout, k_major, c->w7 ? TC__QW7_MAX : 127.0);

    int64_t strides[2] = {c->s, c->s}, dils[2] = {c->d, c->d}, pads[4] = {c->pad, c->pad, c->pad, c->pad};
    tc__attr attrs[10];
    int na = 0;
    if (conv) {
        attrs[na++] = dtu_attr_ints("strides", strides, 2);
        attrs[na++] = dtu_attr_ints("dilations", dils, 2);
        attrs[na++] = dtu_attr_ints("pads", pads, 4);
    }
    if (gemm && c->trans_b) attrs[na++] = dtu_attr_int("transB", 1);
    const int ref_na = na;
    /* The reference: op on the dequantized operands, own bias for Conv/Gemm, then the epilogue. */
    const bool own_bias = c->bias && (conv || gemm);
    const int n_op = own_bias ? 3 : 2;
    const tc__tensor *rin[3] = {&xq, &wq, own_bias ? &b : NULL};
    tc__tensor ref, res = {0};
    dtu_op op = conv ? DTU_OP(Conv) : gemm ? DTU_OP(Gemm) : DTU_OP(MatMul);
    dtu_run_ok(op, 13, attrs, ref_na, n_op, rin, 1, &ref);
    tc__epilogue epi = {-1, -1, (uint8_t)c->act, 0, 0.0f, 0.0f};
    if (c->act == TC__ACT_CLIP) epi.beta = 6.0f;
    if (c->act == TC__ACT_LEAKY_RELU) epi.alpha = 0.1f;
    const bool epi_bias = c->bias && !own_bias;
    int n_ctx = n_op;
    if (epi_bias) epi.bias_input = (int8_t)n_ctx++;
    if (c->residual) {
        res = vtu_random(&r, ref.rank, ref.dims, -2.0, 2.0);
        epi.residual_input = (int8_t)n_ctx++;
    }
    tc__err err = {0};
    if (tc__epilogue_apply(&epi, &ref, epi_bias ? &b : NULL, c->residual ? &res : NULL, &err) != TC_STATUS_OK)
        fail_msg("reference epilogue: %s", err.msg);

    /* The tactic's step: layouts, scale. */
    const bool blk_out = conv && c->layout != Q_PLAIN, blk_in = conv && c->layout == Q_BLOCKED;
    attrs[na++] = dtu_attr_float(TC__ATTR_INT8_SCALE, sx);
    if (c->zp >= 0) attrs[na++] = dtu_attr_int(TC__ATTR_INT8_ZERO_POINT, c->zp);
    if (c->nonneg) attrs[na++] = dtu_attr_int(TC__ATTR_INT8_NONNEG, 1);
    if (c->w7) attrs[na++] = dtu_attr_int(TC__ATTR_INT8_W7, 1);
    if (c->hi > 0) attrs[na++] = dtu_attr_int(TC__ATTR_INT8_CODE_MAX, c->hi);
    if (blk_out) {
        attrs[na++] = dtu_attr_int(TC__ATTR_LAYOUT_IN, (blk_in ? 1 : 0) | (c->residual ? (int64_t)1 << epi.residual_input : 0));
        attrs[na++] = dtu_attr_int(TC__ATTR_LAYOUT_OUT, 1);
    }
    const tc__attrs as = {na, attrs};
    const tc__tactic *vnni = conv ? (blk_out ? &tc__tactic_conv_nchw16c_int8_avx512vnni : &tc__tactic_conv_int8_avx512vnni)
                             : gemm ? &tc__tactic_gemm_int8_avx512vnni
                                    : &tc__tactic_matmul_int8_avx512vnni;
    const tc__tactic *avx2 = conv ? &tc__tactic_conv_int8_avx2 : gemm ? &tc__tactic_gemm_int8_avx2 : &tc__tactic_matmul_int8_avx2;
    const tc__tactic *u7 = conv ? &tc__tactic_conv_int8_u7_avx2 : gemm ? &tc__tactic_gemm_int8_u7_avx2
                                                                     : &tc__tactic_matmul_int8_u7_avx2;
    const tc__tactic *w7 = conv ? &tc__tactic_conv_int8_u7w7_avx2 : gemm ? &tc__tactic_gemm_int8_u7w7_avx2
                                                                       : &tc__tactic_matmul_int8_u7w7_avx2;
    const tc__tactic *u8 = conv ? &tc__tactic_conv_int8_u8w7_avx2 : gemm ? &tc__tactic_gemm_int8_u8w7_avx2
                                                                       : &tc__tactic_matmul_int8_u8w7_avx2;
    tc__tensor xt = blk_in ? vtu_reorder_nchw16c(&x, true) : x, rt = c->residual && blk_out ? vtu_reorder_nchw16c(&res, true) : res;
    tc__tensor wp = dtu_tensor(w.dtype, w.rank, w.dims);
    const tc__tensor *tin[5] = {&xt, &w, own_bias ? &b : NULL, NULL, NULL}, *outs[1] = {&ref};
    const bool in_const[3] = {false, true, true};
    tc__step_desc d = {c->op, 13, &as, n_op, tin, in_const, 1, outs, &epi, epi_bias ? &b : NULL,
                       c->residual ? &rt : NULL, NULL, 0};
    /* Every variant this CPU runs (the AVX2 ones take plain layouts only, u7 a non-negative symmetric X); same codes,
     * same bits. */
    tc__tensor prev = {0};
    if (!(c->nonneg && c->zp < 0 && !blk_out) && u7->supports(&d)) fail_msg("%s: u7 takes the step", what);
    if (!(c->w7 && c->nonneg && c->zp < 0 && !blk_out) && w7->supports(&d)) fail_msg("%s: u7w7 takes the step", what);
    const bool u7_input = c->nonneg && c->zp < 0;
    if (!(c->w7 && !blk_out && !u7_input) && u8->supports(&d)) fail_msg("%s: u8w7 takes the step", what);
    /* with w7, u7w7's steps are its own (u7 refuses them), and the 16-bit variant, which u7w7 and u8w7 dominate,
     * refuses every w7 step */
    if (c->w7 && u7_input && u7->supports(&d)) fail_msg("%s: u7 takes a u7w7 step", what);
    if (c->w7 && avx2->supports(&d)) fail_msg("%s: s16 takes a w7 step", what);
    for (int v = 0; v < 5; v++) { /* with w7 every variant packs the 7-bit weights: the same values */
        const tc__tactic *t = v == 0 ? vnni : v == 1 ? avx2 : v == 2 ? u7 : v == 3 ? w7 : u8;
        const bool takes = v == 0 || (!blk_out && (v == 1   ? !c->w7
                                                   : v == 2 ? u7_input && !c->w7
                                                   : v == 3 ? u7_input && c->w7
                                                            : c->w7 && !u7_input));
        /* the 16-bit variant still computes a w7 step when called (its kernel packs 7-bit weights): a cross-check */
        const bool cross_check = v == 1 && c->w7 && !blk_out;
        if (!vtu_isa_ok(t) || !(takes || cross_check)) continue;
        tin[1] = &w;
        if (v == 1 && !q_fits_s16(c->cin, c->cout, c->k)) continue; /* its 16-bit packing does not fit */
        if (takes && !t->supports(&d)) fail_msg("%s [%s]: not supported", what, t->name);
        assert_true(t->packs_input(&d, 1));
        if (t->pack(&d, 1, w.data, wp.data, &err) != TC_STATUS_OK) fail_msg("%s: pack: %s", what, err.msg);
        tin[1] = &wp;
        if (epi_bias) tin[epi.bias_input] = &b;
        if (c->residual) tin[epi.residual_input] = &rt;
        tc__tensor y1 = vtu_run_desc(t, &d, n_ctx, tin, &ref, NULL), y2 = vtu_run_desc(t, &d, n_ctx, tin, &ref, vtu_pool);
        if (memcmp(y1.data, y2.data, y1.nbytes) != 0) fail_msg("%s [%s]: 1 and 2 threads differ", what, t->name);
        tc__tensor y = blk_out ? vtu_reorder_nchw16c(&y1, false) : y1;
        char msg[200];
        snprintf(msg, sizeof msg, "%s [%s]", what, t->name);
        vtu_assert_close(&y, &ref, Q_TOL * sqrt((double)(c->cin * c->k * c->k)), msg);
        /* the integer sums are exact in both, the epilogue the same FMA: only the activations' vector
         * implementations may differ in the last bits (GELU, sigmoid and SiLU more: the AVX2 INT8 epilogue has its own
         * exp and erfc, good to 1-2 ulp and 1.5e-7) */
        const bool own = c->act == TC__ACT_GELU_ERF || c->act == TC__ACT_SIGMOID || c->act == TC__ACT_SILU;
        const double vtol = c->act == TC__ACT_NONE || c->act == TC__ACT_RELU ? 0.0 : own ? 1e-5 : 1e-6;
        if (prev.data != NULL) vtu_assert_close(&y, &prev, vtol, msg);
        if (blk_out) tc__tensor_free(&y);
        tc__tensor_free(&y2);
        tc__tensor_free(&prev);
        prev = y1;
    }
    tc__tensor_free(&prev);
    if (blk_in) tc__tensor_free(&xt);
    if (c->residual && blk_out) tc__tensor_free(&rt);
    tc__tensor_free(&res);
    tc__tensor_free(&wp);
    tc__tensor_free(&ref);
    tc__tensor_free(&xq);
    tc__tensor_free(&wq);
    tc__tensor_free(&b);
    tc__tensor_free(&w);
    tc__tensor_free(&x);
}

/* True when the int8 packed weight fits in the FP32 weight's bytes (else supports() refuses). */
static bool q_fits(int64_t cin, int64_t cout, int64_t k) {
    return cin * cout * k * k * 4 >= (cout + 15) / 16 * 16 * (k * k * ((cin + 3) / 4 * 4) + 8);
}

static q_case conv_case(int64_t cin, int64_t cout, int64_t hw, int64_t k, int64_t s, int layout) {
    return (q_case){"Conv", 1, cin, cout, hw, hw, k, s, 1, k / 2, true, false, false, TC__ACT_RELU, layout, -1, false, false, false, 0};
}

/* ResNet-50-like layers in the three layouts, with residuals. */
static void test_conv_resnet_shapes(void **state) {
    (void)state;
    q_case c = conv_case(3, 64, 30, 7, 2, Q_PLAIN_IN);
    check_case(1, &c, "stem 7x7 s2 plain in");
    c = conv_case(64, 64, 14, 3, 1, Q_BLOCKED);
    check_case(2, &c, "3x3 64");
    c = conv_case(64, 128, 15, 3, 2, Q_BLOCKED);
    check_case(3, &c, "3x3 s2 64->128");
    c = conv_case(128, 64, 9, 1, 1, Q_BLOCKED);
    c.residual = true;
    check_case(4, &c, "1x1 +res blocked");
    c = conv_case(64, 256, 7, 1, 1, Q_PLAIN);
    c.residual = true;
    check_case(5, &c, "1x1 +res plain");
    c = conv_case(256, 512, 8, 1, 2, Q_BLOCKED);
    c.bias = false;
    c.act = TC__ACT_NONE;
    check_case(6, &c, "1x1 s2 downsample");
}

/* Edge sizes: odd and prime channel counts (plain layout), planes of 1 to 13, kernels 1/3/5, dilation. */
static void test_conv_edge_sizes(void **state) {
    (void)state;
    const int64_t cins[] = {1, 3, 5, 17}, couts[] = {1, 7, 16, 33, 80}, hws[] = {1, 2, 5, 13};
    uint64_t seed = 100;
    for (size_t a = 0; a < 4; a++)
        for (size_t b = 0; b < 5; b++)
            for (size_t h = 0; h < 4; h++) {
                q_case c = conv_case(cins[a], couts[b], hws[h], (int64_t)(1 + 2 * ((a + b + h) % 3)),
                                     1 + (int64_t)((a + h) % 2), Q_PLAIN);
                c.residual = (b + h) % 2 == 0;
                c.act = (tc__act)(seed % TC__ACT_FAKE_QUANT);
                char what[96];
                snprintf(what, sizeof what, "edge cin %lld cout %lld hw %lld k %lld s %lld", (long long)c.cin,
                         (long long)c.cout, (long long)c.h, (long long)c.k, (long long)c.s);
                if (!q_fits(c.cin, c.cout, c.k)) continue; /* not supported (see test_rejects) */
                check_case(seed++, &c, what);
            }
    /* image stems (1 to 4 channels, NCHW): rows of 16 pixels and more take the vector quantization, the rest one by one */
    const int64_t stem_cins[] = {1, 2, 3, 4}, stem_hws[] = {16, 37};
    for (size_t a = 0; a < 4; a++)
        for (size_t h = 0; h < 2; h++) {
            q_case c = conv_case(stem_cins[a], 16 + 7 * (int64_t)a, stem_hws[h], 3 + 2 * (int64_t)h, 1 + (int64_t)h, Q_PLAIN);
            char what[96];
            snprintf(what, sizeof what, "stem cin %lld hw %lld", (long long)c.cin, (long long)c.h);
            if (!q_fits(c.cin, c.cout, c.k)) continue;
            check_case(seed++, &c, what);
        }
    q_case c = conv_case(16, 32, 11, 3, 1, Q_BLOCKED);
    c.d = 2;
    c.pad = 2;
    check_case(200, &c, "dilation 2");
    c = conv_case(8, 32, 12, 3, 1, Q_PLAIN); /* plain: the AVX2 variant too (one tap per run with dilation) */
    c.d = 2;
    c.pad = 2;
    c.residual = true;
    check_case(202, &c, "dilation 2 plain");
    c = conv_case(32, 48, 6, 5, 1, Q_BLOCKED);
    c.n = 3;
    c.residual = true;
    c.act = TC__ACT_SILU;
    check_case(201, &c, "batch 3 5x5");
}

/* Zero points of QDQ models: 0 (a ReLU range: negatives clamp to 0), 128 with the full [0, 255], others;
 * the padding border holds the zero point. */
static void test_zero_points(void **state) {
    (void)state;
    const int zps[] = {0, 128, 200, 3};
    for (int i = 0; i < 4; i++) {
        q_case c = conv_case(16, 32, 7, 3, 1, i % 2 ? Q_BLOCKED : Q_PLAIN);
        c.zp = zps[i];
        c.residual = i == 2;
        char what[64];
        snprintf(what, sizeof what, "zero point %d", zps[i]);
        check_case(400 + (uint64_t)i, &c, what);
        c = conv_case(5, 16, 6, 3, 2, Q_PLAIN);
        c.zp = zps[i];
        check_case(410 + (uint64_t)i, &c, what);
    }
}

/* A non-negative X (tc.int8_nonneg): the AVX2 u7 variant (vpmaddubsw on 7-bit codes) against the reference and
 * the other variants, edge sizes, strides, dilation, residuals, MatMul and Gemm. */
static void test_nonneg(void **state) {
    (void)state;
    const int64_t cins[] = {1, 3, 5, 17, 64}, couts[] = {1, 16, 33}, hws[] = {1, 5, 13};
    uint64_t seed = 500;
    for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 3; b++)
            for (size_t h = 0; h < 3; h++) {
                q_case c = conv_case(cins[a], couts[b], hws[h], (int64_t)(1 + 2 * ((a + b + h) % 3)),
                                     1 + (int64_t)((a + h) % 2), Q_PLAIN);
                c.nonneg = true;
                c.residual = (b + h) % 2 == 1;
                c.act = (tc__act)(seed % TC__ACT_FAKE_QUANT);
                if (!q_fits(c.cin, c.cout, c.k)) continue;
                char what[96];
                snprintf(what, sizeof what, "nonneg cin %lld cout %lld hw %lld k %lld", (long long)c.cin,
                         (long long)c.cout, (long long)c.h, (long long)c.k);
                check_case(seed++, &c, what);
            }
    q_case c = conv_case(8, 32, 12, 3, 1, Q_PLAIN);
    c.d = 2, c.pad = 2, c.nonneg = true;
    check_case(560, &c, "nonneg dilation 2");
    c = conv_case(64, 256, 7, 1, 1, Q_PLAIN);
    c.residual = true, c.nonneg = true;
    check_case(561, &c, "nonneg 1x1 +res");
    c = conv_case(24, 40, 6, 5, 1, Q_PLAIN); /* a batch of 3 images, both AVX2 variants */
    c.n = 3, c.residual = true, c.act = TC__ACT_SILU;
    check_case(562, &c, "batch 3 5x5 plain");
    c.nonneg = true;
    check_case(563, &c, "nonneg batch 3 5x5");
    const int64_t ks[] = {4, 7, 129, 768}, ns[] = {3, 17, 256};
    for (size_t a = 0; a < 4; a++)
        for (size_t b = 0; b < 3; b++) {
            q_case m = {"MatMul", 1, ks[a], ns[b], 13, 1, 1, 1, 1, 0, a % 2 == 0, b % 2 == 1, false,
                        (tc__act)((a + b) % TC__ACT_FAKE_QUANT), Q_PLAIN, -1, true, false, false, 0};
            if (!q_fits(m.cin, m.cout, 1)) continue;
            check_case(570 + a * 3 + b, &m, "nonneg matmul");
            m.op = "Gemm", m.trans_b = b % 2 == 0;
            check_case(590 + a * 3 + b, &m, "nonneg gemm");
        }
}

/* 7-bit weights (tc.int8_w7, reduce range): the u7w7 variant (non-negative X) and the u8w7 variant (the other X, QDQ
 * zero points too) against the reference on weights quantized to 7 bits, and against the VNNI and 16-bit variants,
 * which pack the same 7-bit weights then. Channel quads per kernel
 * row odd and even (the last quad alone), tiles of 1 to 12 pixels (u7w7: runs of at most 4), strides, dilation,
 * residuals, activations, MatMul and Gemm; and the largest 16-bit sums (X at code 127, u8 255, W at +-64). */
static void test_w7(void **state) {
    (void)state;
    const int64_t cins[] = {1, 4, 5, 8, 17, 64}, couts[] = {1, 16, 33}, hws[] = {1, 5, 13};
    uint64_t seed = 700;
    for (size_t a = 0; a < 6; a++)
        for (size_t b = 0; b < 3; b++)
            for (size_t h = 0; h < 3; h++) {
                q_case c = conv_case(cins[a], couts[b], hws[h], (int64_t)(1 + 2 * ((a + b + h) % 3)),
                                     1 + (int64_t)((a + h) % 2), Q_PLAIN);
                c.w7 = true;
                c.nonneg = (a + b + h) % 3 != 0; /* else signed X: u8w7 only */
                c.zp = (a + b + h) % 6 == 3 ? (int)(37 * h) : -1;
                c.residual = (b + h) % 2 == 1;
                c.act = (tc__act)(seed % TC__ACT_FAKE_QUANT);
                if (!q_fits(c.cin, c.cout, c.k)) continue;
                char what[96];
                snprintf(what, sizeof what, "w7 cin %lld cout %lld hw %lld k %lld zp %d%s", (long long)c.cin,
                         (long long)c.cout, (long long)c.h, (long long)c.k, c.zp, c.nonneg ? " nonneg" : "");
                check_case(seed++, &c, what);
            }
    q_case c = conv_case(8, 32, 12, 3, 1, Q_PLAIN);
    c.d = 2, c.pad = 2, c.nonneg = c.w7 = true;
    check_case(760, &c, "w7 dilation 2");
    c = conv_case(64, 256, 7, 1, 1, Q_PLAIN);
    c.residual = c.nonneg = c.w7 = true, c.n = 2;
    check_case(761, &c, "w7 1x1 +res batch 2");
    for (int k = 1; k <= 3; k += 2) { /* every 16-bit sum at +-2 * 2 * 127 * 64 (u7w7), +-2 * 255 * 64 (u8w7) */
        c = conv_case(64, 32, 6, k, 1, Q_PLAIN);
        c.nonneg = c.w7 = c.extreme = true, c.bias = false, c.act = TC__ACT_NONE, c.pad = 0;
        check_case(762 + (uint64_t)k, &c, "w7 extreme");
        c.nonneg = false;
        check_case(766 + (uint64_t)k, &c, "w7 extreme, u8");
    }
    const int64_t ks[] = {4, 12, 129, 768}, ns[] = {3, 17, 256};
    for (size_t a = 0; a < 4; a++)
        for (size_t b = 0; b < 3; b++) {
            q_case m = {"MatMul", 1, ks[a], ns[b], 13, 1, 1, 1, 1, 0, a % 2 == 0, b % 2 == 1, false,
                        (tc__act)((a + b) % TC__ACT_FAKE_QUANT), Q_PLAIN, -1, (a + b) % 2 == 0, true, false, 0};
            if (!q_fits(m.cin, m.cout, 1)) continue;
            check_case(770 + a * 3 + b, &m, "w7 matmul");
            m.op = "Gemm", m.trans_b = b % 2 == 0;
            check_case(790 + a * 3 + b, &m, "w7 gemm");
            /* codes of 7 bits with a zero point (tc.int8_code_max, after GELU/SiLU): u8w7 sums two quads in 16 bits */
            m.op = "MatMul", m.trans_b = false, m.nonneg = false, m.zp = a % 2 ? 3 : 40, m.hi = 127;
            check_case(810 + a * 3 + b, &m, "w7 matmul, 7-bit codes");
        }
    for (size_t a = 0; a < 6; a++) { /* 7-bit codes in Convs: odd and even quads per kernel row, tails, saturation */
        q_case k7 = conv_case(cins[a], couts[a % 3], hws[a % 3], a % 2 ? 3 : 1, 1 + (int64_t)(a % 2), Q_PLAIN);
        k7.w7 = true, k7.zp = a % 2 ? 3 : 60, k7.hi = 127, k7.residual = a % 3 == 1;
        if (!q_fits(k7.cin, k7.cout, k7.k)) continue;
        check_case(830 + a, &k7, "w7 conv, 7-bit codes");
    }
    c = conv_case(64, 32, 6, 3, 1, Q_PLAIN); /* every 16-bit sum at +-2 * 2 * 127 * 64 with codes of 7 bits */
    c.w7 = c.extreme = true, c.bias = false, c.act = TC__ACT_NONE, c.pad = 0, c.zp = 3, c.hi = 127;
    check_case(840, &c, "w7 extreme, 7-bit codes");
}

/* MatMul [N, M, K] x [K, N] with fused bias, residual and activations; Gemm with transB and C. */
static void test_dense(void **state) {
    (void)state;
    const int64_t ks[] = {4, 7, 64, 129, 768}, ns[] = {3, 16, 17, 100, 256}, ms[] = {1, 5, 13, 128};
    uint64_t seed = 300;
    for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 5; b++)
            for (size_t m = 0; m < 4; m++) {
                q_case c = {"MatMul", 1 + (int64_t)(m % 2), ks[a], ns[b], ms[m], 1, 1, 1, 1, 0,
                            (a + m) % 2 == 0, (b + m) % 2 == 1, false, (tc__act)(seed % TC__ACT_FAKE_QUANT), Q_PLAIN,
                            m == 2 ? 37 : -1, false, false, false, 0};
                if (!q_fits(c.cin, c.cout, 1)) continue;
                char what[96];
                snprintf(what, sizeof what, "matmul k %lld n %lld m %lld", (long long)c.cin, (long long)c.cout,
                         (long long)c.h);
                check_case(seed++, &c, what);
                c.op = "Gemm";
                c.trans_b = (a + b) % 2 == 0;
                c.n = 1;
                check_case(seed++, &c, what);
            }
    /* 9 groups of 64 outputs over 128 rows: one strip per image with 1 and 2 threads (lowp_grid.h) */
    q_case w = {"MatMul", 1, 71, 529, 128, 1, 1, 1, 1, 0, true, false, false, TC__ACT_RELU, Q_PLAIN, -1, false, false,
                false, 0};
    check_case(seed++, &w, "matmul k 71 n 529 m 128, whole plane");
    /* GELU's cubic pieces (qact_avx512.h): sums of 64 products reach past +-5, the last pieces; against the AVX2
     * epilogue's erfc (1.5e-7) within the 1e-5 of the activations, every piece and its ends */
    q_case g = {"MatMul", 1, 64, 48, 37, 1, 1, 1, 1, 0, true, true, false, TC__ACT_GELU_ERF, Q_PLAIN, -1, false, false,
                false, 0};
    check_case(seed++, &g, "matmul k 64 n 48 m 37, GELU");
}

/* Steps the tactics must refuse. */
static void test_rejects(void **state) {
    (void)state;
    dtu_rng r = {7};
    const int64_t xd[4] = {1, 8, 5, 5}, wd[4] = {8, 8, 3, 3}, yd[4] = {1, 8, 3, 3}, w1[4] = {16, 1, 1, 1};
    tc__tensor x = vtu_random(&r, 4, xd, -1, 1), w = vtu_random(&r, 4, wd, -1, 1), y = dtu_tensor(TC_DTYPE_FLOAT32, 4, yd);
    tc__tensor wsmall = vtu_random(&r, 4, w1, -1, 1);
    tc__attr attrs[3] = {dtu_attr_float(TC__ATTR_INT8_SCALE, 0.01f)};
    tc__attrs as = {1, attrs}, none = {0, attrs};
    const tc__tensor *in[2] = {&x, &w}, *out[1] = {&y};
    bool in_const[2] = {false, true};
    const tc__epilogue e = tc__epilogue_none();
    tc__step_desc d = {"Conv", 13, &as, 2, in, in_const, 1, out, &e, NULL, NULL, NULL, 0};
    assert_true(tc__tactic_conv_int8_avx512vnni.supports(&d));
    /* the AVX2 variant's 16-bit packing (16 channels per block) does not fit 8 channels' FP32 weight */
    assert_false(tc__tactic_conv_int8_avx2.supports(&d));
    assert_false(tc__tactic_conv_nchw16c_int8_avx512vnni.supports(&d)); /* no layout attributes */
    d.attrs = &none; /* no scale: FP32 only */
    assert_false(tc__tactic_conv_int8_avx512vnni.supports(&d));
    attrs[0] = dtu_attr_float(TC__ATTR_INT8_SCALE, NAN);
    d.attrs = &as;
    assert_false(tc__tactic_conv_int8_avx512vnni.supports(&d));
    attrs[0] = dtu_attr_float(TC__ATTR_INT8_SCALE, 0.01f);
    attrs[1] = dtu_attr_int("group", 2);
    as.n = 2;
    assert_false(tc__tactic_conv_int8_avx512vnni.supports(&d));
    as.n = 1;
    in_const[1] = false; /* weights computed at run time */
    assert_false(tc__tactic_conv_int8_avx512vnni.supports(&d));
    in_const[1] = true;
    /* The chain's image attributes (they come from a plan file): [Hp, Wp, Cp, pad top, pad left, zero point,
     * lowest code] for the 3x3 output of 8 channels, and the next layer's scale. */
    const int64_t good[7] = {3, 3, 8, 0, 0, 128, 1}, cp6[7] = {3, 3, 6, 0, 0, 128, 1}, zp[7] = {3, 3, 8, 0, 0, 256, 1},
                  lo[7] = {3, 3, 8, 0, 0, 128, 2}, wide[7] = {3, 2, 8, 0, 0, 128, 1};
    attrs[1] = dtu_attr_ints(TC__ATTR_INT8_OUT_IMAGE, good, 7);
    attrs[2] = dtu_attr_float(TC__ATTR_INT8_OUT_SCALE, 0.02f);
    as.n = 3;
    assert_true(tc__tactic_conv_int8_avx512vnni.supports(&d));
    as.n = 2; /* no scale */
    assert_false(tc__tactic_conv_int8_avx512vnni.supports(&d));
    as.n = 3;
    const int64_t *const bad[4] = {cp6, zp, lo, wide};
    for (int k = 0; k < 4; k++) {
        attrs[1] = dtu_attr_ints(TC__ATTR_INT8_OUT_IMAGE, bad[k], 7);
        if (tc__tactic_conv_int8_avx512vnni.supports(&d)) fail_msg("chain image %d accepted", k);
    }
    attrs[1] = dtu_attr_ints(TC__ATTR_INT8_OUT_IMAGE, good, 5); /* too few values */
    assert_false(tc__tactic_conv_int8_avx512vnni.supports(&d));
    attrs[1] = dtu_attr_ints(TC__ATTR_INT8_OUT_IMAGE, good, 7);
    attrs[2] = dtu_attr_float(TC__ATTR_INT8_OUT_SCALE, -1.0f);
    assert_false(tc__tactic_conv_int8_avx512vnni.supports(&d));
    as.n = 1;
    /* C_in 1, 1x1, C_out 16: 64 FP32 bytes cannot hold 16 * 4 int8 bytes plus 128 bytes of scales */
    const int64_t x1d[4] = {1, 1, 5, 5}, y1d[4] = {1, 16, 5, 5};
    tc__tensor x1 = vtu_random(&r, 4, x1d, -1, 1), y1 = dtu_tensor(TC_DTYPE_FLOAT32, 4, y1d);
    in[0] = &x1, in[1] = &wsmall, out[0] = &y1;
    assert_false(tc__tactic_conv_int8_avx512vnni.supports(&d));
    assert_false(tc__tactic_conv_int8_avx2.supports(&d));
    /* 16 output channels: the AVX2 variant takes it, with chain images of 16-bit codes that fit in the FP32
     * tensors' bytes (a 4 x 6 x 16 image fits as u8 codes, not as 16-bit ones) */
    const int64_t w16d[4] = {16, 8, 3, 3}, y16d[4] = {1, 16, 3, 3}, img16[7] = {3, 3, 16, 0, 0, 128, 1},
                  big16[7] = {4, 6, 16, 0, 0, 128, 1};
    tc__tensor w16 = vtu_random(&r, 4, w16d, -1, 1), y16 = dtu_tensor(TC_DTYPE_FLOAT32, 4, y16d);
    in[0] = &x, in[1] = &w16, out[0] = &y16;
    assert_true(tc__tactic_conv_int8_avx2.supports(&d));
    attrs[1] = dtu_attr_ints(TC__ATTR_INT8_OUT_IMAGE, img16, 7);
    attrs[2] = dtu_attr_float(TC__ATTR_INT8_OUT_SCALE, 0.02f);
    as.n = 3;
    assert_true(tc__tactic_conv_int8_avx512vnni.supports(&d));
    assert_true(tc__tactic_conv_int8_avx2.supports(&d));
    attrs[1] = dtu_attr_ints(TC__ATTR_INT8_OUT_IMAGE, big16, 7);
    assert_true(tc__tactic_conv_int8_avx512vnni.supports(&d));
    assert_false(tc__tactic_conv_int8_avx2.supports(&d));
    /* the 8th int, the image format: u8 codes (3) fit as bytes; an unknown format (4) is refused */
    const int64_t u8img[8] = {4, 6, 16, 0, 0, 128, 1, TC__INT8_IMG_U8}, badfmt[8] = {3, 3, 16, 0, 0, 128, 1, 4};
    attrs[1] = dtu_attr_ints(TC__ATTR_INT8_OUT_IMAGE, u8img, 8);
    assert_true(tc__tactic_conv_int8_avx2.supports(&d));
    attrs[1] = dtu_attr_ints(TC__ATTR_INT8_OUT_IMAGE, badfmt, 8);
    assert_false(tc__tactic_conv_int8_avx2.supports(&d));
    /* the 9th int, the reader's highest code: 127 with a zero point below it, or 255; nothing else */
    const int64_t hi127[9] = {4, 6, 16, 0, 0, 3, 0, TC__INT8_IMG_U8, 127}, zp_hi[9] = {4, 6, 16, 0, 0, 128, 1,
                                                                                         TC__INT8_IMG_U8, 127},
                  hi200[9] = {4, 6, 16, 0, 0, 3, 0, TC__INT8_IMG_U8, 200};
    attrs[1] = dtu_attr_ints(TC__ATTR_INT8_OUT_IMAGE, hi127, 9);
    assert_true(tc__tactic_conv_int8_avx2.supports(&d));
    attrs[1] = dtu_attr_ints(TC__ATTR_INT8_OUT_IMAGE, zp_hi, 9);
    assert_false(tc__tactic_conv_int8_avx2.supports(&d));
    attrs[1] = dtu_attr_ints(TC__ATTR_INT8_OUT_IMAGE, hi200, 9);
    assert_false(tc__tactic_conv_int8_avx2.supports(&d));
    attrs[1] = dtu_attr_int(TC__ATTR_INT8_IN_IMAGE, 1);
    as.n = 2;
    assert_true(tc__tactic_conv_int8_avx512vnni.supports(&d));
    assert_true(tc__tactic_conv_int8_avx2.supports(&d));
    /* the u7 variant: only with tc.int8_nonneg = 1 and symmetric codes (no QDQ zero point), chained or not */
    assert_false(tc__tactic_conv_int8_u7_avx2.supports(&d));
    attrs[1] = dtu_attr_int(TC__ATTR_INT8_NONNEG, 1);
    assert_true(tc__tactic_conv_int8_u7_avx2.supports(&d));
    attrs[1] = dtu_attr_int(TC__ATTR_INT8_NONNEG, 2);
    assert_false(tc__tactic_conv_int8_u7_avx2.supports(&d));
    attrs[1] = dtu_attr_int(TC__ATTR_INT8_NONNEG, 1);
    attrs[2] = dtu_attr_int(TC__ATTR_INT8_ZERO_POINT, 0);
    as.n = 3;
    assert_false(tc__tactic_conv_int8_u7_avx2.supports(&d));
    assert_true(tc__tactic_conv_int8_avx2.supports(&d));
    /* tc.int8_code_max (a plan's): 127 above the zero point, or 255; not 127 under the symmetric 128, nor 100 */
    attrs[1] = dtu_attr_int(TC__ATTR_INT8_CODE_MAX, 127);
    attrs[2] = dtu_attr_int(TC__ATTR_INT8_ZERO_POINT, 3);
    assert_true(tc__tactic_conv_int8_avx2.supports(&d));
    attrs[1] = dtu_attr_int(TC__ATTR_INT8_CODE_MAX, 100);
    assert_false(tc__tactic_conv_int8_avx2.supports(&d));
    attrs[1] = dtu_attr_int(TC__ATTR_INT8_CODE_MAX, 127);
    as.n = 2; /* no zero point: symmetric codes around 128 */
    assert_false(tc__tactic_conv_int8_avx2.supports(&d));
    tc__tensor_free(&w16), tc__tensor_free(&y16);
    tc__tensor_free(&x1), tc__tensor_free(&y1), tc__tensor_free(&wsmall);
    tc__tensor_free(&x), tc__tensor_free(&w), tc__tensor_free(&y);
}

/* The per-tensor QuantizeLinear / DequantizeLinear tactics (AVX-512, AVX2) against the reference kernels, bit for bit:
 * lengths around the vector widths, ties (x / s exactly k + 0.5), saturation, NaN, uint8 and int8, 1 and 2 threads. */
static void check_qdq_tactics(const tc__tactic *qt, const tc__tactic *dqt) {
    const int64_t lens[] = {1, 7, 8, 9, 16, 17, 33, 1000, 40000};
    dtu_rng r = {11};
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (int sgn = 0; sgn < 2; sgn++) {
            const int64_t n = lens[li], one = 1;
            tc__tensor x = vtu_random(&r, 1, &n, -3.0, 3.0);
            float *xv = x.data;
            const float scale = 0.02f;
            for (int64_t i = 0; i < n; i += 5) xv[i] = ((float)(i % 37) - 18.5f) * scale; /* ties */
            if (n > 3) xv[3] = NAN, xv[2] = 1e9f, xv[1] = -1e9f;
            tc__tensor s = dtu_tensor(TC_DTYPE_FLOAT32, 0, &one), z = dtu_tensor(sgn ? TC_DTYPE_INT8 : TC_DTYPE_UINT8, 0, &one);
            *(float *)s.data = scale;
            if (sgn) *(int8_t *)z.data = -7;
            else *(uint8_t *)z.data = 131;
            const tc__tensor *qin[3] = {&x, &s, &z};
            tc__tensor qref, dref;
            dtu_run_ok(DTU_OP(QuantizeLinear), 13, NULL, 0, 3, qin, 1, &qref);
            const tc__tensor *dqin[3] = {&qref, &s, &z};
            dtu_run_ok(DTU_OP(DequantizeLinear), 13, NULL, 0, 3, dqin, 1, &dref);
            for (int threads = 0; threads < 2; threads++) {
                vtu_step st = vtu_step_of("QuantizeLinear", 13);
                st.n_in = 3;
                st.in[0] = &x, st.in[1] = &s, st.in[2] = &z;
                if (!vtu_supports(qt, &st, &qref)) fail_msg("quantize: not supported");
                tc__tensor q = dtu_tensor(qref.dtype, qref.rank, qref.dims);
                tc__tensor *out[1] = {&q};
                tc__err err = {0};
                const tc__epilogue none = tc__epilogue_none();
                tc__kernel_ctx kc = {"test", "QuantizeLinear", 13, NULL, 3, st.in, 1, out, &err, NULL, &none, NULL, NULL,
                                     threads ? vtu_pool : NULL, NULL, NULL, NULL};
                assert_int_equal(qt->run(&kc), TC_STATUS_OK);
                if (memcmp(q.data, qref.data, qref.nbytes) != 0) fail_msg("%s: n %lld signed %d differs", qt->name, (long long)n, sgn);
                st = vtu_step_of("DequantizeLinear", 13);
                st.n_in = 3;
                st.in[0] = &qref, st.in[1] = &s, st.in[2] = &z;
                if (!vtu_supports(dqt, &st, &dref)) fail_msg("dequantize: not supported");
                tc__tensor d = dtu_tensor(dref.dtype, dref.rank, dref.dims);
                out[0] = &d;
                kc.op_type = "DequantizeLinear";
                kc.in = st.in;
                assert_int_equal(dqt->run(&kc), TC_STATUS_OK);
                if (memcmp(d.data, dref.data, dref.nbytes) != 0) fail_msg("%s: n %lld signed %d differs", dqt->name, (long long)n, sgn);
                tc__tensor_free(&q);
                tc__tensor_free(&d);
            }
            tc__tensor_free(&qref), tc__tensor_free(&dref), tc__tensor_free(&s), tc__tensor_free(&z), tc__tensor_free(&x);
        }
}

static void test_qdq_tactics(void **state) {
    (void)state;
    if (!vtu_isa_ok(&tc__tactic_quantize_x8_avx2)) skip();
    check_qdq_tactics(&tc__tactic_quantize_x8_avx2, &tc__tactic_dequantize_x8_avx2);
    if (vtu_isa_ok(&tc__tactic_quantize_x8_avx512))
        check_qdq_tactics(&tc__tactic_quantize_x8_avx512, &tc__tactic_dequantize_x8_avx512);
}

/* The fake quantization epilogue (a QDQ pair fused into its producer) in the AVX-512 and AVX2 activations and
 * GEMM epilogue rows is bit-exact with tc__fake_quant, which the reference epilogue uses: ties, saturation both
 * ways, NaN, inf. */
static void test_fake_quant_act(void **state) {
    (void)state;
    enum { N = 1037 };
    float x[N], y[N];
    dtu_rng r = {21};
    const float scale = 0.0375f;
    for (int i = 0; i < N; i++) x[i] = (float)dtu_uniform(&r, -12.0, 12.0);
    for (int i = 0; i < N; i += 7) x[i] = ((float)(i % 301) - 150.5f) * scale; /* ties after the division */
    x[1] = NAN, x[2] = INFINITY, x[3] = -INFINITY, x[4] = 1e30f, x[5] = -0.0f;
    const float qmins[3] = {0.0f, -128.0f, -7.0f};
    for (int q = 0; q < 3; q++) {
        const tc__vact act = {TC__VACT_FAKE_QUANT, scale, qmins[q], 1.0f / scale};
        for (int isa = 0; isa < 2; isa++) {
            if (isa == 0 && !vtu_isa_ok(&tc__tactic_relu_f32_avx512)) continue;
            if (isa == 1 && !vtu_isa_ok(&tc__tactic_relu_f32_avx2)) continue;
            /* the elementwise kernels, then the GEMM epilogue rows (a 13-column tile of 79 rows, tails included) */
            for (int path = 0; path < 2; path++) {
                if (path == 0 && isa == 0) tc__vunary_f32_avx512(x, y, N, &act);
                if (path == 0 && isa == 1) tc__vunary_f32_avx2(x, y, N, &act);
                if (path == 1) {
                    const tc__gemm_epi e = {.alpha = 1.0f, .res_scale = 1.0f, .act = TC__ACT_FAKE_QUANT,
                                            .act_alpha = scale, .act_beta = qmins[q]};
                    memcpy(y, x, sizeof y);
                    if (isa == 0) tc__gemm_act_f32_avx512(y, 13, 79, 13, &e);
                    else tc__gemm_act_f32_avx2(y, 13, 79, 13, &e);
                }
                const int n = path == 0 ? N : 13 * 79;
                for (int i = 0; i < n; i++) {
                    const float want = tc__fake_quant(x[i], scale, qmins[q]);
                    if (memcmp(&want, &y[i], sizeof want) != 0)
                        fail_msg("%s %s qmin %g: x %.9g -> %.9g, want %.9g", isa ? "avx2" : "avx512",
                                 path ? "gemm rows" : "elementwise", (double)qmins[q], (double)x[i], (double)y[i],
                                 (double)want);
                }
            }
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_resnet_shapes),
        cmocka_unit_test(test_conv_edge_sizes),
        cmocka_unit_test(test_dense),
        cmocka_unit_test(test_nonneg),
        cmocka_unit_test(test_w7),
        cmocka_unit_test(test_zero_points),
        cmocka_unit_test(test_qdq_tactics),
        cmocka_unit_test(test_fake_quant_act),
        cmocka_unit_test(test_rejects),
    };
    return cmocka_run_group_tests(tests, vtu_setup, vtu_teardown);
}
