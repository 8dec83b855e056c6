/*
 * infer_control.c - shape inference for If in the form an engine runs (engine/model_predicate_if.c): inputs
 * [then_run, else_run, then_out_0 .. then_out_{n-1}, else_out_0 .. else_out_{n-1}], n outputs. then_run and
 * else_run are one-element bools (exactly one is true at run time); output k is then_out_k or else_out_k. A branch
 * output whose type is unknown (its branch cannot run at these shapes) leaves the other's; where both are known, the
 * dtypes must agree and a dim that differs between them becomes unknown (the output's shape then depends on the
 * condition, which an engine refuses). An If still holding its branches as graph attributes (as imported) is not
 * this form: UNSUPPORTED.
 */
#include <string.h>

#include "core/attr.h"
#include "graph/op_schema.h"

static const char *dname(tc_dtype d) { return tc_dtype_name(d) ? tc_dtype_name(d) : "?"; }

tc_status tc__infer_If(tc__infer_ctx *ctx) {
    const int n = ctx->n_out;
    if (tc__attr_find(ctx->attrs, "then_branch") != NULL || tc__attr_find(ctx->attrs, "else_branch") != NULL)
        return tc__fail(ctx->err, TC_STATUS_UNSUPPORTED, "an If holding its branches is inferred once they are "
                        "inlined (its condition is known) or predicated (decided at run time)");
    if (n < 1 || ctx->n_in != 2 + 2 * n)
        return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH,
                        "a predicated If takes 2 + 2 x %d inputs (then_run, else_run, each branch's outputs), got %d", n,
                        ctx->n_in);
    for (int i = 0; i < 2; i++) {
        const tc__vinfo *c = ctx->in[i];
        if (c == NULL) return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "its run flag %d is absent", i);
        if (c->dtype != TC_DTYPE_UNDEFINED && c->dtype != TC_DTYPE_BOOL)
            return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH, "its run flag %d has data type %s, expected bool", i,
                            dname(c->dtype));
    }
    /* a condition known before the run (shape arithmetic) picks its branch */
    const tc__tensor *known = ctx->in[0]->value;
    const int pick = known && known->dtype == TC_DTYPE_BOOL && tc__tensor_numel(known) == 1 && known->data
                         ? ((const uint8_t *)known->data)[0] != 0 : -1;
    for (int k = 0; k < n; k++) {
        const tc__vinfo *t = pick == 0 ? NULL : ctx->in[2 + k], *e = pick == 1 ? NULL : ctx->in[2 + n + k];
        const bool t_ok = t != NULL && t->dtype != TC_DTYPE_UNDEFINED, e_ok = e != NULL && e->dtype != TC_DTYPE_UNDEFINED;
        tc__vinfo *y = &ctx->out[k];
        if (!t_ok && !e_ok) continue; /* unknown: neither branch's output is known */
        if (!t_ok || !e_ok) {
            const tc__vinfo *only = t_ok ? t : e;
            y->dtype = only->dtype;
            y->shape = only->shape;
            continue;
        }
        if (t->dtype != e->dtype)
            return tc__fail(ctx->err, TC_STATUS_INVALID_GRAPH,
                            "output %d is %s in the then branch but %s in the else branch", k, dname(t->dtype),
                            dname(e->dtype));
        y->dtype = t->dtype;
        if (t->shape.rank < 0 || e->shape.rank < 0 || t->shape.rank != e->shape.rank) {
            y->shape.rank = TC__RANK_UNKNOWN;
            continue;
        }
        y->shape.rank = t->shape.rank;
        for (int32_t d = 0; d < t->shape.rank; d++)
            y->shape.dims[d] = tc__dim_same(t->shape.dims[d], e->shape.dims[d]) ? t->shape.dims[d] : tc__dim_unknown();
    }
    return TC_STATUS_OK;
}
