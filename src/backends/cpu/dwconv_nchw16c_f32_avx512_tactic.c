/*
 * dwconv_nchw16c_f32_avx512_tactic.c - tactics dwconv_nchw16c_f32_avx512 and dwconv_nchw8c_f32_avx2:
 * depthwise Conv (group == C_in == C_out, any kernel size, strides, dilations and padding, optional
 * bias B) from a blocked input to a blocked output (NCHW16c / NCHW8c: blocks of B channels), with
 * the fused epilogue (activation, and a residual that is blocked too). Which steps they take, the
 * packing of W to [C/B][KH][KW][B] at build time, and the driver that splits planes and rows over
 * the thread pool, and the configurations the tuner times (tc__dwconv_blk_config); the microkernel is
 * dwconv_nchwc_f32_kernel.h (per ISA). A channel count that is not a multiple of B is padded
 * (core/layout.h): W and B are packed with zeros for the padding channels (B then packed too), and
 * the driver writes zeros into the output's padding lanes after the epilogue.
 */
#include "core/thread_pool.h"
#include <string.h>

#include "backends/cpu/blocked_f32.h"
#include "backends/cpu/vec_isa.h"

/* True when w is a float32 depthwise weight [C, 1, KH, KW] for C channels. */
static bool dw_weight_ok(const tc__tensor *w, int64_t c) {
    return w != NULL && w->dtype == TC_DTYPE_FLOAT32 && w->rank == 4 && w->dims[0] == c && w->dims[1] == 1 &&
           w->dims[2] >= 1 && w->dims[3] >= 1;
}

/* Fills g from the Conv attributes and the shapes of x, w and y; false when this tactic cannot compute the step. */
static bool dw_geom(const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *w, const tc__tensor *y,
                    tc__blk_window *g) {
    const int64_t block = tc__layout_block(attrs);
    if (!tc__blk_is_blockable_padded(x, block) || !tc__blk_is_blockable_padded(y, block)) return false;
    const int64_t c = x->dims[1];
    if (tc__attr_int(attrs, "group", 1) != c || !dw_weight_ok(w, c)) return false;
    return tc__blk_window_of("Conv", attrs, x, y, w->dims + 2, g);
}

/* True when the window is 3 columns wide at dilation 1 and stride 1 or 2: the row-reuse tiles apply. */
static bool dw_reusable(const tc__blk_window *g) { return g->kw == 3 && g->dw == 1 && (g->sw == 1 || g->sw == 2); }

/* The step's depthwise Conv in blocks of `block` channels. */
static bool dw_supports(const tc__step_desc *d, int64_t block) {
    if (strcmp(d->op_type, "Conv") != 0 || !tc__blk_block_is(d->attrs, block) || d->n_in < 2 || d->n_in > 3 || d->in[0] == NULL || d->in[1] == NULL ||
        d->n_out != 1 || d->out[0] == NULL)
        return false;
    if (d->in_const == NULL || !d->in_const[1]) return false; /* W is packed at build time */
    const tc__tensor *b = d->n_in > 2 ? d->in[2] : NULL;
    if (b != NULL && (b->dtype != TC_DTYPE_FLOAT32 || b->rank != 1 || b->dims[0] != d->in[1]->dims[0])) return false;
    /* A padded C reads its bias padded with zeros: packed at build, so constant. */
    if (b != NULL && d->in[1]->dims[0] % block != 0 && !d->in_const[2]) return false;
    if (!tc__vact_epilogue_supported(d)) return false;
    if (!tc__blk_layout_is(d->attrs, tc__blk_with_residual(1, d->epi), true)) return false;
    tc__blk_window g;
    return dw_geom(d->attrs, d->in[0], d->in[1], d->out[0], &g);
}

bool tc__dwconv_nchw16c_f32_supports(const tc__step_desc *d) { return dw_supports(d, TC__LAYOUT_BLOCK); }
static bool dwconv_nchw8c_supports(const tc__step_desc *d) { return dw_supports(d, TC__LAYOUT_BLOCK_AVX2); }

/* W, and B when C is padded (its padding channels read zeros). */
bool tc__dwconv_nchw16c_f32_packs_input(const tc__step_desc *d, int index) {
    return index == 1 || (index == 2 && d->n_in > 2 && d->in[2] != NULL && d->in_const != NULL && d->in_const[2] &&
                          d->in[1] != NULL && d->in[1]->dims[0] % tc__layout_block(d->attrs) != 0);
}

/* The packed W: [ceil(C / B)][KH][KW][B]; the packed B: ceil(C / B) * B floats. */
static size_t dw_packed_bytes(const tc__step_desc *d, int index) {
    const tc__tensor *w = d->n_in > 1 ? d->in[1] : NULL;
    const int64_t B = tc__layout_block(d->attrs);
    if (w == NULL || !dw_weight_ok(w, w->dims[0]) || tc__blk_kernels_for(B) == NULL) return 0;
    const size_t cpad = tc__nchwc_channels((size_t)B, (size_t)w->dims[0]);
    if (index == 2) return cpad * sizeof(float);
    return index == 1 ? cpad * (size_t)w->dims[2] * (size_t)w->dims[3] * sizeof(float) : 0;
}

