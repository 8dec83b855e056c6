/*
 * dn_common.h - shared pieces of the dense / normalisation / indexing CUDA tactics (the dn_* files): the strided
 * walk a kernel takes by value (an output of `rank` dims and up to three inputs with their element strides, 0 where
 * an input broadcasts, negative for Slice's reversed steps) and the host helpers that build and collapse it, and the
 * epilogue check of the tactics that fuse one. Plain C: included by the tactics' .c files and the kernels' .cu files.
 */
#ifndef TC_BACKENDS_CUDA_DN_COMMON_H
#define TC_BACKENDS_CUDA_DN_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/cuda/cuda_exec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TC__DN_MAX_IN 3

/* out[o] = f(in_k[base[k] + sum_d c_d * st[k][d]]) for o's multi-index c over dims (row-major). */
typedef struct tc__dn_walk {
    int32_t rank;                               /* >= 1 after collapsing (a scalar becomes one dim of 1) */
    int32_t n_in;
    int64_t numel;                              /* elements of the output */
    int64_t dims[TC__CUDA_MAX_RANK];
    int64_t st[TC__DN_MAX_IN][TC__CUDA_MAX_RANK];
    int64_t base[TC__DN_MAX_IN];
} tc__dn_walk;

#ifdef __cplusplus
}
#endif

#ifndef __CUDACC__
#include "backends/tactic.h"

/* The walk of an output of shape (rank, dims) over n_in inputs broadcast to it (NumPy rules, one way); false when
 * an input does not broadcast or the rank is above TC__CUDA_MAX_RANK. Collapsed (dims of 1 dropped, dims that every
 * input walks contiguously merged). */
bool tc__dn_walk_bcast(int32_t rank, const int64_t *dims, int n_in, const tc__tensor *const *in, tc__dn_walk *w);
/* Drops dims of 1 and merges adjacent dims that every input walks as one (st[d] == st[d+1] * dims[d+1]). */
void tc__dn_walk_collapse(tc__dn_walk *w);
/* True when the step's epilogue (activation, bias over the output's last dim, same-shape residual) is one a dn
 * kernel applies (float32 operands; the activations of cuda_act.cuh). */
bool tc__dn_epilogue_ok(const tc__step_desc *d);
/* True when input i of the step is known at build time (constant, data present). */
static inline bool tc__dn_known(const tc__step_desc *d, int i) {
    return i < d->n_in && d->in[i] != NULL && d->in_const != NULL && d->in_const[i] && d->in[i]->data != NULL;
}
/* Input i in host memory at run time (ctx->host_in, else ctx->in on a host-memory caller), or NULL when unknown. */
static inline const tc__tensor *tc__dn_host_in(const tc__kernel_ctx *ctx, int i) {
    if (i >= ctx->n_in) return NULL;
    const tc__tensor *t = ctx->host_in != NULL ? ctx->host_in[i] : NULL;
    if (t == NULL || (t->data == NULL && tc__tensor_numel(t) != 0)) return NULL;
    return t;
}
/* Bytes of one element (1, 2, 4 or 8), 0 for a dtype the byte kernels do not move. */
static inline int tc__dn_elem_size(tc_dtype dt) {
    const size_t es = tc_dtype_size(dt);
    return es == 1 || es == 2 || es == 4 || es == 8 ? (int)es : 0;
}
#endif

#endif
