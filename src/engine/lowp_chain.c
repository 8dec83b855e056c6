/*
 * lowp_chain.c - consecutive reduced-precision layers stay reduced (after the tactics are chosen): where an
 * INT8 (FP16, BF16) Conv's output is read by nothing but another Conv of the same precision and ISA variant
 * (INT8: VNNI u8 codes, the AVX2 variant's 16-bit centred codes, or its u7 variant's bytes) (or a MatMul/Gemm's
 * by another MatMul/Gemm, e.g. a transformer's two feed-forward layers), the producer's
 * epilogue writes the reader's padded input image in that type into the tensor's buffer (INT8: quantized
 * with the reader's scale and zero point), and the reader takes that image as is: the FP32 tensor between
 * them and the reader's conversion pass disappear (core/quant_attr.h: tc.int8_out_image, tc.int8_out_scale,
 * tc.int8_in_image; tc.half_out_image, tc.half_in_image). The codes or 16-bit values are the ones the
 * reader's own pass would compute from the FP32 values, so the results do not change, bit for bit. The two AVX2 INT8
 * variants chain with each other (the producer writes the reader's image format). With residual images (INT8), a
 * value several Convs read as input or fused residual is written once as their image too (multi_reader_chain); that
 * quantizes the residual; FP16 and BF16 likewise (half_multi_reader_chain), which rounds it to the 16-bit type.
 *
 * Only for engines of one profile with static shapes: the image's geometry is fixed at build. The image
 * always fits in the FP32 tensor's bytes (checked), so the memory plan does not change.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "core/quant_attr.h"
#include "engine/engine_tactics.h"
#include "passes/pattern.h"

/* The chainable families (tc__tactic.chain, backends/tactic.h): a chain links a producer and a reader of the same one. */
enum {
    FAM_NONE = TC__CHAIN_NONE,
    FAM_INT8 = TC__CHAIN_INT8,         /* VNNI: u8 codes */
    FAM_FP16 = TC__CHAIN_FP16,
    FAM_BF16 = TC__CHAIN_BF16,
    FAM_INT8_S16 = TC__CHAIN_INT8_S16, /* the AVX2 variant: 16-bit centred codes */
    FAM_INT8_U7 = TC__CHAIN_INT8_U7,   /* the AVX2 variant for non-negative inputs: bytes of 7-bit codes */
    FAM_INT8_U8 = TC__CHAIN_INT8_U8,   /* the AVX2 u8w7 variant: bytes of the codes with their zero point */
    FAM_FP16_NHWC = TC__CHAIN_FP16_NHWC, /* device FP16 NHWC: chained by nhwc16_chain.c, not here */
    FAM_FP16_ROWS = TC__CHAIN_FP16_ROWS, /* device FP16 rows: chained by row16_chain.c, not here */
    FAM_COUNT_ = TC__CHAIN_COUNT_
};
#define FAM_DENSE 8 /* added to a MatMul/Gemm tactic's family: dense layers chain only with dense layers */

/* Per family: INT8 codes or 16-bit floats, bytes per image element, the layout `inspect` shows, the image format
 * (the 8th int of tc.int8_out_image, core/quant_attr.h) when a producer of another family writes it. */
static const struct {
    bool int8;
    size_t elem;
    const char *label;
    int64_t fmt;
} kFam[FAM_COUNT_] = {[FAM_NONE] = {false, 0, "", 0},
                      [FAM_INT8] = {true, 1, "u8-chain", TC__INT8_IMG_OWN},
                      [FAM_FP16] = {false, 2, "f16-chain", 0},
                      [FAM_BF16] = {false, 2, "bf16-chain", 0},
                      [FAM_INT8_S16] = {true, 2, "s16-chain", TC__INT8_IMG_S16},
                      [FAM_INT8_U7] = {true, 1, "u7-chain", TC__INT8_IMG_U7},
                      [FAM_INT8_U8] = {true, 1, "u8-chain", TC__INT8_IMG_U8},
                      [FAM_FP16_NHWC] = {false, 2, "nhwc16", 0},
                      [FAM_FP16_ROWS] = {false, 2, "row16", 0}};

/* True when fam (+ FAM_DENSE) is an AVX2 INT8 variant (their epilogue writes any of their images). */
static bool avx2_int8(int fam) {
    const int f = fam % FAM_DENSE;
    return f == FAM_INT8_S16 || f == FAM_INT8_U7 || f == FAM_INT8_U8;
}

