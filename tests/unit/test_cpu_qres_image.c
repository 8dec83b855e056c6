/*
 * test_cpu_qres_image.c - the AVX2 INT8 Conv tactics (dense 16-bit and u7, depthwise 16-bit and u7) and the VNNI ones
 * (dense and depthwise, residual images of u8 codes) with their fused
 * residual given as an image of codes (tc.int8_res_image: the chain's multi-reader values, core/quant_attr.h):
 * against the reference Conv on the dequantized operands plus the dequantized residual (codes of the residual
 * scale, bytes of max(q, 0) or 16-bit centred codes, in a padded channels-last image with a border and padded
 * channels; or u8 codes with their zero point); against the same tactic with the dequantized residual as an FP32
 * tensor, bit for bit; and chained (its output an image of u8 codes): the codes of the FP32 output. Edge sizes:
 * channel counts that are not multiples of 8 or 16, planes of 1 to 9 pixels, strides 1 and 2. Bad attributes
 * (format, scale, an image larger than the tensor, no residual) are refused.
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

#define RI_TOL 2e-5

typedef struct ri_case {
    bool vnni;          /* the VNNI tactics (plain layouts; u8 residual images only), else the AVX2 ones */
    bool depthwise, u7; /* the tactic; u7: a non-negative X, and the residual image in bytes */
    int u8_zp;          /* >= 0: the residual image holds u8 codes with this zero point (TC__INT8_IMG_U8) */
    int64_t cin, cout, hw, k, s;
    tc__act act;
    bool out_own;             /* the chained step's out image: o_zp, o_lo, o_hi, o_scale, else 128, 1, 255 and 0.03 */
    int o_zp, o_lo, o_hi;
    float o_scale;
} ri_case;

/* x dequantized with symmetric codes of scale s (u7: max(q, 0)). */
static float ri_dequant(float x, float s, bool u7) {
    int q = (int)tc__q_code(x, 1.0f / s, 128, 1) - 128;
    return (float)(u7 && q < 0 ? 0 : q) * s;
}

