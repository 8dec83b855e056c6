/*
 * conv_winograd_f32.c - the baseline-ISA part of the Winograd F(4x4, 3x3) Conv family: which steps
 * it computes, their geometry, the GEMM problem of the 36 products and the scratch a run needs.
 * The transforms and run() are in conv_winograd_f32_avx512.c.
 */
#include <string.h>

#include "backends/cpu/conv_winograd_f32.h"
#include "backends/window.h"

bool tc__conv_winograd_f32_geometry(const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *wt,
                                    const tc__tensor *y, tc__wino_geom *g) {
    memset(g, 0, sizeof *g);
    if (x->rank != 4 || wt->rank != 4 || y->rank != 4) return false;
    if (wt->dims[2] != 3 || wt->dims[3] != 3) return false;
    if (tc__attr_int(attrs, "group", 1) != 1) return false;
    tc__err err = {0};
    const tc__kernel_ctx kctx = {.attrs = attrs, .err = &err};
    tc__window w;
    if (tc__window_resolve(&kctx, x, y, wt->dims + 2, &w) != TC_STATUS_OK) return false;
    for (int d = 0; d < 2; d++) {
        if (w.stride[d] != 1 || w.dilation[d] != 1 || w.pad_begin[d] < 0 || w.pad_end[d] < 0) return false;
        if (w.in[d] < 0 || w.out[d] < 1 || w.out[d] != w.in[d] + w.pad_begin[d] + w.pad_end[d] - 2) return false;
    }
    for (int i = 0; i < 2; i++)
        if (x->dims[i] < 1 || wt->dims[i] < 1) return false;
    if (x->dims[1] != wt->dims[1] || y->dims[1] != wt->dims[0] || y->dims[0] != x->dims[0]) return false;
    g->batch = (size_t)x->dims[0];
    g->cin = (size_t)x->dims[1];
    g->cout = (size_t)wt->dims[0];
    g->ih = (size_t)w.in[0];
    g->iw = (size_t)w.in[1];
    g->oh = (size_t)w.out[0];
    g->ow = (size_t)w.out[1];
    g->pad_t = (size_t)w.pad_begin[0];
    g->pad_l = (size_t)w.pad_begin[1];
    /* The transforms index a plane, its tiles and the weights with 32-bit lanes. */
    const size_t lim = (size_t)1 << 28;
    if (g->ih > lim || g->iw > lim || g->oh > lim || g->ow > lim || g->ih * g->iw > lim || g->oh * g->ow > lim ||
        g->pad_t > lim || g->pad_l > lim || g->cin > lim / 9 / g->cout)
        return false;
    g->th = (g->oh + 3) / 4;
    g->tw = (g->ow + 3) / 4;
    g->tiles = g->th * g->tw;
    return true;
}

size_t tc__conv_winograd_f32_buffer_floats(const tc__wino_geom *g) {
    return tc__conv_winograd_nchwc_f32_u_floats(g) + tc__conv_winograd_nchwc_f32_vm_floats(g); /* the same U, V, M */
}

tc__gemm_f32_problem tc__conv_winograd_f32_problem(const tc__wino_geom *g) {
    tc__gemm_f32_problem p = tc__gemm_f32_problem_init(g->cout, g->tiles, g->cin);
    p.a_packed = true;
    p.b_packed = true;
    p.ldc = g->tiles;
    p.nb = 1;
    p.bdims[0] = 36;
    p.a_bs[0] = g->cout * g->cin;
    p.b_bs[0] = g->cin * g->tiles;
    p.c_bs[0] = g->cout * g->tiles;
    return p;
}

bool tc__conv_winograd_f32_supports(const tc__step_desc *d) {
    if (strcmp(d->op_type, "Conv") != 0 || d->n_in < 2 || d->n_in > 3 || d->n_out < 1) return false;
    const tc__tensor *x = d->in[0], *wt = d->in[1], *b = d->n_in > 2 ? d->in[2] : NULL, *y = d->out[0];
    if (!tc__gemm_is_f32(x) || !tc__gemm_is_f32(wt) || !tc__gemm_is_f32(y)) return false;
    if (b != NULL && (!tc__gemm_is_f32(b) || b->rank != 1 || b->dims[0] != wt->dims[0])) return false;
    tc__wino_geom g;
    if (!tc__conv_winograd_f32_geometry(d->attrs, x, wt, y, &g)) return false;
    if (d->bias != NULL || (d->epi != NULL && d->epi->bias_input >= 0)) return false;
    return tc__gemm_epilogue_ok(d, 0);
}

size_t tc__conv_winograd_f32_scratch_bytes(const tc__step_desc *d, const tc__gemm_config *cfg) {
    tc__wino_geom g;
    if (!tc__conv_winograd_f32_geometry(d->attrs, d->in[0], d->in[1], d->out[0], &g)) return 0;
    const tc__gemm_f32_problem p = tc__conv_winograd_f32_problem(&g);
    const size_t buf = (tc__conv_winograd_f32_buffer_floats(&g) * sizeof(float) + 63) / 64 * 64;
    return buf + 64 + tc__gemm_f32_scratch_bytes(&p, cfg, tc__gemm_tactic_max_threads()) + 64;
}
