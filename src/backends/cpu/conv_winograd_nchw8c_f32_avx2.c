/*
 * conv_winograd_nchw8c_f32_avx2.c - the transforms and run() of Winograd F(4x4, 3x3) on NCHW8c
 * (conv_winograd_f32.h), built with AVX2 flags. One ymm vector is the 8 channels of a pixel, so the
 * transforms (conv_winograd_f32_transform.h, shared with the NCHW AVX-512 form) run on whole pixels
 * with no gathers: the input transform writes V[e][tile][C_in] and the output transform reads
 * M[e][tile][C_out] with plain vector loads and stores, the 36 GEMMs M[e] = V[e] * U[e] running on the
 * GEMM operator (tiles as rows). The filter U[e] (C_in x C_out, NR-column panels) is transformed at
 * run time. Results do not depend on the thread count (every task writes its own elements).
 */
#include "core/thread_pool.h"
#include <string.h>

#include "backends/cpu/blocked_vec_avx2.h"
#include "backends/cpu/conv_winograd_f32.h"
#include "backends/cpu/conv_winograd_f32_transform.h"
#include "core/layout.h"

typedef struct w8_job {
    const tc__wino_geom *g;
    size_t nr;         /* the GEMM's panel width */
    const float *x;    /* this image, NCHW8c */
    const float *w;    /* [Cout, Cin, 3, 3] */
    const float *bias; /* Cout values or NULL */
    const float *res;  /* this image's residual (NCHW8c) or NULL */
    float *y;          /* this image, NCHW8c */
    float *u, *v, *m;
    tc__vact act;
} w8_job;

/* ---- filter: U[e](ci, co) = (G g G^T)[e], lanes = 8 output channels; one block of 8 per task ---- */

static void w8_filter_task(void *ctx, size_t cb) {
    const w8_job *jb = ctx;
    const tc__wino_geom *g = jb->g;
    const size_t co0 = cb * BV_L, plane = g->cin * g->cout;
    const __m256i stride = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                              _mm256_set1_epi32((int32_t)(g->cin * 9)));
    for (size_t ci = 0; ci < g->cin; ci++) {
        const float *k = jb->w + (co0 * g->cin + ci) * 9;
        BV_V kk[9], o[36];
        for (int i = 0; i < 9; i++)
            kk[i] = _mm256_i32gather_ps(k + i, stride, 4);
        wino_filter_2d(kk, o);
        /* co0 .. co0 + 7 are contiguous in their panel: C_out % 8 == 0 and NR % 8 == 0. */
        float *u = jb->u + tc__wino_pack_b_off(ci, co0, g->cin, g->cout, jb->nr);
        for (int e = 0; e < 36; e++)
            BV_STOREU(u + (size_t)e * plane, o[e]);
    }
}

/* ---- input: V[e][t][ci] = (B^T d B)[e]; one row of tiles of one channel block per task ---------- */

static void w8_input_task(void *ctx, size_t item) {
    const w8_job *jb = ctx;
    const tc__wino_geom *g = jb->g;
    const size_t cb = item / g->th, ty = item % g->th, plane = g->tiles * g->cin;
    const float *xc = jb->x + cb * g->ih * g->iw * BV_L;
    const long ih = (long)g->ih, iw = (long)g->iw, y0 = (long)(ty * 4) - (long)g->pad_t;
    for (size_t tx = 0; tx < g->tw; tx++) {
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
        float *v = jb->v + (ty * g->tw + tx) * g->cin + cb * BV_L;
        for (int e = 0; e < 36; e++)
            BV_STOREU(v + (size_t)e * plane, o[e]);
    }
}

/* ---- output: Y = act(A^T M A + bias + residual); one row of tiles of one channel block per task --- */

static void w8_output_task(void *ctx, size_t item) {
    const w8_job *jb = ctx;
    const tc__wino_geom *g = jb->g;
    const size_t cb = item / g->th, ty = item % g->th, plane = g->tiles * g->cout;
    const size_t img = cb * g->oh * g->ow * BV_L;
    const BV_V bias = jb->bias ? BV_LOADU(jb->bias + cb * BV_L) : BV_ZERO();
    for (size_t tx = 0; tx < g->tw; tx++) {
        const float *mp = jb->m + (ty * g->tw + tx) * g->cout + cb * BV_L;
        BV_V m[36], q[16];
        for (int e = 0; e < 36; e++)
            m[e] = BV_LOADU(mp + (size_t)e * plane);
        wino_output_2d(m, q);
        for (size_t r = 0; r < 4 && ty * 4 + r < g->oh; r++)
            for (size_t c = 0; c < 4 && tx * 4 + c < g->ow; c++) {
                const size_t at = img + ((ty * 4 + r) * g->ow + tx * 4 + c) * BV_L;
                BV_V val = BV_ADD(q[r * 4 + c], bias);
                if (jb->res) val = BV_ADD(val, BV_LOADU(jb->res + at));
                BV_STOREU(jb->y + at, BV_VACT(val, &jb->act));
            }
    }
}