static void check_case(uint64_t seed, const ri_case *c, const char *what) {
    dtu_rng r = {seed};
    const int64_t cin = c->depthwise ? c->cout : c->cin, oh = (c->hw + 2 * (c->k / 2) - c->k) / c->s + 1;
    const int64_t xd[4] = {1, cin, c->hw, c->hw}, wd[4] = {c->cout, c->depthwise ? 1 : cin, c->k, c->k};
    const int64_t bd[1] = {c->cout}, yd[4] = {1, c->cout, oh, oh};
    tc__tensor x = vtu_random(&r, 4, xd, c->u7 ? 0.0 : -2.0, 2.0), w = vtu_random(&r, 4, wd, -1.0, 1.0);
    tc__tensor b = vtu_random(&r, 1, bd, -1.0, 1.0), res = vtu_random(&r, 4, yd, c->u7 ? 0.0 : -2.0, 2.5);
    const float sx = 1.7f / 127.0f, rs = 2.1f / 127.0f; /* the tails of x and of the residual saturate */
    /* the residual image: channels padded to 4, 1 pixel of border on each side where it fits in the tensor */
    const bool u8 = c->u8_zp >= 0;
    const int64_t bo = oh >= 4 ? 1 : 0, hp = oh + 2 * bo, wp = oh + 2 * bo, cp = (c->cout + 3) / 4 * 4,
                  esz = c->u7 || u8 ? 1 : 2;
    tc__tensor rimg = dtu_tensor(TC_DTYPE_FLOAT32, 4, yd), rdq = dtu_tensor(TC_DTYPE_FLOAT32, 4, yd);
    assert_true(hp * wp * cp * esz <= (int64_t)rimg.nbytes);
    memset(rimg.data, 0x5a, rimg.nbytes); /* border and padded channels: never read */
    for (int64_t ch = 0; ch < c->cout; ch++)
        for (int64_t y = 0; y < oh; y++)
            for (int64_t z = 0; z < oh; z++) {
                const int64_t i = (ch * oh + y) * oh + z, at = ((y + bo) * wp + z + bo) * cp + ch;
                const float v = ((const float *)res.data)[i];
                if (u8) { /* codes u = round(v / rs) + z in [0, 255] */
                    const int u = (int)tc__q_code(v, 1.0f / rs, (uint8_t)c->u8_zp, 0);
                    ((uint8_t *)rimg.data)[at] = (uint8_t)u;
                    ((float *)rdq.data)[i] = (float)(u - c->u8_zp) * rs;
                    continue;
                }
                const float dq = ri_dequant(v, rs, c->u7);
                ((float *)rdq.data)[i] = dq;
                const int q = (int)__builtin_lrintf(dq / rs);
                if (c->u7) ((uint8_t *)rimg.data)[at] = (uint8_t)q;
                else ((int16_t *)rimg.data)[at] = (int16_t)q;
            }
    /* the reference: Conv on the dequantized X and W, bias, + the dequantized residual, activation */
    tc__tensor xq = dtu_tensor(x.dtype, 4, xd), wq = dtu_tensor(w.dtype, 4, wd);
    for (int64_t i = 0; i < tc__tensor_numel(&x); i++) ((float *)xq.data)[i] = ri_dequant(((float *)x.data)[i], sx, false);
    const int64_t per = tc__tensor_numel(&w) / c->cout;
    for (int64_t oc = 0; oc < c->cout; oc++) {
        double amax = 0;
        for (int64_t i = 0; i < per; i++) amax = fmax(amax, fabs(((float *)w.data)[oc * per + i]));
        const float sw = (float)(amax / 127.0);
        for (int64_t i = 0; i < per; i++)
            ((float *)wq.data)[oc * per + i] = (float)tc__q_round(((float *)w.data)[oc * per + i], 1.0f / sw) * sw;
    }
    int64_t st[2] = {c->s, c->s}, pd[4] = {c->k / 2, c->k / 2, c->k / 2, c->k / 2};
    tc__attr attrs[10];
    int na = 0;
    attrs[na++] = dtu_attr_ints("strides", st, 2);
    attrs[na++] = dtu_attr_ints("pads", pd, 4);
    if (c->depthwise) attrs[na++] = dtu_attr_int("group", c->cout);
    const tc__tensor *rin[3] = {&xq, &wq, &b};
    tc__tensor ref;
    dtu_run_ok(DTU_OP(Conv), 13, attrs, na, 3, rin, 1, &ref);
    tc__epilogue epi = {-1, 3, (uint8_t)c->act, 0, 0.0f, 6.0f};
    tc__err err = {0};
    if (tc__epilogue_apply(&epi, &ref, NULL, &rdq, &err) != TC_STATUS_OK) fail_msg("reference epilogue: %s", err.msg);

    attrs[na++] = dtu_attr_float(TC__ATTR_INT8_SCALE, sx);
    if (c->u7) attrs[na++] = dtu_attr_int(TC__ATTR_INT8_NONNEG, 1);
    const int plain_na = na;
    int64_t ri[7] = {hp, wp, cp, bo, bo, u8 ? TC__INT8_IMG_U8 : c->u7 ? TC__INT8_IMG_U7 : TC__INT8_IMG_S16, c->u8_zp};
    attrs[na++] = dtu_attr_ints(TC__ATTR_INT8_RES_IMAGE, ri, u8 ? 7 : 6);
    attrs[na++] = dtu_attr_float(TC__ATTR_INT8_RES_SCALE, rs);
    const tc__attrs as = {na, attrs}, plain = {plain_na, attrs};
    const tc__tactic *t = c->vnni ? (c->depthwise ? &tc__tactic_dwconv_int8_avx512vnni : &tc__tactic_conv_int8_avx512vnni)
                          : c->depthwise ? (c->u7 ? &tc__tactic_dwconv_int8_u7_avx2 : &tc__tactic_dwconv_int8_avx2)
                                         : (c->u7 ? &tc__tactic_conv_int8_u7_avx2 : &tc__tactic_conv_int8_avx2);
    if (!vtu_isa_ok(t)) goto done;
    const tc__tensor *tin[4] = {&x, &w, &b, &rimg}, *outs[1] = {&ref};
    const bool in_const[3] = {false, true, true};
    tc__step_desc d = {"Conv", 13, &as, 3, tin, in_const, 1, outs, &epi, NULL, &rimg, NULL, 0};
    if (!t->supports(&d)) fail_msg("%s [%s]: not supported", what, t->name);
    if (!u8 && (tc__tactic_conv_int8_avx512vnni.supports(&d) || tc__tactic_dwconv_int8_avx512vnni.supports(&d)))
        fail_msg("%s: a VNNI tactic takes a residual image of 16-bit or u7 codes", what);
    tc__tensor wp_ = dtu_tensor(w.dtype, w.rank, w.dims);
    if (t->pack(&d, 1, w.data, wp_.data, &err) != TC_STATUS_OK) fail_msg("%s: pack: %s", what, err.msg);
    tin[1] = &wp_;
    tc__tensor y1 = vtu_run_desc(t, &d, 4, tin, &ref, NULL), y2 = vtu_run_desc(t, &d, 4, tin, &ref, vtu_pool);
    if (memcmp(y1.data, y2.data, y1.nbytes) != 0) fail_msg("%s [%s]: 1 and 2 threads differ", what, t->name);
    char msg[160];
    snprintf(msg, sizeof msg, "%s [%s]", what, t->name);
    vtu_assert_close(&y1, &ref, RI_TOL * sqrt((double)(per)), msg);
    /* a chained step (its output the next layer's image of u8 codes, zero point 128): the codes of y1, exactly (the
     * epilogue's 16-channel path reads the residual image too) */
    {
        const int o_zp = c->out_own ? c->o_zp : 128, o_lo = c->out_own ? c->o_lo : 1, o_hi = c->out_own ? c->o_hi : 255;
        const float o_s = c->out_own ? c->o_scale : 0.03f;
        attrs[na] = dtu_attr_ints(TC__ATTR_INT8_OUT_IMAGE,
                                  (int64_t[]){oh, oh, cp, 0, 0, o_zp, o_lo, TC__INT8_IMG_U8, o_hi}, o_hi == 255 ? 8 : 9);
        attrs[na + 1] = dtu_attr_float(TC__ATTR_INT8_OUT_SCALE, o_s);
        const tc__attrs chained = {na + 2, attrs};
        d.attrs = &chained;
        if (!t->supports(&d)) fail_msg("%s [%s]: not supported with an out image", what, t->name);
        tc__tensor yi = vtu_run_desc(t, &d, 4, tin, &ref, vtu_pool);
        for (int64_t ch = 0; ch < c->cout; ch++)
            for (int64_t i = 0; i < oh * oh; i++) {
                uint8_t want = tc__q_code(((const float *)y1.data)[ch * oh * oh + i], 1.0f / o_s, (uint8_t)o_zp,
                                          (uint8_t)o_lo);
                if (want > o_hi) want = (uint8_t)o_hi;
                const uint8_t got = ((const uint8_t *)yi.data)[i * cp + ch];
                if (got != want) fail_msg("%s [%s]: out image code of channel %lld pixel %lld is %d, want %d", what,
                                          t->name, (long long)ch, (long long)i, got, want);
            }
        tc__tensor_free(&yi);
    }
    /* the same tactic with the dequantized residual as FP32: the same bits */
    d.attrs = &plain;
    d.residual = &rdq;
    tin[3] = &rdq;
    tc__tensor y3 = vtu_run_desc(t, &d, 4, tin, &ref, vtu_pool);
    vtu_assert_close(&y1, &y3, 0.0, msg);
    tc__tensor_free(&y1), tc__tensor_free(&y2), tc__tensor_free(&y3), tc__tensor_free(&wp_);
done:
    tc__tensor_free(&ref), tc__tensor_free(&xq), tc__tensor_free(&wq), tc__tensor_free(&rimg), tc__tensor_free(&rdq);
    tc__tensor_free(&res), tc__tensor_free(&b), tc__tensor_free(&w), tc__tensor_free(&x);
}

