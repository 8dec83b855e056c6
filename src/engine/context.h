/*
 * context.h - the internal shape of an execution context, shared by context.c (create, shapes, run) and
 * context_keep.c (keeping every step's output readable after a run, tc_context_keep_tensors).
 */
#ifndef TC_ENGINE_CONTEXT_H
#define TC_ENGINE_CONTEXT_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"

#define TC__CTX_MAX_IN 64  /* inputs of one step */
#define TC__CTX_MAX_OUT 16 /* outputs of one step */

/* Keep-tensors mode: a second arena in which no activation shares bytes with another. */
typedef struct tc__keep {
    unsigned char *arena;  /* every activation at offset[v] until the end of the run */
    uint64_t *offset;      /* per value: offset in arena, or TC__NOT_IN_ARENA */
    unsigned char *plain;  /* NCHW copies of the values stored NCHW16c, made by tc_context_tensor */
    uint64_t *plain_off;   /* per value: offset in plain, or TC__NOT_IN_ARENA when not blocked */
} tc__keep;

/* What only a device backend's context has (context_device.c). */
typedef struct tc__ctx_device {
    unsigned char *arena;        /* device memory at the profile's offsets */
    tc__scratch scratch;         /* device scratch of the kernels */
    tc__tensor *tensors;         /* per value: shapes as c->tensors, device addresses */
    tc__tensor *hview;           /* per value: shapes, host data of known values only (tc__kernel_ctx.host_in) */
    const tc__tensor **hins;     /* per step: TC__CTX_MAX_IN host-view input pointers */
    void **in_slot;              /* per graph input: device memory for its max shape */
    void **in_pinned;            /* per graph input: pinned staging */
    void **out_pinned;           /* per graph output: pinned staging */
    tc__launch *in_copies;       /* the launches that upload inputs and download outputs (inside c->launch) */
    tc__launch *out_copies;
    int64_t *shape_key;          /* the backend's select key: per graph input its rank and dims (TC_MAX_RANK + 1 words) */
} tc__ctx_device;

struct tc_context {
    const tc_engine *e;
    const tc__profile *prof;
    unsigned char *arena;
    tc__scratch scratch;
    tc__tensor *tensors;        /* per value */
    bool *known;                /* per value: contents known before run */
    bool *unavail;              /* per value: computed by an If branch that cannot run at the current shapes */
    size_t *bound_bytes;        /* per value: size of a caller buffer bound to it, 0 if none */
    bool *bound;                /* per value: a caller buffer is bound to it (never moved to an arena) */
    const tc__tensor **ins;     /* per step: TC__CTX_MAX_IN input pointers */
    tc__tensor **outs;          /* per step: TC__CTX_MAX_OUT output pointers */
    tc__kernel_ctx *kctx;       /* per step */
    tc__launch *launch;         /* the compute steps in order, as the backend's run takes them */
    int n_launch;
    int *launch_step;           /* per launch: its step index */
    uint64_t *launch_ns;        /* per launch: its time in the last profiled run */
    void *exec;                 /* the kernels' execution handle: own_exec, or a shared tc_thread_pool's */
    void *own_exec;             /* NULL while a shared pool is used */
    uint64_t *step_ns;
    bool profiling, dirty;
    bool keeping;               /* keep-tensors mode: tensors point into keep.arena */
    tc__keep keep;
    tc__err err;
    tc__err run_err;            /* errors raised by kernels during run */
    bool device;                /* the engine's backend computes in device memory: dev is in use */
    tc__ctx_device dev;
};

/* 64-byte aligned memory, not zeroed; free with free(). */
void *tc__ctx_alloc64(size_t n);
/* Frees the keep-tensors buffers and zeroes k (NULL-safe fields); the tensors' pointers are left alone. */
void tc__ctx_keep_free(tc__keep *k);
/*
 * Fills *t with value v, a tensor that a step computes (not a graph input or output), after a run in
 * keep-tensors mode: a value stored NCHW16c is first converted into the context's NCHW copy. Fails,
 * recording the reason in c->err, when the context does not keep tensors or v has no data.
 */
tc_status tc__ctx_keep_tensor(tc_context *c, int32_t v, tc__tensor *t);

/* Device contexts (context_device.c): tables and memory; the staging launches (in_copies: one per graph input,
 * out_copies: one per graph output); after shapes change, the device view and staging sizes; staging of a run. */
tc_status tc__ctx_device_create(tc_context *c, tc__err *err);
void tc__ctx_device_free(tc_context *c);
void tc__ctx_device_launches(tc_context *c, tc__launch *in_copies, tc__launch *out_copies);
tc_status tc__ctx_device_sync(tc_context *c, tc__err *err);
void tc__ctx_device_stage_in(tc_context *c);
/* The pinned staging buffer of graph input or output value v and its capacity (tc_context_pinned_buffer). */
tc_status tc__ctx_device_pinned(const tc_context *c, int32_t v, void **data, size_t *bytes, tc__err *err);
void tc__ctx_device_stage_out(tc_context *c);

#endif
