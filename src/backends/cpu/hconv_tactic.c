/*
 * hconv_tactic.c - the fp16 and bf16 tactics of Conv (NCHW and NCHW16c), MatMul and Gemm with constant
 * weights (hconv.h): which steps they take, the weight packing done at build, and the tactic tables.
 * The kernels are in hconv_f16_avx512fp16.c and hconv_bf16_avx512bf16.c (with the AMX-BF16 driver; its tiles in
 * amx_panel_amx.c).
 */
#include <string.h>

#include "backends/cpu/chain_geom.h"
#include "backends/cpu/hconv.h"
#include "backends/cpu/vec_isa.h"
#include "core/tensor.h"

#define H_ISA_FP16 (TC__VEC_ISA_AVX512 | (uint64_t)TC__ISA_AVX512FP16)
#define H_ISA_BF16 (TC__VEC_ISA_AVX512 | (uint64_t)TC__ISA_AVX512BF16)

/* The chain's attributes (core/quant_attr.h), checked against the shapes: the 16-bit images (input, output, residual)
 * must fit in the FP32 tensors' bytes. */
static bool h_chain(const tc__step_desc *d, tc__hconv_geom *g) {
    const tc__lowp_shape *s = &g->s;
    g->in_image = tc__attr_int(d->attrs, TC__ATTR_HALF_IN_IMAGE, 0) == 1;
    if (g->in_image && !tc__lowp_in_image_fits(d, s->batch, s->hp, s->wp, g->cp, 2)) return false;
    tc__lowp_image im;
    const int r = tc__lowp_out_image(d, TC__ATTR_HALF_OUT_IMAGE, 0, 2, 2, s->batch, s->oh, s->ow, s->cout, &im, NULL);
    g->out_image = r == 1;
    if (r < 0) return false;
    if (r == 1) g->o_hp = im.hp, g->o_wp = im.wp, g->o_cp = im.cp, g->o_pt = im.pt, g->o_pl = im.pl;
    const int rr = tc__lowp_out_image(d, TC__ATTR_HALF_RES_IMAGE, 0, 2, 2, s->batch, s->oh, s->ow, s->cout, &im, NULL);
    if (rr < 0 || (rr == 1 && d->residual == NULL)) return false;
    g->res_image = rr == 1;
    if (rr == 1) g->r_hp = im.hp, g->r_wp = im.wp, g->r_cp = im.cp, g->r_pt = im.pt, g->r_pl = im.pl;
    return true;
}

bool tc__hconv_geometry(const tc__step_desc *d, bool bf16, tc__hconv_geom *g) {
    memset(g, 0, sizeof *g);
    if (tc__attr_int(d->attrs, bf16 ? TC__ATTR_BF16 : TC__ATTR_FP16, 0) != 1)
        return tc__refuse(d, "not marked %s by the precision pass (--%s not given, or the layer kept FP32)",
                          bf16 ? "BF16" : "FP16", bf16 ? "bf16" : "fp16");
    if (!tc__lowp_shape_of(d, &g->s)) return tc__refuse(d, "not a Conv (one group), MatMul or Gemm the kernels take");
    const tc__lowp_shape *s = &g->s;
    g->bf16 = bf16;
    /* BF16 reads an odd run's last value alone (hconv.h), so a small odd C_in needs no zero channel: an RGB stem's
     * image and multiply-adds are 3/4 of those of 4 channels. (FP16 multiplies pairs only.) */
    g->cp = bf16 && s->cin % 2 == 1 && s->cin < 8 ? s->cin : (s->cin + 1) / 2 * 2;
    g->cout16 = (s->cout + 15) / 16 * 16;
    const size_t lim = (size_t)1 << 31, taps = s->kh * s->kw;
    if (s->batch > lim || s->hp > lim || s->wp > lim || g->cp > lim) return false;
    const size_t img = s->hp * s->wp;
    if (img > lim / g->cp || img * g->cp > lim / s->batch) return false;
    if (s->oh * s->ow > lim / 16 || taps > lim / (g->cp + 1) || g->cout16 > lim / (taps * (g->cp + 1))) return false;
    /* the packing contract: the packed 16-bit values within the C_out * taps * C_in floats */
    return tc__hconv_weight_halves(g) <= 2 * s->cout * s->cin * taps && h_chain(d, g);
}

/* Which step this tactic family takes: the geometry, the weight constant, the layouts, the epilogue. */
static bool h_supports(const tc__step_desc *d, bool bf16, bool blocked) {
    tc__hconv_geom g;
    return tc__hconv_geometry(d, bf16, &g) && tc__lowp_step_ok(d, &g.s, blocked);
}

