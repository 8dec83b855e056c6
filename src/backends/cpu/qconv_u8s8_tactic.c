/*
 * qconv_u8s8_tactic.c - the int8 tactics of Conv (NCHW and NCHW16c), MatMul and Gemm with constant
 * weights (qconv_u8s8.h): which steps they take, the weight quantization and packing done at build,
 * and the tactic tables. The VNNI kernels (and the AMX driver) are in qconv_u8s8_avx512vnni.c, the AMX tiles
 * in amx_panel_amx.c, the AVX2 ones in qconv_s16_avx2.c.
 */
#include <math.h>
#include <string.h>

#include "backends/cpu/chain_geom.h"
#include "backends/cpu/qconv_u8s8.h"
#include "backends/cpu/vec_isa.h"

#define Q_ISA (TC__VEC_ISA_AVX512 | (uint64_t)TC__ISA_AVX512VNNI)

static size_t q_round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

/* The input scale of the node, or 0 when absent or not a positive finite number. */
static float q_scale(const tc__attrs *a) {
    float s = tc__attr_float(a, TC__ATTR_INT8_SCALE, 0.0f);
    return isfinite(s) && s > 0.0f ? s : 0.0f;
}

/* Fills the derived sizes and checks the whole problem stays in 2^31 and the packed weight fits. */
static bool q_finish(tc__qconv_geom *g) {
    g->cp = q_round_up(g->cin, g->depthwise ? 16 : 4);
    g->cout16 = q_round_up(g->cout, 16);
    const size_t lim = (size_t)1 << 31;
    if (g->batch > lim || g->hp > lim || g->wp > lim || g->cp > lim) return false;
    size_t img = g->hp * g->wp;
    if (img > lim / g->cp || img * g->cp > lim / g->batch) return false;
    if (g->oh * g->ow > lim / 16 || g->cout16 * g->kh * g->kw * g->cp > lim) return false; /* scatter indices */
    /* the FP32 weight is C_out * C_in * taps floats (depthwise: C * taps): the packing must fit in its bytes */
    if (g->depthwise) return tc__int8_dw_weight_fits((int64_t)g->cout, (int64_t)(g->kh * g->kw));
    return tc__int8_weight_fits((int64_t)g->cout, (int64_t)g->cin, (int64_t)(g->kh * g->kw));
}

/* The INT8 chain's attributes (core/quant_attr.h), checked against the shapes: the images must fit in the
 * FP32 tensors' bytes. */
static bool q_chain(const tc__step_desc *d, tc__qconv_geom *g) {
    g->in_image = tc__attr_int(d->attrs, TC__ATTR_INT8_IN_IMAGE, 0) == 1;
    if (g->in_image && !tc__lowp_in_image_fits(d, g->batch, g->hp, g->wp, g->cp, 1)) return false;
    tc__lowp_image im;
    /* zero point, lowest code, and optionally the element format and the highest code */
    int64_t ex[4] = {0, 0, TC__INT8_IMG_OWN, 255};
    int r = tc__lowp_out_image(d, TC__ATTR_INT8_OUT_IMAGE, 4, 4, 1, g->batch, g->oh, g->ow, g->cout, &im, ex);
    if (r < 0) r = tc__lowp_out_image(d, TC__ATTR_INT8_OUT_IMAGE, 3, 4, 1, g->batch, g->oh, g->ow, g->cout, &im, ex);
    if (r < 0) r = tc__lowp_out_image(d, TC__ATTR_INT8_OUT_IMAGE, 2, 4, 1, g->batch, g->oh, g->ow, g->cout, &im, ex);
    g->out_image = r == 1;
    if (r <= 0) return r == 0;
    const float s = tc__attr_float(d->attrs, TC__ATTR_INT8_OUT_SCALE, 0.0f);
    if (!isfinite(s) || !(s > 0.0f) || ex[0] > 255 || ex[1] > 1 || ex[2] > TC__INT8_IMG_U8) return false;
    if ((ex[3] != 255 && ex[3] != 127) || ex[0] > ex[3]) return false;
    g->o_hp = im.hp, g->o_wp = im.wp, g->o_cp = im.cp, g->o_pt = im.pt, g->o_pl = im.pl;
    g->o_zp = (uint8_t)ex[0], g->o_lo = (uint8_t)ex[1], g->o_fmt = (uint8_t)ex[2], g->o_hi = (uint8_t)ex[3];
    g->o_scale = s;
    return true;
}

