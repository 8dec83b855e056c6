/*
 * gemm_node_f32.c - ONNX Gemm (Y = alpha * A' * B' + beta * C, A' and B' optionally transposed,
 * C broadcast to [M, N]) on the FP32 GEMM operator, shared by the gemm_f32_<isa> (constant B packed
 * at build) and gemm_dyn_f32_<isa> (B at run time) tactics. C becomes part of the epilogue: a row
 * vector or scalar a per-column bias (combined with the step's bias in scratch), a column vector a
 * per-row bias, a full matrix the residual term scaled by beta (so a full C together with a fused
 * residual is not supported).
 */
#include <string.h>

#include "backends/cpu/gemm_tactics.h"

typedef enum c_kind { C_NONE, C_ROW, C_COL, C_FULL } c_kind;

typedef struct gm_geom {
    bool ta, tb;
    float alpha, beta;
    size_t m, n, k;
    c_kind ck;
    bool c_scalar; /* C_ROW with a single value */
} gm_geom;

static bool gm_geometry(const tc__attrs *attrs, const tc__tensor *a, const tc__tensor *b, const tc__tensor *c,
                        const tc__tensor *y, gm_geom *g) {
    memset(g, 0, sizeof *g);
    g->ta = tc__attr_int(attrs, "transA", 0) != 0;
    g->tb = tc__attr_int(attrs, "transB", 0) != 0;
    g->alpha = tc__attr_float(attrs, "alpha", 1.0f);
    g->beta = tc__attr_float(attrs, "beta", 1.0f);
    if (a->rank != 2 || b->rank != 2 || y->rank != 2) return false;
    if (a->dims[0] < 0 || a->dims[1] < 0 || b->dims[0] < 0 || b->dims[1] < 0) return false;
    g->m = (size_t)a->dims[g->ta ? 1 : 0];
    g->k = (size_t)a->dims[g->ta ? 0 : 1];
    g->n = (size_t)b->dims[g->tb ? 0 : 1];
    if ((size_t)b->dims[g->tb ? 1 : 0] != g->k || (size_t)y->dims[0] != g->m || (size_t)y->dims[1] != g->n)
        return false;
    g->ck = C_NONE;
    if (c != NULL && g->beta != 0.0f) {
        if (c->rank > 2) return false;
        const int64_t want[2] = {(int64_t)g->m, (int64_t)g->n};
        for (int i = 0; i < c->rank; i++)
            if (c->dims[i] != 1 && c->dims[i] != want[2 - c->rank + i]) return false;
        const int64_t rows = c->rank == 2 ? c->dims[0] : 1, cols = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
        if (rows == 1) {
            g->ck = C_ROW;
            g->c_scalar = cols == 1;
        } else {
            g->ck = cols == 1 ? C_COL : C_FULL;
        }
    }
    return true;
}

static const tc__tensor *input_c(int n_in, const tc__tensor *const *in) { return n_in > 2 ? in[2] : NULL; }

bool tc__gemm_node_f32_supports(const tc__step_desc *d, bool packed_b) {
    if (strcmp(d->op_type, "Gemm") != 0 || d->n_in < 2 || d->n_in > 3 || d->n_out < 1) return false;
    const tc__tensor *a = d->in[0], *b = d->in[1], *c = input_c(d->n_in, d->in), *y = d->out[0];
    if (!tc__gemm_is_f32(a) || !tc__gemm_is_f32(b) || !tc__gemm_is_f32(y) || (c != NULL && !tc__gemm_is_f32(c)))
        return false;
    if (packed_b && !(d->in_const != NULL && d->in_const[1])) return false;
    gm_geom g;
    if (!gm_geometry(d->attrs, a, b, c, y, &g)) return false;
    if (g.ck == C_FULL && d->residual != NULL) return false; /* two residual terms */
    if (!tc__gemm_epilogue_ok(d, y->dims[1])) return false;
    /* As for MatMul (matmul_node_f32.c): a constant B is left to the packed twin of the same microkernel, which packs
     * it once at build instead of into scratch on every run. */
    if (!packed_b && d->in_const != NULL && d->in_const[1])
        return tc__refuse(d, "B is constant: the packed tactic of this microkernel packs it once at build time");
    return true;
}

bool tc__gemm_node_f32_packs_input(const tc__step_desc *d, int index) { return index == 1; }

