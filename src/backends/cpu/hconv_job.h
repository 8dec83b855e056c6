/*
 * hconv_job.h - the run of a 16-bit float operator (hconv.h) that the FP16 and BF16 kernels share: the job
 * they read (inputs, the padded image in scratch or, chained, the input itself, the taps' offsets, the
 * epilogue, the chained output image) and the driver that sets it up and runs the conversion and the tiles
 * (lowp_tile.h). The kernels differ only in their conversion and microkernels. Static inline: include only
 * from files compiled for AVX-512.
 */
#ifndef TC_BACKENDS_CPU_HCONV_JOB_H
#define TC_BACKENDS_CPU_HCONV_JOB_H

#include <string.h>

#include "backends/cpu/hconv.h"
#include "backends/cpu/lowp_tile.h"

typedef struct tc__hconv_job {
    const tc__hconv_geom *g;
    const float *x;
    uint16_t *xh;           /* the padded 16-bit image (FP16 or BF16 bits) */
    const size_t *tap_off;  /* element offset of each tap in the padded image */
    size_t runs, run_step;  /* the microkernels' runs (hconv.h): run r at tap_off[r * run_step], of run_pairs pairs */
    size_t run_pairs;
    bool run_odd;           /* and then a value alone (BF16 only: an odd cp) */
    const uint16_t *w;      /* the packed weight */
    const float *bias, *res;
    float *y;
    tc__vact act;
    uint16_t *ych;          /* the reduced-precision chain: the output image (else NULL) */
    bool chain_inline;      /* chained, no activation or a ReLU, no FP32 residual: BF16 tiles of a full group end in
                               their own epilogue (b_chain_epi) */
    bool f32_inline;        /* FP32 out on contiguous lanes (NCHW16c, rows), no activation or a ReLU, no residual: the
                               same (b_f32_epi) */
    tc__lowp_grid grid;
} tc__hconv_job;

/* The job of a run (X converted into scratch unless it is the chain's image; the out image's border filled); the
 * caller frees *scratch with tc__kernel_free. prec names the type in errors. */
static inline tc_status tc__hconv_job_setup(const tc__kernel_ctx *ctx, const tc__hconv_geom *g, tc__hconv_job *j,
                                            unsigned char **scratch, const char *prec) {
    const tc__lowp_shape *s = &g->s;
    tc__lowp_io io;
    tc_status st = tc__lowp_io_of(ctx, s->cout, &io);
    if (st != TC_STATUS_OK) return st;
    *j = (tc__hconv_job){.g = g, .x = io.x, .w = io.w, .y = io.y, .bias = io.bias, .res = io.res, .act = io.act};
    const size_t img_bytes = s->batch * s->hp * s->wp * g->cp * sizeof(uint16_t);
    *scratch = tc__kernel_alloc(ctx, tc__hconv_scratch(g));
    if (*scratch == NULL)
        return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "%s: no scratch for the %s image", ctx->op_type, prec);
    j->xh = g->in_image ? (uint16_t *)io.x : (uint16_t *)*scratch; /* the chain: X is already the image */
    size_t *tap_off = (size_t *)(*scratch + (img_bytes + 63) / 64 * 64);
    for (size_t a = 0; a < s->kh; a++)
        for (size_t c = 0; c < s->kw; c++) tap_off[a * s->kw + c] = (a * s->dh * s->wp + c * s->dw) * g->cp;
    j->tap_off = tap_off;
    j->run_step = tc__hconv_run_step(s);
    j->runs = tc__hconv_runs(s);
    j->run_pairs = tc__hconv_run_values(g) / 2;
    j->run_odd = tc__hconv_run_values(g) % 2 == 1;
    j->grid = tc__lowp_grid_of(s->oh, s->ow, s->sh, s->sw, s->hp, s->wp, g->cp, s->cout, s->out_layout,
                               tc__lowp_threads(ctx->exec));
    if (g->out_image) { /* the next layer's image: border and padding channels hold 0 */
        j->ych = (uint16_t *)io.y;
        tc__lowp_grid_out_image(&j->grid, g->o_hp, g->o_wp, g->o_cp, g->o_pt, g->o_pl);
        tc__lowp_fill_out_border(&j->grid, s->batch, j->ych, sizeof *j->ych, 0);
    }
    if (g->res_image) { /* the residual is an image of 16-bit values (tc.half_res_image): o->rimg, o->roff */
        tc__lowp_grid_res_image(&j->grid, io.res, g->r_hp, g->r_wp, g->r_cp, g->r_pt, g->r_pl);
        j->res = NULL;
    }
    const bool none_or_relu = j->act.kind == TC__VACT_NONE || j->act.kind == TC__VACT_RELU;
    j->chain_inline = j->ych != NULL && j->res == NULL && none_or_relu;
    j->f32_inline = j->ych == NULL && j->res == NULL && !g->res_image && s->out_layout != TC__LOWP_NCHW && none_or_relu;
    return TC_STATUS_OK;
}

/* Runs the operator: convert(job, row) fills the image rows (unless chained in), compute(job, task, group) runs
 * the tiles; prec names the type in errors. */
static inline tc_status tc__hconv_job_run(const tc__kernel_ctx *ctx, const tc__hconv_geom *g,
                                          void (*convert)(void *, size_t), void (*compute)(void *, size_t, size_t),
                                          const char *prec) {
    tc__hconv_job j;
    unsigned char *scratch = NULL;
    const tc_status st = tc__hconv_job_setup(ctx, g, &j, &scratch, prec);
    if (st == TC_STATUS_OK)
        tc__lowp_run(ctx->exec, &j.grid, g->s.batch, g->in_image ? 0 : g->s.batch * g->s.hp, convert, compute, &j);
    if (scratch != NULL) tc__kernel_free(ctx, scratch);
    return st;
}

#endif
