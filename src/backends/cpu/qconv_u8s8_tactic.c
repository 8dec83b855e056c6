/*
 * qconv_u8s8_tactic.c - the int8 tactics of Conv (NCHW and NCHW16c), MatMul and Gemm with constant
 * weights (qconv_u8s8.h): which steps they take, the weight quantization and packing done at build,
 * and the tactic tables. The VNNI kernels are in qconv_u8s8_avx512vnni.c.
 */
#include <math.h>
#include <string.h>

#include "backends/cpu/blocked_f32.h"
#include "backends/cpu/conv2d_window.h"
#include "backends/cpu/gemm_tactics.h"
#include "backends/cpu/qconv_u8s8.h"
#include "backends/cpu/vact_f32.h"
#include "backends/cpu/vec_isa.h"
#include "backends/ref/window.h"

#define Q_MAX_EXTENT ((int64_t)1 << 24)
#define Q_ISA (TC__VEC_ISA_AVX512 | (uint64_t)TC__ISA_AVX512VNNI)

static bool q_is_f32(const tc__tensor *t) { return t != NULL && t->dtype == TC_DTYPE_FLOAT32; }

static size_t q_round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

/* The input scale of the node, or 0 when absent or not a positive finite number. */
static float q_scale(const tc__attrs *a) {
    float s = tc__attr_float(a, TC__ATTR_INT8_SCALE, 0.0f);
    return isfinite(s) && s > 0.0f ? s : 0.0f;
}

/* Fills the derived sizes and checks the whole problem stays in 2^31 and the packed weight fits. */
static bool q_finish(tc__qconv_geom *g) {
    g->cp = q_round_up(g->cin, 4);
    g->cout16 = q_round_up(g->cout, 16);
    const size_t lim = (size_t)1 << 31;
    if (g->batch > lim || g->hp > lim || g->wp > lim || g->cp > lim) return false;
    size_t img = g->hp * g->wp;
    if (img > lim / g->cp || img * g->cp > lim / g->batch) return false;
    if (g->oh * g->ow > lim / 16 || g->cout16 * g->kh * g->kw * g->cp > lim) return false; /* scatter indices */
    /* the FP32 weight is C_out * C_in * taps floats: tc__int8_weight_fits compares the packing with it */
    return tc__int8_weight_fits((int64_t)g->cout, (int64_t)g->cin, (int64_t)(g->kh * g->kw));
}