/* The residual image's attributes (core/quant_attr.h), checked against the output's shape (the residual's). */
static bool q_res_image(const tc__step_desc *d, tc__qconv_geom *g) {
    const int64_t *v = NULL;
    const size_t n = tc__attr_ints(d->attrs, TC__ATTR_INT8_RES_IMAGE, &v);
    if (n == 0) return true;
    if (d->residual == NULL || (n != 6 && n != 7)) return false;
    if (v[5] != TC__INT8_IMG_U7 && v[5] != TC__INT8_IMG_S16 && v[5] != TC__INT8_IMG_U8) return false;
    if ((v[5] == TC__INT8_IMG_U8) != (n == 7) || (n == 7 && (v[6] < 0 || v[6] > 255))) return false; /* u8: its z */
    tc__lowp_image im;
    int64_t ex[2] = {0, 0};
    const size_t elem = v[5] == TC__INT8_IMG_S16 ? 2 : 1;
    if (tc__lowp_out_image(d, TC__ATTR_INT8_RES_IMAGE, (int)n - 5, 1, elem, g->batch, g->oh, g->ow, g->cout, &im, ex) != 1)
        return false;
    const int64_t fmt = ex[0];
    g->r_zp = (uint8_t)ex[1];
    const float s = tc__attr_float(d->attrs, TC__ATTR_INT8_RES_SCALE, 0.0f);
    if (!isfinite(s) || !(s > 0.0f)) return false;
    g->res_image = true;
    g->r_hp = im.hp, g->r_wp = im.wp, g->r_cp = im.cp, g->r_pt = im.pt, g->r_pl = im.pl;
    g->r_fmt = (uint8_t)fmt, g->r_scale = s;
    return true;
}

bool tc__qconv_out_image_ok(const tc__step_desc *d, const tc__qconv_geom *g, bool u7) {
    const size_t elem = tc__qconv_out_elem(g, u7);
    if (tc__qconv_out_fmt(g, u7) == TC__INT8_IMG_U7 && (g->o_zp != 128 || g->o_lo != 1)) return false; /* symmetric */
    return g->batch * g->o_hp * g->o_wp * g->o_cp * elem <= (size_t)tc__tensor_numel(d->out[0]) * sizeof(float);
}

bool tc__qconv_geometry(const tc__step_desc *d, tc__qconv_geom *g) {
    memset(g, 0, sizeof *g);
    const float sx = q_scale(d->attrs);
    tc__lowp_shape s;
    bool depthwise = false;
    if (sx == 0.0f) return tc__refuse(d, "no INT8 input scale (tc.int8_scale: not calibrated, or kept FP32)");
    if (!tc__lowp_shape_of(d, &s) && !(depthwise = tc__lowp_dw_shape_of(d, &s)))
        return tc__refuse(d, "not a Conv (one group or depthwise), MatMul or Gemm the INT8 kernels take");
    *g = (tc__qconv_geom){.batch = s.batch, .cin = s.cin, .cout = s.cout, .ih = s.ih, .iw = s.iw, .oh = s.oh, .ow = s.ow,
                          .kh = s.kh, .kw = s.kw, .sh = s.sh, .sw = s.sw, .dh = s.dh, .dw = s.dw, .pt = s.pt, .pl = s.pl,
                          .hp = s.hp, .wp = s.wp, .in_layout = s.in_layout, .out_layout = s.out_layout, .x_scale = sx};
    const int64_t z = tc__attr_int(d->attrs, TC__ATTR_INT8_ZERO_POINT, -1);
    if (z > 255 || z < -1) return tc__refuse(d, "input zero point %lld outside the u8 codes", (long long)z);
    g->zero_point = z < 0 ? 128 : (uint8_t)z;
    g->lo = z < 0 ? 1 : 0;
    const int64_t hi = tc__attr_int(d->attrs, TC__ATTR_INT8_CODE_MAX, 255);
    if ((hi != 255 && hi != 127) || g->zero_point > hi) return tc__refuse(d, "input codes up to %lld", (long long)hi);
    g->hi = (uint8_t)hi;
    g->nonneg = tc__attr_int(d->attrs, TC__ATTR_INT8_NONNEG, 0) == 1;
    g->w7 = tc__attr_int(d->attrs, TC__ATTR_INT8_W7, 0) == 1;
    g->depthwise = depthwise;
    if (!q_finish(g)) return tc__refuse(d, "too large for the INT8 kernels' indices, or its packing exceeds the FP32 weight's bytes");
    return q_chain(d, g) && q_res_image(d, g);
}

