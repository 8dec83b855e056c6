/*
 * test_cpu_hconv.c - the FP16 and BF16 tactics (hconv.h: Conv NCHW and NCHW16c, MatMul, Gemm) against the
 * reference run on the operands rounded to the 16-bit type, two ways:
 *   exact:  X and W on coarse grids (X = i / 2, W = j / 4 with small integers), so every product and FP16
 *           chunk sum is exact and the kernel must match the reference to FP32 rounding: any wrong index,
 *           missing or extra term, tap offset, padding value or chunk flush shows;
 *   random: uniform X and W, where FP16 accumulation rounds: each add errs by up to half an FP16 ulp
 *           (2^-12 relative) of a partial sum of at most sum |x * w|, over at most TC__HCONV_CHUNK adds
 *           before the sum goes to FP32, so the error must stay within 4 * sqrt(chunk) * 2^-12 *
 *           sum |x * w| (a few standard deviations of a random walk of chunk roundings; FP16
 *           accumulation over all of a long K would not meet it). BF16 sums in FP32: within 2e-5 of
 *           sum |x * w|.
 * Cases cover edge sizes (1, primes, channels not multiples of 16 or 32, planes narrower than a tile),
 * strides, dilations, padding, K longer than a chunk, every fused activation with and without residual
 * and bias; 1 thread and a 2-thread pool must give identical bits; and the steps supports() must reject.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "backends/cpu/tactics.h"
#include "dense_test_util.h"

#include "backends/cpu/hconv.h"
#include "core/layout.h"
#include "cpu_vec_test_util.h"

enum { H_PLAIN = 0, H_BLOCKED = 1, H_PLAIN_IN = 2 }; /* conv layouts: NCHW; NCHW16c in and out; NCHW in, NCHW16c out */

typedef struct h_case {
    const char *op; /* "Conv", "MatMul", "Gemm" */
    int64_t n, cin, cout, h, w, k, s, d, pad;
    bool bias, residual, trans_b;
    tc__act act;
    int layout;
} h_case;

/* Random values: on a grid (exact: i * step for integers |i| <= span) or uniform in [-hi, hi] rounded to FP16
 * or BF16. */
static tc__tensor h_values(dtu_rng *r, int32_t rank, const int64_t *dims, bool exact, bool bf16, double step, int span,
                           double hi) {
    tc__tensor t = dtu_tensor(TC_DTYPE_FLOAT32, rank, dims);
    float *p = t.data;
    for (int64_t i = 0; i < tc__tensor_numel(&t); i++) {
        if (exact) p[i] = (float)(step * (double)((int)dtu_uniform(r, -span - 0.999, span + 0.999)));
        else if (bf16) p[i] = tc__bf16_to_f32(tc__f32_to_bf16((float)dtu_uniform(r, -hi, hi)));
        else p[i] = tc__f16_to_f32(tc__f32_to_f16((float)dtu_uniform(r, -hi, hi)));
        if (p[i] == 0.0f) p[i] = (float)step; /* never all zeros; few exact zeros */
    }
    return t;
}

static tc__tensor h_abs(const tc__tensor *t) {
    tc__tensor a = dtu_tensor(t->dtype, t->rank, t->dims);
    for (int64_t i = 0; i < tc__tensor_numel(t); i++) ((float *)a.data)[i] = fabsf(((const float *)t->data)[i]);
    return a;
}

