/*
 * rnn_node_f32.c - LSTM and GRU as an input-projection GEMM plus one small GEMM per step (rnn_node_f32.h). The
 * gate equations, clip, peepholes, sequence_lens and layouts follow the reference kernel (backends/ref/rnn.c).
 */
#include "backends/cpu/rnn_node_f32.h"

#include <string.h>

#include "backends/cpu/gemm_tactics.h"
#include "backends/cpu/rnn_gemv_f32.h"
#include "core/rnn_params.h"

typedef struct rnn_geom {
    tc__rnn_params p;
    size_t seq, batch, in, hid, gh;
} rnn_geom;

static const tc__tensor *opt_in(int n_in, const tc__tensor *const *in, int i) { return i < n_in ? in[i] : NULL; }

/* Reads the attributes and checks the shapes (float32 everywhere, sequence_lens int32). */
static bool rnn_geometry(const char *op, const tc__attrs *attrs, int n_in, const tc__tensor *const *in, int n_out,
                         const tc__tensor *const *out, rnn_geom *g) {
    memset(g, 0, sizeof *g);
    const bool lstm = strcmp(op, "LSTM") == 0;
    if (!lstm && strcmp(op, "GRU") != 0) return false;
    if (n_in < 3 || n_in > (lstm ? 8 : 6) || n_out < 1) return false;
    tc__err err = {0};
    if (tc__rnn_params_read(attrs, op, &g->p, &err) != TC_STATUS_OK) return false;
    const tc__tensor *x = in[0], *w = in[1], *r = in[2];
    if (!tc__gemm_is_f32(x) || !tc__gemm_is_f32(w) || !tc__gemm_is_f32(r) || x->rank != 3 || w->rank != 3 ||
        r->rank != 3)
        return false;
    const int64_t seq = x->dims[g->p.layout ? 1 : 0], batch = x->dims[g->p.layout ? 0 : 1], hid = r->dims[2];
    const int64_t gh = hid * g->p.gates, dirs = g->p.dirs;
    if (seq < 0 || batch < 0 || x->dims[2] < 1 || hid < 1 || w->dims[0] != dirs || r->dims[0] != dirs ||
        w->dims[1] != gh || r->dims[1] != gh || w->dims[2] != x->dims[2] || (g->p.hidden > 0 && g->p.hidden != hid))
        return false;
    const int64_t want[8] = {0, 0, 0, dirs * 2 * gh, batch, dirs * batch * hid, dirs * batch * hid, dirs * 3 * hid};
    for (int i = 3; i < n_in; i++) {
        const tc__tensor *t = in[i];
        if (t == NULL) continue;
        if ((i == 4 ? t->dtype != TC_DTYPE_INT32 : !tc__gemm_is_f32(t)) || tc__tensor_numel(t) != want[i]) return false;
    }
    for (int o = 0; o < n_out; o++)
        if (out[o] != NULL && !tc__gemm_is_f32(out[o])) return false;
    g->seq = (size_t)seq;
    g->batch = (size_t)batch;
    g->in = (size_t)x->dims[2];
    g->hid = (size_t)hid;
    g->gh = (size_t)gh;
    return true;
}

bool tc__rnn_node_f32_supports(const tc__step_desc *d) {
    rnn_geom g;
    if (!rnn_geometry(d->op_type, d->attrs, d->n_in, d->in, d->n_out, d->out, &g))
        return tc__refuse(d, "not float32, or attributes or shapes the tactic does not take");
    if (d->in_const == NULL || !d->in_const[1] || !d->in_const[2] || d->in[1]->data == NULL || d->in[2]->data == NULL)
        return tc__refuse(d, "the weights W and R are not constants (they are packed at build)");
    return true;
}

bool tc__rnn_node_f32_packs_input(const tc__step_desc *d, int index) {
    (void)d;
    return index == 1 || index == 2;
}

/* The B matrices of the GEMMs: W[d]^T (in x gh) for the projection; R[d]^T (hid x gh) for a step, GRU's as its
 * first 2 * hid columns then its last hid columns. Each direction's panels sit where its rows were. */