static bool q_conv_geometry(const tc__step_desc *d, tc__qconv_geom *g) {
    const tc__tensor *x = d->in[0], *w = d->in[1], *y = d->out[0];
    tc__ref_window rw;
    if (!tc__conv2d_window(d->attrs, x, w, y, Q_MAX_EXTENT, &rw) || rw.pad_begin[0] < 0 || rw.pad_begin[1] < 0)
        return false;
    *g = (tc__qconv_geom){.batch = (size_t)x->dims[0],
                          .cin = (size_t)x->dims[1],
                          .cout = (size_t)w->dims[0],
                          .ih = (size_t)rw.in[0],
                          .iw = (size_t)rw.in[1],
                          .oh = (size_t)rw.out[0],
                          .ow = (size_t)rw.out[1],
                          .kh = (size_t)rw.kernel[0],
                          .kw = (size_t)rw.kernel[1],
                          .sh = (size_t)rw.stride[0],
                          .sw = (size_t)rw.stride[1],
                          .dh = (size_t)rw.dilation[0],
                          .dw = (size_t)rw.dilation[1],
                          .pt = (size_t)rw.pad_begin[0],
                          .pl = (size_t)rw.pad_begin[1]};
    /* The padded image covers the input and every tap of every output. */
    size_t need_h = (g->oh - 1) * g->sh + (g->kh - 1) * g->dh + 1, need_w = (g->ow - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    g->hp = need_h > g->ih + g->pt ? need_h : g->ih + g->pt;
    g->wp = need_w > g->iw + g->pl ? need_w : g->iw + g->pl;
    const bool x_blocked = tc__layout_in_blocked(d->attrs, 0), y_blocked = tc__layout_out_blocked(d->attrs);
    if (x_blocked && g->cin % 16 != 0) return false;
    if (y_blocked && g->cout % 16 != 0) return false;
    g->in_layout = x_blocked ? TC__Q_NCHW16C : TC__Q_NCHW;
    g->out_layout = y_blocked ? TC__Q_NCHW16C : TC__Q_NCHW;
    return q_finish(g);
}

/* MatMul A[..., M, K] x B[K, N] and Gemm A[M, K] x B ([K, N], or [N, K] with transB). */
static bool q_dense_geometry(const tc__step_desc *d, bool gemm, tc__qconv_geom *g) {
    const tc__tensor *a = d->in[0], *b = d->in[1], *y = d->out[0];
    if (!q_is_f32(a) || !q_is_f32(b) || !q_is_f32(y) || a->rank < 2 || b->rank != 2) return false;
    const bool tb = gemm && tc__attr_int(d->attrs, "transB", 0) != 0;
    if (gemm && (a->rank != 2 || tc__attr_int(d->attrs, "transA", 0) != 0 ||
                 tc__attr_float(d->attrs, "alpha", 1.0f) != 1.0f))
        return false;
    const int64_t k = a->dims[a->rank - 1], n = tb ? b->dims[0] : b->dims[1];
    if ((tb ? b->dims[1] : b->dims[0]) != k || k < 1 || n < 1 || k > Q_MAX_EXTENT || n > Q_MAX_EXTENT) return false;
    const int64_t numel = tc__tensor_numel(a);
    if (numel < 1 || numel > ((int64_t)1 << 31) || tc__tensor_numel(y) != numel / k * n || y->dims[y->rank - 1] != n)
        return false;
    *g = (tc__qconv_geom){.batch = 1, .cin = (size_t)k, .cout = (size_t)n, .ih = 1, .iw = (size_t)(numel / k),
                          .kh = 1, .kw = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
                          .in_layout = TC__Q_ROWS, .out_layout = TC__Q_ROWS};
    g->oh = g->hp = 1;
    g->ow = g->wp = g->iw;
    return q_finish(g);
}

bool tc__qconv_geometry(const tc__step_desc *d, tc__qconv_geom *g) {
    memset(g, 0, sizeof *g);
    const float sx = q_scale(d->attrs);
    if (sx == 0.0f || d->n_in < 2 || d->n_out < 1 || d->in[0] == NULL || d->in[1] == NULL || d->out[0] == NULL)
        return false;
    bool ok;
    if (strcmp(d->op_type, "Conv") == 0) ok = d->n_in <= 3 && q_conv_geometry(d, g);
    else if (strcmp(d->op_type, "MatMul") == 0) ok = d->n_in == 2 && q_dense_geometry(d, false, g);
    else if (strcmp(d->op_type, "Gemm") == 0) ok = d->n_in <= 3 && q_dense_geometry(d, true, g);
    else ok = false;
    g->x_scale = sx;
    const int64_t z = tc__attr_int(d->attrs, TC__ATTR_INT8_ZERO_POINT, -1);
    if (z > 255 || z < -1) return false;
    g->zero_point = z < 0 ? 128 : (uint8_t)z;
    g->lo = z < 0 ? 1 : 0;
    return ok;
}

/* The per-channel bias input (Conv B, Gemm C) of the step: index 2, unless absent. */
static const tc__tensor *q_own_bias(const tc__step_desc *d) { return d->n_in > 2 ? d->in[2] : NULL; }

static bool q_bias_ok(const tc__tensor *b, size_t cout) {
    return b == NULL || (q_is_f32(b) && tc__tensor_numel(b) == (int64_t)cout && b->dims[b->rank - 1] == (int64_t)cout);
}

/* Which step this tactic family takes: the geometry, the weight constant, the layouts, the epilogue. */
static bool q_supports(const tc__step_desc *d, bool blocked) {
    tc__qconv_geom g;
    if (!tc__qconv_geometry(d, &g)) return false;
    if (d->in_const == NULL || !d->in_const[1] || d->in[1]->data == NULL) return false;
    const bool conv = strcmp(d->op_type, "Conv") == 0;
    if (!q_bias_ok(q_own_bias(d), g.cout)) return false;
    if (conv) {
        if (!tc__vact_epilogue_supported(d)) return false;
    } else {
        if (!tc__gemm_epilogue_ok(d, (int64_t)g.cout)) return false;
        if (q_own_bias(d) != NULL && (d->bias != NULL || tc__attr_float(d->attrs, "beta", 1.0f) != 1.0f)) return false;
    }
    if (!blocked) return !tc__layout_any_blocked(d->attrs);
    if (!conv || g.out_layout != TC__Q_NCHW16C) return false;
    const uint64_t x_bit = g.in_layout == TC__Q_NCHW16C ? 1 : 0;
    return tc__blk_layout_is(d->attrs, tc__blk_with_residual(x_bit, d->epi), true);
}

static bool q_supports_plain(const tc__step_desc *d) { return q_supports(d, false); }
static bool q_supports_blocked(const tc__step_desc *d) { return q_supports(d, true); }

static bool q_packs_input(const tc__step_desc *d, int index) {
    (void)d;
    return index == TC__QCONV_WEIGHT_INPUT;
}

/* Element (oc, c, tap) of the ONNX weight (oc-major [C_out][C_in][taps], or k-major [C_in][C_out]). */
static float q_w(const tc__qconv_geom *g, const float *w, bool k_major, size_t oc, size_t c, size_t t) {
    return k_major ? w[c * g->cout + oc] : w[(oc * g->cin + c) * g->kh * g->kw + t];
}

/*
 * A weight that a QDQ model quantized per tensor (w = q * s, s = max|w| / 127) keeps that grid: then every
 * channel uses s, which gives back the model's q exactly (a per-channel max would give a finer grid and
 * other codes). Returns s, or 0 when w is not on such a grid (FP32 weights, per-channel QDQ weights).
 */
static float q_tensor_grid(const tc__qconv_geom *g, const float *w, bool k_major) {
    const size_t taps = g->kh * g->kw;
    double amax = 0.0;
    for (size_t oc = 0; oc < g->cout; oc++)
        for (size_t c = 0; c < g->cin; c++)
            for (size_t t = 0; t < taps; t++) amax = fmax(amax, fabs((double)q_w(g, w, k_major, oc, c, t)));
    if (!(amax > 0.0) || !isfinite(amax)) return 0.0f;
    const double s = amax / 127.0;
    for (size_t oc = 0; oc < g->cout; oc++)
        for (size_t c = 0; c < g->cin; c++)
            for (size_t t = 0; t < taps; t++) {
                const double q = (double)q_w(g, w, k_major, oc, c, t) / s;
                if (fabs(q - nearbyint(q)) > 1e-3) return 0.0f;
            }
    return (float)s;
}

void tc__qconv_pack_weight(const tc__qconv_geom *g, const float *w, bool k_major, void *dst) {
    const size_t taps = g->kh * g->kw, c4 = g->cp / 4;
    int8_t *qw = dst;
    float *mult = (float *)(qw + tc__qconv_weight_bytes(g));
    int32_t *comp = (int32_t *)(mult + g->cout16);
    memset(dst, 0, tc__qconv_packed_bytes(g));
    const float grid = q_tensor_grid(g, w, k_major);
    for (size_t oc = 0; oc < g->cout; oc++) {
        double amax = 0.0;
        for (size_t c = 0; c < g->cin; c++)
            for (size_t t = 0; t < taps; t++) {
                double v = fabs((double)q_w(g, w, k_major, oc, c, t));
                if (v > amax) amax = v; /* NaN weights are skipped: they quantize to -127 below */
            }
        const float sw = grid > 0.0f ? grid : amax > 0.0 && isfinite(amax) ? (float)(amax / 127.0) : 1.0f;
        const float inv = 1.0f / sw;
        int32_t sum = 0;
        for (size_t c = 0; c < g->cin; c++)
            for (size_t t = 0; t < taps; t++) {
                int8_t q = tc__q_round(q_w(g, w, k_major, oc, c, t), inv);
                sum += q;
                qw[((oc / 16 * taps + t) * c4 + c / 4) * 64 + oc % 16 * 4 + c % 4] = q;
            }
        mult[oc] = g->x_scale * sw;
        comp[oc] = (int32_t)g->zero_point * sum;
    }
}

static tc_status q_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    tc__qconv_geom g;
    if (index != TC__QCONV_WEIGHT_INPUT || !tc__qconv_geometry(d, &g))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "the int8 tactics pack only the weight of a step they take");
    const bool k_major = strcmp(d->op_type, "MatMul") == 0 ||
                         (strcmp(d->op_type, "Gemm") == 0 && tc__attr_int(d->attrs, "transB", 0) == 0);
    memset(dst, 0, (size_t)tc__tensor_numel(d->in[1]) * sizeof(float));
    tc__qconv_pack_weight(&g, src, k_major, dst);
    return TC_STATUS_OK;
}