static void check_case(uint64_t seed, const h_case *c, bool exact, bool bf16, const char *what) {
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
    tc__tensor x = h_values(&r, xr, xd, exact, bf16, 0.5, 6, 2.0), w = h_values(&r, wr, wd, exact, bf16, 0.25, 4, 1.0);
    tc__tensor b = vtu_random(&r, 1, bd, -1.0, 1.0);

    int64_t strides[2] = {c->s, c->s}, dils[2] = {c->d, c->d}, pads[4] = {c->pad, c->pad, c->pad, c->pad};
    tc__attr attrs[8];
    int na = 0;
    if (conv) {
        attrs[na++] = dtu_attr_ints("strides", strides, 2);
        attrs[na++] = dtu_attr_ints("dilations", dils, 2);
        attrs[na++] = dtu_attr_ints("pads", pads, 4);
    }
    if (gemm && c->trans_b) attrs[na++] = dtu_attr_int("transB", 1);
    const int ref_na = na;
    /* The reference: op on the rounded operands, own bias for Conv/Gemm, then the epilogue; and the op on
     * |X| and |W| (the scale of the rounding error). */
    const bool own_bias = c->bias && (conv || gemm);
    const int n_op = own_bias ? 3 : 2;
    const tc__tensor *rin[3] = {&x, &w, own_bias ? &b : NULL};
    tc__tensor ref, mag, res = {0};
    dtu_op op = conv ? DTU_OP(Conv) : gemm ? DTU_OP(Gemm) : DTU_OP(MatMul);
    dtu_run_ok(op, 13, attrs, ref_na, n_op, rin, 1, &ref);
    tc__tensor xa = h_abs(&x), wa = h_abs(&w);
    const tc__tensor *ain[2] = {&xa, &wa};
    dtu_run_ok(op, 13, attrs, ref_na, 2, ain, 1, &mag);
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

    const bool blk_out = conv && c->layout != H_PLAIN, blk_in = conv && c->layout == H_BLOCKED;
    attrs[na++] = dtu_attr_int(bf16 ? TC__ATTR_BF16 : TC__ATTR_FP16, 1);
    if (blk_out) {
        attrs[na++] = dtu_attr_int(TC__ATTR_LAYOUT_IN, (blk_in ? 1 : 0) | (c->residual ? (int64_t)1 << epi.residual_input : 0));
        attrs[na++] = dtu_attr_int(TC__ATTR_LAYOUT_OUT, 1);
    }
    const tc__attrs as = {na, attrs};
    const tc__tactic *t;
    if (bf16)
        t = conv ? (blk_out ? &tc__tactic_conv_nchw16c_bf16_avx512bf16 : &tc__tactic_conv_bf16_avx512bf16)
            : gemm ? &tc__tactic_gemm_bf16_avx512bf16
                   : &tc__tactic_matmul_bf16_avx512bf16;
    else
        t = conv ? (blk_out ? &tc__tactic_conv_nchw16c_fp16_avx512fp16 : &tc__tactic_conv_fp16_avx512fp16)
            : gemm ? &tc__tactic_gemm_fp16_avx512fp16
                   : &tc__tactic_matmul_fp16_avx512fp16;
    tc__tensor xt = blk_in ? vtu_reorder_nchw16c(&x, true) : x;
    tc__tensor rt = c->residual && blk_out ? vtu_reorder_nchw16c(&res, true) : res;
    tc__tensor wp = dtu_tensor(w.dtype, w.rank, w.dims);
    const tc__tensor *tin[5] = {&xt, &w, own_bias ? &b : NULL, NULL, NULL}, *outs[1] = {&ref};
    const bool in_const[3] = {false, true, true};
    tc__step_desc d = {c->op, 13, &as, n_op, tin, in_const, 1, outs, &epi, epi_bias ? &b : NULL,
                       c->residual ? &rt : NULL, NULL, 0};
    if (!vtu_isa_ok(t)) goto done;
    if (!t->supports(&d)) fail_msg("%s: not supported", what);
    assert_true(t->packs_input(&d, 1));
    if (t->pack(&d, 1, w.data, wp.data, &err) != TC_STATUS_OK) fail_msg("%s: pack: %s", what, err.msg);
    tin[1] = &wp;
    if (epi_bias) tin[epi.bias_input] = &b;
    if (c->residual) tin[epi.residual_input] = &rt;
    tc__tensor y1 = vtu_run_desc(t, &d, n_ctx, tin, &ref, NULL), y2 = vtu_run_desc(t, &d, n_ctx, tin, &ref, vtu_pool);
    if (memcmp(y1.data, y2.data, y1.nbytes) != 0) fail_msg("%s: 1 and 2 threads differ", what);
    tc__tensor y = blk_out ? vtu_reorder_nchw16c(&y1, false) : y1;
    /* The activations are 1-Lipschitz or close (HardSwish/GELU up to ~1.1), so the op's error bound holds
     * after the epilogue up to a small factor. */
    const float *got = y.data, *want = ref.data, *m = mag.data;
    const double k_op = (double)(c->cin * c->k * c->k);
    const double rand_tol = bf16 ? 2e-5 : 4.0 * sqrt(k_op < TC__HCONV_CHUNK ? k_op : TC__HCONV_CHUNK) * ldexp(1.0, -12);
    for (int64_t i = 0; i < tc__tensor_numel(&ref); i++) {
        const double bound = exact ? 1e-6 * (1.0 + m[i] + fabs(want[i])) : rand_tol * (1.0 + m[i]) * 1.2;
        if (!(fabs((double)got[i] - (double)want[i]) <= bound))
            fail_msg("%s [%s, %s]: element %lld: got %.9g, want %.9g (sum |x*w| %.6g)", what, t->name,
                     exact ? "exact" : "random", (long long)i, (double)got[i], (double)want[i], (double)m[i]);
    }
    if (blk_out) tc__tensor_free(&y);
    tc__tensor_free(&y1);
    tc__tensor_free(&y2);
done:
    if (blk_in) tc__tensor_free(&xt);
    if (c->residual && blk_out) tc__tensor_free(&rt);
    tc__tensor_free(&res);
    tc__tensor_free(&wp);
    tc__tensor_free(&ref);
    tc__tensor_free(&mag);
    tc__tensor_free(&xa);
    tc__tensor_free(&wa);
    tc__tensor_free(&b);
    tc__tensor_free(&w);
    tc__tensor_free(&x);
}

