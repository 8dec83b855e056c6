/*
 * test_cpu_conv_nchw16c.c - the direct NCHW16c convolution tactic (conv_nchw16c_f32_avx512), and,
 * compiled again by test_cpu_conv_nchw8c.c with TC_TEST_BLOCK 8, the NCHW8c one (conv_nchw8c_f32_avx2), against
 * the reference Conv plus the reference epilogue: the reference's NCHW input and residual are
 * reordered to NCHW16c for the tactic (the input stays NCHW when the case says plain), and the
 * tactic's NCHW16c output back. Cases: the ResNet-50 stem (plain input) and 3x3 / 1x1 layers,
 * MobileNet / EfficientNet-like 1x1 layers, planes of 1 to 17 pixels a side (primes, not multiples
 * of the tile), blocked and plain channel counts, asymmetric, large and automatic padding,
 * dilation, 5x5 kernels, batches, with and without the conv bias, every fused activation with and
 * without a residual, random configurations; channel counts that are no multiple of the block
 * (C_in and C_out 1, 3, 20, 24, 40: padded with zero lanes, core/layout.h), the output poisoned over
 * all its bytes and compared with its zero padding lanes whatever the epilogue makes of 0; 1 thread
 * and a 2-thread pool must give identical bits, and so must each tactic configuration
 * (tc__conv16_config: one or two units per task); the packed weight is a permutation of W and the
 * zeros of its padding; and the steps supports() rejects.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "backends/cpu/tactics.h"
#include "dense_test_util.h"

#include "core/layout.h"
#include "cpu_vec_test_util.h"

/* The block under test: 16 unless test_cpu_conv_nchw8c.c set 8; CBAD a channel count it does not divide. */
#ifndef TC_TEST_BLOCK
#define TC_TEST_BLOCK 16
#endif
#define BLK TC_TEST_BLOCK
#if BLK == 16
#define CBAD 24
#else
#define CBAD 20
#endif
/* The tactic under test: TC_TEST_TACTIC when the includer names one (test_cpu_winograd_nchw8c.c). */
#if defined(TC_TEST_TACTIC)
static const tc__tactic *const kConv = &TC_TEST_TACTIC;
#elif BLK == 16
static const tc__tactic *const kConv = &tc__tactic_conv_nchw16c_f32_avx512;
#else
static const tc__tactic *const kConv = &tc__tactic_conv_nchw8c_f32_avx2;
#endif

/* Relative tolerance per square root of the reduction length K = C_in * KH * KW. */
#ifndef CV_TOL_PER_SQRT_K
#define CV_TOL_PER_SQRT_K 1e-5
#endif

typedef struct cv_case {
    int64_t n, cin, cout, h, w, kh, kw;
    int64_t sh, sw, dh, dw;
    int64_t pads[4];      /* top, left, bottom, right */
    const char *auto_pad; /* NULL: explicit pads */
    bool blocked_in, bias, residual;
    tc__epilogue epi;
} cv_case;

/* A case with a k x k kernel, stride s, pads k / 2, blocked input when C_in allows it, a bias. */
static cv_case cv_plain_case(int64_t cin, int64_t cout, int64_t h, int64_t w, int64_t k, int64_t s) {
    cv_case c = {1, cin, cout, h, w, k, k, s, s, 1, 1, {k / 2, k / 2, k / 2, k / 2}, NULL,
                 cin % BLK == 0, true, false, tc__epilogue_none()};
    return c;
}

/* ---- layout conversions ------------------------------------------------------------------- */

/* A copy of the NCHW tensor t stored blocked (C padded up to BLK with zero lanes). */
static tc__tensor to_blocked(const tc__tensor *t) {
    tc__tensor b = vtu_blocked_tensor(BLK, t->dims);
    const size_t n = (size_t)t->dims[0], c = (size_t)t->dims[1], h = (size_t)t->dims[2], w = (size_t)t->dims[3];
    const float *s = t->data;
    float *d = b.data;
    for (size_t in = 0; in < n; in++)
        for (size_t ic = 0; ic < c; ic++)
            for (size_t ih = 0; ih < h; ih++)
                for (size_t iw = 0; iw < w; iw++) d[tc__nchwc_offset(BLK, c, h, w, in, ic, ih, iw)] = *s++;
    return b;
}

