/* mma_ptx.cuh - the inline PTX of the FP16 Tensor Core kernels (attention_fp16.cu, igemm_conv_fp16.cu): mma.sync
 * m16n8k16 with FP32 sums, ldmatrix of four 8x8 FP16 matrices (plain and transposed), cp.async 16-byte copies into
 * shared memory (also with zero fill) and their commit / wait. */
#ifndef TC_BACKENDS_CUDA_MMA_PTX_CUH
#define TC_BACKENDS_CUDA_MMA_PTX_CUH

#include <cuda_fp16.h>
#include <stdint.h>

__device__ __forceinline__ uint32_t tc_smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* c += a.b: a the 16x16 A fragment (row), b0 / b1 the 16x8 B fragment (col), FP16 operands, FP32 sums. */
__device__ __forceinline__ void tc_mma16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* Four 8x8 matrices from shared memory: lanes 8i .. 8i + 7 give the 16-byte row addresses of matrix i. */
__device__ __forceinline__ void tc_ldsm_x4(uint32_t (&r)[4], const __half *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(tc_smem_addr(p)));
}

/* The same, transposed. */
__device__ __forceinline__ void tc_ldsm_x4_t(uint32_t (&r)[4], const __half *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(tc_smem_addr(p)));
}

/* 16 bytes from global src to shared dst (both 16-byte aligned), bypassing L1. */
__device__ __forceinline__ void tc_cp_async16(void *dst, const void *src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(tc_smem_addr(dst)), "l"(src));
}

/* The same, or 16 zero bytes when !valid (src-size 0: nothing is read; src must still be a valid address). */
__device__ __forceinline__ void tc_cp_async16z(void *dst, const void *src, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(tc_smem_addr(dst)), "l"(src),
                 "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void tc_cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
/* Waits until at most N of this thread's committed groups are pending. */
template <int N> __device__ __forceinline__ void tc_cp_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

#endif
