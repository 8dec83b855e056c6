/*
 * dense_fp16_lt_tactic.c - tactics cuda_matmul_fp16_lt and cuda_gemm_fp16_lt: MatMul and Gemm with a constant weight,
 * marked tc.fp16 by the precision pass (--fp16), on FP16 Tensor Cores through cuBLASLt (lt_gemm.h) with FP32
 * accumulation, FP32 tensors in and out.
 *
 * Row-major Y[M, N] = A[M, K] . B[K, N] is column-major Y^T[N, M] = B^T[N, K] . A^T[K, M]. The weight is packed at
 * build into FP16 rows Bt[N][Kp] (Kp = K rounded up to 8: tc__lt_kpad), i.e. column-major [Kp, N] read transposed
 * (cuBLASLt's A, op T); run() casts the activation A into FP16 rows A16[M][Kp] in scratch (cuBLASLt's B, column-major
 * [K, M] with ld Kp); both operands are K-major ("TN"). Only the first K of each Kp are read.
 *
 * The epilogue: the bias over N is cuBLASLt's bias over D's rows (CUBLASLT_EPILOGUE_BIAS; Gemm's C times beta joins
 * it), the residual is cuBLASLt's C with beta 1 (so it is added before the activation), ReLU is
 * CUBLASLT_EPILOGUE_RELU_BIAS, GELU (erf or tanh) CUBLASLT_EPILOGUE_GELU_BIAS for an FP16 D without a residual
 * (cuBLASLt's GELU is the tanh form, within 5e-4 of erf's: below an FP16 output's resolution); the other activations
 * run in an FP32 pass over Y after the product (fp16_lt.h), as does the bias where cuBLASLt offers no algorithm with
 * it. (An earlier attempt at GELU_BIAS failed with INVALID_VALUE: the bias pointer was set for BIAS / RELU_BIAS only.)
 *
 * FP16 row images (engine/row16_chain.c, TC__CHAIN_FP16_ROWS): with bit 0 of tc.row16_in, A is already FP16 rows
 * [M][K] (K a multiple of 8: 16-byte rows) and cuBLASLt reads it in place, no cast; with tc.row16_out, D is FP16;
 * with the residual's bit, the residual is FP16. cuBLASLt's C and bias must have D's type: a constant epilogue bias is
 * also packed as FP16 after the weight (at a 256-byte offset, where the packed bytes stay within the source's), for an
 * FP16 D; a residual or bias of the other type is added by the epilogue pass instead (and the ReLU moves there too).
 *
 * Configurations (the tuner's candidates, stored in the plan): cuBLASLt's heuristic answers for the step's product,
 * the first as the default and the next ones as explicit algorithms (lt_gemm.h's tc__lt_algo), rebuilt and checked at
 * run; one cuBLASLt refuses for the call (an FP16 row image output where the tuner timed FP32) falls back to the first.
 * Scratch: the cuBLASLt workspace (TC__LT_WORKSPACE), A16, and for Gemm the combined bias (N floats).
 * run() creates cuBLASLt's descriptors and asks its heuristic on every call, and destroys them before returning (host
 * allocations only, no device memory or synchronisation, so it may be captured into a CUDA graph; the engine calls
 * run() on the first runs and while capturing, not on replays). Caching them per step is for later.
 */
#include <string.h>

#include "backends/cuda/cnn_epi.h"
#include "backends/cuda/fp16_lt.h"
#include "backends/cuda/lt_gemm.h"
#include "backends/cuda/row16.h"
#include "core/fused_attr.h"
#include "core/tensor.h"

/* The GEMM's sizes and B's storage: M rows of A (its leading dims folded), K, N; tb: B stored [N, K]. */
typedef struct dense_geom {
    int64_t m, k, n, kp;
    bool tb;
    bool gemm;
    const tc__tensor *c; /* Gemm's C or NULL */
    int64_t c_stride;    /* 0: C is one value broadcast; 1: C is [N] or [1, N] */
    float alpha, beta;
} dense_geom;