/* Which step this tactic family takes: the geometry (into g), the weight constant, the layouts, the epilogue. */
static bool q_takes(const tc__step_desc *d, bool blocked, tc__qconv_geom *g) {
    tc__lowp_shape s;
    return tc__qconv_geometry(d, g) && tc__lowp_shape_of(d, &s) && tc__lowp_step_ok(d, &s, blocked);
}
/* VNNI: images of u8 codes only (its own format, also when named: TC__INT8_IMG_U8), out and residual. */
static bool q_supports(const tc__step_desc *d, bool blocked) {
    tc__qconv_geom g;
    return q_takes(d, blocked, &g) && (g.o_fmt == TC__INT8_IMG_OWN || g.o_fmt == TC__INT8_IMG_U8) &&
           (!g.res_image || g.r_fmt == TC__INT8_IMG_U8);
}
static bool q_supports_plain(const tc__step_desc *d) { return q_supports(d, false); }

bool tc__qconv_amx_plan(const tc__qconv_geom *g, tc__amx_plan *p) {
    const tc__lowp_shape s = {.batch = g->batch, .cin = g->cin, .cout = g->cout, .ih = g->ih, .iw = g->iw, .oh = g->oh,
                              .ow = g->ow, .kh = g->kh, .kw = g->kw, .sh = g->sh, .sw = g->sw, .dh = g->dh, .dw = g->dw,
                              .pt = g->pt, .pl = g->pl, .hp = g->hp, .wp = g->wp};
    return !g->depthwise && tc__amx_plan_of(&s, g->cp, p);
}

/* AMX: the VNNI tactics' steps (the same image, packing and epilogue) that its plan takes. */
static bool q_supports_amx(const tc__step_desc *d, bool blocked) {
    tc__qconv_geom g;
    tc__amx_plan p;
    return q_supports(d, blocked) && tc__qconv_geometry(d, &g) &&
           (tc__qconv_amx_plan(&g, &p) || tc__refuse(d, "no AMX tile plan for this shape"));
}
static bool q_supports_amx_plain(const tc__step_desc *d) { return q_supports_amx(d, false); }
static bool q_supports_amx_blocked(const tc__step_desc *d) { return q_supports_amx(d, true); }
/* The AVX2 variant: plain layouts, its 16-bit packing within the FP32 weight's bytes, and chain images of 16-bit
 * codes within the FP32 tensors' bytes. */
static bool q_supports_s16(const tc__step_desc *d) {
    tc__qconv_geom g;
    if (!q_takes(d, false, &g)) return false;
    /* With 7-bit weights u7w7 (a non-negative X) or u8w7 (any other X) take the step: they chain as well, with fewer
     * multiplies (u8w7: 4 channels per vpmaddubsw + vpmaddwd, this variant 2 per vpmaddwd) and images of half the
     * bytes, so timing this variant too would only let the tuner's noise choose (it did, in tuned EfficientNet-B0
     * plans) */
    if (g.w7) return false;
    if (g.in_image && !tc__lowp_in_image_fits(d, g.batch, g.hp, g.wp, g.cp, 2)) return false;
    if (g.out_image && !tc__qconv_out_image_ok(d, &g, false)) return false;
    return tc__qconv_s16_packed_bytes(&g) <= (size_t)tc__tensor_numel(d->in[1]) * sizeof(float);
}
static bool q_supports_blocked(const tc__step_desc *d) { return q_supports(d, true); }