tc_status tc__rnn_node_f32_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err,
                                const tc__gemm_config *cfg) {
    rnn_geom g;
    if ((index != 1 && index != 2) || !rnn_geometry(d->op_type, d->attrs, d->n_in, d->in, d->n_out, d->out, &g))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "%s packs only float32 weights W and R", d->op_type);
    const size_t k = index == 1 ? g.in : g.hid, per_dir = g.gh * k;
    for (int dir = 0; dir < g.p.dirs; dir++) {
        const float *s = (const float *)src + (size_t)dir * per_dir;
        float *o = (float *)dst + (size_t)dir * per_dir;
        if (index == 2 && !g.p.lstm) {
            tc__gemm_pack_b_f32(k, 2 * g.hid, cfg->nr, s, 1, k, o);
            tc__gemm_pack_b_f32(k, g.hid, cfg->nr, s + 2 * g.hid * k, 1, k, o + 2 * g.hid * k);
        } else {
            tc__gemm_pack_b_f32(k, g.gh, cfg->nr, s, 1, k, o);
        }
    }
    return TC_STATUS_OK;
}

/* Floats of the working buffers: XW, the step's gates, GRU's hidden-gate part and r*h, h, c, the bias row. */
static size_t work_floats(const rnn_geom *g) {
    return g->seq * g->batch * g->gh + g->batch * g->gh + 2 * g->batch * g->hid + 2 * g->batch * g->hid + g->gh + 64;
}

static size_t gemm_scratch(const rnn_geom *g, const tc__gemm_config *cfg) {
    tc__gemm_f32_problem proj = tc__gemm_f32_problem_init(g->seq * g->batch, g->gh, g->in);
    tc__gemm_f32_problem step = tc__gemm_f32_problem_init(g->batch, g->gh, g->hid);
    proj.b_packed = step.b_packed = true;
    const size_t threads = tc__gemm_tactic_max_threads();
    const size_t a = tc__gemm_f32_scratch_bytes(&proj, cfg, threads), b = tc__gemm_f32_scratch_bytes(&step, cfg, threads);
    return a > b ? a : b;
}

size_t tc__rnn_node_f32_scratch_bytes(const tc__step_desc *d, const tc__gemm_config *cfg) {
    rnn_geom g;
    if (!rnn_geometry(d->op_type, d->attrs, d->n_in, d->in, d->n_out, d->out, &g)) return 0;
    return work_floats(&g) * sizeof(float) + 64 + gemm_scratch(&g, cfg);
}

static inline float clipf(const tc__rnn_params *p, float v) {
    return !p->has_clip ? v : v < -p->clip ? (float)-p->clip : v > p->clip ? (float)p->clip : v;
}

/* Applies activation a in place to v[0, n): the ISA's vector row function (the GEMM epilogues') for Sigmoid, Tanh and
 * Relu, the double-precision formula for the others. */
static void act_row(const tc__gemm_config *cfg, tc__rnn_act a, float *v, size_t n) {
    const uint8_t ea = a == TC__RNN_SIGMOID ? TC__ACT_SIGMOID : a == TC__RNN_TANH ? TC__ACT_TANH
                       : a == TC__RNN_RELU  ? TC__ACT_RELU    : TC__ACT_NONE;
    if (ea == TC__ACT_NONE) {
        for (size_t j = 0; j < n; j++) v[j] = (float)tc__rnn_act_apply(a, v[j]);
        return;
    }
    const tc__gemm_epi e = {.alpha = 1.0f, .res_scale = 1.0f, .act = ea};
    if ((cfg->isa & TC__GEMM_ISA_AVX512) == TC__GEMM_ISA_AVX512) tc__gemm_act_f32_avx512(v, n, 1, n, &e);
    else if ((cfg->isa & TC__GEMM_ISA_AVX2) == TC__GEMM_ISA_AVX2) tc__gemm_act_f32_avx2(v, n, 1, n, &e);
    else tc__gemm_act_f32_scalar(v, n, 1, n, &e);
}

