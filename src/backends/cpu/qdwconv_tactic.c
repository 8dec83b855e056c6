/*
 * qdwconv_tactic.c - the depthwise INT8 Conv tactics (qconv_u8s8.h) for AVX512-VNNI (kernel qdwconv_avx512vnni.c)
 * and AVX2 (qdwconv_avx2.c): which steps they take (a depthwise Conv the precision pass gave an input scale, images
 * and packed weight within the FP32 tensors' bytes; AVX2 plain layouts only, VNNI NCHW16c too), the weight
 * quantization and packing done at build, the tactic table. AVX2 has three variants, as the dense AVX2 kernels:
 * 16-bit centred codes, u7 (a non-negative X, byte images) and u8 (bytes of codes with a zero point).
 */
#include <math.h>
#include <string.h>

#include "backends/cpu/chain_geom.h"
#include "backends/cpu/qconv_u8s8.h"
#include "backends/cpu/vec_isa.h"

/* The geometry of a depthwise step the tactics take (elem: bytes of an image element), or false. */
static bool dw_takes(const tc__step_desc *d, bool u7, tc__qconv_geom *g) {
    tc__lowp_shape s;
    if (!tc__qconv_geometry(d, g) || !g->depthwise || !tc__lowp_dw_shape_of(d, &s) || !tc__lowp_step_ok(d, &s, false))
        return false;
    if (g->in_image && !tc__lowp_in_image_fits(d, g->batch, g->hp, g->wp, g->cp, u7 ? 1 : 2)) return false;
    return !g->out_image || tc__qconv_out_image_ok(d, g, u7); /* (the packing fits: tc__qconv_geometry checks it) */
}

static bool dw_supports_s16(const tc__step_desc *d) {
    tc__qconv_geom g;
    return dw_takes(d, false, &g);
}

/* u7: a non-negative X with symmetric codes. */
static bool dw_supports_u7(const tc__step_desc *d) {
    tc__qconv_geom g;
    return dw_takes(d, true, &g) && tc__qconv_u7_input(&g);
}

/* u8: any other X, its codes as bytes (half the 16-bit variant's image); the u7 variant's steps are u7's. */
static bool dw_supports_u8(const tc__step_desc *d) {
    tc__qconv_geom g;
    return dw_takes(d, true, &g) && !tc__qconv_u7_input(&g);
}

static bool dw_packs_input(const tc__step_desc *d, int index) {
    (void)d;
    return index == TC__QCONV_WEIGHT_INPUT;
}

/* The grid s = max|w| / 127 when every weight is on it (a QDQ model's per-tensor weight: each channel keeps s, which
 * gives back the model's codes), else 0 (qconv_u8s8_tactic.c does the same for the dense layers). */
static float dw_tensor_grid(const float *w, size_t n) {
    double amax = 0.0;
    for (size_t i = 0; i < n; i++) amax = fmax(amax, fabs((double)w[i]));
    if (!(amax > 0.0) || !isfinite(amax)) return 0.0f;
    const double s = amax / 127.0;
    for (size_t i = 0; i < n; i++)
        if (fabs((double)w[i] / s - nearbyint((double)w[i] / s)) > 1e-3) return 0.0f;
    return (float)s;
}

/* The scale of channel wc (taps weights): the tensor's grid when it has one, else max|wc| / 127 (1 for a zero or
 * non-finite channel). */
static float dw_channel_scale(const float *wc, size_t taps, float grid) {
    if (grid > 0.0f) return grid;
    double amax = 0.0;
    for (size_t t = 0; t < taps; t++)
        if (fabs((double)wc[t]) > amax) amax = fabs((double)wc[t]); /* NaN is skipped: it quantizes to -127 */
    return amax > 0.0 && isfinite(amax) ? (float)(amax / 127.0) : 1.0f;
}

void tc__qdw_pack_weight(const tc__qconv_geom *g, const float *w, void *dst) {
    const size_t taps = g->kh * g->kw, pairs = tc__qdw_tap_pairs(g);
    int16_t *qw = dst;
    float *mult = (float *)(qw + tc__qdw_weight_elems(g));
    memset(dst, 0, tc__qdw_packed_bytes(g));
    const float grid = dw_tensor_grid(w, g->cout * taps);
    for (size_t c = 0; c < g->cout; c++) {
        const float *wc = w + c * taps;
        const float sw = dw_channel_scale(wc, taps, grid), inv = 1.0f / sw;
        /* within a block's 32 values per tap pair: vector (c % 8) / 4, 128-bit lane (c % 16) / 8, pair c % 4 */
        const size_t in_blk = c % 16, pos = (in_blk % 8) / 4 * 16 + in_blk / 8 * 8 + in_blk % 4 * 2;
        for (size_t t = 0; t < taps; t++) qw[((c / 16) * pairs + t / 2) * 32 + pos + t % 2] = tc__q_round(wc[t], inv);
        mult[c] = g->x_scale * sw;
    }
}