static void test_res_image(void **state) {
    (void)state;
    /* (24 channels of 11 x 11: tiles of up to 12 pixels, run in two parts) */
    const int64_t couts[] = {16, 20, 33, 64, 24}, hws[] = {1, 4, 7, 9, 11};
    uint64_t seed = 1;
    for (int dwv = 0; dwv < 2; dwv++)
        for (int u7 = 0; u7 < 2; u7++)
            for (int i = 0; i < 10; i++) { /* i >= 5: the residual image in u8 codes (zero points 128 and 90) */
                ri_case c = {false, dwv == 1, u7 == 1, i < 5 ? -1 : i % 2 ? 128 : 90, 5 + 8 * (i % 5), couts[i % 5], hws[i % 5],
                             i % 5 == 0 ? 1 : 3, i % 5 == 4 ? 1 : 1 + i % 2, (tc__act)(seed % TC__ACT_FAKE_QUANT),
                             false, 0, 0, 0, 0.0f};
                if (c.depthwise && c.k == 1) c.k = 3; /* (a 1x1 depthwise packing does not fit, nor 20 channels') */
                if (c.depthwise && c.cout == 20) c.cout = 24;
                char what[120];
                snprintf(what, sizeof what, "%s %s C %lld -> %lld hw %lld k %lld s %lld res u8 zp %d",
                         dwv ? "depthwise" : "dense", u7 ? "u7" : "s16", (long long)c.cin, (long long)c.cout,
                         (long long)c.hw, (long long)c.k, (long long)c.s, c.u8_zp);
                check_case(seed++, &c, what);
            }
    /* the VNNI tactics: u8 residual images (zero points 128 and 90) */
    for (int dwv = 0; dwv < 2; dwv++)
        for (int i = 0; i < 10; i++) {
            ri_case c = {true, dwv == 1, false, i % 2 ? 128 : 90, 5 + 8 * (i % 5), couts[i % 5], hws[i % 5],
                         i % 5 == 0 ? 1 : 3, i % 5 == 4 ? 1 : 1 + i % 2, (tc__act)(seed % TC__ACT_FAKE_QUANT),
                             false, 0, 0, 0, 0.0f};
            if (c.depthwise && c.k == 1) c.k = 3;
            if (c.depthwise && c.cout == 20) c.cout = 24;
            char what[120];
            snprintf(what, sizeof what, "VNNI %s C %lld -> %lld hw %lld k %lld s %lld res u8 zp %d",
                     dwv ? "depthwise" : "dense", (long long)c.cin, (long long)c.cout, (long long)c.hw, (long long)c.k,
                     (long long)c.s, c.u8_zp);
            check_case(seed++, &c, what);
        }
}

