/*
 * binary_f32_tactic.c - tactics cuda_add_f32, cuda_sub_f32, cuda_mul_f32, cuda_div_f32: FP32 Add / Sub / Mul / Div
 * with NumPy broadcasting of both inputs up to rank 8, the whole epilogue fused (bias over the last dim, residual,
 * activation). Kernels in binary_f32.cu.
 */
#include <string.h>

#include "backends/cuda/eltwise_f32.h"

/* The collapsed broadcast of a and b to y; false when y is not exactly their broadcast or not float32. */
static bool bcast_of(const tc__tensor *a, const tc__tensor *b, const tc__tensor *y, tc__cuda_bcast2 *sh, int64_t *n) {
    memset(sh, 0, sizeof *sh);
    if (!tc__cnn_is_f32(a) || !tc__cnn_is_f32(b) || !tc__cnn_is_f32(y)) return false;
    const int32_t r = y->rank;
    if (r < 0 || r > TC__CUDA_MAX_RANK || a->rank > r || b->rank > r) return false;
    for (int32_t i = 0; i < r; i++) { /* y must be exactly the broadcast of a and b */
        const int32_t ia = i - (r - a->rank), ib = i - (r - b->rank);
        const int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if ((da != 1 && da != y->dims[i]) || (db != 1 && db != y->dims[i]) || y->dims[i] != (da == 1 ? db : da))
            return false;
    }
    int64_t sa[TC__CUDA_MAX_RANK], sb[TC__CUDA_MAX_RANK];
    if (!tc__bcast_strides(a, r, y->dims, sa) || !tc__bcast_strides(b, r, y->dims, sb)) return false;
    *n = tc__tensor_numel(y);
    if (*n < 0) return false;
    /* drop size-1 dims; merge dim i into the previous kept one when both inputs are contiguous across them */
    int32_t k = 0;
    for (int32_t i = 0; i < r; i++) {
        if (y->dims[i] == 1) continue;
        if (k > 0 && sh->sa[k - 1] == sa[i] * y->dims[i] && sh->sb[k - 1] == sb[i] * y->dims[i]) {
            sh->dims[k - 1] *= y->dims[i];
            sh->sa[k - 1] = sa[i];
            sh->sb[k - 1] = sb[i];
            continue;
        }
        sh->dims[k] = y->dims[i];
        sh->sa[k] = sa[i];
        sh->sb[k] = sb[i];
        k++;
    }
    sh->rank = k;
    return true;
}

static bool supports(const tc__step_desc *d) {
    if (d->n_in != 2 || d->in[0] == NULL || d->in[1] == NULL || d->n_out != 1 || d->out[0] == NULL)
        return tc__refuse(d, "expects two inputs and one output");
    tc__cuda_bcast2 sh;
    int64_t n;
    if (!bcast_of(d->in[0], d->in[1], d->out[0], &sh, &n))
        return tc__refuse(d, "not float32 inputs broadcasting to a float32 output of rank <= 8");
    return tc__cnn_epi_ok(d, true);
}

static tc_status run_op(const tc__kernel_ctx *ctx, int op) {
    if (ctx->n_in < 2 || ctx->in[0] == NULL || ctx->in[1] == NULL || ctx->n_out < 1 || ctx->out[0] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "expects 2 inputs and an output");
    tc__cuda_bcast2 sh;
    int64_t n;
    if (!bcast_of(ctx->in[0], ctx->in[1], ctx->out[0], &sh, &n))
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "%s: shapes or types this tactic does not compute",
                        ctx->op_type);
    tc__cuda_epi epi;
    tc_status st = tc__cnn_epi_of(ctx, true, &epi);
    if (st != TC_STATUS_OK) return st;
    return tc__cuda_fail(tc__cuda_binary_f32(op, ctx->in[0]->data, ctx->in[1]->data, ctx->out[0]->data, &sh, n, epi,
                                             tc__cuda_stream(ctx)),
                         ctx->err, "cuda binary launch");
}

#define TC_CUDA_BINARY_TACTIC(lower, Op, code)                                                \
    static tc_status run_##lower(const tc__kernel_ctx *ctx) { return run_op(ctx, code); }     \
    const tc__tactic tc__tactic_cuda_##lower##_f32 = {                                        \
        .name = "cuda_" #lower "_f32",                                                        \
        .op_type = #Op,                                                                       \
        .backend = TC__BACKEND_CUDA,                                                          \
        .caps = 0,                                                                            \
        .flags = TC__TACTIC_FUSES_EPILOGUE,                                                   \
        .supports = supports,                                                                 \
        .run = run_##lower,                                                                   \
    };

TC_CUDA_BINARY_TACTIC(add, Add, TC__CUDA_BIN_ADD)
TC_CUDA_BINARY_TACTIC(sub, Sub, TC__CUDA_BIN_SUB)
TC_CUDA_BINARY_TACTIC(mul, Mul, TC__CUDA_BIN_MUL)
TC_CUDA_BINARY_TACTIC(div, Div, TC__CUDA_BIN_DIV)
