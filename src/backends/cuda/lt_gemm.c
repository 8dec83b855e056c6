/*
 * lt_gemm.c - one cuBLASLt FP16 GEMM (lt_gemm.h): descriptors, heuristic, launch, clean-up.
 */
#include "backends/cuda/lt_gemm.h"

#include <stdio.h>
#include <string.h>

#include "backends/cuda/cublaslt.h"

/* The descriptors of one call. */
typedef struct lt_descs {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c, d;
    cublasLtMatmulPreference_t pref;
} lt_descs;

static void descs_destroy(const tc__cublaslt *lt, lt_descs *x) {
    if (x->pref) lt->MatmulPreferenceDestroy(x->pref);
    if (x->d) lt->MatrixLayoutDestroy(x->d);
    if (x->c) lt->MatrixLayoutDestroy(x->c);
    if (x->b) lt->MatrixLayoutDestroy(x->b);
    if (x->a) lt->MatrixLayoutDestroy(x->a);
    if (x->op) lt->MatmulDescDestroy(x->op);
    memset(x, 0, sizeof *x);
}

/* Largest power of two (<= 256) dividing the address and, for a batch, the batch stride in bytes. */
static uint32_t align_of(const void *p, int64_t batch, int64_t stride_bytes) {
    uint64_t v = (uint64_t)(uintptr_t)p | 256u;
    if (batch > 1 && stride_bytes != 0) v |= (uint64_t)stride_bytes;
    return (uint32_t)(v & (~v + 1));
}

/* A layout of rows x cols (column-major, ld), with its batch. */
static cublasStatus_t layout(const tc__cublaslt *lt, cublasLtMatrixLayout_t *out, cudaDataType t, int64_t rows,
                             int64_t cols, int64_t ld, int64_t batch, int64_t stride) {
    cublasStatus_t s = lt->MatrixLayoutCreate(out, t, (uint64_t)rows, (uint64_t)cols, ld);
    if (s != CUBLAS_STATUS_SUCCESS || batch <= 1) return s;
    const int32_t count = (int32_t)batch;
    s = lt->MatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = lt->MatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
    return s;
}

/* The descriptors of g with the given epilogue and alignments; *what names the call that failed. */
static cublasStatus_t descs_make(const tc__cublaslt *lt, const tc__lt_gemm *g, cublasLtEpilogue_t epi,
                                 const uint32_t align[4], lt_descs *x, const char **what) {
    memset(x, 0, sizeof *x);
    cublasStatus_t s;
    *what = "cublasLtMatmulDescCreate";
    if ((s = lt->MatmulDescCreate(&x->op, CUBLAS_COMPUTE_32F, CUDA_R_32F)) != CUBLAS_STATUS_SUCCESS) return s;
    const cublasOperation_t ta = g->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    *what = "cublasLtMatmulDescSetAttribute";
    if ((s = lt->MatmulDescSetAttribute(x->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta)) != CUBLAS_STATUS_SUCCESS ||
        (s = lt->MatmulDescSetAttribute(x->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb)) != CUBLAS_STATUS_SUCCESS ||
        (s = lt->MatmulDescSetAttribute(x->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi)) != CUBLAS_STATUS_SUCCESS)
        return s;
    if (epi == CUBLASLT_EPILOGUE_BIAS || epi == CUBLASLT_EPILOGUE_RELU_BIAS || epi == CUBLASLT_EPILOGUE_GELU_BIAS) {
        const void *bias = g->bias;
        if ((s = lt->MatmulDescSetAttribute(x->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias)) !=
            CUBLAS_STATUS_SUCCESS)
            return s;

        /* the bias vector does not move with the batch: its batch stride stays 0 (the default) */
    }
    *what = "cublasLtMatrixLayoutCreate";
    if ((s = layout(lt, &x->a, CUDA_R_16F, g->trans_a ? g->k : g->m, g->trans_a ? g->m : g->k, g->lda, g->batch,
                    g->stride_a)) != CUBLAS_STATUS_SUCCESS ||
        (s = layout(lt, &x->b, CUDA_R_16F, g->trans_b ? g->n : g->k, g->trans_b ? g->k : g->n, g->ldb, g->batch,
                    g->stride_b)) != CUBLAS_STATUS_SUCCESS ||
        (s = layout(lt, &x->c, g->d16 ? CUDA_R_16F : CUDA_R_32F, g->m, g->n, g->ldd, g->batch, g->stride_d)) !=
            CUBLAS_STATUS_SUCCESS ||
        (s = layout(lt, &x->d, g->d16 ? CUDA_R_16F : CUDA_R_32F, g->m, g->n, g->ldd, g->batch, g->stride_d)) !=
            CUBLAS_STATUS_SUCCESS)
        return s;
    *what = "cublasLtMatmulPreference";
    if ((s = lt->MatmulPreferenceCreate(&x->pref)) != CUBLAS_STATUS_SUCCESS) return s;
    const uint64_t ws = g->workspace_bytes;
    if ((s = lt->MatmulPreferenceSetAttribute(x->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws)) !=
        CUBLAS_STATUS_SUCCESS)
        return s;
    static const cublasLtMatmulPreferenceAttributes_t pa[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4; i++)
        if ((s = lt->MatmulPreferenceSetAttribute(x->pref, pa[i], &align[i], sizeof align[i])) != CUBLAS_STATUS_SUCCESS)
            return s;
    return CUBLAS_STATUS_SUCCESS;
}