/* Both data kinds, both precisions. */
static void check_both(uint64_t seed, const h_case *c, const char *what) {
    for (int bf16 = 0; bf16 < 2; bf16++) {
        check_case(seed, c, true, bf16, what);
        check_case(seed + 100000, c, false, bf16, what);
    }
}

/* True when the FP16 packed weight fits in the FP32 weight's bytes (else supports() refuses). */
static bool h_fits(int64_t cin, int64_t cout) { return (cout + 15) / 16 * 16 * ((cin + 1) / 2 * 2) <= 2 * cout * cin; }

static h_case conv_case(int64_t cin, int64_t cout, int64_t hw, int64_t k, int64_t s, int layout) {
    return (h_case){"Conv", 1, cin, cout, hw, hw, k, s, 1, k / 2, true, false, false, TC__ACT_RELU, layout};
}

/* ResNet-50-like layers in the three layouts, with residuals; K up to 2304 (36 chunks). */
static void test_conv_resnet_shapes(void **state) {
    (void)state;
    h_case c = conv_case(3, 64, 30, 7, 2, H_PLAIN_IN);
    check_both(1, &c, "stem 7x7 s2 plain in");
    c = conv_case(64, 64, 14, 3, 1, H_BLOCKED);
    check_both(2, &c, "3x3 64");
    c = conv_case(64, 128, 15, 3, 2, H_BLOCKED);
    check_both(3, &c, "3x3 s2 64->128");
    c = conv_case(128, 64, 9, 1, 1, H_BLOCKED);
    c.residual = true;
    check_both(4, &c, "1x1 +res blocked");
    c = conv_case(64, 256, 7, 1, 1, H_PLAIN);
    c.residual = true;
    check_both(5, &c, "1x1 +res plain");
    c = conv_case(256, 96, 8, 1, 2, H_BLOCKED);
    c.bias = false;
    c.act = TC__ACT_NONE;
    check_both(6, &c, "1x1 s2 downsample");
    c = conv_case(256, 48, 5, 3, 1, H_BLOCKED);
    check_both(7, &c, "3x3 K 2304");
    /* stems of 3 and 4 channels: 16 pixels at a time into the image, then the row's tail; Clip and no activation */
    c = conv_case(4, 48, 35, 3, 1, H_PLAIN_IN);
    c.act = TC__ACT_CLIP;
    check_both(8, &c, "stem 3x3 of 4 channels, Clip");
    c = conv_case(3, 16, 40, 7, 2, H_PLAIN_IN);
    c.act = TC__ACT_NONE;
    c.residual = true;
    check_both(9, &c, "stem 7x7 s2 +res, no activation");
}

