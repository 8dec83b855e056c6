/*
 * convt_node_f32.c - ConvTranspose as GEMM + col2im (convt_node_f32.h). The geometry comes from
 * core/convt_geom.c, as in shape inference and the reference kernel. 1-D and 2-D cases are 3-D
 * ones with leading spatial dims of 1.
 */
#include "backends/cpu/convt_node_f32.h"

#include "core/thread_pool.h"
#include <string.h>

#include "backends/cpu/gemm_tactics.h"
#include "backends/window.h"
#include "core/convt_geom.h"

typedef struct ct_geom {
    int64_t in[3], out[3], kernel[3], stride[3], dilation[3], pad[3]; /* 3-D embedding */
    size_t batch, cin, cout, groups, cin_g, cout_g, isp, osp, ksp;
} ct_geom;

static bool ct_geometry(const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *wt, const tc__tensor *y,
                        ct_geom *g) {
    memset(g, 0, sizeof *g);
    if (x->rank < 3 || x->rank > 5 || wt->rank != x->rank || y->rank != x->rank) return false;
    const int nsp = x->rank - 2;
    tc__err err = {0};
    tc__convt_geom cg;
    if (tc__convt_geom_resolve(attrs, nsp, x->dims + 2, wt->dims + 2, &cg, &err) != TC_STATUS_OK) return false;
    if (x->dims[0] < 0 || x->dims[1] < 1 || wt->dims[1] < 1 || x->dims[1] != wt->dims[0] || x->dims[1] % cg.group != 0 ||
        y->dims[0] != x->dims[0] || y->dims[1] != wt->dims[1] * cg.group)
        return false;
    g->batch = (size_t)x->dims[0];
    g->cin = (size_t)x->dims[1];
    g->groups = (size_t)cg.group;
    g->cin_g = g->cin / g->groups;
    g->cout_g = (size_t)wt->dims[1];
    g->cout = g->cout_g * g->groups;
    g->isp = g->osp = g->ksp = 1;
    const int lead = 3 - nsp;
    for (int d = 0; d < 3; d++) {
        const int s = d - lead;
        g->in[d] = s >= 0 ? cg.in[s] : 1;
        g->out[d] = s >= 0 ? cg.out[s] : 1;
        g->kernel[d] = s >= 0 ? cg.kernel[s] : 1;
        g->stride[d] = s >= 0 ? cg.stride[s] : 1;
        g->dilation[d] = s >= 0 ? cg.dilation[s] : 1;
        g->pad[d] = s >= 0 ? cg.pad_begin[s] : 0;
        if (s >= 0 && y->dims[2 + s] != cg.out[s]) return false;
        if (g->in[d] < 1 || g->out[d] < 1 || g->kernel[d] < 1) return false;
        g->isp *= (size_t)g->in[d];
        g->osp *= (size_t)g->out[d];
        g->ksp *= (size_t)g->kernel[d];
    }
    return true;
}

static const tc__tensor *convt_bias(int n_in, const tc__tensor *const *in) { return n_in > 2 ? in[2] : NULL; }

bool tc__convt_node_f32_supports(const tc__step_desc *d) {
    if (strcmp(d->op_type, "ConvTranspose") != 0 || d->n_in < 2 || d->n_in > 3 || d->n_out < 1) return false;
    const tc__tensor *x = d->in[0], *wt = d->in[1], *b = convt_bias(d->n_in, d->in), *y = d->out[0];
    if (!tc__gemm_is_f32(x) || !tc__gemm_is_f32(wt) || !tc__gemm_is_f32(y)) return false;
    if (d->in_const == NULL || !d->in_const[1] || wt->data == NULL)
        return tc__refuse(d, "the weight W is not a constant (it is packed at build)");
    ct_geom g;
    if (!ct_geometry(d->attrs, x, wt, y, &g)) return tc__refuse(d, "more than 3 spatial dims or inconsistent shapes");
    if (b != NULL && (!tc__gemm_is_f32(b) || b->rank != 1 || (size_t)b->dims[0] != g.cout)) return false;
    return true;
}

bool tc__convt_node_f32_packs_input(const tc__step_desc *d, int index) {
    (void)d;
    return index == 1;
}

/* Per group g, A_g = W[g]^T: row (m, k) and column c hold W[g * C_g + c, m, k]. */
tc_status tc__convt_node_f32_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err,
                                  const tc__gemm_config *cfg) {
    ct_geom g;
    if (index != 1 || !ct_geometry(d->attrs, d->in[0], d->in[1], d->out[0], &g))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "ConvTranspose packs only a float32 weight W");
    const size_t rows = g.cout_g * g.ksp, per_group = rows * g.cin_g;
    for (size_t gi = 0; gi < g.groups; gi++)
        tc__gemm_pack_a_f32(rows, g.cin_g, cfg->mr, (const float *)src + gi * per_group, 1, rows,
                            (float *)dst + gi * per_group);
    return TC_STATUS_OK;
}