tc_status tc__dwconv_nchw16c_f32_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    const tc__tensor *w = d->in[1];
    const int64_t B = tc__layout_block(d->attrs);
    if ((index != 1 && index != 2) || !dw_weight_ok(w, w->dims[0]) || tc__blk_kernels_for(B) == NULL)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT,
                        "blocked depthwise Conv packs only a float32 W [C, 1, KH, KW] (and its bias)");
    const int64_t c = w->dims[0], cb_count = tc__blk_count(c, B), taps = w->dims[2] * w->dims[3];
    const float *s = src;
    float *o = dst;
    if (index == 2) {
        for (int64_t ch = 0; ch < cb_count * B; ch++) o[ch] = ch < c ? s[ch] : 0.0f;
        return TC_STATUS_OK;
    }
    for (int64_t cb = 0; cb < cb_count; cb++)
        for (int64_t t = 0; t < taps; t++)
            for (int64_t l = 0; l < B; l++)
                o[(cb * taps + t) * B + l] = cb * B + l < c ? s[(cb * B + l) * taps + t] : 0.0f;
    return TC_STATUS_OK;
}

typedef struct dw_job {
    const tc__blk_window *g;
    const tc__blk_kernels *k;
    tc__vact act;
    const float *x, *w, *b, *res;
    float *y;
    int64_t cb; /* channel blocks per image */
    int reuse;  /* the configuration's */
    int64_t c;  /* channels */
} dw_job;

static void dw_task(void *arg, size_t plane, size_t oy0, size_t rows) {
    const dw_job *j = arg;
    const tc__blk_window *g = j->g;
    const int64_t B = j->k->block, cb = (int64_t)plane % j->cb, isp = g->H * g->W * B, osp = g->OH * g->OW * B;
    tc__dwconv_nchw16c_plane p = {
        .x = j->x + (int64_t)plane * isp,
        .w = j->w + cb * g->kh * g->kw * B,
        .bias = j->b ? j->b + cb * B : NULL,
        .res = j->res ? j->res + (int64_t)plane * osp : NULL,
        .y = j->y + (int64_t)plane * osp,
        .reuse = j->reuse,
    };
    j->k->dwconv_rows(g, &j->act, &p, (int64_t)oy0, (int64_t)(oy0 + rows));
    if (cb == j->cb - 1) tc__blk_zero_pad(p.y + (int64_t)oy0 * g->OW * B, (int64_t)rows * g->OW, B, B, j->c % B);
}

/* Splits the planes, and their rows when there are few planes, over the pool. */
static void dw_parallel(tc__pool_t pool, dw_job *j, int64_t planes) {
    const tc__blk_window *g = j->g;
    size_t threads = pool ? tc__pool_get_threads_count(pool) : 1;
    if (threads <= 1) {
        for (int64_t p = 0; p < planes; p++) dw_task(j, (size_t)p, 0, (size_t)g->OH);
        return;
    }
    size_t tile = (size_t)g->OH;
    if ((size_t)planes < 4 * threads) {
        size_t parts = (4 * threads + (size_t)planes - 1) / (size_t)planes;
        tile = ((size_t)g->OH + parts - 1) / parts;
    }
    tc__pool_parallelize_2d_tile_1d(pool, dw_task, j, (size_t)planes, (size_t)g->OH, tile, 0);
}