/* True when a producer of family p (+ FAM_DENSE) can write the image a reader of family c reads: the same family, or
 * two AVX2 INT8 variants, dense with dense. */
static bool chains_with(int p, int c) {
    return p == c || (avx2_int8(p) && avx2_int8(c) && p / FAM_DENSE == c / FAM_DENSE);
}

/* Which chainable family a tactic belongs to (+ FAM_DENSE for MatMul/Gemm): its own chain descriptor. */
static int tactic_family(const char *tactic) {
    const tc__tactic *t = tactic != NULL ? tc__tactic_named(tactic) : NULL;
    if (t == NULL || t->chain == TC__CHAIN_NONE || t->chain >= TC__CHAIN_COUNT_ || t->chain == TC__CHAIN_FP16_NHWC ||
        t->chain == TC__CHAIN_FP16_ROWS)
        return FAM_NONE;
    const bool dense = strcmp(t->op_type, "MatMul") == 0 || strcmp(t->op_type, "Gemm") == 0;
    return t->chain + (dense ? FAM_DENSE : 0);
}

bool tc__lowp_tactic_chains(const char *tactic) { return tactic_family(tactic) != FAM_NONE; }

/* The family of step st (+ FAM_DENSE). */
static int family(const tc__step *st) { return st->kind == TC__STEP_COMPUTE ? tactic_family(st->tactic) : FAM_NONE; }

const char *tc__lowp_chain_label(const tc__attrs *attrs, const char *tactic) {
    const int64_t *v = NULL;
    if (tc__attr_ints(attrs, TC__ATTR_INT8_OUT_IMAGE, &v) == 8) { /* another family's image: the family of that format */
        for (int f = FAM_INT8_S16; f < FAM_COUNT_; f++)
            if (kFam[f].int8 && kFam[f].fmt == v[7]) return kFam[f].label;
        return "";
    }
    return kFam[tactic_family(tactic) % FAM_DENSE].label;
}

/* Readers of value v: node inputs (epilogue operands included) and graph outputs. */
static int readers(const tc__graph *g, int32_t v) {
    int n = 0;
    for (int k = 0; k < g->n_nodes; k++)
        for (int i = 0; i < g->nodes[k].n_in; i++) n += !g->nodes[k].removed && g->nodes[k].in[i] == v;
    for (int o = 0; o < g->n_outputs; o++) n += g->outputs[o] == v;
    return n;
}

bool tc__lowp_may_link(const tc__graph *g, int32_t p, const char *p_tactic, int32_t c, const char *c_tactic) {
    const int fp = tactic_family(p_tactic), fc = tactic_family(c_tactic);
    if (fp == FAM_NONE || fc == FAM_NONE || !chains_with(fp, fc) || g->nodes[c].n_in < 1) return false;
    const int32_t v = g->nodes[c].in[0];
    return v >= 0 && g->values[v].producer == p && g->nodes[p].out[0] == v && readers(g, v) == 1;
}

/* The step description of node k at shapes s, with its packed weights. */
static void desc_of(const tc__graph *g, int32_t k, const tc__shapes *s, tc__desc_store *ds) {
    tc__desc_build_packed(g, &g->nodes[k], s, ds);
}

/* The geometry of node k's INT8 / FP16 / BF16 step at shapes s, as its tactic (named) gives it (tactic.h). */
static bool geometry(const tc__graph *g, int32_t k, const char *tactic, const tc__shapes *s, tc__chain_geom *q) {
    const tc__tactic *t = tactic != NULL ? tc__tactic_named(tactic) : NULL;
    if (t == NULL || t->chain_geometry == NULL) return false;
    tc__desc_store ds;
    desc_of(g, k, s, &ds);
    return t->chain_geometry(&ds.d, q);
}

