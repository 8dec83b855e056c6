/*
 * attention_f32.h - the FP32 fused attention kernel of the CUDA backend (attention_f32.cu): ONNX Attention as
 * core/attention_geom.h describes it (3-D or 4-D, grouped-query heads, float or boolean mask through broadcast
 * strides, causal, scale, softcap, NaN guard), the scores of a block's query rows held in shared memory.
 */
#ifndef TC_BACKENDS_CUDA_ATTENTION_F32_H
#define TC_BACKENDS_CUDA_ATTENTION_F32_H

#include "backends/cuda/cuda_exec.h"
#include "core/attention_geom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Query rows per block (one warp each) and the most dynamic shared memory the kernel is given. */
#define TC__ATTN_ROWS 8
#define TC__ATTN_SMEM_MAX (96 * 1024)

typedef struct tc__cuda_attn_args {
    const float *q, *k, *v;
    const void *mask; /* float or uint8 (boolean), or NULL */
    float *y;
    tc__attn_geom g;
} tc__cuda_attn_args;

/* Dynamic shared memory of a launch for head size d and KV length l (bytes; above TC__ATTN_SMEM_MAX: not runnable). */
size_t tc__cuda_attn_smem(int64_t d, int64_t l);

/* Launches on stream (nothing when there is no row). */
cudaError_t tc__cuda_attention_f32(const tc__cuda_attn_args *args, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