static bool is_f32(const tc__tensor *t) { return t != NULL && t->dtype == TC_DTYPE_FLOAT32; }

/* The geometry of a MatMul or Gemm step (shapes, attributes, C); false with the reason through tc__refuse. */
static bool dense_geometry(const tc__step_desc *d, bool gemm, dense_geom *g) {
    memset(g, 0, sizeof *g);
    g->gemm = gemm;
    if (d->n_in < 2 || d->n_in > (gemm ? 3 : 2) || d->n_out < 1 || d->in[0] == NULL || d->in[1] == NULL ||
        d->out[0] == NULL)
        return tc__refuse(d, gemm ? "expects inputs A, B (optional C) and output Y" : "expects inputs A, B and output Y");
    const tc__tensor *a = d->in[0], *b = d->in[1], *y = d->out[0];
    if (!is_f32(a) || !is_f32(b) || !is_f32(y)) return tc__refuse(d, "float32 only");
    if (d->n_out > 1 && d->out[1] != NULL) return tc__refuse(d, "more than one output");
    if (b->rank != 2) return tc__refuse(d, "the weight B is not 2-D");
    if (d->in_const == NULL || !d->in_const[1]) return tc__refuse(d, "the weight B is not constant");
    if (gemm) {
        if (tc__attr_int(d->attrs, "transA", 0) != 0) return tc__refuse(d, "transA is not taken");
        if (a->rank != 2 || y->rank != 2) return tc__refuse(d, "A and Y are not 2-D");
        g->tb = tc__attr_int(d->attrs, "transB", 0) != 0;
        g->alpha = tc__attr_float(d->attrs, "alpha", 1.0f);
        g->beta = tc__attr_float(d->attrs, "beta", 1.0f);
    } else {
        if (tc__mm_has_views(d->attrs)) return tc__refuse(d, "tc.a_perm / tc.b_perm / tc.y_perm / tc.alpha are not taken");
        if (a->rank < 2 || a->rank > TC_MAX_RANK || y->rank != a->rank) return tc__refuse(d, "A is not of rank 2 or more");
        g->alpha = 1.0f;
        g->beta = 0.0f;
    }
    g->k = a->dims[a->rank - 1];
    g->n = b->dims[g->tb ? 0 : 1];
    if (b->dims[g->tb ? 1 : 0] != g->k) return tc__refuse(d, "A and B do not match");
    g->m = 1;
    for (int32_t i = 0; i + 1 < a->rank; i++) {
        if (a->dims[i] < 0 || y->dims[i] != a->dims[i]) return tc__refuse(d, "A and Y do not match");
        if (a->dims[i] > 0 && g->m > ((int64_t)1 << 40) / a->dims[i]) return tc__refuse(d, "too many rows");
        g->m *= a->dims[i];
    }
    if (y->dims[y->rank - 1] != g->n) return tc__refuse(d, "B and Y do not match");
    if (g->m < 1 || g->n < 1 || g->k < 1) return tc__refuse(d, "an empty product");
    g->kp = tc__lt_kpad(g->k);
    if (g->kp == 0) return tc__refuse(d, "K = %lld below 4 (the FP16 weight rows would not fit the packing)", (long long)g->k);
    if (g->m > INT32_MAX || g->n > INT32_MAX || g->kp > INT32_MAX || g->n > ((int64_t)1 << 40) / g->kp ||
        g->m > ((int64_t)1 << 40) / g->kp)
        return tc__refuse(d, "sizes beyond what the kernels index");
    if (gemm && d->n_in > 2 && d->in[2] != NULL) {
        const tc__tensor *c = d->in[2];
        if (!is_f32(c)) return tc__refuse(d, "C is not float32");
        const int64_t cn = tc__tensor_numel(c);
        const bool vec = (c->rank == 1 && c->dims[0] == g->n) || (c->rank == 2 && c->dims[0] == 1 && c->dims[1] == g->n);
        if (!vec && !(cn == 1 && c->rank <= 2)) return tc__refuse(d, "C is not a bias [N] / [1, N] or a scalar");
        g->c = c;
        g->c_stride = vec && g->n > 1 ? 1 : 0;
    }
    return true;
}

