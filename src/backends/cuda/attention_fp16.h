/*
 * attention_fp16.h - the FP16 Tensor Core fused attention kernel of the CUDA backend (attention_fp16.cu), for --fp16
 * plans: ONNX Attention as core/attention_geom.h describes it with equal Q/K and V head sizes of 16..128 in steps of
 * 16, without softcap, with the NaN guard only to 0; arguments as the FP32 kernel's (attention_f32.h): Q, K, V and Y each FP32 or an FP16
 * row image.
 */
#ifndef TC_BACKENDS_CUDA_ATTENTION_FP16_H
#define TC_BACKENDS_CUDA_ATTENTION_FP16_H

#include "backends/cuda/attention_f32.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TC__ATTN16_MAX_D 128

/* True when the kernel has an instance for head sizes d (Q, K) and dv (V). */
bool tc__cuda_attn16_shape_ok(int64_t d, int64_t dv);

/* Launches on stream (nothing when there is no row); cudaErrorInvalidValue for what it does not take. */
cudaError_t tc__cuda_attention_fp16(const tc__cuda_attn_args *args, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
