/*
 * layout.h - the blocked activation layouts NCHW16c / NCHW8c and how a node says which of its tensors use them.
 *
 * A 4-D float tensor with logical shape [N, C, H, W] and C % B == 0 may be stored as NCHW<B>c, B the
 * block (16 on AVX-512, 8 on AVX2): element (n, c, h, w) lives at
 * ((((n * C/B + c/B) * H + h) * W + w) * B + c % B). It has the
 * same byte size as NCHW, so shapes, shape inference and the memory plan are unchanged; only the
 * order of the bytes differs. The layout pass (src/passes/layout_nchw16c.c) decides which values
 * are blocked and records it on the nodes that read or write them, in two integer attributes:
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
/* Offset in elements of logical (n, c, h, w) in an NCHW<block>c tensor of C channels and H x W pixels. */
static inline size_t tc__nchwc_offset(size_t block, size_t c_total, size_t h_total, size_t w_total, size_t n, size_t c,
                                      size_t h, size_t w) {
    return ((((n * (c_total / block) + c / block) * h_total + h) * w_total + w) * block) + c % block;
}
/* Offset in elements of logical (n, c, h, w) in an NCHW16c tensor of C channels and H x W pixels. */
static inline size_t tc__nchw16c_offset(size_t c_total, size_t h_total, size_t w_total, size_t n, size_t c, size_t h,
                                        size_t w) {
    return tc__nchwc_offset(TC__LAYOUT_BLOCK, c_total, h_total, w_total, n, c, h, w);
}

#endif
