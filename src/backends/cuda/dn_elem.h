/*
 * dn_elem.h - the elementwise and reduction kernels of the dense CUDA tactics (dn_elem.cu): Cast, the comparisons
 * and logic ops (bool outputs), Not, IsNaN, Pow and ReduceMean. Broadcasting ops take a tc__dn_walk (dn_common.h).
 */
#ifndef TC_BACKENDS_CUDA_DN_ELEM_H
#define TC_BACKENDS_CUDA_DN_ELEM_H

#include "backends/cuda/dn_common.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { TC__DN_CMP_EQ = 0, TC__DN_CMP_LT, TC__DN_CMP_GT, TC__DN_LOGIC_AND, TC__DN_LOGIC_OR };

/* y = Cast(x) for n elements between float32, float16, int64, int32, int8, uint8 and bool (tc_dtype values), with
 * the reference's rules (where_cast.c). Same dtypes: a device copy. */
cudaError_t tc__cuda_dn_cast(const void *x, int32_t src_dtype, void *y, int32_t dst_dtype, int64_t n,
                             cudaStream_t stream);
/* y (bool) = a op b through w's two inputs; op TC__DN_CMP_* on float32 / int64 / int32 (dtype), TC__DN_LOGIC_* on
 * bool. */
cudaError_t tc__cuda_dn_binary_bool(const tc__dn_walk *w, const void *a, const void *b, int32_t dtype, int op,
                                    uint8_t *y, cudaStream_t stream);
/* y = !x (bool), n elements. */
cudaError_t tc__cuda_dn_not(const uint8_t *x, uint8_t *y, int64_t n, cudaStream_t stream);
/* y = isnan(x) for float32 or float16 x, n elements. */
cudaError_t tc__cuda_dn_isnan(const void *x, int32_t dtype, uint8_t *y, int64_t n, cudaStream_t stream);
/* y = (float)pow((double)a, (double)b) through w's two inputs; a float32, b float32 / int32 / int64 (b_dtype). */
cudaError_t tc__cuda_dn_pow_f32(const tc__dn_walk *w, const float *a, const void *b, int32_t b_dtype, float *y,
                                cudaStream_t stream);

typedef struct tc__cuda_reduce_args {
    const float *x;
    float *y;
    int64_t n_out, count;              /* outputs; elements reduced into each */
    int32_t krank, rrank;              /* kept and reduced dims (collapsed, >= 1 each) */
    int64_t kdims[TC__CUDA_MAX_RANK], kst[TC__CUDA_MAX_RANK];
    int64_t rdims[TC__CUDA_MAX_RANK], rst[TC__CUDA_MAX_RANK];
} tc__cuda_reduce_args;

/* y[o] = mean of the count elements of x reduced into output o (double sums; an empty mean is NaN). */
cudaError_t tc__cuda_dn_reducemean_f32(const tc__cuda_reduce_args *args, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