/* The attributes of an INT8 pair (producer p, reader c; codes of elem bytes), or false when they do not chain. */
static bool int8_pair(const tc__graph *g, int32_t p, const char *p_tactic, int32_t c, const char *c_tactic,
                      const tc__shapes *s, const tc__tensor *vt, size_t elem, int64_t img[9], float *scale) {
    tc__chain_geom qc, qp;
    if (!geometry(g, c, c_tactic, s, &qc) || !geometry(g, p, p_tactic, s, &qp)) return false;
    /* (a MatMul/Gemm is one image of one row: its pixels are the rows) */
    if (qp.cout != qc.cin || qp.oh != qc.ih || qp.ow != qc.iw || qp.batch != qc.batch || qc.in_image) return false;
    if (qc.batch * qc.hp * qc.wp * qc.cp * elem > (size_t)tc__tensor_numel(vt) * 4) return false;
    const int64_t v[7] = {(int64_t)qc.hp, (int64_t)qc.wp, (int64_t)qc.cp, (int64_t)qc.pt, (int64_t)qc.pl,
                          qc.zero_point, qc.lo};
    memcpy(img, v, sizeof v);
    img[8] = qc.hi; /* (img[7], the format, is the caller's) */
    *scale = qc.x_scale;
    return true;
}

/* The ints of an INT8 out image attribute with these 9 values: the highest code only when it is not 255, the format when
 * named (or needed before the highest code). */
static size_t int8_image_ints(const int64_t img[9], bool named) { return img[8] != 255 ? 9 : named ? 8 : 7; }

size_t tc__lowp_link_out_image(const tc__graph *g, int32_t p, const char *p_tactic, int32_t c, const char *c_tactic,
                               const tc__shapes *s, int64_t img[9], float *scale) {
    const int fc = tactic_family(c_tactic) % FAM_DENSE;
    if (!tc__lowp_may_link(g, p, p_tactic, c, c_tactic) || !kFam[fc].int8) return 0;
    if (!int8_pair(g, p, p_tactic, c, c_tactic, s, &s->t[g->nodes[c].in[0]], kFam[fc].elem, img, scale)) return 0;
    img[7] = kFam[fc].fmt;
    return int8_image_ints(img, true);
}

/* The same for an FP16 or BF16 pair. */
static bool half_pair(const tc__graph *g, int32_t p, const char *p_tactic, int32_t c, const char *c_tactic,
                      const tc__shapes *s, const tc__tensor *vt, int64_t img[5]) {
    tc__chain_geom hc, hp;
    if (!geometry(g, c, c_tactic, s, &hc) || !geometry(g, p, p_tactic, s, &hp)) return false;
    if (hp.cout != hc.cin || hp.oh != hc.ih || hp.ow != hc.iw || hp.batch != hc.batch || hc.in_image) return false;
    if (hc.batch * hc.hp * hc.wp * hc.cp * 2 > (size_t)tc__tensor_numel(vt) * 4) return false;
    const int64_t v[5] = {(int64_t)hc.hp, (int64_t)hc.wp, (int64_t)hc.cp, (int64_t)hc.pt, (int64_t)hc.pl};
    memcpy(img, v, sizeof v);
    return true;
}

/* True when the tactic of step st still takes its node with the new attributes. */
static bool still_supported(const tc__graph *g, const tc__step *st, const tc__shapes *s) {
    const tc__tactic *t = tc__step_tactic(st, g->nodes[st->node].op_type);
    tc__desc_store ds;
    desc_of(g, st->node, s, &ds);
    return t != NULL && t->supports(&ds.d);
}

/* True when fam (+ FAM_DENSE) is an AVX2 INT8 variant's Conv (dense or depthwise, not MatMul/Gemm). */
static bool avx2_conv(int fam) { return fam == FAM_INT8_S16 || fam == FAM_INT8_U7 || fam == FAM_INT8_U8; }

/* True when a Conv of family f may read a residual image of the multi-reader chain whose producer is of family pf: the
 * AVX2 variants (any of their images), or VNNI and AMX (FAM_INT8: u8 codes) with VNNI and AMX. */
static bool res_image_family(int pf, int f) { return pf == FAM_INT8 ? f == FAM_INT8 : avx2_conv(pf) && avx2_conv(f); }

/* The readers of v split by use, in node order: input 0 (data) or fused residual (res), at most 16 of each; false when a
 * node reads v otherwise (or both ways), when there are more, or when v is a graph output. */
