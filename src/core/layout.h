/*
 * layout.h - the blocked activation layouts NCHW16c / NCHW8c and how a node says which of its tensors use them.
 *
 * A 4-D float tensor with logical shape [N, C, H, W] may be stored as NCHW<B>c, B the block (16 on
 * AVX-512, 8 on AVX2), in CB = ceil(C / B) channel blocks: element (n, c, h, w) lives at
 * ((((n * CB + c/B) * H + h) * W + w) * B + c % B). When C % B != 0 the last block has B - C % B
 * padding lanes, which hold zeros (an invariant every blocked kernel keeps: one that writes a blocked
 * tensor writes zeros there whatever its epilogue makes of 0), and the tensor is N * CB * B * H * W
 * elements (tc__nchwc_elems): the engine sizes a blocked value's buffer so (its nbytes), while its
 * shape stays the logical one, so shape inference is unchanged. The layout pass
 * (src/passes/layout_nchw16c.c) decides which values are blocked and records it on the nodes that
 * read or write them, in two integer attributes:
 *
 *   tc.layout_in   bit i set: node input in[i] (op inputs and epilogue operands alike) is NCHW16c
 *   tc.layout_out  1: output 0 is NCHW16c
 *   tc.layout_block  the block B of every blocked tensor of the node when it is not 16 (8: NCHW8c);
 *                  absent for 16, so plans in NCHW16c keep the bytes they had before NCHW8c existed
 *
 * A node carrying either attribute runs only tactics flagged TC__TACTIC_BLOCKED or
 * TC__TACTIC_ANY_LAYOUT (never the reference kernel, which knows only NCHW). A reorder back to
 * NCHW is an Identity node with tc.layout_in = 1 and no tc.layout_out. The "tc." prefix is
 * reserved: the ONNX importer refuses attributes that use it.
 */
#ifndef TC_CORE_LAYOUT_H
#define TC_CORE_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/attr.h"

#define TC__LAYOUT_BLOCK 16
#define TC__LAYOUT_BLOCK_AVX2 8
#define TC__ATTR_LAYOUT_IN "tc.layout_in"
#define TC__ATTR_LAYOUT_OUT "tc.layout_out"
#define TC__ATTR_LAYOUT_BLOCK "tc.layout_block"
#define TC__ATTR_RESERVED_PREFIX "tc."

/* True when node input i is NCHW16c according to the node's attributes. */
static inline bool tc__layout_in_blocked(const tc__attrs *a, int i) {
    return i >= 0 && i < 32 && ((uint64_t)tc__attr_int(a, TC__ATTR_LAYOUT_IN, 0) >> i & 1u);
}
/* True when output 0 is NCHW16c. */
static inline bool tc__layout_out_blocked(const tc__attrs *a) { return tc__attr_int(a, TC__ATTR_LAYOUT_OUT, 0) == 1; }
/* True when the node has any blocked tensor. */
static inline bool tc__layout_any_blocked(const tc__attrs *a) {
    return tc__attr_int(a, TC__ATTR_LAYOUT_IN, 0) != 0 || tc__layout_out_blocked(a);
}
/* The block of the node's blocked tensors: tc.layout_block, 16 when absent. */
static inline int64_t tc__layout_block(const tc__attrs *a) {
    return tc__attr_int(a, TC__ATTR_LAYOUT_BLOCK, TC__LAYOUT_BLOCK);
}
/* C rounded up to a multiple of block (> 0): the channels, padding lanes included, of an NCHW<block>c tensor. */
static inline size_t tc__nchwc_channels(size_t block, size_t c_total) {
    return (c_total + block - 1) / block * block;
}
/* Offset in elements of logical (n, c, h, w) in an NCHW<block>c tensor of C channels and H x W pixels. */
static inline size_t tc__nchwc_offset(size_t block, size_t c_total, size_t h_total, size_t w_total, size_t n, size_t c,
                                      size_t h, size_t w) {
    return ((((n * ((c_total + block - 1) / block) + c / block) * h_total + h) * w_total + w) * block) + c % block;
}
/* Elements of an NCHW<block>c tensor of logical dims [N, C, H, W] (padding lanes included); -1 on overflow or
 * a negative dim. */
static inline int64_t tc__nchwc_elems(int64_t block, const int64_t dims[4]) {
    if (block <= 0 || dims[0] < 0 || dims[1] < 0 || dims[2] < 0 || dims[3] < 0 || dims[1] > INT64_MAX - block) return -1;
    int64_t n = (dims[1] + block - 1) / block * block;
    for (int i = 0; i < 4; i++) {
        if (i == 1) continue;
        if (dims[i] != 0 && n > INT64_MAX / dims[i]) return -1;
        n *= dims[i];
    }
    return n;
}
/* Offset in elements of logical (n, c, h, w) in an NCHW16c tensor of C channels and H x W pixels. */
static inline size_t tc__nchw16c_offset(size_t c_total, size_t h_total, size_t w_total, size_t n, size_t c, size_t h,
                                        size_t w) {
    return tc__nchwc_offset(TC__LAYOUT_BLOCK, c_total, h_total, w_total, n, c, h, w);
}

#endif
