/*
 * conv_node_f32.c - Conv on NCHW (1-D to 3-D) as GEMM, shared by the conv1x1_f32_<isa> and
 * conv_im2col_f32_<isa> tactics. Per image n and group g: Y[n, g] (Cout_g x OSP) = W[g] (Cout_g x K)
 * * B (K x OSP) with K = Cin_g * kernel size, where W is packed at build into MR-row panels per
 * group and B is X[n] itself (1x1, stride 1, no padding, one group) or its im2col tiles built in
 * scratch. The conv bias is a per-row bias; the step's residual and activation are fused. A fused
 * bias over the output's last dim (W) is not something fusion produces for Conv: it is rejected.
 */
#include <string.h>

#include "backends/cpu/gemm_tactics.h"
#include "backends/cpu/im2col_f32.h"
#include "backends/window.h"

typedef struct cv_geom {
    tc__window w;
    size_t batch, cin, cout, groups, cin_g, cout_g, isp, osp, ksp, k;
    bool pointwise; /* 1x1 kernel, stride 1, no padding */
} cv_geom;

static bool cv_geometry(const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *wt, const tc__tensor *y,
                        cv_geom *g) {
    memset(g, 0, sizeof *g);
    if (x->rank < 3 || x->rank > 5 || wt->rank != x->rank || y->rank != x->rank) return false;
    tc__err err = {0};
    const tc__kernel_ctx kctx = {.attrs = attrs, .err = &err};
    if (tc__window_resolve(&kctx, x, y, wt->dims + 2, &g->w) != TC_STATUS_OK) return false;
    const int64_t group = tc__attr_int(attrs, "group", 1);
    if (group < 1 || x->dims[0] < 0 || x->dims[1] < 0 || wt->dims[0] < 0 || wt->dims[1] < 0) return false;
    if (x->dims[1] != wt->dims[1] * group || wt->dims[0] % group != 0 || y->dims[1] != wt->dims[0]) return false;
    g->batch = (size_t)x->dims[0];
    g->cin = (size_t)x->dims[1];
    g->cout = (size_t)wt->dims[0];
    g->groups = (size_t)group;
    g->cin_g = (size_t)wt->dims[1];
    g->cout_g = g->cout / g->groups;
    g->isp = g->osp = g->ksp = 1;
    g->pointwise = true;
    for (int d = 0; d < g->w.nsp; d++) {
        if (g->w.in[d] < 0 || g->w.out[d] < 0) return false;
        g->isp *= (size_t)g->w.in[d];
        g->osp *= (size_t)g->w.out[d];
        g->ksp *= (size_t)g->w.kernel[d];
        g->pointwise = g->pointwise && g->w.kernel[d] == 1 && g->w.stride[d] == 1 && g->w.pad_begin[d] == 0 &&
                       g->w.pad_end[d] == 0 && g->w.in[d] == g->w.out[d];
    }
    g->k = g->cin_g * g->ksp;
    return true;
}

static const tc__tensor *conv_bias(int n_in, const tc__tensor *const *in) { return n_in > 2 ? in[2] : NULL; }

bool tc__conv_node_f32_supports(const tc__step_desc *d, bool im2col) {
    if (strcmp(d->op_type, "Conv") != 0 || d->n_in < 2 || d->n_in > 3 || d->n_out < 1) return false;
    const tc__tensor *x = d->in[0], *wt = d->in[1], *b = conv_bias(d->n_in, d->in), *y = d->out[0];
    if (!tc__gemm_is_f32(x) || !tc__gemm_is_f32(wt) || !tc__gemm_is_f32(y)) return false;
    if (b != NULL && (!tc__gemm_is_f32(b) || b->rank != 1 || b->dims[0] != wt->dims[0])) return false;
    if (d->in_const == NULL || !d->in_const[1] || wt->data == NULL) return false;
    cv_geom g;
    if (!cv_geometry(d->attrs, x, wt, y, &g)) return false;
    if (!im2col && !(g.pointwise && g.groups == 1)) return false;
    if (d->bias != NULL || (d->epi != NULL && d->epi->bias_input >= 0)) return false;
    return tc__gemm_epilogue_ok(d, 0);
}

bool tc__conv_node_f32_packs_input(const tc__step_desc *d, int index) { return index == 1; }

tc_status tc__conv_node_f32_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err,
                                 const tc__gemm_config *cfg) {
    const tc__tensor *wt = d->in[1];
    const int64_t group = tc__attr_int(d->attrs, "group", 1);
    if (index != 1 || !tc__gemm_is_f32(wt) || wt->rank < 3 || group < 1 || wt->dims[0] % group != 0)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "Conv packs only a float32 weight W");
    const size_t cout_g = (size_t)(wt->dims[0] / group);
    size_t k = 1;
    for (int i = 1; i < wt->rank; i++)
        k *= (size_t)wt->dims[i];
    for (size_t g = 0; g < (size_t)group; g++)
        tc__gemm_pack_a_f32(cout_g, k, cfg->mr, (const float *)src + g * cout_g * k, k, 1,
                            (float *)dst + g * cout_g * k);
    return TC_STATUS_OK;
}