static bool split_readers(const tc__graph *g, int32_t v, int32_t data[16], int *n_data, int32_t res[16], int *n_res) {
    *n_data = *n_res = 0;
    for (int o = 0; o < g->n_outputs; o++)
        if (g->outputs[o] == v) return false;
    for (int32_t r = 0; r < g->n_nodes; r++) {
        const tc__node *rn = &g->nodes[r];
        bool uses = false;
        for (int i = 0; i < rn->n_in && !rn->removed; i++) uses = uses || rn->in[i] == v;
        if (!uses) continue;
        if (*n_data >= 16 || *n_res >= 16) return false;
        const int ri = rn->epi.residual_input;
        for (int i = 1; i < rn->n_in; i++) /* v only as input 0 or as the residual, not both */
            if (rn->in[i] == v && (i != ri || rn->in[0] == v)) return false;
        if (rn->in[0] == v) data[(*n_data)++] = r;
        else res[(*n_res)++] = r;
    }
    return true;
}

/* Sets the attributes of a multi-reader image: p_attrs on its producer (step ps), in_attr on the input readers,
 * r_attrs on the residual readers; then every step's tactic must still take its node. */
static tc_status mark_readers(tc__graph *g, const tc__step *steps, const int32_t *step_of, const tc__step *ps,
                              const tc__shapes *s, const tc__attr *p_attrs, int n_p, const tc__attr *in_attr,
                              const int32_t *data, int n_data, const tc__attr *r_attrs, int n_r, const int32_t *res,
                              int n_res, int *chained, tc__err *err) {
    const int32_t p = ps->node;
    tc_status st = TC_STATUS_OK;
    for (int i = 0; i < n_p && st == TC_STATUS_OK; i++) st = tc__pat_set_attr(g, p, &p_attrs[i], err);
    for (int i = 0; i < n_data && st == TC_STATUS_OK; i++) st = tc__pat_set_attr(g, data[i], in_attr, err);
    for (int i = 0; i < n_res && st == TC_STATUS_OK; i++)
        for (int a = 0; a < n_r && st == TC_STATUS_OK; a++) st = tc__pat_set_attr(g, res[i], &r_attrs[a], err);
    bool ok = st == TC_STATUS_OK && still_supported(g, ps, s);
    for (int i = 0; i < n_data && ok; i++) ok = still_supported(g, &steps[step_of[data[i]]], s);
    for (int i = 0; i < n_res && ok; i++) ok = still_supported(g, &steps[step_of[res[i]]], s);
    if (st == TC_STATUS_OK && !ok)
        st = tc__fail(err, TC_STATUS_INTERNAL, "reduced-precision chain from %s to %d readers: the tactics refuse a chained step",
                      g->nodes[p].name, n_data + n_res);
    if (st == TC_STATUS_OK) ++*chained;
    return st;
}

/* The family of node r's step (FAM_NONE: none). */
static int node_family(const tc__step *steps, const int32_t *step_of, int32_t r) {
    return step_of[r] >= 0 ? family(&steps[step_of[r]]) : FAM_NONE;
}

/*
 * The output v of step k (an AVX2 INT8 Conv; or a VNNI or AMX one) when every reader is an INT8 Conv of the same kind
 * (AVX2 / VNNI and AMX) that takes it as its input (all with the same input image, scale and variant) or as its fused
 * residual, and there are several readers (ResNet's
 * block outputs: the next block's first Conv and downsample Conv read it, its last Conv adds it), or residual readers
 * only and k's output has a calibrated scale (tc.int8_y_scale: ResNet's downsample output, which conv3 adds):
 * k writes that image, the input readers take it as is (tc.int8_in_image) and the residual readers dequantize it
 * (tc.int8_res_image). Unlike the single-reader chain this changes results: the residual is quantized (to the
 * readers' codes), as INT8 engines do.
 */
