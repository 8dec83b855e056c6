/* ref_node.c - runs one node with the reference backend (see ref_node.h). */
#include "engine/ref_node.h"

#include <string.h>

#include "backends/backend.h"
#include "backends/epilogue.h"

#define TC__NODE_MAX_IN 64
#define TC__NODE_MAX_OUT 16

void tc__vinfo_from_tensor(const tc__tensor *t, bool with_value, tc__vinfo *v) {
    tc__vinfo_init(v);
    v->dtype = t->dtype;
    v->shape.rank = t->rank;
    for (int32_t i = 0; i < t->rank; i++) v->shape.dims[i] = tc__dim_known(t->dims[i]);
    if (!with_value) return;
    v->value = t;
    if ((t->dtype == TC_DTYPE_INT64 || t->dtype == TC_DTYPE_INT32) && t->rank <= 1) {
        int64_t n = tc__tensor_numel(t);
        if (n >= 0 && n <= TC_MAX_RANK) {
            for (int64_t i = 0; i < n; i++) v->symval[i] = tc__dim_literal(tc__tensor_get_i64(t, i));
            v->symval_len = (int32_t)n;
        }
    }
}

tc__kernel_fn tc__ref_kernel(const char *op_type) {
    const tc__tactic *t = tc__tactic_fallback(tc__backend_get(TC__BACKEND_CPU), op_type);
    return t != NULL ? t->run : NULL;
}

static tc_status run_node(const tc__node *node, int64_t opset, const tc__tensor *const *in, tc__tensor *outs,
                          tc__err *err) {
    if (node->schema == NULL)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "op %s of domain '%s' is not supported", node->op_type,
                        node->domain);
    tc__kernel_fn kernel = tc__ref_kernel(node->op_type);
    if (kernel == NULL) return tc__fail(err, TC_STATUS_UNSUPPORTED, "op %s has no reference kernel", node->op_type);
    const int n_in = node->n_op_in;
    if (node->n_in > TC__NODE_MAX_IN || node->n_out > TC__NODE_MAX_OUT)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "too many inputs or outputs (%d, %d)", node->n_in, node->n_out);
    tc__vinfo vin[TC__NODE_MAX_IN];
    const tc__vinfo *pin[TC__NODE_MAX_IN];
    for (int i = 0; i < n_in; i++) {
        if (in[i] == NULL) {
            pin[i] = NULL;
            continue;
        }
        tc__vinfo_from_tensor(in[i], true, &vin[i]);
        pin[i] = &vin[i];
    }
    tc__vinfo vout[TC__NODE_MAX_OUT];
    for (int o = 0; o < node->n_out; o++) tc__vinfo_init(&vout[o]);
    tc__infer_ctx ictx = {.node_name = node->name,
                          .op_type = node->op_type,
                          .opset = opset,
                          .attrs = &node->attrs,
                          .n_in = n_in,
                          .in = pin,
                          .n_out = node->n_out,
                          .out = vout,
                          .err = err};
    tc_status st = node->schema->infer(&ictx);
    if (st) return st;
    tc__tensor *pout[TC__NODE_MAX_OUT];
    for (int o = 0; o < node->n_out; o++) {
        pout[o] = NULL;
        if (node->out[o] < 0) continue;
        const tc__vinfo *v = &vout[o];
        if (!tc__shape_is_concrete(&v->shape) || !tc__dtype_valid(v->dtype))
            return tc__fail(err, TC_STATUS_INTERNAL, "could not determine the type and shape of output %d", o);
        int64_t dims[TC_MAX_RANK];
        for (int32_t i = 0; i < v->shape.rank; i++) dims[i] = v->shape.dims[i].value;
        st = tc__tensor_alloc(&outs[o], v->dtype, v->shape.rank, dims, err);
        if (st) return st;
        /* Poison the output: kernels must write every element (engine arenas are not zeroed),
         * and the conformance and model tests catch any that do not. */
        memset(outs[o].data, 0xA5, outs[o].nbytes);
        pout[o] = &outs[o];
    }
    tc__kernel_ctx kctx = {.node_name = node->name,
                           .op_type = node->op_type,
                           .opset = opset,
                           .attrs = &node->attrs,
                           .n_in = n_in,
                           .in = in,
                           .n_out = node->n_out,
                           .out = pout,
                           .err = err};
    st = kernel(&kctx);
    if (st != TC_STATUS_OK || tc__epilogue_is_none(&node->epi)) return st;
    const tc__epilogue *e = &node->epi;
    if (pout[0] == NULL) return tc__fail(err, TC_STATUS_INTERNAL, "fused epilogue without an output");
    return tc__epilogue_apply(e, pout[0], e->bias_input >= 0 ? in[e->bias_input] : NULL,
                                  e->residual_input >= 0 ? in[e->residual_input] : NULL, err);
}

tc_status tc__ref_run_node(const tc__node *node, int64_t opset, const tc__tensor *const *in, tc__tensor *outs,
                           tc__err *err) {
    for (int o = 0; o < node->n_out && o < TC__NODE_MAX_OUT; o++) memset(&outs[o], 0, sizeof outs[o]);
    tc_status st = run_node(node, opset, in, outs, err);
    if (st != TC_STATUS_OK) {
        for (int o = 0; o < node->n_out && o < TC__NODE_MAX_OUT; o++) tc__tensor_free(&outs[o]);
        if (err != NULL && err->msg[0] == '\0') tc__fail(err, st, "%s", tc_status_str(st));
    }
    return st;
}

tc_status tc__ref_eval(void *user, const tc__node *node, const tc__tensor *const *in, tc__tensor *outs, tc__err *err) {
    return tc__ref_run_node(node, *(const int64_t *)user, in, outs, err);
}
