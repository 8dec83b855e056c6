/* qimage_tactic.c - the tactic of qimage.h: which Mul steps it takes (those the reduced-precision chain gave an INT8
 * image) and its entry; the kernel is in qconv_s16_avx2.c. */
#include <math.h>
#include <string.h>

#include "backends/cpu/chain_geom.h"
#include "backends/cpu/lowp_layer.h"
#include "backends/cpu/qimage.h"
#include "backends/cpu/vec_isa.h"
#include "core/layout.h"
#include "core/quant_attr.h"

bool tc__qimage_mul_shape(const tc__step_desc *d, tc__qimage_mul *m) {
    memset(m, 0, sizeof *m);
    if (strcmp(d->op_type, "Mul") != 0 || d->n_in != 2 || d->n_out != 1 || d->in[0] == NULL || d->in[1] == NULL ||
        !tc__epilogue_is_none(d->epi) || d->bias != NULL || d->residual != NULL || tc__layout_any_blocked(d->attrs))
        return false;
    const tc__tensor *y = d->out[0];
    if (y->dtype != TC_DTYPE_FLOAT32 || y->rank != 4) return false;
    for (int xi = 0; xi < 2; xi++) {
        const tc__tensor *x = d->in[xi], *s = d->in[1 - xi];
        if (x->dtype != TC_DTYPE_FLOAT32 || s->dtype != TC_DTYPE_FLOAT32 || x->rank != 4 ||
            memcmp(x->dims, y->dims, sizeof(int64_t) * 4) != 0)
            continue;
        const int64_t n = y->dims[0], c = y->dims[1];
        const bool ok4 = s->rank == 4 && (s->dims[0] == 1 || s->dims[0] == n) && s->dims[1] == c && s->dims[2] == 1 &&
                         s->dims[3] == 1;
        const bool ok3 = s->rank == 3 && s->dims[0] == c && s->dims[1] == 1 && s->dims[2] == 1;
        if (!ok4 && !ok3) continue;
        *m = (tc__qimage_mul){.batch = (size_t)n, .c = (size_t)c, .h = (size_t)y->dims[2], .w = (size_t)y->dims[3],
                              .x_input = xi, .s_per_image = ok4 && s->dims[0] == n && n > 1};
        return n > 0 && c > 0 && y->dims[2] > 0 && y->dims[3] > 0;
    }
    return false;
}

/* The image attributes of step d whose output is [batch][c][oh][ow] (they must fit in Y's bytes; u7 bytes need
 * symmetric codes). */
static bool out_image_of(const tc__step_desc *d, size_t batch, size_t c, size_t oh, size_t ow, tc__qimage_out *o) {
    int64_t ex[4] = {0, 0, 0, 255}; /* zero point, lowest code, format (required), highest code (optional) */
    const int64_t *v = NULL;
    const size_t n = tc__attr_ints(d->attrs, TC__ATTR_INT8_OUT_IMAGE, &v);
    if (n != 8 && n != 9) return false;
    const int64_t fmt = v[7];
    if (fmt != TC__INT8_IMG_U7 && fmt != TC__INT8_IMG_S16 && fmt != TC__INT8_IMG_U8) return false;
    tc__lowp_image im;
    if (tc__lowp_out_image(d, TC__ATTR_INT8_OUT_IMAGE, (int)n - 5, 4, fmt == TC__INT8_IMG_S16 ? 2 : 1, batch, oh, ow, c,
                           &im, ex) != 1)
        return false;
    const float s = tc__attr_float(d->attrs, TC__ATTR_INT8_OUT_SCALE, 0.0f);
    if (!isfinite(s) || !(s > 0.0f) || ex[0] > 255 || ex[1] > 1 || (ex[3] != 255 && ex[3] != 127) || ex[0] > ex[3])
        return false;
    if (fmt == TC__INT8_IMG_U7 && (ex[0] != 128 || ex[1] != 1)) return false; /* bytes of max(q, 0): symmetric codes */
    *o = (tc__qimage_out){.hp = im.hp, .wp = im.wp, .cp = im.cp, .pt = im.pt, .pl = im.pl, .zp = (uint8_t)ex[0],
                          .lo = (uint8_t)ex[1], .fmt = (uint8_t)fmt, .hi = (uint8_t)ex[3], .scale = s};
    return true;
}

bool tc__qimage_mul_geometry(const tc__step_desc *d, tc__qimage_mul *m) {
    return tc__qimage_mul_shape(d, m) && out_image_of(d, m->batch, m->c, m->h, m->w, &m->o);
}

static bool m_supports(const tc__step_desc *d) {
    tc__qimage_mul m;
    return tc__qimage_mul_geometry(d, &m);
}
/* The step description of ctx (its inputs and output; no epilogue: the tactics take none). */
static tc__step_desc ctx_desc(const tc__kernel_ctx *ctx, const tc__tensor *in[2], const tc__tensor *out[1],
                              bool in_const[2], tc__epilogue *none) {
    for (int i = 0; i < 2; i++) in[i] = i < ctx->n_in ? ctx->in[i] : NULL, in_const[i] = false;
    out[0] = ctx->n_out > 0 ? ctx->out[0] : NULL;
    *none = tc__epilogue_none();
    return (tc__step_desc){.op_type = ctx->op_type, .opset = ctx->opset, .attrs = ctx->attrs,
                           .n_in = ctx->n_in < 2 ? ctx->n_in : 2, .in = in, .in_const = in_const, .n_out = 1,
                           .out = out, .epi = none};
}

static tc_status m_run(const tc__kernel_ctx *ctx) {
    const tc__tensor *in[2], *out[1];
    bool in_const[2];
    tc__epilogue none;
    const tc__step_desc d = ctx_desc(ctx, in, out, in_const, &none);
    tc__qimage_mul m;
    if (ctx->n_in != 2 || ctx->n_out != 1 || !tc__qimage_mul_geometry(&d, &m))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: a step the int8 image Mul does not take", ctx->op_type);
    return tc__qimage_mul_run_avx2(ctx, &m);
}

/* Never a tuning candidate: it takes only steps the chain gave an image (after the tactics are chosen). */
const tc__tactic tc__tactic_mul_int8_image_avx2 = {.name = "mul_int8_image_avx2", .op_type = "Mul",
                                                   .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2, .precision = "int8",
                                                   .flags = TC__TACTIC_IMAGE_WRITER,
                                                   .chain_geometry = tc__qimage_chain_geometry, .supports = m_supports,
                                                   .run = m_run};