/* cuBLASLt's view of the product (pointers left NULL): D = Y^T [N, M], A = Bt read transposed, B = A16. */
static tc__lt_gemm lt_args(const dense_geom *g) {
    return (tc__lt_gemm){.m = g->n, .n = g->m, .k = g->k, .batch = 1, .lda = g->kp, .trans_a = true, .ldb = g->kp,
                         .ldd = g->n, .alpha = g->alpha, .beta = 1.0f, .workspace_bytes = TC__LT_WORKSPACE};
}

/* The inputs that may be FP16 row images: A when K is a multiple of 8 (16-byte rows in place), the residual. */
static uint32_t row16_inputs(const tc__step_desc *d, const dense_geom *g) {
    uint32_t m = g->k % 8 == 0 ? 1u : 0u;
    if (d->epi != NULL && d->epi->residual_input > 0 && d->epi->residual_input < 32) m |= 1u << d->epi->residual_input;
    return m;
}

/* Where the packed weight holds the FP16 copy of the step's constant epilogue bias (bytes from its start), or 0 when it
 * has none: no constant float32 bias over N, or no room within the source's bytes. */
static size_t bias16_at(const dense_geom *g, const tc__step_desc *d) {
    const tc__tensor *b = d->bias;
    if (b == NULL || b->data == NULL || b->dtype != TC_DTYPE_FLOAT32 || tc__tensor_numel(b) != g->n) return 0;
    const size_t off = tc__lt_round((size_t)(g->n * g->kp) * sizeof(uint16_t));
    const size_t src = (size_t)(g->n * g->k) * sizeof(float);
    return off + (size_t)g->n * sizeof(uint16_t) <= src ? off : 0;
}

/* cuBLASLt's view of step d's product as the build sees it (pointers left NULL): A read in place when it is an FP16
 * row image, an FP16 D when Y is one. */
static tc__lt_gemm step_lt(const tc__step_desc *d, const dense_geom *g) {
    tc__lt_gemm lg = lt_args(g);
    if (tc__row16_in(d->attrs, 0)) lg.ldb = g->k;
    lg.d16 = tc__row16_out(d->attrs);
    return lg;
}

static bool dense_supports(const tc__step_desc *d, bool gemm) {
    dense_geom g;
    if (!tc__lt_fp16_marked(d) || !dense_geometry(d, gemm, &g)) return false;
    if (!tc__cnn_epi_ok(d, true)) return false; /* bias over N, residual, any activation but the fake quantization */
    if (!tc__row16_ok(d->attrs, row16_inputs(d, &g), true))
        return tc__refuse(d, "FP16 row images only as A (K a multiple of 8), the residual and Y");
    char why[256];
    const tc__lt_gemm lg = step_lt(d, &g);
    if (!tc__lt_gemm_possible(&lg, why, sizeof why)) return tc__refuse(d, "%s", why);
    return true;
}
/* The tuner's candidates: cuBLASLt's heuristic answers for the step's product (lt_gemm.h's tc__lt_algo). */
static int configs_of(const tc__step_desc *d, void *out, int cap, bool gemm) {
    dense_geom g;
    if (!dense_geometry(d, gemm, &g)) return 0;
    const tc__lt_gemm lg = step_lt(d, &g);
    tc__lt_algo all[TC__LT_ALGOS];
    const int n = tc__lt_gemm_configs(&lg, all, cap < TC__LT_ALGOS ? cap : TC__LT_ALGOS);
    memcpy(out, all, (size_t)n * sizeof all[0]);
    return n;
}
static int matmul_configs(const tc__step_desc *d, void *out, int cap) { return configs_of(d, out, cap, false); }
static int gemm_configs(const tc__step_desc *d, void *out, int cap) { return configs_of(d, out, cap, true); }

