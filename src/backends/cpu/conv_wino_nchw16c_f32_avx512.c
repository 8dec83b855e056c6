/*
 * conv_wino_nchw16c_f32_avx512.c - Winograd F(4x4, 3x3) on NCHW16c with AVX-512 (conv_winograd_f32.h): the
 * body conv_winograd_nchwc_f32_body.h with zmm vectors of 16 channels and the 14x32 GEMM microkernel, reading the
 * transformed filter U that the tactic packed into the plan; and that packing (build time, lanes = 16 output
 * channels).
 */
#include "backends/cpu/blocked_vec_avx512.h"
#include "backends/cpu/conv_winograd_f32_transform.h"
#include "backends/cpu/conv_winograd_nchwc_f32_body.h"

void tc__conv_winograd_nchw16c_f32_pack_avx512(const tc__wino_geom *g, const float *w, float *u, size_t nr) {
    const size_t plane = g->cin * g->cout;
    for (size_t co0 = 0; co0 < g->cout; co0 += BV_L)
        for (size_t ci = 0; ci < g->cin; ci++) {
            float taps[9][BV_L];
            for (size_t l = 0; l < BV_L; l++)
                for (int i = 0; i < 9; i++)
                    taps[i][l] = w[((co0 + l) * g->cin + ci) * 9 + (size_t)i];
            BV_V kk[9], o[36];
            for (int i = 0; i < 9; i++)
                kk[i] = BV_LOADU(taps[i]);
            wino_filter_2d(kk, o);
            /* co0 .. co0 + 15 are contiguous in their panel: C_out % 16 == 0 and NR % 16 == 0. */
            float *dst = u + tc__wino_pack_b_off(ci, co0, g->cin, g->cout, nr);
            for (int e = 0; e < 36; e++)
                BV_STOREU(dst + (size_t)e * plane, o[e]);
        }
}

/*
 * The run, fused per block of tiles: a task takes up to MR tiles of one image (a GEMM row block; the tiles spread
 * evenly over the fewest such blocks) and, in a buffer
 * of its thread's, transforms their inputs (V[e]: tiles x C_in), multiplies each V[e] by the packed U[e] with the
 * microkernel (M[e]: tiles x C_out, the whole K in one pass) and transforms M back into Y with the epilogue. V and
 * M stay in the core's caches and the three phases need no barrier between them (one pass over the image). Every
 * output element is computed by one task in a fixed order: the thread count does not change the bits.
 */
typedef struct wf_job {
    const tc__wino_geom *g;
    const tc__gemm_config *cfg;
    const float *x, *u, *bias, *res; /* the image's X and residual */
    float *y;
    float *buf;        /* per thread: buf_floats */
    size_t buf_floats; /* 36 * MR * (C_in + C_out) */
    size_t tb;         /* tiles per task (<= MR; the image's tiles spread evenly over the fewest tasks) */
    tc__vact act;
} wf_job;

static void wf_task(void *ctx, size_t thread, size_t blk) {
    const wf_job *jb = ctx;
    const tc__wino_geom *g = jb->g;
    const size_t mr = jb->cfg->mr, nr = jb->cfg->nr, t0 = blk * jb->tb, nt = g->tiles - t0 < jb->tb ? g->tiles - t0 : jb->tb;
    const size_t vplane = mr * g->cin, mplane = mr * g->cout;
    float *v = jb->buf + thread * jb->buf_floats, *m = v + 36 * vplane;
    for (size_t i = 0; i < nt; i++) {
        const size_t ty = (t0 + i) / g->tw, tx = (t0 + i) % g->tw;
        for (size_t cb = 0; cb < g->cin / BV_L; cb++)
            wc_input_tile(g, jb->x, cb, ty, tx, v + i * g->cin + cb * BV_L, vplane);
    }
    for (size_t e = 0; e < 36; e++)
        for (size_t j0 = 0; j0 < g->cout; j0 += nr) {
            const size_t w = g->cout - j0 < nr ? g->cout - j0 : nr;
            const tc__gemm_tile t = {.mr = nt, .nr = w, .kc = g->cin,
                                     .a = v + e * vplane, .rs_a = g->cin, .cs_a = 1,
                                     .b = jb->u + e * g->cin * g->cout + j0 * g->cin, .rs_b = w,
                                     .c = m + e * mplane + j0, .ldc = g->cout,
                                     .load_c = false, .epi = NULL, .i0 = 0, .j0 = j0};
            jb->cfg->ukernel(&t);
        }
    for (size_t i = 0; i < nt; i++) {
        const size_t ty = (t0 + i) / g->tw, tx = (t0 + i) % g->tw;
        for (size_t cb = 0; cb < g->cout / BV_L; cb++) {
            const BV_V bias = jb->bias ? BV_LOADU(jb->bias + cb * BV_L) : BV_ZERO();
            wc_output_tile(g, m + i * g->cout + cb * BV_L, mplane, cb, ty, tx, bias, jb->res, jb->y, &jb->act);
        }
    }
}

tc_status tc__conv_winograd_nchw16c_f32_run_avx512(const tc__kernel_ctx *ctx) {
    const tc__gemm_config *cfg = &tc__gemm_config_f32_avx512;
    const char *name = "conv_wino_nchw16c_f32_avx512";
    wc_parts pt;
    tc_status st = wc_check(ctx, name, false, &pt);
    if (st != TC_STATUS_OK || pt.g.batch == 0 || pt.g.cout == 0) return st;
    tc__pool_t pool = (tc__pool_t)ctx->exec;
    const size_t threads = tc__pool_get_threads_count(pool);
    wf_job jb = {.g = &pt.g, .cfg = cfg, .u = pt.w, .bias = pt.bias, .act = pt.act,
                 .buf_floats = tc__conv_wino_nchw16c_f32_buffer_floats(&pt.g)};
    /* a buffer per thread when the scratch has them, else one, the tasks on the calling thread */
    const size_t n_buf = threads <= tc__gemm_tactic_max_threads() ? threads : 1;
    jb.buf = tc__kernel_alloc(ctx, n_buf * jb.buf_floats * sizeof(float));
    if (jb.buf == NULL) return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "Winograd Conv needs more scratch");
    const size_t blocks = (pt.g.tiles + cfg->mr - 1) / cfg->mr;
    jb.tb = (pt.g.tiles + blocks - 1) / blocks;
    const size_t isz = pt.g.cin * pt.g.ih * pt.g.iw, osz = pt.g.cout * pt.g.oh * pt.g.ow;
    for (size_t n = 0; n < pt.g.batch; n++) {
        jb.x = pt.x + n * isz;
        jb.y = pt.y + n * osz;
        jb.res = pt.res ? pt.res + n * osz : NULL;
        if (n_buf == threads)
            tc__pool_parallelize_1d_with_thread(pool, wf_task, &jb, blocks, 0);
        else
            for (size_t b = 0; b < blocks; b++) wf_task(&jb, 0, b);
    }
    tc__kernel_free(ctx, jb.buf);
    return TC_STATUS_OK;
}
