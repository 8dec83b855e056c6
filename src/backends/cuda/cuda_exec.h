/*
 * cuda_exec.h - what CUDA tactics see of the CUDA backend: the execution handle behind tc__kernel_ctx.exec
 * (one non-blocking stream per context), the shape record their launchers take by value, and the mapping of
 * CUDA errors to tailcut statuses. Plain C: included by the tactics' .c files and the kernels' .cu files.
 *
 * The rules for a CUDA tactic's run() (the engine may capture it into a CUDA graph and replay it):
 *   - every tensor in ctx->in / ctx->out, ctx->bias, ctx->residual and ctx->scratch is device memory;
 *     ctx->host_in[i] is the same input in host memory where its value is known before the run (initializers,
 *     shape arithmetic), data NULL otherwise: read attribute-like operands (Clip's min, Slice's starts) there;
 *   - launch on tc__cuda_stream(ctx) only: no synchronisation, no cudaMalloc, no copy from pageable memory, no
 *     host-side wait; report a launch error with tc__cuda_check (cudaGetLastError after the launch);
 *   - the step's epilogue (ctx->epi: bias, residual, activation) is the tactic's to apply: the engine cannot apply
 *     the reference epilogue to device memory, so a CUDA tactic sets TC__TACTIC_FUSES_EPILOGUE, or its supports()
 *     refuses steps whose epilogue is not none;
 *   - a kernel that finds its input data invalid (Gather's index out of range: the reference fails there) never
 *     reads or writes out of bounds and reports it through tc__cuda_report_of(ctx, reason): the backend fails the
 *     run after it, naming the first step that reported (see cuda_report.cuh). A wrong answer is never a success.
 */
#ifndef TC_BACKENDS_CUDA_CUDA_EXEC_H
#define TC_BACKENDS_CUDA_CUDA_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "backends/kernel.h"

#define TC__CUDA_MAX_RANK 8

typedef struct tc__cuda_exec {
    cudaStream_t stream;
    int device;
    int sm;         /* compute capability, major * 10 + minor (90: H100/H200) */
    int n_sm;       /* multiprocessors */
    /* Data errors found on the device: a word of device memory per context, 0 while none. The backend sets
     * err_code before each step's run() (launch index + 1); 0 outside a run (the tuner's timings): then nothing is
     * recorded. */
    unsigned int *err_word;
    unsigned int err_code;
    /* The backend's own state (graphs, events): see backend_cuda.c. */
    void *priv;
} tc__cuda_exec;

/* Why a kernel reported bad data (the error word's top byte). */
typedef enum tc__cuda_reason {
    TC__CUDA_BAD_INDEX = 1, /* an index outside the axis it indexes */
} tc__cuda_reason;

/* Where and what a kernel reports (passed to launchers by value): nothing when word is NULL or code is 0. */
typedef struct tc__cuda_report {
    unsigned int *word;
    unsigned int code; /* reason << 24 | (launch index + 1) */
} tc__cuda_report;

#define TC__CUDA_REPORT_STEP_MASK 0xffffffu

static inline tc__cuda_report tc__cuda_report_of(const tc__kernel_ctx *ctx, tc__cuda_reason reason) {
    const tc__cuda_exec *x = (const tc__cuda_exec *)ctx->exec;
    tc__cuda_report r = {0, 0};
    if (x != NULL && x->err_word != NULL && x->err_code != 0 && x->err_code <= TC__CUDA_REPORT_STEP_MASK) {
        r.word = x->err_word;
        r.code = (unsigned int)reason << 24 | x->err_code;
    }
    return r;
}

/* A tensor's shape for a kernel launch (passed by value): dims and row-major strides in elements. */
typedef struct tc__cuda_shape {
    int32_t rank;
    int64_t dims[TC__CUDA_MAX_RANK];
    int64_t strides[TC__CUDA_MAX_RANK];
} tc__cuda_shape;

/* The activation part of an epilogue for kernels (core/epilogue.h's act, alpha, beta). */
typedef struct tc__cuda_act {
    int32_t act;
    float alpha, beta;
} tc__cuda_act;

static inline cudaStream_t tc__cuda_stream(const tc__kernel_ctx *ctx) {
    return ctx->exec ? ((const tc__cuda_exec *)ctx->exec)->stream : (cudaStream_t)0;
}

#ifdef __cplusplus
}
#endif

/* C-only helpers (the .cu files have their own). */
#ifndef __CUDACC__
#include "core/error.h"
/* TC_STATUS_OK when e is cudaSuccess, else a failure naming what (a kernel launch, a copy) and CUDA's message. */
tc_status tc__cuda_fail(cudaError_t e, tc__err *err, const char *what);
/* After a launch: the launch's error (cudaGetLastError) as a status. */
static inline tc_status tc__cuda_check(const tc__kernel_ctx *ctx, const char *what) {
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? TC_STATUS_OK : tc__cuda_fail(e, ctx->err, what);
}
/* The shape record of t (rank <= TC__CUDA_MAX_RANK; false otherwise). */
bool tc__cuda_shape_of(const tc__tensor *t, tc__cuda_shape *s);
/* The epilogue's activation for a kernel (TC__ACT_NONE when e is NULL). */
tc__cuda_act tc__cuda_act_of(const tc__epilogue *e);
#endif

#endif