/* Edge sizes: odd and prime channel counts (plain layout), planes of 1 to 13, kernels 1/3/5, dilation. */
static void test_conv_edge_sizes(void **state) {
    (void)state;
    const int64_t cins[] = {1, 3, 5, 17, 67}, couts[] = {1, 7, 16, 33, 80}, hws[] = {1, 2, 5, 13};
    uint64_t seed = 100;
    for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 5; b++)
            for (size_t h = 0; h < 4; h++) {
                h_case c = conv_case(cins[a], couts[b], hws[h], (int64_t)(1 + 2 * ((a + b + h) % 3)),
                                     1 + (int64_t)((a + h) % 2), H_PLAIN);
                c.residual = (b + h) % 2 == 0;
                c.bias = (a + h) % 3 != 0;
                c.act = (tc__act)(seed % TC__ACT_FAKE_QUANT);
                char what[96];
                snprintf(what, sizeof what, "edge cin %lld cout %lld hw %lld k %lld s %lld", (long long)c.cin,
                         (long long)c.cout, (long long)c.h, (long long)c.k, (long long)c.s);
                if (!h_fits(c.cin, c.cout)) continue; /* not supported (see test_rejects) */
                check_both(seed++, &c, what);
            }
    h_case c = conv_case(16, 32, 11, 3, 1, H_BLOCKED);
    c.d = 2;
    c.pad = 2;
    check_both(200, &c, "dilation 2");
    c = conv_case(3, 16, 11, 3, 1, H_PLAIN); /* BF16: 3 channels per pixel, a run per tap (a pair, then a value alone) */
    c.d = 2;
    c.pad = 2;
    check_both(203, &c, "dilation 2, 3 channels");
    c = conv_case(32, 48, 6, 5, 1, H_BLOCKED);
    c.n = 3;
    c.residual = true;
    c.act = TC__ACT_SILU;
    check_both(201, &c, "batch 3 5x5");
    c = conv_case(16, 64, 13, 3, 2, H_PLAIN_IN);
    c.pad = 0;
    c.residual = true;
    check_both(202, &c, "no padding, plain in, blocked out");
}

/* MatMul [N, M, K] x [K, N] with fused bias, residual and activations; Gemm with transB and C. */
static void test_dense(void **state) {
    (void)state;
    const int64_t ks[] = {1, 7, 64, 129, 768}, ns[] = {3, 16, 17, 100, 256}, ms[] = {1, 5, 13, 128};
    uint64_t seed = 300;
    for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 5; b++)
            for (size_t m = 0; m < 4; m++) {
                /* (the emulation build, whose FP16 arithmetic is SIMDe's lane loops, under ASan: the small products
                 * only, every edge size still met) */
                if (TC_TEST_EMULATED && ks[a] * ns[b] * ms[m] > 200000) continue;
                h_case c = {"MatMul", 1 + (int64_t)(m % 2), ks[a], ns[b], ms[m], 1, 1, 1, 1, 0,
                            (a + m) % 2 == 0, (b + m) % 2 == 1, false, (tc__act)(seed % TC__ACT_FAKE_QUANT), H_PLAIN};
                if (!h_fits(c.cin, c.cout)) continue;
                char what[96];
                snprintf(what, sizeof what, "matmul k %lld n %lld m %lld", (long long)c.cin, (long long)c.cout,
                         (long long)c.h);
                check_both(seed++, &c, what);
                c.op = "Gemm";
                c.trans_b = (a + b) % 2 == 0;
                c.n = 1;
                check_both(seed++, &c, what);
            }
    /* 9 groups of 64 outputs over 128 rows: one strip per image with 1 and 2 threads (lowp_grid.h) */
    h_case w = {"MatMul", 1, 71, 529, 128, 1, 1, 1, 1, 0, true, false, false, TC__ACT_RELU, H_PLAIN};
    if (!TC_TEST_EMULATED) check_both(seed++, &w, "matmul k 71 n 529 m 128, whole plane");
}