/* Batches up to this size take the step's product row by row over the packed panels (a GEMM call's set-up costs
 * more than such a product: 1.9 -> 0.4 ms for 40 steps of a 128-unit LSTM at batch 1). */
#define RNN_GEMV_MAX_ROWS 4

/* The small-batch product for the ISA of cfg (rnn_gemv_f32.h). */
static void panel_gemv(const tc__gemm_config *cfg, size_t n, size_t k, const float *a, const float *b,
                       const float *bias_n, float *c) {
    if ((cfg->isa & TC__GEMM_ISA_AVX512) == TC__GEMM_ISA_AVX512) tc__rnn_gemv_f32_avx512(n, k, cfg->nr, a, b, bias_n, c);
    else if ((cfg->isa & TC__GEMM_ISA_AVX2) == TC__GEMM_ISA_AVX2) tc__rnn_gemv_f32_avx2(n, k, cfg->nr, a, b, bias_n, c);
    else tc__rnn_gemv_f32_body(n, k, cfg->nr, a, b, bias_n, c);
}

/* C (m x n, ldc n) = A (m x k, row stride k) * packed B (+ bias_n). */
static tc_status step_gemm(const tc__kernel_ctx *ctx, const tc__gemm_config *cfg, size_t m, size_t n, size_t k,
                           const float *a, const float *b, const float *bias_n, float *c) {
    if (m <= RNN_GEMV_MAX_ROWS && cfg->nr <= 64) {
        for (size_t i = 0; i < m; i++) panel_gemv(cfg, n, k, a + i * k, b, bias_n, c + i * n);
        return TC_STATUS_OK;
    }
    tc__gemm_f32_problem p = tc__gemm_f32_problem_init(m, n, k);
    p.a = a;
    p.b = b;
    p.b_packed = true;
    p.c = c;
    p.epi.bias_n = bias_n;
    return tc__gemm_f32_run(&p, cfg, ctx);
}

typedef struct rnn_bufs {
    float *xw, *gates, *hg, *rh, *h, *c, *bias;
} rnn_bufs;

