/*
 * qconv_u8s8_avx512vnni.c - the INT8 operator of qconv_u8s8.h on AVX512-VNNI: the vpdpbusd microkernels
 * (MR output pixels x NB blocks of 16 output channels held in zmm accumulators over every tap and input
 * channel) and the threaded driver; the quantization of X into the padded channels-last u8 image and the
 * dequantizing epilogue are qconv_vnni.h's (shared with the depthwise kernel), the task loop and the store
 * lowp_tile.h's (shared with the FP16 and BF16 kernels). The AMX driver (tc__qconv_run_amx) is here too: the
 * same image and epilogue around amx_panel_amx.c's tiles.
 */
#include "backends/cpu/qconv_vnni.h"

/* A full group's epilogue on the accumulators, in the tile (no store and reload of the sums): a chained step's codes
 * (q_epi's full-group path: the residual image when rimg, a ReLU as the lower clamp when relu; same bits). */
static inline __attribute__((always_inline)) void q_chain_epi(const q_job *j, const tc__lowp_out *o, __m512i acc[12][4],
                                                              const int MR, const bool rimg, const bool relu) {
    const q_consts c = q_consts_of(j);
    const __m512 lo = relu ? q_relu_lo(c.o_lo, c.o_zp) : c.o_lo;
    q_blk k[TC__LOWP_GROUP_BLOCKS];
#pragma GCC unroll 4
    for (int b = 0; b < TC__LOWP_GROUP_BLOCKS; b++) k[b] = q_blk_of(j, o->oc0 + (size_t)b * 16, (__mmask16)0xffff);
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int b = 0; b < TC__LOWP_GROUP_BLOCKS; b++) {
            __m512 v = q_dequant(&k[b], acc[i][b]);
            if (rimg) v = _mm512_add_ps(v, q_res_image(&c, o, i, b, (__mmask16)0xffff));
            _mm_storeu_si128((__m128i *)(c.yq + o->qoff[i] + (size_t)b * 16), q_codes16_full(v, c.o_inv, c.o_zp, lo));
        }
}

/*
 * The microkernel: MR pixels (at x0 + xoff[i]) x NB blocks of 16 output channels (weights w0 + b * wbs),
 * accumulated over every tap and every 4 input channels, then dequantized and stored (q_epilogue).
 */
static inline __attribute__((always_inline)) void q_tile(const q_job *j, const uint8_t *x0, const size_t *xoff,
                                                         const int8_t *w0, size_t wbs, const tc__lowp_out *o,
                                                         __mmask16 last_mask, const void *pf, size_t npf,
                                                         const int MR, const int NB) {
    const size_t runs = j->runs, c4 = j->run_quads, run_step = j->run_step;
    __m512i acc[12][4];
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int b = 0; b < NB; b++) acc[i][b] = _mm512_setzero_si512();
    const int8_t *wp = w0;
    for (size_t t = 0; t < runs; t++) {
        const uint8_t *xt = x0 + j->tap_off[t * run_step];
        for (size_t c = 0; c < c4; c++, wp += 64, xt += 4) {
            tc__lowp_pf_line(&pf, &npf); /* the weights the next task reads (tc__lowp_pf) */
            __m512i wv[4];
#pragma GCC unroll 4
            for (int b = 0; b < NB; b++) wv[b] = _mm512_loadu_si512(wp + (size_t)b * wbs);
#pragma GCC unroll 12
            for (int i = 0; i < MR; i++) {
                int32_t q4;
                memcpy(&q4, xt + xoff[i], sizeof q4);
                const __m512i xb = _mm512_set1_epi32(q4);
#pragma GCC unroll 4
                for (int b = 0; b < NB; b++) acc[i][b] = _mm512_dpbusd_epi32(acc[i][b], xb, wv[b]);
            }
        }
    }
    if (NB == TC__LOWP_GROUP_BLOCKS && last_mask == 0xffff && j->chain_inline) { /* (a full group of a chained step) */
        const bool relu = j->act.kind == TC__VACT_RELU;
        if (o->rimg) relu ? q_chain_epi(j, o, acc, MR, true, true) : q_chain_epi(j, o, acc, MR, true, false);
        else relu ? q_chain_epi(j, o, acc, MR, false, true) : q_chain_epi(j, o, acc, MR, false, false);
        return;
    }
    __m512i sums[TC__LOWP_MR * TC__LOWP_GROUP_BLOCKS];
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int b = 0; b < NB; b++) sums[i * NB + b] = acc[i][b];
    q_epilogue(j, o, 0, sums, MR, NB, last_mask);
}

/* One instantiation per (MR, NB): the tile calls with constant sizes. */
#define Q_FN(MR, NB)                                                                                                  \
    static void q_tile_##MR##x##NB(const q_job *j, const uint8_t *x0, const size_t *xoff, const int8_t *w0,           \
                                   size_t wbs, const tc__lowp_out *o, __mmask16 m, const void *pf, size_t npf) {               \
        q_tile(j, x0, xoff, w0, wbs, o, m, pf, npf, MR, NB);                                                            \
    }
