/*
 * convt_geom.h - geometry of an ONNX ConvTranspose node: its attributes
 * (strides, dilations, pads, output_padding, output_shape, auto_pad, group,
 * kernel_shape) validated, and per spatial dim the output size and the begin
 * padding that places input index i, kernel tap k at output i*s + k*d - pad_begin.
 * Shape inference, the reference kernel and the CPU tactics all resolve it here,
 * so they agree on every rule.
 */
#ifndef TC_CORE_CONVT_GEOM_H
#define TC_CORE_CONVT_GEOM_H

#include "core/attr.h"
#include "core/error.h"

typedef struct tc__convt_geom {
    int nsp;                         /* number of spatial dims */
    int64_t group;
    int64_t in[TC_MAX_RANK];         /* input spatial sizes; -1 unknown */
    int64_t kernel[TC_MAX_RANK];     /* from W or kernel_shape; -1 unknown */
    int64_t stride[TC_MAX_RANK];
    int64_t dilation[TC_MAX_RANK];
    int64_t out_pad[TC_MAX_RANK];    /* output_padding */
    int64_t pad_begin[TC_MAX_RANK];  /* < 0 when output_shape asks for more than the full output; 0 when unknown */
    int64_t out[TC_MAX_RANK];        /* output spatial sizes; -1 unknown */
} tc__convt_geom;

/*
 * Validates the attributes of a ConvTranspose node with nsp spatial dims and
 * resolves its geometry. in: the input's spatial sizes, wk: the weight's
 * spatial sizes (either may hold -1 for unknown). Follows the ONNX operator
 * definition: with output_shape (nsp values, or nsp + 2 with N and C first) the
 * total padding full - out is split as auto_pad says (SAME_UPPER: the larger
 * half at the end; otherwise at the begin; a negative total pads nothing and
 * extends the output at the end, as ONNX Runtime does); SAME_*: out = in * stride;
 * VALID: no padding; NOTSET: the pads attribute. full = stride * (in - 1) +
 * output_padding + (kernel - 1) * dilation + 1. Fails naming the attribute.
 */
tc_status tc__convt_geom_resolve(const tc__attrs *a, int nsp, const int64_t *in, const int64_t *wk, tc__convt_geom *g,
                                 tc__err *err);

#endif