static tc_status multi_reader_chain(tc__graph *g, const tc__step *steps, const int32_t *step_of, int k,
                                    const tc__shapes *s, int *chained, tc__err *err) {
    const tc__step *ps = &steps[k];
    const int32_t p = ps->node;
    const int pf = family(ps);
    if (!res_image_family(pf, pf) || p < 0 || g->nodes[p].n_out < 1) return TC_STATUS_OK;
    const int32_t v = g->nodes[p].out[0];
    if (v < 0 || tc__attr_has(&g->nodes[p].attrs, TC__ATTR_INT8_OUT_IMAGE) || readers(g, v) < 1) return TC_STATUS_OK;
    int32_t data[16], res[16];
    int n_data = 0, n_res = 0, fam = FAM_NONE;
    if (!split_readers(g, v, data, &n_data, res, &n_res)) return TC_STATUS_OK;
    for (int i = 0; i < n_res; i++)
        if (!res_image_family(pf, node_family(steps, step_of, res[i]))) return TC_STATUS_OK;
    tc__chain_geom q0 = {0}, qp = {0};
    for (int i = 0; i < n_data; i++) {
        const int f = node_family(steps, step_of, data[i]);
        tc__chain_geom q;
        if (!res_image_family(pf, f) || !geometry(g, data[i], steps[step_of[data[i]]].tactic, s, &q) || q.in_image ||
            (fam != FAM_NONE && f != fam))
            return TC_STATUS_OK;
        if (i > 0 && (q.hp != q0.hp || q.wp != q0.wp || q.cp != q0.cp || q.pt != q0.pt || q.pl != q0.pl ||
                      q.zero_point != q0.zero_point || q.lo != q0.lo || q.x_scale != q0.x_scale))
            return TC_STATUS_OK;
        fam = f, q0 = q;
    }
    if ((n_data == 1 && n_res == 0) || !geometry(g, p, ps->tactic, s, &qp))
        return TC_STATUS_OK; /* (one input reader: the chain) */
    if (n_data == 0) { /* residual readers only: an unpadded image of (AVX2: 16-bit) codes of the output's own scale */
        const float ys = tc__attr_float(&g->nodes[p].attrs, TC__ATTR_INT8_Y_SCALE, 0.0f);
        if (!(ys > 0.0f)) return TC_STATUS_OK;
        q0 = (tc__chain_geom){.batch = qp.batch, .cin = qp.cout, .ih = qp.oh, .iw = qp.ow, .hp = qp.oh, .wp = qp.ow,
                              .cp = (qp.cout + 3) / 4 * 4, .zero_point = 128, .lo = 1, .hi = 255, .x_scale = ys};
        fam = pf == FAM_INT8 ? FAM_INT8 : FAM_INT8_S16;
    }
    /* VNNI's image is its own u8 codes; named (TC__INT8_IMG_U8, with the zero point) where a residual reader reads it */
    const int64_t fmt = fam == FAM_INT8 ? TC__INT8_IMG_U8 : kFam[fam].fmt;
    if (qp.cout != q0.cin || qp.oh != q0.ih || qp.ow != q0.iw || qp.batch != q0.batch ||
        q0.batch * q0.hp * q0.wp * q0.cp * kFam[fam].elem > (size_t)tc__tensor_numel(&s->t[v]) * 4)
        return TC_STATUS_OK;
    const int64_t img[9] = {(int64_t)q0.hp, (int64_t)q0.wp, (int64_t)q0.cp, (int64_t)q0.pt, (int64_t)q0.pl,
                            q0.zero_point, q0.lo, fmt, q0.hi};
    const int64_t rimg[7] = {img[0], img[1], img[2], img[3], img[4], fmt, q0.zero_point}; /* (u8: its z) */
    const tc__attr out[2] = {{.name = TC__ATTR_INT8_OUT_IMAGE, .kind = TC__ATTR_INTS, .n = int8_image_ints(img, true),
                              .ints = img},
                             {.name = TC__ATTR_INT8_OUT_SCALE, .kind = TC__ATTR_FLOAT, .f = q0.x_scale}};
    const tc__attr in_img = {.name = TC__ATTR_INT8_IN_IMAGE, .kind = TC__ATTR_INT, .i = 1};
    const tc__attr res_attrs[2] = {{.name = TC__ATTR_INT8_RES_IMAGE, .kind = TC__ATTR_INTS,
                                    .n = fmt == TC__INT8_IMG_U8 ? 7 : 6, .ints = rimg},
                                   {.name = TC__ATTR_INT8_RES_SCALE, .kind = TC__ATTR_FLOAT, .f = q0.x_scale}};
    return mark_readers(g, steps, step_of, ps, s, out, 2, &in_img, data, n_data, res_attrs, 2, res, n_res, chained, err);
}

/*
 * The same for FP16 and BF16 (tc.half_res_image): the output v of step k (an FP16 or BF16 Conv) when every reader is a
 * Conv of the same family that takes it as its input (all with the same input image) or as its fused residual, and
 * there are several readers, or residual readers only (then an unpadded image of the output). k writes the image, the
 * input readers take it as is and the residual readers add its values: the residual is rounded to the 16-bit type, as
 * the engines that keep a whole network in it do.
 */
