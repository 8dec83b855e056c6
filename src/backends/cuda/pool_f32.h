/*
 * pool_f32.h - the FP32 pooling kernels (pool_f32.cu) of the cuda_maxpool_f32, cuda_avgpool_f32 and
 * cuda_globalavgpool_f32 tactics: windowed max / average over 2-D planes (1-D as height 1) with the reference's
 * window and padding semantics, and the mean of each whole plane; all with the fused epilogue.
 */
#ifndef TC_BACKENDS_CUDA_POOL_F32_H
#define TC_BACKENDS_CUDA_POOL_F32_H

#include "backends/cuda/cnn_epi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* planes = N * C planes of h x w_in in, oh x ow out; windows of kh x kw taps dh, dw apart starting at
 * (oh * sh - ph, ow * sw - pw); ph_end, pw_end: the padding after (what AveragePool counts with count_include_pad).
 * Max skips NaN inputs (NaN only when every input of the window is NaN) and gives -inf for a window of padding only;
 * Average divides the sum of the window's inputs by their count (count_include_pad: by the taps inside the padded
 * input), 0 / NaN for a window of padding only as the reference. */
typedef struct tc__cuda_pool2d {
    const float *x;
    float *y;
    int64_t planes, h, w_in, oh, ow;
    int64_t kh, kw, sh, sw, ph, pw, ph_end, pw_end, dh, dw;
    int32_t is_max, count_include_pad;
    tc__cuda_epi epi;
} tc__cuda_pool2d;

cudaError_t tc__cuda_pool2d_f32(const tc__cuda_pool2d *p, cudaStream_t s);

/* y[i] = epi(mean of x[i * isp .. (i + 1) * isp), i) for i < planes (sums in double; NaN when isp is 0). */
cudaError_t tc__cuda_global_avgpool_f32(const float *x, float *y, int64_t planes, int64_t isp, tc__cuda_epi epi,
                                        cudaStream_t s);

#ifdef __cplusplus
}
#endif

#ifndef __CUDACC__
/* The launch record of a MaxPool (is_max) or AveragePool step with these attributes and float32 tensors (pointers
 * and epilogue left empty); false when these kernels do not compute it (pool_f32_tactic.c). */
bool tc__cuda_pool_geom(const tc__attrs *attrs, bool is_max, const tc__tensor *x, const tc__tensor *y,
                        tc__cuda_pool2d *p);
#endif

#endif