/* The VNNI epilogue's codes for the next layer (its full-group path: a ReLU folded into the lower clamp, vpmovusdb's
 * saturation as the upper one at 255) against the FP32 output quantized, with zero points 0, 37 and 128, lowest codes 0
 * and 1, highest 255 and 127, a scale that saturates both ends (and one of 1e-7: sums far beyond 2^31 codes), groups of
 * 4 blocks and a group of 1. */
static void test_out_image_codes(void **state) {
    (void)state;
    const int zl[][3] = {{128, 1, 255}, {0, 0, 255}, {37, 0, 255}, {0, 0, 127}, {100, 1, 127}, {128, 1, 255}};
    const float scales[] = {0.01f, 0.02f, 0.005f, 0.01f, 0.02f, 1e-7f};
    const tc__act acts[] = {TC__ACT_RELU, TC__ACT_NONE, TC__ACT_CLIP};
    uint64_t seed = 500;
    for (int z = 0; z < 6; z++)
        for (int a = 0; a < 3; a++)
            for (int k = 0; k < 2; k++) {
                ri_case c = {true, false, false, 128, 24, k ? 80 : 64, 7, 1 + 2 * k, 1, acts[a], true,
                             zl[z][0], zl[z][1], zl[z][2], scales[z]};
                char what[120];
                snprintf(what, sizeof what, "VNNI out image zp %d lo %d hi %d scale %g act %d C_out %lld", zl[z][0],
                         zl[z][1], zl[z][2], (double)scales[z], (int)acts[a], (long long)c.cout);
                check_case(seed++, &c, what);
            }
}

