/*
 * conv_winograd_f32_avx512.c - the transforms and run() of the Winograd F(4x4, 3x3) Conv family
 * (see conv_winograd_f32.h), built with AVX-512 flags: filter transform U = G g G^T into MR-row
 * panels, input transform V = B^T d B (6x6 tiles, stride 4, zero padding) into NR-column panels,
 * 36 GEMMs on the GEMM operator, output transform Y = A^T M A with bias, residual and activation.
 * Interpolation points 0, +-1, +-2 and infinity (Lavin & Gray). The transforms take 16 tiles (in
 * the flat tile order of an image) per AVX-512 vector, gathering and scattering at the borders.
 */
#include <immintrin.h>
#include "core/thread_pool.h"
#include <string.h>

#include "backends/cpu/blocked_vec_avx512.h"
#include "backends/cpu/conv_winograd_f32.h"
#include "backends/cpu/conv_winograd_f32_transform.h"

typedef struct wino_job {
    const tc__wino_geom *g;
    size_t mr, nr;
    const float *x;     /* this image */
    const float *w;     /* [Cout, Cin, 3, 3] */
    const float *bias;  /* Cout values or NULL */
    const float *res;   /* this image's residual or NULL */
    float *y;           /* this image */
    float *u, *v, *m;
    tc__gemm_epi epi;   /* activation */
} wino_job;

/* ---- filter: U[e][co][ci] = (G g G^T)[e], one MR-row panel of co per task ---------------------- */

#define WINO_CI_BLOCK 16

/*
 * The lanes are the h rows co0 .. co0 + h - 1 of a panel; in each U[e], rows co0 .. co0 + h - 1 of
 * columns ci0 .. ci0 + nc - 1 are contiguous. A block of WINO_CI_BLOCK columns is built on the stack,
 * then copied plane by plane (writing the 36 planes at once would alias in the caches when a plane
 * is a power of two).
 */
static void filter_task(void *ctx, size_t panel) {
    const wino_job *jb = ctx;
    const tc__wino_geom *g = jb->g;
    const size_t plane = g->cout * g->cin, co0 = panel * jb->mr;
    const size_t h = g->cout - co0 < jb->mr ? g->cout - co0 : jb->mr;
    const __mmask16 rows = (__mmask16)((1u << h) - 1u);
    const __m512i stride = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                              _mm512_set1_epi32((int32_t)(g->cin * 9)));
    float blk[36][WINO_CI_BLOCK * TC__WINO_MAX_MR];
    for (size_t ci0 = 0; ci0 < g->cin; ci0 += WINO_CI_BLOCK) {
        const size_t nc = g->cin - ci0 < WINO_CI_BLOCK ? g->cin - ci0 : WINO_CI_BLOCK;
        for (size_t cc = 0; cc < nc; cc++) {
            const float *k = jb->w + (co0 * g->cin + ci0 + cc) * 9;
            __m512 kk[9], o[36];
            for (int i = 0; i < 9; i++)
                kk[i] = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), rows, stride, k + i, 4);
            wino_filter_2d(kk, o);
            for (int e = 0; e < 36; e++)
                _mm512_mask_storeu_ps(&blk[e][cc * h], rows, o[e]);
        }
        float *u = jb->u + tc__wino_pack_a_off(co0, ci0, g->cout, g->cin, jb->mr);
        for (size_t e = 0; e < 36; e++)
            memcpy(u + e * plane, blk[e], nc * h * sizeof(float));
    }
}

/* ---- input: V[e][ci][t] = (B^T d B)[e], 16 tiles (lanes) at a time -------------------------- */

/* Lanes of tiles t0 .. t0 + 15: the mask of those that exist and their first input row / column. */
static __mmask16 tile_lanes(const tc__wino_geom *g, size_t t0, long pad_t, long pad_l, __m512i *y0, __m512i *x0) {
    int32_t ys[16], xs[16];
    const size_t nt = g->tiles - t0 < 16 ? g->tiles - t0 : 16;
    for (size_t l = 0; l < 16; l++) {
        const size_t t = l < nt ? t0 + l : t0;
        ys[l] = (int32_t)((long)(t / g->tw * 4) - pad_t);
        xs[l] = (int32_t)((long)(t % g->tw * 4) - pad_l);
    }
    *y0 = _mm512_loadu_si512(ys);
    *x0 = _mm512_loadu_si512(xs);
    return (__mmask16)((1u << nt) - 1u);
}