tc_status tc__conv_winograd_nchw8c_f32_run_avx2(const tc__kernel_ctx *ctx) {
    const tc__gemm_config *cfg = &tc__gemm_config_f32_avx2;
    if (ctx->n_in < 2 || ctx->n_out < 1 || ctx->in[0] == NULL || ctx->in[1] == NULL || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Conv expects inputs X, W (and optional B) and output Y");
    /* B is input 2 unless that slot is the epilogue's residual. */
    const tc__tensor *bias = ctx->n_in > 2 && ctx->in[2] != NULL && ctx->in[2] != ctx->residual ? ctx->in[2] : NULL;
    const tc__tensor *x = ctx->in[0], *w = ctx->in[1];
    tc__tensor *y = ctx->out[0];
    tc__wino_geom g;
    if (!tc__gemm_is_f32(x) || !tc__gemm_is_f32(w) || !tc__gemm_is_f32(y) ||
        !tc__conv_winograd_f32_geometry(ctx->attrs, x, w, y, &g) || g.cin % BV_L != 0 || g.cout % BV_L != 0 ||
        !tc__layout_in_blocked(ctx->attrs, 0) || !tc__layout_out_blocked(ctx->attrs) ||
        tc__layout_block(ctx->attrs) != BV_L)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "Conv shapes, attributes or layouts are not ones conv_winograd_nchw8c_f32 computes");
    if (x->data == NULL || w->data == NULL || y->data == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Conv tensors X, W and Y need data");
    if (bias != NULL && (!tc__gemm_is_f32(bias) || tc__tensor_numel(bias) != (int64_t)g.cout || bias->data == NULL))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Conv bias B must be float32 [%zu]", g.cout);
    w8_job jb = {.g = &g, .nr = cfg->nr, .w = w->data, .bias = bias ? bias->data : NULL};
    const float *res = NULL;
    if (ctx->epi != NULL) {
        if (ctx->epi->bias_input >= 0 || ctx->bias != NULL)
            return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "Conv with a fused bias over the output's last dim");
        tc_status st = tc__vact_residual(ctx, tc__tensor_numel(y), &res);
        if (st != TC_STATUS_OK) return st;
        jb.act = tc__vact_from_epilogue(ctx->epi);
    }
    if (cfg->nr % BV_L != 0)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Winograd NCHW8c Conv needs a GEMM tile of 8k columns");
    if (g.batch == 0 || g.cout == 0) return TC_STATUS_OK;
    float *buf = tc__kernel_alloc(ctx, tc__conv_winograd_f32_buffer_floats(&g) * sizeof(float));
    if (buf == NULL) return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "Winograd Conv needs more scratch");
    tc__pool_t pool = (tc__pool_t)ctx->exec;
    jb.u = buf;
    jb.v = jb.u + 36 * g.cout * g.cin;
    jb.m = jb.v + 36 * g.cin * g.tiles;
    tc__wino_parallel(pool, w8_filter_task, &jb, g.cout / BV_L);
    tc__gemm_f32_problem p = tc__conv_winograd_nchw8c_f32_problem(&g);
    p.a = jb.v;
    p.b = jb.u;
    p.c = jb.m;
    tc_status st = TC_STATUS_OK;
    const size_t isz = g.cin * g.ih * g.iw, osz = g.cout * g.oh * g.ow;
    for (size_t n = 0; n < g.batch && st == TC_STATUS_OK; n++) {
        jb.x = (const float *)x->data + n * isz;
        jb.y = (float *)y->data + n * osz;
        jb.res = res ? res + n * osz : NULL;
        tc__wino_parallel(pool, w8_input_task, &jb, g.cin / BV_L * g.th);
        st = tc__gemm_f32_run(&p, cfg, ctx);
        if (st == TC_STATUS_OK) tc__wino_parallel(pool, w8_output_task, &jb, g.cout / BV_L * g.th);
    }
    tc__kernel_free(ctx, buf);
    return st;
}
