/*
 * gemm_f32.h - the batched strided FP32 GEMM of the CUDA backend (gemm_f32.cu), for the cuda_matmul_f32 and
 * cuda_gemm_f32 tactics:
 *   Y[b][i][j] = act(alpha * sum_p A[b][i][p] * B[b][p][j] + beta * addend[i][j] + bias[b][i][j] + residual[b][i][j])
 * where every operand is read through element strides (rows, columns, and per batch dim; 0 where it broadcasts), so
 * that transposes and permuted views are strides, not copies. Exact FP32 FMAs (no TF32), one accumulation order per
 * output. The residual has Y's layout (read at Y's offsets).
 */
#ifndef TC_BACKENDS_CUDA_GEMM_F32_H
#define TC_BACKENDS_CUDA_GEMM_F32_H

#include "backends/cuda/cuda_exec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TC__GEMM_MAX_BATCH_RANK TC__CUDA_MAX_RANK

typedef struct tc__cuda_gemm_args {
    const float *a, *b;
    float *y;
    const float *addend;   /* Gemm's C times beta, or NULL */
    const float *bias;     /* or NULL */
    const float *residual; /* Y's layout, or NULL */
    int64_t m, n, k;
    int64_t rs_a, cs_a, rs_b, cs_b, rs_y, cs_y;
    int64_t rs_add, cs_add;   /* addend strides (no batch) */
    int64_t rs_bias, cs_bias; /* bias element strides along rows and columns */
    float alpha, beta;
    int32_t nb;               /* batch dims */
    int64_t n_batch;
    int64_t bdims[TC__GEMM_MAX_BATCH_RANK];
    int64_t a_bs[TC__GEMM_MAX_BATCH_RANK], b_bs[TC__GEMM_MAX_BATCH_RANK], y_bs[TC__GEMM_MAX_BATCH_RANK],
        bias_bs[TC__GEMM_MAX_BATCH_RANK];
    tc__cuda_act act;
} tc__cuda_gemm_args;

/* Launches on stream (nothing when the output is empty); n_sm picks the tile size. Returns the launch error. */
cudaError_t tc__cuda_gemm_f32(const tc__cuda_gemm_args *args, int n_sm, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