/* The configuration attributes a tc__lt_algo keeps, in its field order after id (uint32 but the last two, uint16). */
static const cublasLtMatmulAlgoConfigAttributes_t k_attrs[8] = {
    CUBLASLT_ALGO_CONFIG_TILE_ID,       CUBLASLT_ALGO_CONFIG_SPLITK_NUM,  CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME,
    CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, CUBLASLT_ALGO_CONFIG_STAGES_ID,
    CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID};

/* The fields of c in k_attrs' order. */
static void algo_fields(tc__lt_algo *c, void *f[8], size_t n[8]) {
    uint32_t *u[6] = {&c->tile, &c->splitk, &c->reduction, &c->swizzle, &c->custom, &c->stages};
    for (int i = 0; i < 6; i++) f[i] = u[i], n[i] = sizeof(uint32_t);
    f[6] = &c->inner_shape, n[6] = sizeof(uint16_t);
    f[7] = &c->cluster_shape, n[7] = sizeof(uint16_t);
}

/* cuBLASLt's algorithm as a tc__lt_algo (set 1); false when the library does not describe it. */
static bool algo_save(const tc__cublaslt *lt, const cublasLtMatmulAlgo_t *a, tc__lt_algo *c) {
    memset(c, 0, sizeof *c);
    void *f[8];
    size_t n[8], got = 0;
    algo_fields(c, f, n);
    if (lt->MatmulAlgoConfigGetAttribute(a, CUBLASLT_ALGO_CONFIG_ID, &c->id, sizeof c->id, &got) != CUBLAS_STATUS_SUCCESS)
        return false;
    for (int i = 0; i < 8; i++)
        if (lt->MatmulAlgoConfigGetAttribute(a, k_attrs[i], f[i], n[i], &got) != CUBLAS_STATUS_SUCCESS) return false;
    c->set = 1;
    return true;
}

/* The algorithm c names, for g's types, checked against the call's descriptors x: true with *res filled when cuBLASLt
 * takes it within the workspace. */
static bool algo_load(const tc__cublaslt *lt, const tc__lt_gemm *g, const tc__lt_algo *c, const lt_descs *x,
                      cublasLtMatmulHeuristicResult_t *res) {
    const cudaDataType_t cd = g->d16 ? CUDA_R_16F : CUDA_R_32F;
    cublasLtMatmulAlgo_t a;
    memset(&a, 0, sizeof a);
    if (lt->MatmulAlgoInit(lt->handle, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16F, CUDA_R_16F, cd, cd, c->id, &a) !=
        CUBLAS_STATUS_SUCCESS)
        return false;
    tc__lt_algo copy = *c;
    void *f[8];
    size_t n[8];
    algo_fields(&copy, f, n);
    for (int i = 0; i < 8; i++)
        if (lt->MatmulAlgoConfigSetAttribute(&a, k_attrs[i], f[i], n[i]) != CUBLAS_STATUS_SUCCESS) return false;
    memset(res, 0, sizeof *res);
    if (lt->MatmulAlgoCheck(lt->handle, x->op, x->a, x->b, x->c, x->d, &a, res) != CUBLAS_STATUS_SUCCESS ||
        res->state != CUBLAS_STATUS_SUCCESS || res->workspaceSize > g->workspace_bytes)
        return false;
    res->algo = a;
    return true;
}