static size_t q_scratch(const tc__step_desc *d) {
    tc__qconv_geom g;
    return tc__qconv_geometry(d, &g) ? tc__qconv_scratch(&g) : 0;
}

/* The op's own inputs of a kernel context: the epilogue's operands come after them. */
static int q_op_inputs(const tc__kernel_ctx *ctx) {
    int n = ctx->n_in;
    if (ctx->epi != NULL && ctx->epi->bias_input >= 0 && ctx->epi->bias_input < n) n = ctx->epi->bias_input;
    if (ctx->epi != NULL && ctx->epi->residual_input >= 0 && ctx->epi->residual_input < n) n = ctx->epi->residual_input;
    return n;
}

const tc__tensor *tc__qconv_bias(const tc__kernel_ctx *ctx, size_t cout) {
    const tc__tensor *b = q_op_inputs(ctx) > 2 && ctx->in[2] != NULL ? ctx->in[2] : ctx->bias;
    return b != NULL && q_bias_ok(b, cout) && b->data != NULL ? b : NULL;
}

static tc_status q_run(const tc__kernel_ctx *ctx) {
    const int n_op = q_op_inputs(ctx);
    if (n_op < 2 || n_op > 3 || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: inputs the int8 tactic does not take", ctx->op_type);
    const tc__tensor *in[3] = {ctx->in[0], ctx->in[1], n_op > 2 ? ctx->in[2] : NULL};
    const bool in_const[3] = {false, true, true};
    const tc__tensor *out[1] = {ctx->out[0]};
    const tc__epilogue none = tc__epilogue_none();
    tc__step_desc d = {.op_type = ctx->op_type, .opset = ctx->opset, .attrs = ctx->attrs, .n_in = n_op, .in = in,
                       .in_const = in_const, .n_out = 1, .out = out, .epi = ctx->epi ? ctx->epi : &none,
                       .bias = ctx->bias, .residual = ctx->residual};
    tc__qconv_geom g;
    if (!tc__qconv_geometry(&d, &g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: shapes or attributes the int8 tactic does not take",
                        ctx->op_type);
    return tc__qconv_run_avx512vnni(ctx, &g);
}

#define Q_TACTIC(var, tname, op, flag, sup)                                                                           \
    const tc__tactic var = {.name = tname, .op_type = op, .isa = Q_ISA,                                                \
                            .flags = TC__TACTIC_FUSES_EPILOGUE | (flag), .precision = "int8", .supports = sup,          \
                            .packs_input = q_packs_input, .pack = q_pack, .scratch_bytes = q_scratch, .run = q_run};

Q_TACTIC(tc__tactic_conv_int8_avx512vnni, "conv_int8_avx512vnni", "Conv", 0, q_supports_plain)
Q_TACTIC(tc__tactic_conv_nchw16c_int8_avx512vnni, "conv_nchw16c_int8_avx512vnni", "Conv", TC__TACTIC_BLOCKED,
         q_supports_blocked)
Q_TACTIC(tc__tactic_matmul_int8_avx512vnni, "matmul_int8_avx512vnni", "MatMul", 0, q_supports_plain)
Q_TACTIC(tc__tactic_gemm_int8_avx512vnni, "gemm_int8_avx512vnni", "Gemm", 0, q_supports_plain)