/* The conversion into the 16-bit image from NCHW (scalar code) and from NCHW16c (vector code) input agrees, FP32
 * denormals, Inf and NaN included: a conv on both layouts of one input writes identical NCHW16c outputs. (A BF16
 * denormal would not show here in any case: vdpbf16ps takes denormal operands as zero.) */
static void test_conversion_layouts_agree(void **state) {
    (void)state;
    dtu_rng r = {31};
    const int64_t xd[4] = {1, 16, 5, 5}, wd[4] = {16, 16, 3, 3}, yd[4] = {1, 16, 5, 5};
    tc__tensor x = vtu_random(&r, 4, xd, -2.0, 2.0), w = vtu_random(&r, 4, wd, -1.0, 1.0);
    float *xv = x.data;
    for (int i = 0; i < 400; i += 3) xv[i] = (i % 2 ? -1.0f : 1.0f) * 1e-39f * (float)(1 + i % 7); /* denormals */
    xv[1] = 3e-41f, xv[4] = -1e-45f, xv[7] = INFINITY;
    tc__tensor xb = vtu_reorder_nchw16c(&x, true), y = dtu_tensor(TC_DTYPE_FLOAT32, 4, yd);
    int64_t pads[4] = {1, 1, 1, 1};
    for (int bf16 = 0; bf16 < 2; bf16++) {
        const tc__tactic *t = bf16 ? &tc__tactic_conv_nchw16c_bf16_avx512bf16 : &tc__tactic_conv_nchw16c_fp16_avx512fp16;
        if (!vtu_isa_ok(t)) continue;
        tc__tensor outs[2];
        for (int blk_in = 0; blk_in < 2; blk_in++) {
            tc__attr attrs[4] = {dtu_attr_ints("pads", pads, 4), dtu_attr_int(bf16 ? TC__ATTR_BF16 : TC__ATTR_FP16, 1),
                                 dtu_attr_int(TC__ATTR_LAYOUT_IN, blk_in), dtu_attr_int(TC__ATTR_LAYOUT_OUT, 1)};
            const tc__attrs as = {4, attrs};
            tc__tensor wp = dtu_tensor(w.dtype, w.rank, w.dims);
            const tc__tensor *in[2] = {blk_in ? &xb : &x, &w}, *out[1] = {&y};
            const bool in_const[2] = {false, true};
            const tc__epilogue none = tc__epilogue_none();
            tc__step_desc d = {"Conv", 13, &as, 2, in, in_const, 1, out, &none, NULL, NULL, NULL, 0};
            if (!t->supports(&d)) fail_msg("%s: not supported (blocked input %d)", t->name, blk_in);
            tc__err err = {0};
            assert_int_equal(t->pack(&d, 1, w.data, wp.data, &err), TC_STATUS_OK);
            in[1] = &wp;
            outs[blk_in] = vtu_run_desc(t, &d, 2, in, &y, NULL);
            tc__tensor_free(&wp);
        }
        if (memcmp(outs[0].data, outs[1].data, outs[0].nbytes) != 0)
            fail_msg("%s: NCHW and NCHW16c input give different results", t->name);
        tc__tensor_free(&outs[0]), tc__tensor_free(&outs[1]);
    }
    tc__tensor_free(&x), tc__tensor_free(&xb), tc__tensor_free(&w), tc__tensor_free(&y);
}