/* Residual image attributes the tactics refuse. */
static void test_res_image_rejects(void **state) {
    (void)state;
    dtu_rng r = {9};
    const int64_t xd[4] = {1, 16, 6, 6}, wd[4] = {16, 16, 3, 3};
    tc__tensor x = vtu_random(&r, 4, xd, 0.0, 1.0), w = vtu_random(&r, 4, wd, -1.0, 1.0), y = dtu_tensor(TC_DTYPE_FLOAT32, 4, xd);
    int64_t pads[4] = {1, 1, 1, 1};
    const int64_t good[6] = {6, 6, 16, 0, 0, TC__INT8_IMG_S16};
    const int64_t bad[][6] = {{6, 6, 16, 0, 0, 0}, {6, 6, 16, 0, 0, 3}, {6, 6, 12, 0, 0, TC__INT8_IMG_S16},
                              {90, 6, 16, 0, 0, TC__INT8_IMG_S16}, {6, 6, 16, 1, 0, TC__INT8_IMG_S16}};
    const tc__tensor *in[3] = {&x, &w, &y}, *out[1] = {&y};
    const bool in_const[2] = {false, true};
    tc__epilogue epi = {-1, 2, TC__ACT_NONE, 0, 0.0f, 0.0f};
    for (int k = -2; k < (int)(sizeof bad / sizeof bad[0]); k++) {
        tc__attr a[4] = {dtu_attr_ints("pads", pads, 4), dtu_attr_float(TC__ATTR_INT8_SCALE, 0.01f),
                         dtu_attr_ints(TC__ATTR_INT8_RES_IMAGE, (int64_t *)(k < 0 ? good : bad[k]), 6),
                         dtu_attr_float(TC__ATTR_INT8_RES_SCALE, k == -1 ? -1.0f : 0.02f)};
        const tc__attrs as = {4, a};
        tc__step_desc d = {"Conv", 13, &as, 2, in, in_const, 1, out, &epi, NULL, &y, NULL, 0};
        const bool want = k == -2;
        if (tc__tactic_conv_int8_avx2.supports(&d) != want) fail_msg("case %d: supports() is not %d", k, (int)want);
        if (k == -2) { /* no residual at all */
            d.residual = NULL, d.epi = &(tc__epilogue){-1, -1, TC__ACT_NONE, 0, 0.0f, 0.0f};
            if (tc__tactic_conv_int8_avx2.supports(&d)) fail_msg("a residual image without a residual is taken");
        }
    }
    /* u8 codes need their zero point (7 ints), in [0, 255]; the other formats have none */
    const int64_t seven[][7] = {{6, 6, 16, 0, 0, TC__INT8_IMG_U8, 128}, {6, 6, 16, 0, 0, TC__INT8_IMG_U8, 256},
                                {6, 6, 16, 0, 0, TC__INT8_IMG_S16, 0}};
    for (int k = 0; k < 4; k++) {
        tc__attr a[4] = {dtu_attr_ints("pads", pads, 4), dtu_attr_float(TC__ATTR_INT8_SCALE, 0.01f),
                         k == 3 ? dtu_attr_ints(TC__ATTR_INT8_RES_IMAGE, (int64_t *)seven[0], 6)
                                : dtu_attr_ints(TC__ATTR_INT8_RES_IMAGE, (int64_t *)seven[k], 7),
                         dtu_attr_float(TC__ATTR_INT8_RES_SCALE, 0.02f)};
        const tc__attrs as = {4, a};
        tc__step_desc d = {"Conv", 13, &as, 2, in, in_const, 1, out, &epi, NULL, &y, NULL, 0};
        if (tc__tactic_conv_int8_avx2.supports(&d) != (k == 0)) fail_msg("u8 case %d: supports() is not %d", k, k == 0);
    }
    tc__tensor_free(&x), tc__tensor_free(&w), tc__tensor_free(&y);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_res_image),
        cmocka_unit_test(test_out_image_codes),
        cmocka_unit_test(test_res_image_rejects),
    };
    return cmocka_run_group_tests(tests, vtu_setup, vtu_teardown);
}