static bool q_packs_input(const tc__step_desc *d, int index) {
    (void)d;
    return index == TC__QCONV_WEIGHT_INPUT;
}

/* Element (oc, c, tap) of the ONNX weight (oc-major [C_out][C_in][taps], or k-major [C_in][C_out]). */
static float q_w(const tc__qconv_geom *g, const float *w, bool k_major, size_t oc, size_t c, size_t t) {
    return k_major ? w[c * g->cout + oc] : w[(oc * g->cin + c) * g->kh * g->kw + t];
}

void tc__qconv_pack_weight(const tc__qconv_geom *g, const float *w, bool k_major, bool s16, void *dst) {
    const bool w7 = g->w7;
    const size_t taps = g->kh * g->kw, c4 = g->cp / 4, c2 = g->cp / 2;
    int8_t *qw = dst;
    int16_t *qw16 = dst;
    float *mult = s16 ? (float *)(qw16 + tc__qconv_s16_weight_elems(g)) : (float *)(qw + tc__qconv_weight_bytes(g));
    int32_t *comp = (int32_t *)(mult + g->cout16);
    memset(dst, 0, s16 ? tc__qconv_s16_packed_bytes(g) : tc__qconv_packed_bytes(g));
    const double qmax = w7 ? TC__QW7_MAX : 127.0;
    /* A weight that a QDQ model quantized per tensor (w = q * s, s = max|w| / qmax) keeps that grid: then every channel
     * uses s, which gives back the model's q exactly (a per-channel max would give a finer grid and other codes). */
    const double tg = tc__weight_grid(w, k_major, (int64_t)g->cout, (int64_t)(g->cin * taps), 0, (int64_t)g->cout, qmax);
    const float grid = tg > 0.0 ? (float)tg : 0.0f;
    for (size_t oc = 0; oc < g->cout; oc++) {
        double amax = 0.0;
        for (size_t c = 0; c < g->cin; c++)
            for (size_t t = 0; t < taps; t++) {
                double v = fabs((double)q_w(g, w, k_major, oc, c, t));
                if (v > amax) amax = v; /* NaN weights are skipped: they quantize to -127 below */
            }
        const float sw = grid > 0.0f ? grid : amax > 0.0 && isfinite(amax) ? (float)(amax / qmax) : 1.0f;
        const float inv = 1.0f / sw;
        int32_t sum = 0;
        for (size_t c = 0; c < g->cin; c++)
            for (size_t t = 0; t < taps; t++) {
                int8_t q = tc__q_round(q_w(g, w, k_major, oc, c, t), inv);
                if (w7) q = q > TC__QW7_MAX ? TC__QW7_MAX : q < -TC__QW7_MAX ? -TC__QW7_MAX : q; /* NaN: -127 above */
                sum += q;
                if (s16) qw16[((oc / 16 * taps + t) * c2 + c / 2) * 32 + oc % 16 * 2 + c % 2] = q;
                else qw[((oc / 16 * taps + t) * c4 + c / 4) * 64 + oc % 16 * 4 + c % 4] = q;
            }
        mult[oc] = g->x_scale * sw;
        if (!s16) comp[oc] = (int32_t)g->zero_point * sum;
    }
}

