/*
 * control.c - reference kernel for If in the form an engine runs (graph/infer_control.c): inputs [then_run,
 * else_run, then outputs, else outputs]; the branch whose flag is true has run (its nodes are guarded by that flag)
 * and its outputs are copied to the If's. The copy must have the output's exact dtype and shape (sized before the
 * run from the branch outputs' shapes); anything else fails rather than returning another shape's bytes.
 */
#include <string.h>

#include "backends/ref/ref.h"

tc_status tc__ref_If(const tc__kernel_ctx *ctx) {
    const int n = ctx->n_out;
    if (n < 1 || ctx->n_in != 2 + 2 * n || ctx->in[0] == NULL || ctx->in[1] == NULL)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                        "expects 2 + 2 x %d inputs (then_run, else_run, each branch's outputs), got %d", n, ctx->n_in);
    const tc__tensor *run_then = ctx->in[0], *run_else = ctx->in[1];
    if (run_then->dtype != TC_DTYPE_BOOL || run_else->dtype != TC_DTYPE_BOOL || tc__tensor_numel(run_then) != 1 ||
        tc__tensor_numel(run_else) != 1)
        return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT, "its run flags must be one-element bools");
    const bool t = ((const uint8_t *)run_then->data)[0] != 0, e = ((const uint8_t *)run_else->data)[0] != 0;
    if (t == e) /* exactly one branch ran */
        return tc__fail(ctx->err, TC_STATUS_INTERNAL, "both or neither of its branches ran (then %d, else %d)", t, e);
    for (int k = 0; k < n; k++) {
        const tc__tensor *src = ctx->in[2 + (t ? 0 : n) + k];
        tc__tensor *y = ctx->out[k];
        if (y == NULL) continue;
        char a[160], b[160];
        if (src == NULL || src->dtype != y->dtype || src->rank != y->rank ||
            (src->rank > 0 && memcmp(src->dims, y->dims, sizeof(int64_t) * (size_t)src->rank) != 0) ||
            src->nbytes != y->nbytes || (y->nbytes > 0 && (y->data == NULL || src->data == NULL)))
            return tc__fail(ctx->err, TC_STATUS_INVALID_ARGUMENT,
                            "the %s branch's output %d is %s %s, but the If's output was sized %s %s", t ? "then" : "else",
                            k, src ? (tc_dtype_name(src->dtype) ? tc_dtype_name(src->dtype) : "?") : "absent",
                            src ? tc__shape_str(src->rank, src->dims, a, sizeof a) : "",
                            tc_dtype_name(y->dtype) ? tc_dtype_name(y->dtype) : "?",
                            tc__shape_str(y->rank, y->dims, b, sizeof b));
        if (y->nbytes > 0 && y->data != src->data) memmove(y->data, src->data, y->nbytes);
    }
    return TC_STATUS_OK;
}
