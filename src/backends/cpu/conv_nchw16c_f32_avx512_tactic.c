/*
 * conv_nchw16c_f32_avx512_tactic.c - tactics conv_nchw16c_f32_avx512 and conv_nchw8c_f32_avx2: direct
 * Conv (2-D, one group, any strides, pads, dilations and auto_pad) from a blocked (NCHW16c / NCHW8c)
 * or plain NCHW input to a blocked output, with the conv bias, the residual and the activation fused
 * (conv_nchw16c_f32.h). This file is the baseline-ISA part: the geometry, which steps the tactics
 * take, and the weight packing done at build; the microkernels and run() are in
 * conv_nchwc_f32_kernel.h (conv_nchw16c_f32_avx512.c, conv_nchw8c_f32_avx2.c).
 */
#include <string.h>

#include "backends/cpu/blocked_f32.h"
#include "backends/cpu/conv2d_window.h"
#include "backends/cpu/conv_nchw16c_f32.h"
#include "backends/cpu/vec_isa.h"

/* Bound on every size, stride, dilation and pad, so that offsets in floats cannot overflow. */
#define CV_MAX_EXTENT ((int64_t)1 << 24)

/* True when t has fewer than limit elements (dims >= 1). */
static bool cv_numel_below(const tc__tensor *t, int64_t limit) {
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        if (tc__mul_overflow_i64(n, t->dims[i], &n) || n >= limit) return false;
    return true;
}

bool tc__conv_nchw16c_f32_geometry(const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *w,
                                   const tc__tensor *y, bool blocked_in, size_t block, tc__conv16_geom *g) {
    memset(g, 0, sizeof *g);
    tc__window rw;
    if (block != TC__LAYOUT_BLOCK && block != TC__LAYOUT_BLOCK_AVX2) return false;
    if (!tc__conv2d_window(attrs, x, w, y, CV_MAX_EXTENT, &rw)) return false;
    /* The weight and the images stay below 2^40 floats (2^44 with their channels padded up to the block). */
    if (!cv_numel_below(w, (int64_t)1 << 40) || !cv_numel_below(x, (int64_t)1 << 40) ||
        !cv_numel_below(y, (int64_t)1 << 40) || w->dims[0] < 1 || x->dims[1] < 1)
        return false;
    const size_t cin = (size_t)x->dims[1], cout = (size_t)w->dims[0];
    *g = (tc__conv16_geom){.batch = (size_t)x->dims[0],
                           .cin = blocked_in ? tc__nchwc_channels(block, cin) : cin,
                           .cout = tc__nchwc_channels(block, cout),
                           .cin_real = cin,
                           .cout_real = cout,
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
                           .pt = rw.pad_begin[0],
                           .pl = rw.pad_begin[1],
                           .block = block,
                           .group = blocked_in ? block : 1,
                           .blocked_in = blocked_in};
    return true;
}

/* The geometry of step d, X blocked as its tc.layout_in says, in blocks of its tc.layout_block. */
static bool cv_desc_geometry(const tc__step_desc *d, tc__conv16_geom *g) {
    if (d->n_in < 2 || d->n_in > 3 || d->n_out < 1 || d->in[0] == NULL || d->in[1] == NULL || d->out[0] == NULL)
        return false;
    return tc__conv_nchw16c_f32_geometry(d->attrs, d->in[0], d->in[1], d->out[0], tc__layout_in_blocked(d->attrs, 0),
                                         (size_t)tc__layout_block(d->attrs), g);
}

/*
 * The fused epilogue (an activation, no bias over the last dim, a residual of Y's shape) and the
 * layouts: Y and the residual blocked, X as its bit says, nothing else.
 */
static bool cv_epilogue_ok(const tc__step_desc *d) {
    if (!tc__vact_epilogue_supported(d) || (d->residual != NULL && d->epi == NULL)) return false;
    const uint64_t x_bit = tc__layout_in_blocked(d->attrs, 0) ? 1 : 0;
    return tc__blk_layout_is(d->attrs, tc__blk_with_residual(x_bit, d->epi), true);
}

/* The step's Conv in blocks of `block` channels. */
static bool cv_supports(const tc__step_desc *d, int64_t block) {
    if (strcmp(d->op_type, "Conv") != 0 || tc__layout_block(d->attrs) != block) return false;
    tc__conv16_geom g;
    if (!cv_desc_geometry(d, &g)) return false;
    if (d->in_const == NULL || !d->in_const[1] || d->in[1]->data == NULL) return false;
    const tc__tensor *b = d->n_in > 2 ? d->in[2] : NULL;
    if (b != NULL && (b->dtype != TC_DTYPE_FLOAT32 || b->rank != 1 || b->dims[0] != (int64_t)g.cout_real)) return false;
    /* A padded C_out reads its bias padded with zeros: packed at build, so constant. */
    if (b != NULL && g.cout != g.cout_real && !d->in_const[2]) return false;
    return cv_epilogue_ok(d);
}

bool tc__conv_nchw16c_f32_supports(const tc__step_desc *d) { return cv_supports(d, TC__LAYOUT_BLOCK); }
bool tc__conv_nchw8c_f32_supports(const tc__step_desc *d) { return cv_supports(d, TC__LAYOUT_BLOCK_AVX2); }

