/* quantizable.c - which nodes an INT8 layer can be (see quantizable.h). */
#include "graph/quantizable.h"

#include "core/quant_attr.h"

#include <string.h>

/* Dim d of value v: the initializer's, or the inferred one when literal; 0 when unknown. */
static int64_t dim_of(const tc__graph *g, int32_t v, int d) {
    const tc__tensor *t = g->values[v].init;
    if (t != NULL) return t->dims[d];
    const tc__dim dd = g->values[v].info.shape.dims[d];
    return tc__dim_is_literal(dd) ? dd.value : 0;
}

bool tc__quantizable_layer(const tc__graph *g, const tc__node *n, bool constant_nodes, tc__qlayer *out) {
    if (n->removed || n->n_op_in < 2 || n->in[0] < 0 || n->in[1] < 0) return false;
    const int32_t w = n->in[1], p = g->values[w].producer;
    const bool constant = g->values[w].init != NULL || (constant_nodes && p >= 0 && strcmp(g->nodes[p].op_type, "Constant") == 0);
    if (!constant || g->values[n->in[0]].info.dtype != TC_DTYPE_FLOAT32 || g->values[w].info.dtype != TC_DTYPE_FLOAT32)
        return false;
    const int32_t rank = g->values[w].init ? g->values[w].init->rank : g->values[w].info.shape.rank;
    const bool conv = strcmp(n->op_type, "Conv") == 0, gemm = strcmp(n->op_type, "Gemm") == 0;
    if (conv) {
        if (rank != 4) return false;
        const int64_t group = tc__attr_int(&n->attrs, "group", 1), cout = dim_of(g, w, 0);
        const bool depthwise = group > 1 && group == cout && dim_of(g, w, 1) == 1;
        if (group != 1 && !depthwise) return false;
        *out = (tc__qlayer){n->in[0], cout, dim_of(g, w, 1), dim_of(g, w, 2) * dim_of(g, w, 3), depthwise};
        return true;
    }
    if ((!gemm && strcmp(n->op_type, "MatMul") != 0) || rank != 2 || (gemm && tc__attr_int(&n->attrs, "transA", 0) != 0))
        return false;
    const bool tb = gemm && tc__attr_int(&n->attrs, "transB", 0) != 0;
    *out = (tc__qlayer){n->in[0], dim_of(g, w, tb ? 0 : 1), dim_of(g, w, tb ? 1 : 0), 1, false};
    return true;
}

bool tc__layer_listed(const char *name, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (names[i] != NULL && strcmp(names[i], name) == 0) return true;
    return false;
}

bool tc__weight_on_grid(const tc__graph *g, const tc__node *n, const tc__qlayer *q, double qmax) {
    const tc__tensor *w = g->values[n->in[1]].init;
    if (q->depthwise || w == NULL || w->data == NULL || w->dtype != TC_DTYPE_FLOAT32 || q->cout < 1 || !(qmax >= 1.0))
        return false;
    const int64_t numel = tc__tensor_numel(w);
    if (numel % q->cout != 0) return false;
    const int64_t k = numel / q->cout;
    const bool k_major = strcmp(n->op_type, "Conv") != 0 && !(strcmp(n->op_type, "Gemm") == 0 &&
                                                               tc__attr_int(&n->attrs, "transB", 0) != 0);
    if (tc__weight_grid(w->data, k_major, q->cout, k, 0, q->cout, qmax) >= 0.0) return true; /* per tensor */
    for (int64_t oc = 0; oc < q->cout; oc++) /* per channel */
        if (tc__weight_grid(w->data, k_major, q->cout, k, oc, oc + 1, qmax) < 0.0) return false;
    return true;
}