static tc_status half_multi_reader_chain(tc__graph *g, const tc__step *steps, const int32_t *step_of, int k,
                                         const tc__shapes *s, int *chained, tc__err *err) {
    const tc__step *ps = &steps[k];
    const int32_t p = ps->node;
    const int pf = family(ps);
    if ((pf != FAM_BF16 && pf != FAM_FP16) || p < 0 || g->nodes[p].n_out < 1) return TC_STATUS_OK;
    const int32_t v = g->nodes[p].out[0];
    if (v < 0 || tc__attr_has(&g->nodes[p].attrs, TC__ATTR_HALF_OUT_IMAGE) || readers(g, v) < 1) return TC_STATUS_OK;
    int32_t data[16], res[16];
    int n_data = 0, n_res = 0;
    if (!split_readers(g, v, data, &n_data, res, &n_res)) return TC_STATUS_OK;
    for (int i = 0; i < n_res; i++)
        if (node_family(steps, step_of, res[i]) != pf) return TC_STATUS_OK;
    tc__chain_geom h0 = {0}, hp = {0};
    for (int i = 0; i < n_data; i++) {
        tc__chain_geom h;
        if (node_family(steps, step_of, data[i]) != pf || !geometry(g, data[i], steps[step_of[data[i]]].tactic, s, &h) ||
            h.in_image)
            return TC_STATUS_OK;
        if (i > 0 && (h.hp != h0.hp || h.wp != h0.wp || h.cp != h0.cp || h.pt != h0.pt || h.pl != h0.pl))
            return TC_STATUS_OK;
        h0 = h;
    }
    if ((n_data == 1 && n_res == 0) || !geometry(g, p, ps->tactic, s, &hp) || hp.out_image)
        return TC_STATUS_OK; /* (one input reader: the chain) */
    if (n_data == 0) /* residual readers only: an unpadded image of the output */
        h0 = (tc__chain_geom){.cp = (hp.cout + 1) / 2 * 2, .batch = hp.batch, .cin = hp.cout, .ih = hp.oh, .iw = hp.ow,
                              .hp = hp.oh, .wp = hp.ow};
    if (hp.cout != h0.cin || hp.oh != h0.ih || hp.ow != h0.iw || hp.batch != h0.batch ||
        h0.batch * h0.hp * h0.wp * h0.cp * 2 > (size_t)tc__tensor_numel(&s->t[v]) * 4)
        return TC_STATUS_OK;
    const int64_t img[5] = {(int64_t)h0.hp, (int64_t)h0.wp, (int64_t)h0.cp, (int64_t)h0.pt, (int64_t)h0.pl};
    const tc__attr out_img = {.name = TC__ATTR_HALF_OUT_IMAGE, .kind = TC__ATTR_INTS, .n = 5, .ints = img};
    const tc__attr in_img = {.name = TC__ATTR_HALF_IN_IMAGE, .kind = TC__ATTR_INT, .i = 1};
    const tc__attr res_img = {.name = TC__ATTR_HALF_RES_IMAGE, .kind = TC__ATTR_INTS, .n = 5, .ints = img};
    return mark_readers(g, steps, step_of, ps, s, &out_img, 1, &in_img, data, n_data, &res_img, 1, res, n_res, chained,
                        err);
}

/* The step of each node (-1: none), or NULL when out of memory; free() it. */
static int32_t *step_index(const tc__graph *g, const tc__step *steps) {
    int32_t *step_of = malloc(sizeof *step_of * (size_t)(g->n_nodes + 1));
    if (step_of == NULL) return NULL;
    for (int k = 0; k < g->n_nodes; k++) step_of[k] = -1;
    for (int k = 0; k < g->n_nodes; k++)
        if (steps[k].node >= 0 && steps[k].node < g->n_nodes) step_of[steps[k].node] = k;
    return step_of;
}