bool tc__hconv_amx_plan(const tc__hconv_geom *g, tc__amx_plan *p) {
    return g->bf16 && g->cp % 2 == 0 && tc__amx_plan_of(&g->s, g->cp * sizeof(uint16_t), p);
}
/* AMX-BF16: the AVX512-BF16 tactics' steps (the same image, packing and epilogue) that its plan takes. */
static bool h_supports_amx(const tc__step_desc *d, bool blocked) {
    tc__hconv_geom g;
    tc__amx_plan p;
    return h_supports(d, true, blocked) && tc__hconv_geometry(d, true, &g) &&
           (tc__hconv_amx_plan(&g, &p) || tc__refuse(d, "no AMX tile plan for this shape"));
}
static bool h_supports_amx_plain(const tc__step_desc *d) { return h_supports_amx(d, false); }
static bool h_supports_amx_blocked(const tc__step_desc *d) { return h_supports_amx(d, true); }

static bool h_supports_fp16_plain(const tc__step_desc *d) { return h_supports(d, false, false); }
static bool h_supports_fp16_blocked(const tc__step_desc *d) { return h_supports(d, false, true); }
static bool h_supports_bf16_plain(const tc__step_desc *d) { return h_supports(d, true, false); }
static bool h_supports_bf16_blocked(const tc__step_desc *d) { return h_supports(d, true, true); }

static bool h_packs_input(const tc__step_desc *d, int index) {
    (void)d;
    return index == 1;
}

void tc__hconv_pack_weight(const tc__hconv_geom *g, const float *w, bool k_major, uint16_t *dst) {
    const tc__lowp_shape *s = &g->s;
    const size_t taps = s->kh * s->kw, run_step = tc__hconv_run_step(s), steps = tc__hconv_run_steps(g);
    memset(dst, 0, tc__hconv_weight_halves(g) * sizeof *dst);
    for (size_t oc = 0; oc < s->cout; oc++)
        for (size_t c = 0; c < s->cin; c++)
            for (size_t t = 0; t < taps; t++) {
                const float v = k_major ? w[c * s->cout + oc] : w[(oc * s->cin + c) * taps + t];
                /* value e of run r: tap r * run_step + e / cp, channel e % cp; pair e / 2, its half e % 2 */
                const size_t r = t / run_step, e = t % run_step * g->cp + c;
                dst[((oc / 16 * (taps / run_step) + r) * steps + e / 2) * 32 + oc % 16 * 2 + e % 2] =
                    g->bf16 ? tc__f32_to_bf16(v) : tc__f32_to_f16(v);
            }
}

static tc_status h_pack(const tc__step_desc *d, bool bf16, const void *src, void *dst, tc__err *err) {
    tc__hconv_geom g;
    if (!tc__hconv_geometry(d, bf16, &g))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "the %s tactics pack only the weight of a step they take",
                        bf16 ? "bf16" : "fp16");
    tc__hconv_pack_weight(&g, src, tc__lowp_weight_k_major(d), dst); /* zeroes and writes its halves */
    return TC_STATUS_OK;
}
static size_t h_packed_as(const tc__step_desc *d, int index, bool bf16) {
    tc__hconv_geom g;
    return index == 1 && tc__hconv_geometry(d, bf16, &g) ? tc__hconv_weight_halves(&g) * sizeof(uint16_t) : 0;
}
static size_t h_pack_fp16_bytes(const tc__step_desc *d, int index) { return h_packed_as(d, index, false); }
static size_t h_pack_bf16_bytes(const tc__step_desc *d, int index) { return h_packed_as(d, index, true); }

static tc_status h_pack_fp16(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    return index == 1 ? h_pack(d, false, src, dst, err)
                      : tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "the fp16 tactics pack only the weight");
}
static tc_status h_pack_bf16(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    return index == 1 ? h_pack(d, true, src, dst, err)
                      : tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "the bf16 tactics pack only the weight");
}

static size_t h_scratch(const tc__step_desc *d, bool bf16) {
    tc__hconv_geom g;
    return tc__hconv_geometry(d, bf16, &g) ? tc__hconv_scratch(&g) : 0;
}
static size_t h_scratch_fp16(const tc__step_desc *d) { return h_scratch(d, false); }
static size_t h_scratch_bf16(const tc__step_desc *d) { return h_scratch(d, true); }