void tc__qdw_pack_weight_vnni(const tc__qconv_geom *g, const float *w, void *dst) {
    const size_t taps = g->kh * g->kw, quads = tc__qdw_tap_quads(g), blocks = g->cout16 / 16;
    int8_t *qw = dst;
    float *mult = (float *)(qw + tc__qdw_vnni_weight_bytes(g));
    int32_t *comp = (int32_t *)(mult + g->cout16);
    memset(dst, 0, tc__qdw_vnni_packed_bytes(g));
    const float grid = dw_tensor_grid(w, g->cout * taps);
    for (size_t c = 0; c < g->cout; c++) {
        const float *wc = w + c * taps;
        const float sw = dw_channel_scale(wc, taps, grid), inv = 1.0f / sw;
        /* group G of up to 4 blocks (nb of them), block L in it, vector v = (c % 16) / 4, dword c % 4 of lane L */
        const size_t blk = c / 16, grp = blk / 4, lane = blk % 4, nb = blocks - grp * 4 < 4 ? blocks - grp * 4 : 4;
        const size_t v = c % 16 / 4, vb = 16 * nb;
        int8_t *base = qw + grp * 4 * 16 * quads * 4 + v * vb + lane * 16 + c % 4 * 4;
        int32_t sum = 0;
        for (size_t t = 0; t < taps; t++) {
            const int8_t q = tc__q_round(wc[t], inv);
            base[t / 4 * 4 * vb + t % 4] = q;
            sum += q;
        }
        mult[c] = g->x_scale * sw;
        comp[c] = (int32_t)g->zero_point * sum;
    }
}

/* Packs the weight of step d for the VNNI kernel or the AVX2 ones (whose packing tc__qconv_geometry checks). */
static tc_status dw_pack_as(const tc__step_desc *d, int index, const void *src, void *dst, bool vnni, tc__err *err) {
    tc__qconv_geom g;
    if (index != TC__QCONV_WEIGHT_INPUT || !tc__qconv_geometry(d, &g) || !g.depthwise ||
        (vnni && tc__qdw_vnni_packed_bytes(&g) > (size_t)tc__tensor_numel(d->in[1]) * sizeof(float)))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "the depthwise int8 tactics pack only the weight of a step they take");
    (vnni ? tc__qdw_pack_weight_vnni : tc__qdw_pack_weight)(&g, src, dst); /* zeroes and writes its packed bytes */
    return TC_STATUS_OK;
}
static size_t dw_packed_as(const tc__step_desc *d, int index, bool vnni) {
    tc__qconv_geom g;
    if (index != TC__QCONV_WEIGHT_INPUT || !tc__qconv_geometry(d, &g) || !g.depthwise) return 0;
    return vnni ? tc__qdw_vnni_packed_bytes(&g) : tc__qdw_packed_bytes(&g);
}
static size_t dw_pack_bytes(const tc__step_desc *d, int index) { return dw_packed_as(d, index, false); }
static size_t dw_pack_vnni_bytes(const tc__step_desc *d, int index) { return dw_packed_as(d, index, true); }
static tc_status dw_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    return dw_pack_as(d, index, src, dst, false, err);
}
static tc_status dw_pack_vnni(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    return dw_pack_as(d, index, src, dst, true, err);
}

/* VNNI: the dense VNNI kernels' images (u8 codes: out, and residual) and their layouts; the packing within the FP32
 * weight's bytes. */
static bool dw_supports_vnni(const tc__step_desc *d, bool blocked) {
    tc__qconv_geom g;
    tc__lowp_shape s;
    if (!tc__qconv_geometry(d, &g) || !g.depthwise || !tc__lowp_dw_shape_of(d, &s) || !tc__lowp_step_ok(d, &s, blocked))
        return false;
    return (g.o_fmt == TC__INT8_IMG_OWN || g.o_fmt == TC__INT8_IMG_U8) && (!g.res_image || g.r_fmt == TC__INT8_IMG_U8) &&
           tc__qdw_vnni_packed_bytes(&g) <= (size_t)tc__tensor_numel(d->in[1]) * sizeof(float);
}
static bool dw_supports_vnni_plain(const tc__step_desc *d) { return dw_supports_vnni(d, false); }
static bool dw_supports_vnni_blocked(const tc__step_desc *d) { return dw_supports_vnni(d, true); }