/* The GEMM problem of a Conv; im2c (its geometry for the B tiles) must outlive the run. The
 * im2col packer is the one of cfg's ISA. */
static tc__gemm_f32_problem cv_problem(const cv_geom *g, const tc__tensor *x, const tc__tensor *wt, tc__tensor *y,
                                       const tc__tensor *bias, const tc__tensor *res, bool im2col, tc__im2col_f32 *im2c,
                                       const tc__gemm_config *cfg) {
    tc__gemm_f32_problem p = tc__gemm_f32_problem_init(g->cout_g, g->osp, g->k);
    p.a = wt->data;
    p.a_packed = true;
    p.c = y->data;
    p.ldc = g->osp;
    if (bias != NULL) p.epi.bias_m = bias->data;
    if (res != NULL) {
        p.epi.res = res->data;
        p.epi.ld_res = g->osp;
    }
    p.nb = 2;
    p.bdims[0] = g->batch;
    p.bdims[1] = g->groups;
    p.a_bs[0] = 0;
    p.a_bs[1] = g->cout_g * g->k;
    p.c_bs[0] = p.res_bs[0] = g->cout * g->osp;
    p.c_bs[1] = p.res_bs[1] = g->cout_g * g->osp;
    p.bias_m_bs[1] = g->cout_g;
    if (!im2col) { /* B = X[n] as a Cin x HW row-major matrix */
        p.b = x->data;
        p.rs_b = g->isp;
        p.cs_b = 1;
        p.b_bs[0] = g->cin * g->isp;
        return p;
    }
    memset(im2c, 0, sizeof *im2c);
    im2c->x = x->data;
    im2c->channels = g->cin;
    im2c->groups = g->groups;
    const int lead = 3 - g->w.nsp;
    for (int d = 0; d < 3; d++) {
        const int s = d - lead;
        im2c->in[d] = s >= 0 ? g->w.in[s] : 1;
        im2c->out[d] = s >= 0 ? g->w.out[s] : 1;
        im2c->kernel[d] = s >= 0 ? g->w.kernel[s] : 1;
        im2c->stride[d] = s >= 0 ? g->w.stride[s] : 1;
        im2c->dilation[d] = s >= 0 ? g->w.dilation[s] : 1;
        im2c->pad[d] = s >= 0 ? g->w.pad_begin[s] : 0;
    }
    p.pack_b = (cfg->isa & TC__ISA_AVX512F) ? tc__im2col_f32_pack_avx512 : tc__im2col_f32_pack;
    p.pack_b_ctx = im2c;
    return p;
}

size_t tc__conv_node_f32_scratch_bytes(const tc__step_desc *d, const tc__gemm_config *cfg, bool im2col) {
    cv_geom g;
    if (!cv_geometry(d->attrs, d->in[0], d->in[1], d->out[0], &g)) return 0;
    tc__im2col_f32 im2c;
    tc__gemm_f32_problem p =
        cv_problem(&g, d->in[0], d->in[1], (tc__tensor *)d->out[0], NULL, NULL, im2col, &im2c, cfg);
    return tc__gemm_f32_scratch_bytes(&p, cfg, tc__gemm_tactic_max_threads());
}

tc_status tc__conv_node_f32_run(const tc__kernel_ctx *ctx, const tc__gemm_config *cfg, bool im2col) {
    const tc__tensor *bias = conv_bias(ctx->n_in, ctx->in);
    if (ctx->n_in < 2 || ctx->n_out < 1 || !tc__gemm_is_f32(ctx->in[0]) || !tc__gemm_is_f32(ctx->in[1]) ||
        !tc__gemm_is_f32(ctx->out[0]) || (bias != NULL && !tc__gemm_is_f32(bias)))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Conv expects float32 X, W, B and Y");
    cv_geom g;
    if (!cv_geometry(ctx->attrs, ctx->in[0], ctx->in[1], ctx->out[0], &g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Conv shapes or attributes do not match");
    if (!im2col && !(g.pointwise && g.groups == 1))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Conv is not 1x1 with stride 1 and no padding");
    if (bias != NULL && (bias->rank != 1 || (size_t)bias->dims[0] != g.cout))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Conv bias must have %zu values", g.cout);
    if (ctx->bias != NULL)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "Conv with a fused bias over the output's last dim");
    tc__im2col_f32 im2c;
    tc__gemm_f32_problem p =
        cv_problem(&g, ctx->in[0], ctx->in[1], ctx->out[0], bias, ctx->residual, im2col, &im2c, cfg);
    const tc__gemm_epi e = tc__gemm_epi_from_ctx(ctx);
    p.epi.act = e.act;
    p.epi.act_alpha = e.act_alpha;
    p.epi.act_beta = e.act_beta;
    return tc__gemm_f32_run(&p, cfg, ctx);
}