static tc_status h_run(const tc__kernel_ctx *ctx, bool bf16) {
    const char *prec = bf16 ? "bf16" : "fp16";
    const tc__tensor *in[3], *out[1];
    bool in_const[3];
    tc__epilogue none;
    tc__step_desc d;
    if (!tc__lowp_ctx_desc(ctx, in, in_const, out, &none, &d))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: inputs the %s tactic does not take", ctx->op_type, prec);
    tc__hconv_geom g;
    if (!tc__hconv_geometry(&d, bf16, &g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: shapes or attributes the %s tactic does not take",
                        ctx->op_type, prec);
    return bf16 ? tc__hconv_run_avx512bf16(ctx, &g) : tc__hconv_run_avx512fp16(ctx, &g);
}
static tc_status h_run_amx_bf16(const tc__kernel_ctx *ctx) {
    const tc__tensor *in[3], *out[1];
    bool in_const[3];
    tc__epilogue none;
    tc__step_desc d;
    tc__hconv_geom g;
    if (!tc__lowp_ctx_desc(ctx, in, in_const, out, &none, &d) || !tc__hconv_geometry(&d, true, &g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: a step the AMX bf16 tactic does not take", ctx->op_type);
    return tc__hconv_run_amx_bf16(ctx, &g);
}
static tc_status h_run_fp16(const tc__kernel_ctx *ctx) { return h_run(ctx, false); }
static tc_status h_run_bf16(const tc__kernel_ctx *ctx) { return h_run(ctx, true); }

#define H_CHAIN_fp16 TC__CHAIN_FP16
#define H_CHAIN_bf16 TC__CHAIN_BF16
#define H_TACTIC(var, tname, op, flag, sup, P, ISA)                                                                   \
    const tc__tactic var = {.name = tname, .op_type = op, .backend = TC__BACKEND_CPU, .caps = ISA, .flags = TC__TACTIC_FUSES_EPILOGUE | (flag),     \
                            .chain = H_CHAIN_##P, .chain_geometry = tc__hconv_chain_geometry_##P,                    \
                            .precision = #P, .supports = sup, .packs_input = h_packs_input, .pack = h_pack_##P, .packed_bytes = h_pack_##P##_bytes,        \
                            .scratch_bytes = h_scratch_##P, .run = h_run_##P};

H_TACTIC(tc__tactic_conv_fp16_avx512fp16, "conv_fp16_avx512fp16", "Conv", 0, h_supports_fp16_plain, fp16, H_ISA_FP16)
H_TACTIC(tc__tactic_conv_nchw16c_fp16_avx512fp16, "conv_nchw16c_fp16_avx512fp16", "Conv", TC__TACTIC_BLOCKED,
         h_supports_fp16_blocked, fp16, H_ISA_FP16)
H_TACTIC(tc__tactic_matmul_fp16_avx512fp16, "matmul_fp16_avx512fp16", "MatMul", 0, h_supports_fp16_plain, fp16,
         H_ISA_FP16)
H_TACTIC(tc__tactic_gemm_fp16_avx512fp16, "gemm_fp16_avx512fp16", "Gemm", 0, h_supports_fp16_plain, fp16, H_ISA_FP16)
H_TACTIC(tc__tactic_conv_bf16_avx512bf16, "conv_bf16_avx512bf16", "Conv", 0, h_supports_bf16_plain, bf16, H_ISA_BF16)
H_TACTIC(tc__tactic_conv_nchw16c_bf16_avx512bf16, "conv_nchw16c_bf16_avx512bf16", "Conv", TC__TACTIC_BLOCKED,
         h_supports_bf16_blocked, bf16, H_ISA_BF16)
H_TACTIC(tc__tactic_matmul_bf16_avx512bf16, "matmul_bf16_avx512bf16", "MatMul", 0, h_supports_bf16_plain, bf16,
         H_ISA_BF16)
H_TACTIC(tc__tactic_gemm_bf16_avx512bf16, "gemm_bf16_avx512bf16", "Gemm", 0, h_supports_bf16_plain, bf16, H_ISA_BF16)

/* AMX-BF16 (with AVX512-BF16 for the image and epilogue): never run on AMX hardware where it was written, so each must
 * match its AVX512-BF16 twin on the building machine before it is offered (tactic.h's proof; FP32 sums in another
 * order: within proof_tol). */
#define H_ISA_AMX_BF16 (H_ISA_BF16 | (uint64_t)TC__ISA_AMX_TILE | (uint64_t)TC__ISA_AMX_BF16)
#define H_AMX_TACTIC(var, tname, op, flag, sup, twin)                                                                 \
    const tc__tactic var = {.name = tname, .op_type = op, .backend = TC__BACKEND_CPU, .caps = H_ISA_AMX_BF16,                                       \
                            .chain = TC__CHAIN_BF16, /* the AVX512-BF16 image and epilogue */                      \
                            .chain_geometry = tc__hconv_chain_geometry_bf16,                                       \
                            .flags = TC__TACTIC_FUSES_EPILOGUE | (flag), .precision = "bf16", .supports = sup,          \
                            .packs_input = h_packs_input, .pack = h_pack_bf16, .packed_bytes = h_pack_bf16_bytes, .scratch_bytes = h_scratch_bf16,        \
                            .run = h_run_amx_bf16, .proof = &twin, .proof_tol = 1e-3f};
H_AMX_TACTIC(tc__tactic_conv_bf16_amx, "conv_bf16_amx", "Conv", 0, h_supports_amx_plain, tc__tactic_conv_bf16_avx512bf16)
H_AMX_TACTIC(tc__tactic_conv_nchw16c_bf16_amx, "conv_nchw16c_bf16_amx", "Conv", TC__TACTIC_BLOCKED,
             h_supports_amx_blocked, tc__tactic_conv_nchw16c_bf16_avx512bf16)
H_AMX_TACTIC(tc__tactic_matmul_bf16_amx, "matmul_bf16_amx", "MatMul", 0, h_supports_amx_plain,
             tc__tactic_matmul_bf16_avx512bf16)
H_AMX_TACTIC(tc__tactic_gemm_bf16_amx, "gemm_bf16_amx", "Gemm", 0, h_supports_amx_plain, tc__tactic_gemm_bf16_avx512bf16)