static size_t dw_scratch(const tc__step_desc *d, bool u7) {
    tc__qconv_geom g;
    return tc__qconv_geometry(d, &g) ? (u7 ? tc__qconv_scratch(&g) : tc__qconv_s16_scratch(&g)) : 0;
}
static size_t dw_scratch_s16(const tc__step_desc *d) { return dw_scratch(d, false); }
static size_t dw_scratch_u7(const tc__step_desc *d) { return dw_scratch(d, true); }

static tc_status dw_run(const tc__kernel_ctx *ctx, int elem) {
    tc__qconv_geom g;
    tc_status st = tc__qconv_ctx_geometry(ctx, &g);
    return st != TC_STATUS_OK ? st : tc__qdw_run_avx2(ctx, &g, elem);
}
static tc_status dw_run_s16(const tc__kernel_ctx *ctx) { return dw_run(ctx, TC__QDW_S16); }
static tc_status dw_run_u7(const tc__kernel_ctx *ctx) { return dw_run(ctx, TC__QDW_U7); }
static tc_status dw_run_u8(const tc__kernel_ctx *ctx) { return dw_run(ctx, TC__QDW_U8); }
static tc_status dw_run_vnni(const tc__kernel_ctx *ctx) {
    tc__qconv_geom g;
    tc_status st = tc__qconv_ctx_geometry(ctx, &g);
    return st != TC_STATUS_OK ? st : tc__qdw_run_avx512vnni(ctx, &g);
}

#define DW_VNNI_ISA (TC__VEC_ISA_AVX512 | (uint64_t)TC__ISA_AVX512VNNI)
const tc__tactic tc__tactic_dwconv_int8_avx512vnni = {.name = "dwconv_int8_avx512vnni", .chain = TC__CHAIN_INT8, .chain_geometry = tc__qconv_chain_geometry, .op_type = "Conv",
                                                      .backend = TC__BACKEND_CPU, .caps = DW_VNNI_ISA, .flags = TC__TACTIC_FUSES_EPILOGUE,
                                                      .precision = "int8", .supports = dw_supports_vnni_plain,
                                                      .packs_input = dw_packs_input, .pack = dw_pack_vnni, .packed_bytes = dw_pack_vnni_bytes,
                                                      .scratch_bytes = dw_scratch_u7, .run = dw_run_vnni};
const tc__tactic tc__tactic_dwconv_nchw16c_int8_avx512vnni = {
    .name = "dwconv_nchw16c_int8_avx512vnni", .chain = TC__CHAIN_INT8, .chain_geometry = tc__qconv_chain_geometry, .op_type = "Conv", .backend = TC__BACKEND_CPU, .caps = DW_VNNI_ISA,
    .flags = TC__TACTIC_FUSES_EPILOGUE | TC__TACTIC_BLOCKED, .precision = "int8", .supports = dw_supports_vnni_blocked,
    .packs_input = dw_packs_input, .pack = dw_pack_vnni, .packed_bytes = dw_pack_vnni_bytes, .scratch_bytes = dw_scratch_u7, .run = dw_run_vnni};

const tc__tactic tc__tactic_dwconv_int8_u7_avx2 = {.name = "dwconv_int8_u7_avx2", .chain = TC__CHAIN_INT8_U7, .chain_geometry = tc__qconv_chain_geometry, .op_type = "Conv",
                                                   .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2, .flags = TC__TACTIC_FUSES_EPILOGUE,
                                                   .precision = "int8", .supports = dw_supports_u7,
                                                   .packs_input = dw_packs_input, .pack = dw_pack, .packed_bytes = dw_pack_bytes,
                                                   .scratch_bytes = dw_scratch_u7, .run = dw_run_u7};
const tc__tactic tc__tactic_dwconv_int8_avx2 = {.name = "dwconv_int8_avx2", .chain = TC__CHAIN_INT8_S16, .chain_geometry = tc__qconv_chain_geometry, .op_type = "Conv", .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2,
                                                .flags = TC__TACTIC_FUSES_EPILOGUE, .precision = "int8",
                                                .supports = dw_supports_s16, .packs_input = dw_packs_input,
                                                .pack = dw_pack, .packed_bytes = dw_pack_bytes, .scratch_bytes = dw_scratch_s16, .run = dw_run_s16};
const tc__tactic tc__tactic_dwconv_int8_u8_avx2 = {.name = "dwconv_int8_u8_avx2", .chain = TC__CHAIN_INT8_U8, .chain_geometry = tc__qconv_chain_geometry, .op_type = "Conv",
                                                   .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2, .flags = TC__TACTIC_FUSES_EPILOGUE,
                                                   .precision = "int8", .supports = dw_supports_u8,
                                                   .packs_input = dw_packs_input, .pack = dw_pack, .packed_bytes = dw_pack_bytes,
                                                   .scratch_bytes = dw_scratch_u7, .run = dw_run_u8};
