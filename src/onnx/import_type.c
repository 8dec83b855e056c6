/*
 * import_type.c - converts a declared ValueInfoProto type (graph inputs and outputs) into a
 * tc__vinfo: element type plus a shape whose dims are known sizes, named symbols or unknown.
 */
#include <string.h>

#include "onnx/import_internal.h"

static tc_status import_shape(tc__graph *g, const Onnx__TensorShapeProto *sp, const char *what, tc__shape *out,
                              tc__err *err) {
    if (sp == NULL) {
        out->rank = TC__RANK_UNKNOWN; /* no shape declared: rank unknown */
        return TC_STATUS_OK;
    }
    if (sp->n_dim > TC_MAX_RANK)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "%s has rank %zu, above the maximum of %d", what, sp->n_dim,
                        TC_MAX_RANK);
    out->rank = (int32_t)sp->n_dim;
    for (size_t i = 0; i < sp->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = sp->dim[i];
        out->dims[i] = tc__dim_unknown();
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            /* Some exporters write -1 for a dynamic dim: treat any negative value as unknown. */
            if (d->dim_value >= 0) out->dims[i] = tc__dim_known(d->dim_value);
        } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param != NULL &&
                   d->dim_param[0] != '\0' && strcmp(d->dim_param, "?") != 0) {
            /* "?" (as some exporters write an unknown dim) names no size: two "?" dims need not be equal. */
            int32_t sym = tc__graph_symbol(g, d->dim_param);
            if (sym < 0)
                return tc__fail(err, TC_STATUS_OUT_OF_MEMORY, "%s: out of memory adding symbol '%s'", what,
                                d->dim_param);
            out->dims[i].sym = sym;
        }
    }
    return TC_STATUS_OK;
}

tc_status tc__onnx_type_import(tc__graph *g, const Onnx__TypeProto *tp, const char *what, tc__vinfo *info,
                               tc__err *err) {
    if (tp == NULL) return TC_STATUS_OK; /* no declared type: stays unknown */
    const char *kind = NULL;
    switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE__NOT_SET: return TC_STATUS_OK;
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE: break;
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: kind = "a sequence"; break;
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE: kind = "a map"; break;
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: kind = "an optional"; break;
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE: kind = "a sparse tensor"; break;
    default: kind = "of an unknown kind"; break;
    }
    if (kind != NULL)
        return tc__fail(err, TC_STATUS_UNSUPPORTED, "%s is %s; tailcut supports only dense tensors", what, kind);
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    if (tt == NULL) return TC_STATUS_OK;
    if (tt->has_elem_type) {
        tc_status st = tc__onnx_dtype(tt->elem_type, what, &info->dtype, err);
        if (st != TC_STATUS_OK) return st;
    }
    return import_shape(g, tt->shape, what, &info->shape, err);
}