/* W, and B when C_out is padded (its padding channels read zeros). */
bool tc__conv_nchw16c_f32_packs_input(const tc__step_desc *d, int index) {
    if (index == 1) return true;
    tc__conv16_geom g;
    return index == 2 && d->n_in > 2 && d->in[2] != NULL && d->in_const != NULL && d->in_const[2] &&
           cv_desc_geometry(d, &g) && g.cout != g.cout_real;
}

size_t tc__conv_nchw16c_f32_packed_bytes(const tc__step_desc *d, int index) {
    tc__conv16_geom g;
    if (!cv_desc_geometry(d, &g)) return 0;
    if (index == 2) return g.cout * sizeof(float);
    return index == 1 ? g.cout * g.cin * g.kh * g.kw * sizeof(float) : 0;
}

tc_status tc__conv_nchw16c_f32_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    tc__conv16_geom g;
    if ((index != 1 && index != 2) || !cv_desc_geometry(d, &g))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                        "conv_nchw16c_f32 packs only the weight W (and bias B) of a Conv it supports");
    const float *s = src;
    float *o = dst;
    if (index == 2) {
        for (size_t oc = 0; oc < g.cout; oc++) o[oc] = oc < g.cout_real ? s[oc] : 0.0f;
        return TC_STATUS_OK;
    }
    for (size_t oc = 0; oc < g.cout; oc++)
        for (size_t ic = 0; ic < g.cin; ic++)
            for (size_t kh = 0; kh < g.kh; kh++)
                for (size_t kw = 0; kw < g.kw; kw++)
                    o[tc__conv16_weight_offset(&g, oc, ic, kh, kw)] =
                        oc < g.cout_real && ic < g.cin_real ? s[((oc * g.cin_real + ic) * g.kh + kh) * g.kw + kw] : 0.0f;
    return TC_STATUS_OK;
}

/* True when the step runs as one row of pixels (1x1, stride 1, no padding), as the kernel's cv_job_init decides. */
static bool cv_flat(const tc__conv16_geom *g) {
    return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 && g->pl == 0 && g->oh == g->ih &&
           g->ow == g->iw;
}

/*
 * The default (one unit per task for a flat step, two otherwise), then for a flat step two units per
 * task (4-block tiles: each input pixel read once per 64 output channels instead of 32). Narrow tiles for the other
 * steps, and 16 or 64 KiB reduction chunks, won some tuner timings (warm caches) by a few percent but made ResNet-50
 * 1.3% slower in the model (its inputs cold), so they are not configurations.
 */
int tc__conv_nchw16c_f32_configs(const tc__step_desc *d, void *out, int cap) {
    tc__conv16_geom g;
    if (!cv_desc_geometry(d, &g)) return 0;
    const bool flat = cv_flat(&g);
    const tc__conv16_config list[2] = {{flat ? 0u : 1u}, {1u}};
    const int n = flat ? 2 : 1;
    for (int i = 0; i < n && i < cap; i++) memcpy((char *)out + (size_t)i * sizeof list[0], &list[i], sizeof list[0]);
    return n;
}

bool tc__conv_nchw16c_f32_check_config(const void *config, tc__err *err) {
    tc__conv16_config c;
    memcpy(&c, config, sizeof c);
    if (c.wide > 1) {
        tc__fail(err, TC_STATUS_CORRUPT_FILE, "direct blocked Conv configuration: wide %u is not 0 or 1", c.wide);
        return false;
    }
    return true;
}

const tc__tactic tc__tactic_conv_nchw16c_f32_avx512 = {
    .name = "conv_nchw16c_f32_avx512",
    .op_type = "Conv",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX512,
    .flags = TC__TACTIC_FUSES_EPILOGUE | TC__TACTIC_BLOCKED,
    .supports = tc__conv_nchw16c_f32_supports,
    .packs_input = tc__conv_nchw16c_f32_packs_input,
    .pack = tc__conv_nchw16c_f32_pack,
    .packed_bytes = tc__conv_nchw16c_f32_packed_bytes,
    .scratch_bytes = NULL,
    .run = tc__conv_nchw16c_f32_run_avx512,
    .config_bytes = sizeof(tc__conv16_config),
    .configs = tc__conv_nchw16c_f32_configs,
    .check_config = tc__conv_nchw16c_f32_check_config,
};

const tc__tactic tc__tactic_conv_nchw8c_f32_avx2 = {
    .name = "conv_nchw8c_f32_avx2",
    .op_type = "Conv",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2,
    .flags = TC__TACTIC_FUSES_EPILOGUE | TC__TACTIC_BLOCKED | TC__TACTIC_BLOCK8,
    .supports = tc__conv_nchw8c_f32_supports,
    .packs_input = tc__conv_nchw16c_f32_packs_input,
    .pack = tc__conv_nchw16c_f32_pack,
    .packed_bytes = tc__conv_nchw16c_f32_packed_bytes,
    .scratch_bytes = NULL,
    .run = tc__conv_nchw8c_f32_run_avx2,
    .config_bytes = sizeof(tc__conv16_config),
    .configs = tc__conv_nchw16c_f32_configs,
    .check_config = tc__conv_nchw16c_f32_check_config,
};