bool tc__lt_algo_check(const void *config, tc__err *err) {
    tc__lt_algo c;
    memcpy(&c, config, sizeof c);
    const tc__lt_algo zero = {0};
    if (c.set == 0 && memcmp(&c, &zero, sizeof c) == 0) return true;
    if (c.set != 1 || c.id < 0 || c.splitk > 4096) {
        tc__fail(err, TC_STATUS_CORRUPT_FILE, "a cuBLASLt algorithm configuration that is not one (set %u, id %d, "
                 "split-K %u)", c.set, c.id, c.splitk);
        return false;
    }
    return true;
}

/* The heuristic's first algorithm for g with epilogue epi (or g->algo when it names one cuBLASLt takes for this
 * call): CUBLAS_STATUS_SUCCESS and *found, or a failure. */
static cublasStatus_t pick(const tc__cublaslt *lt, const tc__lt_gemm *g, cublasLtEpilogue_t epi, const uint32_t align[4],
                           lt_descs *x, cublasLtMatmulHeuristicResult_t *res, bool *found, const char **what) {
    *found = false;
    cublasStatus_t s = descs_make(lt, g, epi, align, x, what);
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    if (g->algo != NULL && g->algo->set == 1 && algo_load(lt, g, g->algo, x, res)) {
        *found = true;
        return CUBLAS_STATUS_SUCCESS;
    }
    int n = 0;
    memset(res, 0, sizeof *res);
    *what = "cublasLtMatmulAlgoGetHeuristic";
    s = lt->MatmulAlgoGetHeuristic(lt->handle, x->op, x->a, x->b, x->c, x->d, x->pref, 1, res, &n);
    if (s == CUBLAS_STATUS_NOT_SUPPORTED) return CUBLAS_STATUS_SUCCESS; /* no algorithm: *found false */
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    *found = n > 0 && res->state == CUBLAS_STATUS_SUCCESS && res->workspaceSize <= g->workspace_bytes;
    return CUBLAS_STATUS_SUCCESS;
}

static bool sizes_ok(const tc__lt_gemm *g) {
    return g->m > 0 && g->n > 0 && g->k > 0 && g->batch >= 1 && g->batch <= INT32_MAX &&
           g->lda >= (g->trans_a ? g->k : g->m) && g->ldb >= (g->trans_b ? g->n : g->k) && g->ldd >= g->m;
}

tc_status tc__lt_gemm_run(const tc__lt_gemm *g, cudaStream_t stream, bool *epi_done, tc__err *err) {
    *epi_done = g->bias == NULL && !g->relu && !g->gelu;
    if (g->m == 0 || g->n == 0 || g->batch == 0) return TC_STATUS_OK;
    if (!sizes_ok(g)) return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "cuBLASLt GEMM: sizes out of range");
    const tc__cublaslt *lt = tc__cublaslt_get(err);
    if (lt == NULL) return err ? err->status : TC_STATUS_UNSUPPORTED;
    const int64_t de = g->d16 ? 2 : 4; /* bytes of a C / D element */
    const uint32_t align[4] = {align_of(g->a, g->batch, g->stride_a * 2), align_of(g->b, g->batch, g->stride_b * 2),
                               /* without C, D is passed as C (beta 0) */
                               align_of(g->c ? g->c : g->d, g->batch, g->stride_d * de),
                               align_of(g->d, g->batch, g->stride_d * de)};
    cublasLtEpilogue_t epi =
        g->bias != NULL ? (g->relu ? CUBLASLT_EPILOGUE_RELU_BIAS : g->gelu ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                        : (g->relu ? CUBLASLT_EPILOGUE_RELU : g->gelu ? CUBLASLT_EPILOGUE_GELU : CUBLASLT_EPILOGUE_DEFAULT);
    lt_descs x;
    cublasLtMatmulHeuristicResult_t res;
    bool found = false;
    const char *what = "";
    cublasStatus_t s = pick(lt, g, epi, align, &x, &res, &found, &what);
    if (s == CUBLAS_STATUS_SUCCESS && !found && epi != CUBLASLT_EPILOGUE_DEFAULT) {
        /* No algorithm with the fused epilogue: the product alone, the caller finishes the epilogue. */
        descs_destroy(lt, &x);
        epi = CUBLASLT_EPILOGUE_DEFAULT;
        s = pick(lt, g, epi, align, &x, &res, &found, &what);
    }
    tc_status st = TC_STATUS_OK;
    if (s != CUBLAS_STATUS_SUCCESS) {
        st = tc__cublaslt_fail(s, err, what);
    } else if (!found) {
        st = tc__fail(err, TC_STATUS_UNSUPPORTED,
                      "cuBLASLt has no FP16 algorithm for m %lld n %lld k %lld batch %lld (lda %lld ldb %lld ldd %lld, "
                      "alignments %u %u %u %u)",
                      (long long)g->m, (long long)g->n, (long long)g->k, (long long)g->batch, (long long)g->lda,
                      (long long)g->ldb, (long long)g->ldd, align[0], align[1], align[2], align[3]);
    } else {
        const float beta = g->c != NULL ? g->beta : 0.0f;
        s = lt->Matmul(lt->handle, x.op, &g->alpha, g->a, x.a, g->b, x.b, &beta, g->c != NULL ? g->c : g->d,
                       x.c, g->d, x.d, &res.algo, g->workspace, g->workspace_bytes, stream);
        st = tc__cublaslt_fail(s, err, "cublasLtMatmul");
        *epi_done = epi != CUBLASLT_EPILOGUE_DEFAULT || (g->bias == NULL && !g->relu && !g->gelu);
    }
    descs_destroy(lt, &x);
    return st;
}

