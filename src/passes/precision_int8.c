/*
 * precision_int8.c - the INT8 precision pass (implicit quantization): gives every Conv (one group or depthwise),
 * MatMul and Gemm whose weight is constant and whose data input has a calibrated scale the node
 * attribute tc.int8_scale. The int8 tactics take only such nodes; the tuner then times them
 * against the FP32 tactics, so each layer runs in INT8 only where that is faster. Layers named in
 * the exclusion list (--layer-precision NAME:fp32) keep FP32. A layer whose data input cannot be
 * negative also gets tc.int8_nonneg = 1, and one whose own output has a calibrated scale tc.int8_y_scale
 * (core/quant_attr.h). A layer whose data input comes out of a GELU, SiLU or HardSwish gets asymmetric codes over
 * [that activation's minimum, the calibrated maximum] (tc.int8_zero_point, as a QDQ model's), of 7 bits with reduce range
 * (tc.int8_code_max). With reduce range (w7), every INT8 node (a QDQ model's too) gets tc.int8_w7 = 1: its weights may
 * be quantized to 7 bits; but the layers named in the 8-bit list (--layer-precision NAME:int8, and tailcut's accuracy
 * fallback) keep 8-bit weights.
 */
#include <math.h>

#include "core/quant_attr.h"
#include "passes/passes.h"
#include "passes/pattern.h"
#include "graph/quantizable.h"

/* True when value v cannot be negative (NaN aside): its producer's epilogue ends in an activation with
 * non-negative outputs, or it is a Relu, or pooling/reshaping of such a value (depth: levels left to follow). */
static bool nonneg_value(const tc__graph *g, int32_t v, int depth) {
    const int32_t p = tc__pat_producer(g, v, NULL);
    if (p < 0 || depth <= 0) return false;
    const tc__node *n = &g->nodes[p];
    const tc__epilogue *e = &n->epi;
    if (e->act == TC__ACT_RELU || e->act == TC__ACT_SIGMOID || e->act == TC__ACT_HARDSIGMOID ||
        (e->act == TC__ACT_CLIP && e->alpha >= 0.0f))
        return true;
    if (!tc__pat_plain(n) || n->n_op_in < 1) return false;
    if (tc__pat_is(n, "Relu")) return true;
    static const char *const through[] = {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
                                          "Flatten", "Reshape", "Identity"};
    for (size_t i = 0; i < sizeof through / sizeof through[0]; i++)
        if (tc__pat_is(n, through[i])) return nonneg_value(g, n->in[0], depth - 1);
    return false;
}

/* The least value v can take when its producer's epilogue ends in GELU, SiLU or HardSwish (about -0.170, -0.278 and
 * -0.375: their minima, rounded away from 0), else 0 (unknown, or non-negative). */
static float act_floor(const tc__graph *g, int32_t v) {
    const int32_t p = tc__pat_producer(g, v, NULL);
    if (p < 0) return 0.0f;
    switch (g->nodes[p].epi.act) {
    case TC__ACT_GELU_ERF:
    case TC__ACT_GELU_TANH: return -0.1701f;
    case TC__ACT_SILU: return -0.2785f;
    case TC__ACT_HARDSWISH: return -0.3751f;
    default: return 0.0f;
    }
}

/*
 * The scale and zero point of a layer's input that a GELU, SiLU or HardSwish produced (lowest value floor < 0): codes
 * 0..code_max over [floor, amax] (amax = 127 * scale, the calibrated symmetric range) instead of -127..127 over
 * [-amax, amax]. With code_max 255 about twice as fine; every INT8 kernel takes a zero point (onnxruntime's
 * quantize_static quantizes activations asymmetrically too). With 127 (reduce range) the step of symmetric 8-bit codes,
 * in 7 bits that the AVX2 u8w7 kernel multiplies faster. False (symmetric codes kept) when amax does not exceed -floor.
 */