#define Q_FNS6(NB) Q_FN(1, NB) Q_FN(2, NB) Q_FN(3, NB) Q_FN(4, NB) Q_FN(5, NB) Q_FN(6, NB)
#define Q_FNS12(NB) Q_FNS6(NB) Q_FN(7, NB) Q_FN(8, NB) Q_FN(9, NB) Q_FN(10, NB) Q_FN(11, NB) Q_FN(12, NB)
Q_FNS6(4)
Q_FNS6(3)
Q_FNS12(2)
Q_FNS12(1)

typedef void (*q_tile_fn)(const q_job *, const uint8_t *, const size_t *, const int8_t *, size_t,
                          const tc__lowp_out *, __mmask16, const void *, size_t);

#define Q_ROW6(NB) {q_tile_1x##NB, q_tile_2x##NB, q_tile_3x##NB, q_tile_4x##NB, q_tile_5x##NB, q_tile_6x##NB}
#define Q_ROW12(NB)                                                                                                   \
    {q_tile_1x##NB, q_tile_2x##NB, q_tile_3x##NB, q_tile_4x##NB, q_tile_5x##NB, q_tile_6x##NB,                       \
     q_tile_7x##NB, q_tile_8x##NB, q_tile_9x##NB, q_tile_10x##NB, q_tile_11x##NB, q_tile_12x##NB}
static const q_tile_fn q_tiles_nb4[6] = Q_ROW6(4), q_tiles_nb3[6] = Q_ROW6(3);
static const q_tile_fn q_tiles_nb2[12] = Q_ROW12(2), q_tiles_nb1[12] = Q_ROW12(1);

/* A task of the thread pool: the job and the weights its tiles prefetch (lowp_grid.h's tc__lowp_pf). */
typedef struct q_task {
    const q_job *j;
    tc__lowp_pf pf;
} q_task;

/* The tile of lowp_tile.h's task loop: the (mr, nb) microkernel on the weights of block b0. */
static void q_tile_at(const void *job, int mr, int nb, size_t b0, const size_t *xoff, const tc__lowp_out *o,
                      __mmask16 last_mask) {
    q_task *t = (q_task *)job; /* q_compute's local */
    const q_job *j = t->j;
    const tc__qconv_geom *g = j->g;
    const size_t wbs = g->kh * g->kw * g->cp * 16; /* bytes per block of 16 channels */
    const q_tile_fn *tiles = nb == 4 ? q_tiles_nb4 : nb == 3 ? q_tiles_nb3 : nb == 2 ? q_tiles_nb2 : q_tiles_nb1;
    const void *pf;
    const size_t npf = tc__lowp_pf_take(&t->pf, &pf);
    tiles[mr - 1](j, j->xq, xoff, j->w + b0 * wbs, wbs, o, last_mask, pf, npf);
}

static void q_compute(void *arg, size_t strip_task, size_t group) {
    const q_job *j = arg;
    const tc__qconv_geom *g = j->g;
    q_task t = {j, tc__lowp_pf_of(&j->grid, group, j->w, g->kh * g->kw * g->cp * 16)};
    tc__lowp_task(&j->grid, strip_task, group, j->y, j->res, q_tile_at, &t);
}

tc_status tc__qconv_run_avx512vnni(const tc__kernel_ctx *ctx, const tc__qconv_geom *g) {
    return q_run_tasks(ctx, g, q_compute);
}

/* The AMX run (amx_panel.h): panels x groups of up to 4 blocks, each block pair accumulated in tiles, then the
 * VNNI epilogue (q_store) on the rows of C. */
typedef struct qamx_run {
    const q_job *j;
    tc__amx_plan plan;
} qamx_run;

/* C's row of pixel o / block b: the VNNI epilogue. */
static void qamx_store(const void *job, const tc__lowp_out *o, int b, const void *row, __mmask16 mask, __m512i lanes) {
    q_store(job, o, 0, b, _mm512_loadu_si512(row), mask, lanes);
}

static void qamx_compute(void *arg, size_t panel, size_t group) {
    const qamx_run *r = arg;
    const q_job *j = r->j;
    tc__amx_drive_task(&r->plan, &j->grid, j->g->cout, j->xq, (const uint8_t *)j->w, j->y, j->res, panel, group,
                       tc__amx_dot_u8s8, qamx_store, j);
}

tc_status tc__qconv_run_amx(const tc__kernel_ctx *ctx, const tc__qconv_geom *g) {
    qamx_run r;
    if (!tc__qconv_amx_plan(g, &r.plan))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: a layer the AMX int8 kernel does not take", ctx->op_type);
    q_job j;
    unsigned char *scratch = NULL;
    tc_status st = q_setup(ctx, g, &j, &scratch);
    r.j = &j;
    if (st == TC_STATUS_OK)
        tc__lowp_run_tasks(ctx->exec, q_quantize_row, &j, g->in_image ? 0 : g->batch * g->hp, qamx_compute, &r,
                           r.plan.panels, j.grid.groups);
    if (scratch != NULL) tc__kernel_free(ctx, scratch);
    return st;
}
