/* cuda_act.cuh - the epilogue activations (core/epilogue.h) as device code, shared by the CUDA kernels; the same
 * formulas as the reference epilogue (backends/epilogue.c). */
#ifndef TC_BACKENDS_CUDA_CUDA_ACT_CUH
#define TC_BACKENDS_CUDA_CUDA_ACT_CUH

#include "backends/cuda/cuda_exec.h"
#include "core/epilogue.h"

__device__ __forceinline__ float tc_cuda_act(float x, tc__cuda_act a) {
    switch (a.act) {
    case TC__ACT_NONE: return x;
    case TC__ACT_RELU: return x > 0.0f ? x : 0.0f;
    case TC__ACT_CLIP: return fminf(fmaxf(x, a.alpha), a.beta);
    case TC__ACT_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case TC__ACT_SILU: return x / (1.0f + expf(-x));
    case TC__ACT_HARDSWISH: return x * fminf(fmaxf(x / 6.0f + 0.5f, 0.0f), 1.0f);
    case TC__ACT_HARDSIGMOID: return fminf(fmaxf(a.alpha * x + a.beta, 0.0f), 1.0f);
    case TC__ACT_GELU_ERF: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case TC__ACT_GELU_TANH: return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    case TC__ACT_LEAKY_RELU: return x >= 0.0f ? x : a.alpha * x;
    case TC__ACT_TANH: return tanhf(x);
    default: return __int_as_float(0x7fc00000); /* NaN: never a silent wrong value (supports() refuses the rest) */
    }
}

#endif
