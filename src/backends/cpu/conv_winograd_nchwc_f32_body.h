/*
 * conv_winograd_nchwc_f32_body.h - the body of Winograd F(4x4, 3x3) on a blocked layout (NCHW8c with AVX2,
 * NCHW16c with AVX-512) for one ISA: the input and output transform tasks and run(). One vector is the
 * BV_L channels of a pixel, so the transforms (conv_winograd_f32_transform.h) run on whole pixels with no
 * gathers: the input transform writes V[e][tile][C_in] and the output transform reads M[e][tile][C_out]
 * with plain vector loads and stores, the 36 GEMMs M[e] = V[e] * U[e] running on the GEMM operator
 * (tiles as rows). U[e] (C_in x C_out in NR-column panels) is the plan's packed weight when the tactic
 * packs it at build (NCHW16c, whose run fuses the three phases per block of tiles:
 * conv_wino_nchw16c_f32_avx512.c), else the includer's filter task builds it in scratch at every run (NCHW8c:
 * wc_run, three phases over the image). Results do not depend on the thread count (every task writes its own elements).
 * Include once, after blocked_vec_<isa>.h and conv_winograd_f32_transform.h.
 */
#ifndef TC_BACKENDS_CPU_CONV_WINOGRAD_NCHWC_F32_BODY_H
#define TC_BACKENDS_CPU_CONV_WINOGRAD_NCHWC_F32_BODY_H

#include <string.h>

#include "backends/cpu/conv_winograd_f32.h"
#include "core/layout.h"
#include "core/thread_pool.h"

typedef struct wc_job {
    const tc__wino_geom *g;
    size_t nr;         /* the GEMM's panel width */
    const float *x;    /* this image, blocked */
    const float *w;    /* [Cout, Cin, 3, 3] (the filter task's source) */
    const float *bias; /* Cout values or NULL */
    const float *res;  /* this image's residual (blocked as Y) or NULL */
    float *y;          /* this image, blocked */
    const float *u;    /* U: the packed weight, or the scratch the filter task fills */
    float *v, *m;
    tc__vact act;
} wc_job;

/* ---- one tile: the input transform of channel block cb, the output transform of output block cb ---------- */

/* V[e] of tile (ty, tx), channel block cb of image x: v[e * plane] for e = 0..35 (v: that tile's, that block's). */
static inline void wc_input_tile(const tc__wino_geom *g, const float *x, size_t cb, size_t ty, size_t tx, float *v,
                                 size_t plane) {
    const float *xc = x + cb * g->ih * g->iw * BV_L;
    const long ih = (long)g->ih, iw = (long)g->iw, y0 = (long)(ty * 4) - (long)g->pad_t;
    const long x0 = (long)(tx * 4) - (long)g->pad_l;
    const bool inside = y0 >= 0 && y0 + 6 <= ih && x0 >= 0 && x0 + 6 <= iw;
    BV_V d[36], o[36];
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < 6; c++) {
            const long yy = y0 + r, xx = x0 + c;
            d[r * 6 + c] = inside || (yy >= 0 && yy < ih && xx >= 0 && xx < iw)
                               ? BV_LOADU(xc + (size_t)(yy * iw + xx) * BV_L)
                               : BV_ZERO();
        }
    wino_input_2d(d, o);
    for (int e = 0; e < 36; e++)
        BV_STOREU(v + (size_t)e * plane, o[e]);
}

/* Y of tile (ty, tx), output block cb = act(A^T M A + bias + residual), from m[e * plane] (that tile's, that
 * block's); y and res are the image's. */
static inline void wc_output_tile(const tc__wino_geom *g, const float *m, size_t plane, size_t cb, size_t ty,
                                  size_t tx, BV_V bias, const float *res, float *y, const tc__vact *act) {
    const size_t img = cb * g->oh * g->ow * BV_L;
    BV_V mm[36], q[16];
    for (int e = 0; e < 36; e++)
        mm[e] = BV_LOADU(m + (size_t)e * plane);
    wino_output_2d(mm, q);
    for (size_t r = 0; r < 4 && ty * 4 + r < g->oh; r++)
        for (size_t c = 0; c < 4 && tx * 4 + c < g->ow; c++) {
            const size_t at = img + ((ty * 4 + r) * g->ow + tx * 4 + c) * BV_L;
            BV_V val = BV_ADD(q[r * 4 + c], bias);
            if (res) val = BV_ADD(val, BV_LOADU(res + at));
            BV_STOREU(y + at, BV_VACT(val, act));
        }
}

/* ---- input: V[e][t][ci] = (B^T d B)[e]; one row of tiles of one channel block per task ---------- */

static inline void wc_input_task(void *ctx, size_t item) {
    const wc_job *jb = ctx;
    const tc__wino_geom *g = jb->g;
    const size_t cb = item / g->th, ty = item % g->th, plane = g->tiles * g->cin;
    for (size_t tx = 0; tx < g->tw; tx++)
        wc_input_tile(g, jb->x, cb, ty, tx, jb->v + (ty * g->tw + tx) * g->cin + cb * BV_L, plane);
}

/* ---- output: Y = act(A^T M A + bias + residual); one row of tiles of one channel block per task --- */

static inline void wc_output_task(void *ctx, size_t item) {
    const wc_job *jb = ctx;
    const tc__wino_geom *g = jb->g;
    const size_t cb = item / g->th, ty = item % g->th, plane = g->tiles * g->cout;
    const BV_V bias = jb->bias ? BV_LOADU(jb->bias + cb * BV_L) : BV_ZERO();
    for (size_t tx = 0; tx < g->tw; tx++)
        wc_output_tile(g, jb->m + (ty * g->tw + tx) * g->cout + cb * BV_L, plane, cb, ty, tx, bias, jb->res, jb->y,
                       &jb->act);
}