static bool matmul_supports(const tc__step_desc *d) { return dense_supports(d, false); }
static bool gemm_supports(const tc__step_desc *d) { return dense_supports(d, true); }

static bool packs_input(const tc__step_desc *d, int index) {
    (void)d;
    return index == 1;
}

static size_t packed_bytes_of(const tc__step_desc *d, int index, bool gemm) {
    dense_geom g;
    if (index != 1 || !dense_geometry(d, gemm, &g)) return 0;
    const size_t at = bias16_at(&g, d);
    return at != 0 ? at + (size_t)g.n * sizeof(uint16_t) : (size_t)(g.n * g.kp) * sizeof(uint16_t);
}
static size_t matmul_packed_bytes(const tc__step_desc *d, int index) { return packed_bytes_of(d, index, false); }
static size_t gemm_packed_bytes(const tc__step_desc *d, int index) { return packed_bytes_of(d, index, true); }

/* Bt[j][p] = fp16(B[p][j]) (B[j][p] with transB) for p < K, zero for K <= p < Kp. */
static tc_status pack_of(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err, bool gemm) {
    dense_geom g;
    if (index != 1 || !dense_geometry(d, gemm, &g))
        return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "the FP16 cuBLASLt tactics pack only the weight of a step they take");
    const float *b = src;
    uint16_t *o = dst;
    for (int64_t j = 0; j < g.n; j++) {
        for (int64_t p = 0; p < g.k; p++) o[j * g.kp + p] = tc__f32_to_f16(g.tb ? b[j * g.k + p] : b[p * g.n + j]);
        for (int64_t p = g.k; p < g.kp; p++) o[j * g.kp + p] = 0;
    }
    const size_t at = bias16_at(&g, d); /* the FP16 bias for an FP16 D (the gap before it zeroed) */
    if (at != 0) {
        const size_t wb = (size_t)(g.n * g.kp) * sizeof(uint16_t);
        memset((unsigned char *)dst + wb, 0, at - wb);
        uint16_t *b16 = (uint16_t *)((unsigned char *)dst + at);
        const float *bias = d->bias->data;
        for (int64_t j = 0; j < g.n; j++) b16[j] = tc__f32_to_f16(bias[j]);
    }
    return TC_STATUS_OK;
}
static tc_status matmul_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    return pack_of(d, index, src, dst, err, false);
}
static tc_status gemm_pack(const tc__step_desc *d, int index, const void *src, void *dst, tc__err *err) {
    return pack_of(d, index, src, dst, err, true);
}

/* Scratch: workspace | A16 [M][Kp] halves | combined bias [N] floats (Gemm). */
static size_t a16_bytes(const dense_geom *g) { return tc__lt_round((size_t)(g->m * g->kp) * sizeof(uint16_t)); }
static size_t scratch_of(const dense_geom *g) {
    return TC__LT_ALIGN + TC__LT_WORKSPACE + a16_bytes(g) + (g->gemm ? tc__lt_round((size_t)g->n * sizeof(float)) : 0);
}
static size_t matmul_scratch(const tc__step_desc *d) {
    dense_geom g;
    return dense_geometry(d, false, &g) ? scratch_of(&g) : 0;
}
static size_t gemm_scratch(const tc__step_desc *d) {
    dense_geom g;
    return dense_geometry(d, true, &g) ? scratch_of(&g) : 0;
}