static int cmp_float(const void *a, const void *b) {
    const float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

/* True when the n floats of dst are the n_src of src and n - n_src zeros in some order. */
static __attribute__((unused)) bool is_permutation(const float *src, size_t n_src, const float *dst, size_t n) {
    float *a = calloc(n, sizeof(float)), *b = malloc(n * sizeof(float));
    assert_non_null(a);
    assert_non_null(b);
    assert_true(n_src <= n);
    memcpy(a, src, n_src * sizeof(float));
    memcpy(b, dst, n * sizeof(float));
    qsort(a, n, sizeof(float), cmp_float);
    qsort(b, n, sizeof(float), cmp_float);
    const bool same = memcmp(a, b, n * sizeof(float)) == 0;
    free(a);
    free(b);
    return same;
}

/* ---- running a case ------------------------------------------------------------------------- */

/* The attributes of a case (they point into c and into the arrays given). */
static int cv_attrs(const cv_case *c, int64_t *strides, int64_t *dils, int64_t *pads, tc__attr *attrs) {
    int na = 0;
    strides[0] = c->sh, strides[1] = c->sw, dils[0] = c->dh, dils[1] = c->dw;
    for (int i = 0; i < 4; i++) pads[i] = c->pads[i];
    attrs[na++] = dtu_attr_ints("strides", strides, 2);
    attrs[na++] = dtu_attr_ints("dilations", dils, 2);
    if (c->auto_pad) attrs[na++] = dtu_attr_string("auto_pad", c->auto_pad);
    else attrs[na++] = dtu_attr_ints("pads", pads, 4);
    return na;
}

/*
 * Runs the tactic on the blocked step d into a fresh poisoned NCHW16c output, with the scratch its
 * scratch_bytes() announces (none when it has no such function); fails unless OK and all scratch freed.
 */
static tc__tensor cv_run_config(const tc__step_desc *d, const tc__tensor *const *in, tc__pool_t pool,
                                const void *config) {
    tc__tensor y = vtu_blocked_tensor(BLK, d->out[0]->dims);
    vtu_poison(&y); /* padding lanes included */
    tc__tensor *out[1] = {&y};
    tc__err err = {0};
    const size_t bytes = kConv->scratch_bytes ? kConv->scratch_bytes(d) : 0;
    unsigned char *mem = malloc(bytes ? bytes : 1);
    assert_non_null(mem);
    tc__scratch scratch = {mem, bytes, 0};
    tc__kernel_ctx kc = {"test", "Conv", 13, d->attrs, d->n_in, in,   1,  out, &err, &scratch, d->epi,
                         NULL,   d->residual, pool, config, NULL, NULL};
    const tc_status st = kConv->run(&kc);
    if (st != TC_STATUS_OK) fail_msg("%s failed with status %d: %s", kConv->name, (int)st, err.msg);
    if (scratch.used != 0) fail_msg("%s left %zu bytes of scratch in use", kConv->name, scratch.used);
    free(mem);
    return y;
}

static tc__tensor cv_run(const tc__step_desc *d, const tc__tensor *const *in, tc__pool_t pool) {
    return cv_run_config(d, in, pool, NULL);
}

/* Each configuration the tactic offers for step d (at least one), on 1 and 2 threads, gives the bits `want`. */
static void cv_check_configs(const tc__step_desc *d, const tc__tensor *const *in, const tc__tensor *want,
                             const char *msg) {
    if (kConv->configs == NULL || kConv->config_bytes == 0) return;
    unsigned char cfg[TC__TACTIC_MAX_CONFIGS * TC__TACTIC_CONFIG_MAX];
    const int n = kConv->configs(d, cfg, TC__TACTIC_MAX_CONFIGS);
    if (n < 1) fail_msg("%s: no configuration", msg);
    for (int c = 0; c < n && c < TC__TACTIC_MAX_CONFIGS; c++) {
        const void *conf = cfg + (size_t)c * kConv->config_bytes;
        tc__err err = {0};
        if (kConv->check_config != NULL && !kConv->check_config(conf, &err))
            fail_msg("%s: configuration %d refused: %s", msg, c, err.msg);
        for (int threaded = 0; threaded < 2; threaded++) {
            tc__tensor y = cv_run_config(d, in, threaded ? vtu_pool : NULL, conf);
            if (memcmp(y.data, want->data, y.nbytes) != 0)
                fail_msg("%s: configuration %d on %d thread(s) differs from the default", msg, c, 1 + threaded);
            tc__tensor_free(&y);
        }
    }
}

/* Runs case c on random data: reference vs the tactic on 1 thread, and 1 vs 2 threads bit for bit. */
static void check_case(uint64_t seed, const cv_case *c, const char *what) {
    dtu_rng r = {seed};
    const int64_t xd[4] = {c->n, c->cin, c->h, c->w}, wd[4] = {c->cout, c->cin, c->kh, c->kw}, bd[1] = {c->cout};
    tc__tensor x = vtu_random(&r, 4, xd, -2.0, 2.0), w = vtu_random(&r, 4, wd, -1.0, 1.0);
    tc__tensor b = vtu_random(&r, 1, bd, -1.0, 1.0);
    int64_t strides[2], dils[2], pads[4];
    tc__attr attrs[6];
    int na = cv_attrs(c, strides, dils, pads, attrs);
    const int n_in = c->bias ? 3 : 2;
    const tc__tensor *in[3] = {&x, &w, c->bias ? &b : NULL};
    tc__tensor ref, res = {0}, res_b = {0};
    dtu_run_ok(DTU_OP(Conv), 13, attrs, na, n_in, in, 1, &ref);
    tc__epilogue epi = c->epi;
    if (c->residual) {
        res = vtu_random(&r, ref.rank, ref.dims, -2.0, 2.0);
        res_b = to_blocked(&res);
        epi.residual_input = (int8_t)n_in;
    }
    tc__err err = {0};
    if (tc__epilogue_apply(&epi, &ref, NULL, c->residual ? &res : NULL, &err) != TC_STATUS_OK)
        fail_msg("reference epilogue: %s", err.msg);

    const int64_t in_mask = (c->blocked_in ? 1 : 0) | (c->residual ? (int64_t)1 << n_in : 0);
    attrs[na++] = dtu_attr_int(TC__ATTR_LAYOUT_IN, in_mask);
    attrs[na++] = dtu_attr_int(TC__ATTR_LAYOUT_OUT, 1);
    if (BLK != 16) attrs[na++] = dtu_attr_int(TC__ATTR_LAYOUT_BLOCK, BLK);
    const tc__attrs as = {na, attrs};
    tc__tensor xb = c->blocked_in ? to_blocked(&x) : x, wp = {0}, bp = {0};
    const tc__tensor *tin[3] = {&xb, &w, in[2]}, *outs[1] = {&ref};
    const bool in_const[3] = {false, true, true};
    const tc__tensor *res_t = c->residual ? &res_b : NULL;
    tc__step_desc d = {"Conv", 13, &as, n_in, tin, in_const, 1, outs, &epi, NULL, res_t, NULL, 0};
    char msg[256];
    snprintf(msg, sizeof msg,
             "%s: N%lld %lld->%lld %lldx%lld k%lldx%lld s%lld,%lld d%lld,%lld pads %lld,%lld,%lld,%lld%s%s %s%s "
             "act %d%s",
             what, (long long)c->n, (long long)c->cin, (long long)c->cout, (long long)c->h, (long long)c->w,
             (long long)c->kh, (long long)c->kw, (long long)c->sh, (long long)c->sw, (long long)c->dh,
             (long long)c->dw, (long long)pads[0], (long long)pads[1], (long long)pads[2], (long long)pads[3],
             c->auto_pad ? " " : "", c->auto_pad ? c->auto_pad : "", c->blocked_in ? "blocked" : "plain",
             c->bias ? " +B" : "", (int)c->epi.act, c->residual ? " +res" : "");
    if (!kConv->supports(&d)) fail_msg("%s: not supported", msg);
    if (kConv->pack != NULL) { /* the direct tactic packs W (and B when C_out is padded), Winograd NCHW16c its U */
        assert_true(kConv->packs_input(&d, 1));
        const size_t wbytes = kConv->packed_bytes ? kConv->packed_bytes(&d, 1) : w.nbytes;
        wp = vtu_alloc_like(&w);
        free(wp.data);
        wp.data = malloc(wbytes);
        assert_non_null(wp.data);
        memset(wp.data, 0xff, wbytes); /* pack() writes every byte, its zeros included */
        wp.nbytes = wbytes;
        if (kConv->pack(&d, 1, w.data, wp.data, &err) != TC_STATUS_OK) fail_msg("%s: pack: %s", msg, err.msg);
#ifndef CV_PACK_TRANSFORMS /* the packed weight is W's values rearranged (and zeros), not a transform of them */
        assert_true(is_permutation(w.data, (size_t)tc__tensor_numel(&w), wp.data, wbytes / sizeof(float)));
#endif
        tin[1] = &wp;
        const bool pad_out = c->cout % BLK != 0;
        assert_int_equal(c->bias && kConv->packs_input(&d, 2), c->bias && pad_out);
        if (c->bias && pad_out) {
            const size_t bbytes = kConv->packed_bytes(&d, 2);
            assert_int_equal(bbytes, (size_t)((c->cout + BLK - 1) / BLK * BLK) * sizeof(float));
            bp = vtu_alloc_like(&b);
            free(bp.data);
            bp.data = malloc(bbytes);
            assert_non_null(bp.data);
            memset(bp.data, 0xff, bbytes);
            bp.nbytes = bbytes;
            if (kConv->pack(&d, 2, b.data, bp.data, &err) != TC_STATUS_OK) fail_msg("%s: pack B: %s", msg, err.msg);
            tin[2] = &bp;
        }
    }
    tc__tensor y1 = cv_run(&d, tin, NULL);
    tc__tensor y2 = cv_run(&d, tin, vtu_pool);
    if (memcmp(y1.data, y2.data, y1.nbytes) != 0) fail_msg("%s: 1 and 2 threads differ", msg);
    cv_check_configs(&d, tin, &y1, msg);
    tc__tensor want = to_blocked(&ref); /* its padding lanes zero */
    vtu_assert_close(&y1, &want, CV_TOL_PER_SQRT_K * sqrt((double)(c->cin * c->kh * c->kw)), msg);
    tc__tensor_free(&want);
    tc__tensor_free(&y2);
    tc__tensor_free(&y1);
    tc__tensor_free(&wp);
    tc__tensor_free(&bp);
    if (c->blocked_in) tc__tensor_free(&xb);
    if (c->residual) {
        tc__tensor_free(&res_b);
        tc__tensor_free(&res);
    }
    tc__tensor_free(&ref);
    tc__tensor_free(&b);
    tc__tensor_free(&w);
    tc__tensor_free(&x);
}

#define SKIP_WITHOUT_AVX512() \
    do {                      \
        if (!vtu_isa_ok(kConv)) skip(); \
    } while (0)

#ifndef TC_TEST_HARNESS_ONLY /* test_cpu_winograd_nchw8c.c has cases of its own */

/* ---- cases ------------------------------------------------------------------------------------ */

static const tc__epilogue kRelu = {-1, -1, TC__ACT_RELU, 0, 0.0f, 0.0f};

/* The ResNet-50 layers the tactic is for (ReLU, residual on the 1x1 expansion as in a bottleneck). */
static void test_resnet_shapes(void **state) {
    (void)state;
    SKIP_WITHOUT_AVX512();
    cv_case c = cv_plain_case(3, 64, 224, 224, 7, 2);
    c.epi = kRelu;
    check_case(1, &c, "stem 7x7 s2 p3 plain");
    c = cv_plain_case(64, 64, 56, 56, 3, 1);
    c.epi = kRelu;
    check_case(2, &c, "3x3 s1 64@56");
    c = cv_plain_case(128, 128, 56, 56, 3, 2);
    c.epi = kRelu;
    check_case(3, &c, "3x3 s2 128 56->28");
    c = cv_plain_case(256, 64, 56, 56, 1, 1);
    c.epi = kRelu;
    check_case(4, &c, "1x1 256->64@56");
    c = cv_plain_case(64, 256, 28, 28, 1, 1);
    c.epi = kRelu;
    c.residual = true;
    check_case(5, &c, "1x1 64->256@28 +res");
    c = cv_plain_case(256, 512, 56, 56, 1, 2);
    c.bias = false;
    check_case(6, &c, "1x1 s2 256->512 56->28 downsample");
    c = cv_plain_case(512, 512, 7, 7, 3, 1);
    c.epi = kRelu;
    check_case(7, &c, "3x3 512@7");
}

/* MobileNet / EfficientNet-like pointwise layers (ReLU6, SiLU). */
static void test_mobile_pointwise(void **state) {
    (void)state;
    SKIP_WITHOUT_AVX512();
    const tc__epilogue relu6 = {-1, -1, TC__ACT_CLIP, 0, 0.0f, 6.0f}, silu = {-1, -1, TC__ACT_SILU, 0, 0.0f, 0.0f};
    cv_case c = cv_plain_case(24, 144, 56, 56, 1, 1);
    c.epi = relu6;
    check_case(20, &c, "1x1 24->144 plain");
    c = cv_plain_case(16, 96, 112, 112, 1, 1);
    c.epi = relu6;
    check_case(21, &c, "1x1 16->96 blocked");
    c = cv_plain_case(144, 32, 28, 28, 1, 1);
    c.residual = true;
    check_case(22, &c, "1x1 144->32 +res");
    c = cv_plain_case(480, 80, 14, 14, 1, 1);
    c.epi = silu;
    check_case(23, &c, "1x1 480->80 silu");
    c = cv_plain_case(40, 240, 28, 28, 1, 1);
    c.blocked_in = false;
    c.epi = silu;
    check_case(24, &c, "1x1 40->240 plain");
}

/*
 * Planes of 1 to 17 pixels a side, 3x3 stride 1 and 2, 1x1 stride 1 and 2; C_out of 1 to 6 blocks
 * (one or two whole units per task, and a last unit of one block).
 */
static void test_edge_sizes(void **state) {
    (void)state;
    SKIP_WITHOUT_AVX512();
    const int64_t sizes[] = {1, 2, 3, 5, 7, 13, 17};
    const int64_t couts[] = {BLK, 2 * BLK, 3 * BLK, 4 * BLK, 5 * BLK, 6 * BLK};
    uint64_t seed = 100;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
            for (int64_t s = 1; s <= 2; s++) {
                cv_case c = cv_plain_case(16, couts[seed % 6], sizes[i], sizes[k], 3, s);
                check_case(seed++, &c, "edge 3x3");
                c = cv_plain_case(48, couts[seed % 6], sizes[k], sizes[i], 1, s);
                check_case(seed++, &c, "edge 1x1");
            }
}

/* Input channels: blocked 16 and 48, plain 1, 3, 5, 24. */
static void test_channels(void **state) {
    (void)state;
    SKIP_WITHOUT_AVX512();
    const int64_t blocked[] = {16, 48}, plain[] = {1, 3, 5, 24};
    uint64_t seed = 200;
    for (int i = 0; i < 2; i++)
        for (int64_t k = 1; k <= 3; k += 2) {
            cv_case c = cv_plain_case(blocked[i], 48, 11, 19, k, 1);
            check_case(seed++, &c, "blocked C_in");
        }
    for (int i = 0; i < 4; i++)
        for (int64_t k = 1; k <= 7; k += 2) {
            cv_case c = cv_plain_case(plain[i], 32, 13, 23, k, 1 + (int64_t)(seed % 2));
            c.blocked_in = false;
            check_case(seed++, &c, "plain C_in");
        }
    cv_case c = cv_plain_case(32, 16, 9, 9, 3, 1);
    c.blocked_in = false; /* a plain input whose C_in would allow blocking */
    check_case(seed++, &c, "plain C_in 32");
}

/* Asymmetric, large and automatic padding, dilation 2, 5x5 kernels, non-square strides, batches. */
static void test_windows(void **state) {
    (void)state;
    SKIP_WITHOUT_AVX512();
    uint64_t seed = 300;
    cv_case c = cv_plain_case(16, 32, 15, 17, 3, 1);
    c.pads[0] = 0, c.pads[1] = 2, c.pads[2] = 2, c.pads[3] = 0;
    check_case(seed++, &c, "asymmetric pads");
    c = cv_plain_case(16, 32, 9, 10, 3, 1);
    c.pads[0] = 4, c.pads[1] = 3, c.pads[2] = 3, c.pads[3] = 5; /* outputs with no tap in bounds */
    check_case(seed++, &c, "pads beyond the kernel");
    for (int64_t s = 1; s <= 2; s++) {
        c = cv_plain_case(32, 16, 14, 17, 3, s);
        c.auto_pad = "SAME_UPPER";
        check_case(seed++, &c, "SAME_UPPER");
        c = cv_plain_case(16, 32, 14, 17, 5, s);
        c.auto_pad = "SAME_LOWER";
        check_case(seed++, &c, "SAME_LOWER 5x5");
        c = cv_plain_case(16, 32, 14, 17, 3, s);
        c.auto_pad = "VALID";
        check_case(seed++, &c, "VALID");
        c = cv_plain_case(16, 48, 19, 23, 3, s);
        c.dh = c.dw = 2;
        c.pads[0] = c.pads[1] = c.pads[2] = c.pads[3] = 2;
        check_case(seed++, &c, "dilation 2");
        c = cv_plain_case(32, 32, 21, 18, 5, s);
        check_case(seed++, &c, "5x5");
        c = cv_plain_case(5, 32, 21, 18, 5, s);
        c.blocked_in = false;
        c.dh = 2;
        check_case(seed++, &c, "5x5 plain dilation 2,1");
    }
    c = cv_plain_case(16, 32, 20, 21, 3, 1);
    c.sh = 2, c.sw = 3, c.dw = 2;
    check_case(seed++, &c, "strides 2,3 dilation 1,2");
    c = cv_plain_case(16, 16, 12, 31, 1, 3);
    check_case(seed++, &c, "1x1 stride 3");
    c = cv_plain_case(16, 32, 8, 9, 1, 1);
    c.pads[0] = c.pads[3] = 1; /* a padded 1x1 convolution */
    check_case(seed++, &c, "1x1 padded");
    c = cv_plain_case(32, 48, 13, 11, 3, 1);
    c.kh = 1, c.kw = 3, c.pads[0] = c.pads[2] = 0;
    check_case(seed++, &c, "1x3");
    c = cv_plain_case(48, 32, 10, 12, 3, 2);
    c.n = 2;
    c.residual = true;
    check_case(seed++, &c, "batch 2");
    c = cv_plain_case(3, 64, 30, 30, 7, 2);
    c.n = 2;
    c.epi = kRelu;
    check_case(seed++, &c, "batch 2 plain stem");
}

/* Every activation, with and without the residual and the conv bias. */
static void test_epilogues(void **state) {
    (void)state;
    SKIP_WITHOUT_AVX512();
    for (int e = 0; e < VTU_N_EPILOGUES; e++)
        for (int res = 0; res < 2; res++) {
            cv_case c = cv_plain_case(32, 48, 9, 13, 3, 1);
            c.epi = vtu_epilogues[e];
            c.residual = res == 1;
            c.bias = (e + res) % 2 == 0;
            check_case(400 + (uint64_t)e * 2 + (uint64_t)res, &c, "epilogue 3x3");
            c = cv_plain_case(3, 32, 12, 12, 3, 2);
            c.epi = vtu_epilogues[e];
            c.residual = res == 1;
            c.bias = (e + res) % 2 == 1;
            check_case(500 + (uint64_t)e * 2 + (uint64_t)res, &c, "epilogue plain");
        }
}

/* Channel counts that are no multiple of the block, in and out (blocked input: padded too), 1x1 (one row) and 3x3,
 * strides 1 and 2, every activation (sigmoid(0) and the like in the padding lanes must come out zero), residual,
 * bias, batch 2, and C_out of 1 to 3 blocks (a padded last block in a whole unit, in a last unit of one block). */
static void test_padded(void **state) {
    (void)state;
    SKIP_WITHOUT_AVX512();
    const int64_t cins[] = {24, 40, 3, 1, 20, BLK}, couts[] = {24, 40, 3, 1, 20, 2 * BLK + 5};
    uint64_t seed = 700;
    for (size_t i = 0; i < sizeof cins / sizeof cins[0]; i++)
        for (size_t o = 0; o < sizeof couts / sizeof couts[0]; o++) {
            const int64_t k = (int64_t)((i + o) % 2) * 2 + 1, s = 1 + (int64_t)(o % 2);
            cv_case c = cv_plain_case(cins[i], couts[o], 5 + (int64_t)i, 6 + (int64_t)o, k, s);
            c.blocked_in = true;
            c.epi = vtu_epilogues[seed % VTU_N_EPILOGUES];
            c.residual = seed % 3 == 0;
            c.bias = seed % 2 == 0;
            c.n = 1 + (int64_t)(seed % 2);
            check_case(seed++, &c, "padded");
        }
    for (int e = 0; e < VTU_N_EPILOGUES; e++) { /* every activation on a padded 1x1 and a padded plain stem */
        cv_case c = cv_plain_case(24, 24, 9, 9, 1, 1);
        c.blocked_in = true;
        c.epi = vtu_epilogues[e];
        c.residual = e % 2 == 0;
        check_case(800 + (uint64_t)e, &c, "padded 1x1 epilogue");
        c = cv_plain_case(3, 20, 9, 9, 3, 2);
        c.blocked_in = false;
        c.epi = vtu_epilogues[e];
        c.bias = e % 2 == 1;
        check_case(900 + (uint64_t)e, &c, "padded plain-input epilogue");
    }
}

static void test_random(void **state) {
    (void)state;
    SKIP_WITHOUT_AVX512();
    dtu_rng r = {4242};
    for (int t = 0; t < 60; t++) {
        cv_case c = cv_plain_case(16, 16, 1, 1, 1, 1);
        c.blocked_in = dtu_next(&r) % 3 != 0;
        const bool padded = dtu_next(&r) % 3 == 0; /* channel counts that are no multiple of the block */
        c.cin = c.blocked_in && !padded ? BLK * (1 + (int64_t)(dtu_next(&r) % 3)) : 1 + (int64_t)(dtu_next(&r) % 40);
        c.cout = padded ? 1 + (int64_t)(dtu_next(&r) % 40) : BLK * (1 + (int64_t)(dtu_next(&r) % 6));
        c.n = 1 + (int64_t)(dtu_next(&r) % 2);
        c.kh = 1 + (int64_t)(dtu_next(&r) % 5);
        c.kw = 1 + (int64_t)(dtu_next(&r) % 5);
        c.sh = 1 + (int64_t)(dtu_next(&r) % 3);
        c.sw = 1 + (int64_t)(dtu_next(&r) % 3);
        c.dh = 1 + (int64_t)(dtu_next(&r) % 2);
        c.dw = 1 + (int64_t)(dtu_next(&r) % 2);
        c.h = 1 + (int64_t)(dtu_next(&r) % 24);
        c.w = 1 + (int64_t)(dtu_next(&r) % 40);
        for (int i = 0; i < 4; i++) c.pads[i] = (int64_t)(dtu_next(&r) % 4);
        const bool fits_h = c.h + c.pads[0] + c.pads[2] >= (c.kh - 1) * c.dh + 1;
        const bool fits_w = c.w + c.pads[1] + c.pads[3] >= (c.kw - 1) * c.dw + 1;
        if (!fits_h || !fits_w) {
            t--;
            continue;
        }
        c.bias = dtu_next(&r) % 2;
        c.residual = dtu_next(&r) % 3 == 0;
        c.epi = vtu_epilogues[dtu_next(&r) % VTU_N_EPILOGUES];
        check_case(1000 + (uint64_t)t, &c, "random");
    }
}

#endif /* TC_TEST_HARNESS_ONLY */

/* ---- supports() ------------------------------------------------------------------------------ */

/* supports() on a blocked Conv X [1, cin, 8, 8] -> Y [1, cout, 8, 8], W [cout, cin, 3, 3], pads 1. */
typedef struct sup_step {
    tc__tensor x, w, y, b, res;
    tc__attr attrs[6];
    int64_t pads[4];
    int na;
    tc__epilogue epi;
    bool in_const[3];
    int n_in;
    bool with_res;
} sup_step;

static void sup_init(sup_step *s, int64_t cin, int64_t cout) {
    memset(s, 0, sizeof *s);
    static float one = 1.0f;
    s->x = (tc__tensor){TC_DTYPE_FLOAT32, 4, {1, cin, 8, 8}, NULL, 0};
    s->w = (tc__tensor){TC_DTYPE_FLOAT32, 4, {cout, cin, 3, 3}, &one, 0};
    s->y = (tc__tensor){TC_DTYPE_FLOAT32, 4, {1, cout, 8, 8}, NULL, 0};
    s->b = (tc__tensor){TC_DTYPE_FLOAT32, 1, {cout}, NULL, 0};
    s->res = s->y;
    for (int i = 0; i < 4; i++) s->pads[i] = 1;
    s->attrs[0] = dtu_attr_ints("pads", s->pads, 4);
    s->attrs[1] = dtu_attr_int(TC__ATTR_LAYOUT_IN, 1);
    s->attrs[2] = dtu_attr_int(TC__ATTR_LAYOUT_OUT, 1);
    s->na = 3;
    if (BLK != 16) s->attrs[s->na++] = dtu_attr_int(TC__ATTR_LAYOUT_BLOCK, BLK);
    s->epi = tc__epilogue_none();
    s->in_const[1] = s->in_const[2] = true;
    s->n_in = 3;
}

static bool sup(const sup_step *s) {
    const tc__tensor *in[3] = {&s->x, &s->w, &s->b}, *out[1] = {&s->y};
    const tc__attrs as = {s->na, s->attrs};
    const tc__step_desc d = {"Conv", 13, &as, s->n_in, in, s->in_const, 1, out, &s->epi, NULL,
                             s->with_res ? &s->res : NULL, NULL, 0};
    return kConv->supports(&d);
}

/* run() fails cleanly on shapes that do not match the attributes. */
static void test_run_rejects(void **state) {
    (void)state;
    SKIP_WITHOUT_AVX512();
    dtu_rng r = {9};
    const int64_t xd[4] = {1, 16, 6, 6}, wd[4] = {CBAD, 16, 3, 3}, yd[4] = {1, CBAD, 6, 6};
    tc__tensor x = vtu_random(&r, 4, xd, -1.0, 1.0), w = vtu_random(&r, 4, wd, -1.0, 1.0);
    tc__tensor y = vtu_random(&r, 4, yd, -1.0, 1.0);
    const int64_t pads[4] = {1, 1, 1, 1};
    tc__attr attrs[4] = {dtu_attr_ints("pads", pads, 4), dtu_attr_int(TC__ATTR_LAYOUT_IN, 1),
                         dtu_attr_int(TC__ATTR_LAYOUT_OUT, 1), dtu_attr_int(TC__ATTR_LAYOUT_BLOCK, BLK)};
    const tc__attrs as = {BLK != 16 ? 4 : 3, attrs};
    const tc__tensor *in[2] = {&x, &w};
    tc__tensor *out[1] = {&y};
    tc__err err = {0};
    tc__epilogue none = tc__epilogue_none();
    tc__kernel_ctx kc = {"test", "Conv", 13, &as, 2, in, 1, out, &err, NULL, &none, NULL, NULL, NULL, NULL, NULL, NULL};
    assert_int_not_equal(kConv->run(&kc), TC_STATUS_OK); /* C_out CBAD: Y and W lack the padding */
    assert_true(strlen(err.msg) > 0);
    tc__tensor_free(&y);
    tc__tensor_free(&w);
    tc__tensor_free(&x);
}

#ifndef TC_TEST_HARNESS_ONLY
static void test_rejects(void **state) {
    (void)state;
    sup_step s;
    sup_init(&s, 32, 32);
    assert_true(sup(&s));
    s.attrs[s.na++] = dtu_attr_int("group", 2); /* grouped */
    s.w.dims[1] = 16;
    assert_false(sup(&s));
    sup_init(&s, 32, CBAD); /* C_out % BLK != 0: padded */
    assert_true(sup(&s));
    s.in_const[2] = false; /* ... but its bias is packed with zeros, so constant */
    assert_false(sup(&s));
    s.n_in = 2;
    assert_true(sup(&s));
    sup_init(&s, CBAD, 32); /* blocked input with C_in % BLK != 0: padded */
    assert_true(sup(&s));
    s.attrs[1].i = 0; /* the same input plain is fine */
    assert_true(sup(&s));
    sup_init(&s, 32, 32);
    s.in_const[1] = false; /* W computed at run time */
    assert_false(sup(&s));
    sup_init(&s, 32, 32);
    s.w.data = NULL;
    assert_false(sup(&s));
    sup_init(&s, 32, 32); /* rank 3 (1-D convolution) */
    s.x.rank = s.w.rank = s.y.rank = 3;
    s.pads[2] = s.pads[3] = 0;
    s.attrs[0].n = 2;
    assert_false(sup(&s));
    sup_init(&s, 32, 32); /* output not blocked */
    s.na = 2;
    assert_false(sup(&s));
    sup_init(&s, 32, 32); /* the other block */
    if (BLK != 16) s.na--;
    s.attrs[s.na++] = dtu_attr_int(TC__ATTR_LAYOUT_BLOCK, BLK == 16 ? 8 : 16);
    assert_false(sup(&s));
    sup_init(&s, 32, 32);
    s.attrs[2].i = 0;
    assert_false(sup(&s));
    sup_init(&s, 32, 32); /* other dtypes */
    s.x.dtype = s.y.dtype = TC_DTYPE_FLOAT16;
    assert_false(sup(&s));
    sup_init(&s, 32, 32);
    s.w.dtype = TC_DTYPE_FLOAT64;
    assert_false(sup(&s));
    sup_init(&s, 32, 32);
    s.b.dims[0] = 16; /* a bias of the wrong length */
    assert_false(sup(&s));
    sup_init(&s, 32, 32); /* an epilogue bias over the last dim */
    tc__tensor eb = {TC_DTYPE_FLOAT32, 1, {8}, NULL, 0};
    s.epi.bias_input = 3;
    const tc__tensor *in[3] = {&s.x, &s.w, &s.b}, *out[1] = {&s.y};
    const tc__attrs as = {s.na, s.attrs};
    const tc__step_desc d = {"Conv", 13, &as, 3, in, s.in_const, 1, out, &s.epi, &eb, NULL, NULL, 0};
    assert_false(kConv->supports(&d));
    sup_init(&s, 32, 32); /* a residual: blocked is fine, plain is not, another shape is not */
    s.with_res = true;
    s.epi.residual_input = 3;
    s.attrs[1].i = 1 | 8;
    assert_true(sup(&s));
    s.attrs[1].i = 1;
    assert_false(sup(&s));
    s.attrs[1].i = 1 | 8;
    s.res.dims[3] = 7;
    assert_false(sup(&s));
    sup_init(&s, 32, 32); /* an unknown activation */
    s.epi.act = TC__ACT_COUNT_;
    assert_false(sup(&s));
    sup_init(&s, 32, 32); /* not a Conv */
    const tc__step_desc other = {"ConvTranspose", 13, &as, 3, in, s.in_const, 1, out, &s.epi, NULL, NULL, NULL, 0};
    assert_false(kConv->supports(&other));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resnet_shapes), cmocka_unit_test(test_mobile_pointwise),
        cmocka_unit_test(test_edge_sizes),    cmocka_unit_test(test_channels),
        cmocka_unit_test(test_windows),       cmocka_unit_test(test_epilogues),
        cmocka_unit_test(test_random),        cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_run_rejects),   cmocka_unit_test(test_padded),
    };
    return cmocka_run_group_tests(tests, vtu_setup, vtu_teardown);
}
#endif /* TC_TEST_HARNESS_ONLY */