static bool floor_codes(float scale, float floor, double code_max, float *s, int64_t *z) {
    const double amax = 127.0 * scale;
    if (!(floor < 0.0f) || !(amax > -2.0 * floor)) return false;
    *s = (float)((amax - floor) / code_max);
    *z = (int64_t)lrint(-floor / *s);
    return *z >= 1 && *z < code_max / 2 && *s > 0.0f;
}

bool tc__int8_floor_codes(const tc__graph *g, int32_t v, float scale, double code_max, float *s, int64_t *z) {
    return floor_codes(scale, act_floor(g, v), code_max, s, z);
}

tc_status tc__pass_precision_int8(tc__pass_ctx *ctx, tc__scale_lookup scale_of, const void *user,
                                  const tc__int8_lists *lists, bool w7) {
    tc__graph *g = ctx->g;
    for (int32_t k = 0; k < g->n_nodes; k++) {
        const tc__node *n = &g->nodes[k];
        float scale;
        tc__qlayer q;
        if (!tc__quantizable_layer(g, n, false, &q) || tc__attr_has(&n->attrs, TC__ATTR_INT8_SCALE)) continue;
        if (tc__layer_listed(n->name, lists->exclude, lists->n_exclude)) continue;
        if (!scale_of(user, g->values[n->in[0]].name, &scale)) continue;
        float s8 = scale;
        int64_t z = 0;
        /* 7-bit codes with the layer's 7-bit weights (reduce range), unless it keeps 8-bit weights */
        const bool code7 = w7 && !tc__layer_listed(n->name, lists->w8, lists->n_w8);
        const bool asym = tc__int8_floor_codes(g, n->in[0], scale, code7 ? 127.0 : 255.0, &s8, &z);
        tc__attr a = {.name = TC__ATTR_INT8_SCALE, .kind = TC__ATTR_FLOAT, .f = s8};
        tc_status st = tc__pat_set_attr(g, k, &a, ctx->err);
        if (st) return st;
        if (asym) {
            const tc__attr zp = {.name = TC__ATTR_INT8_ZERO_POINT, .kind = TC__ATTR_INT, .i = z};
            st = tc__pat_set_attr(g, k, &zp, ctx->err);
            if (st) return st;
        }
        if (asym && code7) {
            const tc__attr cm = {.name = TC__ATTR_INT8_CODE_MAX, .kind = TC__ATTR_INT, .i = 127};
            st = tc__pat_set_attr(g, k, &cm, ctx->err);
            if (st) return st;
        }
        float y_scale;
        const int32_t y = g->nodes[k].n_out > 0 ? g->nodes[k].out[0] : -1;
        if (y >= 0 && scale_of(user, g->values[y].name, &y_scale)) {
            const tc__attr ys = {.name = TC__ATTR_INT8_Y_SCALE, .kind = TC__ATTR_FLOAT, .f = y_scale};
            st = tc__pat_set_attr(g, k, &ys, ctx->err);
            if (st) return st;
        }
        if (nonneg_value(g, g->nodes[k].in[0], 4)) {
            const tc__attr nn = {.name = TC__ATTR_INT8_NONNEG, .kind = TC__ATTR_INT, .i = 1};
            st = tc__pat_set_attr(g, k, &nn, ctx->err);
            if (st) return st;
        }
        ctx->changes++;
    }
    for (int32_t k = 0; k < g->n_nodes && w7; k++) {
        const tc__node *n = &g->nodes[k];
        if (n->removed || !tc__attr_has(&n->attrs, TC__ATTR_INT8_SCALE) || tc__attr_has(&n->attrs, TC__ATTR_INT8_W7) ||
            tc__layer_listed(n->name, lists->w8, lists->n_w8))
            continue;
        const tc__attr a = {.name = TC__ATTR_INT8_W7, .kind = TC__ATTR_INT, .i = 1};
        tc_status st = tc__pat_set_attr(g, k, &a, ctx->err);
        if (st) return st;
        ctx->changes++;
    }
    return TC_STATUS_OK;
}
