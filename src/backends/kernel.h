/*
 * kernel.h - the kernel contract every backend implements: what a kernel (a tactic's run(), or a
 * reference kernel) receives for one step, and the scratch memory it may use. Below tactics and
 * the engine; depends only on core types.
 */
#ifndef TC_BACKENDS_KERNEL_H
#define TC_BACKENDS_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/attr.h"
#include "core/epilogue.h"
#include "core/error.h"
#include "core/tensor.h"

/* Preallocated scratch memory a context lends its kernels (bump allocation, reset after each step). */
typedef struct tc__scratch {
    unsigned char *base;
    size_t cap, used;
} tc__scratch;

typedef struct tc__kernel_ctx {
    const char *node_name;
    const char *op_type;
    int64_t opset;
    const tc__attrs *attrs;
    int n_in;
    const tc__tensor *const *in; /* in[i] is NULL for an absent optional input */
    int n_out;
    tc__tensor *const *out;      /* dtype/rank/dims set by shape inference and data allocated
                                    (zeroed) by the executor; out[i] NULL for an absent output */
    tc__err *err;
    tc__scratch *scratch;        /* NULL: kernels may malloc (reference executor); else they must use it */
    /* For fast tactics that fuse the epilogue (y = act(op + bias + residual)); NULL/none otherwise. */
    const tc__epilogue *epi;
    const tc__tensor *bias;      /* 1-D over the output's last dim, or NULL */
    const tc__tensor *residual;  /* same shape as out[0], or NULL */
    /* The backend's execution handle, owned by the context: on the CPU a tc__pool_t (NULL: the calling
     * thread only); a stream on a GPU backend. Opaque to the engine. */
    void *exec;
    /* The tactic's configuration chosen by the tuner for this step and profile (the plan's parameter blob,
     * tc__tactic.config_bytes of them), or NULL for tactics without configurations. */
    const void *config;
    /* Per-context state of the tactic (tc__tactic.state_create), or NULL. */
    void *state;
    /* On a backend whose kernels read device memory (tc__backend.mem == TC__MEM_DEVICE): the same n_in inputs in
     * host memory, data set where the value is known before the run (initializers, shape arithmetic) and NULL
     * otherwise, for operands a kernel reads as parameters (Clip's bounds, Slice's starts). NULL on host backends
     * (read in[] there). */
    const tc__tensor *const *host_in;
} tc__kernel_ctx;

/* A kernel: a tactic's run() or a reference kernel. */
typedef tc_status (*tc__kernel_fn)(const tc__kernel_ctx *ctx);

/*
 * Scratch memory for a kernel: from ctx->scratch when the caller lent one (64-byte aligned,
 * NULL when it does not fit: fail with TC_STATUS_OUT_OF_MEMORY), else from malloc.
 * Release with tc__kernel_free in reverse order of allocation.
 */
void *tc__kernel_alloc(const tc__kernel_ctx *ctx, size_t bytes);
void tc__kernel_free(const tc__kernel_ctx *ctx, void *p);

#endif