/* What a run reads and writes, checked (wc_check). */
typedef struct wc_parts {
    tc__wino_geom g;
    const float *x, *w, *bias, *res; /* res: the fused residual, blocked as Y, or NULL */
    float *y;
    tc__vact act;
} wc_parts;

/*
 * Checks the step's tensors, layouts and epilogue: ctx->in X (blocked), W, optional B. packed_w: W holds U as the
 * tactic packed it (36 * C_in * C_out floats, tc__conv_winograd_nchwc_f32_u_floats); else the ONNX weight.
 */
static inline tc_status wc_check(const tc__kernel_ctx *ctx, const char *name, bool packed_w, wc_parts *pt) {
    memset(pt, 0, sizeof *pt);
    if (ctx->n_in < 2 || ctx->n_out < 1 || ctx->in[0] == NULL || ctx->in[1] == NULL || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Conv expects inputs X, W (and optional B) and output Y");
    /* B is input 2 unless that slot is the epilogue's residual. */
    const tc__tensor *bias = ctx->n_in > 2 && ctx->in[2] != NULL && ctx->in[2] != ctx->residual ? ctx->in[2] : NULL;
    const tc__tensor *x = ctx->in[0], *w = ctx->in[1];
    tc__tensor *y = ctx->out[0];
    tc__wino_geom *g = &pt->g;
    if (!tc__gemm_is_f32(x) || !tc__gemm_is_f32(w) || !tc__gemm_is_f32(y) ||
        !tc__conv_winograd_f32_geometry(ctx->attrs, x, w, y, g) || g->cin % BV_L != 0 || g->cout % BV_L != 0 ||
        !tc__layout_in_blocked(ctx->attrs, 0) || !tc__layout_out_blocked(ctx->attrs) ||
        tc__layout_block(ctx->attrs) != BV_L)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Conv shapes, attributes or layouts are not ones %s computes",
                        name);
    if (x->data == NULL || w->data == NULL || y->data == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Conv tensors X, W and Y need data");
    if (packed_w && w->nbytes < tc__conv_winograd_nchwc_f32_u_floats(g) * sizeof(float))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: W holds %zu bytes, not its packed transform", name,
                        w->nbytes);
    if (bias != NULL && (!tc__gemm_is_f32(bias) || tc__tensor_numel(bias) != (int64_t)g->cout || bias->data == NULL))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Conv bias B must be float32 [%zu]", g->cout);
    pt->x = x->data;
    pt->w = w->data;
    pt->y = y->data;
    pt->bias = bias ? bias->data : NULL;
    if (ctx->epi != NULL) {
        if (ctx->epi->bias_input >= 0 || ctx->bias != NULL)
            return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "Conv with a fused bias over the output's last dim");
        tc_status st = tc__vact_residual(ctx, tc__tensor_numel(y), &pt->res);
        if (st != TC_STATUS_OK) return st;
        pt->act = tc__vact_from_epilogue(ctx->epi);
    }
    return TC_STATUS_OK;
}

/*
 * Runs the step in three phases over each image, on the GEMM operator: the input transform into V, the 36 GEMMs
 * into M, the output transform. W is the ONNX weight: filter_task(job, co_block) writes U from it into job->u
 * (scratch) for each output channel block first.
 */
static inline tc_status wc_run(const tc__kernel_ctx *ctx, const tc__gemm_config *cfg, const char *name,
                        void (*filter_task)(void *, size_t)) {
    wc_parts pt;
    tc_status st = wc_check(ctx, name, false, &pt);
    if (st != TC_STATUS_OK) return st;
    const tc__wino_geom *g = &pt.g;
    if (cfg->nr % BV_L != 0)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s needs a GEMM tile of a multiple of %d columns", name,
                        BV_L);
    if (g->batch == 0 || g->cout == 0) return TC_STATUS_OK;
    wc_job jb = {.g = g, .nr = cfg->nr, .w = pt.w, .bias = pt.bias, .act = pt.act};
    const size_t u_floats = tc__conv_winograd_nchwc_f32_u_floats(g);
    float *buf = tc__kernel_alloc(ctx, (u_floats + tc__conv_winograd_nchwc_f32_vm_floats(g)) * sizeof(float));
    if (buf == NULL) return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "Winograd Conv needs more scratch");
    tc__pool_t pool = (tc__pool_t)ctx->exec;
    jb.u = buf;
    jb.v = buf + u_floats;
    jb.m = jb.v + 36 * g->cin * g->tiles;
    tc__wino_parallel(pool, filter_task, &jb, g->cout / BV_L);
    tc__gemm_f32_problem p = tc__conv_winograd_nchwc_f32_problem(g);
    p.a = jb.v;
    p.b = jb.u;
    p.c = jb.m;
    const size_t isz = g->cin * g->ih * g->iw, osz = g->cout * g->oh * g->ow;
    for (size_t n = 0; n < g->batch && st == TC_STATUS_OK; n++) {
        jb.x = pt.x + n * isz;
        jb.y = pt.y + n * osz;
        jb.res = pt.res ? pt.res + n * osz : NULL;
        tc__wino_parallel(pool, wc_input_task, &jb, g->cin / BV_L * g->th);
        st = tc__gemm_f32_run(&p, cfg, ctx);
        if (st == TC_STATUS_OK) tc__wino_parallel(pool, wc_output_task, &jb, g->cout / BV_L * g->th);
    }
    tc__kernel_free(ctx, buf);
    return st;
}

#endif