/* The GEMM of one image: columns[g] = A_g * X[n, g], batched over groups. */
static tc__gemm_f32_problem ct_problem(const ct_geom *g, const float *a, const float *x, float *cols) {
    const size_t rows = g->cout_g * g->ksp;
    tc__gemm_f32_problem p = tc__gemm_f32_problem_init(rows, g->isp, g->cin_g);
    p.a = a;
    p.a_packed = true;
    p.b = x;
    p.rs_b = g->isp;
    p.cs_b = 1;
    p.c = cols;
    p.ldc = g->isp;
    p.nb = 1;
    p.bdims[0] = g->groups;
    p.a_bs[0] = rows * g->cin_g;
    p.b_bs[0] = g->cin_g * g->isp;
    p.c_bs[0] = rows * g->isp;
    return p;
}

static size_t cols_bytes(const ct_geom *g) { return g->groups * g->cout_g * g->ksp * g->isp * sizeof(float) + 64; }

size_t tc__convt_node_f32_scratch_bytes(const tc__step_desc *d, const tc__gemm_config *cfg) {
    ct_geom g;
    if (!ct_geometry(d->attrs, d->in[0], d->in[1], d->out[0], &g)) return 0;
    tc__gemm_f32_problem p = ct_problem(&g, NULL, NULL, NULL);
    return cols_bytes(&g) + tc__gemm_f32_scratch_bytes(&p, cfg, tc__gemm_tactic_max_threads());
}

/* y (one output channel, osp values) += the columns of its ksp kernel taps, each over the inputs that reach y. */
static void col2im(const ct_geom *g, const float *col, float *y) {
    int64_t k[3];
    for (k[0] = 0; k[0] < g->kernel[0]; k[0]++)
        for (k[1] = 0; k[1] < g->kernel[1]; k[1]++)
            for (k[2] = 0; k[2] < g->kernel[2]; k[2]++, col += g->isp) {
                int64_t off[3], i0[3], i1[3];
                bool any = true;
                for (int a = 0; a < 3; a++) {
                    off[a] = k[a] * g->dilation[a] - g->pad[a];
                    /* inputs i with output i * stride + off inside [0, out) */
                    tc__window_outputs(off[a], g->stride[a], g->out[a], g->in[a], &i0[a], &i1[a]);
                    any = any && i0[a] < i1[a];
                }
                if (!any) continue;
                const int64_t s2 = g->stride[2], n2 = i1[2] - i0[2];
                for (int64_t a = i0[0]; a < i1[0]; a++)
                    for (int64_t b = i0[1]; b < i1[1]; b++) {
                        const float *c = col + (a * g->in[1] + b) * g->in[2] + i0[2];
                        float *o = y + ((a * g->stride[0] + off[0]) * g->out[1] + b * g->stride[1] + off[1]) * g->out[2] +
                                   i0[2] * s2 + off[2];
                        if (s2 == 1)
                            for (int64_t j = 0; j < n2; j++) o[j] += c[j];
                        else
                            for (int64_t j = 0; j < n2; j++) o[j * s2] += c[j];
                    }
            }
}

/* One image's col2im, a task per output channel. */
typedef struct ct_job {
    const ct_geom *g;
    const float *cols, *bias;
    float *y; /* the image's output */
} ct_job;

static void col2im_task(void *arg, size_t m) {
    const ct_job *j = arg;
    float *ym = j->y + m * j->g->osp;
    const float b0 = j->bias != NULL ? j->bias[m] : 0.0f;
    for (size_t o = 0; o < j->g->osp; o++) ym[o] = b0;
    col2im(j->g, j->cols + m * j->g->ksp * j->g->isp, ym);
}

tc_status tc__convt_node_f32_run(const tc__kernel_ctx *ctx, const tc__gemm_config *cfg) {
    const tc__tensor *bias = convt_bias(ctx->n_in, ctx->in);
    if (ctx->n_in < 2 || ctx->n_out < 1 || !tc__gemm_is_f32(ctx->in[0]) || !tc__gemm_is_f32(ctx->in[1]) ||
        !tc__gemm_is_f32(ctx->out[0]) || (bias != NULL && !tc__gemm_is_f32(bias)))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "ConvTranspose expects float32 X, W, B and Y");
    ct_geom g;
    if (!ct_geometry(ctx->attrs, ctx->in[0], ctx->in[1], ctx->out[0], &g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "ConvTranspose shapes or attributes do not match");
    if (bias != NULL && (bias->rank != 1 || (size_t)bias->dims[0] != g.cout))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "ConvTranspose bias must have %zu values", g.cout);
    float *cols = tc__kernel_alloc(ctx, cols_bytes(&g));
    if (cols == NULL) return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "out of scratch memory for ConvTranspose");
    const float *x = ctx->in[0]->data, *bv = bias != NULL ? bias->data : NULL;
    float *y = ctx->out[0]->data;
    tc_status st = TC_STATUS_OK;
    for (size_t n = 0; n < g.batch && st == TC_STATUS_OK; n++) {
        tc__gemm_f32_problem p = ct_problem(&g, ctx->in[1]->data, x + n * g.cin * g.isp, cols);
        if ((st = tc__gemm_f32_run(&p, cfg, ctx)) != TC_STATUS_OK) break;
        ct_job job = {&g, cols, bv, y + n * g.cout * g.osp};
        tc__pool_t pool = ctx->exec;
        if (pool != NULL && tc__pool_get_threads_count(pool) > 1 && g.cout > 1)
            tc__pool_parallelize_1d(pool, col2im_task, &job, g.cout, 0);
        else
            for (size_t m = 0; m < g.cout; m++) col2im_task(&job, m);
    }
    tc__kernel_free(ctx, cols);
    return st;
}