static void input_task(void *ctx, size_t item) {
    const wino_job *jb = ctx;
    const tc__wino_geom *g = jb->g;
    const size_t groups = (g->tiles + 15) / 16, ci = item / groups, t0 = item % groups * 16;
    const float *xc = jb->x + ci * g->ih * g->iw;
    const size_t plane = g->cin * g->tiles;
    __m512i y0, x0;
    const __mmask16 lanes = tile_lanes(g, t0, (long)g->pad_t, (long)g->pad_l, &y0, &x0);
    const __m512i zero = _mm512_setzero_si512(), ih = _mm512_set1_epi32((int32_t)g->ih),
                  iw = _mm512_set1_epi32((int32_t)g->iw);
    __m512 d[36], o[36];
    for (int r = 0; r < 6; r++) {
        const __m512i y = _mm512_add_epi32(y0, _mm512_set1_epi32(r));
        const __mmask16 row_ok =
            lanes & _mm512_cmpge_epi32_mask(y, zero) & _mm512_cmplt_epi32_mask(y, ih);
        const __m512i rowoff = _mm512_mullo_epi32(y, iw);
        for (int c = 0; c < 6; c++) {
            const __m512i x = _mm512_add_epi32(x0, _mm512_set1_epi32(c));
            const __mmask16 ok = row_ok & _mm512_cmpge_epi32_mask(x, zero) & _mm512_cmplt_epi32_mask(x, iw);
            d[r * 6 + c] = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), ok, _mm512_add_epi32(rowoff, x), xc, 4);
        }
    }
    wino_input_2d(d, o);
    /* 16 consecutive tiles from a multiple of 16 are contiguous in an NR-column panel (NR % 16 == 0). */
    float *v = jb->v + tc__wino_pack_b_off(ci, t0, g->cin, g->tiles, jb->nr);
    for (int e = 0; e < 36; e++)
        _mm512_mask_storeu_ps(v + (size_t)e * plane, lanes, o[e]);
}

/* ---- output: Y = A^T M A + bias + residual, activation; one output channel per task ----------- */

static void output_task(void *ctx, size_t co) {
    const wino_job *jb = ctx;
    const tc__wino_geom *g = jb->g;
    const size_t plane = g->cout * g->tiles;
    float *yc = jb->y + co * g->oh * g->ow;
    const float *rc = jb->res ? jb->res + co * g->oh * g->ow : NULL;
    const uint8_t act = jb->epi.act;
    const __m512 bias = _mm512_set1_ps(jb->bias ? jb->bias[co] : 0.0f);
    const __m512 lo = _mm512_set1_ps(act == TC__ACT_CLIP ? jb->epi.act_alpha : 0.0f),
                 hi = _mm512_set1_ps(jb->epi.act_beta);
    const __m512i oh = _mm512_set1_epi32((int32_t)g->oh), ow = _mm512_set1_epi32((int32_t)g->ow);
    for (size_t t0 = 0; t0 < g->tiles; t0 += 16) {
        __m512i y0, x0;
        const __mmask16 lanes = tile_lanes(g, t0, 0, 0, &y0, &x0);
        const float *mp = jb->m + co * g->tiles + t0;
        __m512 m[36], q[16];
        for (int e = 0; e < 36; e++)
            m[e] = _mm512_maskz_loadu_ps(lanes, mp + (size_t)e * plane);
        wino_output_2d(m, q);
        for (int r = 0; r < 4; r++) {
            const __m512 *o = q + r * 4;
            const __m512i y = _mm512_add_epi32(y0, _mm512_set1_epi32(r));
            const __mmask16 row_ok = lanes & _mm512_cmplt_epi32_mask(y, oh);
            const __m512i rowoff = _mm512_mullo_epi32(y, ow);
            for (int c = 0; c < 4; c++) {
                const __m512i x = _mm512_add_epi32(x0, _mm512_set1_epi32(c));
                const __mmask16 ok = row_ok & _mm512_cmplt_epi32_mask(x, ow);
                const __m512i idx = _mm512_add_epi32(rowoff, x);
                __m512 val = _mm512_add_ps(o[c], bias);
                if (rc) val = _mm512_add_ps(val, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), ok, idx, rc, 4));
                if (act == TC__ACT_RELU) val = _mm512_max_ps(val, _mm512_setzero_ps());
                if (act == TC__ACT_CLIP) val = _mm512_min_ps(_mm512_max_ps(val, lo), hi);
                _mm512_mask_i32scatter_ps(yc, ok, idx, val, 4);
            }
        }
    }
    if (!tc__gemm_act_is_clamp(act)) tc__gemm_act_f32_avx512(yc, g->ow, g->oh, g->ow, &jb->epi);
}