static tc_status q_pack_as(const tc__step_desc *d, int index, const void *src, void *dst, bool s16, tc__err *err) {
    tc__qconv_geom g;
    if (index != TC__QCONV_WEIGHT_INPUT || !tc__qconv_geometry(d, &g))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "the int8 tactics pack only the weight of a step they take");
    const bool k_major = tc__lowp_weight_k_major(d);
    tc__qconv_pack_weight(&g, src, k_major, s16, dst); /* writes (and zeroes) its packed bytes, no more */
    return TC_STATUS_OK;
}
/* The bytes of the packed weight: codes, multipliers and (u8 layouts) compensations. */
static size_t q_packed_as(const tc__step_desc *d, int index, bool s16) {
    tc__qconv_geom g;
    if (index != TC__QCONV_WEIGHT_INPUT || !tc__qconv_geometry(d, &g)) return 0;
    return s16 ? tc__qconv_s16_packed_bytes(&g) : tc__qconv_packed_bytes(&g);
}
static size_t q_pack_bytes(const tc__step_desc *d, int index) { return q_packed_as(d, index, false); }
static size_t q_pack_s16_bytes(const tc__step_desc *d, int index) { return q_packed_as(d, index, true); }
static tc_status q_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    return q_pack_as(d, index, src, dst, false, err);
}
static tc_status q_pack_s16(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    return q_pack_as(d, index, src, dst, true, err);
}

static size_t q_scratch(const tc__step_desc *d) {
    tc__qconv_geom g;
    return tc__qconv_geometry(d, &g) ? tc__qconv_scratch(&g) : 0;
}
static size_t q_scratch_s16(const tc__step_desc *d) {
    tc__qconv_geom g;
    return tc__qconv_geometry(d, &g) ? tc__qconv_s16_scratch(&g) : 0;
}

