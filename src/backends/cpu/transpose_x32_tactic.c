/*
 * transpose_x32_tactic.c - tactic transpose_x32: Transpose of any 4-byte element type (float32,
 * int32, uint32) as a walk over the output with the input's permuted strides; runs of the last
 * output dim that stay contiguous in the input are copied with memcpy. Portable C.
 */
#include <string.h>

#include "backends/tactic.h"

static bool perm_of(const tc__attrs *attrs, int32_t rank, int64_t *perm) {
    const int64_t *p;
    size_t n = tc__attr_ints(attrs, "perm", &p);
    if (n == 0) {
        for (int32_t i = 0; i < rank; i++) perm[i] = rank - 1 - i;
        return true;
    }
    if ((int32_t)n != rank) return false;
    bool seen[TC_MAX_RANK] = {false};
    for (int32_t i = 0; i < rank; i++) {
        int64_t a = p[i] < 0 ? p[i] + rank : p[i];
        if (a < 0 || a >= rank || seen[a]) return false;
        seen[a] = true;
        perm[i] = a;
    }
    return true;
}

static bool supports(const tc__step_desc *d) {
    if (d->n_in != 1 || d->n_out != 1 || d->in[0] == NULL || !tc__epilogue_is_none(d->epi)) return false;
    const tc__tensor *x = d->in[0];
    if (tc_dtype_size(x->dtype) != 4 || x->rank < 1 || x->rank > TC_MAX_RANK) return false;
    int64_t perm[TC_MAX_RANK];
    return perm_of(d->attrs, x->rank, perm);
}

static tc_status run(const tc__kernel_ctx *ctx) {
    const tc__tensor *x = ctx->in[0];
    tc__tensor *y = ctx->out[0];
    int32_t r = x->rank;
    int64_t perm[TC_MAX_RANK], xs[TC_MAX_RANK], s[TC_MAX_RANK], idx[TC_MAX_RANK] = {0};
    if (!perm_of(ctx->attrs, r, perm)) return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "bad perm");
    int64_t st = 1;
    for (int32_t i = r - 1; i >= 0; i--) {
        xs[i] = st;
        st *= x->dims[i];
    }
    for (int32_t i = 0; i < r; i++) {
        s[i] = xs[perm[i]];
        if (y->dims[i] != x->dims[perm[i]])
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "output dim %d does not match the permuted input", (int)i);
    }
    int64_t total = tc__tensor_numel(y);
    if (total <= 0) return TC_STATUS_OK;
    const uint32_t *src = x->data;
    uint32_t *dst = y->data;
    const int64_t inner = y->dims[r - 1], sl = s[r - 1];
    int64_t off = 0;
    for (int64_t o = 0; o < total; o += inner) {
        if (sl == 1) {
            memcpy(dst + o, src + off, sizeof(uint32_t) * (size_t)inner);
        } else {
            const uint32_t *p = src + off;
            for (int64_t j = 0; j < inner; j++) dst[o + j] = p[j * sl];
        }
        /* Advance the multi-index over the outer dims. */
        for (int32_t i = r - 2; i >= 0; i--) {
            off += s[i];
            if (++idx[i] < y->dims[i]) break;
            off -= s[i] * y->dims[i];
            idx[i] = 0;
        }
    }
    return TC_STATUS_OK;
}

const tc__tactic tc__tactic_transpose_x32 = {
    .name = "transpose_x32",
    .op_type = "Transpose",
    .backend = TC__BACKEND_CPU, .caps = 0,
    .supports = supports,
    .run = run,
};