static tc_status dense_run(const tc__kernel_ctx *ctx, bool gemm) {
    const char *name = gemm ? "cuda_gemm_fp16_lt" : "cuda_matmul_fp16_lt";
    /* the step's geometry from the run's tensors (the weight's shape is the source's: packing keeps dims) */
    const tc__tensor *in[3] = {NULL, NULL, NULL}, *out[1] = {ctx->n_out > 0 ? ctx->out[0] : NULL};
    bool in_const[3] = {false, true, false};
    for (int i = 0; i < ctx->n_in && i < 3; i++) in[i] = ctx->in[i];
    const tc__epilogue none = tc__epilogue_none();
    const tc__step_desc d = {.op_type = ctx->op_type, .opset = ctx->opset, .attrs = ctx->attrs,
                             .n_in = ctx->n_in < 3 ? ctx->n_in : 3, .in = in, .in_const = in_const, .n_out = 1,
                             .out = out, .epi = ctx->epi ? ctx->epi : &none, .bias = ctx->bias, .residual = ctx->residual};
    dense_geom g;
    if (ctx->n_in > 3 || !dense_geometry(&d, gemm, &g))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: a step it does not take", name);
    if (ctx->in[1]->nbytes < (size_t)(g.n * g.kp) * sizeof(uint16_t))
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: the weight is not packed for it", name);
    tc__cuda_epi e;
    tc_status st = tc__cnn_epi_of(ctx, true, &e);
    if (st != TC_STATUS_OK) return st;
    unsigned char *sc = tc__lt_scratch(ctx, scratch_of(&g) - TC__LT_ALIGN);
    if (sc == NULL) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: scratch too small", name);
    void *ws = sc, *a16 = sc + TC__LT_WORKSPACE;
    float *comb = (float *)(sc + TC__LT_WORKSPACE + a16_bytes(&g));
    const cudaStream_t s = tc__cuda_stream(ctx);

    /* FP16 row images (row16_chain.c): A in place, D in FP16, the residual's type */
    const bool a_img = tc__row16_in(ctx->attrs, 0), d16 = tc__row16_out(ctx->attrs);
    const int ri = ctx->epi != NULL ? ctx->epi->residual_input : -1;
    const bool res16 = e.residual != NULL && ri > 0 && tc__row16_in(ctx->attrs, ri);
    const bool res_post = e.residual != NULL && res16 != d16; /* cuBLASLt's C has D's type: the pass adds it */
    if (a_img && g.k % 8 != 0)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "%s: an FP16 image A with K not a multiple of 8", name);
    cudaError_t ce = cudaSuccess;
    if (!a_img) {
        ce = tc__lt_cast_rows(ctx->in[0]->data, g.m, g.k, g.k, a16, g.kp, s);
        if (ce != cudaSuccess) return tc__cuda_fail(ce, ctx->err, "FP16 cast of A");
    }

    /* The bias cuBLASLt adds: the epilogue's, Gemm's beta * C, or both combined in scratch. beta = 0 ignores C (even
     * NaN or Inf in it), as the reference does. */
    const float *bias = e.bias;
    if (g.c != NULL && g.beta != 0.0f) {
        if (g.beta == 1.0f && g.c_stride == 1 && bias == NULL) {
            bias = g.c->data;
        } else {
            ce = tc__lt_bias_combine(g.c->data, g.c_stride, g.beta, bias, g.n, comb, s);
            if (ce != cudaSuccess) return tc__cuda_fail(ce, ctx->err, "bias combination");
            bias = comb;
        }
    }
    /* cuBLASLt's bias has D's type: an FP16 D takes the packed FP16 copy of a constant epilogue bias (not one combined
     * with Gemm's C), else the epilogue pass adds the FP32 bias */
    const void *lt_bias = bias;
    bool bias_post = false;
    if (d16 && bias != NULL) {
        const size_t at = bias == e.bias ? bias16_at(&g, &d) : 0;
        if (at != 0 && ctx->in[1]->nbytes >= at + (size_t)g.n * sizeof(uint16_t))
            lt_bias = (const unsigned char *)ctx->in[1]->data + at;
        else
            lt_bias = NULL, bias_post = true;
    }
    tc__lt_gemm lg = lt_args(&g);
    lg.a = ctx->in[1]->data;
    lg.b = a_img ? ctx->in[0]->data : a16;
    if (a_img) lg.ldb = g.k;
    lg.c = res_post ? NULL : e.residual; /* beta 1: the residual joins the sum before the activation */
    lg.d = ctx->out[0]->data;
    lg.d16 = d16;
    lg.bias = lt_bias;
    lg.relu = e.act.act == TC__ACT_RELU && !res_post && !bias_post;
    /* GELU (erf or tanh) in cuBLASLt's epilogue (its tanh form: within 5e-4 of erf's, below an FP16 output's
     * resolution) for an FP16 D without a residual; otherwise the pass applies the exact one */
    lg.gelu = (e.act.act == TC__ACT_GELU_ERF || e.act.act == TC__ACT_GELU_TANH) && d16 && e.residual == NULL &&
              !res_post && !bias_post;
    lg.workspace = ws;
    tc__lt_algo algo;
    if (ctx->config != NULL) memcpy(&algo, ctx->config, sizeof algo), lg.algo = &algo;
    bool epi_done = false;
    st = tc__lt_gemm_run(&lg, s, &epi_done, ctx->err);
    if (st != TC_STATUS_OK) return st;
    /* What cuBLASLt did not apply: the bias and ReLU when it had no algorithm with them, a residual of the other
     * type, any other activation. */
    const bool post_act = e.act.act != TC__ACT_NONE && !((lg.relu || lg.gelu) && epi_done);
    if (!epi_done || post_act || res_post || bias_post) {
        const tc__lt_epi pe = {.y = ctx->out[0]->data, .total = g.m * g.n,
                               .last_bias = epi_done && !bias_post ? NULL : bias,
                               .last_len = g.n, .residual = res_post ? e.residual : NULL,
                               .act = post_act ? e.act : (tc__cuda_act){TC__ACT_NONE, 0.0f, 0.0f}, .y16 = d16,
                               .res16 = res16};
        ce = tc__lt_epilogue(&pe, s);
        if (ce != cudaSuccess) return tc__cuda_fail(ce, ctx->err, "FP32 epilogue pass");
    }
    return TC_STATUS_OK;
}
static tc_status matmul_run(const tc__kernel_ctx *ctx) { return dense_run(ctx, false); }
static tc_status gemm_run(const tc__kernel_ctx *ctx) { return dense_run(ctx, true); }

