/* half_io.cuh - device loads and stores of one element as float from / to float or FP16 buffers, for kernels that
 * read or write the FP16 row images of engine/row16_chain.c as well as FP32 tensors (templates over the element
 * type). FP16 stores round to nearest even and saturate to +-65504, infinities included (NaN stays), as the FP16
 * casts of fp16_lt.cu do; tc_half_sat_finite keeps infinities (the FP16 NHWC chain's casts). */
#ifndef TC_BACKENDS_CUDA_HALF_IO_CUH
#define TC_BACKENDS_CUDA_HALF_IO_CUH

#include <cuda_fp16.h>

__device__ __forceinline__ float tc_ld(const float *p) { return __ldg(p); }
__device__ __forceinline__ float tc_ld(const __half *p) { return __half2float(__ldg(p)); }

__device__ __forceinline__ __half tc_half_sat(float v) {
    if (v > 65504.0f) v = 65504.0f; /* NaN compares false: kept */
    else if (v < -65504.0f) v = -65504.0f;
    return __float2half_rn(v);
}

/* The same for finite values, but infinities stay infinite (the FP16 NHWC chain's casts: conv_cudnn.cu, maxpool). */
__device__ __forceinline__ __half tc_half_sat_finite(float v) {
    if (v > 65504.0f && v <= 3.402823466e38f) v = 65504.0f;
    if (v < -65504.0f && v >= -3.402823466e38f) v = -65504.0f;
    return __float2half_rn(v);
}

__device__ __forceinline__ void tc_st(float *p, float v) { *p = v; }
__device__ __forceinline__ void tc_st(__half *p, float v) { *p = tc_half_sat(v); }

/* Four consecutive elements as a float4 (p 16-byte aligned for float, 8-byte aligned for FP16). */
__device__ __forceinline__ float4 tc_ld4(const float *p) { return __ldg((const float4 *)p); }
__device__ __forceinline__ float4 tc_ld4(const __half *p) {
    const uint2 u = __ldg((const uint2 *)p);
    const float2 a = __half22float2(*(const __half2 *)&u.x), b = __half22float2(*(const __half2 *)&u.y);
    return make_float4(a.x, a.y, b.x, b.y);
}

#endif
