/* conv2d_window.c - the checks the direct 2-D convolution tactics share (see conv2d_window.h). */
#include "backends/cpu/conv2d_window.h"

static bool is_f32_4d(const tc__tensor *t) { return t != NULL && t->dtype == TC_DTYPE_FLOAT32 && t->rank == 4; }

/* One group (depthwise false: W [C_out, C, KH, KW]) or a depthwise Conv (group = C = C_out, W [C, 1, KH, KW]). */
static bool window_of(const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *w, const tc__tensor *y,
                      int64_t max_extent, bool depthwise, tc__window *rw) {
    if (!is_f32_4d(x) || !is_f32_4d(w) || !is_f32_4d(y)) return false;
    for (int i = 0; i < 4; i++)
        if (x->dims[i] < 1 || w->dims[i] < 1 || y->dims[i] < 1 || x->dims[i] > max_extent || w->dims[i] > max_extent ||
            y->dims[i] > max_extent)
            return false;
    const int64_t group = tc__attr_int(attrs, "group", 1);
    if (depthwise ? group != x->dims[1] || w->dims[1] != 1 || w->dims[0] != x->dims[1] : group != 1 || x->dims[1] != w->dims[1])
        return false;
    if (y->dims[1] != w->dims[0] || y->dims[0] != x->dims[0]) return false;
    tc__err err = {0};
    const tc__kernel_ctx kctx = {.attrs = attrs, .err = &err};
    if (tc__window_resolve(&kctx, x, y, w->dims + 2, rw) != TC_STATUS_OK) return false;
    for (int d = 0; d < 2; d++)
        if (rw->stride[d] > max_extent || rw->dilation[d] > max_extent || rw->pad_begin[d] > max_extent ||
            rw->pad_end[d] > max_extent)
            return false;
    return true;
}

bool tc__conv2d_window(const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *w, const tc__tensor *y,
                       int64_t max_extent, tc__window *rw) {
    return window_of(attrs, x, w, y, max_extent, false, rw);
}

bool tc__conv2d_window_dw(const tc__attrs *attrs, const tc__tensor *x, const tc__tensor *w, const tc__tensor *y,
                          int64_t max_extent, tc__window *rw) {
    return window_of(attrs, x, w, y, max_extent, true, rw);
}