/* Steps the tactics must refuse: no tc.fp16 mark, group 2, weights computed at run time, a bad chain image
 * attribute, C_out too small for the packing to fit. */
static void test_rejects(void **state) {
    (void)state;
    dtu_rng r = {7};
    const int64_t xd[4] = {1, 8, 5, 5}, wd[4] = {32, 8, 3, 3}, yd[4] = {1, 32, 3, 3}, w1[4] = {7, 8, 3, 3};
    const int64_t y1d[4] = {1, 7, 3, 3};
    tc__tensor x = vtu_random(&r, 4, xd, -1, 1), w = vtu_random(&r, 4, wd, -1, 1), y = dtu_tensor(TC_DTYPE_FLOAT32, 4, yd);
    tc__tensor wsmall = vtu_random(&r, 4, w1, -1, 1), ysmall = dtu_tensor(TC_DTYPE_FLOAT32, 4, y1d);
    tc__attr attrs[3] = {dtu_attr_int(TC__ATTR_FP16, 1)};
    tc__attrs as = {1, attrs}, none = {0, attrs};
    const tc__tensor *in[2] = {&x, &w}, *out[1] = {&y};
    bool in_const[2] = {false, true};
    const tc__epilogue e = tc__epilogue_none();
    tc__step_desc d = {"Conv", 13, &as, 2, in, in_const, 1, out, &e, NULL, NULL, NULL, 0};
    const tc__tactic *t = &tc__tactic_conv_fp16_avx512fp16;
    assert_true(t->supports(&d));
    assert_false(tc__tactic_conv_bf16_avx512bf16.supports(&d)); /* marked fp16, not bf16 */
    assert_false(tc__tactic_conv_nchw16c_fp16_avx512fp16.supports(&d)); /* no layout attributes */
    d.attrs = &none; /* no mark: FP32 only */
    assert_false(t->supports(&d));
    attrs[0] = dtu_attr_int(TC__ATTR_FP16, 0);
    d.attrs = &as;
    assert_false(t->supports(&d));
    attrs[0] = dtu_attr_int(TC__ATTR_FP16, 1);
    attrs[1] = dtu_attr_int("group", 2);
    as.n = 2;
    assert_false(t->supports(&d));
    as.n = 1;
    in_const[1] = false; /* weights computed at run time */
    assert_false(t->supports(&d));
    in_const[1] = true;
    /* The chain's image attribute (it comes from a plan file): [Hp, Wp, Cp, pad top, pad left] must hold the 3x3
     * output of 32 channels and fit in the output's 1152 bytes. */
    const int64_t good[5] = {3, 3, 32, 0, 0}, odd_cp[5] = {3, 3, 33, 0, 0}, few_cp[5] = {3, 3, 30, 0, 0},
                  short_h[5] = {2, 3, 32, 0, 0}, big[5] = {5, 5, 32, 1, 1}, neg[5] = {3, 3, 32, -1, 0};
    const int64_t *const bad[5] = {odd_cp, few_cp, short_h, big, neg};
    attrs[1] = dtu_attr_ints(TC__ATTR_HALF_OUT_IMAGE, good, 5);
    as.n = 2;
    assert_true(t->supports(&d));
    attrs[1] = dtu_attr_ints(TC__ATTR_HALF_OUT_IMAGE, good, 4); /* 4 values */
    assert_false(t->supports(&d));
    for (int k = 0; k < 5; k++) {
        attrs[1] = dtu_attr_ints(TC__ATTR_HALF_OUT_IMAGE, bad[k], 5);
        if (t->supports(&d)) fail_msg("chain image %d accepted", k);
    }
    /* A residual image (tc.half_res_image, from a plan file too): the same checks, and only on a step with a residual */
    tc__tensor res = dtu_tensor(TC_DTYPE_FLOAT32, 4, yd);
    tc__epilogue er = tc__epilogue_none();
    er.residual_input = 2;
    attrs[1] = dtu_attr_ints(TC__ATTR_HALF_RES_IMAGE, good, 5);
    assert_false(t->supports(&d)); /* no residual */
    d.epi = &er, d.residual = &res;
    assert_true(t->supports(&d));
    attrs[1] = dtu_attr_ints(TC__ATTR_HALF_RES_IMAGE, good, 4);
    assert_false(t->supports(&d));
    for (int k = 0; k < 5; k++) {
        attrs[1] = dtu_attr_ints(TC__ATTR_HALF_RES_IMAGE, bad[k], 5);
        if (t->supports(&d)) fail_msg("residual image %d accepted", k);
    }
    d.epi = &e, d.residual = NULL;
    tc__tensor_free(&res);
    as.n = 1;
    in[1] = &wsmall, out[0] = &ysmall; /* 7 channels: 16 padded halves per tap and channel do not fit in 7 floats */
    assert_false(t->supports(&d));
    tc__tensor_free(&wsmall), tc__tensor_free(&ysmall);
    tc__tensor_free(&x), tc__tensor_free(&w), tc__tensor_free(&y);
}