/* One direction: projection, then the steps. */
static tc_status run_dir(const tc__kernel_ctx *ctx, const tc__gemm_config *cfg, const rnn_geom *g, int d,
                         const rnn_bufs *bf) {
    const tc__rnn_params *p = &g->p;
    const size_t H = g->hid, GH = g->gh, B = g->batch, S = g->seq;
    const int n_in = ctx->n_in;
    const tc__tensor *bias = opt_in(n_in, ctx->in, 3), *sl = opt_in(n_in, ctx->in, 4);
    const tc__tensor *h0 = opt_in(n_in, ctx->in, 5), *c0 = p->lstm ? opt_in(n_in, ctx->in, 6) : NULL;
    const tc__tensor *peep = p->lstm ? opt_in(n_in, ctx->in, 7) : NULL;
    tc__tensor *y = ctx->n_out > 0 ? ctx->out[0] : NULL;
    const float *wb = bias ? (const float *)bias->data + (size_t)d * 2 * GH : NULL;
    /* the projection's bias: Wb + Rb, but only Wb for GRU's hidden gate (its Rb joins the recurrent part) */
    for (size_t j = 0; j < GH; j++) bf->bias[j] = wb ? wb[j] + (p->lstm || j < 2 * H ? wb[GH + j] : 0.0f) : 0.0f;
    tc__gemm_f32_problem proj = tc__gemm_f32_problem_init(S * B, GH, g->in);
    proj.a = ctx->in[0]->data;
    proj.b = (const float *)ctx->in[1]->data + (size_t)d * GH * g->in;
    proj.b_packed = true;
    proj.c = bf->xw;
    proj.epi.bias_n = bf->bias;
    tc_status st = S * B > 0 ? tc__gemm_f32_run(&proj, cfg, ctx) : TC_STATUS_OK;
    if (st) return st;
    for (size_t b = 0; b < B; b++)
        for (size_t j = 0; j < H; j++) {
            const size_t at = (p->layout ? b * (size_t)p->dirs + (size_t)d : (size_t)d * B + b) * H + j;
            bf->h[b * H + j] = h0 ? ((const float *)h0->data)[at] : 0.0f;
            bf->c[b * H + j] = c0 ? ((const float *)c0->data)[at] : 0.0f;
        }
    const bool rev = p->reverse || d == 1;
    const tc__rnn_act f = p->act[d][0], ga = p->act[d][1], ha = p->act[d][2];
    const float *r = (const float *)ctx->in[2]->data + (size_t)d * GH * H;
    const float *pp = peep ? (const float *)peep->data + (size_t)d * 3 * H : NULL;
    memset(bf->rh, 0, B * H * sizeof(float)); /* rows past their length stay defined */
    size_t max_len = 0;
    for (size_t b = 0; b < B; b++) {
        const size_t len = sl ? (size_t)((const int32_t *)sl->data)[b] : S;
        if (len > max_len) max_len = len;
    }
    for (size_t k = 0; k < max_len; k++) {
        if ((st = step_gemm(ctx, cfg, B, p->lstm ? GH : 2 * H, H, bf->h, r, NULL, bf->gates))) return st;
        for (size_t b = 0; b < B; b++) {
            const size_t len = sl ? (size_t)((const int32_t *)sl->data)[b] : S;
            if (k >= len) continue;
            const size_t t = rev ? len - 1 - k : k;
            const float *xw = bf->xw + (p->layout ? b * S + t : t * B + b) * GH;
            float *gt = bf->gates + b * (p->lstm ? GH : 2 * H), *h = bf->h + b * H, *c = bf->c + b * H;
            if (p->lstm) { /* gates i o f c; o's peephole reads the new cell, so o is activated last */
                for (size_t j = 0; j < H; j++) {
                    gt[j] = clipf(p, gt[j] + xw[j] + (pp ? pp[j] * c[j] : 0.0f));
                    gt[2 * H + j] = clipf(p, gt[2 * H + j] + xw[2 * H + j] + (pp ? pp[2 * H + j] * c[j] : 0.0f));
                    gt[3 * H + j] = clipf(p, gt[3 * H + j] + xw[3 * H + j]);
                }
                act_row(cfg, f, gt, H);
                act_row(cfg, f, gt + 2 * H, H);
                act_row(cfg, ga, gt + 3 * H, H);
                for (size_t j = 0; j < H; j++) {
                    c[j] = gt[2 * H + j] * c[j] + gt[j] * gt[3 * H + j];
                    gt[H + j] = clipf(p, gt[H + j] + xw[H + j] + (pp ? pp[H + j] * c[j] : 0.0f));
                    gt[3 * H + j] = c[j]; /* h's activation input */
                }
                act_row(cfg, f, gt + H, H);
                act_row(cfg, ha, gt + 3 * H, H);
                for (size_t j = 0; j < H; j++) h[j] = gt[H + j] * gt[3 * H + j];
            } else {
                float *rh = bf->rh + b * H;
                for (size_t j = 0; j < 2 * H; j++) gt[j] = clipf(p, gt[j] + xw[j]);
                act_row(cfg, f, gt, 2 * H); /* z, r */
                for (size_t j = 0; j < H; j++) rh[j] = p->linear_before_reset ? h[j] : gt[H + j] * h[j];
            }
        }
        if (!p->lstm) {
            /* hidden gate's recurrent part: (r * h or h) * Rh^T + Rbh, rows past their length computed and unused */
            if ((st = step_gemm(ctx, cfg, B, H, H, bf->rh, r + 2 * H * H, wb ? wb + GH + 2 * H : NULL, bf->hg))) return st;
            for (size_t b = 0; b < B; b++) {
                const size_t len = sl ? (size_t)((const int32_t *)sl->data)[b] : S;
                if (k >= len) continue;
                const size_t t = rev ? len - 1 - k : k;
                const float *xw = bf->xw + (p->layout ? b * S + t : t * B + b) * GH;
                const float *gt = bf->gates + b * 2 * H;
                float *h = bf->h + b * H, *hg = bf->hg + b * H;
                for (size_t j = 0; j < H; j++)
                    hg[j] = clipf(p, xw[2 * H + j] + (p->linear_before_reset ? gt[H + j] * hg[j] : hg[j]));
                act_row(cfg, ga, hg, H);
                for (size_t j = 0; j < H; j++) h[j] = (1.0f - gt[j]) * hg[j] + gt[j] * h[j];
            }
        }
        if (y != NULL)
            for (size_t b = 0; b < B; b++) {
                const size_t len = sl ? (size_t)((const int32_t *)sl->data)[b] : S;
                if (k >= len) continue;
                const size_t t = rev ? len - 1 - k : k;
                float *yo = (float *)y->data + (p->layout ? (b * S + t) * (size_t)p->dirs + (size_t)d
                                                          : (t * (size_t)p->dirs + (size_t)d) * B + b) * H;
                memcpy(yo, bf->h + b * H, H * sizeof(float));
            }
    }
    if (y != NULL) /* steps past each row's length */
        for (size_t b = 0; b < B; b++) {
            const size_t len = sl ? (size_t)((const int32_t *)sl->data)[b] : S;
            for (size_t t = len; t < S; t++) {
                float *yo = (float *)y->data + (p->layout ? (b * S + t) * (size_t)p->dirs + (size_t)d
                                                          : (t * (size_t)p->dirs + (size_t)d) * B + b) * H;
                memset(yo, 0, H * sizeof(float));
            }
        }
    for (int o = 1; o < ctx->n_out && o < (p->lstm ? 3 : 2); o++) {
        tc__tensor *s = ctx->out[o];
        if (s == NULL) continue;
        const float *src = o == 1 ? bf->h : bf->c;
        for (size_t b = 0; b < B; b++) {
            float *dst = (float *)s->data + (p->layout ? b * (size_t)p->dirs + (size_t)d : (size_t)d * B + b) * H;
            if (sl != NULL && ((const int32_t *)sl->data)[b] == 0) memset(dst, 0, H * sizeof(float)); /* as the reference */
            else memcpy(dst, src + b * H, H * sizeof(float));
        }
    }
    return TC_STATUS_OK;
}

