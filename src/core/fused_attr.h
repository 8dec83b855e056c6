/*
 * fused_attr.h - attributes that fusion passes put on nodes (never read from a model: the importer
 * refuses the "tc." prefix; a plan file's are checked where they are read):
 *   - the Softmax NaN guard (fuse_nan_guard) and its additive mask (fuse_softmax_mask);
 *   - MatMul views and scale (fuse_matmul_views): a MatMul that reads its operands through a
 *     permutation of their dims and writes its output through one, instead of Transpose steps
 *     around it, and multiplies its sums by alpha instead of scalar Mul steps before it.
 */
#ifndef TC_CORE_FUSED_ATTR_H
#define TC_CORE_FUSED_ATTR_H

#include "core/attr.h"
#include "core/error.h"

/* Float attribute of a Softmax: every NaN output becomes this value, as the fused Where(IsNaN(y), value, y)
 * that follows the attention Softmax of exported transformers. */
#define TC__ATTR_NAN_TO "tc.nan_to"

/* Int attribute (1) of a Softmax with two inputs: it normalises input 0 + input 1, input 1 broadcast (NumPy rules,
 * one way) to input 0's shape: the attention's additive mask, Softmax(scores + mask), in one step. */
#define TC__ATTR_SOFTMAX_ADD "tc.softmax_add"

/* Int attribute (1) of an Attention node (merge_qkv): Q, K and V are one 3-D tensor [B, S, (Hq + 2 Hk) * D], each
 * row Q's heads, then K's, then V's (the three inputs name that one value); K and V have Q's length S and head size. */
#define TC__ATTR_QKV_PACKED "tc.qkv_packed"

/* True when a Softmax step adds its input 1 first (TC__ATTR_SOFTMAX_ADD = 1). */
static inline bool tc__softmax_adds(const tc__attrs *a) { return tc__attr_int(a, TC__ATTR_SOFTMAX_ADD, 0) == 1; }

/* Ints attributes of a MatMul: operand A (B) is Transpose(input 0 (1), perm); the output written is
 * Transpose(MatMul result, perm). Float attribute: the product is alpha * A.B. */
#define TC__ATTR_MM_A_PERM "tc.a_perm"
#define TC__ATTR_MM_B_PERM "tc.b_perm"
#define TC__ATTR_MM_Y_PERM "tc.y_perm"
#define TC__ATTR_MM_ALPHA "tc.alpha"

/*
 * Reads the permutation attribute `name` for a tensor of rank `rank` into perm: 0 when absent (perm is the
 * identity), 1 when present and a permutation of 0..rank-1 (rank >= 2), -1 when present and not one.
 */
static inline int tc__mm_perm(const tc__attrs *a, const char *name, int32_t rank, int64_t *perm) {
    for (int32_t i = 0; i < rank && i < TC_MAX_RANK; i++) perm[i] = i;
    if (!tc__attr_has(a, name)) return 0;
    const int64_t *p = NULL;
    if (rank < 2 || rank > TC_MAX_RANK || tc__attr_ints(a, name, &p) != (size_t)rank) return -1;
    bool seen[TC_MAX_RANK] = {false};
    for (int32_t i = 0; i < rank; i++) {
        if (p[i] < 0 || p[i] >= rank || seen[p[i]]) return -1;
        seen[p[i]] = true;
        perm[i] = p[i];
    }
    return 1;
}

/* tc__mm_perm for readers that report: *has = 0 or 1, or INVALID_ARGUMENT naming the attribute. */
static inline tc_status tc__mm_perm_checked(const tc__attrs *a, const char *name, int32_t rank, int64_t *perm, int *has,
                                            tc__err *err) {
    *has = tc__mm_perm(a, name, rank, perm);
    if (*has >= 0) return TC_STATUS_OK;
    return tc__fail(err, TC_STATUS_INVALID_ARGUMENT, "attribute %s is not a permutation of %d dims", name, (int)rank);
}

/* True when a MatMul's attributes ask for any view or scale (tactics that do not read them refuse it). */
static inline bool tc__mm_has_views(const tc__attrs *a) {
    return tc__attr_has(a, TC__ATTR_MM_A_PERM) || tc__attr_has(a, TC__ATTR_MM_B_PERM) ||
           tc__attr_has(a, TC__ATTR_MM_Y_PERM) || tc__attr_has(a, TC__ATTR_MM_ALPHA);
}

#endif