/* The BF16 chain's image (tc.half_out_image), with and without a residual image (tc.half_res_image): each value the
 * BF16 rounding of the unchained step's FP32 output, where the FP32 residual holds the residual image's values. 64 and
 * 80 output channels take the tile's own epilogue for full groups (b_chain_epi; 80: and a group of one block), 24 the
 * shared one; no activation and ReLU take it, Clip does not. 1 and 2 threads. */
static void test_chain_images(void **state) {
    (void)state;
    const tc__tactic *t = &tc__tactic_conv_bf16_avx512bf16;
    if (!vtu_isa_ok(t)) skip();
    const int64_t couts[] = {64, 80, 24};
    const tc__act acts[] = {TC__ACT_NONE, TC__ACT_RELU, TC__ACT_CLIP};
    uint64_t seed = 900;
    for (int ci = 0; ci < 3; ci++)
        for (int a = 0; a < 3; a++)
            for (int with_res = 0; with_res < 2; with_res++) {
                const int64_t cin = 16, cout = couts[ci], hw = 7, cp = (cout + 1) / 2 * 2, bo = 1;
                const int64_t hp = hw + 2, wp = hw + 2;
                dtu_rng r = {seed++};
                const int64_t xd[4] = {1, cin, hw, hw}, wd[4] = {cout, cin, 3, 3}, bd[1] = {cout};
                const int64_t yd[4] = {1, cout, hw, hw};
                tc__tensor x = vtu_random(&r, 4, xd, -2.0, 2.0), w = vtu_random(&r, 4, wd, -1.0, 1.0);
                tc__tensor b = vtu_random(&r, 1, bd, -1.0, 1.0), res = vtu_random(&r, 4, yd, -2.0, 2.0);
                /* the residual image (1 pixel of border, never read) and the FP32 residual of its values */
                tc__tensor rimg = dtu_tensor(TC_DTYPE_FLOAT32, 4, yd), rf = dtu_tensor(TC_DTYPE_FLOAT32, 4, yd);
                assert_true(hp * wp * cp * 2 <= (int64_t)rimg.nbytes);
                memset(rimg.data, 0x7f, rimg.nbytes);
                for (int64_t ch = 0; ch < cout; ch++)
                    for (int64_t p = 0; p < hw * hw; p++) {
                        const uint16_t h = tc__f32_to_bf16(((const float *)res.data)[ch * hw * hw + p]);
                        ((uint16_t *)rimg.data)[((p / hw + bo) * wp + p % hw + bo) * cp + ch] = h;
                        const uint32_t u = (uint32_t)h << 16;
                        memcpy((float *)rf.data + ch * hw * hw + p, &u, sizeof u);
                    }
                int64_t pads[4] = {1, 1, 1, 1};
                tc__attr attrs[4] = {dtu_attr_ints("pads", pads, 4), dtu_attr_int(TC__ATTR_BF16, 1)};
                const int64_t ri[5] = {hp, wp, cp, bo, bo}, oi[5] = {hw, hw, cp, 0, 0};
                tc__epilogue epi = {-1, (int8_t)(with_res ? 3 : -1), (uint8_t)acts[a], 0, 0.0f, 6.0f};
                const tc__tensor *tin[4] = {&x, &w, &b, &rf};
                const bool in_const[3] = {false, true, true};
                tc__tensor like = dtu_tensor(TC_DTYPE_FLOAT32, 4, yd);
                tc__attrs plain_as = {2, attrs};
                tc__step_desc d = {"Conv", 13, &plain_as, 3, tin, in_const, 1, (const tc__tensor *[]){&like}, &epi, NULL,
                                   with_res ? &rf : NULL, NULL, 0};
                char what[96];
                snprintf(what, sizeof what, "bf16 chain C_out %lld act %d residual image %d", (long long)cout, (int)acts[a],
                         with_res);
                if (!t->supports(&d)) fail_msg("%s: not supported", what);
                tc__tensor wpk = dtu_tensor(w.dtype, w.rank, w.dims);
                tc__err err = {0};
                if (t->pack(&d, 1, w.data, wpk.data, &err) != TC_STATUS_OK) fail_msg("%s: pack: %s", what, err.msg);
                tin[1] = &wpk;
                tc__tensor y = vtu_run_desc(t, &d, with_res ? 4 : 3, tin, &like, vtu_pool);
                int na = 2;
                attrs[na++] = dtu_attr_ints(TC__ATTR_HALF_OUT_IMAGE, oi, 5);
                if (with_res) attrs[na++] = dtu_attr_ints(TC__ATTR_HALF_RES_IMAGE, ri, 5);
                tc__attrs chain_as = {na, attrs};
                d.attrs = &chain_as;
                if (with_res) tin[3] = &rimg, d.residual = &rimg;
                if (!t->supports(&d)) fail_msg("%s: not supported chained", what);
                for (int threads = 1; threads <= 2; threads++) {
                    tc__tensor img = vtu_run_desc(t, &d, with_res ? 4 : 3, tin, &like, threads == 2 ? vtu_pool : NULL);
                    for (int64_t ch = 0; ch < cout; ch++)
                        for (int64_t p = 0; p < hw * hw; p++) {
                            const uint16_t want = tc__f32_to_bf16(((const float *)y.data)[ch * hw * hw + p]);
                            const uint16_t got = ((const uint16_t *)img.data)[p * cp + ch];
                            if (got != want)
                                fail_msg("%s, %d thread(s): channel %lld pixel %lld is 0x%04x, want 0x%04x", what, threads,
                                         (long long)ch, (long long)p, got, want);
                        }
                    tc__tensor_free(&img);
                }
                tc__tensor_free(&y), tc__tensor_free(&wpk), tc__tensor_free(&like), tc__tensor_free(&rf);
                tc__tensor_free(&rimg), tc__tensor_free(&res), tc__tensor_free(&b), tc__tensor_free(&w), tc__tensor_free(&x);
            }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_resnet_shapes),
        cmocka_unit_test(test_conv_edge_sizes),
        cmocka_unit_test(test_dense),
        cmocka_unit_test(test_conversion_layouts_agree),
        cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_chain_images),
    };
    return cmocka_run_group_tests(tests, vtu_setup, vtu_teardown);
}