const tc__tactic tc__tactic_cuda_matmul_fp16_lt = {
    .name = "cuda_matmul_fp16_lt",
    .op_type = "MatMul",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = TC__TACTIC_FUSES_EPILOGUE,
    .chain = TC__CHAIN_FP16_ROWS,
    .precision = "fp16",
    .supports = matmul_supports,
    .packs_input = packs_input,
    .pack = matmul_pack,
    .packed_bytes = matmul_packed_bytes,
    .scratch_bytes = matmul_scratch,
    .run = matmul_run,
    .config_bytes = sizeof(tc__lt_algo),
    .configs = matmul_configs,
    .check_config = tc__lt_algo_check,
};

const tc__tactic tc__tactic_cuda_gemm_fp16_lt = {
    .name = "cuda_gemm_fp16_lt",
    .op_type = "Gemm",
    .backend = TC__BACKEND_CUDA,
    .caps = 0,
    .flags = TC__TACTIC_FUSES_EPILOGUE,
    .chain = TC__CHAIN_FP16_ROWS,
    .precision = "fp16",
    .supports = gemm_supports,
    .packs_input = packs_input,
    .pack = gemm_pack,
    .packed_bytes = gemm_packed_bytes,
    .scratch_bytes = gemm_scratch,
    .run = gemm_run,
    .config_bytes = sizeof(tc__lt_algo),
    .configs = gemm_configs,
    .check_config = tc__lt_algo_check,
};