tc_status tc__dwconv_nchw16c_f32_run(const tc__kernel_ctx *ctx) {
    if (ctx->n_in < 2 || ctx->in[0] == NULL || ctx->in[1] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects inputs X, W (and optional B) and output Y");
    const tc__blk_kernels *k = tc__blk_kernels_for(tc__layout_block(ctx->attrs));
    if (!tc__layout_in_blocked(ctx->attrs, 0) || !tc__layout_out_blocked(ctx->attrs) || k == NULL)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "blocked depthwise Conv needs X and Y in NCHW16c or NCHW8c");
    const tc__tensor *x = ctx->in[0], *w = ctx->in[1];
    /* B is input 2 unless that slot is the epilogue's residual. */
    const tc__tensor *b = ctx->n_in > 2 && ctx->in[2] != NULL && ctx->in[2] != ctx->residual ? ctx->in[2] : NULL;
    tc__tensor *y = ctx->out[0];
    tc__blk_window g;
    if (!dw_geom(ctx->attrs, x, w, y, &g))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "Conv is not a blocked depthwise convolution");
    const int64_t cb = tc__blk_count(y->dims[1], k->block), cpad = cb * k->block;
    if (b != NULL && (b->dtype != TC_DTYPE_FLOAT32 || tc__tensor_numel(b) != w->dims[0] ||
                      b->nbytes < (size_t)cpad * sizeof(float)))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "bias B must be float32 [%lld] (packed to %lld)",
                        (long long)w->dims[0], (long long)cpad);
    if (!tc__blk_bytes_ok(x, k->block) || !tc__blk_bytes_ok(y, k->block) ||
        w->nbytes < (size_t)(cpad * g.kh * g.kw) * sizeof(float) ||
        (ctx->residual != NULL && !tc__blk_bytes_ok(ctx->residual, k->block)))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "depthwise Conv buffers are smaller than their blocked layout needs");
    tc__dwconv_blk_config cfg = {0u}; /* the default, as configs() lists it first */
    if (ctx->config != NULL) memcpy(&cfg, ctx->config, sizeof cfg);
    dw_job j = {&g, k, {TC__VACT_NONE, 0.0f, 0.0f, 0.0f}, x->data, w->data, b ? b->data : NULL, NULL, y->data,
                cb, (int)cfg.reuse, y->dims[1]};
    if (ctx->epi != NULL) {
        if (ctx->epi->bias_input >= 0 || ctx->bias != NULL)
            return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "depthwise Conv does not fuse an epilogue bias");
        tc_status st = tc__vact_residual(ctx, tc__tensor_numel(y), &j.res);
        if (st != TC_STATUS_OK) return st;
        j.act = tc__vact_from_epilogue(ctx->epi);
    }
    const int64_t planes = y->dims[0] * j.cb;
    if (planes == 0 || g.OH == 0 || g.OW == 0) return TC_STATUS_OK;
    dw_parallel(ctx->exec, &j, planes);
    return TC_STATUS_OK;
}

/* One load per tap (the default: the kernel before the configurations), then where row reuse applies one row and two
 * rows at a time. */
int tc__dwconv_nchw16c_f32_configs(const tc__step_desc *d, void *out, int cap) {
    tc__blk_window g;
    if (d->n_in < 2 || d->in[0] == NULL || d->in[1] == NULL || d->n_out < 1 || d->out[0] == NULL ||
        !dw_geom(d->attrs, d->in[0], d->in[1], d->out[0], &g))
        return 0;
    const tc__dwconv_blk_config list[3] = {{0u}, {1u}, {2u}};
    const int n = dw_reusable(&g) ? 3 : 1;
    for (int i = 0; i < n && i < cap; i++) memcpy((char *)out + (size_t)i * sizeof list[0], &list[i], sizeof list[0]);
    return n;
}

bool tc__dwconv_nchw16c_f32_check_config(const void *config, tc__err *err) {
    tc__dwconv_blk_config c;
    memcpy(&c, config, sizeof c);
    if (c.reuse > 2) {
        tc__fail(err, TC_STATUS_CORRUPT_FILE, "blocked depthwise Conv configuration: reuse %u is not 0, 1 or 2",
                 c.reuse);
        return false;
    }
    return true;
}

const tc__tactic tc__tactic_dwconv_nchw16c_f32_avx512 = {
    .name = "dwconv_nchw16c_f32_avx512",
    .op_type = "Conv",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX512,
    .flags = TC__TACTIC_BLOCKED | TC__TACTIC_FUSES_EPILOGUE,
    .supports = tc__dwconv_nchw16c_f32_supports,
    .packs_input = tc__dwconv_nchw16c_f32_packs_input,
    .pack = tc__dwconv_nchw16c_f32_pack,
    .packed_bytes = dw_packed_bytes,
    .run = tc__dwconv_nchw16c_f32_run,
    .config_bytes = sizeof(tc__dwconv_blk_config),
    .configs = tc__dwconv_nchw16c_f32_configs,
    .check_config = tc__dwconv_nchw16c_f32_check_config,
};

const tc__tactic tc__tactic_dwconv_nchw8c_f32_avx2 = {
    .name = "dwconv_nchw8c_f32_avx2",
    .op_type = "Conv",
    .backend = TC__BACKEND_CPU, .caps = TC__VEC_ISA_AVX2,
    .flags = TC__TACTIC_BLOCKED | TC__TACTIC_BLOCK8 | TC__TACTIC_FUSES_EPILOGUE,
    .supports = dwconv_nchw8c_supports,
    .packs_input = tc__dwconv_nchw16c_f32_packs_input,
    .pack = tc__dwconv_nchw16c_f32_pack,
    .packed_bytes = dw_packed_bytes,
    .run = tc__dwconv_nchw16c_f32_run,
    .config_bytes = sizeof(tc__dwconv_blk_config),
    .configs = tc__dwconv_nchw16c_f32_configs,
    .check_config = tc__dwconv_nchw16c_f32_check_config,
};