/* The geometry of the step a kernel context runs. */
tc_status tc__qconv_ctx_geometry(const tc__kernel_ctx *ctx, tc__qconv_geom *g) {
    const tc__tensor *in[3], *out[1];
    bool in_const[3];
    tc__epilogue none;
    tc__step_desc d;
    if (!tc__lowp_ctx_desc(ctx, in, in_const, out, &none, &d))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: inputs the int8 tactic does not take", ctx->op_type);
    if (!tc__qconv_geometry(&d, g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: shapes or attributes the int8 tactic does not take",
                        ctx->op_type);
    return TC_STATUS_OK;
}
/* The steps of the AVX2 variant on unsigned 7-bit codes: a non-negative X with symmetric codes (the VNNI packing and
 * image size). */
static bool q_takes_u7(const tc__step_desc *d, tc__qconv_geom *g) {
    return q_takes(d, false, g) && tc__qconv_u7_input(g) && (!g->out_image || tc__qconv_out_image_ok(d, g, true));
}
/* u7 itself: not where the weights may take 7 bits (tc.int8_w7): there u7w7 does the same with fewer multiplies, so
 * timing both would only let the tuner's noise choose. */
static bool q_supports_u7(const tc__step_desc *d) {
    tc__qconv_geom g;
    return q_takes_u7(d, &g) && !g.w7;
}
/* The u7w7 variant: the u7 variant's steps whose weights may take 7 bits (tc.int8_w7, reduce range). */
static bool q_supports_u7w7(const tc__step_desc *d) {
    tc__qconv_geom g;
    return q_takes_u7(d, &g) && g.w7;
}

/* The u8w7 variant: any X (its codes as bytes, the zero point taken out by comp) with 7-bit weights (tc.int8_w7);
 * plain layouts; chained images in and out, residual images. Not u7w7's steps (a non-negative X with symmetric
 * codes), which that variant runs with fewer multiplies. */
static bool q_supports_u8w7(const tc__step_desc *d) {
    tc__qconv_geom g;
    return q_takes(d, false, &g) && g.w7 && !tc__qconv_u7_input(&g) &&
           (!g.out_image || tc__qconv_out_image_ok(d, &g, true));
}

/* Runs kernel on the step of ctx. */
static tc_status q_run_with(const tc__kernel_ctx *ctx, tc_status (*kernel)(const tc__kernel_ctx *, const tc__qconv_geom *)) {
    tc__qconv_geom g;
    tc_status st = tc__qconv_ctx_geometry(ctx, &g);
    return st != TC_STATUS_OK ? st : kernel(ctx, &g);
}
static tc_status q_run(const tc__kernel_ctx *ctx) { return q_run_with(ctx, tc__qconv_run_avx512vnni); }
static tc_status q_run_amx(const tc__kernel_ctx *ctx) { return q_run_with(ctx, tc__qconv_run_amx); }
static tc_status q_run_s16(const tc__kernel_ctx *ctx) { return q_run_with(ctx, tc__qconv_run_s16_avx2); }
static tc_status q_run_u7(const tc__kernel_ctx *ctx) { return q_run_with(ctx, tc__qconv_run_u7_avx2); }
static tc_status q_run_u7w7(const tc__kernel_ctx *ctx) { return q_run_with(ctx, tc__qconv_run_u7w7_avx2); }
static tc_status q_run_u8w7(const tc__kernel_ctx *ctx) { return q_run_with(ctx, tc__qconv_run_u8w7_avx2); }

/* The chain family of each kernel's images. */
#define Q_CHAIN_q_run TC__CHAIN_INT8
#define Q_CHAIN_q_run_s16 TC__CHAIN_INT8_S16
#define Q_CHAIN_q_run_u7 TC__CHAIN_INT8_U7
#define Q_CHAIN_q_run_u7w7 TC__CHAIN_INT8_U7 /* the same image; other weights */
#define Q_CHAIN_q_run_u8w7 TC__CHAIN_INT8_U8
#define Q_TACTIC(var, tname, op, isa_bits, flag, sup, pk, scr, rn)                                                \
    const tc__tactic var = {.name = tname, .op_type = op, .backend = TC__BACKEND_CPU, .caps = isa_bits,                                             \
                            .chain = Q_CHAIN_##rn, .chain_geometry = tc__qconv_chain_geometry,                       \
                            .flags = TC__TACTIC_FUSES_EPILOGUE | (flag), .precision = "int8", .supports = sup,          \
                            .packs_input = q_packs_input, .pack = pk, .packed_bytes = pk##_bytes, .scratch_bytes = scr, .run = rn};

/* AMX-INT8 (with AVX512-VNNI for the image and epilogue): never run on AMX hardware where it was written, so each
 * must give its VNNI twin's bytes on the building machine before it is offered (tactic.h's proof). */
#define Q_AMX_ISA (Q_ISA | (uint64_t)TC__ISA_AMX_TILE | (uint64_t)TC__ISA_AMX_INT8)
#define Q_AMX_TACTIC(var, tname, op, flag, sup, twin)                                                                 \
    const tc__tactic var = {.name = tname, .op_type = op, .backend = TC__BACKEND_CPU, .caps = Q_AMX_ISA,                                            \
                            .chain = TC__CHAIN_INT8, /* the VNNI image and epilogue */                            \
                            .chain_geometry = tc__qconv_chain_geometry,                                            \
                            .flags = TC__TACTIC_FUSES_EPILOGUE | (flag), .precision = "int8", .supports = sup,          \
                            .packs_input = q_packs_input, .pack = q_pack, .packed_bytes = q_pack_bytes, .scratch_bytes = q_scratch,                  \
                            .run = q_run_amx, .proof = &twin};

Q_TACTIC(tc__tactic_conv_int8_avx512vnni, "conv_int8_avx512vnni", "Conv", Q_ISA, 0, q_supports_plain, q_pack, q_scratch,
         q_run)
Q_TACTIC(tc__tactic_conv_nchw16c_int8_avx512vnni, "conv_nchw16c_int8_avx512vnni", "Conv", Q_ISA, TC__TACTIC_BLOCKED,
         q_supports_blocked, q_pack, q_scratch, q_run)
Q_TACTIC(tc__tactic_matmul_int8_avx512vnni, "matmul_int8_avx512vnni", "MatMul", Q_ISA, 0, q_supports_plain, q_pack,
         q_scratch, q_run)
Q_TACTIC(tc__tactic_gemm_int8_avx512vnni, "gemm_int8_avx512vnni", "Gemm", Q_ISA, 0, q_supports_plain, q_pack, q_scratch,
         q_run)
Q_AMX_TACTIC(tc__tactic_conv_int8_amx, "conv_int8_amx", "Conv", 0, q_supports_amx_plain, tc__tactic_conv_int8_avx512vnni)
Q_AMX_TACTIC(tc__tactic_conv_nchw16c_int8_amx, "conv_nchw16c_int8_amx", "Conv", TC__TACTIC_BLOCKED,
             q_supports_amx_blocked, tc__tactic_conv_nchw16c_int8_avx512vnni)
Q_AMX_TACTIC(tc__tactic_matmul_int8_amx, "matmul_int8_amx", "MatMul", 0, q_supports_amx_plain,
             tc__tactic_matmul_int8_avx512vnni)
Q_AMX_TACTIC(tc__tactic_gemm_int8_amx, "gemm_int8_amx", "Gemm", 0, q_supports_amx_plain, tc__tactic_gemm_int8_avx512vnni)
/* The AVX2 variants for CPUs without VNNI: vpmaddubsw on unsigned 7-bit codes (a non-negative X; u7w7: with 7-bit
 * weights, two of them summed in 16 bits), else vpmaddwd on 16-bit codes. */
Q_TACTIC(tc__tactic_conv_int8_u7w7_avx2, "conv_int8_u7w7_avx2", "Conv", TC__VEC_ISA_AVX2, 0, q_supports_u7w7, q_pack,
         q_scratch, q_run_u7w7)
Q_TACTIC(tc__tactic_matmul_int8_u7w7_avx2, "matmul_int8_u7w7_avx2", "MatMul", TC__VEC_ISA_AVX2, 0, q_supports_u7w7,
         q_pack, q_scratch, q_run_u7w7)
Q_TACTIC(tc__tactic_gemm_int8_u7w7_avx2, "gemm_int8_u7w7_avx2", "Gemm", TC__VEC_ISA_AVX2, 0, q_supports_u7w7, q_pack,
         q_scratch, q_run_u7w7)
/* With 7-bit weights, any X: its codes u as bytes (vpmaddubsw lanes at most 2 * 255 * 64 < 2^15). */
Q_TACTIC(tc__tactic_conv_int8_u8w7_avx2, "conv_int8_u8w7_avx2", "Conv", TC__VEC_ISA_AVX2, 0, q_supports_u8w7, q_pack,
         q_scratch, q_run_u8w7)
Q_TACTIC(tc__tactic_matmul_int8_u8w7_avx2, "matmul_int8_u8w7_avx2", "MatMul", TC__VEC_ISA_AVX2, 0, q_supports_u8w7,
         q_pack, q_scratch, q_run_u8w7)
Q_TACTIC(tc__tactic_gemm_int8_u8w7_avx2, "gemm_int8_u8w7_avx2", "Gemm", TC__VEC_ISA_AVX2, 0, q_supports_u8w7, q_pack,
         q_scratch, q_run_u8w7)
Q_TACTIC(tc__tactic_conv_int8_u7_avx2, "conv_int8_u7_avx2", "Conv", TC__VEC_ISA_AVX2, 0, q_supports_u7, q_pack,
         q_scratch, q_run_u7)
Q_TACTIC(tc__tactic_matmul_int8_u7_avx2, "matmul_int8_u7_avx2", "MatMul", TC__VEC_ISA_AVX2, 0, q_supports_u7, q_pack,
         q_scratch, q_run_u7)
Q_TACTIC(tc__tactic_gemm_int8_u7_avx2, "gemm_int8_u7_avx2", "Gemm", TC__VEC_ISA_AVX2, 0, q_supports_u7, q_pack,
         q_scratch, q_run_u7)
Q_TACTIC(tc__tactic_conv_int8_avx2, "conv_int8_avx2", "Conv", TC__VEC_ISA_AVX2, 0, q_supports_s16, q_pack_s16,
         q_scratch_s16, q_run_s16)
Q_TACTIC(tc__tactic_matmul_int8_avx2, "matmul_int8_avx2", "MatMul", TC__VEC_ISA_AVX2, 0, q_supports_s16, q_pack_s16,
         q_scratch_s16, q_run_s16)
Q_TACTIC(tc__tactic_gemm_int8_avx2, "gemm_int8_avx2", "Gemm", TC__VEC_ISA_AVX2, 0, q_supports_s16, q_pack_s16,
         q_scratch_s16, q_run_s16)
