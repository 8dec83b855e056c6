/*
 * lowp_layer.h - what the reduced-precision Conv/MatMul/Gemm tactics (INT8: qconv_u8s8.h, FP16 and
 * BF16: hconv.h) share: the layer's shape as one convolution (a MatMul or Gemm is the 1x1 case on an
 * image of one row whose pixels are A's rows), the checks of a step they take (constant weight, bias,
 * fusable epilogue, layouts), and the step description of a kernel context at run time.
 */
#ifndef TC_BACKENDS_CPU_LOWP_LAYER_H
#define TC_BACKENDS_CPU_LOWP_LAYER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/cpu/vact_f32.h"
#include "backends/tactic.h"

/* Memory layouts of X and Y. */
typedef enum tc__lowp_layout {
    TC__LOWP_NCHW = 0,    /* [N][C][H][W] */
    TC__LOWP_NCHW16C = 1, /* core/layout.h (C % 16 == 0) */
    TC__LOWP_ROWS = 2,    /* channels last: [pixels][C] (MatMul/Gemm rows) */
} tc__lowp_layout;

/* One convolution (sizes of one image) and the padded channels-last image its input is copied into. */
typedef struct tc__lowp_shape {
    size_t batch, cin, cout;
    size_t ih, iw, oh, ow;
    size_t kh, kw, sh, sw, dh, dw;
    size_t pt, pl;                 /* top and left padding */
    size_t hp, wp;                 /* rows and columns of the padded image */
    uint8_t in_layout, out_layout; /* tc__lowp_layout */
} tc__lowp_shape;

/*
 * The shape of step d (Conv with one group, MatMul A[..., M, K] x B[K, N], Gemm without transA and alpha
 * 1) with X and Y in the layouts the node's tc.layout_* attributes give; false when it is not such a
 * layer (dtypes, ranks, attributes, extents beyond 2^24, more than 2^31 elements).
 */
bool tc__lowp_shape_of(const tc__step_desc *d, tc__lowp_shape *s);

/* The same for a depthwise Conv (group = C = C_out, W [C, 1, KH, KW]): cin = cout = C; false for any other step. */
bool tc__lowp_dw_shape_of(const tc__step_desc *d, tc__lowp_shape *s);

/* True when the constant weight is k-major ([K][N]: MatMul, Gemm without transB) rather than oc-major. */
bool tc__lowp_weight_k_major(const tc__step_desc *d);

/* The rest of what a tactic of this family needs of step d with shape s: a constant weight with data, a
 * float32 bias of cout values, an epilogue it fuses, and X/Y/residual layouts (blocked: the NCHW16c
 * Conv tactic; otherwise no blocked tensor). */
bool tc__lowp_step_ok(const tc__step_desc *d, const tc__lowp_shape *s, bool blocked);

/* The bias the step adds per output channel (Conv's B, Gemm's C, a fused bias over the last dim), or
 * NULL; checked to have cout float32 values. */
const tc__tensor *tc__lowp_bias(const tc__kernel_ctx *ctx, size_t cout);

/* What a reduced-precision run needs of its kernel context: X, W and Y (with data), and its fused epilogue's bias
 * (NULL when none), residual (NULL when none) and activation. */
typedef struct tc__lowp_io {
    const void *x, *w;
    void *y;
    const float *bias, *res;
    tc__vact act;
} tc__lowp_io;

/* Fills io for a layer of cout output channels; an error (on ctx->err) when a tensor has no data or the
 * residual does not match Y. */
tc_status tc__lowp_io_of(const tc__kernel_ctx *ctx, size_t cout, tc__lowp_io *io);

/* The step description of ctx (the op's own inputs; the epilogue's operands are ctx's). Storage for the
 * arrays is the caller's. False when the op's inputs are not 2 or 3 or there is no output. */
bool tc__lowp_ctx_desc(const tc__kernel_ctx *ctx, const tc__tensor *in[3], bool in_const[3], const tc__tensor *out[1],
                       tc__epilogue *none, tc__step_desc *d);

/* The reduced-precision chain's padded image of a step (core/quant_attr.h): [N][hp][wp][cp] values. */
typedef struct tc__lowp_image {
    size_t hp, wp, cp, pt, pl;
} tc__lowp_image;

/*
 * Reads the output-image attribute attr of step d: ints [Hp, Wp, Cp, pad top, pad left] and n_extra more
 * (into extra), each in [0, 2^24]. Returns 0 when absent; 1 when it fits an output of batch images of
 * oh x ow pixels and cout channels (Cp a multiple of align and >= cout, the interior inside the image, fewer
 * than 2^31 values of elem bytes, within the FP32 output's bytes); -1 otherwise.
 */
int tc__lowp_out_image(const tc__step_desc *d, const char *attr, int n_extra, size_t align, size_t elem, size_t batch,
                       size_t oh, size_t ow, size_t cout, tc__lowp_image *img, int64_t *extra);

/* True when an input image of batch x hp x wp x cp values of elem bytes fits in the FP32 input's bytes. */
bool tc__lowp_in_image_fits(const tc__step_desc *d, size_t batch, size_t hp, size_t wp, size_t cp, size_t elem);

#endif