tc_status tc__lowp_chain(tc__graph *g, const tc__step *steps, const tc__shapes *s, bool residual_images,
                         bool half_residual_images, int *chained, tc__err *err) {
    *chained = 0;
    int32_t *step_of = step_index(g, steps);
    if (step_of == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    tc_status st = TC_STATUS_OK;
    for (int k = 0; k < g->n_nodes && st == TC_STATUS_OK; k++) {
        const tc__step *cs = &steps[k];
        const int fam_dense = family(cs), fam = fam_dense % FAM_DENSE;
        if (fam == FAM_NONE) continue;
        const int32_t c = cs->node, v = g->nodes[c].in[0];
        const int32_t p = v >= 0 ? g->values[v].producer : -1;
        if (p < 0 || step_of[p] < 0 || !chains_with(family(&steps[step_of[p]]), fam_dense) || g->nodes[p].out[0] != v)
            continue;
        const bool cross = family(&steps[step_of[p]]) != fam_dense; /* the producer writes another family's image */
        if (readers(g, v) != 1 || tc__attr_has(&g->nodes[p].attrs, TC__ATTR_INT8_OUT_IMAGE) ||
            tc__attr_has(&g->nodes[p].attrs, TC__ATTR_HALF_OUT_IMAGE))
            continue;
        int64_t img[9];
        float scale = 0.0f;
        const bool int8 = kFam[fam].int8;
        const char *pt = steps[step_of[p]].tactic;
        if (int8 ? !int8_pair(g, p, pt, c, cs->tactic, s, &s->t[v], kFam[fam].elem, img, &scale)
                 : !half_pair(g, p, pt, c, cs->tactic, s, &s->t[v], img))
            continue;
        img[7] = kFam[fam].fmt;
        const tc__attr out_img = {.name = int8 ? TC__ATTR_INT8_OUT_IMAGE : TC__ATTR_HALF_OUT_IMAGE, .kind = TC__ATTR_INTS,
                                  .n = int8 ? int8_image_ints(img, cross || fam == FAM_INT8_U8) : 5,
                                  .ints = img}; /* (u8 images are always named: the kernel's own is another) */
        const tc__attr out_scale = {.name = TC__ATTR_INT8_OUT_SCALE, .kind = TC__ATTR_FLOAT, .f = scale};
        const tc__attr in_img = {.name = int8 ? TC__ATTR_INT8_IN_IMAGE : TC__ATTR_HALF_IN_IMAGE,
                                 .kind = TC__ATTR_INT, .i = 1};
        st = tc__pat_set_attr(g, p, &out_img, err);
        if (st == TC_STATUS_OK && int8) st = tc__pat_set_attr(g, p, &out_scale, err);
        if (st == TC_STATUS_OK) st = tc__pat_set_attr(g, c, &in_img, err);
        if (st == TC_STATUS_OK && (!still_supported(g, &steps[step_of[p]], s) || !still_supported(g, cs, s)))
            st = tc__fail(err, TC_STATUS_INTERNAL, "reduced-precision chain %s -> %s: the tactics refuse the chained step",
                          g->nodes[p].name, g->nodes[c].name);
        if (st == TC_STATUS_OK) ++*chained;
    }
    for (int k = 0; k < g->n_nodes && st == TC_STATUS_OK && residual_images; k++)
        st = multi_reader_chain(g, steps, step_of, k, s, chained, err);
    for (int k = 0; k < g->n_nodes && st == TC_STATUS_OK && half_residual_images; k++)
        st = half_multi_reader_chain(g, steps, step_of, k, s, chained, err);
    free(step_of);
    return st;
}

/* The readers of v into r[0..*n) (at most cap): false when v is a graph output, when a node reads it other than as its
 * input 0, or when there are more than cap readers. */
static bool input_readers(const tc__graph *g, int32_t v, int32_t *r, int cap, int *n) {
    *n = 0;
    for (int o = 0; o < g->n_outputs; o++)
        if (g->outputs[o] == v) return false;
    for (int32_t k = 0; k < g->n_nodes; k++) {
        const tc__node *nd = &g->nodes[k];
        bool uses = false;
        for (int i = 0; i < nd->n_in && !nd->removed; i++)
            if (nd->in[i] == v) {
                if (i != 0) return false;
                uses = true;
            }
        if (uses && *n == cap) return false;
        if (uses) r[(*n)++] = k;
    }
    return *n > 0;
}

/* The same image: every field a reader's input image depends on. */
static bool same_image(const tc__chain_geom *a, const tc__chain_geom *b) {
    return a->hp == b->hp && a->wp == b->wp && a->cp == b->cp && a->pt == b->pt && a->pl == b->pl &&
           a->zero_point == b->zero_point && a->lo == b->lo && a->hi == b->hi && a->x_scale == b->x_scale &&
           a->batch == b->batch && a->cin == b->cin && a->ih == b->ih && a->iw == b->iw;
}

tc_status tc__lowp_chain_images(tc__graph *g, tc__step *steps, const tc__shapes *s, int *chained, tc__err *err) {
    *chained = 0;
    int32_t *step_of = step_index(g, steps);
    if (step_of == NULL) return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "out of memory");
    tc_status st = TC_STATUS_OK;
    for (int k = 0; k < g->n_nodes && st == TC_STATUS_OK; k++) {
        tc__step *ms = &steps[k];
        const int32_t m = ms->node;
        if (ms->kind != TC__STEP_COMPUTE || g->nodes[m].n_out < 1) continue;
        /* a tactic of the step's backend that may write the image (TC__TACTIC_IMAGE_WRITER), and the step's output */
        const tc__tactic *t = NULL;
        tc__desc_store ds;
        desc_of(g, m, s, &ds);
        tc__chain_geom mg;
        const tc__backend *be = tc__backend_get(ms->backend);
        for (size_t i = 0; be != NULL && t == NULL && be->tactics[i] != NULL; i++) {
            const tc__tactic *w = be->tactics[i];
            if ((w->flags & TC__TACTIC_IMAGE_WRITER) && w->chain_geometry != NULL && (w->caps & ~be->caps()) == 0 &&
                strcmp(w->op_type, g->nodes[m].op_type) == 0 && w->chain_geometry(&ds.d, &mg))
                t = w;
        }
        if (t == NULL) continue;
        const size_t batch = mg.batch, c = mg.cout, h = mg.oh, w = mg.ow; /* the step's output */
        /* readers: AVX2 INT8 Convs (MatMul/Gemm read rows) of one family, each converting NCHW X into the same image */
        const int32_t v = g->nodes[m].out[0];
        int32_t r[8];
        int nr = 0, fam = FAM_NONE;
        bool ok = v >= 0 && input_readers(g, v, r, 8, &nr);
        tc__chain_geom q0 = {0}, q = {0};
        for (int i = 0; i < nr && ok; i++) {
            const int f = step_of[r[i]] >= 0 ? family(&steps[step_of[r[i]]]) : FAM_NONE;
            ok = avx2_int8(f) && f < FAM_DENSE && (i == 0 || f == fam) &&
                 geometry(g, r[i], steps[step_of[r[i]]].tactic, s, &q) && !q.in_image && q.x_nchw &&
                 (i == 0 || same_image(&q, &q0));
            fam = f, q0 = i == 0 ? q : q0;
        }
        if (!ok || q0.batch != batch || q0.cin != c || q0.ih != h || q0.iw != w ||
            q0.batch * q0.hp * q0.wp * q0.cp * kFam[fam].elem > (size_t)tc__tensor_numel(&s->t[v]) * 4)
            continue;
        const int64_t img[9] = {(int64_t)q0.hp, (int64_t)q0.wp, (int64_t)q0.cp, (int64_t)q0.pt, (int64_t)q0.pl,
                                q0.zero_point, q0.lo, kFam[fam].fmt, q0.hi};
        const tc__attr out_img = {.name = TC__ATTR_INT8_OUT_IMAGE, .kind = TC__ATTR_INTS, .n = int8_image_ints(img, true),
                                  .ints = img};
        const tc__attr out_scale = {.name = TC__ATTR_INT8_OUT_SCALE, .kind = TC__ATTR_FLOAT, .f = q0.x_scale};
        const tc__attr in_img = {.name = TC__ATTR_INT8_IN_IMAGE, .kind = TC__ATTR_INT, .i = 1};
        st = tc__pat_set_attr(g, m, &out_img, err);
        if (st == TC_STATUS_OK) st = tc__pat_set_attr(g, m, &out_scale, err);
        for (int i = 0; i < nr && st == TC_STATUS_OK; i++) st = tc__pat_set_attr(g, r[i], &in_img, err);
        if (st != TC_STATUS_OK) break;
        snprintf(ms->tactic, sizeof ms->tactic, "%s", t->name);
        snprintf(ms->precision, sizeof ms->precision, "%s", t->precision);
        desc_of(g, m, s, &ds);
        ok = t->supports(&ds.d);
        for (int i = 0; i < nr && ok; i++) ok = still_supported(g, &steps[step_of[r[i]]], s);
        if (!ok)
            st = tc__fail(err, TC_STATUS_INTERNAL, "INT8 image of %s %s for %d reader(s): the tactics refuse a chained step",
                          g->nodes[m].op_type, g->nodes[m].name, nr);
        else
            ++*chained;
    }
    free(step_of);
    return st;
}
