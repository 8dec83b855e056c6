/* conv2d_window.h - the checks the direct 2-D convolution tactics share (FP32 NCHW16c, INT8): a one-group
 * (or depthwise) Conv over float32 X [N, C, H, W], W [C_out, C, KH, KW], Y [N, C_out, OH, OW] and its resolved
 * window. */
#ifndef TC_BACKENDS_CPU_CONV2D_WINDOW_H
#define TC_BACKENDS_CPU_CONV2D_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/window.h"

/* Fills *rw for the Conv with these attributes and shapes; false unless all three are 4-D float32 with dims in
 * [1, max_extent] that agree (channels, batch), there is one group, and the window resolves with strides,
 * dilations and pads at most max_extent. */
bool tc__conv2d_window(const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *w, const tc__tensor *y,
                       int64_t max_extent, tc__window *rw);

/* The same for a depthwise Conv: group = C = C_out, W [C, 1, KH, KW]. */
bool tc__conv2d_window_dw(const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *w, const tc__tensor *y,
                          int64_t max_extent, tc__window *rw);

#endif
