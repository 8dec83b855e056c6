/*
 * attention_f32.h - the FP32 fused attention kernel of the CUDA backend (attention_f32.cu): ONNX Attention as
 * core/attention_geom.h describes it (3-D or 4-D, grouped-query heads, float or boolean mask through broadcast
 * strides, causal, scale, softcap, NaN guard), the scores of a block's query rows held in shared memory.
 */
#ifndef TC_BACKENDS_CUDA_ATTENTION_F32_H
#define TC_BACKENDS_CUDA_ATTENTION_F32_H

#include <stdbool.h>

#include "backends/cuda/cuda_exec.h"
#include "core/attention_geom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Query rows per block (one warp each) and the most dynamic shared memory the kernel is given. */
#define TC__ATTN_ROWS 8
#define TC__ATTN_SMEM_MAX (96 * 1024)
/* The largest V head size (a lane keeps TC__ATTN_MAX_DV / 32 sums in registers). */
#define TC__ATTN_MAX_DV 256

typedef struct tc__cuda_attn_args {
    const void *q, *k, *v; /* float, or FP16 row images where q16 / k16 / v16 */
    const void *mask;      /* float or uint8 (boolean), or NULL */
    void *y;               /* float, or an FP16 row image where y16 */
    bool q16, k16, v16, y16;
    tc__attn_geom g;
} tc__cuda_attn_args;

/* Dynamic shared memory of a launch for head sizes d, dv and KV length l (bytes; above TC__ATTN_SMEM_MAX or SIZE_MAX for
 * dv above TC__ATTN_MAX_DV: not runnable). */
size_t tc__cuda_attn_smem(int64_t d, int64_t dv, int64_t l);

/* Launches on stream (nothing when there is no row). */
cudaError_t tc__cuda_attention_f32(const tc__cuda_attn_args *args, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