tc_status tc__rnn_node_f32_run(const tc__kernel_ctx *ctx, const tc__gemm_config *cfg) {
    rnn_geom g;
    if (!rnn_geometry(ctx->op_type, ctx->attrs, ctx->n_in, ctx->in, ctx->n_out, (const tc__tensor *const *)ctx->out, &g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: data types, attributes or shapes do not match",
                        ctx->op_type);
    const tc__tensor *sl = opt_in(ctx->n_in, ctx->in, 4);
    if (sl != NULL)
        for (size_t b = 0; b < g.batch; b++) {
            const int32_t v = ((const int32_t *)sl->data)[b];
            if (v < 0 || (size_t)v > g.seq)
                return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                                "sequence_lens[%zu] is %d, expected 0 to the sequence length %zu", b, (int)v, g.seq);
        }
    float *work = tc__kernel_alloc(ctx, work_floats(&g) * sizeof(float));
    if (work == NULL) return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of scratch memory for %s", ctx->op_type);
    rnn_bufs bf;
    bf.xw = work;
    bf.gates = bf.xw + g.seq * g.batch * g.gh;
    bf.hg = bf.gates + g.batch * g.gh;
    bf.rh = bf.hg + g.batch * g.hid;
    bf.h = bf.rh + g.batch * g.hid;
    bf.c = bf.h + g.batch * g.hid;
    bf.bias = bf.c + g.batch * g.hid;
    tc_status st = TC_STATUS_OK;
    for (int d = 0; d < g.p.dirs && st == TC_STATUS_OK; d++) st = run_dir(ctx, cfg, &g, d, &bf);
    tc__kernel_free(ctx, work);
    return st;
}
