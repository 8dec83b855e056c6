/*
 * matmul_geom.h - the geometry of a MatMul step (NumPy matmul semantics: 1-D promotion, batch broadcasting) with its
 * operands and output seen through the views of fuse_matmul_views (fused_attr.h) and the product's scale: sizes,
 * batch dims and the element strides of each operand, shared by the FP32 MatMul tactics (matmul_node_f32.c) and the
 * BF16 one with both operands at run time (matmul_dyn_bf16_tactic.c).
 */
#ifndef TC_BACKENDS_CPU_MATMUL_GEOM_H
#define TC_BACKENDS_CPU_MATMUL_GEOM_H

#include <stdbool.h>
#include <stddef.h>

#include "core/attr.h"
#include "core/tensor.h"

typedef struct tc__mm_geom {
    size_t m, k, n;
    int nb;
    size_t batch[TC_MAX_RANK], n_batch;
    size_t a_bs[TC_MAX_RANK], b_bs[TC_MAX_RANK], c_bs[TC_MAX_RANK]; /* in elements; 0 = broadcast */
    size_t rs_a, cs_a, rs_b, cs_b, ldc;
    bool views;     /* an operand or the output is read or written through a permutation (fused_attr.h) */
    float alpha;    /* TC__ATTR_MM_ALPHA, 1 when absent */
    bool bias_rows; /* the output's last dim is M (B is 1-D): the epilogue bias is per row */
} tc__mm_geom;

/* The geometry of Y = A.B (alpha: TC__ATTR_MM_ALPHA) through the step's views; false when the shapes do not match,
 * a view is not a permutation, or Y's last dim is not contiguous. */
bool tc__mm_geometry(const tc__attrs *attrs, const tc__tensor *a, const tc__tensor *b, const tc__tensor *y,
                     tc__mm_geom *g);

#endif