tc_status tc__conv_winograd_f32_run(const tc__kernel_ctx *ctx, const tc__gemm_config *cfg) {
    const tc__tensor *bias = ctx->n_in > 2 ? ctx->in[2] : NULL;
    if (ctx->n_in < 2 || ctx->n_out < 1 || !tc__gemm_is_f32(ctx->in[0]) || !tc__gemm_is_f32(ctx->in[1]) ||
        !tc__gemm_is_f32(ctx->out[0]) || (bias != NULL && !tc__gemm_is_f32(bias)))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Conv expects float32 X, W, B and Y");
    tc__wino_geom g;
    if (!tc__conv_winograd_f32_geometry(ctx->attrs, ctx->in[0], ctx->in[1], ctx->out[0], &g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Conv is not 2-D 3x3 stride 1 with one group");
    if (bias != NULL && (bias->rank != 1 || (size_t)bias->dims[0] != g.cout))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Conv bias must have %zu values", g.cout);
    if (ctx->bias != NULL)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "Conv with a fused bias over the output's last dim");
    if (ctx->residual != NULL &&
        (!tc__gemm_is_f32(ctx->residual) || tc__tensor_numel(ctx->residual) != tc__tensor_numel(ctx->out[0])))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Conv residual must match the output");
    if (cfg->nr % 16 != 0 || cfg->mr == 0 || cfg->mr > TC__WINO_MAX_MR)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Winograd Conv needs a GEMM tile of 16k columns");
    if (g.batch == 0 || g.cout == 0) return TC_STATUS_OK;
    float *buf = tc__kernel_alloc(ctx, tc__conv_winograd_f32_buffer_floats(&g) * sizeof(float));
    if (buf == NULL) return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "Winograd Conv needs more scratch");
    tc__pool_t pool = (tc__pool_t)ctx->exec;
    wino_job jb = {.g = &g,
                   .mr = cfg->mr,
                   .nr = cfg->nr,
                   .w = ctx->in[1]->data,
                   .bias = bias ? bias->data : NULL,
                   .u = buf,
                   .epi = tc__gemm_epi_from_ctx(ctx)};
    jb.v = jb.u + 36 * g.cout * g.cin;
    jb.m = jb.v + 36 * g.cin * g.tiles;
    tc__wino_parallel(pool, filter_task, &jb, (g.cout + cfg->mr - 1) / cfg->mr);
    tc__gemm_f32_problem p = tc__conv_winograd_f32_problem(&g);
    p.a = jb.u;
    p.b = jb.v;
    p.c = jb.m;
    tc_status st = TC_STATUS_OK;
    const size_t isz = g.cin * g.ih * g.iw, osz = g.cout * g.oh * g.ow;
    for (size_t n = 0; n < g.batch && st == TC_STATUS_OK; n++) {
        jb.x = (const float *)ctx->in[0]->data + n * isz;
        jb.y = (float *)ctx->out[0]->data + n * osz;
        jb.res = ctx->residual ? (const float *)ctx->residual->data + n * osz : NULL;
        tc__wino_parallel(pool, input_task, &jb, g.cin * ((g.tiles + 15) / 16));
        st = tc__gemm_f32_run(&p, cfg, ctx);
        if (st == TC_STATUS_OK) tc__wino_parallel(pool, output_task, &jb, g.cout);
    }
    tc__kernel_free(ctx, buf);
    return st;
}