tc_status tc__gemm_node_f32_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err,
                                 const tc__gemm_config *cfg) {
    const tc__tensor *b = d->in[1];
    if (index != 1 || !tc__gemm_is_f32(b) || b->rank != 2)
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "Gemm packs only a 2-D float32 input B");
    const bool tb = tc__attr_int(d->attrs, "transB", 0) != 0;
    const size_t k = (size_t)b->dims[tb ? 1 : 0], n = (size_t)b->dims[tb ? 0 : 1];
    tc__gemm_pack_b_f32(k, n, cfg->nr, src, tb ? 1 : n, tb ? k : 1, dst);
    return TC_STATUS_OK;
}

/* Floats of the combined bias vector the run builds in scratch. */
static size_t own_floats(const gm_geom *g) { return g->ck == C_ROW ? g->n : (g->ck == C_COL ? g->m : 0); }

static tc__gemm_f32_problem gm_problem(const gm_geom *g, const tc__tensor *a, const tc__tensor *b, tc__tensor *y,
                                       bool packed_b) {
    tc__gemm_f32_problem p = tc__gemm_f32_problem_init(g->m, g->n, g->k);
    p.a = a->data;
    p.rs_a = g->ta ? 1 : g->k;
    p.cs_a = g->ta ? g->m : 1;
    p.b = b->data;
    p.rs_b = g->tb ? 1 : g->n;
    p.cs_b = g->tb ? g->k : 1;
    p.b_packed = packed_b;
    p.c = y->data;
    p.epi.alpha = g->alpha;
    return p;
}

size_t tc__gemm_node_f32_scratch_bytes(const tc__step_desc *d, const tc__gemm_config *cfg, bool packed_b) {
    gm_geom g;
    if (!gm_geometry(d->attrs, d->in[0], d->in[1], input_c(d->n_in, d->in), d->out[0], &g)) return 0;
    tc__gemm_f32_problem p = gm_problem(&g, d->in[0], d->in[1], (tc__tensor *)d->out[0], packed_b);
    return own_floats(&g) * sizeof(float) + 64 + tc__gemm_f32_scratch_bytes(&p, cfg, tc__gemm_tactic_max_threads());
}

tc_status tc__gemm_node_f32_run(const tc__kernel_ctx *ctx, const tc__gemm_config *cfg, bool packed_b) {
    const tc__tensor *c = input_c(ctx->n_in, ctx->in);
    if (ctx->n_in < 2 || ctx->n_out < 1 || !tc__gemm_is_f32(ctx->in[0]) || !tc__gemm_is_f32(ctx->in[1]) ||
        !tc__gemm_is_f32(ctx->out[0]) || (c != NULL && !tc__gemm_is_f32(c)))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Gemm expects float32 A, B, C and Y");
    gm_geom g;
    if (!gm_geometry(ctx->attrs, ctx->in[0], ctx->in[1], c, ctx->out[0], &g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "Gemm shapes do not match");
    if (g.ck == C_FULL && ctx->residual != NULL)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "Gemm with a full C and a fused residual");
    tc__gemm_f32_problem p = gm_problem(&g, ctx->in[0], ctx->in[1], ctx->out[0], packed_b);
    const tc__gemm_epi e = tc__gemm_epi_from_ctx(ctx);
    p.epi.act = e.act;
    p.epi.act_alpha = e.act_alpha;
    p.epi.act_beta = e.act_beta;
    const float *ebias = ctx->bias != NULL ? ctx->bias->data : NULL;
    p.epi.bias_n = ebias;
    if (ctx->residual != NULL) {
        p.epi.res = ctx->residual->data;
        p.epi.ld_res = g.n;
    }
    float *vec = NULL;
    const size_t nv = own_floats(&g);
    if (nv > 0) {
        if ((vec = tc__kernel_alloc(ctx, nv * sizeof(float))) == NULL)
            return tc__fail(ctx->err, TC_STATUS_OUT_OF_MEMORY, "Gemm needs %zu bytes of scratch", nv * sizeof(float));
        const float *cv = c->data;
        for (size_t i = 0; i < nv; i++) {
            vec[i] = g.beta * cv[g.c_scalar ? 0 : i];
            if (g.ck == C_ROW && ebias != NULL) vec[i] += ebias[i];
        }
        if (g.ck == C_ROW)
            p.epi.bias_n = vec;
        else
            p.epi.bias_m = vec;
    } else if (g.ck == C_FULL) {
        p.epi.res = c->data;
        p.epi.ld_res = g.n;
        p.epi.res_scale = g.beta;
    }
    tc_status st = tc__gemm_f32_run(&p, cfg, ctx);
    tc__kernel_free(ctx, vec);
    return st;
}