/* The alignments a build assumes (pointers are not known yet): at least what run() will see, FP16 rows of 16-byte
 * multiples, C and D element-aligned. */
static void build_align(const tc__lt_gemm *g, uint32_t align[4]) {
    align[0] = align[1] = 16;
    align[2] = align[3] = g->d16 ? 2u : 4u;
}

bool tc__lt_gemm_possible(const tc__lt_gemm *g, char *why, size_t why_size) {
    tc__err err = {0};
    if (!sizes_ok(g)) {
        if (why) snprintf(why, why_size, "sizes cuBLASLt does not take");
        return false;
    }
    const tc__cublaslt *lt = tc__cublaslt_get(&err);
    if (lt == NULL) {
        if (why) snprintf(why, why_size, "%s", err.msg);
        return false;
    }
    uint32_t align[4];
    build_align(g, align);
    lt_descs x;
    cublasLtMatmulHeuristicResult_t res;
    bool found = false;
    const char *what = "";
    const cublasStatus_t s = pick(lt, g, CUBLASLT_EPILOGUE_DEFAULT, align, &x, &res, &found, &what);
    descs_destroy(lt, &x);
    if (s != CUBLAS_STATUS_SUCCESS) {
        if (why) snprintf(why, why_size, "%s: %s", what, tc__cublaslt_status_name(s));
        return false;
    }
    if (!found && why) snprintf(why, why_size, "cuBLASLt has no FP16 algorithm for these sizes");
    return found;
}

int tc__lt_gemm_configs(const tc__lt_gemm *g, tc__lt_algo *out, int cap) {
    tc__err err = {0};
    if (cap < 1 || !sizes_ok(g)) return 0;
    const tc__cublaslt *lt = tc__cublaslt_get(&err);
    if (lt == NULL) return 0;
    uint32_t align[4];
    build_align(g, align);
    lt_descs x;
    const char *what = "";
    int n = 0, got = 0;
    cublasLtMatmulHeuristicResult_t all[TC__LT_ALGOS];
    memset(all, 0, sizeof all);
    if (descs_make(lt, g, CUBLASLT_EPILOGUE_DEFAULT, align, &x, &what) == CUBLAS_STATUS_SUCCESS &&
        lt->MatmulAlgoGetHeuristic(lt->handle, x.op, x.a, x.b, x.c, x.d, x.pref, TC__LT_ALGOS, all, &got) ==
            CUBLAS_STATUS_SUCCESS) {
        for (int i = 0; i < got && i < TC__LT_ALGOS && n < cap; i++) {
            if (all[i].state != CUBLAS_STATUS_SUCCESS || all[i].workspaceSize > g->workspace_bytes) continue;
            if (n == 0) {
                memset(&out[0], 0, sizeof out[0]); /* the default: the heuristic's first, asked again at run */
                n = 1;
            } else if (algo_save(lt, &all[i].algo, &out[n])) {
                n++;
            }
        }
    }
    descs_destroy(lt, &x);
    return n;
}
